"""The outcome of a chat run for callers that do not render events as they come.

``run_to_result(session, message)`` plays one user turn and returns a ``SessionResult``: the
answer (or the failure), the inner tool calls, token usage, duration and turns. The served MCP
server's structured result and ``metaagent call`` are built on it; the chat tab renders the events
instead.
"""

from __future__ import annotations

import time
from collections.abc import AsyncIterator
from dataclasses import dataclass, replace
from typing import Any

from mcp_export.errors import ExportError, SessionError
from mcp_export.providers.base import Usage
from mcp_export.session.events import (
    FinalAnswer,
    SessionEvent,
    SessionFailed,
    SessionStarted,
    ToolCallFinished,
    ToolCallRecord,
    TurnFinished,
)
from mcp_export.session.failure import failure_for

__all__ = ["SessionResult", "aclose_stream", "collect_result", "usage_text"]


async def aclose_stream(stream: AsyncIterator[Any]) -> None:
    """Close an async iterator now if it can be closed (async generators can)."""
    aclose = getattr(stream, "aclose", None)
    if aclose is not None:
        await aclose()


def usage_text(usage: Usage) -> str:
    """``40 tokens in, 7 out`` with the counts that are known ("" when neither is); a total that
    leaves out a request's unknown count reads ``≥ 40`` and says so."""
    parts: list[str] = []
    for count, partial, unit in (
        (usage.input_tokens, usage.input_partial, "tokens in"),
        (usage.output_tokens, usage.output_partial, "out"),
    ):
        if count is not None:
            parts.append(f"{'≥ ' if partial else ''}{count} {unit}")
    if parts and not parts[0].endswith("tokens in"):
        parts[0] = parts[0].replace(" out", " tokens out")
    text = ", ".join(parts)
    if usage.input_partial or usage.output_partial:
        text += " (a model request did not report its count)"
    return text


@dataclass(frozen=True)
class SessionResult:
    """The outcome of one run, for callers that do not render events as they come.

    ``answer`` is empty and ``error``/``failure`` are set when the run failed; the trace
    (``tool_calls``, ``usage``, ``turns``) is there either way. ``stop_reason`` is why the
    answer's model request ended (``max_tokens``: cut off at the token limit).
    """

    answer: str
    tool_calls: tuple[ToolCallRecord, ...]
    usage: Usage
    duration_ms: float
    turns: int
    error: ExportError | None = None
    failure: SessionFailed | None = None
    session_id: str | None = None
    thread_id: str | None = None
    stop_reason: str | None = None


async def collect_result(events: AsyncIterator[SessionEvent]) -> SessionResult:
    """Drain a run's events into a ``SessionResult`` (closing the iterator in any case)."""
    session_id: str | None = None
    thread_id: str | None = None
    calls: list[ToolCallRecord] = []
    turns = 0
    usages: list[Usage] = []
    failure: SessionFailed | None = None
    started = time.perf_counter()
    try:
        async for event in events:
            if isinstance(event, SessionStarted):
                session_id, thread_id = event.session_id, event.thread_id
            elif isinstance(event, ToolCallFinished):
                calls.append(event.record())
            elif isinstance(event, TurnFinished):
                turns = event.turn
                usages.append(Usage(event.input_tokens, event.output_tokens))
            elif isinstance(event, FinalAnswer):
                return SessionResult(
                    event.text,
                    event.tool_calls,
                    event.usage,
                    event.duration_ms,
                    event.turns,
                    session_id=session_id,
                    thread_id=thread_id,
                    stop_reason=event.stop_reason,
                )
            elif isinstance(event, SessionFailed):
                failure = event
                break
        duration_ms = (time.perf_counter() - started) * 1000
    finally:
        await aclose_stream(events)
    if failure is None:
        failure = failure_for(SessionError("the session ended without an answer or an error"))
        failure = replace(failure, tool_calls=tuple(calls), turns=turns, usage=Usage.total(usages))
    return SessionResult(
        "",
        failure.tool_calls,
        failure.usage,
        duration_ms,
        failure.turns,
        error=failure.error,
        failure=failure,
        session_id=session_id,
        thread_id=thread_id,
    )
