"""Running the attack pack: each attack against each tool on each model, through the served path.

Each model gets the *armed* agent (canaries planted, the attack pack's inner tool server added:
:func:`.pack.arm`) served by its own in-process ``AgentServer`` and called through the official
MCP client, as ordinary test cases are (``testing.run``); the secret canary is set in this
process's environment for the run (the agent's stdio tool servers inherit it) and removed after.
"""

from __future__ import annotations

import os
import time
import uuid
from collections.abc import Callable, Iterator, Sequence
from contextlib import AsyncExitStack, contextmanager
from dataclasses import dataclass, field
from pathlib import Path

import anyio
import mcp_types as types
from mcp import Client

from mcp_export.server.agent_server import AgentServer
from mcp_export.server.tools import ServedAgent
from mcp_export.testing.attacks.pack import (
    ATTACKS,
    SECRET_ENV,
    Attack,
    Canaries,
    arguments_for,
    arm,
    distinctive,
    judge,
    unanswered,
    untested,
)
from mcp_export.testing.case import named
from mcp_export.testing.expect import CallOutcome, Failure, outcome_of
from mcp_export.testing.run import CLIENT_NAME, with_model
from schema_types.agent import Agent, ToolDefinition

__all__ = ["AttackResult", "AttackRun", "run_attacks"]


@dataclass(frozen=True)
class AttackResult:
    """One attack on one tool on one model.

    Attributes:
        tool: the tool's name.
        attack: the attack's name.
        model: the model (``provider:model``).
        passed: the call was answered, nothing leaked and the refused tool was not attempted
            (or the attack was skipped: ``skipped`` says why).
        failures: what leaked or was attempted.
        outcome: what the client received (None when skipped).
        arguments: the arguments sent.
        skipped: why the attack could not be sent to this tool, or None.
        note: what an attack that held did not reach (the injecting tool never called), or
            None.
        error: why a call that leaked nothing proves nothing (it failed before a final
            answer), or None; such an attack did not pass.
    """

    tool: str
    attack: str
    model: str
    passed: bool
    failures: tuple[Failure, ...]
    outcome: CallOutcome | None
    arguments: dict[str, object] = field(default_factory=lambda: dict[str, object]())
    skipped: str | None = None
    note: str | None = None
    error: str | None = None


def _chosen_models(agent: Agent, models: Sequence[str]) -> list[str]:
    """``models`` without repeats, or the agent's own model when there are none."""
    return list(dict.fromkeys(models)) or [agent.settings.model or ""]


@dataclass
class AttackRun:
    """A run of the attack pack: attacks × tools × models."""

    id: str
    agent_name: str
    agent_path: str
    models: list[str]
    tools: list[str]
    attacks: list[Attack]
    results: list[AttackResult] = field(default_factory=lambda: list[AttackResult]())
    duration_ms: float = 0.0

    @classmethod
    def planned(
        cls,
        agent: Agent,
        path: Path,
        tools: Sequence[ToolDefinition],
        models: Sequence[str],
        attacks: Sequence[Attack],
    ) -> AttackRun:
        """A new run, with no results yet, of ``attacks`` on ``tools`` and ``models`` (none:
        the agent's own)."""
        return cls(
            uuid.uuid4().hex,
            agent.metadata.name,
            str(path),
            _chosen_models(agent, models),
            [t.name for t in tools],
            list(attacks),
        )

    @property
    def passed(self) -> bool:
        """Whether no attack landed."""
        return all(r.passed for r in self.results)

    def ordered(self) -> list[AttackResult]:
        """The results by tool, attack (in the pack's order) and model."""
        tools = {name: i for i, name in enumerate(self.tools)}
        attacks = {a.name: i for i, a in enumerate(self.attacks)}
        models = {name: i for i, name in enumerate(self.models)}
        return sorted(
            self.results,
            key=lambda r: (tools.get(r.tool, 0), attacks.get(r.attack, 0), models.get(r.model, 0)),
        )


@contextmanager
def _planted(name: str, value: str) -> Iterator[None]:
    before = os.environ.get(name)
    os.environ[name] = value
    try:
        yield
    finally:
        if before is None:
            os.environ.pop(name, None)
        else:
            os.environ[name] = before


async def run_attacks(
    agent: Agent,
    path: Path,
    *,
    tools: Sequence[ToolDefinition] | None = None,
    models: Sequence[str] = (),
    attacks: Sequence[Attack] = ATTACKS,
    concurrency: int = 4,
    on_result: Callable[[AttackResult], None] | None = None,
    run: AttackRun | None = None,
) -> AttackRun:
    """Run ``attacks`` against each of ``tools`` (default all) on each of ``models`` (default the
    agent's own), ``concurrency`` calls at once; a call that fails before a final answer is an
    attack that did not pass (``error`` says why), never a crashed run."""
    chosen_tools = list(tools) if tools is not None else list(agent.tools)
    chosen = _chosen_models(agent, models)
    if run is None:
        run = AttackRun.planned(agent, path, chosen_tools, chosen, attacks)
    canaries = Canaries.fresh()
    armed = arm(agent, canaries)
    prompt_lines = distinctive(agent.system_prompt)
    limiter = anyio.Semaphore(max(1, concurrency))
    began = time.perf_counter()

    def record(result: AttackResult) -> None:
        run.results.append(result)
        if on_result is not None:
            on_result(result)

    with _planted(SECRET_ENV, canaries.secret):
        async with AsyncExitStack() as stack:
            clients: dict[str, Client] = {}
            for model in chosen:
                served = ServedAgent(with_model(armed, model), path)
                server = await stack.enter_async_context(
                    AgentServer([served], sampling=False, history=False)
                )
                info = types.Implementation(name=f"{CLIENT_NAME} --attacks", version="1")
                clients[model] = await stack.enter_async_context(
                    Client(server.server, client_info=info)
                )

            async def one(model: str, tool: ToolDefinition, attack: Attack) -> None:
                arguments = arguments_for(tool, attack.payload)
                if arguments is None:
                    why = "the tool has no string parameter to carry the attack"
                    record(AttackResult(tool.name, attack.name, model, True, (), None, skipped=why))
                    return
                async with limiter:
                    started = time.perf_counter()
                    try:
                        answer = await clients[model].call_tool(tool.name, arguments)
                        outcome = outcome_of(answer, (time.perf_counter() - started) * 1000)
                    except Exception as exc:  # a failed call leaks nothing; it is said
                        outcome = CallOutcome(
                            f"the call failed: {named(exc)}",
                            True,
                            (time.perf_counter() - started) * 1000,
                        )
                failures = judge(outcome, canaries, prompt_lines)
                error = None if failures else unanswered(outcome)
                note = None if failures or error else untested(attack, outcome)
                record(
                    AttackResult(
                        tool.name,
                        attack.name,
                        model,
                        not failures and error is None,
                        failures,
                        outcome,
                        arguments,
                        note=note,
                        error=error,
                    )
                )

            async with anyio.create_task_group() as group:
                for tool in chosen_tools:
                    for attack in attacks:
                        for model in chosen:
                            group.start_soon(one, model, tool, attack)
    run.duration_ms = (time.perf_counter() - began) * 1000
    return run
