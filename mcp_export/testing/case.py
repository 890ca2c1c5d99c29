"""One run of one test case: a ``tools/call`` of the agent's server, checked, then judged.

:func:`run_case` is the case path every runner shares (ordinary cases, and the served call of a
caller case in ``testing.callers``): the call exactly as a client makes it, the expectations
checked off the event loop's thread, the judge asked last.
"""

from __future__ import annotations

import json
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from functools import partial

import anyio
from mcp import Client

from mcp_export.errors import ExportError
from mcp_export.providers.base import Provider
from mcp_export.testing.expect import CallOutcome, Failure, check, outcome_of
from mcp_export.testing.judge import Verdict, judge_answer
from schema_types.agent import Agent, ToolDefinition
from schema_types.cases import TestCase

__all__ = ["CaseResult", "JudgeFor", "named", "run_case"]


@dataclass(frozen=True)
class CaseResult:
    """One run of one case on one model.

    Attributes:
        tool: the tool's name.
        case: the case's name.
        model: the model (``provider:model``).
        attempt: 1 … repeat.
        passed: every expectation held (and the judge, if any, said pass).
        failures: the expectations that did not hold, judge included.
        outcome: what the client received.
        verdict: the judge's verdict, when the case has a judge and the call got that far.
    """

    tool: str
    case: str
    model: str
    attempt: int
    passed: bool
    failures: tuple[Failure, ...]
    outcome: CallOutcome
    verdict: Verdict | None = None


JudgeFor = Callable[[str], Awaitable[tuple[Provider, str]]]


async def run_case(
    client: Client,
    agent: Agent,
    model: str,
    tool: ToolDefinition,
    case: TestCase,
    attempt: int,
    judge_for: JudgeFor,
    *,
    served_name: str | None = None,
) -> CaseResult:
    """Call ``tool`` with ``case``'s arguments through ``client`` and check the answer.

    Args:
        client: a client of the agent's server (its model is ``model``).
        agent: the agent under test.
        model: the model serving the call (named in the result).
        tool: the case's tool.
        case: the case (its ``arguments`` are sent as they are).
        attempt: 1 … repeat.
        judge_for: the judge model for a served model.
        served_name: the tool's name on that server (default ``tool.name``).
    """
    unsendable = _unsendable(case.arguments)
    if unsendable is not None:
        failure = Failure("arguments", unsendable)
        outcome = CallOutcome(unsendable, True, 0.0)
        return CaseResult(tool.name, case.name, model, attempt, False, (failure,), outcome)
    began = time.perf_counter()
    try:
        result = await client.call_tool(served_name or tool.name, dict(case.arguments))
        outcome = outcome_of(result, (time.perf_counter() - began) * 1000)
    except Exception as exc:  # a protocol error is a failed call, not a crashed test run
        outcome = CallOutcome(
            str(exc) or type(exc).__name__, True, (time.perf_counter() - began) * 1000
        )
    # Off the event loop's thread (in the studio, the GUI's): a check may take its whole deadline.
    failures = await anyio.to_thread.run_sync(
        partial(check, case.expect, outcome, output_schema=tool.output_schema),
        abandon_on_cancel=True,
    )
    verdict: Verdict | None = None
    criterion = case.expect.judge
    if criterion and not outcome.is_error:
        try:
            provider, model_name = await judge_for(model)
        except ExportError as exc:
            verdict = Verdict(False, f"the judge model cannot be used: {exc}")
        else:
            verdict = await judge_answer(
                agent,
                provider,
                model_name,
                criterion=criterion,
                tool_name=tool.name,
                arguments=case.arguments,
                answer=outcome.text,
            )
        if not verdict.passed:
            failures.append(Failure("judge", verdict.reason or "the judge said the answer fails"))
    return CaseResult(
        tool.name, case.name, model, attempt, not failures, tuple(failures), outcome, verdict
    )


def _unsendable(arguments: object) -> str | None:
    """Why ``arguments`` cannot go to a model as UTF-8 (a lone surrogate), or None."""
    try:
        json.dumps(arguments, ensure_ascii=False).encode("utf-8")
    except UnicodeEncodeError as exc:
        found = exc.object[exc.start : exc.end].encode("utf-8", "backslashreplace").decode()
        return (
            f"the arguments hold {found}, half of a UTF-16 surrogate pair, which no request can "
            "carry: write the whole character in the agent file (an emoji is two \\u escapes "
            "in a row)"
        )
    except (TypeError, ValueError):
        return None  # not JSON (a YAML date): the call itself says what is wrong
    return None


def named(exc: BaseException) -> str:
    """An exception as ``Type: message`` (the type alone when it has no message)."""
    return f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__
