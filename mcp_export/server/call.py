"""One served ``tools/call``: arguments → prompt → a fresh chat session → the result.

The steps, each ending the call with an ``isError`` result when it refuses:

1. split off ``conversation_id`` (conversation tools), validate the rest against the tool's
   parameters with defaults applied (every bad field listed, one per line);
2. fill the prompt template;
3. claim the conversation to continue and read it (an unknown id is refused, never silently
   replaced; a turn of it already in progress is waited for, a few seconds at most, see
   ``server/turns.py``);
4. choose the model (``server.model``);
5. run a fresh ``ChatSession`` (its own id; the agent's toolbox and provider are shared), turning
   its events into progress notifications when the caller sent a progress token;
6. answer text + ``structuredContent``, or the failure with what to do.

Every call is recorded in the history store (``server.history``) unless history is off, and
counted in the server's metrics (``server.ops``) when it keeps them: a refusal caused by the
caller (bad arguments, an unknown conversation) as ``refused``, one caused by this server's
state (no model configured, a tool whose schema cannot be used, the history out of reach) as
``unavailable``.
A cancelled call cancels its session, which aborts the model request and the inner tool calls;
the cancellation then propagates, as the SDK expects.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any

import anyio
import mcp_types as types

from mcp_export.server.cache import CallCache, answer_from_cache
from mcp_export.server.fill import fill_prompt
from mcp_export.server.history import NoConversation
from mcp_export.server.model import NoModel, choose_model
from mcp_export.server.result import error_result
from mcp_export.server.round_trip import run_round_trip
from mcp_export.server.steps import ServedRequest, drive, finish, new_session
from mcp_export.server.tools import CONVERSATION_ID, ServedTool
from mcp_export.server.turns import open_conversation
from schema_types.arguments import validate_arguments
from schema_types.errors import ArgumentsError, Problem, SchemaDefinitionError

if TYPE_CHECKING:
    from mcp.server.context import ServerRequestContext

    from mcp_export.providers.base import ChatMessage
    from mcp_export.server.ops import CallMeter, Outcome, ServerMetrics
    from mcp_export.server.runtime import AgentRuntime

__all__ = ["invalid_arguments_text", "run_call", "unusable_schema_text"]

logger = logging.getLogger(__name__)


def invalid_arguments_text(tool: ServedTool, problems: Iterable[Problem]) -> str:
    """What a call (or a prompt) with bad arguments is told: every problem, one per line, by path.

    ``prompts/get`` refuses its bad arguments with this text too, so a prompt and a call with
    the same arguments are told the same.
    """
    lines = "\n".join(str(p) for p in sorted(problems, key=lambda p: p.path))
    return f"Invalid arguments for {tool.name}:\n{lines}"


def unusable_schema_text(tool: ServedTool, error: SchemaDefinitionError) -> str:
    """What a call (or a prompt) is told when the tool's parameters schema cannot be used."""
    return (
        f"{tool.name} cannot be called: its parameters schema in {tool.owner.path} is not "
        f"valid JSON Schema ({error}); fix the agent file"
    )


def _argument_problems(
    tool: ServedTool, raw: Mapping[str, Any] | None
) -> tuple[dict[str, Any] | None, str | None, list[Problem]]:
    """Validated arguments (defaults applied), the conversation id, and the problems found."""
    arguments = dict(raw or {})
    problems: list[Problem] = []
    conversation: str | None = None
    if tool.conversation and CONVERSATION_ID in arguments:
        value = arguments.pop(CONVERSATION_ID)
        if isinstance(value, str) and value.strip():
            conversation = value.strip()
        elif value is not None:
            problems.append(
                Problem(CONVERSATION_ID, "must be the conversationId string of an earlier answer")
            )
    try:
        arguments = validate_arguments(tool.definition.parameters, arguments)
    except ArgumentsError as exc:
        problems.extend(exc.problems)
    if problems:
        return None, None, problems
    return arguments, conversation, []


_BULKY_NODES = 2_000
_BULKY_TEXT = 256 * 1024


def _bulky(arguments: Mapping[str, Any] | None) -> bool:
    """Whether arguments hold more than ``_BULKY_NODES`` values or ``_BULKY_TEXT`` characters
    of text (a walk that stops at either limit, so it costs little whatever their size)."""
    pending: list[Any] = [arguments] if arguments else []
    nodes = text = 0
    while pending:
        value = pending.pop()
        nodes += 1
        if isinstance(value, str):
            text += len(value)
        elif isinstance(value, Mapping | list):
            if len(value) > _BULKY_NODES:
                return True
            if isinstance(value, Mapping):
                text += sum(len(key) for key in value)
                pending.extend(value.values())
            else:
                pending.extend(value)
        if nodes > _BULKY_NODES or text > _BULKY_TEXT:
            return True
    return False


async def run_call(
    ctx: ServerRequestContext[Any],
    tool: ServedTool,
    runtime: AgentRuntime,
    params: types.CallToolRequestParams,
    *,
    metrics: ServerMetrics | None = None,
) -> types.CallToolResult | types.InputRequiredResult:
    """Answer one ``tools/call`` of ``tool`` (see the module docstring).

    Args:
        ctx: the call's context.
        tool: the tool called.
        runtime: what the calls of the tool's agent share.
        params: the call's parameters.
        metrics: the server's metrics, which count the call by outcome (``ok``, ``error``,
            ``cancelled``, ``refused``, ``unavailable``), its latency and its model tokens. A
            sampling round
            that waits for the client's model is no outcome: the round that ends the run is.
    """
    if metrics is None:
        return await _answer(ctx, tool, runtime, params, None)
    meter = metrics.start_call(tool.name)
    try:
        result = await _answer(ctx, tool, runtime, params, meter)
    except anyio.get_cancelled_exc_class():
        meter.finish("cancelled")
        raise
    except BaseException:
        meter.finish("error")
        raise
    if isinstance(result, types.InputRequiredResult):
        meter.discard()
    else:
        meter.finish("error" if result.is_error else "ok")
    return result


def _refuse(
    meter: CallMeter | None, text: str, outcome: Outcome = "refused"
) -> types.CallToolResult:
    """The call refused with ``text``, counted as ``refused`` (the caller's doing) or
    ``unavailable`` (this server's)."""
    if meter is not None:
        meter.finish(outcome)
    return error_result(text)


async def _answer(
    ctx: ServerRequestContext[Any],
    tool: ServedTool,
    runtime: AgentRuntime,
    params: types.CallToolRequestParams,
    meter: CallMeter | None,
) -> types.CallToolResult | types.InputRequiredResult:
    try:
        if _bulky(params.arguments):
            # Checking a big value takes long in pure Python; in a worker thread the event loop
            # still answers the other requests meanwhile (the thread gives up the interpreter
            # lock every few milliseconds).
            arguments, conversation, problems = await anyio.to_thread.run_sync(
                _argument_problems, tool, params.arguments
            )
        else:
            arguments, conversation, problems = _argument_problems(tool, params.arguments)
    except SchemaDefinitionError as exc:
        return _refuse(meter, unusable_schema_text(tool, exc), "unavailable")
    if arguments is None:
        return _refuse(meter, invalid_arguments_text(tool, problems))
    prompt = await fill_prompt(tool, arguments)
    if conversation is None:
        return await _turn(ctx, tool, runtime, params, meter, arguments, prompt, None, [])
    found = await open_conversation(runtime.policy.history, conversation, tool)
    if isinstance(found, NoConversation):
        return _refuse(meter, found.text, "unavailable" if found.unavailable else "refused")
    prior, turn = found
    try:
        return await _turn(
            ctx, tool, runtime, params, meter, arguments, prompt, conversation, prior
        )
    finally:
        await turn.release()


async def _turn(
    ctx: ServerRequestContext[Any],
    tool: ServedTool,
    runtime: AgentRuntime,
    params: types.CallToolRequestParams,
    meter: CallMeter | None,
    arguments: dict[str, Any],
    prompt: str,
    conversation: str | None,
    prior: list[ChatMessage],
) -> types.CallToolResult | types.InputRequiredResult:
    """Steps 4 to 6, with the conversation (if any) claimed by this call."""
    history = runtime.policy.history
    try:
        choice = choose_model(
            runtime.agent, ctx, runtime.configured_provider, allow_sampling=runtime.policy.sampling
        )
    except NoModel as exc:
        return _refuse(meter, f"{tool.name} cannot run: {exc}", "unavailable")
    request = ServedRequest(ctx, tool, runtime, arguments, prompt, conversation, prior, choice)
    if choice.sampling == "round-trip":
        return await run_round_trip(request, params)
    cache = CallCache.for_call(request)
    if cache is not None:
        hit = await cache.lookup()
        if hit is not None:
            return answer_from_cache(request, cache, hit)
    record = history.start(
        ctx, tool, prompt, arguments, conversation, pricing=runtime.pricing(choice)
    )
    session = new_session(request, record.thread_id, history.store)
    try:
        outcome = await drive(ctx, session, prompt, meter=meter)
    except BaseException:
        record.cancelled()  # synchronous: runs even while the call is being cancelled
        raise
    finally:
        await runtime.note_inner_tools()
    result = finish(
        tool, record, outcome, record.thread_id, unavailable=runtime.unavailable_servers()
    )
    if cache is not None:
        await cache.keep(result)
    if tool.conversation:
        # The next turn may reach another instance of a shared store: it must find this one.
        await record.settled()
    return result
