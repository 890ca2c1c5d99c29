"""The OpenAI-compatible provider: the real ``openai`` SDK against a fake server over loopback."""

from __future__ import annotations

import asyncio
import json
import re
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
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
from mcp_export.providers.base import (
    ChatMessage,
    Completion,
    ModelRequest,
    TextDelta,
    ToolCallRequest,
    ToolSchema,
    Usage,
)
from mcp_export.providers.openai_provider import OpenAIProvider
from tests.fakes import (
    FakeOpenAIServer,
    cut_off,
    delay,
    garbage,
    hang,
    status,
    text,
    tool_calls,
)
from tests.fakes.ports import refused_origin

pytestmark = pytest.mark.anyio

TIME_TOOL = ToolSchema(
    "time__get_current_time",
    "Current time in a timezone.",
    {"type": "object", "properties": {"timezone": {"type": "string"}}, "required": ["timezone"]},
)


def ask(question: str = "Hi", **kwargs: Any) -> ModelRequest:
    return ModelRequest("fake-model", (ChatMessage("user", question),), **kwargs)


@asynccontextmanager
async def openai_provider(base_url: str, **kwargs: Any) -> AsyncIterator[OpenAIProvider]:
    kwargs.setdefault("retry_delay", 0.01)
    provider = OpenAIProvider(kwargs.pop("api_key", "sk-test"), base_url, **kwargs)
    try:
        yield provider
    finally:
        await provider.aclose()


async def collect(provider: OpenAIProvider, request: ModelRequest) -> tuple[list[str], Completion]:
    deltas: list[str] = []
    completions: list[Completion] = []
    async for event in provider.stream(request):
        if isinstance(event, TextDelta):
            assert not completions, "text after the Completion"
            deltas.append(event.text)
        elif isinstance(event, Completion):
            completions.append(event)
    assert len(completions) == 1
    return deltas, completions[0]


async def test_text_streams_as_deltas_then_one_completion_with_usage() -> None:
    with FakeOpenAIServer([text("Hello world", chunks=3, usage=(12, 3))]) as server:
        async with openai_provider(server.base_url) as provider:
            deltas, completion = await collect(provider, ask())
    assert deltas == ["Hell", "o wo", "rld"]
    assert completion.message == ChatMessage("assistant", "Hello world")
    assert completion.usage == Usage(12, 3)
    assert completion.stop_reason == "end_turn"
    body = server.bodies[0]
    assert body["stream"] is True
    assert body["stream_options"] == {"include_usage": True}
    assert server.requests[0].headers["authorization"] == "Bearer sk-test"


async def test_parallel_tool_calls_split_across_chunks_are_assembled_by_index() -> None:
    calls = [
        ("call_1", "time__get_current_time", {"timezone": "UTC"}),
        ("call_2", "time__get_current_time", {"timezone": "Europe/Paris"}),
    ]
    with FakeOpenAIServer([tool_calls(calls, interleave=True, text="Checking.")]) as server:
        async with openai_provider(server.base_url) as provider:
            deltas, completion = await collect(provider, ask(tools=(TIME_TOOL,)))
    assert "".join(deltas) == "Checking."
    assert completion.message.content == "Checking."
    assert completion.message.tool_calls == (
        ToolCallRequest("call_1", "time__get_current_time", {"timezone": "UTC"}),
        ToolCallRequest("call_2", "time__get_current_time", {"timezone": "Europe/Paris"}),
    )
    assert completion.stop_reason == "tool_use"


async def test_a_multi_turn_conversation_with_tool_results_maps_to_the_exact_body() -> None:
    conversation = (
        ChatMessage("system", "You are terse."),
        ChatMessage("user", "Time in UTC and on Mars?"),
        ChatMessage(
            "assistant",
            "",
            tool_calls=(
                ToolCallRequest("call_1", "time__get_current_time", {"timezone": "UTC"}),
                ToolCallRequest("call_2", "time__get_current_time", {"timezone": "Mars"}),
            ),
        ),
        ChatMessage("tool", "12:00", tool_call_id="call_1", name="time__get_current_time"),
        ChatMessage(
            "tool",
            "unknown timezone",
            tool_call_id="call_2",
            name="time__get_current_time",
            is_error=True,
        ),
        ChatMessage("assistant", "UTC: 12:00; Mars has no timezone."),
        ChatMessage("user", "Thanks"),
    )
    parameters = {
        "temperature": 0.2,
        "top_p": 0.9,
        "max_tokens": 100,
        "stop": ["END"],
        "seed": 7,
        "presence_penalty": 0.5,
        "frequency_penalty": -0.5,
        "response_format": {"type": "json_object"},
        "tool_choice": "time__get_current_time",
    }
    request = ModelRequest("fake-model", conversation, (TIME_TOOL,), parameters)
    with FakeOpenAIServer() as server:
        async with openai_provider(server.base_url) as provider:
            _, completion = await collect(provider, request)
    assert completion.message.content == "Thanks"  # the default responder echoes
    assert server.bodies[0] == {
        "model": "fake-model",
        "messages": [
            {"role": "system", "content": "You are terse."},
            {"role": "user", "content": "Time in UTC and on Mars?"},
            {
                "role": "assistant",
                "content": "",
                "tool_calls": [
                    {
                        "id": "call_1",
                        "type": "function",
                        "function": {
                            "name": "time__get_current_time",
                            "arguments": '{"timezone": "UTC"}',
                        },
                    },
                    {
                        "id": "call_2",
                        "type": "function",
                        "function": {
                            "name": "time__get_current_time",
                            "arguments": '{"timezone": "Mars"}',
                        },
                    },
                ],
            },
            {"role": "tool", "tool_call_id": "call_1", "content": "12:00"},
            {"role": "tool", "tool_call_id": "call_2", "content": "Error: unknown timezone"},
            {"role": "assistant", "content": "UTC: 12:00; Mars has no timezone."},
            {"role": "user", "content": "Thanks"},
        ],
        "tools": [
            {
                "type": "function",
                "function": {
                    "name": "time__get_current_time",
                    "description": "Current time in a timezone.",
                    "parameters": dict(TIME_TOOL.input_schema),
                },
            }
        ],
        "tool_choice": {"type": "function", "function": {"name": "time__get_current_time"}},
        "temperature": 0.2,
        "top_p": 0.9,
        "max_tokens": 100,
        "stop": ["END"],
        "seed": 7,
        "presence_penalty": 0.5,
        "frequency_penalty": -0.5,
        "response_format": {"type": "json_object"},
        "stream": True,
        "stream_options": {"include_usage": True},
    }


async def test_tool_choice_is_not_sent_without_tools() -> None:
    provider = OpenAIProvider("sk-test", "http://127.0.0.1:1/v1")
    arguments = provider.request_arguments(ask(parameters={"tool_choice": "required"}))
    assert "tool_choice" not in arguments
    assert "tools" not in arguments


async def test_openai_itself_gets_max_completion_tokens() -> None:
    # Its reasoning models refuse max_tokens; compatible servers only know max_tokens.
    official = OpenAIProvider("sk-test", None).request_arguments(ask(parameters={"max_tokens": 5}))
    assert official["max_completion_tokens"] == 5
    assert "max_tokens" not in official


async def test_a_429_is_retried_honouring_retry_after() -> None:
    with FakeOpenAIServer([status(429, retry_after=0), text("ok")]) as server:
        # A long backoff proves the retry-after of 0 was honoured instead.
        async with openai_provider(server.base_url, retry_delay=30) as provider:
            started = time.monotonic()
            _, completion = await collect(provider, ask())
    assert completion.message.content == "ok"
    assert len(server.model_requests) == 2
    assert time.monotonic() - started < 5


async def test_429_forever_ends_as_rate_limited_after_the_bounded_retries() -> None:
    with FakeOpenAIServer(responder=lambda body: status(429, retry_after=0)) as server:
        async with openai_provider(server.base_url, max_retries=2) as provider:
            with pytest.raises(ProviderRateLimited, match=r"429.*gave up after 3 attempts"):
                await collect(provider, ask())
    assert len(server.model_requests) == 3


async def test_500_forever_ends_as_a_server_error_within_a_bounded_time() -> None:
    with FakeOpenAIServer(responder=lambda body: status(500)) as server:
        async with openai_provider(server.base_url, max_retries=2) as provider:
            started = time.monotonic()
            with pytest.raises(ProviderServerError) as caught:
                await collect(provider, ask())
    assert time.monotonic() - started < 5
    assert len(server.model_requests) == 3
    # A local server is named where it is, and by what its Server header says.
    server_name = r"127\.0\.0\.1:\d+ \(server: BaseHTTP/[\d.]+ Python/[\d.]+\)"
    assert re.match(server_name + " failed with 500: ", str(caught.value))
    assert "gave up after 3 attempts" in str(caught.value)


async def test_a_refused_key_is_an_auth_error_naming_the_setting_and_not_retried() -> None:
    with FakeOpenAIServer(api_key="sk-right") as server:
        async with openai_provider(server.base_url, api_key="sk-wrong") as provider:
            with pytest.raises(ProviderAuthError) as caught:
                await collect(provider, ask())
    assert "the API key was refused (401): check OPENAI_API_KEY" in str(caught.value)
    assert len(server.model_requests) == 1


async def test_an_unknown_model_is_a_provider_error_naming_it() -> None:
    with FakeOpenAIServer([status(404, message="model 'nope' not found")]) as server:
        async with openai_provider(server.base_url) as provider:
            with pytest.raises(ProviderError, match=r"404 for model 'fake-model'.*settings.model"):
                await collect(provider, ask())


@pytest.mark.parametrize(
    "reply", [garbage(), cut_off(), cut_off(abrupt=True)], ids=["garbage", "cut", "abrupt"]
)
async def test_a_broken_stream_is_a_protocol_error(reply: Any) -> None:
    with FakeOpenAIServer([reply]) as server:
        async with openai_provider(server.base_url) as provider:
            with pytest.raises(ProviderProtocolError):
                await collect(provider, ask())
    assert len(server.model_requests) == 1  # a stream that started is never retried


@pytest.mark.parametrize(
    ("event", "message"),
    [
        ("[1, 2]", "a stream chunk is not a JSON object"),
        ('{"choices": "many"}', "a stream chunk's 'choices' is not a list of objects"),
        ('{"choices": [{"delta": {"tool_calls": [7]}}]}', "'tool_calls' is not a list of objects"),
    ],
    ids=["array", "choices", "tool-calls"],
)
async def test_json_that_is_not_a_chunk_is_a_protocol_error(event: str, message: str) -> None:
    with FakeOpenAIServer([garbage(event)]) as server:
        async with openai_provider(server.base_url) as provider:
            with pytest.raises(ProviderProtocolError, match=re.escape(message)):
                await collect(provider, ask())


async def test_malformed_tool_arguments_make_a_call_that_says_why_it_cannot_run() -> None:
    with FakeOpenAIServer([tool_calls([("call_1", "lookup", '{"key": ')])]) as server:
        async with openai_provider(server.base_url) as provider:
            _, completion = await collect(provider, ask())
    (call,) = completion.message.tool_calls
    assert (call.id, call.name, call.arguments) == ("call_1", "lookup", {})
    assert call.arguments_error is not None
    assert call.arguments_error.startswith("the arguments are not valid JSON: Expecting value")


async def test_nothing_listening_is_unreachable_with_a_hint() -> None:
    with refused_origin() as origin:
        url = f"{origin}/v1"
        async with openai_provider(url, max_retries=1) as provider:
            with pytest.raises(ProviderUnreachable) as caught:
                await collect(provider, ask())
        assert str(caught.value).startswith(
            f"nothing answers at {url} — is the server running and the base URL right?"
        )
        async with openai_provider(url, name="ollama", max_retries=0) as ollama:
            with pytest.raises(ProviderUnreachable, match=r"— is Ollama running\?$"):
                await collect(ollama, ask())


async def test_a_server_that_never_answers_times_out() -> None:
    with FakeOpenAIServer([hang()]) as server:
        async with openai_provider(server.base_url, timeout=0.3) as provider:
            started = time.monotonic()
            with pytest.raises(ProviderTimeout, match=r"did not answer within 0\.3 s"):
                await collect(provider, ask())
    assert time.monotonic() - started < 5
    assert len(server.model_requests) == 1  # a timeout already waited its time: no retry


async def test_a_stream_that_stalls_times_out() -> None:
    with FakeOpenAIServer([text("a b c", chunks=3, chunk_delay=30)]) as server:
        async with openai_provider(server.base_url, timeout=0.3) as provider:
            with pytest.raises(ProviderTimeout, match="stopped sending"):
                await collect(provider, ask())


async def test_cancelling_mid_stream_closes_the_connection_promptly() -> None:
    with FakeOpenAIServer([text("one two three", chunks=3, chunk_delay=30)]) as server:
        async with openai_provider(server.base_url) as provider:
            first = asyncio.Event()

            async def consume() -> None:
                async for event in provider.stream(ask()):
                    if isinstance(event, TextDelta):
                        first.set()

            task = asyncio.create_task(consume())
            with anyio.fail_after(5):
                await first.wait()
            started = time.monotonic()
            task.cancel()
            with pytest.raises(asyncio.CancelledError):
                await task
            assert await anyio.to_thread.run_sync(server.wait_for_disconnect, 1, 15.0)
            assert time.monotonic() - started < 10  # not the 30 s the next chunk is due in


async def test_one_provider_serves_concurrent_requests() -> None:
    with FakeOpenAIServer() as server:
        async with openai_provider(server.base_url) as provider:
            answers: dict[int, str] = {}

            async def one(index: int) -> None:
                _, completion = await collect(provider, ask(f"question {index}"))
                answers[index] = completion.message.content

            async with anyio.create_task_group() as group:
                for index in range(20):
                    group.start_soon(one, index)
    assert answers == {i: f"question {i}" for i in range(20)}


async def test_cancelling_before_the_answer_starts_closes_the_connection() -> None:
    with FakeOpenAIServer([delay(30, text("late"))]) as server:
        async with openai_provider(server.base_url) as provider:

            async def consume() -> None:
                async for _ in provider.stream(ask()):
                    pass

            task = asyncio.create_task(consume())
            assert await anyio.to_thread.run_sync(server.wait_for_requests, 1, 5.0)
            task.cancel()
            with pytest.raises(asyncio.CancelledError):
                await task
            assert await anyio.to_thread.run_sync(server.wait_for_disconnect, 1, 5.0)


async def test_a_cancel_scope_deadline_mid_stream_closes_the_connection() -> None:
    # The chat session bounds runs with anyio scopes, which re-cancel every await in cleanup.
    with FakeOpenAIServer([text("one two three", chunks=3, chunk_delay=30)]) as server:
        async with openai_provider(server.base_url) as provider:
            received: list[str] = []
            with anyio.move_on_after(0.5) as scope:
                async for event in provider.stream(ask()):
                    if isinstance(event, TextDelta):
                        received.append(event.text)
            assert scope.cancelled_caught
            assert received == ["one t"]
            assert await anyio.to_thread.run_sync(server.wait_for_disconnect, 1, 5.0)


def test_stopping_the_fake_server_unblocks_hanging_requests_and_joins_its_threads() -> None:
    import threading

    import httpx2

    server = FakeOpenAIServer([hang()])
    failures: list[BaseException] = []

    def call() -> None:
        try:
            httpx2.post(f"{server.base_url}/chat/completions", json={"model": "m"}, timeout=30)
        except httpx2.HTTPError as exc:
            failures.append(exc)

    caller = threading.Thread(target=call)
    caller.start()
    assert server.wait_for_requests(1, timeout=5)
    started = time.monotonic()
    server.stop()
    caller.join(timeout=15)
    assert not caller.is_alive()
    assert time.monotonic() - started < 10  # not the client's 30 s timeout
    assert len(failures) == 1  # the hanging request ended with a closed connection
    assert not [t for t in threading.enumerate() if t.name.startswith("fake-model")]


def test_the_fake_server_lists_models_and_answers_without_streaming() -> None:
    import httpx2

    question = {"model": "m1", "messages": [{"role": "user", "content": "q"}]}
    with (
        FakeOpenAIServer([text("plain")], models=("m1", "m2")) as server,
        httpx2.Client(base_url=server.base_url) as client,
    ):
        models = client.get("/models").json()
        answer = client.post("/chat/completions", json=question).json()
    assert [m["id"] for m in models["data"]] == ["m1", "m2"]
    assert answer["choices"][0]["message"] == {"role": "assistant", "content": "plain"}
    assert answer["choices"][0]["finish_reason"] == "stop"
    assert answer["usage"]["total_tokens"] == answer["usage"]["prompt_tokens"] + 1


# --- the HTTP request itself (aiohttp directly: see providers/_openai_http.py) -------------------


async def test_the_request_carries_the_key_a_json_body_and_the_organisation_from_the_env(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("OPENAI_ORG_ID", "org-42")
    monkeypatch.delenv("OPENAI_PROJECT_ID", raising=False)
    with FakeOpenAIServer() as server:
        async with openai_provider(server.base_url, api_key="sk-secret") as provider:
            await collect(provider, ask("Oslo?"))
    (request,) = server.model_requests
    assert request.headers["authorization"] == "Bearer sk-secret"
    assert request.headers["content-type"] == "application/json"
    assert request.headers["openai-organization"] == "org-42"
    assert "openai-project" not in request.headers
    assert request.body["messages"] == [{"role": "user", "content": "Oslo?"}]


async def test_a_keyless_server_gets_a_placeholder_token() -> None:
    with FakeOpenAIServer() as server:
        async with openai_provider(server.base_url, api_key=None) as provider:
            await collect(provider, ask())
    assert server.model_requests[0].headers["authorization"] == "Bearer no-key"


async def test_a_proxy_set_in_the_environment_carries_the_request(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    with FakeOpenAIServer() as proxy:
        monkeypatch.setenv("HTTP_PROXY", proxy.base_url.removesuffix("/v1"))
        monkeypatch.delenv("NO_PROXY", raising=False)
        monkeypatch.delenv("no_proxy", raising=False)
        # The host does not resolve: only the proxy can have answered.
        async with openai_provider("http://model.invalid/v1", max_retries=0) as provider:
            _, completion = await collect(provider, ask("via proxy"))
    assert completion.message.content == "via proxy"
    assert proxy.model_requests[0].path == "http://model.invalid/v1/chat/completions"


async def test_an_error_event_mid_stream_is_a_server_error_with_its_message() -> None:
    event = '{"error": {"message": "the model is overloaded", "type": "server_error"}}'
    with FakeOpenAIServer([garbage(event)]) as server:
        async with openai_provider(server.base_url) as provider:
            with pytest.raises(
                ProviderServerError, match="in the middle of the answer: the model is overloaded"
            ):
                await collect(provider, ask())


@asynccontextmanager
async def raw_http_server(answer: bytes | None) -> AsyncIterator[tuple[str, list[int]]]:
    """A loopback server that reads one request per connection, then sends ``answer`` as it is
    (in pieces of 7 bytes) or, for None, closes the connection without a word. Yields its
    base URL and the count of POST requests it saw (a GET, such as the provider asking the
    model list what the server is, gets a 404)."""
    seen = [0]

    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        head = await reader.readuntil(b"\r\n\r\n")
        if head.startswith(b"GET "):
            writer.write(b"HTTP/1.1 404 Not Found\r\ncontent-length: 0\r\n\r\n")
            await writer.drain()
            writer.close()
            return
        length = int(re.search(rb"(?i)content-length: *(\d+)", head)[1])  # type: ignore[index]
        await reader.readexactly(length)
        seen[0] += 1
        if answer is not None:
            for start in range(0, len(answer), 7):
                writer.write(answer[start : start + 7])
                await writer.drain()
        writer.close()

    server = await asyncio.start_server(handle, "127.0.0.1", 0)
    try:
        yield f"http://127.0.0.1:{server.sockets[0].getsockname()[1]}/v1", seen
    finally:
        server.close()
        await server.wait_closed()


async def test_a_connection_closed_before_any_answer_is_unreachable_after_retries() -> None:
    async with raw_http_server(None) as (url, seen), openai_provider(url, max_retries=1) as model:
        with pytest.raises(ProviderUnreachable, match=r"gave up after 2 attempts"):
            await collect(model, ask())
    assert seen[0] == 2


async def test_an_error_status_with_a_plain_text_body_shows_that_text() -> None:
    body = b"upstream is down"
    answer = b"HTTP/1.1 502 Bad Gateway\r\ncontent-length: %d\r\n\r\n%s" % (len(body), body)
    async with raw_http_server(answer) as (url, seen), openai_provider(url, max_retries=0) as model:
        with pytest.raises(ProviderServerError, match=r"failed with 502: upstream is down"):
            await collect(model, ask())
    assert seen[0] == 1


async def test_events_with_crlf_line_ends_split_anywhere_are_decoded() -> None:
    chunk = {"choices": [{"index": 0, "delta": {"content": "héllo"}, "finish_reason": None}]}
    done = {"choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]}
    stream = (
        b": a comment\r\n\r\n"
        + b"data: "
        + json.dumps(chunk).encode()
        + b"\r\n\r\n"
        + b"data:"
        + json.dumps(done).encode()
        + b"\r\n\r\ndata: [DONE]\r\n\r\n"
    )
    answer = (
        b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\n"
        b"content-length: %d\r\n\r\n%s" % (len(stream), stream)
    )
    async with raw_http_server(answer) as (url, _), openai_provider(url) as provider:
        deltas, completion = await collect(provider, ask())
    assert deltas == ["héllo"]
    assert completion.message.content == "héllo"
    assert completion.stop_reason == "end_turn"


async def test_a_redirect_is_not_followed_and_names_where_it_points() -> None:
    answer = (
        b"HTTP/1.1 301 Moved Permanently\r\nlocation: https://api.example.com/v1/chat/completions"
        b"\r\ncontent-length: 0\r\n\r\n"
    )
    async with raw_http_server(answer) as (url, seen), openai_provider(url, max_retries=0) as model:
        with pytest.raises(
            ProviderError, match=r"\(301\): redirected to https://api.example.com/v1/chat/comp"
        ):
            await collect(model, ask())
    assert seen[0] == 1


@pytest.mark.parametrize("url", ["localhost:11434/v1", "http:///v1", "ftp://example.com/v1"])
async def test_a_base_url_that_is_not_an_http_address_is_named_not_retried(url: str) -> None:
    async with openai_provider(url, max_retries=2) as provider:
        with pytest.raises(ProviderError, match="is not an http:// or https:// address") as caught:
            await collect(provider, ask())
    assert not isinstance(caught.value, ProviderUnreachable | ProviderProtocolError)
    assert url in str(caught.value)
