"""A caller case's cell in the matrix: the step that failed, and the rates over its runs.

A caller case runs once per caller model (the column) and repeat; each run is a ``CallerResult``
of ``mcp_export.testing.callers`` naming the first step that failed (:data:`STEP_WORDS`). A cell
shows the outcome with that step in words (``✘ 1/3 · other tool: book_hotel``) and, on its second
line, the runs' funnel as the runtime counts it (``rates_of``): picked right, arguments valid
and as expected, answer passed (``picked 2/3 · args 1/3 · answer 1/3``). :func:`rates_text`
says the same for a whole column (a caller model over all its caller cases), in full words.

The runtime's modules are loaded by the time a result exists, so they are imported where they
are used, never with the studio's start.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from app.test_cases.matrix_cells import CellSummary, Change, format_ms, total_tokens

if TYPE_CHECKING:
    from mcp_export.testing.callers.rates import CallerRates
    from mcp_export.testing.callers.runner import CallerResult
    from mcp_export.testing.case import CaseResult

__all__ = [
    "STEP_WORDS",
    "CallerCellSummary",
    "caller_result",
    "rates_text",
    "step_text",
    "summarize_caller",
]

STEP_WORDS = {
    "caller": "caller failed",
    "no call": "no call",
    "wrong tool": "other tool",
    "unwanted call": "unwanted call",
    "invalid arguments": "invalid arguments",
    "unexpected arguments": "arguments not as expected",
    "answer": "answer",
}
"""Each step of ``mcp_export.testing.callers.steps`` as a cell says it."""


def caller_result(result: CaseResult) -> CallerResult | None:
    """``result`` when it is a caller case's run, else None."""
    from mcp_export.testing.callers.runner import CallerResult

    return result if isinstance(result, CallerResult) else None


def step_text(result: CaseResult) -> str | None:
    """The step a caller run failed at, in words, with what it names (``other tool:
    book_hotel``, ``answer: contains[0]``), or that its replay left the recording (``replay
    differs``, ``not recorded``); None when it passed or is no caller run."""
    caller = caller_result(result)
    if caller is None or caller.step is None:
        return None
    from mcp_export.testing.callers.rates import left_recording

    if left_recording(caller):  # not the caller's doing
        first = caller.failures[0]
        return "not recorded" if first.message.startswith("no recording at") else "replay differs"
    words = STEP_WORDS.get(caller.step, caller.step)
    picked = list(dict.fromkeys(caller.pick.picked)) if caller.pick is not None else []
    if caller.step in ("wrong tool", "unwanted call") and picked:
        return f"{words}: {', '.join(picked)}"
    if caller.step == "answer" and caller.failures:
        return f"{words}: {caller.failures[0].expectation}"
    return words


@dataclass(frozen=True)
class CallerCellSummary(CellSummary):
    """What a caller case's cell shows: a cell summary with the step and the funnel.

    Attributes:
        step: the step its first failed run failed at, in words (None: none failed).
        picked: runs whose caller called the expected tool (or, for ``picks: none``, none of
            ours).
        valid: runs whose call of our tool had arguments its schema takes.
        as_expected: runs whose arguments held the case's ``arguments`` (valid ones, when it
            sets none).
        counted: runs the funnel counts: all but replays that left their recording (None:
            all of them).
    """

    step: str | None = None
    picked: int = 0
    valid: int = 0
    as_expected: int = 0
    counted: int | None = None

    def text(self) -> str:
        """Two lines: the outcome and the failed step, then the funnel."""
        if self.runs == 0:
            return "…"
        first = self.outcome(self.step)
        n = self.runs if self.counted is None else self.counted
        if not n:
            return f"{first}\nnot replayed: re-record it"
        funnel = (
            f"picked {self.picked}/{n} · args {self.as_expected}/{n} · answer {self.passed}/{n}"
        )
        return f"{first}\n{funnel}"

    def tip(self) -> str:
        """The funnel in full words, and the slowest run's time."""
        n = self.runs if self.counted is None else self.counted
        if not n:
            return "The replay left its recording: no run reached the caller (Re-record it)."
        return (
            f"Picked the expected tool {self.picked}/{n} · arguments valid {self.valid}/{n} · "
            f"as expected {self.as_expected}/{n} · answer passed {self.passed}/{n} · slowest "
            f"{format_ms(self.slowest_ms)}"
        )


def summarize_caller(
    results: Sequence[CaseResult], expected: int, change: Change | None = None
) -> CallerCellSummary:
    """The summary of one caller cell's runs (any order)."""
    from mcp_export.testing.callers.rates import rates_of

    ordered = sorted(results, key=lambda r: r.attempt)
    model = ordered[0].model if ordered else ""
    rates = rates_of(model, ordered)
    failed = next((r for r in ordered if not r.passed), None)
    return CallerCellSummary(
        runs=len(ordered),
        expected=expected,
        passed=sum(r.passed for r in ordered),
        first_failure=failed.failures[0].expectation if failed and failed.failures else None,
        slowest_ms=max((r.outcome.duration_ms for r in ordered), default=None),
        tokens=total_tokens(ordered),
        change=change,
        step=step_text(failed) if failed is not None else None,
        picked=rates.picked,
        valid=rates.arguments_valid,
        counted=rates.runs,
        as_expected=rates.arguments_expected,
    )


def rates_text(rates: CallerRates) -> str:
    """A caller model's rates over its caller case runs, in full words."""
    n = rates.runs
    parts = [f"picked right {rates.picked}/{n}"]
    if rates.wrong_tool:
        which = ", ".join(f"{name} ×{count}" for name, count in rates.wrong_tools.items())
        parts.append(f"wrong tool {rates.wrong_tool} ({which})")
    if rates.no_call:
        parts.append(f"no call {rates.no_call}")
    if rates.caller_failed:
        parts.append(f"caller failed {rates.caller_failed}")
    if rates.left_recording:
        parts.append(f"{rates.left_recording} replayed left the recording (not counted)")
    parts += [
        f"arguments valid {rates.arguments_valid}/{n}",
        f"as expected {rates.arguments_expected}/{n}",
        f"answer passed {rates.answer_passed}/{n}",
    ]
    return " · ".join(parts)
