"""A served instance on a shared PostgreSQL store lives through the database's outage.

A real ``metaagent serve --http --stateless --store postgresql://…`` process on a cluster of
the test's own (the session's cluster is never stopped): the cluster is stopped as an
administrator's restart stops it (``pg_ctl stop -m fast``) and started again on the same port
and data folder. The model is a fake OpenAI server, which stays up throughout.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import TYPE_CHECKING

import anyio
import anyio.abc
import httpx2
import mcp_types as types
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from mcp_export.errors import HistoryError
from mcp_export.history.store import HistoryStore, RunRecord
from mcp_export.server.history import HistoryAccess
from tests.fakes._script import count_user_turns
from tests.fakes.http_serving import serve_env, serve_http_process
from tests.fakes.mcp_clients import book_tool, write_agent
from tests.fakes.openai_server import FakeOpenAIServer

if TYPE_CHECKING:
    from tests.fakes.postgres import PostgresCluster

pytestmark = pytest.mark.anyio
pytest_plugins = ["tests.fakes.postgres"]

WITHIN = 30.0
"""Seconds any one wait of these tests may take (a busy 2-core machine)."""


def _text(result: types.CallToolResult) -> str:
    return "".join(b.text for b in result.content if isinstance(b, types.TextContent))


def _conversation(result: types.CallToolResult) -> str:
    assert not result.is_error, _text(result)
    assert result.structured_content is not None
    conversation: str = result.structured_content["conversationId"]
    return conversation


async def _ready(http: httpx2.AsyncClient, base: str, status: int) -> httpx2.Response:
    """``/readyz`` once it answers ``status`` (polled, at most ``WITHIN`` seconds)."""
    deadline = anyio.current_time() + WITHIN
    response = await http.get(base + "/readyz")
    while response.status_code != status and anyio.current_time() < deadline:
        await anyio.sleep(0.1)  # the probe is another process's answer: nothing to wait on
        response = await http.get(base + "/readyz")
    assert response.status_code == status, response.text
    return response


def _runs_in(url: str, *, at_least: int) -> list[RunRecord]:
    """The store's runs, read directly, once there are ``at_least`` (at most ``WITHIN`` s)."""
    deadline = time.monotonic() + WITHIN
    while True:
        with HistoryStore(url) as store:
            runs = store.runs()
        if len(runs) >= at_least or time.monotonic() > deadline:
            return runs
        time.sleep(0.1)


async def test_calls_go_on_through_a_database_restart_and_are_recorded_once_it_is_back(
    tmp_path: Path, own_postgres_cluster: PostgresCluster
) -> None:
    url = own_postgres_cluster.fresh_store()
    args = ("--stateless", "--store", url)
    env = serve_env(METAAGENT_HOME=str(tmp_path / "home"))
    with FakeOpenAIServer(responder=count_user_turns) as model:
        agent = write_agent(
            tmp_path / "a.agent.yaml", base_url=model.base_url, tools=[book_tool(conversation=True)]
        )
        async with (
            serve_http_process(agent, *args, env=env, within=WITHIN) as served,
            httpx2.AsyncClient(timeout=WITHIN) as http,
            Client(streamable_http_client(served.url), mode="auto") as client,
        ):
            base = served.base
            with anyio.fail_after(WITHIN):
                before = _conversation(await client.call_tool("book_flight", {"destination": "A"}))
            await _ready(http, base, 200)

            await anyio.to_thread.run_sync(own_postgres_cluster.halt)
            unready = await _ready(http, base, 503)
            started = time.monotonic()
            with anyio.fail_after(WITHIN):
                during = await client.call_tool("book_flight", {"destination": "B"})
            took = time.monotonic() - started
            with anyio.fail_after(WITHIN):
                refused = await client.call_tool(
                    "book_flight", {"destination": "C", "conversation_id": before}
                )
            still_unready = await _ready(http, base, 503)

            await anyio.to_thread.run_sync(own_postgres_cluster.resume)
            await _ready(http, base, 200)
            await anyio.to_thread.run_sync(lambda: _runs_in(url, at_least=2))
            with anyio.fail_after(WITHIN):
                continued = await client.call_tool(
                    "book_flight", {"destination": "D", "conversation_id": before}
                )
                continued_during = await client.call_tool(
                    "book_flight", {"destination": "E", "conversation_id": _conversation(during)}
                )
                after = await client.call_tool("book_flight", {"destination": "F"})
        runs = await anyio.to_thread.run_sync(lambda: _runs_in(url, at_least=5))

    assert "cannot connect to the history database" in unready.text
    assert still_unready.status_code == 503
    assert not during.is_error and _text(during).startswith("turn 1: ")
    assert took < 8, "a call during the outage must not wait for the database"
    assert refused.is_error
    assert f"conversation_id {before!r} cannot be continued now" in _text(refused)
    assert "again" in _text(refused)
    assert _text(continued) == "turn 2: Book a flight to D for 1 passenger(s)."
    assert _text(continued_during) == "turn 2: Book a flight to E for 1 passenger(s)."
    assert not after.is_error
    assert sorted(run.arguments["destination"] for run in runs) == ["A", "B", "D", "E", "F"]
    assert {run.status for run in runs} == {"complete"}
    log = served.text
    assert own_postgres_cluster.password not in log
    assert log.count("calls go on, their writes wait") == 1, log
    assert log.count("answers again") == 1, log


def test_writes_wait_for_a_database_that_is_away_until_their_room_is_full(
    own_postgres_cluster: PostgresCluster, caplog: pytest.LogCaptureFixture
) -> None:
    url = own_postgres_cluster.fresh_store()
    with HistoryStore(url, write_behind=True) as store:
        access = HistoryAccess(store)
        thread = store.create_thread(agent_path=None, agent_name="a", title="t", kind="served")
        store.flush()
        own_postgres_cluster.halt()
        store.add_message(thread, "user", "while it is away")
        with pytest.raises(HistoryError, match="cannot connect to the history database"):
            store.flush()  # at once: the writer found the database away
        assert store.unreachable is not None and access.store is store
        written = 1
        while not store.backlog_full() and written < 5000:
            store.add_message(thread, "assistant", f"answer {written}")
            written += 1
        assert store.backlog_full() and written < 5000, written
        assert access.store is None and access.store is None
        said = [record.getMessage() for record in caplog.records]
        unrecorded = [line for line in said if "new calls go unrecorded until it is back" in line]
        assert len(unrecorded) == 1

        own_postgres_cluster.resume()
        deadline = time.monotonic() + WITHIN
        while True:
            try:
                store.flush()
                break
            except HistoryError:
                assert time.monotonic() < deadline, "the writes were not applied once it was back"
                time.sleep(0.1)
        assert store.unreachable is None and access.store is store
        assert len(store.messages(thread)) == written
    assert own_postgres_cluster.password not in caplog.text
