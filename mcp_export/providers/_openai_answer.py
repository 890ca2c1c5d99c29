"""A Chat Completions answer read into the runtime's events: chunk by chunk, or whole.

Text arrives as ``delta.content`` pieces; tool calls as ``delta.tool_calls`` entries keyed by
``index`` whose arguments JSON comes in pieces, assembled here and parsed once the stream finished
(a name repeated whole in every delta, as llama-cpp-python sends it, is read once). A count the
server does not give stays None. A stream that ends without a ``finish_reason`` failed, and the
message says how: a body with no event at all (an HTML page, a JSON body, nothing) is described as
what it is, events without a single choice as an answer with no choices, the rest as cut off. A
whole ``chat.completion`` is read as the one chunk that would carry it (``as_chunk``).

Tool arguments that are not one JSON object (malformed, cut off by ``max_tokens``) do not fail the
request: the call comes with empty arguments and an ``arguments_error``, and the session hands
that error to the model as the call's result. Stop reasons use the Anthropic vocabulary shared by
every provider: ``end_turn``, ``tool_use``, ``max_tokens``, ``stop_sequence`` (anything else is
passed as the server said it).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from mcp_export.errors import ProviderProtocolError
from mcp_export.providers._openai_http import StreamSeen
from mcp_export.providers.base import ChatMessage, Completion, ToolCallRequest, Usage
from mcp_export.redact import redact

__all__ = ["BASE_URL_HINT", "ChunkAssembly", "as_chunk"]

_FINISH_REASONS = {"stop": "end_turn", "tool_calls": "tool_use", "length": "max_tokens"}


def as_chunk(body: object) -> object:
    """A ``chat.completion`` body as the one stream chunk that would carry all of it: each
    choice's ``message`` as its ``delta``, each tool call with its ``index`` and its arguments as
    JSON text (some servers give them as an object)."""
    if not isinstance(body, dict) or not isinstance(body.get("choices"), list):
        return body
    choices: list[object] = []
    for choice in body["choices"]:
        if isinstance(choice, dict) and isinstance(choice.get("message"), dict):
            delta = dict(choice["message"])
            calls = delta.get("tool_calls")
            if isinstance(calls, list):
                delta["tool_calls"] = [_indexed_call(call, i) for i, call in enumerate(calls)]
            choice = {**choice, "delta": delta}
        choices.append(choice)
    return {**body, "choices": choices}


def _indexed_call(call: object, index: int) -> object:
    if not isinstance(call, dict):
        return call
    function = call.get("function")
    if isinstance(function, dict) and not isinstance(function.get("arguments"), str | None):
        function = {**function, "arguments": json.dumps(function["arguments"])}
    return {**call, "index": index, "function": function}


@dataclass
class _PartialCall:
    id: str = ""
    name: str = ""
    arguments: list[str] = field(default_factory=lambda: list[str]())


@dataclass
class ChunkAssembly:
    """The answer being assembled from stream chunks."""

    text: list[str] = field(default_factory=lambda: list[str]())
    calls: dict[int, _PartialCall] = field(default_factory=lambda: dict[int, _PartialCall]())
    finish_reason: str | None = None
    usage: Usage = field(default_factory=Usage)
    choices_seen: bool = False
    tool_names: frozenset[str] = frozenset()
    """The names of the tools the request offered."""

    def add(self, chunk: object) -> list[str]:
        """Take in a chunk (its decoded JSON); return its text pieces.

        Raises:
            ProviderProtocolError: the chunk is not shaped like a ``chat.completion.chunk``.
        """
        if not isinstance(chunk, dict):
            raise ProviderProtocolError(
                f"a stream chunk is not a JSON object: {redact(f'{chunk!r:.200}')}"
            )
        usage = chunk.get("usage")
        if isinstance(usage, dict):
            self.usage = Usage(_count(usage, "prompt_tokens"), _count(usage, "completion_tokens"))
        pieces: list[str] = []
        for choice in _entries(chunk, "choices"):
            self.choices_seen = True
            delta = choice.get("delta")
            delta = delta if isinstance(delta, dict) else {}
            content = delta.get("content")
            if isinstance(content, str) and content:
                pieces.append(content)
            for position, entry in enumerate(_entries(delta, "tool_calls")):
                index = entry.get("index")
                call = self.calls.setdefault(
                    index if isinstance(index, int) else position, _PartialCall()
                )
                if isinstance(entry.get("id"), str) and entry["id"]:
                    call.id = entry["id"]
                function = entry.get("function")
                if isinstance(function, dict):
                    if isinstance(function.get("name"), str):
                        call.name = _joined_name(call.name, function["name"], self.tool_names)
                    if isinstance(function.get("arguments"), str):
                        call.arguments.append(function["arguments"])
            finish_reason = choice.get("finish_reason")
            if isinstance(finish_reason, str) and finish_reason:
                self.finish_reason = finish_reason
        self.text.extend(pieces)
        return pieces

    def completion(self, label: Callable[[], str], seen: StreamSeen, url: str) -> Completion:
        """The finished answer.

        Args:
            label: the endpoint's name in messages (made only for a message).
            seen: what the read of the stream saw (for the message of a stream without answer).
            url: the base URL, named in messages.

        Raises:
            ProviderProtocolError: the stream never finished (the message says what came
                instead).
        """
        if self.finish_reason is None:
            raise ProviderProtocolError(_unfinished(label(), seen, url, self.choices_seen))
        calls = tuple(
            _parsed_call(self.calls[index], index, self.finish_reason)
            for index in sorted(self.calls)
        )
        reason = _FINISH_REASONS.get(self.finish_reason, self.finish_reason)
        message = ChatMessage("assistant", "".join(self.text), tool_calls=calls)
        return Completion(message, self.usage, reason)


BASE_URL_HINT = (
    "check the base URL — it should be the API root that /chat/completions is appended to, "
    "such as http://localhost:11434/v1 or https://api.openai.com/v1"
)


def _unfinished(label: str, seen: StreamSeen, url: str, choices_seen: bool) -> str:
    """Why a stream that ended without a ``finish_reason`` gave no answer, in words."""
    if seen.events == 0 and not seen.done:
        return (
            f"{url} answered 200 with {seen.body()}, not a Chat Completions stream: {BASE_URL_HINT}"
        )
    if not choices_seen:
        return (
            f"the stream from {label} ended with no choices ({seen.events} event"
            f"{'s' if seen.events != 1 else ''}, none with an answer): the server gave no "
            "answer; check the model name and the server's log"
        )
    if seen.done:
        return (
            f"the stream from {label} ended ([DONE]) without a finish_reason: the answer is "
            "incomplete"
        )
    return f"the stream from {label} was cut off before the answer finished (no finish_reason)"


def _entries(parent: dict[str, Any], key: str) -> list[dict[str, Any]]:
    """The objects in ``parent[key]`` (a list); raises on any other shape."""
    value = parent.get(key)
    if value is None:
        return []
    if not isinstance(value, list) or not all(isinstance(item, dict) for item in value):
        raise ProviderProtocolError(f"a stream chunk's {key!r} is not a list of objects")
    return value


def _joined_name(name: str, piece: str, offered: frozenset[str]) -> str:
    """The tool name so far after one more delta's ``function.name``.

    OpenAI sends the name once, in the call's first delta (a server may also send it in pieces,
    which join); llama-cpp-python repeats the whole name in every delta. So a piece equal to the
    name so far is that name again, not its second half, unless only the doubled name is a tool
    the request offered (a tool ``aa`` streamed as ``a`` + ``a``).
    """
    if not piece:
        return name
    if piece == name:
        doubled = name + piece
        return doubled if doubled in offered and name not in offered else name
    return name + piece


def _count(usage: dict[str, Any], key: str) -> int | None:
    """A token count of a ``usage`` object; None when the server did not give it (absent is not
    0: llama-cpp-python, for one, sends no usage in a stream)."""
    value = usage.get(key)
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _parsed_call(call: _PartialCall, index: int, finish_reason: str) -> ToolCallRequest:
    """The call as the model sent it; arguments that are not one JSON object (malformed, cut off
    by ``max_tokens``) make a call with empty arguments and an ``arguments_error`` saying why,
    which the session hands back to the model instead of running the tool."""
    raw = "".join(call.arguments).strip()
    call_id, name = call.id or f"call_{index}", call.name or f"#{index}"
    hint = " (the answer hit max_tokens)" if finish_reason == "length" else ""
    try:
        arguments: object = json.loads(raw) if raw else {}
    except ValueError as exc:
        error = f"the arguments are not valid JSON{hint}: {exc}"
        return ToolCallRequest(call_id, name, {}, arguments_error=error)
    if not isinstance(arguments, dict):
        kind = _JSON_KINDS.get(type(arguments), "a JSON value")
        error = f"the arguments are {kind}, not a JSON object{hint}"
        return ToolCallRequest(call_id, name, {}, arguments_error=error)
    return ToolCallRequest(call_id, name, arguments)


_JSON_KINDS: dict[type, str] = {
    list: "a JSON array",
    str: "a JSON string",
    int: "a number",
    float: "a number",
    bool: "true or false",
    type(None): "null",
}
