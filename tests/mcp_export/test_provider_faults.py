"""Provider faults, one table, both HTTP providers: each fault and the message it must produce.

Every row is a way a model endpoint (or whatever answers at its address: a proxy, a web server)
misbehaves. Each is played by the fake servers in ``tests.fakes`` over real HTTP on loopback, to
the real ``OpenAIProvider`` and ``AnthropicProvider``, and must end as the named error with a
message that says what came back and what to do — within a bounded time, and without the key
the request carried, even where the server repeated it.
"""

from __future__ import annotations

import json
import re
import time
from dataclasses import dataclass
from typing import Any

import anyio
import pytest

from mcp_export.errors import (
    ProviderAuthError,
    ProviderError,
    ProviderProtocolError,
    ProviderRateLimited,
    ProviderServerError,
    ProviderTimeout,
    ProviderUnreachable,
)
from mcp_export.providers.anthropic_provider import AnthropicProvider
from mcp_export.providers.base import ChatMessage, Completion, ModelRequest, Provider
from mcp_export.providers.openai_provider import OpenAIProvider
from tests.fakes._script import (
    Reply,
    events,
    hang,
    page,
    reset,
    status,
    text,
    tool_calls,
)
from tests.fakes._server import FakeModelServer
from tests.fakes.anthropic_server import FakeAnthropicServer
from tests.fakes.openai_server import FakeOpenAIServer

pytestmark = pytest.mark.anyio

KEY = "mak-faulttable-0123456789abcdef0123456789"
"""The key every request carries (no well-known shape: only remembering it redacts it)."""

NGINX_502 = (
    "<html>\r\n<head><title>502 Bad Gateway</title></head>\r\n<body>\r\n"
    "<center><h1>502 Bad Gateway</h1></center>\r\n<hr><center>nginx</center>\r\n</body>\r\n"
    "</html>\r\n"
)
WELCOME = (
    "<!DOCTYPE html><html><head><title>Welcome to nginx!</title></head><body><h1>Welcome to "
    "nginx!</h1></body></html>"
)


# --- the wire formats, byte by byte -------------------------------------------------------------


def chunk(delta: dict[str, Any] | None = None, finish: str | None = None, **extra: Any) -> bytes:
    """A Chat Completions stream event."""
    choices = [] if delta is None else [{"index": 0, "delta": delta, "finish_reason": finish}]
    payload = {"id": "c", "object": "chat.completion.chunk", "choices": choices, **extra}
    return b"data: " + json.dumps(payload).encode() + b"\n\n"


def message_event(name: str, payload: dict[str, Any]) -> bytes:
    """A Messages API stream event."""
    return (
        f"event: {name}\ndata: ".encode()
        + json.dumps({"type": name, **payload}).encode()
        + (b"\n\n")
    )


MESSAGE_START = message_event(
    "message_start",
    {
        "message": {
            "id": "msg",
            "type": "message",
            "role": "assistant",
            "model": "m",
            "content": [],
            "stop_reason": None,
            "stop_sequence": None,
            "usage": {"input_tokens": 3, "output_tokens": 1},
        }
    },
)
TEXT_BLOCK = message_event(
    "content_block_start", {"index": 0, "content_block": {"type": "text", "text": ""}}
)


def text_delta(piece: str) -> bytes:
    return message_event(
        "content_block_delta", {"index": 0, "delta": {"type": "text_delta", "text": piece}}
    )


HUGE = "x" * (20 * 1024 * 1024)


# --- the table ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class Fault:
    """One fault: what each fake sends, the error it must end as and its message (a regex).

    ``{api}`` in a message stands for the API's name (``Chat Completions``, ``Messages API``).
    ``forever``: the fake sends the reply to every request (retries see it again).
    ``retry_delay``: the provider's first backoff (30 s where only a ``Retry-After`` the provider
    honours can make the retry come at once).
    ``openai_requests``: the requests the OpenAI provider sends where it asks again without
    streaming (None: as many as the retries allow).
    """

    id: str
    openai: Reply
    anthropic: Reply
    error: type[ProviderError]
    message: str
    anthropic_message: str | None = None
    forever: bool = False
    max_retries: int = 0
    timeout: float = 10.0
    retry_delay: float = 0.01
    openai_requests: int | None = None


FAULTS = [
    Fault(
        "401 echoing the key",
        status(401, message="Incorrect API key provided", echo_credentials=True),
        status(401, message="Incorrect API key provided", echo_credentials=True),
        ProviderAuthError,
        r"the API key was refused \(401\): check [A-Z]+_API_KEY \(Incorrect API key provided: "
        r"Bearer \[redacted\]\)",
    ),
    Fault(
        "429 with Retry-After",
        status(429, retry_after=0),
        status(429, retry_after=0),
        ProviderRateLimited,
        r"is rate-limiting requests \(429\): .*; wait a little, or lower the request rate "
        r"\(gave up after 2 attempts\)",
        forever=True,
        max_retries=1,
        retry_delay=30.0,
    ),
    Fault(
        "500 HTML page",
        page(500, NGINX_502),
        page(500, NGINX_502),
        ProviderServerError,
        r"failed with 500: an HTML page titled '502 Bad Gateway' \(a web server or proxy "
        r"answered, not the API\); try again later \(gave up after 2 attempts\)",
        forever=True,
        max_retries=1,
    ),
    Fault(
        "200 HTML page",
        page(200, WELCOME),
        page(200, WELCOME),
        ProviderProtocolError,
        r"answered 200 with an HTML page titled 'Welcome to nginx!', not a {api} stream: check "
        r"the base URL",
    ),
    Fault(
        "200 not JSON",
        page(200, "OK", content_type="text/plain"),
        page(200, "OK", content_type="text/plain"),
        ProviderProtocolError,
        r"answered 200 with a text/plain body \('OK'\), not a {api} stream: check the base URL",
    ),
    Fault(
        "200 JSON body instead of a stream",
        page(200, '{"id": "x", "object": "chat.completion"}', content_type="application/json"),
        page(200, '{"id": "x", "type": "message"}', content_type="application/json"),
        ProviderProtocolError,
        r"answered 200 with a JSON body \('\{\"id\": \"x\", .*\}'\), not a {api} stream",
    ),
    Fault(
        "200 JSON error instead of a stream",
        page(200, '{"error": {"message": "model is loading"}}', content_type="application/json"),
        page(200, '{"error": {"message": "model is loading"}}', content_type="application/json"),
        ProviderProtocolError,
        r"answered 200 with an error: model is loading, not a {api} stream",
    ),
    Fault(
        # llama-cpp-python fails a streamed request inside the model call this way: the OpenAI
        # provider asks once more without streaming, and gets the same.
        "200 empty body",
        page(200, b"", content_type="text/event-stream"),
        page(200, b"", content_type="text/event-stream"),
        ProviderProtocolError,
        r"answered 200 with an empty body, not a {api} stream",
        forever=True,
        openai_requests=2,
    ),
    Fault(
        "200 with no choices",
        events(chunk(usage={"prompt_tokens": 3}), b"data: [DONE]\n\n"),
        events(MESSAGE_START, message_event("ping", {})),
        ProviderProtocolError,
        r"the stream from 127\.0\.0\.1:\d+ \(server: [^)]+\) ended with no choices \(1 event, "
        r"none with an answer\): the server gave no answer; check the model name",
        anthropic_message=r"the stream from 127\.0\.0\.1:\d+ was cut off before the answer "
        r"finished",
    ),
    Fault(
        "stream cut mid-event (connection closed)",
        events(chunk({"content": "Hel"}), b'data: {"id": "c", "cho', abrupt=True),
        events(MESSAGE_START, TEXT_BLOCK, b"event: content_block_delta\ndata: {", abrupt=True),
        ProviderProtocolError,
        r"the stream from http://127\.0\.0\.1:\d+\S* broke off before the answer was complete",
    ),
    Fault(
        "stream cut mid-event (body ended)",
        events(chunk({"content": "Hel"}), b'data: {"id": "c", "cho'),
        events(MESSAGE_START, TEXT_BLOCK, b"event: content_block_delta\ndata: {"),
        ProviderProtocolError,
        r"the stream from 127\.0\.0\.1:\d+ \(server: [^)]+\) ended in the middle of an event, "
        r"before the answer was complete",
        anthropic_message=r"the stream from 127\.0\.0\.1:\d+ was cut off before the answer "
        r"finished",
    ),
    Fault(
        "error event mid-stream, repeating the key",
        events(
            chunk({"content": "Hel"}),
            b'data: {"error": {"message": "overloaded (key ' + KEY.encode() + b')"}}\n\n',
        ),
        events(
            MESSAGE_START,
            message_event(
                "error",
                {"error": {"type": "overloaded_error", "message": f"overloaded (key {KEY})"}},
            ),
        ),
        ProviderServerError,
        r"reported an error in the middle of the answer: overloaded \(key \[redacted\]\)",
    ),
    Fault(
        "invalid UTF-8",
        events(b'data: {"choices": [{"index": 0, "delta": {"content": "\xff\xfe"}}]}\n\n'),
        events(MESSAGE_START, TEXT_BLOCK, text_delta("ok").replace(b"ok", b"\xff\xfe")),
        ProviderProtocolError,
        r"sent bytes that are not UTF-8 in its stream \(invalid start byte\); check that "
        r"\S+ speaks the {api}",
    ),
    Fault(
        "one 20 MB event",
        events(chunk({"content": HUGE})),
        events(MESSAGE_START, TEXT_BLOCK, text_delta(HUGE)),
        ProviderProtocolError,
        r"one event of the stream passed 8 MiB; stopped reading — no answer is that large; "
        r"check the server at \S+, or ask for a shorter answer \(settings\.maxOutputTokens\)",
        timeout=60.0,
    ),
    Fault(
        "hang before the headers",
        hang(),
        hang(),
        ProviderTimeout,
        r"did not answer within 0\.5 s",
        timeout=0.5,
    ),
    Fault(
        "hang mid-stream",
        text("Hello there", chunks=2, chunk_delay=60),
        text("Hello there", chunks=2, chunk_delay=60),
        ProviderTimeout,
        r"stopped sending for 0\.5 s in the middle of the answer",
        timeout=0.5,
    ),
    Fault(
        "connection reset",
        reset(),
        reset(),
        ProviderUnreachable,
        r"the connection to \S+ was closed before any answer — is the server running, and is "
        r"the base URL an http\(s\) API address\? \(gave up after 2 attempts\)",
        forever=True,
        max_retries=1,
    ),
    Fault(
        "redirect",
        page(307, b"", headers=[("location", "http://127.0.0.1:9/v1/chat/completions")]),
        page(307, b"", headers=[("location", "http://127.0.0.1:9/v1/messages")]),
        ProviderError,
        r"did not answer at \S+ \(307\): redirected to http://127\.0\.0\.1:9/v1/\S+; use the "
        r"address it moved to as the base URL",
    ),
]

API = {"openai": "Chat Completions", "anthropic": "Messages API"}


def make_server(kind: str, fault: Fault) -> FakeModelServer:
    reply = fault.openai if kind == "openai" else fault.anthropic
    fake = FakeOpenAIServer if kind == "openai" else FakeAnthropicServer
    if fault.forever:
        return fake(responder=lambda body: reply)
    return fake([reply])


def make_provider(kind: str, base_url: str, fault: Fault) -> Provider:
    options: dict[str, Any] = {
        "timeout": fault.timeout,
        "max_retries": fault.max_retries,
        "retry_delay": fault.retry_delay,
    }
    if kind == "openai":
        return OpenAIProvider(KEY, base_url, **options)
    return AnthropicProvider(KEY, base_url, **options)


async def answer(provider: Provider) -> None:
    request = ModelRequest("fake-model", (ChatMessage("user", "Hi"),))
    async for _ in provider.stream(request):
        pass


@pytest.mark.parametrize("kind", ["openai", "anthropic"])
@pytest.mark.parametrize("fault", FAULTS, ids=[f.id for f in FAULTS])
async def test_each_provider_fault_ends_as_an_error_that_says_what_came_back(
    fault: Fault, kind: str
) -> None:
    expected = fault.anthropic_message if kind == "anthropic" else None
    pattern = (expected or fault.message).replace("{api}", API[kind])
    with make_server(kind, fault) as server:
        provider = make_provider(kind, server.base_url, fault)  # type: ignore[attr-defined]
        started = time.monotonic()
        try:
            with anyio.fail_after(fault.timeout + 20), pytest.raises(fault.error) as caught:
                await answer(provider)
        finally:
            await provider.aclose()
        elapsed = time.monotonic() - started
        assert server.errors == []
        requests = len(server.model_requests)
    message = str(caught.value)
    assert KEY not in message
    assert caught.value.__class__ is fault.error, message
    assert re.search(pattern, message), message
    expected_requests = fault.max_retries + 1
    if kind == "openai" and fault.openai_requests is not None:
        expected_requests = fault.openai_requests
    assert requests == expected_requests
    assert elapsed < fault.timeout + 15


@pytest.mark.parametrize("kind", ["openai", "anthropic"])
async def test_tool_arguments_cut_short_make_a_call_the_model_is_told_about(kind: str) -> None:
    cut = tool_calls([("c1", "lookup", '{"city": "Os')])
    fault = Fault("tool-call arguments cut short", cut, cut, ProviderError, "")
    with make_server(kind, fault) as server:
        provider = make_provider(kind, server.base_url, fault)  # type: ignore[attr-defined]
        request = ModelRequest("fake-model", (ChatMessage("user", "Hi"),))
        try:
            with anyio.fail_after(20):
                found = [event async for event in provider.stream(request)]
        finally:
            await provider.aclose()
    completion = found[-1]
    assert isinstance(completion, Completion)
    (call,) = completion.message.tool_calls
    assert (call.id, call.name, call.arguments) == ("c1", "lookup", {})
    assert call.arguments_error, call


@pytest.mark.parametrize("kind", ["openai", "anthropic"])
async def test_a_redirect_is_not_followed_so_the_key_stays_home(kind: str) -> None:
    with FakeOpenAIServer() as elsewhere:
        target = f"{elsewhere.origin}/v1/{'chat/completions' if kind == 'openai' else 'messages'}"
        fault = Fault(
            "redirect",
            page(307, b"", headers=[("location", target)]),
            page(307, b"", headers=[("location", target)]),
            ProviderError,
            "",
        )
        with make_server(kind, fault) as server:
            provider = make_provider(kind, server.base_url, fault)  # type: ignore[attr-defined]
            try:
                with anyio.fail_after(20), pytest.raises(ProviderError, match="redirected to"):
                    await answer(provider)
            finally:
                await provider.aclose()
        assert elsewhere.requests == []


@pytest.mark.parametrize("kind", ["openai", "anthropic"])
async def test_an_answer_whose_body_stays_open_after_its_end_is_complete_at_once(
    kind: str,
) -> None:
    if kind == "openai":
        end = [chunk({"content": "Hi"}), chunk({}, "stop"), b"data: [DONE]\n\n"]
    else:
        end = [
            MESSAGE_START,
            TEXT_BLOCK,
            text_delta("Hi"),
            message_event("message_delta", {"delta": {"stop_reason": "end_turn"}, "usage": {}}),
            message_event("message_stop", {}),
        ]
    # The last chunk ends the answer; the body then stays open (a proxy holding the connection).
    reply = events(b"".join(end), b": still here\n\n", chunk_delay=60)
    fault = Fault("open after the end", reply, reply, ProviderError, "", timeout=30.0)
    with make_server(kind, fault) as server:
        provider = make_provider(kind, server.base_url, fault)  # type: ignore[attr-defined]
        texts: list[str] = []
        try:
            with anyio.fail_after(10):
                async for event in provider.stream(ModelRequest("m", (ChatMessage("user", "Hi"),))):
                    texts.append(getattr(event, "text", ""))
        finally:
            await provider.aclose()
        assert server.errors == []
    assert texts[0] == "Hi"
