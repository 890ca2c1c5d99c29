"""Running one caller case: the caller model picks (step a), then the picked call is served (b).

:func:`prepare_callers` gathers, once per run, what every caller is offered besides our tools
(the decoys) and its system prompt, from the agent file's ``settings.callers`` and the run's own
options. :func:`run_caller_case` asks one caller model, judges its reply
(:func:`~mcp_export.testing.callers.steps.check_pick`) and, when it called the tool the case
expects (its own, or another of the agent's named by ``picks``) with arguments that tool's schema
accepts and that hold what the case expects, serves that very call of that tool through the
ordinary case path (:func:`~mcp_export.testing.case.run_case`) so the answer's expectations apply
as for any case.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from mcp import Client

from mcp_export.providers.base import Provider
from mcp_export.server.tools import CONVERSATION_ID, PREFIX_SEPARATOR, agent_slug
from mcp_export.testing.callers.ask import DEFAULT_CALLER_PROMPT, CallerTurn, ask_caller
from mcp_export.testing.callers.offer import (
    OfferedTool,
    agent_decoys,
    common_decoys,
    merge_offers,
    server_decoys,
)
from mcp_export.testing.callers.steps import NONE, PickCheck, Step, check_pick
from mcp_export.testing.case import CaseResult, JudgeFor, run_case
from mcp_export.testing.expect import CallOutcome, Failure
from schema_types.agent import Agent, McpServerConfig, ToolDefinition
from schema_types.cases import TestCase

__all__ = [
    "CallerOptions",
    "CallerResult",
    "CallerSetup",
    "caller_unavailable",
    "failed_before_caller",
    "prepare_callers",
    "run_caller_case",
    "served_name",
    "wanted_tool",
]


@dataclass(frozen=True)
class CallerOptions:
    """A run's own caller settings, added to (or replacing) the agent file's
    ``settings.callers``.

    Attributes:
        models: the caller models (``provider:model``); empty: the agent's own model.
        system_prompt: the caller system prompt; None: the agent file's, else the default.
        decoy_sets: bundled decoy sets; None: the agent file's choice (default all); empty:
            none.
        decoy_agents: more agent files whose tools are decoys.
        decoy_servers: more MCP servers whose tools are decoys, by name.
        prefix: offer our tools as ``--prefix`` serves them (``<agent-slug>__<tool>``).
    """

    models: tuple[str, ...] = ()
    system_prompt: str | None = None
    decoy_sets: tuple[str, ...] | None = None
    decoy_agents: tuple[Path, ...] = ()
    decoy_servers: Mapping[str, McpServerConfig] | None = None
    prefix: bool = False


@dataclass(frozen=True)
class CallerSetup:
    """What every caller of a run gets besides the request: the prompt and the decoys.

    Attributes:
        system_prompt: the caller system prompt.
        decoys: the decoy tools, in the order offered after ours.
        prefix: whether our tools are offered with the prefix.
        decoy_servers: the names of the live decoy servers (their tools are among ``decoys``
            when they were listed).
    """

    system_prompt: str = DEFAULT_CALLER_PROMPT
    decoys: tuple[OfferedTool, ...] = ()
    prefix: bool = False
    decoy_servers: tuple[str, ...] = ()

    def offer(self, ours: Sequence[OfferedTool]) -> list[OfferedTool]:
        """The whole tool list: ``ours`` (as listed), then the decoys not named like them."""
        return merge_offers(ours, self.decoys)


async def prepare_callers(
    agent: Agent, path: Path, options: CallerOptions | None = None, *, live_servers: bool = True
) -> CallerSetup:
    """The caller setup of a run: ``settings.callers`` of the agent file with ``options``.

    Decoy agent files of the agent file are relative to its folder; live decoy servers are
    started once here, listed and stopped (with ``live_servers``; without, they are only named
    in ``decoy_servers``: a replay offers what they listed when recorded).

    Raises:
        DecoyError: a decoy cannot be listed (the message says which and why).
    """
    options = options or CallerOptions()
    settings = agent.settings.callers
    base = path.parent
    prompt = options.system_prompt or settings.system_prompt or DEFAULT_CALLER_PROMPT
    sets = options.decoy_sets if options.decoy_sets is not None else settings.decoys
    agent_files = [base / p for p in settings.decoy_agents] + list(options.decoy_agents)
    servers = dict(settings.decoy_servers) | dict(options.decoy_servers or {})
    decoys = merge_offers(
        (),
        await agent_decoys(agent_files, prefix=options.prefix),
        await server_decoys(servers, base_dir=base) if live_servers else [],
        common_decoys(sets),
    )
    return CallerSetup(
        system_prompt=prompt,
        decoys=tuple(decoys),
        prefix=options.prefix,
        decoy_servers=tuple(servers),
    )


def served_name(agent: Agent, tool: ToolDefinition, *, prefix: bool) -> str:
    """``tool``'s name as the agent's server lists it (``<agent-slug>__<tool>`` with prefix)."""
    return f"{agent_slug(agent)}{PREFIX_SEPARATOR}{tool.name}" if prefix else tool.name


def wanted_tool(
    agent: Agent, tool: ToolDefinition, case: TestCase, *, prefix: bool
) -> tuple[str, ToolDefinition | None]:
    """The tool ``case`` (of ``tool``) expects the caller to call, as offered, and its
    definition when it is one of the agent's: ``tool`` itself unless ``expect.picks`` names
    another of the agent's tools (by its name or its served name), a decoy (no definition) or
    :data:`~mcp_export.testing.callers.steps.NONE`."""
    picks = case.expect.picks
    if picks is None:
        return served_name(agent, tool, prefix=prefix), tool
    if picks == NONE:
        return NONE, None
    for candidate in agent.tools:
        name = served_name(agent, candidate, prefix=prefix)
        if picks in (candidate.name, name):
            return name, candidate
    return picks, None


@dataclass(frozen=True)
class CallerResult(CaseResult):
    """One run of a caller case for one caller model (``model`` is the caller model).

    Attributes:
        step: the step that failed (see ``callers.steps``); None: every step passed.
        pick: how the caller's reply was judged.
        turn: what the caller was asked and did (its transcript).
        served_model: the model that served the picked call (the agent's), also when the
            call was not served.
        description: the case's tool's description as offered (to compare pick rates across
            description edits).
        ask: the case's request in words.
    """

    step: Step | None = None
    pick: PickCheck | None = None
    turn: CallerTurn | None = None
    served_model: str = ""
    description: str = ""
    ask: str = ""


async def run_caller_case(
    client: Client,
    agent: Agent,
    *,
    served_model: str,
    caller_model: str,
    caller: tuple[Provider, str],
    tool: ToolDefinition,
    case: TestCase,
    attempt: int,
    offered: Sequence[OfferedTool],
    setup: CallerSetup,
    judge_for: JudgeFor,
) -> CallerResult:
    """Run one caller case once for one caller model.

    Args:
        client: a client of the agent's server, whose model is ``served_model`` (served with
            the prefix when ``setup.prefix``).
        agent: the agent under test.
        served_model: the model that serves the picked call.
        caller_model: the caller model (``provider:model``), named in the result.
        caller: its provider and model name.
        tool: the case's tool (the result is named by it; the call served is of the tool the
            case expects picked, see :func:`wanted_tool`).
        case: the caller case (``ask`` set).
        attempt: 1 … repeat.
        offered: the whole tool list (our served list, then the decoys).
        setup: the run's caller setup.
        judge_for: the judge model for a served model.

    Returns:
        The result, naming the step that failed; never raises for a caller that fails.
    """
    name = served_name(agent, tool, prefix=setup.prefix)
    own = next((t for t in offered if t.name == name), None)
    provider, model_name = caller
    turn = await ask_caller(
        provider,
        model_name,
        model=caller_model,
        ask=case.ask or "",
        tools=offered,
        system_prompt=setup.system_prompt,
        parameters=_caller_parameters(agent),
        timeout=agent.settings.timeout_seconds,
    )
    wanted, target = wanted_tool(agent, tool, case, prefix=setup.prefix)
    pick = check_pick(
        case.expect,
        turn,
        wanted=wanted,
        parameters=target.parameters if target is not None else None,
        strip=(CONVERSATION_ID,) if target is not None and target.conversation else (),
    )
    description = own.description if own is not None else tool.description
    usage = turn.usage
    if not pick.serve or pick.call is None or target is None:
        outcome = CallOutcome(
            text=turn.error or turn.text,
            is_error=turn.error is not None,
            duration_ms=turn.duration_ms,
            input_tokens=usage.input_tokens,
            output_tokens=usage.output_tokens,
        )
        return CallerResult(
            tool.name,
            case.name,
            caller_model,
            attempt,
            pick.step is None,
            pick.failures,
            outcome,
            step=pick.step,
            pick=pick,
            turn=turn,
            served_model=served_model,
            description=description,
            ask=case.ask or "",
        )
    served_case = case.model_copy(update={"arguments": dict(pick.call.arguments), "ask": None})
    served = await run_case(
        client, agent, served_model, target, served_case, attempt, judge_for, served_name=wanted
    )
    return CallerResult(
        tool.name,
        case.name,
        caller_model,
        attempt,
        served.passed,
        served.failures,
        served.outcome,
        served.verdict,
        step=None if served.passed else "answer",
        pick=pick,
        turn=turn,
        served_model=served_model,
        description=description,
        ask=case.ask or "",
    )


def caller_unavailable(
    tool: ToolDefinition,
    case: TestCase,
    caller_model: str,
    attempt: int,
    reason: str,
    *,
    served_model: str = "",
) -> CallerResult:
    """The result of a caller case whose caller model cannot be used at all (an unknown
    provider, a key that is not set): failed at step ``caller`` with ``reason``."""
    failure = Failure("caller", f"the caller model {caller_model} cannot be used: {reason}")
    return failed_before_caller(tool, case, caller_model, attempt, failure, served_model)


def failed_before_caller(
    tool: ToolDefinition,
    case: TestCase,
    caller_model: str,
    attempt: int,
    failure: Failure,
    served_model: str,
) -> CallerResult:
    """A caller case's run that ended before its caller model answered, at step ``caller``,
    with ``failure`` (its message is the run's outcome)."""
    return CallerResult(
        tool.name,
        case.name,
        caller_model,
        attempt,
        False,
        (failure,),
        CallOutcome(failure.message, True, 0.0),
        step="caller",
        served_model=served_model,
        description=tool.description,
        ask=case.ask or "",
    )


def _caller_parameters(agent: Agent) -> dict[str, object]:
    """The caller request's parameters: the agent's temperature and seed, so a run can be made
    as repeatable as the endpoint allows, and the callers' output limit
    (``settings.callers.maxOutputTokens``); the rest stays the endpoint's default."""
    settings = agent.settings
    chosen: dict[str, object] = {"max_tokens": settings.callers.max_output_tokens}
    if settings.temperature is not None:
        chosen["temperature"] = settings.temperature
    if settings.seed is not None:
        chosen["seed"] = settings.seed
    return chosen
