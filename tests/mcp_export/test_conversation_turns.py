"""One turn at a time per conversation: two turns sent at once run one after the other, or the
second is refused after a bounded wait; a claim never outlives the process that holds it.

Two servers on one store stand for two instances behind a load balancer (each store location
of ``store_location``: an SQLite file, a real PostgreSQL schema); the official ``mcp.Client``
in-process, the real OpenAI provider against ``FakeOpenAIServer``, which records what each model
request held. The claims themselves are checked against a real other process that holds one
and is killed.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap
import time
from pathlib import Path
from typing import Any

import anyio
import mcp_types as types
import pytest
from mcp import Client

from mcp_export.history.store import HistoryStore
from mcp_export.server.agent_server import AgentServer, load_served_agents
from mcp_export.server.turns import TURN_WAIT_S
from tests.fakes._script import Reply, RequestBody, count_user_turns
from tests.fakes.mcp_clients import REPO, ScriptedSampling, book_tool, sampled_text, write_agent
from tests.fakes.openai_server import FakeOpenAIServer

pytestmark = pytest.mark.anyio
pytest_plugins = ["tests.fakes.postgres"]


def _text(result: types.CallToolResult) -> str:
    return "".join(b.text for b in result.content if isinstance(b, types.TextContent))


def _users(body: RequestBody) -> list[str]:
    return [str(m["content"]) for m in body["messages"] if m["role"] == "user"]


async def _two_turns_at_once(
    tmp_path: Path, store: str, slow: float
) -> tuple[list[types.CallToolResult], list[RequestBody], float]:
    """Open a conversation, then send two turns of it at once to two servers on ``store``; the
    model takes ``slow`` seconds for each answer. Returns the two results (Rome's, Paris's),
    what the model was sent for each request, and how long the pair took."""

    def respond(body: RequestBody) -> Reply:
        reply = count_user_turns(body)
        return reply if len(_users(body)) == 1 else reply.delayed(slow)

    with FakeOpenAIServer(responder=respond) as model:
        agent = write_agent(
            tmp_path / "a.agent.yaml", base_url=model.base_url, tools=[book_tool(conversation=True)]
        )
        async with (
            AgentServer(load_served_agents([agent]), history=store) as one,
            AgentServer(load_served_agents([agent]), history=store) as another,
            Client(one.server, mode="legacy") as first,
            Client(another.server, mode="auto") as second,
        ):
            opened = await first.call_tool("book_flight", {"destination": "Oslo"})
            assert opened.structured_content is not None
            conversation = opened.structured_content["conversationId"]
            results: dict[str, types.CallToolResult] = {}

            async def turn(client: Client, city: str) -> None:
                arguments = {"destination": city, "conversation_id": conversation}
                results[city] = await client.call_tool("book_flight", arguments)

            started = anyio.current_time()
            with anyio.fail_after(30):
                async with anyio.create_task_group() as group:
                    group.start_soon(turn, first, "Rome")
                    group.start_soon(turn, second, "Paris")
            took = anyio.current_time() - started
        return [results["Rome"], results["Paris"]], [RequestBody(b) for b in model.bodies], took


async def test_two_turns_sent_at_once_to_two_servers_run_one_after_the_other(
    tmp_path: Path, store_location: str
) -> None:
    results, bodies, took = await _two_turns_at_once(tmp_path, store_location, slow=0.5)
    answers = sorted(_text(result) for result in results)
    assert not any(result.is_error for result in results), answers
    # The later turn saw the earlier one, question and answer: no fork.
    assert [answer.split(":")[0] for answer in answers] == ["turn 2", "turn 3"]
    later = max(bodies[1:], key=lambda body: len(_users(body)))
    earlier = min(bodies[1:], key=lambda body: len(_users(body)))
    assert _users(later)[:2] == _users(earlier)
    assert [m["role"] for m in later["messages"]] == ["user", "assistant"] * 2 + ["user"]
    assert later["messages"][3]["content"].startswith("turn 2: ")
    assert took >= 1.0  # one after the other: two answers of 0.5 s each


async def test_a_turn_that_waits_longer_than_the_bound_is_refused_with_what_to_do(
    tmp_path: Path, store_location: str
) -> None:
    results, bodies, took = await _two_turns_at_once(
        tmp_path, store_location, slow=TURN_WAIT_S + 1.5
    )
    refused = [result for result in results if result.is_error]
    answered = [result for result in results if not result.is_error]
    assert len(refused) == 1 and len(answered) == 1
    assert _text(answered[0]).startswith("turn 2: ")
    text = _text(refused[0])
    assert "another turn of this conversation is in progress" in text
    assert "call again when it has answered" in text
    assert len(bodies) == 2  # the refused turn never reached the model
    assert took < TURN_WAIT_S + 1.5 + 5


_HOLDER = textwrap.dedent(
    """
    import sys, time
    from mcp_export.history.store import HistoryStore
    store = HistoryStore(sys.argv[1])
    assert store.claim_turn("t-held")
    print("claimed", flush=True)
    time.sleep(60)
    """
)


def _claim_within(store: HistoryStore, thread_id: str, seconds: float) -> bool:
    """Claim ``thread_id``, trying again until ``seconds`` have passed (PostgreSQL lets a
    killed session's locks go as soon as it notices the connection closed)."""
    deadline = time.monotonic() + seconds
    while not store.claim_turn(thread_id):
        if time.monotonic() > deadline:
            return False
        time.sleep(0.05)
    return True


def test_a_claim_is_held_while_its_process_lives_and_free_once_it_is_killed(
    store_location: str,
) -> None:
    holder = subprocess.Popen(
        [sys.executable, "-c", _HOLDER, store_location],
        cwd=REPO,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    try:
        assert holder.stdout is not None
        line = holder.stdout.readline()
        assert line == b"claimed\n", holder.stderr.read() if holder.stderr else b""
        with HistoryStore(store_location) as store:
            held_by_other = store.claim_turn("t-held")
            free = store.claim_turn("t-free")
            again_here = store.claim_turn("t-free")  # one turn at a time in this process too
            store.release_turn("t-free")
            after_release = store.claim_turn("t-free")
            holder.kill()
            holder.wait(timeout=10)
            taken_over = _claim_within(store, "t-held", 10)
    finally:
        holder.kill()
        holder.wait(timeout=10)
    assert (held_by_other, free, again_here, after_release) == (False, True, False, True)
    assert taken_over


async def test_a_sampled_turn_that_another_turn_overtook_is_refused_not_recorded_beside_it(
    tmp_path: Path, store_location: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # 2026-07-28 sampling: the turn ends its round to ask the client's model and holds no
    # claim meanwhile; another turn answers in between.
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    agent = write_agent(
        tmp_path / "a.agent.yaml", api_key=None, tools=[book_tool(conversation=True)]
    )
    model = ScriptedSampling()
    async with (
        AgentServer(load_served_agents([agent]), history=store_location) as served,
        Client(served.server, mode="legacy", sampling_callback=model) as other,
    ):
        opened = await other.call_tool("book_flight", {"destination": "Oslo"})
        assert opened.structured_content is not None
        conversation = opened.structured_content["conversationId"]
        overtaken: list[types.CallToolResult] = []

        async def overtaking_model(context: Any, params: types.CreateMessageRequestParams) -> Any:
            arguments = {"destination": "Paris", "conversation_id": conversation}
            overtaken.append(await other.call_tool("book_flight", arguments))
            return sampled_text("Rome is booked.")

        async with Client(served.server, mode="auto", sampling_callback=overtaking_model) as late:
            arguments = {"destination": "Rome", "conversation_id": conversation}
            result = await late.call_tool("book_flight", arguments)
        with HistoryStore(store_location) as store:
            runs = store.runs(tool_name="book_flight")
    assert not overtaken[0].is_error, _text(overtaken[0])
    assert result.is_error
    assert "another turn of this conversation answered while this one waited" in _text(result)
    assert "call the tool again without requestState" in _text(result)
    assert len(runs) == 2  # Oslo and Paris: the overtaken Rome turn is not recorded
