"""Two served instances on one PostgreSQL store: a conversation moves between them, its turns
run one at a time, and a turn cut off by an instance that died is shown as such.

Each instance is a real ``metaagent serve --http --stateless --store postgresql://…`` process,
as a load balancer would have behind it, each with its own copy of the agent file; the store is
a schema of the throwaway cluster of ``tests/fakes/postgres.py``, and the model a fake OpenAI
server both instances share.
"""

from __future__ import annotations

import shutil
import time
from collections.abc import AsyncIterator
from contextlib import AsyncExitStack, asynccontextmanager, suppress
from pathlib import Path
from typing import Any

import anyio
import httpx2
import mcp_types as types
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from mcp_export.history.store import HistoryStore
from mcp_export.session.record import INTERRUPTED_NOTE
from tests.fakes._script import Reply, RequestBody, count_user_turns, hang
from tests.fakes.http_serving import HttpServeProcess, serve_env, serve_http_process
from tests.fakes.mcp_clients import book_tool, write_agent
from tests.fakes.openai_server import FakeOpenAIServer

pytest_plugins = ["tests.fakes.postgres"]
pytestmark = pytest.mark.anyio


@asynccontextmanager
async def _process(agent: Path, store: str, home: Path) -> AsyncIterator[HttpServeProcess]:
    """One ``serve`` process on a free loopback port."""
    args = ("--stateless", "--store", store)
    env = serve_env(METAAGENT_HOME=str(home))
    async with serve_http_process(agent, *args, env=env) as served:
        yield served


@asynccontextmanager
async def _instance(agent: Path, store: str, home: Path) -> AsyncIterator[str]:
    """One ``serve`` process on a free loopback port; yields its MCP URL."""
    async with _process(agent, store, home) as served:
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


def _users(body: dict[str, Any]) -> list[str]:
    return [str(m["content"]) for m in body["messages"] if m["role"] == "user"]


async def test_two_turns_sent_at_once_to_two_instances_run_one_after_the_other(
    tmp_path: Path, postgres_url: str
) -> None:
    def respond(body: RequestBody) -> Reply:
        return count_user_turns(body).delayed(0.5)

    with FakeOpenAIServer(responder=respond) as model:
        agent = write_agent(
            tmp_path / "a.agent.yaml", base_url=model.base_url, tools=[book_tool(conversation=True)]
        )
        async with AsyncExitStack() as stack:
            urls = [
                await stack.enter_async_context(
                    _instance(agent, postgres_url, tmp_path / f"home-{n}")
                )
                for n in range(2)
            ]
            first = await stack.enter_async_context(_client(urls[0], "legacy"))
            second = await stack.enter_async_context(_client(urls[1], "auto"))
            opened = await first.call_tool("book_flight", {"destination": "Oslo"})
            assert opened.structured_content is not None
            conversation = opened.structured_content["conversationId"]
            answers: list[str] = []

            async def turn(client: Client, city: str) -> None:
                arguments = {"destination": city, "conversation_id": conversation}
                answers.append(_answer(await client.call_tool("book_flight", arguments)))

            with anyio.fail_after(30):
                async with anyio.create_task_group() as group:
                    group.start_soon(turn, first, "Rome")
                    group.start_soon(turn, second, "Paris")
        bodies = list(model.bodies)
    assert sorted(answer.split(":")[0] for answer in answers) == ["turn 2", "turn 3"]
    # Each model request held the turns before it, the other instance's included.
    assert sorted(len(_users(body)) for body in bodies) == [1, 2, 3]
    last = max(bodies, key=lambda body: len(_users(body)))
    assert [m["role"] for m in last["messages"]] == ["user", "assistant"] * 2 + ["user"]


def _asked_and_stored(model: FakeOpenAIServer, store: str, conversation: str, word: str) -> None:
    """Return once the model got a second request and the store holds the user message about
    ``word``.

    Raises:
        TimeoutError: not within 10 s.
    """
    deadline = time.monotonic() + 10
    if not model.wait_for_requests(2, timeout=10):
        raise TimeoutError("the second turn did not reach the model within 10 s")
    with HistoryStore(store) as history:
        while not any(word in m.content for m in history.messages(conversation)):
            if time.monotonic() > deadline:
                raise TimeoutError(f"the user message about {word} is not in the store")
            time.sleep(0.05)


async def test_a_turn_cut_off_by_a_killed_instance_is_shown_as_interrupted_on_the_other(
    tmp_path: Path, postgres_url: str
) -> None:
    def respond(body: RequestBody) -> Reply:
        return hang() if "Rome" in body.last_user_text else count_user_turns(body)

    with FakeOpenAIServer(responder=respond) as model:
        agent = write_agent(
            tmp_path / "a.agent.yaml", base_url=model.base_url, tools=[book_tool(conversation=True)]
        )
        async with AsyncExitStack() as stack:
            doomed = await stack.enter_async_context(
                _process(agent, postgres_url, tmp_path / "home-a")
            )
            survivor = await stack.enter_async_context(
                _instance(agent, postgres_url, tmp_path / "home-b")
            )
            client = await stack.enter_async_context(_client(survivor, "legacy"))
            opened = await client.call_tool("book_flight", {"destination": "Oslo"})
            assert opened.structured_content is not None
            conversation = opened.structured_content["conversationId"]

            async def cut_off_turn() -> None:
                with suppress(Exception):
                    async with _client(doomed.url, "legacy") as victim:
                        await victim.call_tool(
                            "book_flight", {"destination": "Rome", "conversation_id": conversation}
                        )

            with anyio.fail_after(20):
                async with anyio.create_task_group() as group:
                    group.start_soon(cut_off_turn)
                    # Killed once the model has the question and the store has its row.
                    await anyio.to_thread.run_sync(
                        _asked_and_stored, model, postgres_url, conversation, "Rome"
                    )
                    doomed.process.kill()
                    await doomed.process.wait()
                    group.cancel_scope.cancel()
            continued = await client.call_tool(
                "book_flight", {"destination": "Paris", "conversation_id": conversation}
            )
        sent = model.bodies[-1]["messages"]
    assert _answer(continued) == "turn 3: Book a flight to Paris for 1 passenger(s)."
    assert [(m["role"], m["content"]) for m in sent[2:]] == [
        ("user", "Book a flight to Rome for 1 passenger(s)."),
        ("assistant", INTERRUPTED_NOTE),
        ("user", "Book a flight to Paris for 1 passenger(s)."),
    ]
