"""A history file that another process keeps locked while a write-behind store opens (``serve``
starting beside a busy studio): the store opens all the same, and every write lands once the lock
is gone, as with a lock taken in the middle of a session. Real SQLite files; the lock is a second
connection's ``BEGIN IMMEDIATE``, as another process holds it."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import mcp_types as types
import pytest
from mcp import Client

from mcp_export.history.store import HistoryStore
from mcp_export.server.agent_server import AgentServer, load_served_agents
from tests.fakes._script import text
from tests.fakes.mcp_clients import write_agent
from tests.fakes.openai_server import FakeOpenAIServer
from tests.mcp_export.test_history_write_behind import record_call


@contextmanager
def locked(path: Path) -> Iterator[sqlite3.Connection]:
    """The write lock of ``path``, held by another connection until the block ends."""
    blocker = sqlite3.connect(path, isolation_level=None)
    blocker.execute("BEGIN IMMEDIATE")
    try:
        yield blocker
    finally:
        if blocker.in_transaction:
            blocker.execute("ROLLBACK")
        blocker.close()


def _new_history(path: Path) -> None:
    HistoryStore(path).close()  # created and migrated, as a studio leaves it


def _end_calls(store: HistoryStore, calls: list[tuple[str, int, int]], answer: str) -> None:
    """Each recorded call answered with ``answer``: its pending message and its run complete."""
    for _thread, run, pending in calls:
        store.update_message(pending, content=answer, status="complete")
        store.finish_run(run, answer=answer)


def test_a_store_opened_while_the_file_is_locked_records_every_write_once_it_is_released(
    tmp_path: Path,
) -> None:
    path = tmp_path / "h.sqlite3"
    _new_history(path)
    with locked(path):
        store = HistoryStore(path, write_behind=True)
        calls = [record_call(store, i) for i in range(20)]
        _end_calls(store, calls[:10], "done")
    # Released: the writer reserves real ids for the ones it handed out meanwhile.
    store.flush()
    _end_calls(store, calls[10:], "later")
    runs = store.runs(limit=100)
    store.close()
    assert len(runs) == 20 and {r.status for r in runs} == {"complete"}
    assert all(r.id > 0 for r in runs) and len({r.id for r in runs}) == 20
    assert sorted(r.arguments["n"] for r in runs if r.answer == "later") == list(range(10, 20))
    with HistoryStore(path) as reopened:
        for index, (thread, _run, _pending) in enumerate(calls):
            messages = reopened.messages(thread)
            answer = "done" if index < 10 else "later"
            assert [(m.content, m.status) for m in messages] == [
                (f"Book {index}", "complete"),
                (answer, "complete"),
            ]
            assert all(m.id > 0 for m in messages)


def test_a_store_that_closes_before_the_lock_is_released_leaves_its_writes_to_the_next_open(
    tmp_path: Path,
) -> None:
    path = tmp_path / "h.sqlite3"
    _new_history(path)
    with locked(path):
        store = HistoryStore(path, write_behind=True)
        calls = [record_call(store, i) for i in range(10)]
        _end_calls(store, calls, "done")
        store.close()
    with HistoryStore(path) as reopened:
        assert reopened.replayed.applied == 60
        runs = reopened.runs(limit=100)
        messages = reopened.messages(calls[3][0])
    assert len(runs) == 10 and {r.answer for r in runs} == {"done"}
    assert all(r.id > 0 for r in runs)
    assert [(m.content, m.status) for m in messages] == [
        ("Book 3", "complete"),
        ("done", "complete"),
    ]


def test_updates_made_after_the_ids_are_settled_name_the_real_rows_in_the_log(
    tmp_path: Path,
) -> None:
    path = tmp_path / "h.sqlite3"
    _new_history(path)
    with locked(path):
        store = HistoryStore(path, write_behind=True)
        calls = [record_call(store, i) for i in range(5)]
    store.flush()  # settled and applied: the log is empty again
    with locked(path):
        _end_calls(store, calls, "done")  # the calls end while the file is locked again
        store.close()
    with HistoryStore(path) as reopened:
        runs = reopened.runs(limit=100)
        messages = reopened.messages(calls[4][0])
    assert len(runs) == 5 and {(r.status, r.answer) for r in runs} == {("complete", "done")}
    assert [(m.content, m.status) for m in messages] == [
        ("Book 4", "complete"),
        ("done", "complete"),
    ]


@pytest.mark.anyio
@pytest.mark.parametrize("mode", ["legacy", "auto"])
async def test_serve_started_while_its_history_is_locked_records_the_calls_it_answers(
    tmp_path: Path, mode: str
) -> None:
    path = tmp_path / "history.sqlite3"
    _new_history(path)
    with FakeOpenAIServer([text(f"Booked {i}.") for i in range(6)]) as model:
        agent = write_agent(tmp_path / "a.agent.yaml", base_url=model.base_url)
        async with (
            AgentServer(load_served_agents([agent]), history=str(path)) as served,
            Client(served.server, mode=mode) as client,
        ):
            with locked(path):
                for index in range(4):
                    result = await client.call_tool("book_flight", {"destination": f"c{index}"})
                    assert not result.is_error
            for index in range(4, 6):  # the lock is gone: recording goes on as before
                result = await client.call_tool("book_flight", {"destination": f"c{index}"})
                assert not result.is_error
            assert isinstance(result.content[0], types.TextContent)
    with HistoryStore(path) as store:
        runs = store.runs(tool_name="book_flight", limit=100)
        answers = sorted(r.answer or "" for r in runs)
        statuses = {m.status for r in runs for m in store.messages(r.thread_id or "")}
    assert answers == [f"Booked {i}." for i in range(6)]
    assert {r.status for r in runs} == {"complete"} and statuses == {"complete"}
