"""The Anthropic provider: the real ``anthropic`` SDK against a fake Messages API over loopback."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import anyio
import pytest

from mcp_export.errors import (
    ProviderAuthError,
    ProviderProtocolError,
    ProviderRateLimited,
    ProviderServerError,
    ProviderTimeout,
    ProviderUnreachable,
)
from mcp_export.providers.anthropic_provider import AnthropicProvider
from mcp_export.providers.base import (
    ChatMessage,
    Completion,
    ModelRequest,
    TextDelta,
    ToolCallRequest,
    ToolSchema,
    Usage,
)
from tests.fakes import (
    FakeAnthropicServer,
    cut_off,
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
    return ModelRequest("claude-test", (ChatMessage("user", question),), **kwargs)


@asynccontextmanager
async def anthropic_provider(base_url: str, **kwargs: Any) -> AsyncIterator[AnthropicProvider]:
    kwargs.setdefault("retry_delay", 0.01)
    provider = AnthropicProvider(kwargs.pop("api_key", "sk-ant-test"), base_url, **kwargs)
    try:
        yield provider
    finally:
        await provider.aclose()


async def collect(
    provider: AnthropicProvider, request: ModelRequest
) -> tuple[list[str], Completion]:
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
    with FakeAnthropicServer([text("Hello world", chunks=3, usage=(12, 3))]) as server:
        async with anthropic_provider(server.base_url) as provider:
            deltas, completion = await collect(provider, ask())
    assert deltas == ["Hell", "o wo", "rld"]
    assert completion.message == ChatMessage("assistant", "Hello world")
    assert completion.usage == Usage(12, 3)
    assert completion.stop_reason == "end_turn"
    request = server.model_requests[0]
    assert FakeAnthropicServer.api_key_sent(request.headers) == "sk-ant-test"
    assert request.body["max_tokens"] == 4096  # required by the API: defaulted
    assert request.body["stream"] is True


async def test_tool_use_blocks_with_input_in_pieces_become_tool_calls() -> None:
    calls = [
        ("toolu_1", "time__get_current_time", {"timezone": "UTC"}),
        ("toolu_2", "time__get_current_time", {"timezone": "Asia/Tokyo"}),
    ]
    with FakeAnthropicServer([tool_calls(calls, text="Let me check.")]) as server:
        async with anthropic_provider(server.base_url) as provider:
            deltas, completion = await collect(provider, ask(tools=(TIME_TOOL,)))
    assert "".join(deltas) == "Let me check."
    assert completion.message.tool_calls == (
        ToolCallRequest("toolu_1", "time__get_current_time", {"timezone": "UTC"}),
        ToolCallRequest("toolu_2", "time__get_current_time", {"timezone": "Asia/Tokyo"}),
    )
    assert completion.stop_reason == "tool_use"


async def test_tool_turns_translate_to_tool_use_and_merged_tool_result_blocks() -> None:
    conversation = (
        ChatMessage("system", "You are terse."),
        ChatMessage("user", "Time in UTC and on Mars?"),
        ChatMessage(
            "assistant",
            "Checking.",
            tool_calls=(
                ToolCallRequest("toolu_1", "time__get_current_time", {"timezone": "UTC"}),
                ToolCallRequest("toolu_2", "time__get_current_time", {"timezone": "Mars"}),
            ),
        ),
        ChatMessage("tool", "12:00", tool_call_id="toolu_1", name="time__get_current_time"),
        ChatMessage(
            "tool",
            "unknown timezone",
            tool_call_id="toolu_2",
            name="time__get_current_time",
            is_error=True,
        ),
        ChatMessage("assistant", "UTC: 12:00."),
        ChatMessage("user", "Thanks"),
    )
    parameters = {
        "temperature": 0.2,
        "top_p": 0.9,
        "max_tokens": 100,
        "stop": ["END"],
        "seed": 7,  # no Anthropic equivalent: left out
        "tool_choice": "required",
        "response_format": {
            "type": "json_schema",
            "json_schema": {"name": "answer", "schema": {"type": "object"}},
        },
    }
    request = ModelRequest("claude-test", conversation, (TIME_TOOL,), parameters)
    with FakeAnthropicServer() as server:
        async with anthropic_provider(server.base_url) as provider:
            _, completion = await collect(provider, request)
    assert completion.message.content == "Thanks"
    assert server.bodies[0] == {
        "model": "claude-test",
        "max_tokens": 100,
        "system": "You are terse.",
        "messages": [
            {"role": "user", "content": "Time in UTC and on Mars?"},
            {
                "role": "assistant",
                "content": [
                    {"type": "text", "text": "Checking."},
                    {
                        "type": "tool_use",
                        "id": "toolu_1",
                        "name": "time__get_current_time",
                        "input": {"timezone": "UTC"},
                    },
                    {
                        "type": "tool_use",
                        "id": "toolu_2",
                        "name": "time__get_current_time",
                        "input": {"timezone": "Mars"},
                    },
                ],
            },
            {
                "role": "user",
                "content": [
                    {"type": "tool_result", "tool_use_id": "toolu_1", "content": "12:00"},
                    {
                        "type": "tool_result",
                        "tool_use_id": "toolu_2",
                        "content": "unknown timezone",
                        "is_error": True,
                    },
                ],
            },
            {"role": "assistant", "content": "UTC: 12:00."},
            {"role": "user", "content": "Thanks"},
        ],
        "tools": [
            {
                "name": "time__get_current_time",
                "description": "Current time in a timezone.",
                "input_schema": dict(TIME_TOOL.input_schema),
            }
        ],
        "tool_choice": {"type": "any"},
        "stop_sequences": ["END"],
        "output_config": {"format": {"type": "json_schema", "schema": {"type": "object"}}},
        "temperature": 0.2,
        "top_p": 0.9,
        "stream": True,
    }


async def test_a_tool_name_as_tool_choice_forces_that_tool() -> None:
    provider = AnthropicProvider("sk-ant-test", "http://127.0.0.1:1")
    request = ask(tools=(TIME_TOOL,), parameters={"tool_choice": "time__get_current_time"})
    arguments = provider.request_arguments(request)
    assert arguments["tool_choice"] == {"type": "tool", "name": "time__get_current_time"}


async def test_a_529_overload_is_retried_then_succeeds() -> None:
    with FakeAnthropicServer([status(529, retry_after=0), text("ok")]) as server:
        async with anthropic_provider(server.base_url, retry_delay=30) as provider:
            started = time.monotonic()
            _, completion = await collect(provider, ask())
    assert completion.message.content == "ok"
    assert len(server.model_requests) == 2
    assert time.monotonic() - started < 5


async def test_429_forever_ends_as_rate_limited() -> None:
    with FakeAnthropicServer(responder=lambda body: status(429, retry_after=0)) as server:
        async with anthropic_provider(server.base_url, max_retries=1) as provider:
            with pytest.raises(ProviderRateLimited, match="per-minute rate limit"):
                await collect(provider, ask())
    assert len(server.model_requests) == 2


async def test_500_forever_ends_as_a_server_error_within_a_bounded_time() -> None:
    with FakeAnthropicServer(responder=lambda body: status(500)) as server:
        async with anthropic_provider(server.base_url, max_retries=2) as provider:
            started = time.monotonic()
            with pytest.raises(ProviderServerError, match="gave up after 3 attempts"):
                await collect(provider, ask())
    assert time.monotonic() - started < 5
    assert len(server.model_requests) == 3


async def test_a_refused_key_is_an_auth_error_naming_the_setting() -> None:
    with FakeAnthropicServer(api_key="sk-ant-right") as server:
        async with anthropic_provider(server.base_url, api_key="sk-ant-wrong") as provider:
            with pytest.raises(ProviderAuthError) as caught:
                await collect(provider, ask())
    assert "the API key was refused (401): check ANTHROPIC_API_KEY" in str(caught.value)
    assert len(server.model_requests) == 1


@pytest.mark.parametrize(
    "reply", [garbage(), cut_off(), cut_off(abrupt=True)], ids=["garbage", "cut", "abrupt"]
)
async def test_a_broken_stream_is_a_protocol_error(reply: Any) -> None:
    with FakeAnthropicServer([reply]) as server:
        async with anthropic_provider(server.base_url) as provider:
            with pytest.raises(ProviderProtocolError):
                await collect(provider, ask())


async def test_malformed_tool_input_is_a_call_whose_arguments_error_says_so() -> None:
    lookup = ToolSchema("lookup", "Look up a key.", {"type": "object"})
    with FakeAnthropicServer([tool_calls([("toolu_1", "lookup", '{"key": ')])]) as server:
        async with anthropic_provider(server.base_url) as provider:
            _, completion = await collect(provider, ask(tools=(lookup,)))
    [call] = completion.message.tool_calls
    assert (call.name, call.arguments) == ("lookup", {})
    assert call.arguments_error is not None
    assert call.arguments_error.startswith("the tool input is malformed (Expecting value")


async def test_nothing_listening_is_unreachable() -> None:
    with refused_origin() as url:
        async with anthropic_provider(url, max_retries=1) as provider:
            expected = f"nothing answers at {url} — is the server"
            with pytest.raises(ProviderUnreachable, match=expected):
                await collect(provider, ask())


async def test_a_server_that_never_answers_times_out() -> None:
    with FakeAnthropicServer([hang()]) as server:
        async with anthropic_provider(server.base_url, timeout=0.3) as provider:
            started = time.monotonic()
            with pytest.raises(ProviderTimeout):
                await collect(provider, ask())
    assert time.monotonic() - started < 5


async def test_a_stream_that_stalls_times_out() -> None:
    with FakeAnthropicServer([text("a b c", chunks=3, chunk_delay=30)]) as server:
        async with anthropic_provider(server.base_url, timeout=0.3) as provider:
            with pytest.raises(ProviderTimeout, match="stopped sending"):
                await collect(provider, ask())


async def test_cancelling_mid_stream_closes_the_connection_promptly() -> None:
    with FakeAnthropicServer([text("one two three", chunks=3, chunk_delay=30)]) as server:
        async with anthropic_provider(server.base_url) as provider:
            first = asyncio.Event()

            async def consume() -> None:
                async for event in provider.stream(ask()):
                    if isinstance(event, TextDelta):
                        first.set()

            task = asyncio.create_task(consume())
            with anyio.fail_after(5):
                await first.wait()
            task.cancel()
            with pytest.raises(asyncio.CancelledError):
                await task
            assert await anyio.to_thread.run_sync(server.wait_for_disconnect, 1, 5.0)
