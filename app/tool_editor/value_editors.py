"""Typed value inputs for the property panel: parse and show JSON values by schema type, a list
editor for ``enum``/``examples``, and a field frame that shows a problem right under its input.

Values are typed per node: in a string node ``5`` is the string ``"5"``; in an integer node it is
the number 5 and ``5.5`` is refused at the field. Arrays and objects are typed as JSON.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from typing import Any

from PySide6.QtCore import QSignalBlocker, Qt, Signal
from PySide6.QtGui import QAction, QColor, QPalette
from PySide6.QtWidgets import (
    QAbstractItemView,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QListWidget,
    QListWidgetItem,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from app.icons import icon
from app.tool_editor.parameter_edits import fits_type

__all__ = [
    "FieldBox",
    "ValueListEditor",
    "error_colour",
    "format_value",
    "loads_json",
    "parse_value",
    "reorderable",
]


def reorderable(view: QAbstractItemView) -> None:
    """Let the rows of ``view`` be dragged to a new place among themselves, and edited in place
    (double click, F2, or a click on the selected row)."""
    view.setDragDropMode(QAbstractItemView.DragDropMode.InternalMove)
    view.setDefaultDropAction(Qt.DropAction.MoveAction)
    view.setEditTriggers(
        QAbstractItemView.EditTrigger.DoubleClicked
        | QAbstractItemView.EditTrigger.EditKeyPressed
        | QAbstractItemView.EditTrigger.SelectedClicked
    )


class _NotFinite(ValueError):
    """A number JSON cannot carry (``NaN``, ``Infinity``, ``1e999``)."""


def _refuse_constant(name: str) -> Any:
    raise _NotFinite(name)


def _finite_float(text: str) -> float:
    value = float(text)
    if value in (float("inf"), float("-inf")):
        raise _NotFinite(text)
    return value


def loads_json(text: str) -> Any:
    """``json.loads`` that refuses ``NaN``, ``Infinity`` and floats too large to hold.

    Python's json reads them, but they are not JSON: a schema holding one is served as text
    an MCP client refuses to parse.

    Raises:
        json.JSONDecodeError: the text is not strict JSON (with its position).
    """
    try:
        return json.loads(text, parse_constant=_refuse_constant, parse_float=_finite_float)
    except _NotFinite as exc:
        token = str(exc)
        # The first occurrence outside a string literal is the one the parser refused.
        found = (
            m
            for m in re.finditer(r'"(?:[^"\\]|\\.)*"|' + re.escape(token), text)
            if not m.group().startswith('"')
        )
        where = next(found, None)
        raise json.JSONDecodeError(
            f"{token} is not a JSON number", text, where.start() if where else 0
        ) from None


def parse_value(text: str, kind: str) -> Any:
    """The JSON value ``text`` means in a node of type ``kind``.

    Raises:
        ValueError: with a message for the field (``expected an integer, got "5.5"``).
    """
    if kind == "string":
        return text
    try:
        value = loads_json(text)
    except json.JSONDecodeError:
        value = _NOT_JSON
    if kind in ("number", "integer", "boolean", "array", "object"):
        if value is _NOT_JSON or not fits_type(value, kind):
            raise ValueError(f"expected {_article(kind)}, got {text.strip()!r}")
        return int(value) if kind == "integer" and isinstance(value, float) else value
    if value is _NOT_JSON:
        raise ValueError(f"expected a JSON value, got {text.strip()!r}")
    return value


_NOT_JSON = object()


def _article(kind: str) -> str:
    names = {"boolean": "true or false", "array": "a JSON array", "object": "a JSON object"}
    return names.get(kind, ("an " if kind[0] in "aeiou" else "a ") + kind)


def format_value(value: Any, kind: str) -> str:
    """How a value is shown in a field of a node of type ``kind`` (inverse of parse_value)."""
    if kind == "string" and isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False)


def error_colour(widget: QWidget) -> QColor:
    """A red readable on the widget's background (lighter on a dark palette)."""
    dark = widget.palette().color(QPalette.ColorRole.Window).lightness() < 128
    return QColor("#ff8a80" if dark else "#c62828")


def lay_out_with_problem(
    owner: QWidget, field: QWidget, extra: Sequence[QWidget], problem: QLabel
) -> None:
    """``field`` (and ``extra`` after it) on one line of ``owner``, ``problem`` under it."""
    row = QHBoxLayout()
    row.setContentsMargins(0, 0, 0, 0)
    row.addWidget(field, 1)
    for widget in extra:
        row.addWidget(widget)
    layout = QVBoxLayout(owner)
    layout.setContentsMargins(0, 0, 0, 0)
    layout.setSpacing(2)
    layout.addLayout(row)
    layout.addWidget(problem)


class FieldBox(QWidget):
    """An input with a problem line under it (hidden while there is no problem)."""

    def __init__(self, field: QWidget, *extra: QWidget, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.field = field
        self.problem = QLabel()
        self.problem.setObjectName("fieldProblem")
        self.problem.setWordWrap(True)
        self.problem.hide()
        self._warning: QAction | None = None
        lay_out_with_problem(self, field, extra, self.problem)

    def set_problem(self, message: str) -> None:
        """Show ``message`` under the input (and a warning sign in a line edit); "" clears."""
        if message == self.problem.text() and self.problem.isHidden() == (not message):
            return
        self.problem.setText(message)
        self.problem.setStyleSheet(f"color: {error_colour(self).name()};")
        self.problem.setVisible(bool(message))
        self.field.setToolTip(message)
        if isinstance(self.field, QLineEdit):
            if message and self._warning is None:
                self._warning = self.field.addAction(
                    icon("warning"), QLineEdit.ActionPosition.TrailingPosition
                )
            elif not message and self._warning is not None:
                self.field.removeAction(self._warning)
                self._warning = None


class ValueListEditor(QWidget):
    """A list of values of one type (``enum``, ``examples``): add, remove, reorder, edit.

    Emits :attr:`values_edited` with the whole list when every entry reads as the node's type;
    otherwise :attr:`invalid` with the first entry's problem, and nothing is sent.
    :attr:`step_done` marks the end of one operation (an add and the typing of the value it
    added, a remove, a move, an entry edited), so each is undone on its own.
    """

    values_edited = Signal(list)
    invalid = Signal(str)
    step_done = Signal()

    def __init__(self, what: str, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._kind = "string"
        self._what = what
        self.list = QListWidget()
        self.list.setObjectName(f"{what}List")
        self.list.setAccessibleName(what)
        reorderable(self.list)
        self.list.setMaximumHeight(self.list.fontMetrics().height() * 6 + 10)
        self.add_button = self._button("add", f"Add a value to {what}")
        self.remove_button = self._button("delete", "Remove the selected value")
        self.up_button = self._button("up", "Move the selected value up")
        self.down_button = self._button("down", "Move the selected value down")
        buttons = QVBoxLayout()
        buttons.setContentsMargins(0, 0, 0, 0)
        buttons.setSpacing(2)
        for button in (self.add_button, self.remove_button, self.up_button, self.down_button):
            buttons.addWidget(button)
        buttons.addStretch(1)
        layout = QHBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.list, 1)
        layout.addLayout(buttons)
        self.add_button.clicked.connect(self.add_value)
        self.remove_button.clicked.connect(self.remove_selected)
        self.up_button.clicked.connect(lambda: self.move_selected(-1))
        self.down_button.clicked.connect(lambda: self.move_selected(1))
        self.list.itemChanged.connect(self._on_edited)
        self.list.model().rowsMoved.connect(self._on_moved)
        self.list.itemDelegate().closeEditor.connect(self.step_done)
        self.list.currentRowChanged.connect(self._update_buttons)
        self._update_buttons()

    def _button(self, icon_name: str, tip: str) -> QToolButton:
        button = QToolButton()
        button.setIcon(icon(icon_name))
        button.setToolTip(tip)
        button.setAccessibleName(tip)
        button.setAutoRaise(True)
        return button

    def set_kind(self, kind: str) -> None:
        """The node type the entries are read as."""
        self._kind = kind

    def set_values(self, values: list[Any] | None) -> None:
        """Show ``values`` (no signal); keeps the current row where possible."""
        row = self.list.currentRow()
        texts = [format_value(v, self._kind) for v in values or []]
        if texts == self.texts():
            return
        with QSignalBlocker(self.list):
            self.list.clear()
            for text in texts:
                self.list.addItem(self._item(text))
            self.list.setCurrentRow(min(row, self.list.count() - 1))
        self._update_buttons()

    def _item(self, text: str) -> QListWidgetItem:
        item = QListWidgetItem(text)
        item.setFlags(item.flags() | Qt.ItemFlag.ItemIsEditable)
        return item

    def texts(self) -> list[str]:
        """The entries as typed."""
        return [self.list.item(row).text() for row in range(self.list.count())]

    def values(self) -> list[Any]:
        """The entries read as the node's type.

        Raises:
            ValueError: naming the first entry that does not read (``value 2: expected …``).
        """
        values = []
        for row, text in enumerate(self.texts()):
            try:
                values.append(parse_value(text, self._kind))
            except ValueError as exc:
                raise ValueError(f"value {row + 1}: {exc}") from None
        return values

    def mark(self, bad_rows: dict[int, str]) -> None:
        """Colour the entries with problems (row → message) and give them the message as tip."""
        with QSignalBlocker(self.list):
            for row in range(self.list.count()):
                item = self.list.item(row)
                message = bad_rows.get(row, "")
                colour = (
                    error_colour(self) if message else self.palette().color(QPalette.ColorRole.Text)
                )
                item.setForeground(colour)
                item.setToolTip(message)

    def add_value(self) -> None:
        """Append a value (a neutral one of the node's type) and start editing it."""
        text = {"number": "0", "integer": "0", "boolean": "true", "array": "[]", "object": "{}"}
        item = self._item(text.get(self._kind, ""))
        self.step_done.emit()  # what came before is one step; this add and its typing another
        self.list.addItem(item)
        self.list.setCurrentItem(item)
        self._on_edited()
        if self.isVisible():
            self.list.editItem(item)  # closing the editor ends the step
        else:
            self.step_done.emit()

    def remove_selected(self) -> None:
        """Remove the selected value."""
        row = self.list.currentRow()
        if row >= 0:
            self.list.takeItem(row)
            self._on_edited()
            self.step_done.emit()

    def move_selected(self, delta: int) -> None:
        """Move the selected value up (-1) or down (+1)."""
        row = self.list.currentRow()
        target = row + delta
        if row < 0 or not 0 <= target < self.list.count():
            return
        with QSignalBlocker(self.list):
            item = self.list.takeItem(row)
            self.list.insertItem(target, item)
            self.list.setCurrentRow(target)
        self._on_moved()

    def _on_moved(self, *_args: object) -> None:
        self._on_edited()
        self.step_done.emit()

    def _on_edited(self, *_args: object) -> None:
        self._update_buttons()
        try:
            values = self.values()
        except ValueError as exc:
            self.invalid.emit(str(exc))
            return
        self.values_edited.emit(values)

    def _update_buttons(self, *_args: object) -> None:
        row = self.list.currentRow()
        self.remove_button.setEnabled(row >= 0)
        self.up_button.setEnabled(row > 0)
        self.down_button.setEnabled(0 <= row < self.list.count() - 1)
