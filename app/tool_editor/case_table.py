# ruff: noqa: N802  (Qt virtual method names are camelCase)
"""The Tests panel's table: a tool's test cases, what each expects, and its last result per model.

:func:`latest_results` reads the history's ``case_runs`` rows of an agent (newest first, as
``HistoryStore.case_runs`` gives them) into the last result of each case on each model: the rows
of the latest matrix run that has that cell, which passes when every repeat in it passed.
:func:`expectations_summary` says in a few words what a case checks. :class:`CaseTableModel`
adapts the tool's cases and those results: column 0 is the case's name, column 1 its
expectations, then a column per model that has run any of the tool's cases (one "Last run"
column while none has); it holds nothing else and is tested without a view.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QAbstractTableModel, QModelIndex, QObject, QPersistentModelIndex, Qt
from PySide6.QtGui import QColor, QPalette

from app.tool_editor.highlighter import is_dark
from mcp_export.costs.cost import format_usd
from schema_types.cases import Expectations, TestCase

if TYPE_CHECKING:
    from mcp_export.history.schema import CaseRunRecord

__all__ = [
    "CASE_COLUMN",
    "EXPECT_COLUMN",
    "CaseTableModel",
    "LastResult",
    "case_summary",
    "expectations_summary",
    "latest_results",
    "when_text",
]

CASE_COLUMN = 0
EXPECT_COLUMN = 1
_ROOT = QModelIndex()

# (passed, failed) text colours, readable on a light and on a dark background.
_LIGHT = (QColor("#2e7d32"), QColor("#c62828"))
_DARK = (QColor("#7ee787"), QColor("#ff8a80"))


@dataclass(frozen=True)
class LastResult:
    """The last run of one case on one model.

    Attributes:
        passed: every repeat of that run passed.
        passes: how many repeats passed.
        runs: how many repeats there were.
        at: when it ran (the last repeat's time, UTC).
        failures: the failed expectations of its first failed repeat (``"contains[0]: …"``).
    """

    passed: bool
    passes: int
    runs: int
    at: datetime
    failures: tuple[str, ...]


def latest_results(
    rows: Iterable[CaseRunRecord], tool_name: str
) -> dict[tuple[str, str], LastResult]:
    """The last result of each ``(case, model)`` of ``tool_name`` in ``rows`` (newest first)."""
    latest: dict[tuple[str, str], str] = {}  # cell → the matrix run it was last in
    found: dict[tuple[str, str], list[CaseRunRecord]] = {}
    for row in rows:
        if row.tool_name != tool_name:
            continue
        cell = (row.case_name, row.model)
        if latest.setdefault(cell, row.matrix_id) == row.matrix_id:
            found.setdefault(cell, []).append(row)
    results: dict[tuple[str, str], LastResult] = {}
    for cell, runs in found.items():
        failed = sorted((r for r in runs if not r.passed), key=lambda r: r.attempt)
        results[cell] = LastResult(
            passed=not failed,
            passes=len(runs) - len(failed),
            runs=len(runs),
            at=max(r.created_at for r in runs),
            failures=tuple(failed[0].failures) if failed else (),
        )
    return results


def when_text(at: datetime, now: datetime | None = None) -> str:
    """How long ago ``at`` was, in a few characters (``just now``, ``5 min ago``, ``3 h ago``)."""
    now = now or datetime.now(UTC)
    seconds = (now - at).total_seconds()
    if seconds < 60:
        return "just now"
    if seconds < 3600:
        return f"{int(seconds // 60)} min ago"
    if seconds < 86400:
        return f"{int(seconds // 3600)} h ago"
    days = int(seconds // 86400)
    if days < 7:
        return "yesterday" if days == 1 else f"{days} days ago"
    return at.astimezone().strftime("%Y-%m-%d")


def _quoted(text: str, limit: int = 24) -> str:
    text = " ".join(text.split())
    return f"“{text if len(text) <= limit else text[: limit - 1] + '…'}”"


def _pattern(pattern: str, limit: int | None) -> str:
    if limit is None or len(pattern) <= limit:
        return f"/{pattern}/"
    return f"/{pattern[: limit - 1]}…/"


def expectations_summary(expect: Expectations, *, whole: bool = False) -> str:
    """A few words per expectation the case sets (``contains “TP1351” · ≤ 4 turns``); "call
    succeeds" when it sets none. A long pattern shows its start (``whole``: all of it, as the
    cell's tool tip does)."""
    parts: list[str] = []
    if expect.picks is not None:
        parts.append(f"picks {expect.picks}")
    if expect.arguments:
        parts.append("fills " + ", ".join(expect.arguments))
    if expect.contains:
        first = _quoted(expect.contains[0])
        more = f" +{len(expect.contains) - 1}" if len(expect.contains) > 1 else ""
        parts.append(f"contains {first}{more}")
    if expect.not_contains:
        parts.append(
            f"not {_quoted(expect.not_contains[0])}" + "…" * (len(expect.not_contains) > 1)
        )
    if expect.matches is not None:
        parts.append(f"matches {_pattern(expect.matches, None if whole else 24)}")
    if expect.json_schema is not None:
        parts.append("JSON schema")
    if expect.tool_calls:
        names = [call if isinstance(call, str) else call.name for call in expect.tool_calls]
        parts.append("calls " + ", ".join(names))
    if expect.max_tool_calls is not None:
        parts.append(f"≤ {expect.max_tool_calls} tool calls")
    if expect.max_turns is not None:
        parts.append(f"≤ {expect.max_turns} turns")
    if expect.max_duration_ms is not None:
        parts.append(f"≤ {expect.max_duration_ms / 1000:g} s")
    if expect.max_cost is not None:
        parts.append(f"≤ {format_usd(expect.max_cost)}")
    if expect.judge:
        parts.append("judge")
    if expect.is_error:
        parts.append("call fails")
    return " · ".join(parts) or "call succeeds"


def case_summary(case: TestCase, tool_name: str, *, whole: bool = False) -> str:
    """What the Expects column says of ``case``: :func:`expectations_summary`, after the request
    of a caller case and the tool its caller must pick (``“Book me a…” → picks book_flight ·
    fills destination``)."""
    summary = expectations_summary(case.expect, whole=whole)
    if case.ask is None:
        return summary
    request = f"“{' '.join(case.ask.split())}”" if whole else _quoted(case.ask, 32)
    if case.expect.picks is None:
        summary = f"picks {tool_name} · {summary}"
    return f"{request} → {summary.removesuffix(' · call succeeds')}"


def _result_text(result: LastResult, now: datetime | None) -> str:
    mark = "✓" if result.passed else "✗"
    outcome = (
        f"{result.passes}/{result.runs}"
        if result.runs > 1
        else ("passed" if result.passed else "failed")
    )
    return f"{mark} {outcome} · {when_text(result.at, now)}"


def _result_tip(model: str, result: LastResult) -> str:
    when = result.at.astimezone().strftime("%Y-%m-%d %H:%M")
    head = f"{'Passed' if result.passed else 'Failed'} on {model}, {when}"
    if result.runs > 1:
        head += f" ({result.passes} of {result.runs} runs passed)"
    return "\n".join([head, *result.failures])


class CaseTableModel(QAbstractTableModel):
    """The cases of one tool with their expectations and last results.

    Args:
        parent: the owning object.
    """

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._cases: list[TestCase] = []
        self._results: dict[tuple[str, str], LastResult] = {}
        self._models: list[str] = []
        self._palette = QPalette()
        self._tool_name = ""
        self.now: datetime | None = None
        """The time "ago" is counted from (None: the clock)."""

    # -- what it shows ---------------------------------------------------------------------

    def set_cases(self, cases: Sequence[TestCase], tool_name: str = "") -> None:
        """Show these cases (the tool ``tool_name``'s ``tests`` now)."""
        cases = list(cases)
        if tool_name != self._tool_name:
            self.beginResetModel()
            self._cases, self._tool_name = cases, tool_name
            self.endResetModel()
        elif len(cases) == len(self._cases):
            changed = [i for i, (a, b) in enumerate(zip(cases, self._cases, strict=True)) if a != b]
            self._cases = cases
            if changed:
                last = self.columnCount() - 1
                self.dataChanged.emit(self.index(changed[0], 0), self.index(changed[-1], last))
        else:
            self.beginResetModel()
            self._cases = cases
            self.endResetModel()

    def set_results(self, results: dict[tuple[str, str], LastResult]) -> None:
        """Show these last results (from :func:`latest_results`)."""
        self.beginResetModel()
        self._results = dict(results)
        self._models = sorted({model for _case, model in results})
        self.endResetModel()

    def set_palette(self, palette: QPalette) -> None:
        """Colour passes and failures for ``palette`` (light or dark)."""
        self._palette = QPalette(palette)
        if self._cases and self._models:
            last = self.columnCount() - 1
            self.dataChanged.emit(self.index(0, 2), self.index(len(self._cases) - 1, last))

    def cases(self) -> list[TestCase]:
        """The cases shown, in order."""
        return list(self._cases)

    def models(self) -> list[str]:
        """The models that have a column (those that ran any of the cases)."""
        return list(self._models)

    def result(self, case_name: str, model: str) -> LastResult | None:
        """The last result of a case on a model, or None when it has not run there."""
        return self._results.get((case_name, model))

    def row_of(self, case_name: str) -> int | None:
        """The row of the case named ``case_name``."""
        return next((i for i, case in enumerate(self._cases) if case.name == case_name), None)

    # -- Qt ---------------------------------------------------------------------------------

    def rowCount(self, parent: QModelIndex | QPersistentModelIndex = _ROOT) -> int:
        return 0 if parent.isValid() else len(self._cases)

    def columnCount(self, parent: QModelIndex | QPersistentModelIndex = _ROOT) -> int:
        return 0 if parent.isValid() else 2 + max(1, len(self._models))

    def headerData(self, section: int, orientation: Qt.Orientation, role: int = 0) -> Any:
        if orientation != Qt.Orientation.Horizontal:
            return None
        if role == Qt.ItemDataRole.DisplayRole:
            if section == CASE_COLUMN:
                return "Case"
            if section == EXPECT_COLUMN:
                return "Expects"
            return self._models[section - 2] if self._models else "Last run"
        if role == Qt.ItemDataRole.ToolTipRole and section >= 2:
            return "The last run of each case on this model" if self._models else None
        return None

    def data(self, index: QModelIndex | QPersistentModelIndex, role: int = 0) -> Any:
        if not index.isValid() or index.row() >= len(self._cases):
            return None
        case, column = self._cases[index.row()], index.column()
        if column == CASE_COLUMN:
            return (
                case.name
                if role in (Qt.ItemDataRole.DisplayRole, Qt.ItemDataRole.EditRole)
                else None
            )
        if column == EXPECT_COLUMN:
            if role == Qt.ItemDataRole.DisplayRole:
                return case_summary(case, self._tool_name)
            if role == Qt.ItemDataRole.ToolTipRole:
                return case_summary(case, self._tool_name, whole=True)
            return None
        if not self._models:
            if role == Qt.ItemDataRole.DisplayRole:
                return "not run yet"
            if role == Qt.ItemDataRole.ForegroundRole:
                return self._palette.color(QPalette.ColorGroup.Disabled, QPalette.ColorRole.Text)
            return None
        model = self._models[column - 2]
        result = self._results.get((case.name, model))
        if role == Qt.ItemDataRole.DisplayRole:
            return _result_text(result, self.now) if result is not None else "—"
        if role == Qt.ItemDataRole.ToolTipRole:
            return _result_tip(model, result) if result is not None else f"Not run on {model}"
        if role == Qt.ItemDataRole.ForegroundRole and result is not None:
            passed, failed = _DARK if is_dark(self._palette) else _LIGHT
            return passed if result.passed else failed
        return None
