"""A fake OpenAI Chat Completions server: real HTTP on loopback, scripted replies.

Speaks what the ``openai`` SDK (and Ollama, vLLM, LM Studio… clients) expect:

- ``POST /v1/chat/completions`` with ``stream: true`` → SSE ``data: {chunk}`` events, text in
  ``delta.content`` pieces, tool calls in ``delta.tool_calls`` with the arguments JSON split across
  chunks and keyed by ``index`` (as OpenAI streams them), a final chunk with ``finish_reason``,
  a usage chunk (``choices: []``) when ``stream_options.include_usage`` is set, then
  ``data: [DONE]``. Without ``stream`` → one ``chat.completion`` JSON body with usage.
- ``GET /v1/models`` → the model list.
- Errors with OpenAI's body shape ``{"error": {"message", "type", "param", "code"}}``.

``owned_by`` is what its model list says in each entry's ``owned_by`` (``me`` for
llama-cpp-python, ``vllm``…). Options reproduce what real servers do differently
(``like_llama_cpp_python()`` turns on all of llama-cpp-python's, as seen on the wire with its
0.3 server):

- ``repeat_tool_names``: every tool-call delta repeats the call's id, type and whole function
  name, not only the first one.
- ``refuse_null_content``: a request with an assistant message whose ``content`` is null gets a
  500 (that server fails to render it into its prompt).
- ``usage_in_stream=False``: ``stream_options.include_usage`` is ignored (no usage chunk).
- ``refuse_streamed_tool_choice``: a streamed request with tools and ``tool_choice: "auto"`` gets
  a 200 ``text/event-stream`` with an empty body (that server raises "Automatic streaming tool
  choice is not supported" inside the stream, after the status went out: the reason is only in
  its log); one with tools and no ``tool_choice`` is answered as if it had none (the reply's
  tool calls are not sent); a named choice, and any request without streaming, get the reply
  as scripted.
- ``interrupt_streams``: a stream that starts cuts off every stream still in progress: its
  connection closes in the middle of the chunked body, without ``[DONE]`` or a
  ``finish_reason``; one that has sent nothing yet ends with ``data: [DONE]`` alone. A ``GET``
  (the model list) cuts it off too (that server serves one request at a time; seen with 0.3.36,
  2026-11-28).
- ``assert_on_required``: a request with tools and ``tool_choice: "required"`` gets a 500 whose
  error message is empty (``chatml-function-calling`` asserts the choice is ``auto`` or named).

``like_llama_server()`` is llama.cpp's ``llama-server`` as far as the client can tell before
sending a request: ``owned_by: llamacpp`` in its model list and ``GET /props`` with
``total_slots`` (4 by default: ``--parallel``) and ``build_info``; ``GET /slots`` lists the slots.

``string_tool_choice``: ``tool_choice`` is read as llama.cpp's ``llama-server`` (0.6.0-dev) reads
it, a string only (``json_value(body, "tool_choice", std::string("auto"))`` in
``tools/server/server-common.cpp``, then ``common_chat_tool_choice_parse_oaicompat`` in
``common/chat.cpp``): ``auto``, ``none``, ``required``; any other string is a 400 ``Invalid
tool_choice: …``; a value of another type (an object naming a function) is "Wrong type supplied
for parameter 'tool_choice'", said only in the server's log (``log``), and read as ``auto``.
``like_llama_server()`` turns it on with the ``owned_by: llamacpp`` its model list says. Which
``tool_choice`` a request ends up with decides a ``tool_calls(..., otherwise=…)`` reply: the
calls when it forces one (``required``, or a function object where objects are read), else the
``otherwise`` reply.

Azure OpenAI: ``key_header="api-key"`` takes the key in that header instead of ``Authorization``;
``like_azure(api_version="…")`` also answers the model path only with ``?api-version=…`` (without
it: 404, as Azure answers).

Streams in flight are counted (``in_flight``, ``max_in_flight``); ``hold_until_in_flight=n`` keeps
each stream from sending until ``n`` have been in flight at once (or ``hold_seconds`` passed), so
a test can see whether a client really sends ``n`` requests at once.

Usage::

    with FakeOpenAIServer([text("Hello", chunks=3)]) as server:
        provider = OpenAIProvider(api_key="sk-test", base_url=server.base_url)
        ...
        assert server.bodies[0]["messages"][-1] == {"role": "user", "content": "Hi"}
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import replace
from typing import Any

from tests.fakes._script import (
    OfferedFunction,
    Reply,
    RequestBody,
    Responder,
    ToolCall,
    ToolResult,
    events,
    split_evenly,
    status,
)
from tests.fakes._server import CUT_CONNECTION, FakeModelServer, count_words

__all__ = ["ASSERTION_FAILED", "FakeOpenAIServer"]

ASSERTION_FAILED = "<an assertion failed>"
"""A scripted error message that the fake sends as llama-cpp-python sends a failed assertion."""

_ERROR_TYPES = {
    400: ("invalid_request_error", None),
    401: ("invalid_request_error", "invalid_api_key"),
    403: ("invalid_request_error", "unsupported_country_region_territory"),
    404: ("invalid_request_error", "model_not_found"),
    429: ("requests", "rate_limit_exceeded"),
}


class FakeOpenAIServer(FakeModelServer):
    """A local server that speaks the Chat Completions API. See ``FakeModelServer`` for the args;
    the options are described in the module docstring.

    ``base_url`` (``http://127.0.0.1:PORT/v1``) is what a client takes as its base URL.
    """

    model_path = "/chat/completions"

    def __init__(
        self,
        script: Iterable[Reply] = (),
        *,
        responder: Responder | None = None,
        models: Iterable[str] = ("fake-model",),
        api_key: str | None = None,
        key_header: str = "authorization",
        owned_by: str = "fake",
        repeat_tool_names: bool = False,
        refuse_null_content: bool = False,
        usage_in_stream: bool = True,
        refuse_streamed_tool_choice: bool = False,
        interrupt_streams: bool = False,
        assert_on_required: bool = False,
        props: dict[str, Any] | None = None,
        hold_until_in_flight: int | None = None,
        hold_seconds: float = 10.0,
        string_tool_choice: bool = False,
    ) -> None:
        self.key_header = key_header.lower()
        self.owned_by = owned_by
        self.repeat_tool_names = repeat_tool_names
        self.refuse_null_content = refuse_null_content
        self.usage_in_stream = usage_in_stream
        self.refuse_streamed_tool_choice = refuse_streamed_tool_choice
        self.interrupt_streams = interrupt_streams
        self.assert_on_required = assert_on_required
        self.props = props
        self.hold_until_in_flight = hold_until_in_flight
        self.hold_seconds = hold_seconds
        self.string_tool_choice = string_tool_choice
        self.log: list[str] = []
        """What the server's own log says (warnings it gives nowhere else)."""
        super().__init__(script, responder=responder, models=models, api_key=api_key)

    @classmethod
    def like_azure(
        cls, script: Iterable[Reply] = (), *, api_version: str | None = None, **options: Any
    ) -> FakeOpenAIServer:
        """A fake of an Azure OpenAI endpoint: the key in ``api-key``; with ``api_version``, the
        model path answers only with that ``?api-version=`` (a deployment URL's requests)."""
        path = cls.model_path + (f"?api-version={api_version}" if api_version else "")
        azure = type("FakeAzureOpenAIServer", (cls,), {"model_path": path})
        server: FakeOpenAIServer = azure(script, key_header="api-key", **options)
        return server

    @classmethod
    def like_llama_cpp_python(
        cls, script: Iterable[Reply] = (), **options: Any
    ) -> FakeOpenAIServer:
        """A fake with every llama-cpp-python quirk on (``options`` may turn some off)."""
        quirks: dict[str, Any] = {
            "owned_by": "me",
            "repeat_tool_names": True,
            "refuse_null_content": True,
            "usage_in_stream": False,
            "refuse_streamed_tool_choice": True,
            "interrupt_streams": True,
            "assert_on_required": True,
        }
        return cls(script, **(quirks | options))

    @classmethod
    def like_llama_server(
        cls, script: Iterable[Reply] = (), *, slots: int = 4, **options: Any
    ) -> FakeOpenAIServer:
        """A fake of llama.cpp's ``llama-server`` (0.6.0-dev) as a client sees it: its model
        list's ``owned_by``, ``/props`` and ``/slots`` (``slots`` parallel slots) and its
        string-only ``tool_choice`` (``options`` may change them)."""
        props = {"total_slots": slots, "build_info": "b1-fake", "model_path": "model.gguf"}
        quirks: dict[str, Any] = {
            "owned_by": "llamacpp",
            "string_tool_choice": True,
            "props": props,
        }
        return cls(script, **(quirks | options))

    def get_route(self, path: str) -> Any:
        if self.interrupt_streams:  # a model list cuts off the stream in progress too
            self.interrupt()
        route = path.split("?")[0].rstrip("/")
        if self.props is not None and route == "/props":
            return self.props
        if self.props is not None and route == "/slots":
            return [{"id": i, "is_processing": False} for i in range(self.props["total_slots"])]
        return None

    @property
    def base_url(self) -> str:
        """The URL to give the SDK, ending in ``/v1``."""
        return f"{self.origin}/v1"

    def __enter__(self) -> FakeOpenAIServer:
        return self

    # --- requests -------------------------------------------------------------------------------

    def make_body(self, parsed: dict[str, Any]) -> RequestBody:
        body = RequestBody(parsed)
        messages = [m for m in parsed.get("messages") or [] if isinstance(m, dict)]
        results: list[ToolResult] = []
        last_user, rounds = -1, 0
        for i, message in enumerate(messages):
            role = message.get("role")
            if role == "tool":
                results.append(ToolResult(str(message.get("tool_call_id")), _content_text(message)))
            elif role == "user":
                last_user = i
        if last_user >= 0:
            body.last_user_text = _content_text(messages[last_user])
            rounds = sum(1 for m in messages[last_user:] if m.get("role") == "assistant")
        body.tool_results = tuple(results)
        body.rounds_since_user = rounds
        body.offered = tuple(
            OfferedFunction(
                str(f.get("name")), str(f.get("description") or ""), dict(f.get("parameters") or {})
            )
            for t in parsed.get("tools") or []
            if isinstance(t, dict) and isinstance(f := t.get("function"), dict)
        )
        return body

    def next_reply(self, body: RequestBody) -> Reply:
        """What the server's own checks refuse, else the next scripted reply."""
        refusal = self._refusal(body)
        if refusal is not None:
            return refusal
        reply = super().next_reply(body)
        if reply.otherwise is not None and not self._forces_call(body):
            return reply.otherwise
        return reply

    def _tool_choice(self, body: RequestBody) -> object:
        """The request's ``tool_choice`` as the server reads it."""
        choice = body.get("tool_choice")
        if self.string_tool_choice and choice is not None and not isinstance(choice, str):
            return "auto"
        return "auto" if choice is None else choice

    def _forces_call(self, body: RequestBody) -> bool:
        choice = self._tool_choice(body)
        return bool(body.get("tools")) and (
            choice == "required" or (isinstance(choice, dict) and choice.get("type") == "function")
        )

    def _refusal(self, body: RequestBody) -> Reply | None:
        messages = body.get("messages") or []
        if self.refuse_null_content and any(
            isinstance(m, dict) and m.get("role") == "assistant" and m.get("content") is None
            for m in messages
        ):
            return status(500, message="an assistant message's content is null")
        choice = body.get("tool_choice")
        if self.string_tool_choice and choice is not None and not isinstance(choice, str):
            self.log.append(
                "Wrong type supplied for parameter 'tool_choice', using default value: "
                "[json.exception.type_error.302] type must be string, but is object"
            )
        elif self.string_tool_choice and choice not in (None, "auto", "none", "required"):
            return status(400, message=f"Invalid tool_choice: {choice}")
        if self.assert_on_required and body.get("tools") and body.get("tool_choice") == "required":
            return status(500, message=ASSERTION_FAILED)
        if (
            self.refuse_streamed_tool_choice
            and body.get("stream") is True
            and body.get("tools")
            and body.get("tool_choice") == "auto"
        ):
            return events()  # a 200 stream without a byte
        return None

    def check_auth(self, headers: Mapping[str, str]) -> str | None:
        if self.api_key is None or self.api_key_sent(headers) == self.api_key:
            return None
        return "Incorrect API key provided."

    def credentials_sent(self, headers: Mapping[str, str]) -> str:
        return headers.get(self.key_header, "")

    def api_key_sent(self, headers: Mapping[str, str]) -> str | None:
        if self.key_header == "authorization":
            return super().api_key_sent(headers)
        return headers.get(self.key_header)

    # --- replies --------------------------------------------------------------------------------

    def stream_events(self, reply: Reply, body: RequestBody) -> Iterator[bytes | float]:
        if self.refuse_streamed_tool_choice and body.get("tools") and "tool_choice" not in body:
            reply = replace(reply, kind="text", calls=(), text=reply.text or "No tools here.")
        with self.counted() as number:
            if self.hold_until_in_flight is not None:
                deadline = time.monotonic() + self.hold_seconds
                while (
                    self.max_in_flight < self.hold_until_in_flight and time.monotonic() < deadline
                ):
                    yield 0.01
            for sent, item in enumerate(self._events(reply, body)):
                if self.interrupt_streams and self.latest_stream() != number:
                    yield b"data: [DONE]\n\n" if sent == 0 else CUT_CONNECTION
                    return
                yield item

    def _events(self, reply: Reply, body: RequestBody) -> Iterator[bytes | float]:
        chunk = _ChunkMaker(str(body.get("model", "fake-model")))
        pause = float(reply.chunk_delay)
        yield chunk.event({"role": "assistant", "content": ""})
        if reply.kind == "garbage":
            yield chunk.event({"content": reply.text})
            bad = reply.event or '{"id": "chatcmpl-fake", "choices": [ this is not json'
            yield f"data: {bad}\n\n".encode()
            return
        for i, piece in enumerate(reply.text_pieces()):
            if i and pause:
                yield pause
            yield chunk.event({"content": piece})
        if reply.kind == "cut_off":
            return
        for j, delta in enumerate(_tool_call_deltas(reply, self.repeat_tool_names)):
            if (j or reply.text) and pause:
                yield pause
            yield chunk.event({"tool_calls": [delta]})
        finish = reply.finish_reason or ("tool_calls" if reply.calls else "stop")
        yield chunk.event({}, finish_reason=finish)
        options = body.get("stream_options")
        if self.usage_in_stream and isinstance(options, dict) and options.get("include_usage"):
            yield chunk.usage_event(_usage(reply, body))
        yield b"data: [DONE]\n\n"

    def json_body(self, reply: Reply, body: RequestBody) -> dict[str, Any]:
        message: dict[str, Any] = {"role": "assistant", "content": reply.text or None}
        if reply.calls:
            message["tool_calls"] = [
                {
                    "id": c.id,
                    "type": "function",
                    "function": {"name": c.name, "arguments": c.arguments_json},
                }
                for c in reply.calls
            ]
        finish = reply.finish_reason or ("tool_calls" if reply.calls else "stop")
        return {
            "id": "chatcmpl-fake",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": str(body.get("model", "fake-model")),
            "choices": [{"index": 0, "message": message, "finish_reason": finish}],
            "usage": _usage(reply, body),
        }

    def error_body(self, code: int, message: str) -> dict[str, Any]:
        if message == ASSERTION_FAILED:  # llama-cpp-python: str(AssertionError()) is ""
            return {
                "error": {
                    "message": "",
                    "type": "internal_server_error",
                    "param": None,
                    "code": None,
                }
            }
        kind, error_code = _ERROR_TYPES.get(code, ("server_error", None))
        return {"error": {"message": message, "type": kind, "param": None, "code": error_code}}

    def default_error_message(self, code: int) -> str:
        if code == 429:
            return "Rate limit reached for requests. Please try again shortly."
        if code >= 500:
            return "The server had an error while processing your request."
        return f"fake OpenAI error {code}"

    def models_body(self) -> dict[str, Any]:
        return {
            "object": "list",
            "data": [
                {"id": m, "object": "model", "created": 0, "owned_by": self.owned_by}
                for m in self.models
            ],
        }


class _ChunkMaker:
    def __init__(self, model: str) -> None:
        self._base = {
            "id": "chatcmpl-fake",
            "object": "chat.completion.chunk",
            "created": int(time.time()),
            "model": model,
            "system_fingerprint": "fp_fake",
        }

    def event(self, delta: dict[str, Any], finish_reason: str | None = None) -> bytes:
        choice = {"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish_reason}
        return _sse({**self._base, "choices": [choice]})

    def usage_event(self, usage: dict[str, int]) -> bytes:
        return _sse({**self._base, "choices": [], "usage": usage})


def _sse(payload: dict[str, Any]) -> bytes:
    return b"data: " + json.dumps(payload, separators=(",", ":")).encode() + b"\n\n"


def _tool_call_deltas(reply: Reply, repeat_names: bool = False) -> list[dict[str, Any]]:
    """The ``delta.tool_calls`` entries: a head (id, name) then argument pieces, per call.

    ``repeat_names``: every piece repeats the head's id, type and whole name (llama-cpp-python).
    """
    per_call: list[list[dict[str, Any]]] = []
    for index, call in enumerate(reply.calls):
        pieces = _argument_pieces(call, reply.split_arguments)
        head = {
            "index": index,
            "id": call.id,
            "type": "function",
            "function": {"name": call.name, "arguments": ""},
        }
        if repeat_names:
            rest = [{**head, "function": {"name": call.name, "arguments": p}} for p in pieces]
        else:
            rest = [{"index": index, "function": {"arguments": p}} for p in pieces]
        per_call.append([head, *rest])
    if not reply.interleave:
        return [d for deltas in per_call for d in deltas]
    # Round-robin: call 0 piece 0, call 1 piece 0, call 0 piece 1…
    out: list[dict[str, Any]] = []
    for step in range(max((len(d) for d in per_call), default=0)):
        out.extend(deltas[step] for deltas in per_call if step < len(deltas))
    return out


def _argument_pieces(call: ToolCall, split: bool) -> list[str]:
    arguments = call.arguments_json
    return split_evenly(arguments, 3) if split else [arguments]


def _usage(reply: Reply, body: RequestBody) -> dict[str, int]:
    if reply.usage is not None:
        prompt, completion = reply.usage
    else:
        messages = body.get("messages") or []
        prompt = count_words(_content_text(m) for m in messages if isinstance(m, dict))
        completion = reply.output_tokens()
    return {
        "prompt_tokens": prompt,
        "completion_tokens": completion,
        "total_tokens": prompt + completion,
    }


def _content_text(message: dict[str, Any]) -> str:
    content = message.get("content")
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(str(part.get("text", "")) for part in content if isinstance(part, dict))
    return ""
