"""What a typed tool's caller receives: the object, its JSON as text, and the trace in ``_meta``.

A tool with an ``outputSchema`` of its own is listed with it (``server.tools``); a successful
call answers ``structuredContent`` = the checked object and, as the MCP specification recommends
for clients that read only text, one text content holding the same object as JSON. The trace an
untyped tool puts in ``structuredContent`` (inner tool calls, usage, turns, duration, a
conversation tool's ``conversationId``, the servers that could not be used) moves to
``_meta[TRACE_META]``, with how the schema was asked for and whether a repair turn was needed
(``output``). A conversation tool's id is also ``_meta[CONVERSATION_META]``.

Everything a caller receives is redacted here, as ``server.result`` does for untyped tools.
"""

from __future__ import annotations

import json
from typing import Any

import mcp_types as types

from mcp_export.redact import redact, redact_json
from mcp_export.session.output_events import OutputChecked

__all__ = ["CONVERSATION_META", "TRACE_META", "typed_answer_result"]

TRACE_META = "io.metaagent/trace"
"""The ``_meta`` key of a typed tool's result that holds the call's trace."""

CONVERSATION_META = "io.metaagent/conversationId"
"""The ``_meta`` key of a typed conversation tool's result: pass it back as
``conversation_id``."""


def typed_answer_result(output: OutputChecked, trace: dict[str, Any]) -> types.CallToolResult:
    """A typed tool's successful result.

    Args:
        output: the accepted answer.
        trace: ``server.result.structured_answer``'s content for the call (its ``answer`` is
            left out: the object is the answer).
    """
    value: Any = redact_json(output.value)
    meta_trace: dict[str, Any] = redact_json({k: v for k, v in trace.items() if k != "answer"})
    meta_trace["output"] = {"method": output.method, "repaired": output.repaired}
    meta: dict[str, Any] = {TRACE_META: meta_trace}
    if "conversationId" in meta_trace:
        meta[CONVERSATION_META] = meta_trace["conversationId"]
    text = redact(json.dumps(value, ensure_ascii=False))
    result = types.CallToolResult(
        content=[types.TextContent(type="text", text=text)],
        structured_content=value,
        is_error=False,
    )
    result.meta = meta
    return result
