"""Small inputs of the property panel for numeric keywords, and the keyword lists it shows.

:class:`NumberField` edits one count or number (``minLength``, ``multipleOf``); :class:`BoundField`
edits a bound that is either inclusive or exclusive (``minimum`` / ``exclusiveMinimum``) with a
check box choosing which keyword holds it. An empty input takes the keyword out.
"""

from __future__ import annotations

import json
from typing import Any

from PySide6.QtCore import QObject, QSignalBlocker, Signal
from PySide6.QtWidgets import QCheckBox, QLineEdit

from app.tool_editor.parameter_edits import REMOVE
from app.tool_editor.value_editors import loads_json
from schema_types.json_text import json_type_name
from schema_types.schema.check import MODELLED_KEYWORDS

__all__ = ["COUNTS", "FORMATS", "MODELLED", "BoundField", "NumberField", "read_number"]

# JSON Schema's format names an author is likely to want, commonest first.
FORMATS = (
    "date",
    "date-time",
    "time",
    "duration",
    "email",
    "uri",
    "uri-reference",
    "uuid",
    "hostname",
    "ipv4",
    "ipv6",
    "regex",
    "json-pointer",
    "idn-email",
    "idn-hostname",
    "iri",
)
COUNTS = ("minLength", "maxLength", "minItems", "maxItems")
_COMMON = ("type", "title", "description", "enum", "default", "examples")
# Keywords the panel has an input for, by type (anything else is listed as "also set").
MODELLED: dict[str, tuple[str, ...]] = {
    kind: (*_COMMON, *keywords) for kind, keywords in MODELLED_KEYWORDS.items() if kind != "null"
}


def read_number(text: str, *, count: bool) -> Any:
    """The number typed (``REMOVE`` when empty).

    Raises:
        ValueError: not a number; for a count, not a whole number of at least 0.
    """
    text = text.strip()
    if not text:
        return REMOVE
    try:
        value = loads_json(text)
    except json.JSONDecodeError:
        value = None
    kind = json_type_name(value)
    if kind not in ("integer", "number"):
        raise ValueError(f"expected a number, got {text!r}")
    if count:
        if (kind == "number" and not float(value).is_integer()) or value < 0:
            raise ValueError(f"expected a whole number of at least 0, got {text!r}")
        return int(value)
    return value


def _shown(value: Any) -> str:
    return "" if value is None else json.dumps(value)


class NumberField(QObject):
    """A line edit for one numeric keyword; emits ``edited(keyword, value, problem)``."""

    edited = Signal(str, object, str)

    def __init__(self, keyword: str, edit: QLineEdit) -> None:
        super().__init__(edit)
        self.keyword = keyword
        self.edit = edit
        self._count = keyword in COUNTS
        edit.textEdited.connect(self._on_edited)

    def _on_edited(self, text: str) -> None:
        try:
            value = read_number(text, count=self._count)
        except ValueError as exc:
            self.edited.emit(self.keyword, None, str(exc))
            return
        self.edited.emit(self.keyword, value, "")

    def show_value(self, data: dict[str, Any]) -> None:
        """Show the node's value unless the person is typing an equal (or unreadable) one."""
        text = _shown(data.get(self.keyword))
        if self.edit.text() == text:
            return
        if self.edit.hasFocus():
            try:
                if read_number(self.edit.text(), count=self._count) == data.get(self.keyword):
                    return
            except ValueError:
                return
        with QSignalBlocker(self.edit):
            self.edit.setText(text)


class BoundField(QObject):
    """A bound kept in ``inclusive`` or ``exclusive`` (check box); emits
    ``edited({inclusive: v | REMOVE, exclusive: v | REMOVE}, problem, inclusive)``."""

    edited = Signal(dict, str, str)

    def __init__(self, inclusive: str, exclusive: str, edit: QLineEdit) -> None:
        super().__init__(edit)
        self.inclusive = inclusive
        self.exclusive_keyword = exclusive
        self.edit = edit
        self.exclusive = QCheckBox("exclusive")
        self.exclusive.setObjectName(f"{exclusive}Check")
        self.exclusive.setToolTip(f"Keep the value out of the range ({exclusive})")
        edit.textEdited.connect(self._on_changed)
        self.exclusive.clicked.connect(self._on_changed)

    def _on_changed(self, *_args: object) -> None:
        try:
            value = read_number(self.edit.text(), count=False)
        except ValueError as exc:
            self.edited.emit({}, str(exc), self.inclusive)
            return
        active, other = self.inclusive, self.exclusive_keyword
        if self.exclusive.isChecked():
            active, other = other, active
        self.edited.emit({active: value, other: REMOVE}, "", self.inclusive)

    def show_value(self, data: dict[str, Any]) -> None:
        """Show whichever keyword holds the bound (the exclusive one when both do)."""
        exclusive = self.exclusive_keyword in data
        with QSignalBlocker(self.exclusive):
            self.exclusive.setChecked(exclusive)
        value = data.get(self.exclusive_keyword if exclusive else self.inclusive)
        text = _shown(value)
        if self.edit.text() == text:
            return
        if self.edit.hasFocus():
            try:
                if read_number(self.edit.text(), count=False) == value:
                    return
            except ValueError:
                return
        with QSignalBlocker(self.edit):
            self.edit.setText(text)
