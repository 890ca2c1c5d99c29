"""Recording and replaying a caller case: the caller model's turn and the call it picked.

A caller case (``testing.callers``) runs once per caller model; each such run has its own fixture
(``fixture_path`` named by the caller model). Besides what an ordinary case keeps of the served
call (the served model's exchanges, the inner tools' listing and results, the judge's, on the
same :class:`~mcp_export.testing.replay.tape.Tape`), it keeps the caller's part:

- the caller model's exchanges (stream ``caller``): the request it got (system prompt, the ask,
  every offered tool with its description and schema, its parameters) and what it answered
  (its pick and arguments);
- what each live decoy server listed: a replay offers that listing instead of starting the
  server. Decoys of agent files and the bundled sets are made again as a live run makes them, so
  a change to them shows as a difference in the caller's request.

A replay asks no caller model, no served model, no decoy server and no tool server; the first
request that differs from the recorded one fails the case with where (the caller's request at
``tools[0].description``, the served model's at ``messages[0].content`` …), as an ordinary
replayed case does.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from mcp_export.providers.base import Provider
from mcp_export.redact import redact_json
from mcp_export.testing.callers.offer import OfferedTool, merge_offers
from mcp_export.testing.callers.runner import (
    CallerResult,
    CallerSetup,
    failed_before_caller,
    run_caller_case,
)
from mcp_export.testing.case import JudgeFor
from mcp_export.testing.expect import Failure
from mcp_export.testing.replay.cases import (
    CaseServers,
    CaseStandIns,
    RealParts,
    finish_tape,
    taped_judge,
)
from mcp_export.testing.replay.fixture import Fixture, FixtureError, fixture_path
from mcp_export.testing.replay.switch import calling_as
from mcp_export.testing.replay.tape import (
    RERECORD,
    Mode,
    RecordingProvider,
    ReplayProvider,
    Tape,
)
from schema_types.agent import Agent, ToolDefinition
from schema_types.cases import TestCase

__all__ = ["CallerTape", "decoy_listing", "replayed_offer", "run_caller_with_tape"]

CallerFor = Callable[[str], tuple[Provider, str]]
"""The real provider (and model name) of a caller model; raises ``ExportError`` when it
cannot be used."""


def decoy_listing(setup: CallerSetup) -> dict[str, list[dict[str, Any]]]:
    """What each live decoy server of ``setup`` listed, as a fixture keeps it (redacted)."""
    listing: dict[str, list[dict[str, Any]]] = {}
    for name in setup.decoy_servers:
        source = f"server:{name}"
        listing[name] = [
            {k: v for k, v in tool.listing().items() if k != "source"}
            for tool in setup.decoys
            if tool.source == source
        ]
    kept: dict[str, list[dict[str, Any]]] = redact_json(listing)
    return kept


def replayed_offer(
    setup: CallerSetup, ours: Sequence[OfferedTool], recorded: Mapping[str, Any]
) -> list[OfferedTool] | str:
    """The tool list a replayed caller is offered: ``ours`` then the decoys as a live run
    offers them, each live decoy server's tools as ``recorded`` (``decoyServers``) has them.

    ``setup`` was prepared without starting its decoy servers. Returns what is missing instead
    when a decoy server of ``setup`` is not in the recording.
    """
    missing = [name for name in setup.decoy_servers if name not in recorded]
    if missing:
        names = ", ".join(repr(name) for name in missing)
        kept = ", ".join(repr(name) for name in recorded) or "none"
        return f"the decoy server {names} is not in the recording (it holds {kept})"
    servers = [
        OfferedTool(
            name=str(data["name"]),
            description=str(data.get("description", "")),
            input_schema=dict(data.get("inputSchema") or {}),
            title=data.get("title"),
            annotations=data.get("annotations"),
            source=f"server:{name}",
        )
        for name in setup.decoy_servers
        for data in recorded[name]
    ]
    agents = [tool for tool in setup.decoys if tool.source.startswith("agent:")]
    common = [tool for tool in setup.decoys if tool.source.startswith("common:")]
    return merge_offers(ours, agents, servers, common)


@dataclasses.dataclass(frozen=True)
class CallerTape:
    """What a run's recorded or replayed caller cases share.

    Attributes:
        mode: record or replay.
        setup: the run's caller setup (for a replay, prepared without its decoy servers).
        ours: our tools as the agent's server lists them.
        real: the run's real providers and toolboxes (a recording's served part).
        caller_for: the real caller provider of a caller model (recording only).
        judge_for: the run's judge model for a served model.
        servers: the run's servers of stand-in cases (the served model's is started).
    """

    mode: Mode
    setup: CallerSetup
    ours: tuple[OfferedTool, ...]
    real: RealParts
    caller_for: CallerFor
    judge_for: JudgeFor
    servers: CaseServers


def _failed(
    tool: ToolDefinition,
    case: TestCase,
    caller_model: str,
    attempt: int,
    text: str,
    served_model: str,
) -> CallerResult:
    failure = Failure("replay", text)
    return failed_before_caller(tool, case, caller_model, attempt, failure, served_model)


def _replay_tape(where: Path, served_model: str) -> Tape | str:
    """The tape of a caller case's recording, or why it cannot be replayed."""
    try:
        fixture = Fixture.load(where)
    except FixtureError as exc:
        return str(exc)
    if fixture.caller is None:
        return f"the recording {where} is not of a caller case; {RERECORD}"
    if fixture.model != served_model:
        return (
            f"the recording's calls were served by {fixture.model}, this run serves them with "
            f"{served_model}; {RERECORD}"
        )
    return Tape(fixture, where)


async def run_caller_with_tape(
    parts: CallerTape,
    agent: Agent,
    path: Path,
    *,
    served: Agent,
    served_model: str,
    caller_model: str,
    tool: ToolDefinition,
    case: TestCase,
    attempt: int,
) -> CallerResult:
    """Run caller case ``case`` for ``caller_model``, recorded to or replayed from its fixture.

    Args:
        parts: what the run's taped caller cases share.
        agent: the agent under test.
        path: its file (the fixtures live beside it).
        served: the agent with ``served_model`` as its model.
        served_model: the model that serves the picked call.
        caller_model: the caller model.
        tool: the case's tool.
        case: the caller case.
        attempt: 1 … repeat.

    Raises:
        ExportError: recording, and the caller model cannot be used (from ``caller_for``).
    """
    where = fixture_path(path, tool.name, case.name, caller_model)
    caller: tuple[Provider, str]
    if parts.mode == "replay":
        tape = _replay_tape(where, served_model)
        if isinstance(tape, str):
            return _failed(tool, case, caller_model, attempt, tape, served_model)
        recorded = tape.fixture.caller or {}
        offered = replayed_offer(parts.setup, parts.ours, recorded.get("decoyServers") or {})
        if isinstance(offered, str):
            text = tape.differs(offered)
            return _failed(tool, case, caller_model, attempt, text, served_model)
        caller = ReplayProvider(tape, "caller"), str(recorded["modelName"])
    else:
        provider, model_name = parts.caller_for(caller_model)
        tape = Tape(Fixture(agent.metadata.name, tool.name, case.name, served_model), where)
        tape.fixture.caller = {
            "model": caller_model,
            "provider": provider.name,
            "modelName": model_name,
            "decoyServers": decoy_listing(parts.setup),
            "exchanges": [],
        }
        offered = parts.setup.offer(parts.ours)
        caller = RecordingProvider(provider, tape, "caller"), model_name
    stand_ins = CaseStandIns(served, served_model, case, parts.mode, tape, parts.real)
    with calling_as(stand_ins):
        result = await run_caller_case(
            parts.servers.client(served_model),
            agent,
            served_model=served_model,
            caller_model=caller_model,
            caller=caller,
            tool=tool,
            case=case,
            attempt=attempt,
            offered=offered,
            setup=parts.setup,
            judge_for=taped_judge(parts.mode, tape, parts.judge_for),
        )
    return finish_tape(result, parts.mode, tape)
