"""Two served instances on one PostgreSQL store: a conversation moves between them.

Each instance is a real ``metaagent serve --http --stateless --store postgresql://…`` process,
as a load balancer would have behind it, each with its own copy of the agent file; the store is
a schema of the throwaway cluster of ``tests/fakes/postgres.py``, and the model a fake OpenAI
server both instances share.
"""

from __future__ import annotations

import shutil
from collections.abc import AsyncIterator
from contextlib import AsyncExitStack, asynccontextmanager
from pathlib import Path

import httpx2
import mcp_types as types
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from tests.fakes._script import count_user_turns
from tests.fakes.http_serving import serve_env, serve_http_process
from tests.fakes.mcp_clients import book_tool, write_agent
from tests.fakes.openai_server import FakeOpenAIServer

pytest_plugins = ["tests.fakes.postgres"]
pytestmark = pytest.mark.anyio


@asynccontextmanager
async def _instance(agent: Path, store: str, home: Path) -> AsyncIterator[str]:
    """One ``serve`` process on a free loopback port; yields its MCP URL."""
    args = ("--stateless", "--store", store)
    env = serve_env(METAAGENT_HOME=str(home))
    async with serve_http_process(agent, *args, env=env) as served:
        yield served.url


def _client(url: str, mode: str) -> Client:
    return Client(streamable_http_client(url), mode=mode)


def _answer(result: types.CallToolResult) -> str:
    block = result.content[0]
    assert not result.is_error and isinstance(block, types.TextContent), result
    return block.text


@pytest.mark.parametrize("mode", ["legacy", "auto"])
async def test_a_conversation_started_on_one_instance_continues_on_the_other(
    tmp_path: Path, postgres_url: str, mode: str
) -> None:
    with FakeOpenAIServer(responder=count_user_turns) as model:
        agent = write_agent(
            tmp_path / "a.agent.yaml",
            base_url=model.base_url,
            tools=[book_tool(conversation=True)],
        )
        async with AsyncExitStack() as stack:
            first_url = await stack.enter_async_context(
                _instance(agent, postgres_url, tmp_path / "home-a")
            )
            # The other instance serves a copy at another path, as a second container would.
            (tmp_path / "elsewhere").mkdir()
            copy = Path(shutil.copy(agent, tmp_path / "elsewhere" / "desk.agent.yaml"))
            second_url = await stack.enter_async_context(
                _instance(copy, postgres_url, tmp_path / "home-b")
            )
            first = await stack.enter_async_context(_client(first_url, mode))
            second = await stack.enter_async_context(_client(second_url, mode))
            opened = await first.call_tool("book_flight", {"destination": "Oslo"})
            assert opened.structured_content is not None
            conversation = opened.structured_content["conversationId"]
            moved = await second.call_tool(
                "book_flight", {"destination": "Rome", "conversation_id": conversation}
            )
            back = await first.call_tool(
                "book_flight", {"destination": "Paris", "conversation_id": conversation}
            )
    assert _answer(opened) == "turn 1: Book a flight to Oslo for 1 passenger(s)."
    assert _answer(moved) == "turn 2: Book a flight to Rome for 1 passenger(s)."
    assert _answer(back) == "turn 3: Book a flight to Paris for 1 passenger(s)."
    for result in (moved, back):
        assert result.structured_content is not None
        assert result.structured_content["conversationId"] == conversation


async def test_both_instances_are_ready_and_count_their_own_calls(
    tmp_path: Path, postgres_url: str
) -> None:
    with FakeOpenAIServer(responder=count_user_turns) as model:
        agent = write_agent(tmp_path / "a.agent.yaml", base_url=model.base_url)
        async with AsyncExitStack() as stack:
            urls = [
                await stack.enter_async_context(
                    _instance(agent, postgres_url, tmp_path / f"home-{n}")
                )
                for n in range(2)
            ]
            async with _client(urls[0], "auto") as client:
                for city in ("Oslo", "Rome"):
                    await client.call_tool("book_flight", {"destination": city})
            http = await stack.enter_async_context(httpx2.AsyncClient(timeout=10))
            ready = [await http.get(url.removesuffix("/mcp") + "/readyz") for url in urls]
            metrics = [await http.get(url.removesuffix("/mcp") + "/metrics") for url in urls]
    assert [r.status_code for r in ready] == [200, 200]
    counted = 'metaagent_tool_calls_total{outcome="ok",tool="book_flight"}'
    assert f"{counted} 2.0" in metrics[0].text
    assert counted not in metrics[1].text or f"{counted} 0.0" in metrics[1].text
