"""History of served calls and conversations across calls: the default SQLite file in a private
home, and each store location of ``store_location`` (an SQLite file, a real PostgreSQL).

Both protocol eras, the official ``mcp.Client`` in-process, the real OpenAI provider against
``FakeOpenAIServer``. Two servers on one PostgreSQL store stand for two instances behind a load
balancer.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anyio
import mcp_types as types
import pytest
from mcp import Client

from mcp_export.history.store import HistoryStore
from mcp_export.server.agent_server import AgentServer, load_served_agents
from tests.fakes._script import (
    count_user_turns,
    hang,
    status,
    text,
    text_without_usage,
)
from tests.fakes.mcp_clients import book_tool, write_agent
from tests.fakes.openai_server import FakeOpenAIServer

pytestmark = pytest.mark.anyio
pytest_plugins = ["tests.fakes.postgres"]

MODES = pytest.mark.parametrize("mode", ["legacy", "auto"])
CLIENT = types.Implementation(name="test-client", version="9.9")


def _text(result: types.CallToolResult) -> str:
    return "".join(b.text for b in result.content if isinstance(b, types.TextContent))


def _nothing_in(directory: Path) -> bool:
    return not any(directory.iterdir())


def _conversation_agent(path: Path, base_url: str) -> Path:
    return write_agent(path, base_url=base_url, tools=[book_tool(conversation=True)])


@MODES
async def test_a_served_call_is_recorded_as_a_run_with_the_callers_name(
    tmp_path: Path, metaagent_home: Path, mode: str
) -> None:
    with FakeOpenAIServer([text("Booked.", usage=(12, 3)), status(400)]) as model:
        path = write_agent(tmp_path / "a.agent.yaml", base_url=model.base_url)
        async with (
            AgentServer(load_served_agents([path])) as served,
            Client(served.server, mode=mode, client_info=CLIENT) as client,
        ):
            await client.call_tool("book_flight", {"destination": "Oslo"})
            failed = await client.call_tool("book_flight", {"destination": "Rome"})
    assert failed.is_error
    with HistoryStore() as store:
        assert store.path is not None and store.path.is_relative_to(metaagent_home)
        failure, run = store.runs(tool_name="book_flight")
        thread = store.thread(run.thread_id or "")
        messages = store.messages(run.thread_id or "")
    assert run.status == "complete"
    assert run.answer == "Booked."
    assert run.caller == "test-client 9.9"
    assert run.arguments == {"destination": "Oslo", "passengers": 1}
    assert run.filled_prompt == "Book a flight to Oslo for 1 passenger(s)."
    assert (run.tokens_in, run.tokens_out) == (12, 3)
    assert run.agent_path == str(path)
    assert thread is not None and thread.kind == "served"
    assert [(m.role, m.status) for m in messages] == [
        ("user", "complete"),
        ("assistant", "complete"),
    ]
    assert failure.status == "error" and failure.error


@MODES
async def test_a_call_whose_model_server_reports_no_usage_is_recorded_with_null_counts(
    tmp_path: Path, mode: str, store_location: str
) -> None:
    with FakeOpenAIServer([text_without_usage("Booked.")]) as model:
        path = write_agent(tmp_path / "a.agent.yaml", base_url=model.base_url)
        async with (
            AgentServer(load_served_agents([path]), history=store_location) as served,
            Client(served.server, mode=mode, client_info=CLIENT) as client,
        ):
            result = await client.call_tool("book_flight", {"destination": "Oslo"})
    assert not result.is_error
    with HistoryStore(store_location) as store:
        [run] = store.runs(tool_name="book_flight")
        messages = store.messages(run.thread_id or "")
    assert run.status == "complete" and run.answer == "Booked."
    assert (run.tokens_in, run.tokens_out) == (None, None)
    assistant = [m for m in messages if m.role == "assistant"]
    assert [(m.tokens_in, m.tokens_out) for m in assistant] == [(None, None)]


@MODES
async def test_an_empty_answer_is_recorded_as_the_runs_error(
    tmp_path: Path, mode: str, store_location: str
) -> None:
    with FakeOpenAIServer([text("")]) as model:
        path = write_agent(tmp_path / "a.agent.yaml", base_url=model.base_url)
        async with (
            AgentServer(load_served_agents([path]), history=store_location) as served,
            Client(served.server, mode=mode, client_info=CLIENT) as client,
        ):
            result = await client.call_tool("book_flight", {"destination": "Oslo"})
    assert result.is_error
    with HistoryStore(store_location) as store:
        [run] = store.runs(tool_name="book_flight")
        messages = store.messages(run.thread_id or "")
    assert (run.status, run.error) == ("error", "the model answered with an empty message")
    assert (run.tokens_in, run.tokens_out) == (None, None)
    assert messages[-1].role == "assistant" and messages[-1].status == "error"


@MODES
async def test_no_history_records_nothing(tmp_path: Path, metaagent_home: Path, mode: str) -> None:
    with FakeOpenAIServer([text("Booked.")]) as model:
        path = write_agent(tmp_path / "a.agent.yaml", base_url=model.base_url)
        async with (
            AgentServer(load_served_agents([path]), history=False) as served,
            Client(served.server, mode=mode) as client,
        ):
            result = await client.call_tool("book_flight", {"destination": "Oslo"})
    assert not result.is_error
    assert _nothing_in(metaagent_home)


@MODES
async def test_a_conversation_continues_across_calls_with_its_id(
    tmp_path: Path, mode: str, store_location: str
) -> None:
    with FakeOpenAIServer(responder=count_user_turns) as model:
        path = _conversation_agent(tmp_path / "a.agent.yaml", model.base_url)
        async with (
            AgentServer(load_served_agents([path]), history=store_location) as served,
            Client(served.server, mode=mode) as client,
        ):
            first = await client.call_tool("book_flight", {"destination": "Oslo"})
            assert first.structured_content is not None
            conversation = first.structured_content["conversationId"]
            second = await client.call_tool(
                "book_flight", {"destination": "Rome", "conversation_id": conversation}
            )
            fresh = await client.call_tool("book_flight", {"destination": "Paris"})
        history_sent = model.bodies[1]["messages"]
    assert _text(first) == "turn 1: Book a flight to Oslo for 1 passenger(s)."
    assert _text(second) == "turn 2: Book a flight to Rome for 1 passenger(s)."
    assert second.structured_content is not None
    assert second.structured_content["conversationId"] == conversation
    assert [m["role"] for m in history_sent] == ["user", "assistant", "user"]
    assert history_sent[1]["content"] == _text(first)
    # Without the id, a new conversation starts.
    assert _text(fresh).startswith("turn 1: ")
    assert fresh.structured_content is not None
    assert fresh.structured_content["conversationId"] != conversation


@MODES
async def test_an_unknown_conversation_id_is_refused_not_a_new_thread(
    tmp_path: Path, mode: str, store_location: str
) -> None:
    with FakeOpenAIServer() as model:
        path = _conversation_agent(tmp_path / "a.agent.yaml", model.base_url)
        async with (
            AgentServer(load_served_agents([path]), history=store_location) as served,
            Client(served.server, mode=mode) as client,
        ):
            result = await client.call_tool(
                "book_flight", {"destination": "Oslo", "conversation_id": "nope"}
            )
        assert model.model_requests == []
    assert result.is_error
    message = _text(result)
    assert "unknown conversation_id 'nope'" in message
    assert "omit it to start a new conversation" in message


@MODES
async def test_a_conversation_of_another_agent_cannot_be_continued(
    tmp_path: Path, mode: str, store_location: str
) -> None:
    with FakeOpenAIServer() as model:
        mine = _conversation_agent(tmp_path / "a.agent.yaml", model.base_url)
        other = write_agent(
            tmp_path / "b.agent.yaml",
            name="Other",
            base_url=model.base_url,
            tools=[book_tool("other", conversation=True)],
        )
        async with (
            AgentServer(load_served_agents([mine, other]), history=store_location) as served,
            Client(served.server, mode=mode) as client,
        ):
            theirs = await client.call_tool("other", {"destination": "Oslo"})
            assert theirs.structured_content is not None
            result = await client.call_tool(
                "book_flight",
                {
                    "destination": "Oslo",
                    "conversation_id": theirs.structured_content["conversationId"],
                },
            )
    assert result.is_error
    assert "unknown conversation_id" in _text(result)


@MODES
async def test_conversations_need_history(tmp_path: Path, mode: str) -> None:
    with FakeOpenAIServer() as model:
        path = _conversation_agent(tmp_path / "a.agent.yaml", model.base_url)
        async with (
            AgentServer(load_served_agents([path]), history=False) as served,
            Client(served.server, mode=mode) as client,
        ):
            first = await client.call_tool("book_flight", {"destination": "Oslo"})
            refused = await client.call_tool(
                "book_flight", {"destination": "Oslo", "conversation_id": "abc"}
            )
    assert not first.is_error
    assert first.structured_content is not None
    assert "conversationId" not in first.structured_content
    assert refused.is_error
    assert "--no-history" in _text(refused)


@MODES
async def test_a_conversation_id_of_the_wrong_type_is_listed_with_the_other_problems(
    tmp_path: Path, mode: str
) -> None:
    path = _conversation_agent(tmp_path / "a.agent.yaml", "http://127.0.0.1:9/v1")
    async with (
        AgentServer(load_served_agents([path])) as served,
        Client(served.server, mode=mode) as client,
    ):
        result = await client.call_tool("book_flight", {"conversation_id": 5})
    assert result.is_error
    lines: list[Any] = _text(result).splitlines()[1:]
    assert [line.split(":")[0] for line in lines] == ["conversation_id", "destination"]


@MODES
async def test_a_cancelled_call_is_recorded_with_its_time_until_the_cancel(
    tmp_path: Path, mode: str, store_location: str
) -> None:
    with FakeOpenAIServer([hang()]) as model:
        path = write_agent(tmp_path / "a.agent.yaml", base_url=model.base_url)
        async with (
            AgentServer(load_served_agents([path]), history=store_location) as served,
            Client(served.server, mode=mode) as client,
        ):
            started = anyio.current_time()
            async with anyio.create_task_group() as group:
                group.start_soon(client.call_tool, "book_flight", {"destination": "Oslo"})
                assert await anyio.to_thread.run_sync(model.wait_for_requests, 1, 10.0)
                await anyio.sleep(0.2)
                group.cancel_scope.cancel()
            waited_ms = (anyio.current_time() - started) * 1000
    with HistoryStore(store_location) as store:
        [run] = store.runs(tool_name="book_flight")
    assert (run.status, run.error) == ("error", "cancelled by the client")
    assert run.duration_ms is not None and 200 <= run.duration_ms <= waited_ms + 50


@MODES
async def test_a_conversation_started_on_one_instance_continues_on_another(
    tmp_path: Path, mode: str, postgres_url: str
) -> None:
    with FakeOpenAIServer(responder=count_user_turns) as model:
        path = _conversation_agent(tmp_path / "a.agent.yaml", model.base_url)
        async with (
            AgentServer(load_served_agents([path]), history=postgres_url) as one,
            AgentServer(load_served_agents([path]), history=postgres_url) as another,
            Client(one.server, mode=mode) as first_client,
            Client(another.server, mode=mode) as second_client,
        ):
            first = await first_client.call_tool("book_flight", {"destination": "Oslo"})
            assert first.structured_content is not None
            conversation = first.structured_content["conversationId"]
            second = await second_client.call_tool(
                "book_flight", {"destination": "Rome", "conversation_id": conversation}
            )
            third = await first_client.call_tool(
                "book_flight", {"destination": "Paris", "conversation_id": conversation}
            )
    assert _text(second) == "turn 2: Book a flight to Rome for 1 passenger(s)."
    assert _text(third) == "turn 3: Book a flight to Paris for 1 passenger(s)."
    with HistoryStore(postgres_url) as store:
        runs = store.runs(tool_name="book_flight")
    assert {run.thread_id for run in runs} == {conversation}
    assert [run.status for run in runs] == ["complete"] * 3
