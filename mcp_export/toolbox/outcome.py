"""A tool server's answer in the form the model gets it back: ``ToolOutcome``.

Text blocks are joined; images, audio and resources are summarized (the model gets their kind and
size, not their bytes). A result longer than ``MAX_RESULT_CHARS`` is cut there and becomes an
error result that says so: the model still sees the start, and one runaway tool cannot make the
next model request too large for any provider (or the history and the served trace huge).
"""

from __future__ import annotations

import base64
import binascii
import json
from dataclasses import dataclass
from typing import Any

import mcp_types as types

__all__ = ["MAX_RESULT_CHARS", "ToolOutcome", "outcome_from_result"]

# About 25 000 tokens: what clients such as Claude Code let one tool result take by default.
MAX_RESULT_CHARS = 100_000


@dataclass(frozen=True)
class ToolOutcome:
    """The result of one tool call, in the form the model gets it back.

    ``refused`` means the permission rule stopped the call: the tool did not run.
    """

    text: str
    is_error: bool
    structured: dict[str, Any] | None = None
    refused: bool = False
    duration_ms: float = 0.0


def _blob_size(data: str) -> int:
    try:
        return len(base64.b64decode(data, validate=False))
    except (binascii.Error, ValueError):
        return len(data)


def _content_text(block: types.ContentBlock) -> str:
    """A content block as text for the model: text as is, anything else summarized."""
    if isinstance(block, types.TextContent):
        return block.text
    if isinstance(block, types.ImageContent | types.AudioContent):
        return f"[{block.mime_type}, {_blob_size(block.data)} bytes]"
    if isinstance(block, types.ResourceLink):
        return f"[resource link: {block.uri}]"
    if isinstance(block, types.EmbeddedResource):
        resource = block.resource
        if isinstance(resource, types.TextResourceContents):
            return f"[resource {resource.uri}]\n{resource.text}"
        mime = resource.mime_type or "binary"
        return f"[resource {resource.uri}, {mime}, {_blob_size(resource.blob)} bytes]"
    return f"[{getattr(block, 'type', 'unknown')} content]"


def outcome_from_result(
    result: types.CallToolResult, duration_ms: float, *, tool: str = "the tool"
) -> ToolOutcome:
    """Turn an MCP tool result into a ``ToolOutcome`` (text blocks joined, others summarized).

    Args:
        result: The tool server's answer.
        duration_ms: How long the call took.
        tool: The tool's name, for the message when the result is cut.
    """
    text = "\n".join(_content_text(block) for block in result.content)
    value = result.structured_content
    structured = value if isinstance(value, dict) or value is None else {"result": value}
    if not text and structured is not None:
        text = json.dumps(structured, ensure_ascii=False)
    if result.is_error and not text:
        text = "the tool reported an error without saying why"
    if len(text) > MAX_RESULT_CHARS:
        note = (
            f"\n[cut: {tool} returned {len(text):,} characters, more than the "
            f"{MAX_RESULT_CHARS:,} a tool result may have; ask it for less]"
        )
        return ToolOutcome(text[:MAX_RESULT_CHARS] + note, True, None, duration_ms=duration_ms)
    return ToolOutcome(text, result.is_error, structured, duration_ms=duration_ms)
