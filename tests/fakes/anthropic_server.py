"""A fake Anthropic Messages API server: real HTTP on loopback, scripted replies.

Speaks what the ``anthropic`` SDK expects:

- ``POST /v1/messages`` with ``stream: true`` → SSE ``event:``/``data:`` pairs: ``message_start``
  (with input usage), per content block ``content_block_start`` (``text`` or ``tool_use``),
  ``content_block_delta`` (``text_delta`` pieces, or ``input_json_delta`` pieces of the tool input
  JSON), ``content_block_stop``; then ``message_delta`` (stop_reason + output usage) and
  ``message_stop``. A ``ping`` event follows ``message_start``, as on the real API. Without
  ``stream`` → one ``message`` JSON body.
- ``GET /v1/models`` → the model list.
- Errors with Anthropic's body shape ``{"type": "error", "error": {"type", "message"}}`` and a
  ``request-id`` header; ``retry-after`` when the reply sets it.
- A request the real API refuses is refused here too, with a 400 ``invalid_request_error``
  (``wire_problem``): empty or whitespace-only text blocks, a ``tool_use`` without its
  ``tool_result`` in the next message (or a result without its call), results that do not lead
  their message, an error result with empty content, a ``tool_use`` input that is not an object,
  a tool name outside ``^[a-zA-Z0-9_-]{1,128}$``, a ``tool_choice`` without tools or naming a tool
  not offered, no ``max_tokens``. The messages are the API's own where its refusals are on record
  (users' reports of them), plain words otherwise. Consecutive messages of one role are combined
  first, as the API documents. ``strict=False`` turns this off.

Options that shape every answer: ``usage="absent"`` leaves the token counts out (as some
Anthropic-compatible proxies do), ``cache_tokens=(created, read)`` adds prompt-cache counts to
``message_start``. ``hold()`` keeps every streamed answer built from a reply (not ``events``)
waiting after ``message_start`` (its request in flight) until ``release()``; ``in_flight`` /
``max_in_flight`` / ``wait_for_in_flight`` count those answers while they are being sent.
``error_event(kind, message)`` is a 200 stream that fails with an ``error`` event after
``message_start``, as the API does when it is overloaded.

Usage::

    with FakeAnthropicServer([text("Hello", chunks=3)]) as server:
        provider = AnthropicProvider(api_key="sk-ant-test", base_url=server.base_url)

``base_url`` is the bare origin (the SDK appends ``/v1/messages`` itself).
"""

from __future__ import annotations

import contextlib
import json
import re
import threading
from collections.abc import Iterable, Iterator, Mapping
from typing import Any, Literal

from tests.fakes._script import (
    OfferedFunction,
    Reply,
    RequestBody,
    Responder,
    ToolResult,
    events,
    split_evenly,
    status,
)
from tests.fakes._server import FakeModelServer, count_words

__all__ = ["FakeAnthropicServer", "error_event", "wire_problem"]

_ERROR_TYPES = {
    400: "invalid_request_error",
    401: "authentication_error",
    403: "permission_error",
    404: "not_found_error",
    413: "request_too_large",
    429: "rate_limit_error",
    500: "api_error",
    529: "overloaded_error",
}

_STOP_REASONS = {"stop": "end_turn", "length": "max_tokens", "tool_calls": "tool_use"}


class FakeAnthropicServer(FakeModelServer):
    """A local server that speaks the Messages API.

    See ``FakeModelServer`` for the args, and the module docstring for ``strict``, ``usage`` and
    ``cache_tokens``.
    """

    model_path = "/messages"

    def __init__(
        self,
        script: Iterable[Reply] = (),
        *,
        responder: Responder | None = None,
        models: Iterable[str] = ("fake-model",),
        api_key: str | None = None,
        strict: bool = True,
        usage: Literal["counted", "absent"] = "counted",
        cache_tokens: tuple[int, int] | None = None,
    ) -> None:
        self.strict = strict
        self.usage = usage
        self.cache_tokens = cache_tokens
        self._released = threading.Event()
        self._released.set()
        super().__init__(script, responder=responder, models=models, api_key=api_key)

    @property
    def base_url(self) -> str:
        """The URL to give the SDK: the bare origin, ``http://127.0.0.1:PORT``."""
        return self.origin

    def __enter__(self) -> FakeAnthropicServer:
        return self

    # --- requests -------------------------------------------------------------------------------

    def make_body(self, parsed: dict[str, Any]) -> RequestBody:
        body = RequestBody(parsed)
        messages = [m for m in parsed.get("messages") or [] if isinstance(m, dict)]
        results: list[ToolResult] = []
        last_user = -1
        for i, message in enumerate(messages):
            content = message.get("content")
            blocks = content if isinstance(content, list) else []
            for block in blocks:
                if isinstance(block, dict) and block.get("type") == "tool_result":
                    results.append(
                        ToolResult(
                            str(block.get("tool_use_id")),
                            _text_of(block.get("content")),
                            bool(block.get("is_error", False)),
                        )
                    )
            if message.get("role") == "user" and _text_of(content):
                last_user = i
        if last_user >= 0:
            body.last_user_text = _text_of(messages[last_user].get("content"))
            body.rounds_since_user = sum(
                1 for m in messages[last_user:] if m.get("role") == "assistant"
            )
        body.tool_results = tuple(results)
        body.offered = tuple(
            OfferedFunction(
                str(t.get("name")),
                str(t.get("description") or ""),
                dict(t.get("input_schema") or {}),
            )
            for t in parsed.get("tools") or []
            if isinstance(t, dict)
        )
        return body

    def check_auth(self, headers: Mapping[str, str]) -> str | None:
        if self.api_key is None or self.api_key_sent(headers) == self.api_key:
            return None
        return "invalid x-api-key"

    def credentials_sent(self, headers: Mapping[str, str]) -> str:
        return headers.get("x-api-key") or headers.get("authorization", "")

    @staticmethod
    def api_key_sent(headers: Mapping[str, str]) -> str | None:
        """The key a request carried: ``x-api-key``, or the bearer token newer SDKs send."""
        if "x-api-key" in headers:
            return headers["x-api-key"]
        authorization = headers.get("authorization", "")
        return (
            authorization.removeprefix("Bearer ") if authorization.startswith("Bearer ") else None
        )

    def next_reply(self, body: RequestBody) -> Reply:
        """A 400 in the API's words when the real API would refuse ``body`` (the script is not
        consumed), else the next scripted reply or the responder's."""
        problem = wire_problem(body) if self.strict else None
        if problem is not None:
            return status(400, message=problem)
        return super().next_reply(body)

    # --- requests in flight ---------------------------------------------------------------------

    def hold(self) -> None:
        """Keep every streamed answer from now on waiting after ``message_start``."""
        self._released.clear()

    def release(self) -> None:
        """Let the held answers (and all later ones) go on."""
        self._released.set()

    # --- replies --------------------------------------------------------------------------------

    def stream_events(self, reply: Reply, body: RequestBody) -> Iterator[bytes | float]:
        with self.counted():
            yield from self._stream_events(reply, body)

    def _stream_events(self, reply: Reply, body: RequestBody) -> Iterator[bytes | float]:
        model = str(body.get("model", "fake-model"))
        pause = float(reply.chunk_delay)
        input_tokens, output_tokens = _usage(reply, body)
        start = _message(model, [], None, self._start_usage(input_tokens))
        yield _event("message_start", {"type": "message_start", "message": start})
        while not self._released.is_set() and not self.stopping:
            yield 0.25  # a wait that ends when the client leaves
        yield _event("ping", {"type": "ping"})
        index = 0
        pieces = reply.text_pieces()
        if pieces or reply.kind == "garbage":
            yield _block_start(index, {"type": "text", "text": ""})
            for i, piece in enumerate(pieces):
                if i and pause:
                    yield pause
                yield _delta(index, {"type": "text_delta", "text": piece})
            if reply.kind == "garbage":
                yield b"event: content_block_delta\ndata: {this is not json\n\n"
                return
            if reply.kind == "cut_off":
                return
            yield _event("content_block_stop", {"type": "content_block_stop", "index": index})
            index += 1
        for call in reply.calls:
            yield _block_start(
                index, {"type": "tool_use", "id": call.id, "name": call.name, "input": {}}
            )
            arguments = call.arguments_json
            for piece in split_evenly(arguments, 3) if reply.split_arguments else [arguments]:
                if pause:
                    yield pause
                yield _delta(index, {"type": "input_json_delta", "partial_json": piece})
            yield _event("content_block_stop", {"type": "content_block_stop", "index": index})
            index += 1
        if reply.kind == "cut_off":
            return
        delta = {"stop_reason": _stop_reason(reply), "stop_sequence": None}
        usage = {"output_tokens": output_tokens} if self.usage == "counted" else {}
        yield _event("message_delta", {"type": "message_delta", "delta": delta, "usage": usage})
        yield _event("message_stop", {"type": "message_stop"})

    def _start_usage(self, input_tokens: int) -> dict[str, Any] | None:
        """``message_start``'s usage: the input count and a first output count of 1, as the API
        sends them."""
        if self.usage == "absent":
            return None
        usage: dict[str, Any] = {"input_tokens": input_tokens, "output_tokens": 1}
        if self.cache_tokens is not None:
            created, read = self.cache_tokens
            usage |= {"cache_creation_input_tokens": created, "cache_read_input_tokens": read}
        return usage

    def json_body(self, reply: Reply, body: RequestBody) -> dict[str, Any]:
        content: list[dict[str, Any]] = []
        if reply.text:
            content.append({"type": "text", "text": reply.text})
        for call in reply.calls:
            arguments: Any = call.arguments
            if isinstance(arguments, str):  # raw input JSON: the value it spells, if it parses
                with contextlib.suppress(ValueError):
                    arguments = json.loads(arguments)
            content.append(
                {"type": "tool_use", "id": call.id, "name": call.name, "input": arguments}
            )
        input_tokens, output_tokens = _usage(reply, body)
        model = str(body.get("model", "fake-model"))
        usage = self._start_usage(input_tokens)
        if usage is not None:
            usage["output_tokens"] = output_tokens
        return _message(model, content, _stop_reason(reply), usage)

    def error_body(self, code: int, message: str) -> dict[str, Any]:
        kind = _ERROR_TYPES.get(code, "api_error" if code >= 500 else "invalid_request_error")
        return {"type": "error", "error": {"type": kind, "message": message}}

    def error_headers(self, reply: Reply) -> Mapping[str, str]:
        return {"request-id": "req_fake"}

    def default_error_message(self, code: int) -> str:
        if code == 429:
            return "Number of request tokens has exceeded your per-minute rate limit"
        if code == 529:
            return "Overloaded"
        if code >= 500:
            return "Internal server error"
        return f"fake Anthropic error {code}"

    def models_body(self) -> dict[str, Any]:
        data = [
            {"type": "model", "id": m, "display_name": m, "created_at": "2025-01-01T00:00:00Z"}
            for m in self.models
        ]
        return {
            "data": data,
            "has_more": False,
            "first_id": data[0]["id"] if data else None,
            "last_id": data[-1]["id"] if data else None,
        }


def _message(
    model: str,
    content: list[dict[str, Any]],
    stop_reason: str | None,
    usage: dict[str, Any] | None,
) -> dict[str, Any]:
    message: dict[str, Any] = {
        "id": "msg_fake",
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": content,
        "stop_reason": stop_reason,
        "stop_sequence": None,
    }
    if usage is not None:
        message["usage"] = usage
    return message


def _event(name: str, payload: dict[str, Any]) -> bytes:
    data = json.dumps(payload, separators=(",", ":")).encode()
    return b"event: " + name.encode() + b"\ndata: " + data + b"\n\n"


def _block_start(index: int, block: dict[str, Any]) -> bytes:
    payload = {"type": "content_block_start", "index": index, "content_block": block}
    return _event("content_block_start", payload)


def _delta(index: int, delta: dict[str, Any]) -> bytes:
    payload = {"type": "content_block_delta", "index": index, "delta": delta}
    return _event("content_block_delta", payload)


def _stop_reason(reply: Reply) -> str:
    if reply.finish_reason is not None:
        return _STOP_REASONS.get(reply.finish_reason, reply.finish_reason)
    return "tool_use" if reply.calls else "end_turn"


def _usage(reply: Reply, body: RequestBody) -> tuple[int, int]:
    if reply.usage is not None:
        return reply.usage
    texts = [_text_of(m.get("content")) for m in body.get("messages") or [] if isinstance(m, dict)]
    system = body.get("system")
    texts.append(_text_of(system))
    return count_words(texts), reply.output_tokens()


def _text_of(content: Any) -> str:
    """The text of a message ``content`` / tool result ``content`` (a string or a block list)."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(
            str(block.get("text", ""))
            for block in content
            if isinstance(block, dict) and block.get("type") == "text"
        )
    return ""


def error_event(kind: str = "overloaded_error", message: str = "Overloaded") -> Reply:
    """A 200 stream that fails: ``message_start``, then an ``error`` event of ``kind``, as the API
    sends when it becomes overloaded after the answer started."""
    start = _message("fake-model", [], None, {"input_tokens": 3, "output_tokens": 1})
    error = {"type": "error", "error": {"type": kind, "message": message}}
    return events(
        _event("message_start", {"type": "message_start", "message": start}),
        _event("error", error),
    )


# --- what the real API refuses -------------------------------------------------------------------

_TOOL_NAME = re.compile(r"^[a-zA-Z0-9_-]{1,128}$")


def wire_problem(body: Mapping[str, Any]) -> str | None:
    """Why the real Messages API would refuse ``body`` with a 400, in its words; None if it would
    not (for the rules this fake knows: see the module docstring)."""
    if not isinstance(body.get("model"), str) or not body.get("model"):
        return "model: Field required"
    max_tokens = body.get("max_tokens")
    if not isinstance(max_tokens, int) or isinstance(max_tokens, bool) or max_tokens < 1:
        return "max_tokens: Field required"
    problem = _tools_problem(body.get("tools"), body.get("tool_choice"))
    if problem is not None:
        return problem
    messages = body.get("messages")
    if not isinstance(messages, list) or not messages:
        return "messages: at least one message is required"
    turns: list[tuple[str, list[dict[str, Any]]]] = []
    for i, message in enumerate(messages):
        if not isinstance(message, dict) or message.get("role") not in ("user", "assistant"):
            return f"messages.{i}.role: Input should be 'user' or 'assistant'"
        blocks = _blocks(message.get("content"))
        if blocks is None:
            return f"messages.{i}.content: Input should be a valid list"
        if not blocks:
            return (
                f"messages.{i}: all messages must have non-empty content except for the "
                "optional final assistant message"
            )
        role = str(message["role"])
        if turns and turns[-1][0] == role:  # the API combines consecutive turns of one role
            turns[-1][1].extend(blocks)
        else:
            turns.append((role, list(blocks)))
    for i, (role, blocks) in enumerate(turns):
        problem = _turn_problem(i, role, blocks, turns)
        if problem is not None:
            return problem
    return None


def _blocks(content: Any) -> list[dict[str, Any]] | None:
    if isinstance(content, str):
        return [{"type": "text", "text": content}] if content else []
    if isinstance(content, list):
        return [block if isinstance(block, dict) else {} for block in content]
    return None


def _turn_problem(
    i: int, role: str, blocks: list[dict[str, Any]], turns: list[tuple[str, list[dict[str, Any]]]]
) -> str | None:
    previous = turns[i - 1][1] if i > 0 and turns[i - 1][0] == "assistant" else []
    previous_calls = {str(b.get("id")) for b in previous if b.get("type") == "tool_use"}
    leading = True
    answered: set[str] = set()
    for j, block in enumerate(blocks):
        kind = block.get("type")
        where = f"messages.{i}.content.{j}"
        if kind == "text":
            text = block.get("text")
            if not isinstance(text, str) or not text:
                return "messages: text content blocks must be non-empty"
            if not text.strip():
                return "messages: text content blocks must contain non-whitespace text"
        elif kind == "tool_use":
            if role != "assistant":
                return f"{where}: `tool_use` blocks can only be in `assistant` messages"
            if not isinstance(block.get("input"), dict):
                return f"{where}.tool_use.input: Input should be a valid dictionary"
            if not block.get("id") or not block.get("name"):
                return f"{where}.tool_use: `id` and `name` are required"
        elif kind == "tool_result":
            if role != "user":
                return f"{where}: `tool_result` blocks can only be in `user` messages"
            if not leading:
                return (
                    f"messages.{i}: `tool_result` blocks must come first in the message, before "
                    "any other content"
                )
            use_id = str(block.get("tool_use_id"))
            if use_id not in previous_calls:
                return (
                    f"{where}: unexpected `tool_use_id` found in `tool_result` blocks: {use_id}. "
                    "Each `tool_result` block must have a corresponding `tool_use` block in the "
                    "previous message."
                )
            answered.add(use_id)
            content = block.get("content")
            if block.get("is_error") and not content:
                return f"{where}.tool_result: content cannot be empty if `is_error` is true"
            if isinstance(content, list):
                for k, inner in enumerate(content):
                    if isinstance(inner, dict) and inner.get("type") == "text":
                        if not str(inner.get("text") or "").strip():
                            return "messages: text content blocks must be non-empty"
                    elif not isinstance(inner, dict):
                        return f"{where}.content.{k}: Input should be a valid dictionary"
            elif content is not None and not isinstance(content, str):
                return f"{where}.tool_result.content: Input should be a valid string or list"
        else:
            return f"{where}.type: Input tag {kind!r} found using 'type' does not match"
        if kind != "tool_result":
            leading = False
    unanswered = sorted(previous_calls - answered)
    if unanswered:
        return (
            f"messages.{i - 1}: `tool_use` ids were found without `tool_result` blocks "
            f"immediately after: {', '.join(unanswered)}. Each `tool_use` block must have a "
            "corresponding `tool_result` block in the next message."
        )
    return None


def _tools_problem(tools: Any, choice: Any) -> str | None:
    names: set[str] = set()
    if tools is not None:
        if not isinstance(tools, list):
            return "tools: Input should be a valid list"
        for i, tool in enumerate(tools):
            if not isinstance(tool, dict) or not isinstance(tool.get("name"), str):
                return f"tools.{i}.name: Field required"
            if not _TOOL_NAME.match(tool["name"]):
                return (
                    f"tools.{i}.custom.name: String should match pattern '^[a-zA-Z0-9_-]{{1,128}}$'"
                )
            schema = tool.get("input_schema")
            if not isinstance(schema, dict) or schema.get("type") != "object":
                return f"tools.{i}.custom.input_schema.type: Input should be 'object'"
            names.add(tool["name"])
    if choice is None:
        return None
    if not isinstance(choice, dict) or choice.get("type") not in ("auto", "any", "tool", "none"):
        return (
            "tool_choice: Input tag found using 'type' does not match any of the expected tags: "
            "'auto', 'any', 'tool', 'none'"
        )
    if not names and choice["type"] != "none":
        return "tool_choice: tool_choice may only be specified while providing tools"
    if choice["type"] == "tool" and choice.get("name") not in names:
        return f"tool_choice.name: tool {choice.get('name')!r} was not found in tools"
    return None
