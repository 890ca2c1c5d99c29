"""The history store with write-behind (what a served server uses), on real SQLite files."""

from __future__ import annotations

import logging
import sqlite3
import threading
from pathlib import Path

import pytest

from mcp_export.history.store import HistoryStore


def record_call(store: HistoryStore, index: int) -> tuple[str, int, int]:
    """The writes of one served call, as the server makes them."""
    thread = store.create_thread(
        agent_path="/a.agent.yaml", agent_name="A", title=f"call {index}", kind="served"
    )
    run = store.start_run(
        thread_id=thread,
        tool_name="book",
        arguments={"n": index},
        filled_prompt=f"Book {index}",
        caller="test",
    )
    store.add_message(thread, "user", f"Book {index}")
    pending = store.add_message(thread, "assistant", "", status="pending")
    return thread, run, pending


def test_writes_return_at_once_and_land_in_order_with_their_updates(tmp_path: Path) -> None:
    store = HistoryStore(tmp_path / "h.sqlite3", write_behind=True)
    calls = [record_call(store, i) for i in range(300)]
    for index, (_thread, run, pending) in enumerate(calls):
        store.update_message(pending, content=f"Booked {index}", status="complete")
        store.finish_run(run, answer=f"Booked {index}", duration_ms=1.0)

    # Reads wait for the queue: everything is there, in order, with its update applied, under
    # the ids the writes returned.
    runs = store.runs(limit=1000)
    assert len(runs) == 300 and {r.status for r in runs} == {"complete"}
    assert [r.arguments["n"] for r in runs] == list(range(299, -1, -1))
    assert [r.id for r in runs] == [run for _thread, run, _pending in reversed(calls)]
    for index, (thread, _run, _pending) in enumerate(calls):
        messages = store.messages(thread)
        assert [(m.role, m.content, m.status) for m in messages] == [
            ("user", f"Book {index}", "complete"),
            ("assistant", f"Booked {index}", "complete"),
        ]
    store.close()

    # Another store on the same file (the studio) sees the same rows.
    with HistoryStore(tmp_path / "h.sqlite3") as other:
        assert len(other.runs(limit=1000)) == 300


def test_close_applies_what_is_still_queued(tmp_path: Path) -> None:
    store = HistoryStore(tmp_path / "h.sqlite3", write_behind=True)
    threads = [record_call(store, i)[0] for i in range(200)]
    store.close()
    with HistoryStore(tmp_path / "h.sqlite3") as reopened:
        assert all(len(reopened.messages(t)) == 2 for t in threads)


def test_writes_from_many_threads_all_land(tmp_path: Path) -> None:
    store = HistoryStore(tmp_path / "h.sqlite3", write_behind=True)

    def writer(offset: int) -> None:
        for i in range(50):
            _thread, run, pending = record_call(store, offset + i)
            store.update_message(pending, content="ok", status="complete")
            store.finish_run(run, answer="ok")

    workers = [threading.Thread(target=writer, args=(n * 1000,)) for n in range(4)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join(30)
    runs = store.runs(limit=1000)
    assert len(runs) == 200 and {r.answer for r in runs} == {"ok"}
    store.close()


def test_a_write_naming_a_gone_row_is_skipped_and_the_others_land(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    store = HistoryStore(tmp_path / "h.sqlite3", write_behind=True)
    kept = store.create_thread(agent_path=None, agent_name="A", title="kept", kind="served")
    store.add_message("no-such-thread", "user", "lost")  # the thread was deleted meanwhile
    store.add_message(kept, "user", "kept")
    with caplog.at_level(logging.WARNING, logger="mcp_export.history.writer"):
        assert [m.content for m in store.messages(kept)] == ["kept"]
    assert any("skipped" in r.getMessage() for r in caplog.records)
    # The store goes on recording.
    store.add_message(kept, "assistant", "still recording")
    assert [m.content for m in store.messages(kept)] == ["kept", "still recording"]
    store.close()


def test_a_database_that_cannot_be_written_stops_the_recording_without_raising(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    path = tmp_path / "h.sqlite3"
    store = HistoryStore(path, write_behind=True)
    thread = store.create_thread(agent_path=None, agent_name="A", title="t", kind="served")
    store.flush()
    damage = sqlite3.connect(path)
    damage.execute("DROP TABLE runs")  # as if the file were replaced by something else
    damage.commit()
    damage.close()
    with caplog.at_level(logging.WARNING, logger="mcp_export.history.writer"):
        store.start_run(
            thread_id=thread, tool_name="t", arguments={}, filled_prompt="p", caller="c"
        )
        store.flush()
    warnings = [r.getMessage() for r in caplog.records]
    assert len(warnings) == 1 and "no longer recorded" in warnings[0], warnings
    assert "runs" in warnings[0] and "kept in" in warnings[0]
    # Later writes go on into the write log only; the caller never sees an exception.
    store.add_message(thread, "user", "after the failure")
    store.flush()
    assert store.messages(thread) == []
    with caplog.at_level(logging.WARNING, logger="mcp_export.history.writer"):
        store.close()
    assert "2 writes were not yet in" in caplog.records[-1].getMessage()


def test_close_with_a_bulk_backlog_loses_nothing(tmp_path: Path) -> None:
    path = tmp_path / "h.sqlite3"
    store = HistoryStore(path, write_behind=True)
    runs = [record_call(store, i)[1] for i in range(10_000)]
    for run in runs:
        store.finish_run(run, answer="ok", duration_ms=1.0)
    store.close()
    with HistoryStore(path) as reopened:
        recorded = reopened.runs(limit=20_000)
    assert len(recorded) == 10_000
    assert {r.status for r in recorded} == {"complete"}


def test_writes_left_when_a_locked_database_closes_are_applied_at_the_next_open(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    path = tmp_path / "h.sqlite3"
    store = HistoryStore(path, write_behind=True)
    blocker = sqlite3.connect(path, isolation_level=None)  # another process, holding the lock
    blocker.execute("BEGIN IMMEDIATE")
    try:
        calls = [record_call(store, i) for i in range(100)]
        for _thread, run, pending in calls:
            store.update_message(pending, content="done", status="complete")
            store.finish_run(run, answer="done")
        with caplog.at_level(logging.WARNING, logger="mcp_export.history.writer"):
            store.close()
    finally:
        blocker.execute("ROLLBACK")
        blocker.close()
    (handed_over,) = [r.getMessage() for r in caplog.records if "next opened" in r.getMessage()]
    assert "600 writes" in handed_over and "h.sqlite3-writes" in handed_over
    with HistoryStore(path) as reopened:
        assert reopened.replayed.applied == 600
        runs = reopened.runs(limit=1000)
        messages = reopened.messages(calls[7][0])
    assert len(runs) == 100 and {r.answer for r in runs} == {"done"}
    assert [(m.content, m.status) for m in messages] == [
        ("Book 7", "complete"),
        ("done", "complete"),
    ]


def test_row_ids_of_write_behind_stores_and_inline_writers_never_collide(tmp_path: Path) -> None:
    path = tmp_path / "h.sqlite3"
    behind = [HistoryStore(path, write_behind=True) for _ in range(2)]
    inline = HistoryStore(path)
    thread = inline.create_thread(agent_path=None, agent_name="A", title="t", kind="served")
    ids = []
    for n in range(300):
        store = (*behind, inline)[n % 3]
        ids.append(store.add_message(thread, "user", f"m{n}"))
    for store in behind:
        store.close()
    assert len(set(ids)) == 300
    # Every id names the message its writer was given it for.
    assert {(m.id, m.content) for m in inline.messages(thread)} == {
        (row, f"m{n}") for n, row in enumerate(ids)
    }
    inline.close()


def test_a_conversation_continued_by_another_server_reads_in_the_order_it_was_written(
    tmp_path: Path,
) -> None:
    path = tmp_path / "h.sqlite3"
    earlier = HistoryStore(path, write_behind=True)  # its row ids come before the later one's
    later = HistoryStore(path, write_behind=True)
    thread = later.create_thread(agent_path=None, agent_name="A", title="t", kind="served")
    later.add_message(thread, "user", "one")
    later.add_message(thread, "assistant", "two")
    later.flush()
    earlier.add_message(thread, "user", "three")
    earlier.add_message(thread, "assistant", "four")
    assert [m.content for m in earlier.messages(thread)] == ["one", "two", "three", "four"]
    earlier.close()
    later.close()


def test_a_call_whose_updates_are_folded_into_its_inserts_ends_as_one_written_row_by_row(
    tmp_path: Path,
) -> None:
    """The writer folds an update into the insert of its row when both are in one batch; the
    rows and the thread's summary (kept by triggers) end as an inline store's do."""
    found = []
    for behind in (False, True):
        with HistoryStore(tmp_path / f"h{behind}.sqlite3", write_behind=behind) as store:
            thread, run, pending = record_call(store, 1)
            store.update_message(
                pending, content="Booked.", status="complete", tokens_in=10, tokens_out=2
            )
            store.finish_run(run, answer="Booked.", duration_ms=1.0, tokens_in=10, tokens_out=2)
            failed = store.add_message(thread, "assistant", "", status="pending")
            store.update_message(failed, status="error", error="model gone")
            record = store.thread(thread)
            [finished] = store.runs()
            messages = store.messages(thread)
        assert record is not None
        times = [m.answer_ms for m in messages if m.answer_ms is not None]
        assert len(times) == 2 and record.duration_ms == pytest.approx(sum(times))
        found.append(
            (
                (record.status, record.tokens_in, record.tokens_out, record.tool_name),
                (finished.status, finished.answer, finished.tokens_in, finished.tool_calls),
                [(m.role, m.content, m.status, m.error, m.tokens_in) for m in messages],
            )
        )
    inline, folded = found
    assert folded == inline
    assert inline[0] == ("error", 10, 2, "book")
