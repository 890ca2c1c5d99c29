"""The studio's questions and read-only dialogs.

Each question is a plain function returning a word ("save", "discard", "cancel"…), so the main
window can take them as replaceable callables (tests pass their own answers instead of clicking).
"""

from __future__ import annotations

from typing import Literal

from PySide6.QtGui import QFontDatabase
from PySide6.QtWidgets import (
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


def ask_disk_conflict(parent: QWidget | None, document: AgentDocument) -> ConflictAnswer:
    """The file changed on disk since it was opened: reload it, keep mine, or compare first."""
    while True:
        box = QMessageBox(parent)
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
        box.exec()
        clicked = box.clickedButton()
        if clicked is compare:
            TextDialog(
                "Compare",
                "Changes from the file on disk to your version:",
                disk_diff(document),
                parent,
            ).exec()
            continue
        if clicked is reload:
            return "reload"
        if clicked is keep:
            return "overwrite"
        return "cancel"


def ask_recovery(parent: QWidget | None, entry: RecoveryEntry) -> RecoveryAnswer:
    """A recovery copy was left by a crash: restore it, discard it, or look at the diff."""
    while True:
        box = QMessageBox(parent)
        box.setIcon(QMessageBox.Icon.Question)
        box.setWindowTitle("Recover unsaved changes")
        box.setText("The studio stopped with unsaved changes.")
        box.setInformativeText(entry.label())
        restore = box.addButton("&Restore", QMessageBox.ButtonRole.AcceptRole)
        discard = box.addButton("&Discard", QMessageBox.ButtonRole.DestructiveRole)
        show = box.addButton("Show &diff…", QMessageBox.ButtonRole.ActionRole)
        box.addButton("&Later", QMessageBox.ButtonRole.RejectRole)
        box.setDefaultButton(restore)
        box.exec()
        clicked = box.clickedButton()
        if clicked is show:
            TextDialog(
                "Recovery copy",
                "Changes from the file on disk to the recovery copy:",
                entry.diff(),
                parent,
            ).exec()
            continue
        if clicked is restore:
            return "restore"
        if clicked is discard:
            return "discard"
        return "later"


def show_report_details(parent: QWidget | None, report: Report) -> TextDialog:
    """Open (without blocking) the details of an error report."""
    dialog = TextDialog("Error details", report.message, report.detail or report.message, parent)
    dialog.open()
    return dialog
