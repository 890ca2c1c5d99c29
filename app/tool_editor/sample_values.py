# ruff: noqa: N802  (Qt virtual method names are camelCase)
"""The "sample values" the template preview is filled with, as an editable table model.

The values start as :func:`schema_types.arguments.sample_arguments` of the tool's parameters
(examples, defaults, enum values, typed placeholders: the same samples the test dialog starts
from). :class:`SampleValuesModel` lists every leaf parameter path; the person may type another
value for any of them or leave one out (as if the caller had not sent it), for the preview only:
nothing here is part of the agent.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from copy import deepcopy
from dataclasses import dataclass
from typing import Any

from PySide6.QtCore import (
    QAbstractTableModel,
    QModelIndex,
    QObject,
    QPersistentModelIndex,
    Qt,
    Signal,
)
from PySide6.QtGui import QColor, QPalette

from app.tool_editor.highlighter import HighlightStyle, style_colours
from schema_types.arguments import sample_arguments
from schema_types.schema.nodes import parameter_paths

__all__ = ["SampleValuesModel", "value_text"]

_ROOT = QModelIndex()
_DISPLAY = Qt.ItemDataRole.DisplayRole
_EDIT = Qt.ItemDataRole.EditRole
_CHECK = Qt.ItemDataRole.CheckStateRole
_TIP = Qt.ItemDataRole.ToolTipRole
_FOREGROUND = Qt.ItemDataRole.ForegroundRole


class _Unset:
    def __repr__(self) -> str:
        return "UNSET"


_UNSET: Any = _Unset()


@dataclass
class _Row:
    path: str
    type: str | None
    description: str | None
    sample: Any
    sample_text: str
    typed: str | None = None  # what the person typed, None: the sample is used
    value: Any = _UNSET  # the typed value parsed, _UNSET while it does not parse
    problem: str | None = None
    send: bool = True


def value_text(value: Any) -> str:
    """How a sample value is written in the table: strings bare, everything else as JSON."""
    if isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False)


def _parse(text: str, kind: str | None) -> tuple[Any, str | None]:
    """The value of typed ``text`` for a parameter of type ``kind``, or why it is not one."""
    if kind == "string":
        return text, None
    try:
        return json.loads(text), None
    except json.JSONDecodeError as exc:
        if kind is None:
            return text, None  # an untyped parameter takes a bare string too
        return _UNSET, f"not a JSON {kind} ({exc.msg} at column {exc.colno}): the sample is used"


class SampleValuesModel(QAbstractTableModel):
    """The values the preview is filled with: one row per leaf parameter path.

    Column 0 is the path, checked when the value is sent (unchecked: left out, as if the caller
    had not sent it, so the schema default or a visible ``{param}`` shows in the preview).
    Column 1 is the value: the schema's sample (examples, default, enum, a typed placeholder) in
    grey until the person types another one; clearing it restores the sample. Overrides live only
    in this view: they are not part of the agent.
    """

    values_changed = Signal()
    """The arguments the preview should use changed."""

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._rows: list[_Row] = []
        self._samples: dict[str, Any] = {}
        self._dim = QColor(QPalette().color(QPalette.ColorRole.PlaceholderText))
        self._error = style_colours(QPalette())[HighlightStyle.UNKNOWN]

    def set_palette(self, palette: QPalette) -> None:
        """Colours for sample (grey) and unparsable (error) values."""
        self._dim = QColor(palette.color(QPalette.ColorRole.PlaceholderText))
        self._error = style_colours(palette)[HighlightStyle.UNKNOWN]
        if self._rows:
            self.dataChanged.emit(self.index(0, 1), self.index(len(self._rows) - 1, 1))

    def set_parameters(self, parameters: Mapping[str, Any]) -> bool:
        """Offer the leaf paths of ``parameters``; keeps what was typed for paths still there.

        Returns:
            True when the rows changed.
        """
        samples = sample_arguments(parameters)
        found = parameter_paths(parameters)
        parents = {p.path.rsplit(".", 1)[0] for p in found if "." in p.path}
        old = {row.path: row for row in self._rows}
        rows: list[_Row] = []
        for entry in found:
            if entry.path in parents:
                continue  # an object with properties: its leaves carry the values
            sample = _at(samples, entry.path.split("."))
            row = _Row(entry.path, entry.type, entry.description, sample, value_text(sample))
            before = old.get(entry.path)
            if before is not None:
                row.send = before.send
                if before.typed is not None:
                    row.typed = before.typed
                    row.value, row.problem = _parse(before.typed, row.type)
            rows.append(row)
        self._samples = samples
        if [_row_key(r) for r in rows] == [_row_key(r) for r in self._rows]:
            self._rows = rows
            return False
        self.beginResetModel()
        self._rows = rows
        self.endResetModel()
        return True

    def arguments(self) -> dict[str, Any]:
        """The sample arguments with what the person typed and left out applied."""
        arguments = deepcopy(self._samples)
        for row in self._rows:
            parts = row.path.split(".")
            if not row.send:
                _remove(arguments, parts)
            elif row.value is not _UNSET:
                _put(arguments, parts, deepcopy(row.value))
        return arguments

    def paths(self) -> list[str]:
        """The parameter paths listed, in order."""
        return [row.path for row in self._rows]

    def set_value(self, path: str, text: str) -> bool:
        """Type ``text`` as the value of ``path`` (empty: back to the sample)."""
        row = self._row_of(path)
        return self.setData(self.index(row, 1), text) if row is not None else False

    def set_sent(self, path: str, sent: bool) -> bool:
        """Send or leave out the value of ``path``."""
        row = self._row_of(path)
        state = Qt.CheckState.Checked if sent else Qt.CheckState.Unchecked
        role = _CHECK
        return self.setData(self.index(row, 0), state, role) if row is not None else False

    def problem(self, path: str) -> str | None:
        """Why what was typed for ``path`` is not used, or None."""
        row = self._row_of(path)
        return None if row is None else self._rows[row].problem

    def reset(self) -> None:
        """Forget every typed value and send every value again."""
        if not any(r.typed is not None or not r.send for r in self._rows):
            return
        self.beginResetModel()
        for row in self._rows:
            row.typed, row.value, row.problem, row.send = None, _UNSET, None, True
        self.endResetModel()
        self.values_changed.emit()

    def _row_of(self, path: str) -> int | None:
        return next((i for i, row in enumerate(self._rows) if row.path == path), None)

    # -- Qt model --------------------------------------------------------------------------

    def rowCount(self, parent: QModelIndex | QPersistentModelIndex = _ROOT) -> int:
        return 0 if parent.isValid() else len(self._rows)

    def columnCount(self, parent: QModelIndex | QPersistentModelIndex = _ROOT) -> int:
        return 0 if parent.isValid() else 2

    def headerData(self, section: int, orientation: Qt.Orientation, role: int = _DISPLAY) -> Any:
        if orientation != Qt.Orientation.Horizontal:
            return None
        if role == _TIP and section == 0:
            return "Checked: the value is sent. Unchecked: left out, as if the caller sent none."
        if role == _DISPLAY:
            return ("Parameter", "Sample value")[section] if 0 <= section < 2 else None
        return None

    def flags(self, index: QModelIndex | QPersistentModelIndex) -> Qt.ItemFlag:
        if not index.isValid():
            return Qt.ItemFlag.NoItemFlags
        base = Qt.ItemFlag.ItemIsEnabled | Qt.ItemFlag.ItemIsSelectable
        if index.column() == 0:
            return base | Qt.ItemFlag.ItemIsUserCheckable
        return base | Qt.ItemFlag.ItemIsEditable

    def data(self, index: QModelIndex | QPersistentModelIndex, role: int = 0) -> Any:
        if not index.isValid() or index.row() >= len(self._rows):
            return None
        row = self._rows[index.row()]
        if index.column() == 0:
            if role == _DISPLAY:
                return row.path
            if role == _CHECK:
                return Qt.CheckState.Checked if row.send else Qt.CheckState.Unchecked
            if role == _TIP:
                about = f"{row.path} ({row.type or 'any type'})"
                if row.description:
                    about += f": {row.description}"
                return about + "\nUncheck to leave it out, as if the caller had not sent it."
            return None
        if role in (_DISPLAY, _EDIT):
            return row.sample_text if row.typed is None else row.typed
        if role == _FOREGROUND:
            if row.problem:
                return self._error
            return self._dim if row.typed is None or not row.send else None
        if role == _TIP:
            if row.problem:
                return row.problem
            if row.typed is None:
                return "Sample from the schema (examples, default, enum). Type to try another."
            return "Typed here for the preview only; clear it to go back to the sample."
        return None

    def setData(
        self, index: QModelIndex | QPersistentModelIndex, value: Any, role: int = 2
    ) -> bool:
        if not index.isValid() or index.row() >= len(self._rows):
            return False
        row = self._rows[index.row()]
        if index.column() == 0 and role == _CHECK:
            send = value in (Qt.CheckState.Checked, Qt.CheckState.Checked.value)
            if send == row.send:
                return True
            row.send = send
            self.dataChanged.emit(index, self.index(index.row(), 1))
        elif index.column() == 1 and role == _EDIT:
            text = str(value)
            if text in ("", row.sample_text):
                row.typed, row.value, row.problem = None, _UNSET, None
            else:
                row.typed = text
                row.value, row.problem = _parse(text, row.type)
            self.dataChanged.emit(index, index)
        else:
            return False
        self.values_changed.emit()
        return True


def _row_key(row: _Row) -> tuple[str, str | None, str, str | None, bool]:
    return (row.path, row.type, row.sample_text, row.typed, row.send)


def _at(value: Any, parts: Sequence[str]) -> Any:
    for part in parts:
        if not isinstance(value, Mapping) or part not in value:
            return None
        value = value[part]
    return value


def _put(arguments: dict[str, Any], parts: Sequence[str], value: Any) -> None:
    container = arguments
    for part in parts[:-1]:
        inner = container.get(part)
        if not isinstance(inner, dict):
            inner = container[part] = {}
        container = inner
    container[parts[-1]] = value


def _remove(arguments: dict[str, Any], parts: Sequence[str]) -> None:
    container: Any = arguments
    for part in parts[:-1]:
        container = container.get(part) if isinstance(container, dict) else None
    if isinstance(container, dict):
        container.pop(parts[-1], None)
