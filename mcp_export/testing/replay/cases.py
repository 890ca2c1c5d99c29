"""Running one case with stand-ins: recorded, replayed, or with mocked tools.

Such a case is called through the official MCP client on an in-process ``AgentServer``, as every
case is; the server's ``ServedAgent`` carries stand-ins that answer with the calling case's own
(``testing.replay.switch``): the provider and toolbox are the only parts replaced, the template,
session and result are the real path.

- ``record``: the model's provider and the agent's tool servers are the real ones, shared by every
  case of a model (:class:`RealParts`); what passes is written to the case's fixture.
- ``replay``: no model and no tool server; the fixture answers, and a request that differs from
  the recorded one fails the case with where it differs.
- mocks (``mock:`` under the case) sit in front of either, or of the real toolbox.
"""

from __future__ import annotations

import dataclasses
from contextlib import AsyncExitStack
from pathlib import Path
from typing import TypeVar

import mcp_types as types
from mcp import Client

from mcp_export.history.store import HistoryStore
from mcp_export.providers.base import Provider
from mcp_export.providers.factory import provider_for_agent
from mcp_export.server.agent_server import AgentServer
from mcp_export.server.tools import ServedAgent
from mcp_export.testing.case import CaseResult, JudgeFor, run_case
from mcp_export.testing.expect import CallOutcome, Failure
from mcp_export.testing.replay.fixture import Fixture, FixtureError, fixture_path
from mcp_export.testing.replay.mocks import MockedToolbox, mock_problems
from mcp_export.testing.replay.switch import Switch, calling_as
from mcp_export.testing.replay.tape import (
    RERECORD,
    Mode,
    RecordingProvider,
    RecordingToolbox,
    ReplayProvider,
    ReplayToolbox,
    Tape,
)
from mcp_export.toolbox.agent_toolbox import AgentToolbox
from schema_types.agent import Agent, ToolDefinition
from schema_types.cases import TestCase

__all__ = [
    "CaseServers",
    "CaseStandIns",
    "RealParts",
    "finish_tape",
    "needs_stand_ins",
    "run_with_stand_ins",
    "taped_judge",
]


_R = TypeVar("_R", bound=CaseResult)


def needs_stand_ins(mode: Mode | None, case: TestCase) -> bool:
    """Whether ``case`` runs with stand-ins (recorded, replayed or mocked)."""
    return mode is not None or bool(case.mock)


class RealParts:
    """The real providers and toolboxes of a run's models, made on first use, shared by its
    stand-in cases and closed by :meth:`aclose` (apart from the ones the run's ordinary cases
    use: a run with both starts a model's tool servers twice)."""

    def __init__(self, path: Path) -> None:
        self._path = path
        self._providers: dict[str, tuple[Provider, str]] = {}
        self._toolboxes: dict[str, AgentToolbox] = {}

    def provider(self, agent: Agent, model: str) -> tuple[Provider, str]:
        """The real provider of ``model`` (``agent`` already has it as its model).

        Raises:
            ConfigurationError: it cannot be used.
        """
        if model not in self._providers:
            self._providers[model] = provider_for_agent(agent)
        return self._providers[model]

    def toolbox(self, agent: Agent, model: str) -> AgentToolbox:
        """The real toolbox of the agent served on ``model``."""
        if model not in self._toolboxes:
            self._toolboxes[model] = AgentToolbox(agent, base_dir=self._path.parent)
        return self._toolboxes[model]

    async def aclose(self) -> None:
        """Stop the tool servers and close the providers."""
        for toolbox in self._toolboxes.values():
            await toolbox.aclose()
        for provider, _ in self._providers.values():
            await provider.aclose()


class CaseStandIns:
    """The stand-ins of one case (``server.runtime.StandIns``), each made once: the served
    model's provider and the agent's toolbox, recorded or replayed on ``tape`` when there is
    one, behind the case's mocks."""

    def __init__(
        self,
        agent: Agent,
        model: str,
        case: TestCase,
        mode: Mode | None,
        tape: Tape | None,
        real: RealParts,
    ) -> None:
        self.agent, self.model, self.case = agent, model, case
        self.mode, self.tape, self.real = mode, tape, real
        self._provider: tuple[Provider, str] | None = None
        self._toolbox: AgentToolbox | None = None

    def provider(self) -> tuple[Provider, str]:
        if self._provider is None:
            self._provider = self._make_provider()
        return self._provider

    def _make_provider(self) -> tuple[Provider, str]:
        if self.mode == "replay" and self.tape is not None:
            return ReplayProvider(self.tape), self.tape.fixture.model_name
        provider, name = self.real.provider(self.agent, self.model)
        if self.tape is not None:
            self.tape.fixture.provider, self.tape.fixture.model_name = provider.name, name
        return RecordingProvider(provider, self.tape), name

    def toolbox(self) -> AgentToolbox:
        if self._toolbox is None:
            toolbox: AgentToolbox
            if self.mode == "replay" and self.tape is not None:
                toolbox = ReplayToolbox(self.agent, self.tape)
            elif self.tape is not None:
                real = self.real.toolbox(self.agent, self.model)
                toolbox = RecordingToolbox(self.agent, real, self.tape)
            else:
                toolbox = self.real.toolbox(self.agent, self.model)
            self._toolbox = MockedToolbox(self.agent, toolbox, self.case.mock)
        return self._toolbox


class CaseServers:
    """The in-process server (and its client) of each model for the run's stand-in cases
    (``testing.replay.switch``), stopped with ``stack``."""

    def __init__(
        self,
        path: Path,
        stack: AsyncExitStack,
        *,
        prefix: bool,
        history: HistoryStore | None,
        client_name: str,
    ) -> None:
        self._path, self._stack = path, stack
        self._prefix, self._history, self._client_name = prefix, history, client_name
        self._clients: dict[str, Client] = {}

    async def start(self, served: Agent, model: str) -> None:
        """Start ``model``'s server (``served`` is the agent with that model), in the task that
        owns ``stack`` (a server is stopped in the task that started it)."""
        if model in self._clients:
            return
        server = await self._stack.enter_async_context(
            AgentServer(
                [ServedAgent(served, self._path, Switch(served))],
                prefix=self._prefix,
                sampling=False,
                history=self._history or False,
            )
        )
        info = types.Implementation(name=self._client_name, version="1")
        self._clients[model] = await self._stack.enter_async_context(
            Client(server.server, client_info=info)
        )

    def client(self, model: str) -> Client:
        """The client of ``model``'s server (started with :meth:`start`)."""
        return self._clients[model]


def taped_judge(mode: Mode | None, tape: Tape | None, judge_for: JudgeFor) -> JudgeFor:
    """The case's judge: recorded, replayed, or the run's own."""

    async def judge(model: str) -> tuple[Provider, str]:
        if mode == "replay" and tape is not None:
            recorded = tape.fixture.judge
            name = str(recorded[0]["request"]["model"]) if recorded else model
            return ReplayProvider(tape, "judge"), name
        provider, name = await judge_for(model)
        return RecordingProvider(provider, tape, "judge"), name

    return judge


def _failed(
    tool: ToolDefinition, case: TestCase, model: str, attempt: int, kind: str, text: str
) -> CaseResult:
    failure = Failure(kind, text)
    return CaseResult(
        tool.name, case.name, model, attempt, False, (failure,), CallOutcome(text, True, 0.0)
    )


async def run_with_stand_ins(
    agent: Agent,
    path: Path,
    served: Agent,
    model: str,
    tool: ToolDefinition,
    case: TestCase,
    attempt: int,
    *,
    mode: Mode | None,
    real: RealParts,
    judge_for: JudgeFor,
    served_name: str,
    servers: CaseServers,
) -> CaseResult:
    """Run ``case`` on ``model`` with its stand-ins (see the module docstring).

    Args:
        agent: the agent under test.
        path: its file (the fixtures live beside it).
        served: the agent with ``model`` as its model.
        model: the model (``provider:model``) the case runs on.
        tool: the case's tool.
        case: the case.
        attempt: 1 … repeat.
        mode: record, replay, or None (mocks only).
        real: the run's real providers and toolboxes.
        judge_for: the run's judge model for a served model.
        served_name: the tool's name on the server.
        servers: the run's servers of stand-in cases.
    """
    problems = mock_problems(agent, case.mock)
    if problems:
        return _failed(tool, case, model, attempt, "mock", "; ".join(problems))
    where = fixture_path(path, tool.name, case.name, model)
    tape: Tape | None = None
    if mode == "replay":
        try:
            tape = Tape(Fixture.load(where), where)
        except FixtureError as exc:
            return _failed(tool, case, model, attempt, "replay", str(exc))
    elif mode == "record":
        tape = Tape(Fixture(agent.metadata.name, tool.name, case.name, model), where)
    stand_ins = CaseStandIns(served, model, case, mode, tape, real)
    client = servers.client(model)
    with calling_as(stand_ins):
        result = await run_case(
            client,
            agent,
            model,
            tool,
            case,
            attempt,
            taped_judge(mode, tape, judge_for),
            served_name=served_name,
        )
    return finish_tape(result, mode, tape)


def finish_tape(result: _R, mode: Mode | None, tape: Tape | None) -> _R:
    """``result`` once its case has run on ``tape``: a recording is saved; a replay that left
    the recording fails, saying where first (a ``replay`` failure, before the others)."""
    if tape is None:
        return result
    if mode == "record":
        tape.fixture.save(tape.path)
        return result
    if tape.mismatch is not None:
        failure = Failure("replay", f"{tape.mismatch}; {RERECORD}")
        # A caller whose request differed fails its step with the same words: said once.
        rest = tuple(f for f in result.failures if f.message != failure.message)
        return dataclasses.replace(result, passed=False, failures=(failure, *rest))
    return result
