"""A conversation and a request's settings in the Anthropic Messages API's terms.

The conversation is translated properly (a peer system drops tool turns here): system messages go
to ``system=``; an assistant's tool calls become ``tool_use`` blocks (``input`` always an object);
tool results become ``tool_result`` blocks in user messages (consecutive results share one message,
``is_error`` carried) — the same grouping MCP sampling uses (``providers.sampling.to_turns``). What
the API refuses is not sent: text blocks that are empty or only whitespace are left out (an
assistant turn of tool calls alone carries none), and an error result without content says that
the tool failed without saying why.

Settings: a ``json_schema`` ``response_format`` → ``output_config.format``; ``tool_choice``
``auto``/``required`` (or ``any``)/``none``/a tool name/an OpenAI ``function`` choice →
``auto``/``any``/``none``/``tool``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from mcp_export.providers.base import ChatMessage, ToolSchema
from mcp_export.providers.sampling import (
    SamplingTurn,
    TextPart,
    ToolResultPart,
    ToolUsePart,
    to_turns,
)

__all__ = ["to_anthropic_messages", "to_anthropic_tools", "to_output_format", "to_tool_choice"]

_TOOL_CHOICES = {
    "auto": {"type": "auto"},
    "required": {"type": "any"},
    "any": {"type": "any"},
    "none": {"type": "none"},
}
_SILENT_FAILURE = "the tool failed without saying why"


def to_anthropic_messages(
    messages: Sequence[ChatMessage],
) -> tuple[str | None, list[dict[str, Any]]]:
    """``(system, messages)`` for the Messages API.

    A turn that is a single text is sent as a plain string; other turns as block lists. Text
    blocks that are empty or only whitespace are left out (the API refuses them), and so is an
    assistant turn with nothing else.
    """
    system, turns = to_turns(messages)
    sent = [_message(turn) for turn in turns]
    return system, [message for message in sent if message is not None]


def _message(turn: SamplingTurn) -> dict[str, Any] | None:
    blocks: list[dict[str, Any]] = []
    for part in turn.parts:
        if isinstance(part, TextPart):
            if part.text.strip():  # the API refuses empty and whitespace-only text blocks
                blocks.append({"type": "text", "text": part.text})
        elif isinstance(part, ToolUsePart):
            blocks.append(
                {"type": "tool_use", "id": part.id, "name": part.name, "input": dict(part.input)}
            )
        else:
            blocks.append(_tool_result(part))
    if not blocks:  # blank text only: an assistant's is left out, a user's the API judges
        texts = [part.text for part in turn.parts if isinstance(part, TextPart)]
        return {"role": "user", "content": "".join(texts)} if turn.role == "user" else None
    if len(blocks) == 1 and blocks[0]["type"] == "text":
        return {"role": turn.role, "content": blocks[0]["text"]}
    return {"role": turn.role, "content": blocks}


def _tool_result(part: ToolResultPart) -> dict[str, Any]:
    content = part.content
    if part.is_error and not content.strip():
        content = _SILENT_FAILURE  # the API refuses an error result without content
    block: dict[str, Any] = {
        "type": "tool_result",
        "tool_use_id": part.tool_use_id,
        "content": content,
    }
    if part.is_error:
        block["is_error"] = True
    return block


def to_anthropic_tools(tools: Sequence[ToolSchema]) -> list[dict[str, Any]]:
    """Messages API ``tools``."""
    return [
        {"name": t.name, "description": t.description, "input_schema": dict(t.input_schema)}
        for t in tools
    ]


def to_tool_choice(choice: Any) -> Any:
    """The Messages API form of ``tool_choice``: ``auto``/``required``(``any``)/``none``, a tool
    name, an OpenAI ``function`` choice (an agent moved from an OpenAI model), or Anthropic's own
    object as it is."""
    if isinstance(choice, str):
        return _TOOL_CHOICES.get(choice) or {"type": "tool", "name": choice}
    if isinstance(choice, dict) and choice.get("type") == "function":
        function = choice.get("function")
        name = function.get("name") if isinstance(function, dict) else choice.get("name")
        return {"type": "tool", "name": name}
    return choice


def to_output_format(response_format: Any) -> dict[str, Any] | None:
    if not isinstance(response_format, dict) or response_format.get("type") != "json_schema":
        return None
    spec = response_format.get("json_schema")
    schema = spec.get("schema") if isinstance(spec, dict) else response_format.get("schema")
    if not isinstance(schema, dict):
        return None
    return {"type": "json_schema", "schema": schema}
