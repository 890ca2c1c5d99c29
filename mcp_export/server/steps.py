"""The steps of a served call that a direct call and a sampling round trip share: the checked
request, its fresh chat session, driving that session with progress, and the recorded result.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from contextlib import aclosing
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import mcp_types as types

from mcp_export.errors import SessionError
from mcp_export.providers.sampling import SamplingProvider
from mcp_export.redact import redact
from mcp_export.server.history import CallRecord
from mcp_export.server.model import ModelChoice
from mcp_export.server.result import (
    answer_result,
    failure_result,
    progress_message,
    structured_answer,
    with_trace,
)
from mcp_export.server.sampling import SessionSampler
from mcp_export.server.tools import ServedTool
from mcp_export.server.typed_result import typed_answer_result
from mcp_export.session.chat import ChatSession
from mcp_export.session.events import FinalAnswer, Notice, SessionFailed, TurnFinished
from mcp_export.session.failure import failure_for
from mcp_export.session.typed import OutputSpec

if TYPE_CHECKING:
    from mcp.server.context import ServerRequestContext

    from mcp_export.history.store import HistoryStore
    from mcp_export.providers.base import ChatMessage, Provider
    from mcp_export.server.ops import CallMeter
    from mcp_export.server.runtime import AgentRuntime

__all__ = ["THREAD_META", "ServedRequest", "drive", "finish", "new_session"]

THREAD_META = "io.metaagent/threadId"
"""The ``_meta`` key of a recorded call's result that names its history thread."""

logger = logging.getLogger(__name__)


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
    choice, runtime = request.choice, request.runtime
    if toolbox is None:
        toolbox = runtime.toolbox()
    if provider is None:
        provider = choice.provider
    if provider is None:
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
        output=OutputSpec.of(request.tool.definition),
    )


async def drive(
    ctx: ServerRequestContext[Any],
    session: ChatSession | Any,
    prompt: str,
    *,
    news: Callable[[Any], bool] | None = None,
    meter: CallMeter | None = None,
) -> FinalAnswer | SessionFailed:
    """Run one turn of ``session``, reporting progress; the final event.

    A ``Notice`` is reported once per call, as a progress message and in the server's log (info).

    Args:
        ctx: the call's context (progress goes to the caller's token, if it sent one).
        session: the chat session.
        prompt: the user message.
        news: which events are worth a progress notification (default: all); the tokens of
            the others are not metered either (they were when they were new).
        meter: the call's metrics, which count the tokens of each model turn.
    """
    step = 0
    noted: set[str] = set()
    async with aclosing(session.run(prompt)) as events:
        async for event in events:
            if isinstance(event, FinalAnswer | SessionFailed):
                return event
            if news is not None and not news(event):
                continue
            if meter is not None and isinstance(event, TurnFinished):
                meter.turn_finished(event.input_tokens, event.output_tokens)
            if isinstance(event, Notice):
                if event.text in noted:
                    continue
                noted.add(event.text)
                logger.info("note: %s", redact(event.text))
            message = progress_message(event)
            if message is not None:
                step += 1
                # A no-op when the caller sent no progress token.
                await ctx.session.report_progress(step, None, message)

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

    A recorded call's result carries its history thread in ``_meta`` (:data:`THREAD_META`), so
    the studio can open the transcript of a test case's call; every result carries its run's
    trace there (``server.result.RUN_META``), a failure's too, with what the call cost
    (``CallRecord.cost``).

    ``unavailable`` names the agent's tool servers that could not be used, with why: the answer's
    ``unavailableServers``, and a line of a failure's text.
    """
    cost = record.cost(outcome)
    if isinstance(outcome, SessionFailed):
        record.failed(outcome, cost)
        result = failure_result(tool.name, outcome, unavailable=unavailable)
    else:
        elapsed = outcome.duration_ms if duration_ms is None else duration_ms
        conversation = thread_id if tool.conversation else None
        structured = structured_answer(
            outcome, duration_ms=elapsed, conversation_id=conversation, unavailable=unavailable
        )
        record.succeeded(outcome, thread_id, cost)
        if outcome.output is not None:
            result = typed_answer_result(outcome.output, structured)
        else:
            result = answer_result(structured)
    result = with_trace(result, outcome, cost)
    if thread_id is not None:
        result.meta = {**(result.meta or {}), THREAD_META: thread_id}
    return result
