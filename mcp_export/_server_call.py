"""One served ``tools/call``: arguments → prompt → a fresh chat session → the result.

The steps, each ending the call with an ``isError`` result when it refuses:

1. split off ``conversation_id`` (conversation tools), validate the rest against the tool's
   parameters with defaults applied (every bad field listed, one per line);
2. fill the prompt template;
3. find the conversation to continue (an unknown id is refused, never silently replaced);
4. choose the model (``_server_model``);
5. run a fresh ``ChatSession`` (its own id; the agent's toolbox and provider are shared), turning
   its events into progress notifications when the caller sent a progress token;
6. answer text + ``structuredContent``, or the failure with what to do.

Every call is recorded in the history store (``_server_history``) unless history is off.
A cancelled call cancels its session, which aborts the model request and the inner tool calls;
the cancellation then propagates, as the SDK expects.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from contextlib import aclosing
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import mcp_types as types

from ._server_history import CallRecord
from ._server_model import ModelChoice, NoModel, choose_model
from ._server_result import (
    answer_result,
    error_result,
    failure_result,
    progress_message,
    structured_answer,
)
from ._server_tools import CONVERSATION_ID, ServedTool

if TYPE_CHECKING:
    from mcp.server.context import ServerRequestContext

    from ._events import FinalAnswer, SessionFailed
    from ._history import HistoryStore
    from ._server_runtime import AgentRuntime
    from ._session import ChatSession
    from .providers._base import ChatMessage, Provider

__all__ = [
    "ServedRequest",
    "drive",
    "finish",
    "new_session",
    "run_call",
]

logger = logging.getLogger(__name__)


def _argument_problems(
    tool: ServedTool, raw: Mapping[str, Any] | None
) -> tuple[dict[str, Any] | None, str | None, list[str]]:
    """Validated arguments (defaults applied), the conversation id, and the problems found."""
    from schema_types._arguments import validate_arguments
    from schema_types._errors import ArgumentsError, Problem

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
        problems.sort(key=lambda p: p.path)
        return None, None, [str(p) for p in problems]
    return arguments, conversation, []


def _render(tool: ServedTool, arguments: Mapping[str, Any]) -> str:
    from schema_types._template import render

    definition = tool.definition
    return render(
        definition.prompt,
        arguments,
        definition.parameters,
        tool_name=definition.name,
        tool_description=definition.description,
    )


async def run_call(
    ctx: ServerRequestContext[Any],
    tool: ServedTool,
    runtime: AgentRuntime,
    params: types.CallToolRequestParams,
) -> types.CallToolResult | types.InputRequiredResult:
    """Answer one ``tools/call`` of ``tool`` (see the module docstring)."""
    from schema_types._errors import SchemaDefinitionError

    try:
        arguments, conversation, problems = _argument_problems(tool, params.arguments)
    except SchemaDefinitionError as exc:
        return error_result(
            f"{tool.name} cannot be called: its parameters schema in {tool.owner.path} is not "
            f"valid JSON Schema ({exc}); fix the agent file"
        )
    if arguments is None:
        lines = "\n".join(problems)
        return error_result(f"Invalid arguments for {tool.name}:\n{lines}")
    prompt = _render(tool, arguments)
    history = runtime.policy.history
    prior: list[ChatMessage] = []
    if conversation is not None:
        found = history.conversation(conversation, tool)
        if isinstance(found, str):
            return error_result(found)
        prior = found
    try:
        choice = choose_model(
            runtime.agent, ctx, runtime.configured_provider, allow_sampling=runtime.policy.sampling
        )
    except NoModel as exc:
        return error_result(f"{tool.name} cannot run: {exc}")
    request = ServedRequest(ctx, tool, runtime, arguments, prompt, conversation, prior, choice)
    if choice.sampling == "round-trip":
        from ._server_round_trip import run_round_trip

        return await run_round_trip(request, params)
    record = history.start(ctx, tool, prompt, arguments, conversation)
    session = new_session(request, record.thread_id, history.store)
    try:
        outcome = await drive(ctx, session, prompt)
    except BaseException:
        record.cancelled()  # synchronous: runs even while the call is being cancelled
        raise
    finally:
        await runtime.note_inner_tools()
    return finish(
        tool, record, outcome, record.thread_id, unavailable=runtime.unavailable_servers()
    )


@dataclass(frozen=True)
class ServedRequest:
    """One call, checked and ready to run."""

    ctx: ServerRequestContext[Any]
    tool: ServedTool
    runtime: AgentRuntime
    arguments: dict[str, Any]
    prompt: str
    conversation: str | None
    prior: list[ChatMessage]
    choice: ModelChoice


def new_session(
    request: ServedRequest,
    thread_id: str | None,
    history: HistoryStore | None,
    *,
    provider: Provider | None = None,
    toolbox: Any = None,
) -> ChatSession:
    """A fresh chat session for one call, on the chosen model.

    Args:
        request: the call.
        thread_id: the history thread the session writes into.
        history: the store, or None (not recorded).
        provider: use this provider instead of the chosen one (round-trip sampling).
        toolbox: use this toolbox instead of the agent's (round-trip replay).
    """
    from ._session import ChatSession

    choice, runtime = request.choice, request.runtime
    if toolbox is None:
        toolbox = runtime.toolbox()
    if provider is None:
        provider = choice.provider
    if provider is None:
        from ._server_sampling import SessionSampler
        from .providers._sampling import SamplingProvider

        provider = SamplingProvider(
            SessionSampler(request.ctx), supports_tools=choice.sampling_tools
        )
    if choice.sampling is not None and not choice.sampling_tools:
        toolbox = None  # the client's model cannot call tools: offer none
    return ChatSession(
        runtime.agent,
        provider=provider,
        model=choice.model,
        toolbox=toolbox,
        history=history,
        thread_id=thread_id,
        thread_kind="served",
        prior_messages=request.prior,
        agent_path=str(request.tool.owner.path),
    )


async def drive(
    ctx: ServerRequestContext[Any],
    session: ChatSession | Any,
    prompt: str,
    *,
    news: Callable[[Any], bool] | None = None,
) -> FinalAnswer | SessionFailed:
    """Run one turn of ``session``, reporting progress; the final event.

    Args:
        ctx: the call's context (progress goes to the caller's token, if it sent one).
        session: the chat session.
        prompt: the user message.
        news: which events are worth a progress notification (default: all).
    """
    from ._events import FinalAnswer, SessionFailed

    step = 0
    async with aclosing(session.run(prompt)) as events:
        async for event in events:
            if isinstance(event, FinalAnswer | SessionFailed):
                return event
            # A no-op when the caller sent no progress token.
            if news is None or news(event):
                message = progress_message(event)
                if message is not None:
                    step += 1
                    await ctx.session.report_progress(step, None, message)
    from ._errors import SessionError
    from ._session_failure import failure_for

    return failure_for(SessionError("the session ended without an answer"))


def finish(
    tool: ServedTool,
    record: CallRecord,
    outcome: FinalAnswer | SessionFailed,
    thread_id: str | None,
    *,
    duration_ms: float | None = None,
    unavailable: Mapping[str, str] | None = None,
) -> types.CallToolResult:
    """The call's result (recorded in history): the answer, or the failure with what to do.

    ``unavailable`` names the agent's tool servers that could not be used, with why: the answer's
    ``unavailableServers``, and a line of a failure's text.
    """
    from ._events import SessionFailed

    if isinstance(outcome, SessionFailed):
        record.failed(outcome.message)
        return failure_result(tool.name, outcome, unavailable=unavailable)
    if not outcome.text.strip():
        message = "the model answered with an empty message"
        record.failed(message)
        return error_result(
            f"{tool.name} failed: {message}\nWhat to do: try again, or make the prompt ask for "
            "a written answer"
        )
    elapsed = outcome.duration_ms if duration_ms is None else duration_ms
    conversation = thread_id if tool.conversation else None
    structured = structured_answer(
        outcome, duration_ms=elapsed, conversation_id=conversation, unavailable=unavailable
    )
    record.succeeded(outcome, thread_id)
    return answer_result(structured)
