"""An Anthropic Messages API answer read into the runtime's events: streamed or whole.

Streaming: ``text_delta`` pieces are passed on as they come; a ``tool_use`` block's input arrives as
``input_json_delta`` pieces, joined and parsed when the stream is done. Input that does not parse
as a JSON object (cut off by ``max_tokens``, malformed) makes a call with empty arguments and an
``arguments_error`` that says so (and names ``max_tokens`` when the answer stopped there): the
session hands it back to the model as the call's result.

Usage: input from ``message_start.message.usage``, counting the prompt's cached tokens too
(``input_tokens`` + ``cache_creation_input_tokens`` + ``cache_read_input_tokens``, which the API
counts apart), so "in" means every prompt token, as OpenAI's ``prompt_tokens`` does; output from
``message_delta.usage.output_tokens``, a running total (the last one counts; ``message_start``'s
output count is a placeholder and is not used). A ``message_delta`` that carries an input count
replaces the first. A count the stream does not carry (Anthropic-compatible proxies may leave them
out) is None, not 0. A stream without ``message_delta`` / ``message_stop`` was cut off.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from mcp_export.errors import ProviderProtocolError
from mcp_export.providers.base import (
    ChatMessage,
    Completion,
    ProviderEvent,
    TextDelta,
    ToolCallRequest,
    Usage,
)

if TYPE_CHECKING:
    from anthropic.types import RawMessageStreamEvent

__all__ = ["StreamAssembly", "json_object", "whole_answer"]

_JSON_KINDS = {
    list: "an array",
    str: "a string",
    int: "a number",
    float: "a number",
    bool: "a boolean",
    type(None): "null",
}


@dataclass
class _Block:
    kind: str
    text: list[str] = field(default_factory=lambda: list[str]())
    id: str = ""
    name: str = ""
    start_input: Any = None


@dataclass
class StreamAssembly:
    """The answer being assembled from stream events."""

    blocks: dict[int, _Block] = field(default_factory=lambda: dict[int, _Block]())
    input_tokens: int | None = None
    output_tokens: int | None = None
    stop_reason: str | None = None
    stopped: bool = False
    events: int = 0

    def add(self, event: RawMessageStreamEvent) -> str:
        """Take in an event; return its text (``""`` when it carries none)."""
        self.events += 1
        if event.type == "message_start":
            self.input_tokens = _input_tokens(getattr(event.message, "usage", None))
        elif event.type == "content_block_start":
            block = event.content_block
            if block.type == "text":
                self.blocks[event.index] = _Block("text", [block.text] if block.text else [])
                return block.text
            if block.type == "tool_use":
                self.blocks[event.index] = _Block(
                    "tool_use", id=block.id, name=block.name, start_input=block.input
                )
        elif event.type == "content_block_delta":
            current = self.blocks.get(event.index)
            delta = event.delta
            if current is not None and delta.type == "text_delta":
                current.text.append(delta.text)
                return delta.text
            if current is not None and delta.type == "input_json_delta":
                current.text.append(delta.partial_json)
        elif event.type == "message_delta":
            self.stop_reason = event.delta.stop_reason
            usage = getattr(event, "usage", None)
            output = _count(usage, "output_tokens")
            if output is not None:
                self.output_tokens = output
            if _count(usage, "input_tokens") is not None:
                self.input_tokens = _input_tokens(usage)
        elif event.type == "message_stop":
            self.stopped = True
        return ""

    def completion(self, label: Callable[[], str]) -> Completion:
        """The finished answer.

        Args:
            label: the endpoint's name in messages (made only for a message).

        Raises:
            ProviderProtocolError: the stream never finished.
        """
        if self.stop_reason is None and not self.stopped:
            raise ProviderProtocolError(
                f"the stream from {label()} was cut off before the answer finished "
                "(no message_delta)"
            )
        text: list[str] = []
        calls: list[ToolCallRequest] = []
        for index in sorted(self.blocks):
            block = self.blocks[index]
            if block.kind == "text":
                text.extend(block.text)
            else:
                calls.append(_parsed_call(block, self.stop_reason))
        message = ChatMessage("assistant", "".join(text), tool_calls=tuple(calls))
        return Completion(message, Usage(self.input_tokens, self.output_tokens), self.stop_reason)


def json_object(raw: bytes) -> dict[str, Any] | None:
    try:
        body = json.loads(raw)
    except ValueError:
        return None
    return body if isinstance(body, dict) else None


def whole_answer(body: dict[str, Any]) -> list[ProviderEvent]:
    """The events of a whole (not streamed) Messages API answer."""
    stop_reason = body.get("stop_reason")
    stop = stop_reason if isinstance(stop_reason, str) else None
    text: list[str] = []
    calls: list[ToolCallRequest] = []
    for block in body["content"]:
        if not isinstance(block, dict):
            continue
        if block.get("type") == "text" and isinstance(block.get("text"), str):
            text.append(block["text"])
        elif block.get("type") == "tool_use":
            calls.append(
                _call(
                    str(block.get("id", "")), str(block.get("name", "")), block.get("input"), stop
                )
            )
    answer = "".join(text)
    usage = body.get("usage")
    completion = Completion(
        ChatMessage("assistant", answer, tool_calls=tuple(calls)),
        Usage(_input_tokens(usage), _count(usage, "output_tokens")),
        stop,
    )
    return [TextDelta(answer), completion] if answer else [completion]


def _input_tokens(usage: Any) -> int | None:
    """The prompt's tokens: ``input_tokens`` plus the cached ones the API counts apart
    (``cache_creation_input_tokens``, ``cache_read_input_tokens``), the way OpenAI's
    ``prompt_tokens`` includes its cached tokens; None without ``input_tokens``."""
    counted = _count(usage, "input_tokens")
    if counted is None:
        return None
    cached = (_count(usage, name) for name in _CACHE_COUNTS)
    return counted + sum(count for count in cached if count is not None)


_CACHE_COUNTS = ("cache_creation_input_tokens", "cache_read_input_tokens")


def _count(usage: Any, name: str) -> int | None:
    """A count of a usage object (the SDK's, or a dict of a whole answer); None when absent."""
    value = usage.get(name) if isinstance(usage, dict) else getattr(usage, name, None)
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _parsed_call(block: _Block, stop_reason: str | None) -> ToolCallRequest:
    """The call of a ``tool_use`` block; input that is not a JSON object (cut off, malformed) is
    an ``arguments_error`` the model is told about, with empty arguments."""
    raw = "".join(block.text).strip()
    if not raw:
        start = block.start_input
        return _call(block.id, block.name, start if start is not None else {}, stop_reason)
    try:
        arguments = json.loads(raw)
    except ValueError as exc:
        return ToolCallRequest(
            block.id,
            block.name,
            {},
            arguments_error=_input_error(f"malformed ({exc})", stop_reason),
        )
    return _call(block.id, block.name, arguments, stop_reason)


def _call(id: str, name: str, arguments: Any, stop_reason: str | None) -> ToolCallRequest:
    if isinstance(arguments, dict):
        return ToolCallRequest(id, name, arguments)
    error = _input_error(
        f"{_JSON_KINDS.get(type(arguments), 'a value')}, not a JSON object", stop_reason
    )
    return ToolCallRequest(id, name, {}, arguments_error=error)


def _input_error(problem: str, stop_reason: str | None) -> str:
    if stop_reason == "max_tokens":
        return (
            f"the tool input is {problem}: the answer reached max_tokens before the call was "
            "complete (settings.maxOutputTokens)"
        )
    return f"the tool input is {problem}"
