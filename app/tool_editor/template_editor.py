# ruff: noqa: N802  (Qt virtual method names are camelCase)
"""The prompt-template text editor: highlighting, completion on ``{`` and document undo keys.

:class:`TemplateEditor` is a ``QPlainTextEdit`` that knows nothing about agents: the template pane
gives it the completion entries (:func:`completion_entries` builds them from a tool) and binds its
text to the document. Its own undo history is off: the agent's undo stack is the one history, so
Ctrl+Z / Ctrl+Shift+Z (and Ctrl+Y) go to :attr:`TemplateEditor.undo_stack` when one is set.

Completion opens when ``{`` is typed (not ``{{``, a literal brace) or on Ctrl+Space inside a
placeholder, lists parameter paths (nested ones dotted) and the tool fields with their types and
descriptions, filters as the path is typed, and on Enter/Tab/click writes the path and the
closing ``}``. After a section sigil (``{?``, ``{!``, ``{/``) it lists the parameter paths; after
``{/`` the sections still open at the cursor (the engine's ``open_sections``) come first,
innermost first, so ``{/`` and Enter close the innermost one.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from PySide6.QtCore import QEvent, Qt, Signal
from PySide6.QtGui import (
    QFocusEvent,
    QFontDatabase,
    QKeyEvent,
    QKeySequence,
    QStandardItem,
    QStandardItemModel,
    QTextCursor,
    QUndoStack,
)
from PySide6.QtWidgets import QAbstractItemView, QCompleter, QPlainTextEdit, QTreeView, QWidget

from app.tool_editor.highlighter import OffsetMap, TemplateHighlighter, document_text
from schema_types.schema.nodes import parameter_paths
from schema_types.template.engine import TOOL_FIELD_PATHS, open_sections

__all__ = ["CompletionEntry", "TemplateEditor", "completion_entries"]

# The path typed so far inside an open placeholder or section tag: everything after the last "{"
# of the line and its sigil, if any.
_OPEN_PATH = re.compile(r"\{([?!/]?)([A-Za-z0-9_.-]*)$")
_SIGILS = ("?", "!", "/")
_TOOL_FIELDS = frozenset(".".join(path) for path in TOOL_FIELD_PATHS)
_DETAIL_ROLE = Qt.ItemDataRole.UserRole + 1


@dataclass(frozen=True)
class CompletionEntry:
    """One completion: the path written between the braces and what it is."""

    path: str
    detail: str


def completion_entries(
    parameters: Mapping[str, Any], tool_name: str = "", tool_description: str = ""
) -> list[CompletionEntry]:
    """What ``{`` completes to for a tool: its parameter paths, then ``tool.name``/``description``.

    Args:
        parameters: the tool's parameters (a JSON Schema object).
        tool_name: the tool's name, shown beside ``tool.name``.
        tool_description: the tool's description, shown beside ``tool.description``.
    """
    entries: list[CompletionEntry] = []
    for found in parameter_paths(parameters):
        kind = found.type or "any"
        required = ", required" if found.required else ""
        text = f"{kind}{required}"
        if found.description:
            text += f" — {found.description}"
        entries.append(CompletionEntry(found.path, text))
    description = " ".join(tool_description.split())
    if len(description) > 80:
        description = description[:79] + "…"
    entries.append(CompletionEntry("tool.name", f"the tool's name: {tool_name}"))
    entries.append(
        CompletionEntry("tool.description", f"the tool's description: {description or '(empty)'}")
    )
    return entries


class TemplateEditor(QPlainTextEdit):
    """Multi-line template editor with the template highlighter and placeholder completion.

    Attributes:
        highlighter: the :class:`TemplateHighlighter` on this editor's document.
        completer: the placeholder completer.
        popup: the completer's popup (columns: path, type and description).
        undo_stack: where undo/redo keys go (None: they do nothing here).
    """

    editing_finished = Signal()
    """Focus left the editor (for the completion popup too): a typing run ends here."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("templateEditor")
        self.setUndoRedoEnabled(False)
        self.setLineWrapMode(QPlainTextEdit.LineWrapMode.WidgetWidth)
        self.setFont(QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont))
        self.setPlaceholderText(
            "The prompt sent to the model. Type { to insert a parameter, e.g. {destination}; "
            "write {{ and }} for literal braces."
        )
        self.undo_stack: QUndoStack | None = None
        self._entries: list[CompletionEntry] = []
        self.highlighter = TemplateHighlighter(self.document(), self)
        self.highlighter.set_palette(self.palette())

        self._model = QStandardItemModel(0, 2, self)
        popup = QTreeView()
        popup.setObjectName("templateCompletionPopup")
        popup.setHeaderHidden(True)
        popup.setRootIsDecorated(False)
        popup.setUniformRowHeights(True)
        popup.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        popup.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.completer = QCompleter(self._model, self)
        self.completer.setWidget(self)
        self.completer.setPopup(popup)  # the completer owns the popup from here on
        self.popup = popup
        self.completer.setCompletionMode(QCompleter.CompletionMode.PopupCompletion)
        self.completer.setCaseSensitivity(Qt.CaseSensitivity.CaseInsensitive)
        self.completer.setFilterMode(Qt.MatchFlag.MatchContains)
        self.completer.setCompletionColumn(0)
        self.completer.setMaxVisibleItems(12)
        self.completer.activated.connect(self._on_completion_activated)

    def text(self) -> str:
        """The template as typed (no-break and line-separator characters kept)."""
        return document_text(self.document())

    # -- completion ------------------------------------------------------------------------

    def set_completions(self, entries: Sequence[CompletionEntry]) -> None:
        """Offer ``entries`` when a placeholder is typed."""
        self._entries = list(entries)
        self._offer(self._entries)

    def _offer(self, entries: Sequence[CompletionEntry]) -> None:
        """Put ``entries`` in the popup's model (untouched when they are already there)."""
        current = [
            (self._model.item(row, 0).text(), self._model.item(row, 1).text())
            for row in range(self._model.rowCount())
        ]
        if current == [(e.path, e.detail) for e in entries]:
            return
        self._model.setRowCount(0)
        for entry in entries:
            path = QStandardItem(entry.path)
            path.setData(entry.detail, _DETAIL_ROLE)
            path.setToolTip(entry.detail)
            detail = QStandardItem(entry.detail)
            detail.setToolTip(entry.detail)
            self._model.appendRow([path, detail])

    def open_placeholder_prefix(self) -> str | None:
        """The path typed so far when the cursor is inside an open ``{…`` (or ``{?…``, ``{!…``,
        ``{/…``), else None."""
        found = self._open_tag()
        return None if found is None else found[1]

    def _open_tag(self) -> tuple[str, str] | None:
        """The sigil ("" for a placeholder) and path typed so far of the tag at the cursor."""
        cursor = self.textCursor()
        if cursor.hasSelection():
            return None
        before = cursor.block().text()[: cursor.positionInBlock()]
        match = _OPEN_PATH.search(before)
        if match is None:
            return None
        brace = match.start()
        # "{{" is a literal brace, not a placeholder (count the run: "{{{" opens one).
        run = len(before[: brace + 1]) - len(before[: brace + 1].rstrip("{"))
        return None if run % 2 == 0 else (match.group(1), match.group(2))

    def _entries_for(self, sigil: str) -> list[CompletionEntry]:
        """What to offer after ``{`` + ``sigil``."""
        if not sigil:
            return self._entries
        entries = [e for e in self._entries if e.path not in _TOOL_FIELDS]
        if sigil != "/":
            return entries
        text = self.text()
        offset = OffsetMap(text).from_qt(self.textCursor().position())
        closing: dict[str, CompletionEntry] = {}
        for tag in reversed(open_sections(text, offset)):
            path = ".".join(tag.path)
            if path not in closing:
                line = text.count("\n", 0, tag.start) + 1
                closing[path] = CompletionEntry(path, f"closes {tag.text} (line {line})")
        return [*closing.values(), *(e for e in entries if e.path not in closing)]

    def show_completions(self) -> bool:
        """Open the completion popup for the placeholder at the cursor; False when not in one."""
        found = self._open_tag()
        popup = self.popup
        if found is None:
            popup.hide()
            return False
        sigil, prefix = found
        self._offer(self._entries_for(sigil))
        if prefix != self.completer.completionPrefix():
            self.completer.setCompletionPrefix(prefix)
        if self.completer.completionCount() == 0:
            popup.hide()
            return False
        popup.setCurrentIndex(self.completer.completionModel().index(0, 0))
        rect = self.cursorRect()
        width = max(360, min(640, self.viewport().width()))
        rect.setWidth(width)
        popup.setColumnWidth(0, max(140, popup.sizeHintForColumn(0) + 16))
        self.completer.complete(rect)
        return True

    def _on_completion_activated(self, path: str) -> None:
        prefix = self.open_placeholder_prefix()
        if prefix is None:
            return
        cursor = self.textCursor()
        cursor.beginEditBlock()
        cursor.movePosition(
            QTextCursor.MoveOperation.Left, QTextCursor.MoveMode.KeepAnchor, len(prefix)
        )
        after = cursor.block().text()[cursor.positionInBlock() + len(prefix) :]
        cursor.insertText(path if after.startswith("}") else path + "}")
        if after.startswith("}"):
            cursor.movePosition(QTextCursor.MoveOperation.Right)
        cursor.endEditBlock()
        self.setTextCursor(cursor)
        self.popup.hide()

    # -- keys ------------------------------------------------------------------------------

    def event(self, event: QEvent) -> bool:
        # Claim the undo keys so window shortcuts do not take them first; keyPressEvent routes
        # them to the agent's undo stack.
        if (
            event.type() == QEvent.Type.ShortcutOverride
            and isinstance(event, QKeyEvent)
            and _undo_key(event) is not None
        ):
            event.accept()
            return True
        return super().event(event)

    def keyPressEvent(self, event: QKeyEvent) -> None:
        which = _undo_key(event)
        if which is not None:
            if self.undo_stack is not None:
                (self.undo_stack.undo if which == "undo" else self.undo_stack.redo)()
            event.accept()
            return
        popup = self.popup
        if popup.isVisible() and event.key() in (
            Qt.Key.Key_Enter,
            Qt.Key.Key_Return,
            Qt.Key.Key_Tab,
            Qt.Key.Key_Backtab,
            Qt.Key.Key_Escape,
        ):
            event.ignore()  # the completer's popup handles them
            return
        forced = event.key() == Qt.Key.Key_Space and bool(
            event.modifiers() & Qt.KeyboardModifier.ControlModifier
        )
        if forced:
            self.show_completions()
            return
        super().keyPressEvent(event)
        if event.text() == "{" or event.text() in _SIGILS or popup.isVisible():
            self.show_completions()

    def focusOutEvent(self, event: QFocusEvent) -> None:
        super().focusOutEvent(event)
        if event.reason() != Qt.FocusReason.PopupFocusReason:
            self.popup.hide()
            self.editing_finished.emit()

    def changeEvent(self, event: QEvent) -> None:
        super().changeEvent(event)
        if event.type() == QEvent.Type.PaletteChange:
            self.highlighter.set_palette(self.palette())


def _undo_key(event: QKeyEvent) -> str | None:
    if event.matches(QKeySequence.StandardKey.Undo):
        return "undo"
    if event.matches(QKeySequence.StandardKey.Redo) or (
        event.key() == Qt.Key.Key_Y and event.modifiers() == Qt.KeyboardModifier.ControlModifier
    ):
        return "redo"
    return None
