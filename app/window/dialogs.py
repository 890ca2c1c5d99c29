"""The studio's questions and read-only dialogs.

Each question is a plain function returning a word ("save", "discard", "cancel"…), so the main
window can take them as replaceable callables (tests pass their own answers instead of clicking).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Literal, TypeVar

from PySide6.QtGui import QFontDatabase
from PySide6.QtWidgets import (
    QAbstractButton,
    QDialog,
    QLabel,
    QMessageBox,
    QPlainTextEdit,
    QWidget,
)

from app.document.agent_document import AgentDocument
from app.document.recovery import RecoveryEntry
from app.errors import Report
from app.layouts import closable_column
from app.window.screen_fit import fit_to_screen

__all__ = [
    "ConflictAnswer",
    "RecoveryAnswer",
    "SaveAnswer",
    "TextDialog",
    "ask_disk_conflict",
    "ask_recovery",
    "ask_save_changes",
    "disk_diff",
    "show_report_details",
]

SaveAnswer = Literal["save", "discard", "cancel"]
ConflictAnswer = Literal["reload", "overwrite", "cancel"]
RecoveryAnswer = Literal["restore", "discard", "later"]


class TextDialog(QDialog):
    """A message with a long read-only text (a diff, a traceback, a server's stderr)."""

    def __init__(self, title: str, message: str, text: str, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle(title)
        fit_to_screen(self, 760, 520)
        label = QLabel(message)
        label.setWordWrap(True)
        self.text = QPlainTextEdit(text)
        self.text.setReadOnly(True)
        self.text.setLineWrapMode(QPlainTextEdit.LineWrapMode.NoWrap)
        self.text.setFont(QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont))
        closable_column(self, label, self.text, stretch=self.text)


def ask_save_changes(parent: QWidget | None, document: AgentDocument) -> SaveAnswer:
    """Save / Discard / Cancel for a document with unsaved changes."""
    box = QMessageBox(parent)
    box.setIcon(QMessageBox.Icon.Warning)
    box.setWindowTitle("Unsaved changes")
    box.setText(f"Save the changes to {document.display_name()}?")
    box.setInformativeText("Your changes are lost if you don't save them.")
    box.setStandardButtons(
        QMessageBox.StandardButton.Save
        | QMessageBox.StandardButton.Discard
        | QMessageBox.StandardButton.Cancel
    )
    box.setDefaultButton(QMessageBox.StandardButton.Save)
    answer = box.exec()
    if answer == QMessageBox.StandardButton.Save:
        return "save"
    if answer == QMessageBox.StandardButton.Discard:
        return "discard"
    return "cancel"


def disk_diff(document: AgentDocument) -> str:
    """A unified diff from the file on disk to what saving would write."""
    import difflib

    from app.document.plain_files import regular_file_bytes
    from schema_types.files.agent_file import dump_agent_yaml, text_for_save

    disk: list[str] = []
    found = regular_file_bytes(document.path) if document.path is not None else None
    if found is not None:  # never a named pipe put in the file's place: that read would hang
        disk = found[1].decode("utf-8", errors="replace").splitlines(keepends=True)
    if found is not None and document.path is not None:
        mine_text = text_for_save(document.agent, document.path)
    else:
        mine_text = dump_agent_yaml(document.agent)
    mine = mine_text.splitlines(keepends=True)
    text = "".join(difflib.unified_diff(disk, mine, "on disk", "yours"))
    return text or "No differences in content."


_Answer = TypeVar("_Answer", bound=str)
_Buttons = tuple[QAbstractButton, list[tuple[QAbstractButton, _Answer]]]


def _ask_with_diff(
    parent: QWidget | None,
    build: Callable[[QMessageBox], _Buttons[_Answer]],
    diff: tuple[str, str, Callable[[], str]],
    otherwise: _Answer,
) -> _Answer:
    """Ask a question until it is answered. ``build`` fills a new message box and gives its
    show-diff button and its answers by button; the show-diff button shows ``diff`` (the
    dialog's title, its message, the diff) in a :class:`TextDialog` and asks again, another
    button gives its answer, or ``otherwise``."""
    title, message, text = diff
    while True:
        box = QMessageBox(parent)
        show, answers = build(box)
        box.exec()
        clicked = box.clickedButton()
        if clicked is not show:
            return next((answer for button, answer in answers if clicked is button), otherwise)
        TextDialog(title, message, text(), parent).exec()


def ask_disk_conflict(parent: QWidget | None, document: AgentDocument) -> ConflictAnswer:
    """The file changed on disk since it was opened: reload it, keep mine, or compare first."""

    def build(box: QMessageBox) -> _Buttons[ConflictAnswer]:
        box.setIcon(QMessageBox.Icon.Warning)
        box.setWindowTitle("File changed on disk")
        box.setText(
            f"{document.display_name()} was changed by another program since you opened it."
        )
        box.setInformativeText(
            "Reload it (your unsaved changes are dropped), or keep your "
            "version and overwrite the file?"
        )
        reload = box.addButton("&Reload from disk", QMessageBox.ButtonRole.DestructiveRole)
        keep = box.addButton("&Keep mine", QMessageBox.ButtonRole.AcceptRole)
        compare = box.addButton("&Compare…", QMessageBox.ButtonRole.ActionRole)
        box.addButton(QMessageBox.StandardButton.Cancel)
        box.setDefaultButton(keep)
        return compare, [(reload, "reload"), (keep, "overwrite")]

    mine = "Changes from the file on disk to your version:"
    return _ask_with_diff(parent, build, ("Compare", mine, lambda: disk_diff(document)), "cancel")


def ask_recovery(parent: QWidget | None, entry: RecoveryEntry) -> RecoveryAnswer:
    """A recovery copy was left by a crash: restore it, discard it, or look at the diff."""

    def build(box: QMessageBox) -> _Buttons[RecoveryAnswer]:
        box.setIcon(QMessageBox.Icon.Question)
        box.setWindowTitle("Recover unsaved changes")
        box.setText("The studio stopped with unsaved changes.")
        box.setInformativeText(entry.label())
        restore = box.addButton("&Restore", QMessageBox.ButtonRole.AcceptRole)
        discard = box.addButton("&Discard", QMessageBox.ButtonRole.DestructiveRole)
        show = box.addButton("Show &diff…", QMessageBox.ButtonRole.ActionRole)
        box.addButton("&Later", QMessageBox.ButtonRole.RejectRole)
        box.setDefaultButton(restore)
        return show, [(restore, "restore"), (discard, "discard")]

    copy = "Changes from the file on disk to the recovery copy:"
    return _ask_with_diff(parent, build, ("Recovery copy", copy, entry.diff), "later")


def show_report_details(parent: QWidget | None, report: Report) -> TextDialog:
    """Open (without blocking) the details of an error report."""
    dialog = TextDialog("Error details", report.message, report.detail or report.message, parent)
    dialog.open()
    return dialog
