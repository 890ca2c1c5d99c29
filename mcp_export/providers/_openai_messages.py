"""A conversation and its tools in the Chat Completions API's terms.

No value in ``messages`` is null (an assistant message that only calls tools has ``content: ""``);
a failed tool's result says ``Error:``; a tool name as ``tool_choice`` becomes a function choice,
or, for a server that takes ``tool_choice`` only as a string, ``"required"`` with only that tool
offered (``tools_and_choice``).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from mcp_export.providers.base import ChatMessage, ToolSchema

__all__ = [
    "STRING_CHOICE_SERVERS",
    "named_choice",
    "to_openai_messages",
    "to_openai_tools",
    "to_tool_choice",
    "tools_and_choice",
]

STRING_CHOICE_SERVERS = frozenset({"llama.cpp"})
"""The servers (``server_kind``) that take ``tool_choice`` only as a string. llama.cpp's
``llama-server`` reads it as a string (``json_value(body, "tool_choice", "auto")`` in
``tools/server/server-common.cpp``): ``auto``, ``none`` or ``required``; an object is the wrong
type and falls back to ``auto`` with only a warning in its log, and any other string is a 400
("Invalid tool_choice")."""


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


def named_choice(choice: Any) -> str | None:
    """The tool a ``tool_choice`` names, or None (``auto``, ``none``, ``required``, unset)."""
    if isinstance(choice, str) and choice not in ("auto", "none", "required"):
        return choice
    return None


def tools_and_choice(
    tools: Sequence[ToolSchema], choice: Any, *, string_only: bool = False
) -> tuple[list[dict[str, Any]], Any]:
    """The ``tools`` and ``tool_choice`` of a request (``choice`` None: ``auto``).

    ``string_only``: the server takes ``tool_choice`` only as a string, so a named tool goes as
    ``"required"`` with only that tool offered: the one form of the forced choice it honours.
    """
    name = named_choice(choice)
    if string_only and name is not None:
        chosen = [tool for tool in tools if tool.name == name]
        if chosen:
            return to_openai_tools(chosen), "required"
    return to_openai_tools(tools), to_tool_choice("auto" if choice is None else choice)


def to_tool_choice(choice: Any) -> Any:
    if isinstance(choice, str) and choice not in ("auto", "none", "required"):
        return {"type": "function", "function": {"name": choice}}
    return choice
