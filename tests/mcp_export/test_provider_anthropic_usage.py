"""Token counts of the Anthropic provider: what the stream says, and None for what it does not."""

from __future__ import annotations

import json
from typing import Any

import pytest

from mcp_export.providers.anthropic_provider import AnthropicProvider
from mcp_export.providers.base import ChatMessage, Completion, ModelRequest, Usage
from tests.fakes import events, text
from tests.fakes.anthropic_server import FakeAnthropicServer

pytestmark = pytest.mark.anyio


async def usage_of(server: FakeAnthropicServer) -> Usage:
    provider = AnthropicProvider("sk-ant-test", server.base_url, retry_delay=0.01)
    completions: list[Completion] = []
    try:
        async for event in provider.stream(ModelRequest("m", (ChatMessage("user", "Hi"),))):
            if isinstance(event, Completion):
                completions.append(event)
    finally:
        await provider.aclose()
    [completion] = completions
    return completion.usage


def event(name: str, payload: dict[str, Any]) -> bytes:
    return f"event: {name}\ndata: {json.dumps({'type': name, **payload})}\n\n".encode()


def stream(start_usage: dict[str, Any] | None, *delta_usages: dict[str, Any]) -> list[bytes]:
    message: dict[str, Any] = {
        "id": "msg_1",
        "type": "message",
        "role": "assistant",
        "model": "m",
        "content": [],
        "stop_reason": None,
    }
    if start_usage is not None:
        message["usage"] = start_usage
    chunks = [
        event("message_start", {"message": message}),
        event("content_block_start", {"index": 0, "content_block": {"type": "text", "text": ""}}),
        event("content_block_delta", {"index": 0, "delta": {"type": "text_delta", "text": "Hi"}}),
        event("content_block_stop", {"index": 0}),
    ]
    for usage in delta_usages:
        delta = {"delta": {"stop_reason": "end_turn", "stop_sequence": None}, "usage": usage}
        chunks.append(event("message_delta", delta))
    chunks.append(event("message_stop", {}))
    return chunks


async def test_input_is_the_prompt_with_its_cached_part_and_output_the_last_count() -> None:
    with FakeAnthropicServer([text("Hello", usage=(12, 3))], cache_tokens=(100, 200)) as server:
        assert await usage_of(server) == Usage(312, 3)


async def test_a_proxy_that_sends_no_counts_gives_unknown_counts_not_zero() -> None:
    with FakeAnthropicServer([text("Hello")], usage="absent") as server:
        assert await usage_of(server) == Usage(None, None)


@pytest.mark.parametrize(
    ("start", "deltas", "expected"),
    [
        (
            {"input_tokens": 5, "output_tokens": 1},
            [{"output_tokens": 4}, {"output_tokens": 9}],
            Usage(5, 9),
        ),
        (
            {"input_tokens": 5, "output_tokens": 1},
            [{"input_tokens": 7, "output_tokens": 2}],
            Usage(7, 2),
        ),
        ({"input_tokens": 5, "output_tokens": 1}, [{"output_tokens": 0}], Usage(5, 0)),
        ({"input_tokens": 5, "output_tokens": 1}, [{}], Usage(5, None)),
        (None, [{"output_tokens": 4}], Usage(None, 4)),
        (
            {"output_tokens": 1, "cache_read_input_tokens": 50},
            [{"output_tokens": 4}],
            Usage(None, 4),
        ),
    ],
    ids=[
        "message_delta counts are cumulative",
        "a later input count wins",
        "zero is zero, not message_start's placeholder",
        "no output count",
        "no message_start usage",
        "cache counts without the input count",
    ],
)
async def test_counts_come_from_the_events_that_carry_them(
    start: dict[str, Any] | None, deltas: list[dict[str, Any]], expected: Usage
) -> None:
    with FakeAnthropicServer([events(*stream(start, *deltas))]) as server:
        assert await usage_of(server) == expected
