"""The tool's ``parameters`` as JSON text, editable: the other way into the same schema.

The text shows exactly what is served as the MCP ``inputSchema``, keywords the tree does not
model included; what is wrong with the schema the document holds is listed under it. Typing in it
is applied a moment after the last keystroke when the text parses, builds
(``parameters_from_json``) and passes ``check_parameters_schema``; until then nothing is applied,
the tree keeps the last good state and the problems are listed with line and column (click one to
go there). Applied JSON edits merge into one undo step until focus leaves.

Changes made elsewhere (tree, panel, undo) replace the text unless the person is in the middle
of typing something that does not apply yet; text that already means the current parameters is
left alone, so the person's own formatting survives their edits.

Ctrl+F / Ctrl+H in the view open its find bar (:class:`~app.find_bar.FindBar`); a replacement
is applied at once when the text then parses and builds, as its own undo step.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from PySide6.QtCore import QEvent, QObject, Qt, QTimer, Signal
from PySide6.QtGui import QFontDatabase, QShowEvent, QTextCharFormat, QTextCursor, QTextFormat
from PySide6.QtWidgets import (
    QLabel,
    QListWidget,
    QListWidgetItem,
    QPlainTextEdit,
    QTextEdit,
    QVBoxLayout,
    QWidget,
)

from app.find_bar import FindBar, set_extra_selections
from app.tool_editor.parameter_edits import same_json
from app.tool_editor.parameter_model import ParameterTreeModel
from app.tool_editor.schema_slot import PARAMETERS, SchemaSlot
from app.tool_editor.value_editors import error_colour, loads_json
from schema_types.agent_checks import parse_path
from schema_types.errors import Problem, SchemaDefinitionError
from schema_types.files.agent_yaml import YamlSyntaxError, node_at, parse_yaml
from schema_types.schema.nodes import parameters_from_json

__all__ = ["JsonProblem", "SchemaJsonView", "check_parameters_text", "dump_parameters"]

APPLY_DELAY_MS = 300


def dump_parameters(params: Any) -> str:
    """The JSON text shown for a parameters dict (2-space indent, key order kept)."""
    return json.dumps(params, indent=2, ensure_ascii=False) + "\n"


@dataclass(frozen=True)
class JsonProblem:
    """Why the text is not applied, and where (1-based line/column; 0 when unknown)."""

    message: str
    line: int = 0
    column: int = 0
    offset: int = -1

    def __str__(self) -> str:
        where = f"Line {self.line}, column {self.column}: " if self.line else ""
        return where + self.message


def check_parameters_text(
    text: str, slot: SchemaSlot = PARAMETERS
) -> tuple[dict[str, Any] | None, list[JsonProblem]]:
    """Read JSON text as a tool's parameters (or the schema ``slot`` names): the dict, or why it
    cannot be used.

    Returns:
        ``(parameters, [])`` when the text parses and the schema is sound; otherwise
        ``(None, problems)`` located in the text where possible.
    """
    try:
        data = loads_json(text)
    except json.JSONDecodeError as exc:
        return None, [JsonProblem(exc.msg, exc.lineno, exc.colno, exc.pos)]
    if not isinstance(data, dict):
        return None, [JsonProblem(f"{slot.whole} must be a JSON object", 1, 1, 0)]
    try:
        parameters_from_json(data)
        problems = slot.check(data)
    except SchemaDefinitionError as exc:
        problems = exc.problems
    if problems:
        return None, _locate(text, problems)
    return data, []


def _locate(text: str, problems: list[Problem]) -> list[JsonProblem]:
    try:
        _data, root = parse_yaml(text)  # JSON is YAML; its nodes remember where they were
    except YamlSyntaxError:  # positions are a nicety; the messages stand without them
        root = None
    located: list[JsonProblem] = []
    for problem in problems:
        node, _matched = node_at(root, parse_path(problem.path)) if root is not None else (None, 0)
        if node is None:
            located.append(JsonProblem(str(problem)))
            continue
        mark = node.start_mark
        located.append(JsonProblem(str(problem), mark.line + 1, mark.column + 1, mark.index))
    return located


class SchemaJsonView(QWidget):
    """JSON text of the parameters with its problems listed under it."""

    applied = Signal()  # the text was applied to the parameters

    def __init__(self, model: ParameterTreeModel, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("schemaJsonView")
        self.model = model
        self._updating = False
        self._pending = False  # text typed and not applied (yet, or because it is wrong)
        self._stale = True
        self.editor = QPlainTextEdit()
        self.editor.setObjectName("schemaJson")
        self.editor.setAccessibleName(f"{model.slot.title} as JSON")
        self.editor.setFont(QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont))
        self.editor.setLineWrapMode(QPlainTextEdit.LineWrapMode.NoWrap)
        self.editor.setTabChangesFocus(False)
        self.status = QLabel()
        self.status.setObjectName("schemaJsonStatus")
        self.status.setWordWrap(True)
        self.problems = QListWidget()
        self.problems.setObjectName("schemaJsonProblems")
        self.problems.setAccessibleName("Problems in the JSON")
        self.problems.setWordWrap(True)  # a problem names a path and values: often long
        self.problems.setMaximumHeight(self.problems.fontMetrics().height() * 5 + 10)
        self.problems.hide()
        self.find_bar = FindBar(self.editor, self, edit_scope=self._replacing)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.find_bar)
        layout.addWidget(self.editor, 1)
        layout.addWidget(self.status)
        layout.addWidget(self.problems)
        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.setInterval(APPLY_DELAY_MS)
        self._timer.timeout.connect(self.apply_text)
        self.editor.textChanged.connect(self._on_text_changed)
        self.editor.installEventFilter(self)
        self.problems.itemActivated.connect(self._on_problem_clicked)
        self.problems.itemClicked.connect(self._on_problem_clicked)
        model.refreshed.connect(self._on_parameters_changed)
        model.problems_changed.connect(self._on_problems_changed)
        self.refresh()

    # -- document → text -------------------------------------------------------------------

    def _on_parameters_changed(self) -> None:
        if self.isVisible():
            self.refresh()
        else:
            self._stale = True  # a 300-property dump per keystroke elsewhere is not free

    def showEvent(self, event: QShowEvent) -> None:  # noqa: N802 (Qt override)
        """Catch up with changes made while the view was hidden."""
        if self._stale:
            self.refresh()
        super().showEvent(event)

    def refresh(self) -> None:
        """Show the current parameters (unless the person is typing text not applied yet)."""
        self._stale = False
        params = self.model.parameters()
        if self._pending and self.editor.hasFocus():
            return
        self._pending = False
        self._timer.stop()
        if params is None:
            self._set_text("")
            self.editor.setReadOnly(True)
            gone = self.model.tool() is None
            self._show_problems([], "The tool was deleted." if gone else "")
            return
        self.editor.setReadOnly(False)
        try:
            shown = json.loads(self.editor.toPlainText())
        except json.JSONDecodeError:
            shown = None
        if not same_json(shown, params):
            self._set_text(dump_parameters(params))
        self._show_held_problems(self.model.known_schema_problems() or [])

    def _on_problems_changed(self) -> None:
        if self._stale or self._pending or self.model.parameters() is None:
            return  # refreshed when shown; typed text that does not apply shows its own problems
        self._show_held_problems(self.model.schema_problems())

    def _show_held_problems(self, problems: list[Problem]) -> None:
        """List what is wrong with the parameters the document holds (an agent opened or
        restored with an unsound schema, or a tree edit the schema itself refuses)."""
        if not problems:
            self._show_problems([], "")
            return
        status = "The MCP server refuses this schema until these are fixed:"
        self._show_problems(_locate(self.editor.toPlainText(), problems), status)

    def _set_text(self, text: str) -> None:
        position = self.editor.textCursor().position()
        self._updating = True
        try:
            self.editor.setPlainText(text)
        finally:
            self._updating = False
        cursor = self.editor.textCursor()
        cursor.setPosition(min(position, len(text)))
        self.editor.setTextCursor(cursor)

    # -- text → document -------------------------------------------------------------------

    def _on_text_changed(self) -> None:
        if self._updating:
            return
        self._pending = True
        self._timer.start()

    def apply_text(self, text: str = "") -> bool:
        """Apply the text now if it is a sound parameters schema; else show why not.

        Args:
            text: the undo step's text.

        Returns:
            True when the parameters now equal the text.
        """
        self._timer.stop()
        text = text or f"Edit {self.model.slot.whole} as JSON"
        params, problems = check_parameters_text(self.editor.toPlainText(), self.model.slot)
        if params is None:
            self._show_problems(problems, "Not applied: the tree keeps the last good schema.")
            return False
        self._show_problems([], "")
        done = self.model.replace_parameters(params, text=text, merge_key=("json",))
        if done:
            self._pending = False
            self.applied.emit()
        return done

    def _show_problems(self, problems: list[JsonProblem], status: str) -> None:
        self.problems.clear()
        for problem in problems:
            item = QListWidgetItem(str(problem))
            item.setToolTip(str(problem))
            item.setData(Qt.ItemDataRole.UserRole, problem.offset)
            self.problems.addItem(item)
        self.problems.setVisible(bool(problems))
        self.status.setText(status)
        self.status.setVisible(bool(status))
        colour = error_colour(self).name() if problems else ""
        self.status.setStyleSheet(f"color: {colour};" if colour else "")
        self._underline([p for p in problems if p.offset >= 0])

    def _underline(self, problems: list[JsonProblem]) -> None:
        selections = []
        for problem in problems:
            selection = QTextEdit.ExtraSelection()
            fmt = QTextCharFormat()
            fmt.setUnderlineStyle(QTextCharFormat.UnderlineStyle.WaveUnderline)
            fmt.setUnderlineColor(error_colour(self))
            fmt.setProperty(QTextFormat.Property.FullWidthSelection, False)
            cursor = QTextCursor(self.editor.document())
            cursor.setPosition(min(problem.offset, len(self.editor.toPlainText())))
            cursor.movePosition(
                QTextCursor.MoveOperation.EndOfLine, QTextCursor.MoveMode.KeepAnchor
            )
            if not cursor.hasSelection():
                cursor.movePosition(QTextCursor.MoveOperation.Left, QTextCursor.MoveMode.KeepAnchor)
            selection.cursor = cursor
            selection.format = fmt
            selections.append(selection)
        set_extra_selections(self.editor, "problems", selections)

    @contextmanager
    def _replacing(self, what: str) -> Iterator[None]:
        """A find bar replacement: applied at once, as an undo step of its own."""
        self.model.seal()
        yield
        if self._pending:
            self.apply_text(f"{what} in the {self.model.slot.title.lower()} JSON")
        self.model.seal()

    def _on_problem_clicked(self, item: QListWidgetItem) -> None:
        offset = item.data(Qt.ItemDataRole.UserRole)
        if isinstance(offset, int) and offset >= 0:
            cursor = self.editor.textCursor()
            cursor.setPosition(min(offset, len(self.editor.toPlainText())))
            self.editor.setTextCursor(cursor)
            self.editor.setFocus(Qt.FocusReason.OtherFocusReason)

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:  # noqa: N802 (Qt override)
        """Leaving the editor applies what was typed and ends the typing run."""
        if watched is self.editor and event.type() == QEvent.Type.FocusOut:
            if self._pending:
                self.apply_text()
            self.model.seal()
        return False
