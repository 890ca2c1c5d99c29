"""Running test cases on one or more models: every case a ``tools/call`` of the agent's server.

Each model gets the agent with ``settings.model`` replaced, served by its own in-process
``AgentServer`` and called through the official MCP client, so a case runs exactly what a served
call runs (argument validation, template, session, result) and checks what a client receives.
Calls run ``concurrency`` at a time over all models together; ``repeat`` runs each case that many
times per model (a pass rate). A case's ``judge`` criterion is put to the judge model after its
other expectations are checked.
"""

from __future__ import annotations

import json
import logging
import time
import uuid
from collections.abc import Awaitable, Callable, Sequence
from contextlib import AsyncExitStack
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING

import anyio
import mcp_types as types
from mcp import Client

from mcp_export.errors import ExportError
from mcp_export.providers.base import Provider
from mcp_export.providers.factory import provider_for_agent
from mcp_export.server.agent_server import AgentServer
from mcp_export.server.tools import ServedAgent
from mcp_export.testing.expect import CallOutcome, Failure, check, outcome_of
from mcp_export.testing.judge import Verdict, judge_answer
from schema_types.agent import Agent, ToolDefinition
from schema_types.cases import TestCase

if TYPE_CHECKING:
    from mcp_export.history.store import HistoryStore

__all__ = [
    "CLIENT_NAME",
    "CaseResult",
    "MatrixResult",
    "NoCases",
    "plan_matrix",
    "run_matrix",
    "select_cases",
    "with_model",
]

logger = logging.getLogger(__name__)

CLIENT_NAME = "metaagent test"
"""The MCP client name test calls are made with (the ``caller`` of their history runs)."""


class NoCases(ExportError):
    """The selection names no test case; the message lists what there is."""


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


@dataclass
class MatrixResult:
    """A run of cases × models.

    Attributes:
        id: a fresh uuid4 hex string.
        agent_name: the agent's name.
        agent_path: the agent file.
        models: the models, in the order given.
        cases: ``(tool, case)`` in the order run.
        repeat: runs per case and model.
        results: every run, in the order they finished.
        started_at: when the run began (seconds since the epoch).
        duration_ms: the whole run's wall time.
    """

    id: str
    agent_name: str
    agent_path: str
    models: list[str]
    cases: list[tuple[str, str]]
    repeat: int
    results: list[CaseResult] = field(default_factory=lambda: list[CaseResult]())
    started_at: float = 0.0
    duration_ms: float = 0.0

    # The results by cell, extended as results are appended (a report asks once per cell).
    _by_cell: dict[tuple[str, str, str], list[CaseResult]] = field(
        default_factory=lambda: dict[tuple[str, str, str], list[CaseResult]](), repr=False
    )
    _indexed: int = field(default=0, repr=False)
    _source: list[CaseResult] | None = field(default=None, repr=False)

    def cell(self, tool: str, case: str, model: str) -> list[CaseResult]:
        """The runs of one case on one model, by attempt."""
        if self._source is not self.results or self._indexed > len(self.results):
            self._by_cell, self._indexed, self._source = {}, 0, self.results  # replaced or cut
        for result in self.results[self._indexed :]:
            self._by_cell.setdefault((result.tool, result.case, result.model), []).append(result)
        self._indexed = len(self.results)
        return sorted(self._by_cell.get((tool, case, model), ()), key=lambda r: r.attempt)

    @property
    def passed(self) -> bool:
        """Whether every run passed."""
        return all(r.passed for r in self.results)


def select_cases(
    agent: Agent, *, tool: str | None = None, case: str | None = None
) -> list[tuple[ToolDefinition, TestCase]]:
    """The cases to run: all of the agent's, a tool's, or one (by name, in a tool or anywhere).

    Raises:
        NoCases: the tool does not exist, no case has that name, or there are no cases at all.
    """
    tools = agent.tools
    if tool is not None:
        found = agent.metadata.tool(tool)
        if found is None:
            names = ", ".join(t.name for t in tools) or "none"
            raise NoCases(f"the agent has no tool named {tool!r} (its tools: {names})")
        tools = [found]
    chosen = [(t, c) for t in tools for c in t.tests if case is None or c.name == case]
    if chosen:
        return chosen
    known = [f"{t.name}/{c.name}" for t in tools for c in t.tests]
    if case is not None:
        listing = ", ".join(known) or "none"
        raise NoCases(f"no test case is named {case!r} (the cases: {listing})")
    where = f"the tool {tool}" if tool is not None else "the agent"
    raise NoCases(
        f"{where} has no test cases: add them under a tool's tests: in the agent file, or with "
        "Save as test case in the studio"
    )


def with_model(agent: Agent, model: str) -> Agent:
    """The agent with ``settings.model`` set to ``model``."""
    settings = agent.settings.model_copy(update={"model": model})
    return agent.model_copy(update={"settings": settings})


OnResult = Callable[[CaseResult], None]


def plan_matrix(
    agent: Agent,
    path: Path,
    cases: Sequence[tuple[ToolDefinition, TestCase]],
    *,
    models: Sequence[str] = (),
    repeat: int = 1,
) -> MatrixResult:
    """The empty result of a run of ``cases`` on ``models`` (default: the agent's own model),
    for :func:`run_matrix` to fill; a caller that keeps it has the results so far when the run is
    cancelled."""
    return MatrixResult(
        id=uuid.uuid4().hex,
        agent_name=agent.metadata.name,
        agent_path=str(path),
        models=list(models) or [agent.settings.model or ""],
        cases=[(t.name, c.name) for t, c in cases],
        repeat=max(1, repeat),
        started_at=time.time(),
    )


async def run_matrix(
    agent: Agent,
    path: Path,
    cases: Sequence[tuple[ToolDefinition, TestCase]],
    *,
    models: Sequence[str] = (),
    repeat: int = 1,
    concurrency: int = 4,
    judge_model: str | None = None,
    history: HistoryStore | None = None,
    on_result: OnResult | None = None,
    matrix: MatrixResult | None = None,
) -> MatrixResult:
    """Run ``cases`` on each of ``models`` (default: the agent's own model), ``repeat`` times.

    Args:
        agent: the agent under test.
        path: its file (tool server paths start at its folder; named in history).
        cases: what ``select_cases`` chose.
        models: ``provider:model`` strings; empty: ``settings.model``.
        repeat: runs per case and model (at least 1).
        concurrency: calls in flight at once, over all models (at least 1).
        judge_model: the model that judges ``judge`` criteria; default each run's own model.
        history: where served calls are recorded (None: nowhere).
        on_result: called with each result as it comes (in the event loop's thread).
        matrix: the result to fill (from :func:`plan_matrix` with the same cases, models and
            repeat); default a new one.

    Returns:
        Every result, in the order they finished. A case that cannot be run or checked is a
        failed result of its own; the other cases go on.
    """
    if matrix is None:
        matrix = plan_matrix(agent, path, cases, models=models, repeat=repeat)
    chosen = matrix.models
    limiter = anyio.Semaphore(max(1, concurrency))
    began = time.perf_counter()
    async with AsyncExitStack() as stack:
        clients: dict[str, Client] = {}
        judges: dict[str, tuple[Provider, str]] = {}
        for model in chosen:
            served = ServedAgent(with_model(agent, model), path)
            server = await stack.enter_async_context(
                AgentServer([served], sampling=False, history=history or False)
            )
            info = types.Implementation(name=CLIENT_NAME, version="1")
            clients[model] = await stack.enter_async_context(
                Client(server.server, client_info=info)
            )

        async def judge_for(model: str) -> tuple[Provider, str]:
            name = judge_model or model
            if name not in judges:
                provider, model_name = provider_for_agent(with_model(agent, name))
                stack.push_async_callback(provider.aclose)
                judges[name] = (provider, model_name)
            return judges[name]

        async def one(model: str, tool: ToolDefinition, case: TestCase, attempt: int) -> None:
            async with limiter:
                started = time.perf_counter()
                try:
                    result = await _run_case(
                        clients[model], agent, model, tool, case, attempt, judge_for
                    )
                except Exception as exc:  # this case's failure, not the whole run's
                    logger.exception("test case %s/%s failed unexpectedly", tool.name, case.name)
                    outcome = CallOutcome("", True, (time.perf_counter() - started) * 1000)
                    failure = Failure("case", f"the case could not be run: {_named(exc)}")
                    result = CaseResult(
                        tool.name, case.name, model, attempt, False, (failure,), outcome
                    )
            matrix.results.append(result)
            if on_result is not None:
                on_result(result)

        async with anyio.create_task_group() as group:
            for attempt in range(1, matrix.repeat + 1):
                for tool, case in cases:
                    for model in chosen:
                        group.start_soon(one, model, tool, case, attempt)
    matrix.duration_ms = (time.perf_counter() - began) * 1000
    return matrix


JudgeFor = Callable[[str], Awaitable[tuple[Provider, str]]]


async def _run_case(
    client: Client,
    agent: Agent,
    model: str,
    tool: ToolDefinition,
    case: TestCase,
    attempt: int,
    judge_for: JudgeFor,
) -> CaseResult:
    unsendable = _unsendable(case.arguments)
    if unsendable is not None:
        failure = Failure("arguments", unsendable)
        outcome = CallOutcome(unsendable, True, 0.0)
        return CaseResult(tool.name, case.name, model, attempt, False, (failure,), outcome)
    began = time.perf_counter()
    try:
        result = await client.call_tool(tool.name, dict(case.arguments))
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


def _named(exc: BaseException) -> str:
    return f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__
