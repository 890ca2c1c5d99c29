"""Running test cases on one or more models: every case a ``tools/call`` of the agent's server.

Each model gets the agent with ``settings.model`` replaced, served by its own in-process
``AgentServer`` and called through the official MCP client, so a case runs exactly what a served
call runs (argument validation, template, session, result) and checks what a client receives.
Calls run ``concurrency`` at a time over all models together; ``repeat`` runs each case that many
times per model (a pass rate). A case's ``judge`` criterion is put to the judge model after its
other expectations are checked.

A caller case (one with ``ask``) runs once per *caller model* instead (``testing.callers``): its
columns are the caller models, and the call a caller picks is served by the first model (the
agent's own unless ``models`` says otherwise).
"""

from __future__ import annotations

import dataclasses
import logging
import time
import uuid
from collections.abc import Callable, Sequence
from contextlib import AsyncExitStack
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

import anyio
import mcp_types as types
from mcp import Client

from mcp_export.costs.prices import PricesError, PriceTable, price_table
from mcp_export.errors import ExportError
from mcp_export.providers.base import Provider
from mcp_export.providers.factory import provider_for_agent
from mcp_export.server.agent_server import AgentServer
from mcp_export.server.tools import ServedAgent
from mcp_export.testing.callers.offer import OfferedTool, listed_tools
from mcp_export.testing.callers.runner import (
    CallerOptions,
    CallerSetup,
    caller_unavailable,
    prepare_callers,
    run_caller_case,
    served_name,
)
from mcp_export.testing.case import CaseResult, named, run_case
from mcp_export.testing.cost import cost_failure, run_cost
from mcp_export.testing.expect import CallOutcome, Failure
from mcp_export.testing.replay.callers import CallerTape, run_caller_with_tape
from mcp_export.testing.replay.cases import (
    CaseServers,
    RealParts,
    needs_stand_ins,
    run_with_stand_ins,
)
from mcp_export.testing.replay.tape import Mode
from mcp_export.versions.fingerprint import Version, tool_version
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
        caller_models: the caller models of the caller cases, in the order given.
        caller_cases: the ``(tool, case)`` of ``cases`` that are caller cases.
        results: every run, in the order they finished (a caller case's are
            ``CallerResult``, whose ``model`` is the caller model).
        started_at: when the run began (seconds since the epoch).
        duration_ms: the whole run's wall time.
        prices: the price table its costs are reckoned with (``costs.prices``).
        versions: the version of each tool on each model that serves it, by ``(tool, model)``
            (``versions.fingerprint``).
    """

    id: str
    agent_name: str
    agent_path: str
    models: list[str]
    cases: list[tuple[str, str]]
    repeat: int
    results: list[CaseResult] = field(default_factory=lambda: list[CaseResult]())
    caller_models: list[str] = field(default_factory=lambda: list[str]())
    caller_cases: list[tuple[str, str]] = field(default_factory=lambda: list[tuple[str, str]]())
    started_at: float = 0.0
    duration_ms: float = 0.0
    prices: PriceTable = field(default_factory=PriceTable)
    versions: dict[tuple[str, str], Version] = field(
        default_factory=lambda: dict[tuple[str, str], Version]()
    )

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

    def columns(self, tool: str, case: str) -> list[str]:
        """The models a case runs on: the caller models for a caller case, else ``models``."""
        return self.caller_models if (tool, case) in self.caller_cases else self.models

    @property
    def planned(self) -> int:
        """How many runs the matrix holds when complete."""
        return sum(len(self.columns(t, c)) for t, c in self.cases) * self.repeat

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
    caller_models: Sequence[str] = (),
    prices: PriceTable | None = None,
) -> MatrixResult:
    """The empty result of a run of ``cases`` on ``models`` (default: the agent's own model)
    and of its caller cases for ``caller_models`` (default: ``settings.callers.models``, else
    the first of ``models``), for :func:`run_matrix` to fill; a caller that keeps it has the
    results so far when the run is cancelled. ``prices``: default the agent's with those of
    Preferences (an unreadable price table of Preferences is logged and left out)."""
    chosen = list(dict.fromkeys(models)) or [agent.settings.model or ""]
    callers = [(t.name, c.name) for t, c in cases if c.ask is not None]
    if prices is None:
        try:
            prices = price_table(agent)
        except PricesError as exc:
            logger.warning("%s; only the agent file's prices are used", exc)
            prices = price_table(agent, {})
    versions = {
        (t.name, model): tool_version(agent, t, model)
        for t, c in cases
        for model in (chosen[:1] if c.ask is not None else chosen)
    }
    return MatrixResult(
        id=uuid.uuid4().hex,
        agent_name=agent.metadata.name,
        agent_path=str(path),
        models=chosen,
        cases=[(t.name, c.name) for t, c in cases],
        repeat=max(1, repeat),
        caller_models=_caller_models(agent, caller_models, chosen) if callers else [],
        caller_cases=callers,
        started_at=time.time(),
        prices=prices,
        versions=versions,
    )


def _caller_models(agent: Agent, given: Sequence[str], models: list[str]) -> list[str]:
    named = list(given) or agent.settings.callers.models
    return list(dict.fromkeys(named)) or models[:1]


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
    callers: CallerOptions | None = None,
    mode: Mode | None = None,
    read_cache: bool = False,
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
        matrix: the result to fill (from :func:`plan_matrix` with the same cases, models,
            repeat and caller models); default a new one.
        callers: the caller models and the caller setup of the caller cases (decoys, system
            prompt, prefix), added to the agent file's ``settings.callers``.
        mode: ``record`` keeps each case's exchange in its fixture beside the agent file (a
            caller case's per caller model, with the caller's turn and what the live decoy
            servers listed); ``replay`` answers each from it, with no model, no tool server and
            no decoy server (``testing.replay``); None: neither (a case's mocks still apply).
        read_cache: answer a tool that declares a cache from the cache (and keep its answers
            there), as a served call would; default off: every case asks the model.

    Returns:
        Every result, in the order they finished. A case that cannot be run or checked is a
        failed result of its own; the other cases go on.

    Raises:
        DecoyError: a decoy of the caller cases cannot be listed (before any case runs).
    """
    callers = callers or CallerOptions()
    if matrix is None:
        matrix = plan_matrix(
            agent, path, cases, models=models, repeat=repeat, caller_models=callers.models
        )
    chosen = matrix.models
    setup = CallerSetup(prefix=callers.prefix)
    if matrix.caller_cases:
        # A replay starts no decoy server: each case offers what they listed when recorded.
        setup = await prepare_callers(agent, path, callers, live_servers=mode != "replay")
    limiter = anyio.Semaphore(max(1, concurrency))
    began = time.perf_counter()
    async with AsyncExitStack() as stack:
        clients: dict[str, Client] = {}
        judges: dict[str, tuple[Provider, str]] = {}
        for model in chosen:
            served = ServedAgent(with_model(agent, model), path)
            server = await stack.enter_async_context(
                AgentServer(
                    [served],
                    prefix=setup.prefix,
                    sampling=False,
                    history=history or False,
                    read_cache=read_cache,
                )
            )
            info = types.Implementation(name=CLIENT_NAME, version="1")
            clients[model] = await stack.enter_async_context(
                Client(server.server, client_info=info)
            )
        real = RealParts(path)
        stack.push_async_callback(real.aclose)
        stand_in_servers = CaseServers(
            path, stack, prefix=setup.prefix, history=history, client_name=CLIENT_NAME
        )
        if any(c.ask is None and needs_stand_ins(mode, c) for _, c in cases):
            for model in chosen:
                await stand_in_servers.start(with_model(agent, model), model)
        ours: list[OfferedTool] = []
        offered: list[OfferedTool] = []
        callers_by_model: dict[str, tuple[Provider, str]] = {}
        if matrix.caller_cases:
            ours = await listed_tools(clients[chosen[0]])
            offered = setup.offer(ours)
            if mode is not None:
                await stand_in_servers.start(with_model(agent, chosen[0]), chosen[0])

        async def judge_for(model: str) -> tuple[Provider, str]:
            name = judge_model or model
            if name not in judges:
                provider, model_name = provider_for_agent(with_model(agent, name))
                stack.push_async_callback(provider.aclose)
                judges[name] = (provider, model_name)
            return judges[name]

        def caller_for(model: str) -> tuple[Provider, str]:
            if model not in callers_by_model:
                provider, model_name = provider_for_agent(with_model(agent, model))
                stack.push_async_callback(provider.aclose)
                callers_by_model[model] = (provider, model_name)
            return callers_by_model[model]

        async def run_one(
            model: str, tool: ToolDefinition, case: TestCase, attempt: int
        ) -> CaseResult:
            if case.ask is None and needs_stand_ins(mode, case):
                return await run_with_stand_ins(
                    agent,
                    path,
                    with_model(agent, model),
                    model,
                    tool,
                    case,
                    attempt,
                    mode=mode,
                    real=real,
                    judge_for=judge_for,
                    served_name=served_name(agent, tool, prefix=setup.prefix),
                    servers=stand_in_servers,
                )
            if case.ask is None:
                name = served_name(agent, tool, prefix=setup.prefix)
                return await run_case(
                    clients[model], agent, model, tool, case, attempt, judge_for, served_name=name
                )
            try:
                if mode is not None:
                    return await run_caller_with_tape(
                        CallerTape(
                            mode, setup, tuple(ours), real, caller_for, judge_for, stand_in_servers
                        ),
                        agent,
                        path,
                        served=with_model(agent, chosen[0]),
                        served_model=chosen[0],
                        caller_model=model,
                        tool=tool,
                        case=case,
                        attempt=attempt,
                    )
                caller = caller_for(model)
            except ExportError as exc:
                return caller_unavailable(
                    tool, case, model, attempt, str(exc), served_model=chosen[0]
                )
            return await run_caller_case(
                clients[chosen[0]],
                agent,
                served_model=chosen[0],
                caller_model=model,
                caller=caller,
                tool=tool,
                case=case,
                attempt=attempt,
                offered=offered,
                setup=setup,
                judge_for=judge_for,
            )

        async def one(model: str, tool: ToolDefinition, case: TestCase, attempt: int) -> None:
            async with limiter:
                started = time.perf_counter()
                try:
                    result = await run_one(model, tool, case, attempt)
                except Exception as exc:  # this case's failure, not the whole run's
                    logger.exception("test case %s/%s failed unexpectedly", tool.name, case.name)
                    outcome = CallOutcome("", True, (time.perf_counter() - started) * 1000)
                    failure = Failure("case", f"the case could not be run: {named(exc)}")
                    result = CaseResult(
                        tool.name, case.name, model, attempt, False, (failure,), outcome
                    )
            over = cost_failure(case.expect.max_cost, run_cost(matrix.prices, result))
            if over is not None:
                failures = (*result.failures, over)
                result = dataclasses.replace(result, passed=False, failures=failures)
            matrix.results.append(result)
            if on_result is not None:
                on_result(result)

        async with anyio.create_task_group() as group:
            for attempt in range(1, matrix.repeat + 1):
                for tool, case in cases:
                    for model in matrix.columns(tool.name, case.name):
                        group.start_soon(one, model, tool, case, attempt)
    matrix.duration_ms = (time.perf_counter() - began) * 1000
    return matrix
