"""The OpenAI-compatible provider against what real model servers do differently from OpenAI.

Each quirk is played by ``FakeOpenAIServer``'s options (llama-cpp-python's all at once with
``FakeOpenAIServer.like_llama_cpp_python``) over real HTTP on loopback, to the real provider.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import pytest

from mcp_export.providers.base import (
    ChatMessage,
    Completion,
    ModelRequest,
    ProviderEvent,
    ToolCallRequest,
    ToolSchema,
    Usage,
)
from mcp_export.providers.openai_provider import OpenAIProvider
from tests.fakes import FakeOpenAIServer, events, text, tool_calls

pytestmark = pytest.mark.anyio

WEATHER = ToolSchema(
    "get_weather",
    "The weather in a city.",
    {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
)


def ask(question: str = "Hi", **kwargs: Any) -> ModelRequest:
    return ModelRequest("fake-model", (ChatMessage("user", question),), **kwargs)


@asynccontextmanager
async def provider_at(base_url: str, **kwargs: Any) -> AsyncIterator[OpenAIProvider]:
    kwargs.setdefault("retry_delay", 0.01)
    provider = OpenAIProvider(kwargs.pop("api_key", None), base_url, **kwargs)
    try:
        yield provider
    finally:
        await provider.aclose()


async def events_of(provider: OpenAIProvider, request: ModelRequest) -> list[ProviderEvent]:
    return [event async for event in provider.stream(request)]


def chunk(delta: dict[str, Any], finish: str | None = None) -> bytes:
    """One Chat Completions stream event with one choice."""
    choice = {"index": 0, "delta": delta, "finish_reason": finish}
    return b"data: " + json.dumps({"choices": [choice]}).encode() + b"\n\n"


def completion_of(events: list[ProviderEvent]) -> Completion:
    completions = [e for e in events if isinstance(e, Completion)]
    assert len(completions) == 1 and events[-1] is completions[0]
    return completions[0]


# --- tool-call names ----------------------------------------------------------------------------


async def test_a_name_repeated_in_every_delta_is_read_once() -> None:
    calls = [
        ("call_1", "get_weather", {"city": "Oslo"}),
        ("call_2", "get_weather", {"city": "Rome"}),
    ]
    with FakeOpenAIServer([tool_calls(calls)], repeat_tool_names=True) as server:
        async with provider_at(server.base_url) as provider:
            completion = completion_of(await events_of(provider, ask(tools=(WEATHER,))))
    assert completion.message.tool_calls == (
        ToolCallRequest("call_1", "get_weather", {"city": "Oslo"}),
        ToolCallRequest("call_2", "get_weather", {"city": "Rome"}),
    )


@pytest.mark.parametrize(
    ("pieces", "offered", "name"),
    [
        (["get_", "weather"], ("get_weather",), "get_weather"),  # a name sent in pieces joins
        (["get_weather", "get_weather"], ("get_weather",), "get_weather"),  # repeated whole
        (["a", "a"], ("aa",), "aa"),  # only the doubled name is offered
        (["a", "a"], ("a", "aa"), "a"),  # both are: a repeat is the likelier
    ],
)
async def test_name_pieces_join_unless_a_piece_repeats_the_name(
    pieces: list[str], offered: tuple[str, ...], name: str
) -> None:
    def call(function: dict[str, str]) -> bytes:
        return chunk({"tool_calls": [{"index": 0, "id": "c1", "function": function}]})

    stream = [call({"name": piece, "arguments": ""}) for piece in pieces]
    stream += [call({"arguments": "{}"}), chunk({}, "tool_calls"), b"data: [DONE]\n\n"]
    tools = tuple(ToolSchema(n, "", {"type": "object"}) for n in offered)
    with FakeOpenAIServer([events(*stream)]) as server:
        async with provider_at(server.base_url) as provider:
            completion = completion_of(await events_of(provider, ask(tools=tools)))
    assert [call.name for call in completion.message.tool_calls] == [name]


# --- what the request carries -------------------------------------------------------------------


async def test_an_assistant_message_that_only_calls_tools_has_empty_not_null_content() -> None:
    conversation = (
        ChatMessage("user", "Weather in Oslo?"),
        ChatMessage(
            "assistant", "", tool_calls=(ToolCallRequest("c1", "get_weather", {"city": "Oslo"}),)
        ),
        ChatMessage("tool", "sunny", tool_call_id="c1", name="get_weather"),
    )
    request = ModelRequest("fake-model", conversation, (WEATHER,))
    with FakeOpenAIServer([text("Sunny.")], refuse_null_content=True) as server:
        async with provider_at(server.base_url) as provider:
            completion = completion_of(await events_of(provider, request))
    assert completion.message.content == "Sunny."
    assert server.bodies[0]["messages"][1]["content"] == ""
    nulls = [
        (index, key)
        for index, message in enumerate(server.bodies[0]["messages"])
        for key, value in message.items()
        if value is None
    ]
    assert nulls == []


# --- token counts -------------------------------------------------------------------------------


async def test_a_stream_without_usage_leaves_the_counts_unknown_not_zero() -> None:
    with FakeOpenAIServer([text("Hello")], usage_in_stream=False) as server:
        async with provider_at(server.base_url) as provider:
            completion = completion_of(await events_of(provider, ask()))
    assert server.bodies[0]["stream_options"] == {"include_usage": True}
    assert completion.usage == Usage(None, None)


@pytest.mark.parametrize(
    ("usage", "expected"),
    [
        ({"prompt_tokens": 5}, Usage(5, None)),
        ({"completion_tokens": 2, "prompt_tokens": "many"}, Usage(None, 2)),
        ({"prompt_tokens": True, "completion_tokens": 0}, Usage(None, 0)),
    ],
)
async def test_a_count_the_usage_chunk_lacks_stays_unknown(
    usage: dict[str, Any], expected: Usage
) -> None:
    answer = [
        chunk({"content": "Hi"}),
        chunk({}, "stop"),
        b"data: " + json.dumps({"choices": [], "usage": usage}).encode() + b"\n\n",
        b"data: [DONE]\n\n",
    ]
    with FakeOpenAIServer([events(*answer)]) as server:
        async with provider_at(server.base_url) as provider:
            completion = completion_of(await events_of(provider, ask()))
    assert completion.usage == expected
