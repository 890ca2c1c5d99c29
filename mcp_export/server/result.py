"""What a served call answers: the result shapes and the progress messages, in one place.

- A successful call: the answer as text, plus ``structuredContent`` matching the tool's
  ``outputSchema`` (``server.tools.OUTPUT_SCHEMA``).
- A refused or failed call: an ``isError`` result whose text says what went wrong and what to do;
  never a protocol error (those are kept for an unknown tool) and never an empty success.

- Either way, ``_meta`` holds the run's trace under :data:`RUN_META` (``run_trace``): the inner
  tool calls, the model requests (``turns``), the token totals with whether each is a lower
  bound (``inputTokensPartial``: a request did not report its count), what the call cost
  (``cost``: ``{"usd": dollars or null (unknown, never 0), "atLeast": a lower bound, "why"}``),
  and for an answer its ``stopReason`` and ``truncated``. A failed call keeps the trace of
  what ran before it failed.
- An answer cut off at the token limit gets a second text block saying so
  (:data:`TRUNCATED_NOTE`; the trace lists it in ``notes``), so a client that reads only the
  text still learns the answer is incomplete.

Every text a result or a progress message carries passes ``redact`` here: whatever a caller
receives was redacted, whichever step made it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import mcp_types as types

from mcp_export.costs.cost import Cost
from mcp_export.providers.base import Usage
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
    "RUN_META",
    "TRUNCATED_NOTE",
    "answer_result",
    "error_result",
    "failure_result",
    "progress_message",
    "run_trace",
    "structured_answer",
    "token_counts",
    "with_trace",
]

RUN_META = "io.metaagent/run"
"""The ``_meta`` key of a served call's result that holds its run's trace (``run_trace``)."""

TRUNCATED_NOTE = (
    "Note: this answer was cut off at the model's token limit (stop reason: max_tokens); it "
    "is incomplete."
)


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
    None (``null`` on the wire), never 0; so is a total that would leave out a request's
    unknown count."""
    calls = answer.tool_calls if tool_calls is None else tool_calls
    data: dict[str, Any] = {
        "answer": answer.text,
        "toolCalls": [_call_data(c) for c in calls],
        # Exact totals only: a lower bound is null here (the trace in _meta has it, marked).
        "usage": {
            "inputTokens": answer.usage.exact_input,
            "outputTokens": answer.usage.exact_output,
        },
        "durationMs": round(duration_ms, 3),
        "turns": answer.turns,
    }
    if conversation_id is not None:
        data["conversationId"] = conversation_id
    if unavailable:
        data["unavailableServers"] = dict(unavailable)
    return data


def _usage_data(usage: Usage) -> dict[str, Any]:
    return {
        "inputTokens": usage.input_tokens,
        "inputTokensPartial": usage.input_partial,
        "outputTokens": usage.output_tokens,
        "outputTokensPartial": usage.output_partial,
    }


def run_trace(outcome: FinalAnswer | SessionFailed, cost: Cost | None = None) -> dict[str, Any]:
    """The trace of a call's run (redacted), for ``_meta`` under :data:`RUN_META`, with what
    it cost when that was reckoned (``cost``)."""
    data: dict[str, Any] = {
        "toolCalls": [_call_data(c) for c in outcome.tool_calls],
        "turns": outcome.turns,
        "usage": _usage_data(outcome.usage),
    }
    if cost is not None:
        data["cost"] = cost.as_json()
    if isinstance(outcome, FinalAnswer):
        data["stopReason"] = outcome.stop_reason
        data["truncated"] = outcome.truncated
        if outcome.truncated:
            data["notes"] = [TRUNCATED_NOTE]
    cleaned: dict[str, Any] = redact_json(data)
    return cleaned


def with_trace(
    result: types.CallToolResult, outcome: FinalAnswer | SessionFailed, cost: Cost | None = None
) -> types.CallToolResult:
    """``result`` with the run's trace (and ``cost``) in its ``_meta`` and, for an answer cut
    off at the token limit, the note that says so after the answer."""
    result.meta = {**(result.meta or {}), RUN_META: run_trace(outcome, cost)}
    if isinstance(outcome, FinalAnswer) and outcome.truncated:
        result.content.append(types.TextContent(type="text", text=TRUNCATED_NOTE))
    return result


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
