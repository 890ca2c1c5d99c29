"""A conversation and its tools in the Chat Completions API's terms.

No value in ``messages`` is null (an assistant message that only calls tools has ``content: ""``);
a failed tool's result says ``Error:``; a tool name as ``tool_choice`` becomes a function choice.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from mcp_export.providers.base import ChatMessage, ToolSchema

__all__ = ["to_openai_messages", "to_openai_tools", "to_tool_choice"]


def to_openai_messages(messages: Sequence[ChatMessage]) -> list[dict[str, Any]]:
    """Chat Completions ``messages`` for a conversation.

    A failed tool's result is prefixed ``Error: `` (the API has no error flag) so the model can
    tell a failure from a result. No value is null: an assistant message that only calls tools
    has ``content: ""`` (OpenAI's own answers carry null there, but llama-cpp-python fails with
    a 500 on a null; every server takes the empty string), and a call whose arguments could not
    be read is sent back with ``{}`` (the model's text was not JSON, and servers that render the
    arguments into their prompt parse them).
    """
    out: list[dict[str, Any]] = []
    for message in messages:
        if message.role == "tool":
            content = f"Error: {message.content}" if message.is_error else message.content
            out.append(
                {"role": "tool", "tool_call_id": message.tool_call_id or "", "content": content}
            )
        elif message.role == "assistant" and message.tool_calls:
            out.append(
                {
                    "role": "assistant",
                    "content": message.content,
                    "tool_calls": [
                        {
                            "id": call.id,
                            "type": "function",
                            "function": {
                                "name": call.name,
                                "arguments": json.dumps(call.arguments, ensure_ascii=False),
                            },
                        }
                        for call in message.tool_calls
                    ],
                }
            )
        else:
            out.append({"role": message.role, "content": message.content})
    return out


def to_openai_tools(tools: Sequence[ToolSchema]) -> list[dict[str, Any]]:
    """Chat Completions ``tools`` (function tools)."""
    return [
        {
            "type": "function",
            "function": {
                "name": tool.name,
                "description": tool.description,
                "parameters": dict(tool.input_schema),
            },
        }
        for tool in tools
    ]


def to_tool_choice(choice: Any) -> Any:
    if isinstance(choice, str) and choice not in ("auto", "none", "required"):
        return {"type": "function", "function": {"name": choice}}
    return choice
