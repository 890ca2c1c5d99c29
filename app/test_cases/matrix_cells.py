"""What one cell of the matrix shows, computed from its runs: tested without any widget.

A cell is one case on one model (:data:`Cell`); :func:`summarize` makes its
:class:`CellSummary` (pass count over runs, the first failed expectation, the slowest time, the
tokens, the comparison with the run before); :func:`shown_result` picks the run it stands for.
A caller case's cell is summarized in :mod:`app.test_cases.caller_cells`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

if TYPE_CHECKING:
    from mcp_export.testing.case import CaseResult

__all__ = [
    "Cell",
    "CellSummary",
    "Change",
    "format_ms",
    "shown_result",
    "summarize",
    "total_tokens",
]

Cell = tuple[str, str, str]
"""(tool, case, model), as ``mcp_export.testing.record`` names a cell."""
Change = Literal["regressed", "fixed", "new", "same"]


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

    def outcome(self, failure: str | None) -> str:
        """The first line: passed over finished runs (of how many), the change from the run
        before, and ``failure`` (what failed first), e.g. ``✘ 1/3 ▼ regressed · contains[0]``."""
        mark = "✘" if self.failed else "✔"
        first = f"{mark} {self.passed}/{self.runs}"
        if self.runs < self.expected:
            first += f" of {self.expected}"
        if self.change == "regressed":
            first += " ▼ regressed"
        elif self.change == "fixed":
            first += " ▲ fixed"
        if failure:
            first += f" · {failure}"
        return first

    def text(self) -> str:
        """Two lines: the outcome, then time and tokens."""
        if self.runs == 0:
            return "…"
        tokens = "— tokens" if self.tokens is None else f"{self.tokens} tokens"
        return f"{self.outcome(self.first_failure)}\n{format_ms(self.slowest_ms)} · {tokens}"


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
    return CellSummary(
        runs=len(ordered),
        expected=expected,
        passed=sum(r.passed for r in ordered),
        first_failure=failure,
        slowest_ms=max((r.outcome.duration_ms for r in ordered), default=None),
        tokens=total_tokens(ordered),
        change=change,
    )


def total_tokens(results: Sequence[CaseResult]) -> int | None:
    """Tokens in and out over ``results``; None when there are none or a model server did not
    report them for one (unknown, not 0)."""
    counts = [(r.outcome.input_tokens, r.outcome.output_tokens) for r in results]
    known = all(i is not None and o is not None for i, o in counts)
    return sum((i or 0) + (o or 0) for i, o in counts) if known and counts else None


def shown_result(results: Sequence[CaseResult]) -> CaseResult | None:
    """The run a cell stands for: its first failed run, else its first run."""
    ordered = sorted(results, key=lambda r: r.attempt)
    return next((r for r in ordered if not r.passed), ordered[0] if ordered else None)
