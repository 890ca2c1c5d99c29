"""The list editor of the test form: the items of an array argument, each its own sub-form.

Items can be added (with their defaults), removed and moved up or down; their paths
(``passengers[1]``) follow their position, so validation problems land on the right item. An array
with no items is absent from the arguments unless it is always sent (required, see
:class:`~app.test_run.fields.FieldEditor`): then it is ``[]``, and it starts with as many empty
items as ``minItems`` asks for. An array that may be left out starts with none.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

from PySide6.QtWidgets import (
    QGroupBox,
    QHBoxLayout,
    QLabel,
    QPushButton,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from app.icons import icon
from app.test_run.fields import ABSENT, FieldEditor, hint_text
from schema_types.schema.nodes import ArraySchema

__all__ = ["ArrayEditor"]


class _ItemRow(QWidget):
    """One array item: its editor and the buttons that move or remove it."""

    def __init__(self, editor: FieldEditor) -> None:
        super().__init__()
        self.editor = editor
        self.number = QLabel()
        self.up = _tool_button("up")
        self.down = _tool_button("down")
        self.remove = _tool_button("delete")
        buttons = QVBoxLayout()
        buttons.setContentsMargins(0, 0, 0, 0)
        buttons.setSpacing(0)
        for button in (self.up, self.down, self.remove):
            buttons.addWidget(button)
        buttons.addStretch(1)
        layout = QHBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        if not editor.is_group:
            layout.addWidget(self.number)  # a group box has the number in its title
        layout.addWidget(editor, 1)
        layout.addLayout(buttons)

    def renumber(self, index: int, count: int) -> None:
        shown = index + 1
        self.number.setText(f"{shown}.")
        group = getattr(self.editor, "group_box", None)
        if isinstance(group, QGroupBox):
            group.setTitle(f"Item {shown}")
        for button, tip in (
            (self.up, f"Move item {shown} up"),
            (self.down, f"Move item {shown} down"),
            (self.remove, f"Remove item {shown}"),
        ):
            button.setToolTip(tip)
            button.setAccessibleName(tip)
        self.up.setEnabled(index > 0)
        self.down.setEnabled(index < count - 1)


def _tool_button(icon_name: str) -> QToolButton:
    button = QToolButton()
    button.setIcon(icon(icon_name))
    button.setAutoRaise(True)
    return button


class ArrayEditor(FieldEditor):
    """A list of items of the item type: add, remove, move up and down.

    With no items it is absent, or ``[]`` when it is always sent.
    """

    is_group = True

    def __init__(
        self,
        node: ArraySchema,
        item_editor: Callable[[], FieldEditor],
        *,
        required: bool,
        item: bool = False,
        always_sent: bool | None = None,
        title: str = "",
    ) -> None:
        super().__init__(node.to_json(), required=required, item=item, always_sent=always_sent)
        self._item_editor = item_editor
        self._max_items = node.max_items
        self._min_items = node.min_items or 0
        self.rows: list[_ItemRow] = []
        self.group_box = QGroupBox(f"{title} *" if required else title)
        self.group_box.setToolTip(hint_text(self.schema))
        self.input = self.group_box
        self._rows_layout = QVBoxLayout()
        self._rows_layout.setContentsMargins(0, 0, 0, 0)
        self.add_button = QPushButton(icon("add"), "Add item")
        self.add_button.setToolTip(f"Add an item to {title or 'the list'}")
        self.add_button.clicked.connect(self._on_add_clicked)
        self.empty_label = QLabel("No items.")
        self.empty_label.setEnabled(False)
        inner = QVBoxLayout(self.group_box)
        inner.addWidget(self.problem_label)
        inner.addWidget(self.empty_label)
        inner.addLayout(self._rows_layout)
        footer = QHBoxLayout()
        footer.addWidget(self.add_button)
        footer.addStretch(1)
        inner.addLayout(footer)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.group_box)
        self.reset()

    def value(self) -> Any:
        values = [row.editor.value() for row in self.rows]
        if not values and not self.always_sent:
            return ABSENT
        return [None if value is ABSENT else value for value in values]

    def set_value(self, value: Any) -> None:
        for row in list(self.rows):
            self._drop(row)
        for entry in value if isinstance(value, list) else []:
            self._append(entry)
        self._renumber()

    def sub_editors(self) -> list[FieldEditor]:
        return [row.editor for row in self.rows]

    def reset(self) -> None:
        default = self.default()
        if isinstance(default, list):
            self.set_value(default)
            return
        self.set_value([])
        if self.always_sent:
            # As many (empty) items as the list needs, so there is something to fill; a list
            # that may be left out is, until the person adds an item.
            for _ in range(self._min_items):
                self._append(ABSENT)
            self._renumber()

    def add_item(self) -> FieldEditor:
        """Append an item (its defaults filled in) and return its editor."""
        editor = self._append(ABSENT)
        self._renumber()
        self.edited.emit()
        return editor

    def remove_item(self, index: int) -> None:
        """Remove the item at ``index``."""
        self._drop(self.rows[index])
        self._renumber()
        self.edited.emit()

    def move_item(self, index: int, delta: int) -> None:
        """Move the item at ``index`` up (-1) or down (+1)."""
        target = index + delta
        if not 0 <= target < len(self.rows):
            return
        row = self.rows.pop(index)
        self.rows.insert(target, row)
        self._rows_layout.removeWidget(row)
        self._rows_layout.insertWidget(target, row)
        self._renumber()
        self.edited.emit()

    def _append(self, value: Any) -> FieldEditor:
        editor = self._item_editor()
        editor.owner = self
        if value is not ABSENT:
            editor.set_value(value)
        editor.edited.connect(self.edited)
        row = _ItemRow(editor)
        row.up.clicked.connect(lambda: self.move_item(self.rows.index(row), -1))
        row.down.clicked.connect(lambda: self.move_item(self.rows.index(row), 1))
        row.remove.clicked.connect(lambda: self.remove_item(self.rows.index(row)))
        self.rows.append(row)
        self._rows_layout.addWidget(row)
        return editor

    def _drop(self, row: _ItemRow) -> None:
        self.rows.remove(row)
        self._rows_layout.removeWidget(row)
        row.hide()
        row.deleteLater()

    def _renumber(self) -> None:
        for index, row in enumerate(self.rows):
            row.editor.key = index
            row.renumber(index, len(self.rows))
        self.empty_label.setVisible(not self.rows)
        full = self._max_items is not None and len(self.rows) >= self._max_items
        self.add_button.setEnabled(not full)

    def _on_add_clicked(self) -> None:
        editor = self.add_item()
        first = next(_inputs(editor), None)
        if first is not None:
            first.setFocus()


def _inputs(editor: FieldEditor) -> Iterator[QWidget]:
    """The inputs of ``editor`` and everything inside it, in form order."""
    if not editor.is_group:
        yield editor.input
    for sub in editor.sub_editors():
        yield from _inputs(sub)
