"""The endpoint settings of the Anthropic provider: whole answers instead of a stream
(``providers.anthropic.stream: false``), and how many requests are in flight at once
(``maxConcurrentRequests``: unlimited by default, a queue when set)."""

from __future__ import annotations

import asyncio
import resource
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from typing import Any

import anyio
import pytest

from mcp_export.errors import ProviderProtocolError
from mcp_export.providers.anthropic_provider import AnthropicProvider
from mcp_export.providers.base import (
    ChatMessage,
    Completion,
    ModelRequest,
    ProviderEvent,
    TextDelta,
    ToolCallRequest,
    ToolSchema,
    Usage,
)
from tests.fakes import page, text, tool_calls
from tests.fakes.anthropic_server import FakeAnthropicServer, error_event

pytestmark = pytest.mark.anyio

LOOKUP = ToolSchema("kb__lookup", "Look a word up.", {"type": "object"})


@asynccontextmanager
async def anthropic_provider(base_url: str, **kwargs: Any) -> AsyncIterator[AnthropicProvider]:
    provider = AnthropicProvider("sk-ant-test", base_url, retry_delay=0.01, **kwargs)
    try:
        yield provider
    finally:
        await provider.aclose()


def ask(question: str = "Hi") -> ModelRequest:
    return ModelRequest("claude-test", (ChatMessage("user", question),), (LOOKUP,))


async def events_of(provider: AnthropicProvider, request: ModelRequest) -> list[ProviderEvent]:
    return [event async for event in provider.stream(request)]


# --- stream: false ------------------------------------------------------------------------------


async def test_without_streaming_the_whole_answer_is_one_delta_and_the_completion() -> None:
    reply = tool_calls(
        [("t1", "kb__lookup", {"word": "tea"}), ("t2", "kb__lookup", "[1]")],
        text="Let me look.",
        usage=(21, 8),
    )
    with FakeAnthropicServer([reply], cache_tokens=(0, 4)) as server:
        async with anthropic_provider(server.base_url, stream=False) as provider:
            events = await events_of(provider, ask())
    assert server.bodies[0]["stream"] is False
    assert len(events) == 2
    delta, completion = events
    assert delta == TextDelta("Let me look.")
    assert isinstance(completion, Completion)
    assert completion.message.content == "Let me look."
    first, second = completion.message.tool_calls
    assert first == ToolCallRequest("t1", "kb__lookup", {"word": "tea"})
    assert (second.arguments, second.arguments_error) == (
        {},
        "the tool input is an array, not a JSON object",
    )
    assert completion.usage == Usage(25, 8)
    assert completion.stop_reason == "tool_use"


async def test_without_streaming_absent_counts_are_unknown() -> None:
    with FakeAnthropicServer([text("Hello")], usage="absent") as server:
        async with anthropic_provider(server.base_url, stream=False) as provider:
            events = await events_of(provider, ask())
    assert events[-1] == Completion(
        ChatMessage("assistant", "Hello"), Usage(None, None), "end_turn"
    )


async def test_without_streaming_a_page_that_is_not_an_answer_says_what_it_was() -> None:
    with FakeAnthropicServer([page(200, "<html><title>Welcome</title></html>")]) as server:
        async with anthropic_provider(server.base_url, stream=False) as provider:
            with pytest.raises(ProviderProtocolError) as caught:
                await events_of(provider, ask())
    where = server.base_url
    assert str(caught.value).startswith(
        f"{where} answered 200 with an HTML page titled 'Welcome', not a Messages API answer"
    )


async def test_without_streaming_a_server_that_streams_anyway_is_named_and_told() -> None:
    with FakeAnthropicServer([error_event()]) as server:
        async with anthropic_provider(server.base_url, stream=False) as provider:
            with pytest.raises(ProviderProtocolError) as caught:
                await events_of(provider, ask())
    where = server.base_url.removeprefix("http://")
    assert str(caught.value).startswith(
        f"{where} sent a stream though this request asked for a whole answer"
    )


# --- requests in flight -------------------------------------------------------------------------


async def answer_all(providers: list[AnthropicProvider], count: int) -> list[str]:
    answers: list[str] = [""] * count

    async def one(index: int) -> None:
        provider = providers[index % len(providers)]
        async for event in provider.stream(ask(f"q{index}")):
            if isinstance(event, Completion):
                answers[index] = event.message.content

    async with anyio.create_task_group() as group:
        for index in range(count):
            group.start_soon(one, index)
    return answers


@pytest.fixture
def descriptors() -> Iterator[None]:
    """Room for a few thousand sockets (both ends of each connection live in this process)."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    wanted = 4096
    if hard != resource.RLIM_INFINITY and hard < wanted:
        pytest.skip(f"the hard limit of open files is {hard}, below {wanted}")
    resource.setrlimit(resource.RLIMIT_NOFILE, (max(soft, wanted), hard))
    try:
        yield
    finally:
        resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))


@pytest.mark.usefixtures("descriptors")
@pytest.mark.parametrize("count", [200, 1024])
async def test_without_a_limit_every_request_is_in_flight_at_once(count: int) -> None:
    with FakeAnthropicServer() as server:
        server.hold()
        async with anthropic_provider(server.base_url, timeout=90) as provider:
            with anyio.fail_after(90):
                running = asyncio.create_task(answer_all([provider], count))
                all_in = await anyio.to_thread.run_sync(server.wait_for_in_flight, count, 60)
                server.release()
                answers = await running
    assert all_in, f"only {server.max_in_flight} of {count} were in flight at once"
    assert answers == [f"q{i}" for i in range(count)]


async def test_with_a_limit_the_endpoint_serves_that_many_and_the_rest_wait_in_line() -> None:
    limit, count = 3, 12
    with FakeAnthropicServer() as server:
        server.hold()
        async with (
            anthropic_provider(server.base_url, max_concurrency=limit) as one,
            anthropic_provider(server.base_url, max_concurrency=limit) as other,
        ):
            with anyio.fail_after(30):
                running = asyncio.create_task(answer_all([one, other], count))
                assert await anyio.to_thread.run_sync(server.wait_for_in_flight, limit, 10)
                await anyio.sleep(0.5)  # room for a fourth request, were one let through
                assert len(server.model_requests) == limit
                server.release()
                answers = await running
    assert answers == [f"q{i}" for i in range(count)]
    assert server.max_in_flight == limit
    assert len(server.model_requests) == count
