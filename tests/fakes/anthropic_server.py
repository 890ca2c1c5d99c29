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

Usage::

    with FakeAnthropicServer([text("Hello", chunks=3)]) as server:
        provider = AnthropicProvider(api_key="sk-ant-test", base_url=server.base_url)

``base_url`` is the bare origin (the SDK appends ``/v1/messages`` itself).
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from typing import Any

from tests.fakes._script import Reply, RequestBody, ToolResult, split_evenly
from tests.fakes._server import FakeModelServer, count_words

__all__ = ["FakeAnthropicServer"]

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
    """A local server that speaks the Messages API. See ``FakeModelServer`` for the args."""

    model_path = "/messages"

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

    # --- replies --------------------------------------------------------------------------------

    def stream_events(self, reply: Reply, body: RequestBody) -> Iterator[bytes | float]:
        model = str(body.get("model", "fake-model"))
        pause = float(reply.chunk_delay)
        input_tokens, output_tokens = _usage(reply, body)
        start = _message(model, [], None, input_tokens, 1)
        yield _event("message_start", {"type": "message_start", "message": start})
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
        usage = {"output_tokens": output_tokens}
        yield _event("message_delta", {"type": "message_delta", "delta": delta, "usage": usage})
        yield _event("message_stop", {"type": "message_stop"})

    def json_body(self, reply: Reply, body: RequestBody) -> dict[str, Any]:
        content: list[dict[str, Any]] = []
        if reply.text:
            content.append({"type": "text", "text": reply.text})
        for call in reply.calls:
            arguments: Any = call.arguments
            content.append(
                {"type": "tool_use", "id": call.id, "name": call.name, "input": arguments}
            )
        input_tokens, output_tokens = _usage(reply, body)
        model = str(body.get("model", "fake-model"))
        return _message(model, content, _stop_reason(reply), input_tokens, output_tokens)

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
    input_tokens: int,
    output_tokens: int,
) -> dict[str, Any]:
    return {
        "id": "msg_fake",
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": content,
        "stop_reason": stop_reason,
        "stop_sequence": None,
        "usage": {"input_tokens": input_tokens, "output_tokens": output_tokens},
    }


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
