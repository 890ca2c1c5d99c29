"""What a served call answers: the result shapes and the progress messages, in one place.

- A successful call: the answer as text, plus ``structuredContent`` matching the tool's
  ``outputSchema`` (``server.tools.OUTPUT_SCHEMA``).
- A refused or failed call: an ``isError`` result whose text says what went wrong and what to do;
  never a protocol error (those are kept for an unknown tool) and never an empty success.

Every text a result or a progress message carries passes ``redact`` here: whatever a caller
receives was redacted, whichever step made it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import mcp_types as types

from mcp_export.redact import redact, redact_json
from mcp_export.session.events import (
    FinalAnswer,
    Notice,
    SessionEvent,
    SessionFailed,
    ToolCallFinished,
    ToolCallRecord,
    ToolCallStarted,
    TurnFinished,
)

__all__ = [
    "answer_result",
    "error_result",
    "failure_result",
    "progress_message",
    "structured_answer",
    "token_counts",
]


def error_result(text: str) -> types.CallToolResult:
    """An ``isError`` result with ``text`` (redacted)."""
    return types.CallToolResult(
        content=[types.TextContent(type="text", text=redact(text))], is_error=True
    )


def failure_result(
    tool: str, failure: SessionFailed, *, unavailable: Mapping[str, str] | None = None
) -> types.CallToolResult:
    """The ``isError`` result of a run that ended without an answer: the reason, then the hint,
    then the agent's tool servers that could not be used."""
    text = f"{tool} failed: {failure.message}"
    if failure.hint:
        text += f"\nWhat to do: {failure.hint}"
    if unavailable:
        text += "\nUnavailable tool servers: " + "; ".join(
            f"{name}: {reason}" for name, reason in unavailable.items()
        )
    return error_result(text)


def _call_data(record: ToolCallRecord) -> dict[str, Any]:
    return {
        "name": record.name,
        "arguments": record.arguments,
        "isError": record.is_error,
        "durationMs": round(record.duration_ms, 3),
    }


def structured_answer(
    answer: FinalAnswer,
    *,
    duration_ms: float,
    tool_calls: Sequence[ToolCallRecord] | None = None,
    conversation_id: str | None = None,
    unavailable: Mapping[str, str] | None = None,
) -> dict[str, Any]:
    """The ``structuredContent`` of a successful call (``unavailableServers`` only when some
    of the agent's tool servers could not be used). A token count no model request reported is
    None (``null`` on the wire), never 0."""
    calls = answer.tool_calls if tool_calls is None else tool_calls
    data: dict[str, Any] = {
        "answer": answer.text,
        "toolCalls": [_call_data(c) for c in calls],
        "usage": {
            "inputTokens": answer.usage.input_tokens,
            "outputTokens": answer.usage.output_tokens,
        },
        "durationMs": round(duration_ms, 3),
        "turns": answer.turns,
    }
    if conversation_id is not None:
        data["conversationId"] = conversation_id
    if unavailable:
        data["unavailableServers"] = dict(unavailable)
    return data


def answer_result(structured: dict[str, Any]) -> types.CallToolResult:
    """A successful result: the answer as text and the whole ``structured`` content (redacted)."""
    cleaned: dict[str, Any] = redact_json(structured)
    return types.CallToolResult(
        content=[types.TextContent(type="text", text=cleaned["answer"])],
        structured_content=cleaned,
        is_error=False,
    )


def token_counts(input_tokens: int | None, output_tokens: int | None) -> str:
    """``40 tokens in, 7 out`` with only the counts that are known; "" when neither is."""
    known = []
    if input_tokens is not None:
        known.append(f"{input_tokens} tokens in")
    if output_tokens is not None:
        known.append(f"{output_tokens} out" if known else f"{output_tokens} tokens out")
    return ", ".join(known)


def progress_message(event: SessionEvent) -> str | None:
    """The progress message an event is worth, or None (text deltas, start and end are not).

    A token count the model server did not report is left out, never shown as 0.
    """
    if isinstance(event, TurnFinished):
        counts = token_counts(event.input_tokens, event.output_tokens)
        return f"model turn {event.turn} finished" + (f" ({counts})" if counts else "")
    if isinstance(event, Notice):
        return redact(f"note: {event.text}")
    if isinstance(event, ToolCallStarted):
        return redact(f"calling {event.name}")
    if isinstance(event, ToolCallFinished):
        outcome = "refused" if event.refused else "failed" if event.is_error else "finished"
        return redact(f"{event.name} {outcome} in {event.duration_ms:.0f} ms")
    return None
