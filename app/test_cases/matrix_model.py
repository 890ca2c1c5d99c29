# ruff: noqa: N802  (Qt virtual method names are camelCase)
"""The results of a test-case run as a table: a row per case, a column per model.

:class:`MatrixTableModel` adapts the runtime's ``CaseResult`` objects (``mcp_export.testing``)
and holds nothing else: column 0 names the case (``tool / case``), every other column is a model.
A cell shows its pass count over its runs (``k/n`` with repeats), the first failed expectation, the
slowest run's time and the tokens spent, and once the run is compared with the one before it
(:meth:`MatrixTableModel.set_changes`) a regression or fix mark; the rows are then ordered
regressions first, then the other failures, then the fixes, then the rest. Cost is not shown: no
model server reports a price.

Results arrive in batches (:meth:`MatrixTableModel.add_results`), each batch one ``dataChanged``.
The summary of one cell is :func:`summarize`, tested without any widget.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

from PySide6.QtCore import QAbstractTableModel, QModelIndex, QObject, QPersistentModelIndex, Qt
from PySide6.QtGui import QBrush, QColor, QFont, QGuiApplication

from app.tool_editor.highlighter import is_dark
from mcp_export.redact import redact

if TYPE_CHECKING:
    from mcp_export.testing.run import CaseResult

__all__ = [
    "CASE_COLUMN",
    "CELL_ROLE",
    "Cell",
    "CellSummary",
    "Change",
    "MatrixTableModel",
    "format_ms",
    "shown_result",
    "summarize",
]

AnyIndex = QModelIndex | QPersistentModelIndex
Cell = tuple[str, str, str]
"""(tool, case, model), as ``mcp_export.testing.record`` names a cell."""
Change = Literal["regressed", "fixed", "new", "same"]
CASE_COLUMN = 0
CELL_ROLE = Qt.ItemDataRole.UserRole + 1
"""The cell's ``(tool, case, model)`` (None in the case column)."""

# Text colours per theme (light, dark): each reads on its own theme's base and on the tints.
_PASS_COLOURS = (QColor("#2e7d32"), QColor("#8fd694"))
_FAIL_COLOURS = (QColor("#c62828"), QColor("#ff9c94"))
# Translucent tints: they read on a light and on a dark base alike.
_PASS_TINT = QColor(46, 125, 50, 38)
_FAIL_TINT = QColor(198, 40, 40, 46)
_REGRESSED_TINT = QColor(198, 40, 40, 90)


@dataclass(frozen=True)
class CellSummary:
    """What one cell shows.

    Attributes:
        runs: runs finished so far.
        expected: runs the cell will have (the run's repeat).
        passed: runs that passed.
        first_failure: the first failed expectation's name (``contains[0]``), or None.
        slowest_ms: the slowest finished run's time, or None before the first.
        tokens: tokens in and out over the finished runs; None when a model server did not
            report them (unknown, not 0).
        change: the comparison with the run before (None until it is made).
    """

    runs: int
    expected: int
    passed: int
    first_failure: str | None
    slowest_ms: float | None
    tokens: int | None
    change: Change | None = None

    @property
    def done(self) -> bool:
        """Whether every run of the cell has finished."""
        return self.runs >= self.expected

    @property
    def failed(self) -> bool:
        """Whether a finished run of the cell failed."""
        return self.passed < self.runs

    def text(self) -> str:
        """Two lines: the outcome, then time and tokens."""
        if self.runs == 0:
            return "…"
        mark = "✘" if self.failed else "✔"
        first = f"{mark} {self.passed}/{self.runs}"
        if self.runs < self.expected:
            first += f" of {self.expected}"
        if self.change == "regressed":
            first += " ▼ regressed"
        elif self.change == "fixed":
            first += " ▲ fixed"
        if self.first_failure:
            first += f" · {self.first_failure}"
        tokens = "— tokens" if self.tokens is None else f"{self.tokens} tokens"
        return f"{first}\n{format_ms(self.slowest_ms)} · {tokens}"


def format_ms(ms: float | None) -> str:
    """``850 ms``, ``2.3 s``; "—" when unknown."""
    if ms is None:
        return "—"
    return f"{ms:.0f} ms" if ms < 1000 else f"{ms / 1000:.1f} s"


def summarize(
    results: Sequence[CaseResult], expected: int, change: Change | None = None
) -> CellSummary:
    """The summary of one cell's runs (any order)."""
    ordered = sorted(results, key=lambda r: r.attempt)
    failure = next((r.failures[0].expectation for r in ordered if r.failures), None)
    counts = [(r.outcome.input_tokens, r.outcome.output_tokens) for r in ordered]
    known = all(i is not None and o is not None for i, o in counts)
    return CellSummary(
        runs=len(ordered),
        expected=expected,
        passed=sum(r.passed for r in ordered),
        first_failure=failure,
        slowest_ms=max((r.outcome.duration_ms for r in ordered), default=None),
        tokens=sum((i or 0) + (o or 0) for i, o in counts) if known and counts else None,
        change=change,
    )


def shown_result(results: Sequence[CaseResult]) -> CaseResult | None:
    """The run a cell stands for: its first failed run, else its first run."""
    ordered = sorted(results, key=lambda r: r.attempt)
    return next((r for r in ordered if not r.passed), ordered[0] if ordered else None)


def _rank(summaries: list[CellSummary]) -> int:
    if any(s.change == "regressed" for s in summaries):
        return 0
    if any(s.failed for s in summaries):
        return 1
    if any(s.change == "fixed" for s in summaries):
        return 2
    return 3


class MatrixTableModel(QAbstractTableModel):
    """Cases × models of one run; cells fill in as results arrive."""

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._cases: list[tuple[str, str]] = []
        self._models: list[str] = []
        self._repeat = 1
        self._rows: list[int] = []  # shown row → index into _cases
        self._case_row: dict[tuple[str, str], int] = {}
        self._results: dict[Cell, list[CaseResult]] = {}
        self._summaries: dict[Cell, CellSummary] = {}
        self._changes: dict[Cell, Change] = {}

    # -- contents ---------------------------------------------------------------------------

    def reset(self, cases: Sequence[tuple[str, str]], models: Sequence[str], repeat: int) -> None:
        """Start over with empty cells for ``cases`` × ``models``."""
        self.beginResetModel()
        self._cases = list(cases)
        self._models = list(models)
        self._repeat = max(1, repeat)
        self._rows = list(range(len(self._cases)))
        self._case_row = {case: row for row, case in enumerate(self._cases)}
        self._results = {}
        self._summaries = {}
        self._changes = {}
        self.endResetModel()

    def add_results(self, results: Sequence[CaseResult]) -> None:
        """Put finished runs into their cells (one ``dataChanged`` for the batch)."""
        touched: set[Cell] = set()
        for result in results:
            cell = (result.tool, result.case, result.model)
            if (result.tool, result.case) not in self._case_row or result.model not in self._models:
                continue
            self._results.setdefault(cell, []).append(result)
            touched.add(cell)
        for cell in touched:
            self._summaries[cell] = summarize(self._results[cell], self._repeat)
        if touched:
            shown = {source: row for row, source in enumerate(self._rows)}
            rows = [shown[self._case_row[(tool, case)]] for tool, case, _ in touched]
            columns = [self._models.index(model) + 1 for _, _, model in touched]
            self.dataChanged.emit(
                self.index(min(rows), min(columns)), self.index(max(rows), max(columns))
            )

    def set_changes(self, changes: dict[Cell, Change]) -> None:
        """Mark regressions and fixes and order the rows: regressions, failures, fixes, the rest."""
        self._changes = dict(changes)
        for cell, results in self._results.items():
            self._summaries[cell] = summarize(results, self._repeat, self._changes.get(cell))

        def rank(source: int) -> int:
            tool, case = self._cases[source]
            found = [self._summaries.get((tool, case, m)) for m in self._models]
            return _rank([s for s in found if s is not None])

        order = sorted(range(len(self._cases)), key=lambda source: (rank(source), source))
        self.layoutAboutToBeChanged.emit()
        after = {source: row for row, source in enumerate(order)}
        old = self.persistentIndexList()
        moved = [
            self.index(after[self._rows[index.row()]], index.column())
            if 0 <= index.row() < len(self._rows)
            else QModelIndex()
            for index in old
        ]
        self._rows = order
        self.changePersistentIndexList(old, moved)
        self.layoutChanged.emit()
        if self._rows and self._models:
            self.dataChanged.emit(
                self.index(0, 1), self.index(len(self._rows) - 1, len(self._models))
            )

    # -- reading ----------------------------------------------------------------------------

    @property
    def models(self) -> list[str]:
        """The model columns, in order."""
        return list(self._models)

    def cases(self) -> list[tuple[str, str]]:
        """The ``(tool, case)`` rows, top to bottom as shown."""
        return [self._cases[source] for source in self._rows]

    def cell_at(self, row: int, column: int) -> Cell | None:
        """The cell shown at ``row``, ``column`` (None for the case column or out of range)."""
        if not 0 <= row < len(self._rows) or not 1 <= column <= len(self._models):
            return None
        tool, case = self._cases[self._rows[row]]
        return (tool, case, self._models[column - 1])

    def index_of(self, cell: Cell) -> QModelIndex:
        """Where ``cell`` is shown (invalid when it is not in the table)."""
        tool, case, model = cell
        source = self._case_row.get((tool, case))
        if source is None or model not in self._models:
            return QModelIndex()
        return self.index(self._rows.index(source), self._models.index(model) + 1)

    def results(self, cell: Cell) -> list[CaseResult]:
        """The finished runs of ``cell``, by attempt."""
        return sorted(self._results.get(cell, []), key=lambda r: r.attempt)

    def summary(self, cell: Cell) -> CellSummary:
        """What ``cell`` shows."""
        found = self._summaries.get(cell)
        return found if found is not None else summarize([], self._repeat)

    def change(self, cell: Cell) -> Change | None:
        """The cell's comparison with the run before, once made."""
        return self._changes.get(cell)

    # -- Qt ---------------------------------------------------------------------------------

    def rowCount(self, parent: AnyIndex | None = None) -> int:
        return 0 if parent is not None and parent.isValid() else len(self._rows)

    def columnCount(self, parent: AnyIndex | None = None) -> int:
        return 0 if parent is not None and parent.isValid() else len(self._models) + 1

    def headerData(
        self, section: int, orientation: Qt.Orientation, role: int = Qt.ItemDataRole.DisplayRole
    ) -> Any:
        if orientation != Qt.Orientation.Horizontal:
            return None
        if role == Qt.ItemDataRole.DisplayRole:
            return "Case" if section == CASE_COLUMN else self._models[section - 1]
        if role == Qt.ItemDataRole.ToolTipRole and section > CASE_COLUMN:
            return self._column_tip(self._models[section - 1])
        return None

    def _column_tip(self, model: str) -> str:
        cells = [self.summary((tool, case, model)) for tool, case in self._cases]
        done = [s for s in cells if s.runs]
        passed = sum(1 for s in done if not s.failed)
        return f"{model}: {passed} of {len(done)} cases passed every run"

    def data(self, index: AnyIndex, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if not index.isValid() or not 0 <= index.row() < len(self._rows):
            return None
        if index.column() == CASE_COLUMN:
            tool, case = self._cases[self._rows[index.row()]]
            if role in (Qt.ItemDataRole.DisplayRole, Qt.ItemDataRole.ToolTipRole):
                return f"{tool} / {case}"
            return None
        cell = self.cell_at(index.row(), index.column())
        if cell is None:
            return None
        if role == CELL_ROLE:
            return cell
        summary = self.summary(cell)
        if role == Qt.ItemDataRole.DisplayRole:
            return summary.text()
        if role == Qt.ItemDataRole.ToolTipRole:
            return self._cell_tip(cell, summary)
        if role == Qt.ItemDataRole.ForegroundRole and summary.runs:
            dark = int(is_dark(QGuiApplication.palette()))
            return QBrush((_FAIL_COLOURS if summary.failed else _PASS_COLOURS)[dark])
        if role == Qt.ItemDataRole.BackgroundRole and summary.runs:
            if summary.change == "regressed":
                return QBrush(_REGRESSED_TINT)
            return QBrush(_FAIL_TINT if summary.failed else _PASS_TINT)
        if role == Qt.ItemDataRole.FontRole and summary.change in ("regressed", "fixed"):
            font = QFont()
            font.setBold(True)
            return font
        return None

    def _cell_tip(self, cell: Cell, summary: CellSummary) -> str:
        tool, case, model = cell
        lines = [f"{tool} / {case} on {model}"]
        if summary.change is not None:
            lines.append(f"Compared with the run before: {summary.change}")
        seen: list[str] = []
        for result in self.results(cell):
            for failure in result.failures:
                text = redact(str(failure))
                if text not in seen:
                    seen.append(text)
        lines.extend(seen[:5])
        if summary.runs and summary.tokens is None:
            lines.append("Tokens —: the model server did not report them")
        return "\n".join(lines)
