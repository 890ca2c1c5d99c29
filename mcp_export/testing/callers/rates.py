"""Rates of caller cases per caller model, and the pick rate before and after a description edit.

Every rate counts over all runs of the caller cases (cases × repeats) of one caller model, so
the figures read as a funnel: of n runs, k picked right, of which some filled valid arguments,
some the arguments the case expects, and some got an answer that passed. ``picks: none`` cases
count as picked right when the caller left our tools alone.

A caller case's run records the description its tool was offered with (History, ``caller``
column). When the description now differs from the one of the case's last recorded run, the
report shows the pick rate of that run beside this one's (:func:`pick_rate_changes`).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from mcp_export.testing.callers.runner import CallerResult
from mcp_export.testing.case import CaseResult

__all__ = [
    "CallerRates",
    "PickChange",
    "caller_rates",
    "left_recording",
    "pick_rate_changes",
    "rates_of",
]


def left_recording(result: CaseResult) -> bool:
    """Whether ``result`` is a replayed run that never reached its caller: the request it would
    send differs from its recording, or there is none (``testing.replay.callers``). Such a run
    says nothing of how the caller picks, so rates and pick changes leave it out."""
    return bool(result.failures) and result.failures[0].expectation == "replay"


@dataclass(frozen=True)
class CallerRates:
    """The funnel of one caller model over its caller case runs.

    Attributes:
        model: the caller model.
        runs: how many runs (n).
        picked: runs that called the expected tool (or, for ``picks: none``, none of ours).
        wrong_tool: runs that called other tools instead.
        wrong_tools: which tools those were, and how often each was called.
        no_call: runs where the caller called no tool.
        caller_failed: runs where the caller's request failed.
        arguments_valid: runs whose call of our tool passed its schema.
        arguments_expected: runs whose arguments held the case's ``expect.arguments`` (a case
            without it counts when its arguments were valid).
        answer_passed: runs that passed every step (served answer included).
        left_recording: replayed runs that left their recording (:func:`left_recording`),
            counted in none of the above.
    """

    model: str
    runs: int = 0
    picked: int = 0
    wrong_tool: int = 0
    wrong_tools: Mapping[str, int] = field(default_factory=lambda: dict[str, int]())
    no_call: int = 0
    caller_failed: int = 0
    arguments_valid: int = 0
    arguments_expected: int = 0
    answer_passed: int = 0
    left_recording: int = 0

    def as_json(self) -> dict[str, Any]:
        """The JSON form (camelCase, as the reports write it)."""
        return {
            "model": self.model,
            "runs": self.runs,
            "picked": self.picked,
            "wrongTool": self.wrong_tool,
            "wrongTools": dict(self.wrong_tools),
            "noCall": self.no_call,
            "callerFailed": self.caller_failed,
            "argumentsValid": self.arguments_valid,
            "argumentsExpected": self.arguments_expected,
            "answerPassed": self.answer_passed,
            "leftRecording": self.left_recording,
        }


def rates_of(model: str, results: Iterable[CaseResult]) -> CallerRates:
    """The rates of ``model`` over the caller results among ``results``."""
    runs = picked = wrong = no_call = failed = valid = expected = passed = left = 0
    others: Counter[str] = Counter()
    for result in results:
        if not isinstance(result, CallerResult) or result.model != model:
            continue
        if left_recording(result):
            left += 1
            continue
        runs += 1
        pick = result.pick
        if result.step == "caller" or pick is None:
            failed += 1
            continue
        if result.step == "no call":
            no_call += 1
        elif result.step == "wrong tool":
            wrong += 1
            others.update(name for name in dict.fromkeys(pick.picked))
        if pick.picked_right:
            picked += 1
        if pick.arguments_valid:
            valid += 1
        if pick.picked_right and result.step not in ("invalid arguments", "unexpected arguments"):
            expected += 1
        passed += result.passed
    return CallerRates(
        model=model,
        runs=runs,
        picked=picked,
        wrong_tool=wrong,
        wrong_tools=dict(others.most_common()),
        no_call=no_call,
        caller_failed=failed,
        arguments_valid=valid,
        arguments_expected=expected,
        answer_passed=passed,
        left_recording=left,
    )


def caller_rates(results: Iterable[CaseResult], models: Iterable[str]) -> list[CallerRates]:
    """The rates of each caller model, in the order given."""
    kept = list(results)
    return [rates_of(model, kept) for model in models]


@dataclass(frozen=True)
class PickChange:
    """The pick rate of one caller cell before and after its tool's description changed.

    Attributes:
        tool: the tool.
        case: the caller case.
        model: the caller model.
        before: (picked, runs) in the case's last recorded run.
        after: (picked, runs) now.
        description_before: the description offered then.
        description_after: the description offered now.
    """

    tool: str
    case: str
    model: str
    before: tuple[int, int]
    after: tuple[int, int]
    description_before: str
    description_after: str

    def as_json(self) -> dict[str, Any]:
        """The JSON form."""
        return {
            "tool": self.tool,
            "case": self.case,
            "model": self.model,
            "pickedBefore": list(self.before),
            "pickedAfter": list(self.after),
            "descriptionBefore": self.description_before,
            "descriptionAfter": self.description_after,
        }


def pick_rate_changes(
    results: Iterable[CaseResult], earlier: Iterable[tuple[str, str, str, dict[str, Any]]]
) -> list[PickChange]:
    """The caller cells whose tool description differs from their last earlier run's.

    Args:
        results: this run's results.
        earlier: the rows of that last earlier run of each cell, as ``(tool, case, model,
            caller)`` with ``caller`` the recorded JSON (``description``, ``picked``).

    Runs that left their recording (now, or ``leftRecording`` then) count on neither side.

    Returns:
        One change per cell whose description differs, in the order of ``results``.
    """
    now: dict[tuple[str, str, str], list[CallerResult]] = {}
    for result in results:
        if isinstance(result, CallerResult) and not left_recording(result):
            now.setdefault((result.tool, result.case, result.model), []).append(result)
    before: dict[tuple[str, str, str], list[dict[str, Any]]] = {}
    for tool, case, model, caller in earlier:
        if caller.get("leftRecording"):
            continue
        before.setdefault((tool, case, model), []).append(caller)
    changes: list[PickChange] = []
    for key, runs in now.items():
        then = before.get(key)
        if not then:
            continue
        old = str(then[0].get("description", ""))
        new = runs[0].description
        if old == new:
            continue
        picked_then = sum(bool(row.get("pickedRight")) for row in then)
        picked_now = sum(r.pick is not None and r.pick.picked_right for r in runs)
        changes.append(
            PickChange(*key, (picked_then, len(then)), (picked_now, len(runs)), old, new)
        )
    return changes
