# ruff: noqa: N802  (Qt virtual method names are camelCase)
"""The "sample values" the template preview is filled with, as an editable table model.

The values start as :func:`schema_types.arguments.sample_arguments` of the tool's parameters
(examples, defaults, enum values, typed placeholders: the same samples the test dialog starts
from). :class:`SampleValuesModel` lists every leaf parameter path; the person may type another
value for any of them or leave one out (as if the caller had not sent it), for the preview only:
nothing here is part of the agent. What they changed is a :class:`SampleOverrides`, which a
:class:`SampleStore` (the studio's :class:`~app.test_run.memory.SampleMemory`) keeps per agent
file and tool.

A typed value that is not JSON of the parameter's type is still used, as the text typed (the
preview shows it where it goes) and flagged at its row; so is a value the schema refuses, once
the owner has checked the arguments (:meth:`SampleValuesModel.set_schema_problems`). A call with
either is refused, and :meth:`SampleValuesModel.problem_lines` says why, row by row.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping, Sequence
from copy import deepcopy
from dataclasses import dataclass, field
from typing import Any, Protocol

from PySide6.QtCore import (
    QAbstractTableModel,
    QModelIndex,
    QObject,
    QPersistentModelIndex,
    Qt,
    Signal,
)
from PySide6.QtGui import QColor, QPalette

from app.document.agent_document import AgentDocument
from app.tool_editor.highlighter import HighlightStyle, style_colours
from app.tool_editor.value_editors import loads_json
from schema_types.arguments import sample_arguments
from schema_types.schema.nodes import parameter_paths

__all__ = ["SampleOverrides", "SampleStore", "SampleValuesModel", "value_text"]

_ROOT = QModelIndex()
_DISPLAY = Qt.ItemDataRole.DisplayRole
_EDIT = Qt.ItemDataRole.EditRole
_CHECK = Qt.ItemDataRole.CheckStateRole
_TIP = Qt.ItemDataRole.ToolTipRole
_FOREGROUND = Qt.ItemDataRole.ForegroundRole
_BACKGROUND = Qt.ItemDataRole.BackgroundRole
# How much of a typed value a problem message quotes.
_QUOTED = 40
# "tags[1]" and "trip.budget" name the rows "tags" and "trip.budget".
_INDEX = re.compile(r"\[\d+\]")


@dataclass(frozen=True)
class SampleOverrides:
    """What the person changed in a sample values table.

    Attributes:
        typed: the text typed for each path whose sample was replaced.
        left_out: the paths unticked (not sent).
    """

    typed: Mapping[str, str] = field(default_factory=dict)
    left_out: frozenset[str] = frozenset()

    def is_empty(self) -> bool:
        """Whether nothing was changed: every sample is used and sent."""
        return not self.typed and not self.left_out

    def to_json(self) -> dict[str, Any]:
        """A JSON object holding the overrides (read back by :meth:`from_json`)."""
        return {"typed": dict(self.typed), "left_out": sorted(self.left_out)}

    @classmethod
    def from_json(cls, value: Any) -> SampleOverrides | None:
        """The overrides in ``value`` (from :meth:`to_json`); None when it holds none.

        Entries of the wrong type are skipped rather than refused: the file may have been
        edited by hand.
        """
        if not isinstance(value, Mapping):
            return None
        typed = value.get("typed")
        left_out = value.get("left_out")
        return cls(
            {k: v for k, v in typed.items() if isinstance(k, str) and isinstance(v, str)}
            if isinstance(typed, Mapping)
            else {},
            frozenset(p for p in left_out if isinstance(p, str))
            if isinstance(left_out, list)
            else frozenset(),
        )


class SampleStore(Protocol):
    """Where a tool editor keeps its sample overrides between sessions."""

    def recall(self, document: AgentDocument, tool_name: str) -> SampleOverrides | None:
        """The overrides kept for ``tool_name`` of ``document``, or None."""
        ...

    def remember(self, document: AgentDocument, tool_name: str, overrides: SampleOverrides) -> None:
        """Keep ``overrides`` for ``tool_name`` of ``document``."""
        ...


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
    value: Any = _UNSET  # the typed value parsed (the text itself when it does not parse)
    parse_problem: str | None = None
    schema_problem: str | None = None
    send: bool = True

    @property
    def problem(self) -> str | None:
        # The parse problem says more than the schema's "expected integer, got string".
        return self.parse_problem or self.schema_problem


def value_text(value: Any) -> str:
    """How a sample value is written in the table: strings bare, everything else as JSON."""
    if isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False)


def _parse(text: str, kind: str | None) -> tuple[Any, str | None]:
    """The value of typed ``text`` for a parameter of type ``kind``, or the text and why not."""
    if kind == "string":
        return text, None
    try:
        return loads_json(text), None
    except json.JSONDecodeError as exc:
        if kind is None:
            return text, None  # an untyped parameter takes a bare string too
        quoted = text if len(text) <= _QUOTED else text[: _QUOTED - 1] + "…"
        what = kind.replace(" | ", " or ")
        return text, f"{quoted} is not a JSON {what} ({exc.msg} at column {exc.colno})"


class SampleValuesModel(QAbstractTableModel):
    """The values the preview is filled with: one row per leaf parameter path.

    Column 0 is the path, checked when the value is sent (unchecked: left out, as if the caller
    had not sent it, so the schema default, a fallback or nothing shows in the preview).
    Column 1 is the value: the schema's sample (examples, default, enum, a typed placeholder) in
    grey until the person types another one; clearing it restores the sample. A value with a
    problem (not JSON of its type, or refused by the schema) is shown in the error colour with
    the reason as its tooltip. Overrides live only in this view: they are not part of the agent.
    """

    values_changed = Signal()
    """The arguments the preview should use changed."""
    problems_changed = Signal()
    """A row's problem appeared, changed or went away (:meth:`problems` is current)."""

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._rows: list[_Row] = []
        self._samples: dict[str, Any] = {}
        self._unplaced: list[str] = []  # schema problems no row can show
        self.set_palette(QPalette())

    def set_palette(self, palette: QPalette) -> None:
        """Colours for sample (grey) values and values with a problem."""
        self._dim = QColor(palette.color(QPalette.ColorRole.PlaceholderText))
        self._error = style_colours(palette)[HighlightStyle.UNKNOWN]
        self._error_background = QColor(self._error)
        self._error_background.setAlpha(40)
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
                row.schema_problem = before.schema_problem
                if before.typed is not None:
                    row.typed = before.typed
                    row.value, row.parse_problem = _parse(before.typed, row.type)
            rows.append(row)
        self._samples = samples
        if [_row_key(r) for r in rows] == [_row_key(r) for r in self._rows]:
            self._rows = rows
            return False
        self.beginResetModel()
        self._rows = rows
        self.endResetModel()
        self.problems_changed.emit()
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
        """Why a call with the value of ``path`` would be refused, or None."""
        row = self._row_of(path)
        return None if row is None else self._rows[row].problem

    def problems(self) -> dict[str, str]:
        """Each path whose value a call would be refused for, with the reason, in row order."""
        return {row.path: problem for row in self._rows if (problem := row.problem)}

    def problem_lines(self) -> list[str]:
        """Every reason a call with these values would be refused: ``"path: reason"`` lines."""
        lines = [
            # A problem inside the row's value ("tags[1]: …") names its own place.
            problem if problem.startswith((f"{path}.", f"{path}[")) else f"{path}: {problem}"
            for path, problem in self.problems().items()
        ]
        return lines + self._unplaced

    def set_schema_problems(self, problems: Iterable[tuple[str, str]]) -> None:
        """Show what the schema refuses: ``(path, message)`` pairs, paths as validation names
        them (``trip.budget``, ``tags[1]``); each goes to the row of its path or the row above
        it, and the ones no row holds (the arguments as a whole) only to
        :meth:`problem_lines`."""
        found: dict[str, str] = {}
        unplaced: list[str] = []
        rows = {row.path for row in self._rows}
        for path, message in problems:
            place = _row_for(path, rows)
            if place is None:
                unplaced.append(f"{path}: {message}" if path else message)
            elif place not in found:
                found[place] = message if place == path else f"{path}: {message}"
        changed = unplaced != self._unplaced
        self._unplaced = unplaced
        for number, row in enumerate(self._rows):
            problem = found.get(row.path)
            if problem != row.schema_problem:
                row.schema_problem = problem
                changed = True
                self.dataChanged.emit(self.index(number, 0), self.index(number, 1))
        if changed:
            self.problems_changed.emit()

    def overrides(self) -> SampleOverrides:
        """What the person changed: typed values and left-out rows."""
        return SampleOverrides(
            {row.path: row.typed for row in self._rows if row.typed is not None},
            frozenset(row.path for row in self._rows if not row.send),
        )

    def restore(self, overrides: SampleOverrides) -> None:
        """Apply ``overrides`` (kept from an earlier session) to the rows they still name."""
        changed = False
        for row in self._rows:
            typed = overrides.typed.get(row.path)
            if typed is not None and typed not in ("", row.sample_text) and typed != row.typed:
                row.typed = typed
                row.value, row.parse_problem = _parse(typed, row.type)
                changed = True
            if row.path in overrides.left_out and row.send:
                row.send = False
                changed = True
        if changed:
            self.beginResetModel()
            self.endResetModel()
            self.problems_changed.emit()
            self.values_changed.emit()

    def reset(self) -> None:
        """Forget every typed value and send every value again."""
        if not any(r.typed is not None or not r.send for r in self._rows):
            return
        self.beginResetModel()
        for row in self._rows:
            row.typed, row.value, row.parse_problem, row.send = None, _UNSET, None, True
        self.endResetModel()
        self.problems_changed.emit()
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
            if role == _FOREGROUND and row.problem:
                return self._error
            if role == _TIP:
                about = f"{row.path} ({row.type or 'any type'})"
                if row.description:
                    about += f": {row.description}"
                if row.problem:
                    about += f"\nA call is refused: {row.problem}"
                return about + "\nUncheck to leave it out, as if the caller had not sent it."
            return None
        if role in (_DISPLAY, _EDIT):
            return row.sample_text if row.typed is None else row.typed
        if role == _FOREGROUND:
            if row.problem:
                return self._error
            return self._dim if row.typed is None or not row.send else None
        if role == _BACKGROUND:
            return self._error_background if row.problem else None
        if role == _TIP:
            if row.problem:
                return f"A call with this value is refused: {row.problem}"
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
        had_problem = row.problem
        if index.column() == 0 and role == _CHECK:
            send = value in (Qt.CheckState.Checked, Qt.CheckState.Checked.value)
            if send == row.send:
                return True
            row.send = send
        elif index.column() == 1 and role == _EDIT:
            text = str(value)
            if text in ("", row.sample_text):
                row.typed, row.value, row.parse_problem = None, _UNSET, None
            else:
                row.typed = text
                row.value, row.parse_problem = _parse(text, row.type)
        else:
            return False
        # What the schema said was about the old value; the owner checks the new one.
        row.schema_problem = None
        self.dataChanged.emit(self.index(index.row(), 0), self.index(index.row(), 1))
        if row.problem != had_problem:
            self.problems_changed.emit()
        self.values_changed.emit()
        return True


def _row_key(row: _Row) -> tuple[str, str | None, str, str | None, bool]:
    return (row.path, row.type, row.sample_text, row.typed, row.send)


def _row_for(path: str, rows: Iterable[str]) -> str | None:
    """The row that shows a problem at validation path ``path``: its own, or the nearest above."""
    dotted = _INDEX.sub("", path)
    while dotted:
        if dotted in rows:
            return dotted
        dotted = dotted.rpartition(".")[0]
    return None


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
