# ruff: noqa: N802  (Qt virtual method names are camelCase)
"""The results of a test-case run as a table: a row per case, a column per model.

:class:`MatrixTableModel` adapts the runtime's ``CaseResult`` objects (``mcp_export.testing``)
and holds nothing else: column 0 names the case (``tool / case``), every other column is a model.
A cell shows its pass count over its runs (``k/n`` with repeats), the first failed expectation, the
slowest run's time and the tokens spent, and once the run is compared with the one before it
(:meth:`MatrixTableModel.set_changes`) a regression or fix mark; the rows are then ordered
regressions first, then the other failures, then the fixes, then the rest. Cost is not shown: no
model server reports a price.

Caller cases (a request in words, ``ask``) run on caller models instead: their columns follow
the served models' (headed ``caller · model``), a caller case has cells in those only and an
ordinary case in the others (the cells it has none in are empty and cannot be selected). A
caller cell shows the step its first failed run failed at and the funnel of its runs
(:mod:`app.test_cases.caller_cells`); a caller column's tool tip gives that caller model's rates
over all its cases.

Results arrive in batches (:meth:`MatrixTableModel.add_results`), each batch one ``dataChanged``.
The summary of one cell is :func:`summarize` (:mod:`app.test_cases.matrix_cells`), tested
without any widget.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QAbstractTableModel, QModelIndex, QObject, QPersistentModelIndex, Qt
from PySide6.QtGui import QBrush, QColor, QFont, QGuiApplication, QPalette

from app.test_cases.caller_cells import CallerCellSummary, rates_text, summarize_caller
from app.test_cases.matrix_cells import (
    Cell,
    CellSummary,
    Change,
    format_ms,
    shown_result,
    summarize,
)
from app.tool_editor.highlighter import is_dark
from mcp_export.costs.prices import PriceTable
from mcp_export.redact import redact

if TYPE_CHECKING:
    from mcp_export.testing.case import CaseResult

__all__ = [
    "CALLER_PREFIX",
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
CASE_COLUMN = 0
CELL_ROLE = Qt.ItemDataRole.UserRole + 1
"""The cell's ``(tool, case, model)`` (None in the case column)."""
CALLER_PREFIX = "caller · "
"""How a caller model's column header starts (``caller · openai:gpt-4.1``)."""

# Text colours per theme (light, dark): each reads on its own theme's base and on the tints.
_PASS_COLOURS = (QColor("#2e7d32"), QColor("#8fd694"))
_FAIL_COLOURS = (QColor("#c62828"), QColor("#ff9c94"))
# Translucent tints: they read on a light and on a dark base alike.
_PASS_TINT = QColor(46, 125, 50, 38)
_FAIL_TINT = QColor(198, 40, 40, 46)
_REGRESSED_TINT = QColor(198, 40, 40, 90)


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
        self._caller_models: list[str] = []
        self._callers: set[tuple[str, str]] = set()
        self._repeat = 1
        self._rows: list[int] = []  # shown row → index into _cases
        self._case_row: dict[tuple[str, str], int] = {}
        self._results: dict[Cell, list[CaseResult]] = {}
        self._summaries: dict[Cell, CellSummary] = {}
        self._changes: dict[Cell, Change] = {}
        self._prices = PriceTable()

    # -- contents ---------------------------------------------------------------------------

    def reset(
        self,
        cases: Sequence[tuple[str, str]],
        models: Sequence[str],
        repeat: int,
        *,
        caller_models: Sequence[str] = (),
        caller_cases: Sequence[tuple[str, str]] = (),
        prices: PriceTable | None = None,
    ) -> None:
        """Start over with empty cells for ``cases`` × ``models``; the ``caller_cases`` among
        them get cells for ``caller_models`` instead; ``prices`` reckon the cells' costs."""
        self.beginResetModel()
        self._prices = prices or PriceTable()
        self._cases = list(cases)
        self._models = list(models)
        self._callers = set(caller_cases) & set(self._cases)
        self._caller_models = list(caller_models) if self._callers else []
        self._repeat = max(1, repeat)
        self._rows = list(range(len(self._cases)))
        self._case_row = {case: row for row, case in enumerate(self._cases)}
        self._results = {}
        self._summaries = {}
        self._changes = {}
        self.endResetModel()

    def _summarize(self, cell: Cell, results: Sequence[CaseResult]) -> CellSummary:
        change = self._changes.get(cell)
        if cell[:2] in self._callers:
            return summarize_caller(results, self._repeat, change)
        return summarize(results, self._repeat, change)

    def add_results(self, results: Sequence[CaseResult]) -> None:
        """Put finished runs into their cells (one ``dataChanged`` for the batch)."""
        touched: set[Cell] = set()
        for result in results:
            cell = (result.tool, result.case, result.model)
            if self._column_of(cell) is None:
                continue
            self._results.setdefault(cell, []).append(result)
            touched.add(cell)
        for cell in touched:
            self._summaries[cell] = self._summarize(cell, self._results[cell])
        if touched:
            shown = {source: row for row, source in enumerate(self._rows)}
            rows = [shown[self._case_row[cell[:2]]] for cell in touched]
            columns = [self._column_of(cell) or 0 for cell in touched]
            self.dataChanged.emit(
                self.index(min(rows), min(columns)), self.index(max(rows), max(columns))
            )
        if touched & {c for c in touched if c[:2] in self._callers}:
            first = len(self._models) + 1
            self.headerDataChanged.emit(Qt.Orientation.Horizontal, first, self.columnCount() - 1)

    def set_changes(self, changes: dict[Cell, Change]) -> None:
        """Mark regressions and fixes and order the rows: regressions, failures, fixes, the rest."""
        self._changes = dict(changes)
        for cell, results in self._results.items():
            self._summaries[cell] = self._summarize(cell, results)

        def rank(source: int) -> int:
            tool, case = self._cases[source]
            found = [self._summaries.get((tool, case, m)) for m in self._columns_of(tool, case)]
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
        if self._rows and self.columnCount() > 1:
            self.dataChanged.emit(
                self.index(0, 1), self.index(len(self._rows) - 1, self.columnCount() - 1)
            )

    # -- reading ----------------------------------------------------------------------------

    @property
    def models(self) -> list[str]:
        """The served models' columns, in order."""
        return list(self._models)

    @property
    def caller_models(self) -> list[str]:
        """The caller models' columns, in order (after the served models')."""
        return list(self._caller_models)

    def is_caller_case(self, tool: str, case: str) -> bool:
        """Whether the row ``(tool, case)`` is a caller case (its cells are caller models')."""
        return (tool, case) in self._callers

    def _columns_of(self, tool: str, case: str) -> list[str]:
        return self._caller_models if (tool, case) in self._callers else self._models

    def _column_of(self, cell: Cell) -> int | None:
        """The column of ``cell`` (None when its case has no cell for that model)."""
        tool, case, model = cell
        if (tool, case) not in self._case_row:
            return None
        if (tool, case) in self._callers:
            if model not in self._caller_models:
                return None
            return len(self._models) + 1 + self._caller_models.index(model)
        return self._models.index(model) + 1 if model in self._models else None

    def cases(self) -> list[tuple[str, str]]:
        """The ``(tool, case)`` rows, top to bottom as shown."""
        return [self._cases[source] for source in self._rows]

    def cell_at(self, row: int, column: int) -> Cell | None:
        """The cell shown at ``row``, ``column`` (None for the case column, out of range, or
        where the row's case has no cell: a caller case under a served model, or the reverse)."""
        if not 0 <= row < len(self._rows) or not 1 <= column < self.columnCount():
            return None
        tool, case = self._cases[self._rows[row]]
        served = column <= len(self._models)
        if served == ((tool, case) in self._callers):
            return None
        model = (
            self._models[column - 1]
            if served
            else self._caller_models[column - 1 - len(self._models)]
        )
        return (tool, case, model)

    def index_of(self, cell: Cell) -> QModelIndex:
        """Where ``cell`` is shown (invalid when it is not in the table)."""
        column = self._column_of(cell)
        if column is None:
            return QModelIndex()
        return self.index(self._rows.index(self._case_row[cell[:2]]), column)

    def results(self, cell: Cell) -> list[CaseResult]:
        """The finished runs of ``cell``, by attempt."""
        return sorted(self._results.get(cell, []), key=lambda r: r.attempt)

    def summary(self, cell: Cell) -> CellSummary:
        """What ``cell`` shows."""
        found = self._summaries.get(cell)
        return found if found is not None else self._summarize(cell, [])

    def change(self, cell: Cell) -> Change | None:
        """The cell's comparison with the run before, once made."""
        return self._changes.get(cell)

    def caller_rates(self, model: str) -> str:
        """The caller model ``model``'s rates over its caller cases' runs so far, in words
        ("" before any)."""
        from mcp_export.testing.callers.rates import rates_of

        runs = [
            r
            for cell, found in self._results.items()
            if cell[2] == model and cell[:2] in self._callers
            for r in found
        ]
        return rates_text(rates_of(model, runs)) if runs else ""

    # -- Qt ---------------------------------------------------------------------------------

    def rowCount(self, parent: AnyIndex | None = None) -> int:
        return 0 if parent is not None and parent.isValid() else len(self._rows)

    def columnCount(self, parent: AnyIndex | None = None) -> int:
        if parent is not None and parent.isValid():
            return 0
        return len(self._models) + len(self._caller_models) + 1

    def flags(self, index: AnyIndex) -> Qt.ItemFlag:
        off = index.isValid() and index.column() != CASE_COLUMN
        if off and self.cell_at(index.row(), index.column()) is None:
            return Qt.ItemFlag.NoItemFlags
        return super().flags(index)

    def headerData(
        self, section: int, orientation: Qt.Orientation, role: int = Qt.ItemDataRole.DisplayRole
    ) -> Any:
        if orientation != Qt.Orientation.Horizontal or not 0 <= section < self.columnCount():
            return None
        caller = section > len(self._models)
        model = (
            ""
            if section == CASE_COLUMN
            else self._caller_models[section - 1 - len(self._models)]
            if caller
            else self._models[section - 1]
        )
        if role == Qt.ItemDataRole.DisplayRole:
            if section == CASE_COLUMN:
                return "Case"
            return f"{CALLER_PREFIX}{model}" if caller else model
        if role == Qt.ItemDataRole.ToolTipRole and section > CASE_COLUMN:
            return self._caller_tip(model) if caller else self._column_tip(model)
        return None

    def _column_tip(self, model: str) -> str:
        cells = [
            self.summary((tool, case, model))
            for tool, case in self._cases
            if (tool, case) not in self._callers
        ]
        done = [s for s in cells if s.runs]
        passed = sum(1 for s in done if not s.failed)
        tip = f"{model}: {passed} of {len(done)} cases passed every run"
        runs = [
            r
            for (tool, case, m), results in self._results.items()
            if m == model and (tool, case) not in self._callers
            for r in results
        ]
        return f"{tip}\n{self._cost_line(runs)}" if runs else tip

    def _cost_line(self, results: Sequence[CaseResult]) -> str:
        """``Cost: $0.00008 a call, $0.008 per 100 calls (…)``, or why it is unknown."""
        from mcp_export.testing.cost import cell_cost  # loaded with the runs it reckons

        cost = cell_cost(self._prices, results)
        if cost.per_call.usd is None:
            return f"Cost unknown: {cost.total.why}"
        line = f"Cost: {cost.per_call.text()} a call, {cost.per_100.text()} per 100 calls"
        return f"{line} ({cost.total.why})" if cost.total.at_least else line

    def _caller_tip(self, model: str) -> str:
        rates = self.caller_rates(model)
        head = (
            f"Caller model {model}: it gets each caller case's request with the tool list a "
            "client sees; the call it makes is served by "
            + (self._models[0] if self._models else "the agent's model")
        )
        return f"{head}\n{rates}" if rates else head

    def data(self, index: AnyIndex, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if not index.isValid() or not 0 <= index.row() < len(self._rows):
            return None
        if index.column() == CASE_COLUMN:
            tool, case = self._cases[self._rows[index.row()]]
            if role == Qt.ItemDataRole.DisplayRole:
                return f"{tool} / {case}"
            if role == Qt.ItemDataRole.ToolTipRole:
                kind = (
                    " (a caller case: a request in words)" if (tool, case) in self._callers else ""
                )
                return f"{tool} / {case}{kind}"
            return None
        cell = self.cell_at(index.row(), index.column())
        if cell is None:
            if role == Qt.ItemDataRole.ToolTipRole:
                tool, case = self._cases[self._rows[index.row()]]
                if (tool, case) in self._callers:
                    return "A caller case runs on the caller models' columns"
                return "An ordinary case runs on the served models' columns, not on a caller's"
            if role == Qt.ItemDataRole.BackgroundRole:
                return QBrush(QGuiApplication.palette().color(QPalette.ColorRole.Window))
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
        caller = isinstance(summary, CallerCellSummary)
        lines = [f"{tool} / {case} on {'caller model ' if caller else ''}{model}"]
        if summary.change is not None:
            lines.append(f"Compared with the run before: {summary.change}")
        if isinstance(summary, CallerCellSummary) and summary.runs:
            lines.append(summary.tip())
        seen: list[str] = []
        for result in self.results(cell):
            for failure in result.failures:
                text = redact(str(failure))
                if text not in seen:
                    seen.append(text)
        lines.extend(seen[:5])
        if summary.runs and summary.tokens is None:
            lines.append("Tokens —: the model server did not report them")
        if summary.runs:
            lines.append(self._cost_line(self.results(cell)))
        return "\n".join(lines)
