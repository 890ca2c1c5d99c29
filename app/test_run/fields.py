"""The inputs of the test form for one value each (text, check box, choice) and the JSON fallback.

Every editor turns its widget into the JSON value a caller would send for one argument, or
:data:`ABSENT` when the caller would leave it out: an empty optional field must be absent, not
``""``, so the template takes the schema default exactly as in a served call. Only an argument that
is always sent (an array item, or required by an object that is itself always sent) turns empty
into a value (``false``, ``[]``, ``{}``); inside an optional object, even a required field can be
left empty, so that the object is left out. Numbers and dates are in :mod:`app.test_run.pickers`;
objects, arrays and the choice of editor per schema in :mod:`app.test_run.form` and
:mod:`app.test_run.lists`.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from copy import deepcopy
from typing import Any, ClassVar, Final

from PySide6.QtCore import QSignalBlocker, Qt, Signal
from PySide6.QtGui import QFontDatabase
from PySide6.QtWidgets import (
    QApplication,
    QCheckBox,
    QComboBox,
    QLabel,
    QLineEdit,
    QPlainTextEdit,
    QWidget,
)

from app.tool_editor.value_editors import error_colour, lay_out_with_problem
from schema_types.json_text import PathParts, format_path

__all__ = [
    "ABSENT",
    "NOT_SET",
    "BooleanEditor",
    "EnumEditor",
    "FieldEditor",
    "JsonEditor",
    "StringEditor",
    "example_text",
    "hint_text",
]


class _Absent:
    """The value of an argument the caller would not send."""

    def __repr__(self) -> str:
        return "ABSENT"


ABSENT: Final = _Absent()
NOT_SET = "not set"


def hint_text(schema: Mapping[str, Any]) -> str:
    """The tooltip of an argument: its title and description, and the constraints worth saying."""
    lines = [str(schema[key]) for key in ("title", "description") if schema.get(key)]
    for keyword in ("pattern", "format", "minLength", "maxLength", "minItems", "maxItems"):
        if keyword in schema:
            lines.append(f"{keyword}: {schema[keyword]}")
    if "default" in schema:
        lines.append(f"default: {json.dumps(schema['default'], ensure_ascii=False)}")
    return "\n".join(lines)


def example_text(schema: Mapping[str, Any]) -> str:
    """``e.g. LHR`` from the first example, else the description: a placeholder hint."""
    examples = schema.get("examples")
    if isinstance(examples, list) and examples:
        first = examples[0]
        return "e.g. " + (first if isinstance(first, str) else json.dumps(first))
    description = schema.get("description")
    return description if isinstance(description, str) else ""


class FieldEditor(QWidget):
    """One argument's input and the problem line under it.

    Attributes:
        input: the widget a person types in (what ``ArgumentsForm.field`` returns).
        schema: the argument's JSON Schema.
        required: whether the enclosing object requires it (its label is marked).
        item: whether it is an item of an array (an empty item is a value, never absent).
        always_sent: whether the argument is sent even when empty (``false``, ``[]``, ``{}``):
            an array item, or required by an object that is always sent itself.
        owner: the object or array editor it belongs to (None for the root).
        key: its property name or array index in ``owner``.
        problem_label: the small red line under the input.
    """

    edited = Signal()
    is_group: ClassVar[bool] = False
    """Objects and arrays: shown as a group box across the whole form row."""

    def __init__(
        self,
        schema: Mapping[str, Any],
        *,
        required: bool,
        item: bool = False,
        always_sent: bool | None = None,
        parent: QWidget | None = None,
    ) -> None:
        super().__init__(parent)
        self.schema = dict(schema)
        self.required = required
        self.item = item
        self.always_sent = (required or item) if always_sent is None else always_sent
        self.owner: FieldEditor | None = None
        self.key: str | int = ""
        self.input: QWidget = self
        self.problem_label = QLabel()
        self.problem_label.setObjectName("fieldProblem")
        self.problem_label.setWordWrap(True)
        self.problem_label.setStyleSheet(f"color: {error_colour(self).name()};")
        self.problem_label.hide()

    @property
    def path_parts(self) -> PathParts:
        """The argument's path as parts (``("passengers", 1, "age")``)."""
        return () if self.owner is None else (*self.owner.path_parts, self.key)

    @property
    def path(self) -> str:
        """The argument's path as the validator writes it (``passengers[1].age``)."""
        return format_path(self.path_parts)

    def default(self) -> Any:
        """A copy of the schema ``default``, or ABSENT."""
        return deepcopy(self.schema["default"]) if "default" in self.schema else ABSENT

    def value(self) -> Any:
        """The JSON value a caller would send, or ABSENT."""
        raise NotImplementedError

    def set_value(self, value: Any) -> None:
        """Show ``value`` (ABSENT clears the input); emits nothing."""
        raise NotImplementedError

    def reset(self) -> None:
        """Back to the schema default (or empty); emits nothing."""
        self.set_value(self.default())

    def input_problem(self) -> str:
        """What keeps the input from being read (text that is not JSON), or ``""``."""
        return ""

    def sub_editors(self) -> list[FieldEditor]:
        """The editors of the properties or items inside this one."""
        return []

    def set_problem(self, message: str) -> None:
        """Show ``message`` under the input; ``""`` hides the line, or, while the person edits
        this field, empties it and keeps its room (:meth:`collapse_problem` hides it once the
        focus has left): the fields below do not jump up under a click aimed at them."""
        label = self.problem_label
        if not message and label.isVisible() and self.holds_focus():
            label.setText("")
            self.input.setAccessibleDescription("")
            return
        if message == label.text() and label.isVisible() == bool(message):
            return
        label.setText(message)
        label.setVisible(bool(message))
        self.input.setAccessibleDescription(message)

    def holds_focus(self) -> bool:
        """Whether the keyboard focus is in this field."""
        focus = QApplication.focusWidget()
        return focus is not None and (focus is self or self.isAncestorOf(focus))

    def collapse_problem(self) -> None:
        """Hide an emptied problem line whose room was kept while the field had the focus."""
        if not self.problem_label.text() and not self.holds_focus():
            self.problem_label.hide()

    def problem(self) -> str:
        """The message shown under the input now."""
        return self.problem_label.text() if not self.problem_label.isHidden() else ""

    def _lay_out(self, widget: QWidget, *extra: QWidget) -> None:
        """The input (and buttons after it) on one line, the problem line under it."""
        self.input = widget
        widget.setToolTip(hint_text(self.schema))
        lay_out_with_problem(self, widget, extra, self.problem_label)


class StringEditor(FieldEditor):
    """A line edit; empty means absent (an empty array item is ``""``).

    A value put in that is not a string (from a past call, say) is shown as JSON and sent as it
    was, so validation names it, until the text is edited.
    """

    def __init__(self, schema: Mapping[str, Any], *, required: bool, item: bool = False) -> None:
        super().__init__(schema, required=required, item=item)
        self.line_edit = QLineEdit()
        self.line_edit.setPlaceholderText(example_text(schema))
        self.line_edit.setClearButtonEnabled(True)
        self._other: tuple[str, Any] | None = None  # a value that is not a string, and its text
        self._lay_out(self.line_edit)
        self.line_edit.textChanged.connect(self.edited)
        self.reset()

    def value(self) -> Any:
        text = self.line_edit.text()
        if self._other is not None and self._other[0] == text:
            return deepcopy(self._other[1])
        return text if text or self.item else ABSENT

    def set_value(self, value: Any) -> None:
        if isinstance(value, str) or value is ABSENT:
            text, self._other = (value if isinstance(value, str) else ""), None
        else:
            text = json.dumps(value, ensure_ascii=False, default=str)
            self._other = (text, deepcopy(value))
        with QSignalBlocker(self.line_edit):
            self.line_edit.setText(text)


class BooleanEditor(FieldEditor):
    """A check box; one that is not always sent has a third, "not set" state."""

    def __init__(
        self,
        schema: Mapping[str, Any],
        *,
        required: bool,
        item: bool = False,
        always_sent: bool | None = None,
    ) -> None:
        super().__init__(schema, required=required, item=item, always_sent=always_sent)
        self.check_box = QCheckBox()
        self.check_box.setTristate(not self.always_sent)
        self._lay_out(self.check_box)
        self.check_box.checkStateChanged.connect(self._on_state_changed)
        self.reset()

    def value(self) -> Any:
        state = self.check_box.checkState()
        if state == Qt.CheckState.PartiallyChecked:
            return ABSENT
        return state == Qt.CheckState.Checked

    def set_value(self, value: Any) -> None:
        if isinstance(value, bool):
            state = Qt.CheckState.Checked if value else Qt.CheckState.Unchecked
        elif self.check_box.isTristate():
            state = Qt.CheckState.PartiallyChecked
        else:
            state = Qt.CheckState.Unchecked  # one always sent is false until ticked
        with QSignalBlocker(self.check_box):
            self.check_box.setCheckState(state)
        self._show_state()

    def _show_state(self) -> None:
        value = self.value()
        self.check_box.setText(NOT_SET if value is ABSENT else json.dumps(value))

    def _on_state_changed(self) -> None:
        self._show_state()
        self.edited.emit()


class EnumEditor(FieldEditor):
    """A combo box of the ``enum`` values, with a first "not set" entry."""

    def __init__(self, schema: Mapping[str, Any], *, required: bool, item: bool = False) -> None:
        super().__init__(schema, required=required, item=item)
        self.choices: list[Any] = list(schema.get("enum") or [])
        self.combo_box = QComboBox()
        self.combo_box.addItem("(choose one)" if required or item else f"({NOT_SET})")
        for choice in self.choices:
            self.combo_box.addItem(choice if isinstance(choice, str) else json.dumps(choice))
        self._lay_out(self.combo_box)
        self.combo_box.currentIndexChanged.connect(self.edited)
        self.reset()

    def value(self) -> Any:
        index = self.combo_box.currentIndex()
        return deepcopy(self.choices[index - 1]) if index > 0 else ABSENT

    def set_value(self, value: Any) -> None:
        # Compared as JSON so 1 and True (equal in Python) stay different choices.
        texts = [json.dumps(choice, sort_keys=True) for choice in self.choices]
        wanted = None if value is ABSENT else json.dumps(value, sort_keys=True, default=str)
        index = texts.index(wanted) + 1 if wanted in texts else 0
        with QSignalBlocker(self.combo_box):
            self.combo_box.setCurrentIndex(index)


class JsonEditor(FieldEditor):
    """The fallback for a sub-schema the form cannot show: its value typed as JSON.

    Args:
        schema: the sub-schema.
        required: whether the enclosing object requires it.
        item: whether it is an array item.
        reason: why it is edited as JSON (shown in the tooltip).
    """

    def __init__(
        self, schema: Mapping[str, Any], *, required: bool, item: bool = False, reason: str = ""
    ) -> None:
        super().__init__(schema, required=required, item=item)
        self.reason = reason
        self.text_edit = QPlainTextEdit()
        self.text_edit.setObjectName("jsonField")
        self.text_edit.setFont(QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont))
        self.text_edit.setTabChangesFocus(True)  # keeps the form keyboard navigable
        self.text_edit.setPlaceholderText("JSON value" + (f", {reason}" if reason else ""))
        lines = self.text_edit.fontMetrics().lineSpacing()
        self.text_edit.setFixedHeight(lines * 4 + 12)
        self._lay_out(self.text_edit)
        tip = hint_text(schema)
        note = f"Typed as JSON: {reason}." if reason else "Typed as JSON."
        self.text_edit.setToolTip(f"{tip}\n{note}" if tip else note)
        self.text_edit.textChanged.connect(self.edited)
        self.reset()

    def _parsed(self) -> tuple[Any, str]:
        text = self.text_edit.toPlainText()
        if not text.strip():
            return (None if self.item else ABSENT), ""
        try:
            return json.loads(text), ""
        except json.JSONDecodeError as exc:
            return ABSENT, f"not valid JSON: {exc.msg} (line {exc.lineno}, column {exc.colno})"

    def value(self) -> Any:
        return self._parsed()[0]

    def input_problem(self) -> str:
        return self._parsed()[1]

    def set_value(self, value: Any) -> None:
        text = "" if value is ABSENT else json.dumps(value, ensure_ascii=False, indent=1)
        with QSignalBlocker(self.text_edit):
            self.text_edit.setPlainText(text)
