"""Conversations in the history store: the figures its triggers keep, the migration to version 3,
keyset pages with bounded scans, and the query plans that make a page cost what it returns.

The figures and the pages on real SQLite files and a real PostgreSQL (``store_location``); the
migration and the plans on SQLite, the plans read with ``EXPLAIN QUERY PLAN`` on the statements
the store's own query functions run (a connection that notes them).
"""

from __future__ import annotations

import os
import sqlite3
import time
from collections.abc import Iterable
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from mcp_export.history import reads, schema
from mcp_export.history.conversations import (
    ConversationFilter,
    conversation_page,
    conversation_tools,
)
from mcp_export.history.db import install_functions
from mcp_export.history.figures import Figures, answers
from mcp_export.history.store import INTERRUPTED, SCHEMA_VERSION, HistoryStore, agent_key

pytest_plugins = ["tests.fakes.postgres"]

AGENT = "/agents/travel.agent.yaml"


def _tool_test_with_a_follow_up(store: HistoryStore, agent: str = AGENT) -> tuple[str, int]:
    """A tool test as the studio writes it: the call (a tool round, then the answer), then a
    follow-up turn. Usage per model request: 30/5, 20/3, then 7/1."""
    thread, run = store.start_call(
        thread_id=None,
        agent_path=agent,
        agent_name="Travel",
        title="book_flight: Book Oslo",
        kind="tool-test",
        tool_name="book_flight",
        arguments={"destination": "Oslo"},
        filled_prompt="Book Oslo.",
        caller="Meta Agent Studio (tool test)",
    )
    store.add_message(thread, "user", "Book Oslo.")
    first = store.add_message(thread, "assistant", "", status="pending")
    calls = [{"id": "c1", "name": "time__now", "arguments": {}}]
    store.update_message(first, status="complete", tool_calls=calls, tokens_in=30, tokens_out=5)
    store.add_message(thread, "tool", "12:00", tool_call_id="c1", name="time__now")
    answer = store.add_message(thread, "assistant", "", status="pending")
    time.sleep(0.02)
    store.update_message(answer, content="Booked.", status="complete", tokens_in=20, tokens_out=3)
    store.finish_run(run, answer="Booked.", duration_ms=25.0, tokens_in=50, tokens_out=8)
    store.add_message(thread, "user", "And back?")
    again = store.add_message(thread, "assistant", "", status="pending")
    time.sleep(0.01)
    store.update_message(
        again, content="Booked back.", status="complete", tokens_in=7, tokens_out=1
    )
    return thread, run


# -- the figures ----------------------------------------------------------------------------------


def test_a_conversation_adds_up_every_answer_and_each_answer_its_own_requests(
    store_location: str,
) -> None:
    with HistoryStore(store_location) as store:
        thread, _ = _tool_test_with_a_follow_up(store)
        record = store.thread(thread)
        messages = store.messages(thread)
        (run,) = store.runs()
    assert record is not None
    assert (record.tool_name, record.status) == ("book_flight", "complete")
    assert (record.tokens_in, record.tokens_out) == (57, 9)
    per_answer = list(answers(messages).values())
    assert [(a.tokens_in, a.tokens_out) for a in per_answer] == [(50, 8), (7, 1)]
    assert all(a.duration_ms is not None and a.duration_ms > 0 for a in per_answer)
    total = sum(a.duration_ms or 0.0 for a in per_answer)
    assert record.duration_ms == pytest.approx(total)
    assert per_answer[0].duration_ms is not None and per_answer[0].duration_ms >= 20
    # The run keeps its own answer's figures: the call an MCP client made.
    assert (run.tokens_in, run.tokens_out) == (per_answer[0].tokens_in, per_answer[0].tokens_out)


def test_a_count_no_request_reported_stays_unknown_and_a_cut_off_answer_has_no_time(
    store_location: str,
) -> None:
    with HistoryStore(store_location) as store:
        thread = store.create_thread(agent_path=AGENT, agent_name="T", title="t", kind="chat")
        store.add_message(thread, "user", "Hello")
        quiet = store.add_message(thread, "assistant", "", status="pending")
        store.update_message(quiet, content="Hi.", status="complete")
        silent = store.thread(thread)
        store.add_message(thread, "user", "Again")
        cut = store.add_message(thread, "assistant", "", status="pending")
        store.update_message(cut, status="error", error=INTERRUPTED)
        record = store.thread(thread)
        messages = store.messages(thread)
    assert silent is not None and (silent.tokens_in, silent.tokens_out) == (None, None)
    assert record is not None and record.status == "error"
    assert record.duration_ms == pytest.approx(silent.duration_ms)
    assert answers(messages)[cut] == Figures(None, None, None)
    assert Figures().tokens() == "— in / — out" and Figures().time() == "—"


def test_a_conversation_is_pending_while_a_row_is_and_an_error_stays(store_location: str) -> None:
    with HistoryStore(store_location) as store:
        thread, run = store.start_call(
            thread_id=None,
            agent_path=AGENT,
            agent_name="T",
            title="t",
            kind="served",
            tool_name="book_flight",
            arguments={},
            filled_prompt="Book.",
            caller="client",
        )
        states = [store.thread(thread)]
        store.finish_run(run, error="model refused")
        states.append(store.thread(thread))
        store.add_message(thread, "user", "Again")
        states.append(store.thread(thread))
    assert [s.status for s in states if s is not None] == ["pending", "error", "error"]


# -- the migration ----------------------------------------------------------------------------


def _version_2_database(path: Path) -> None:
    """A database as version 2 of the schema made it, with the rows its code wrote."""
    conn = sqlite3.connect(path, isolation_level=None)
    for statement in schema._statements(schema._SCHEMA + schema._CASE_RUNS):
        conn.execute(statement)
    conn.execute("PRAGMA user_version = 2")
    rows: Iterable[tuple[str, tuple[Any, ...]]] = [
        (
            "INSERT INTO threads (id, agent_path, agent_name, title, kind, created_at, "
            "updated_at, writer_pid) VALUES (?, ?, 'Travel', ?, ?, ?, ?, 1)",
            ("t1", AGENT, "book_flight: Oslo", "tool-test", 100.0, 100.0),
        ),
        (
            "INSERT INTO threads (id, agent_path, agent_name, title, kind, created_at, "
            "updated_at, writer_pid) VALUES (?, ?, 'Travel', ?, ?, ?, ?, 1)",
            ("t2", AGENT, "Hello", "chat", 200.0, 200.0),
        ),
        (
            "INSERT INTO runs (thread_id, tool_name, arguments, filled_prompt, caller, status, "
            "answer, duration_ms, tokens_in, tokens_out, started_at, finished_at, writer_pid) "
            "VALUES ('t1', 'book_flight', '{}', 'Oslo', 'studio', 'complete', 'Booked.', 2000, "
            "30, 5, 100.0, 102.0, 1)",
            (),
        ),
        (
            "INSERT INTO case_runs (matrix_id, agent_name, tool_name, case_name, model, attempt, "
            "passed, failures, created_at, writer_pid) "
            "VALUES ('m', 'Travel', 'book_flight', 'c', 'x:y', 1, 1, '[]', 300.0, 1)",
            (),
        ),
    ]
    messages = [
        ("t1", "user", "Oslo", "complete", None, None, 100.0, 100.0),
        ("t1", "assistant", "Booked.", "complete", 30, 5, 100.0, 102.0),
        ("t1", "user", "And back?", "complete", None, None, 150.0, 150.0),
        ("t1", "assistant", "Back.", "complete", 7, 1, 150.0, 150.5),
        ("t2", "user", "Hello", "complete", None, None, 200.0, 200.0),
        ("t2", "assistant", "", "error", None, None, 200.0, 201.0),
    ]
    for sql, values in rows:
        conn.execute(sql, values)
    conn.executemany(
        "INSERT INTO messages (thread_id, role, content, status, tokens_in, tokens_out, "
        "created_at, updated_at, writer_pid) VALUES (?, ?, ?, ?, ?, ?, ?, ?, 1)",
        messages,
    )
    conn.close()


def _names(conn: sqlite3.Connection, kind: str) -> set[str]:
    return {
        name for (name,) in conn.execute("SELECT name FROM sqlite_master WHERE type = ?", (kind,))
    }


def test_a_version_2_database_keeps_its_rows_and_gains_the_indexes_and_summaries(
    tmp_path: Path,
) -> None:
    path = tmp_path / "h.sqlite3"
    _version_2_database(path)
    with HistoryStore(path) as store:
        raw = sqlite3.connect(path)
        try:
            assert raw.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION == 9
            tables = _names(raw, "table")
            counts = [
                raw.execute(f"SELECT count(*) FROM {table}").fetchone()[0]
                for table in ("threads", "messages", "runs", "case_runs")
            ]
            indexes, triggers = _names(raw, "index"), _names(raw, "trigger")
        finally:
            raw.close()
        assert counts == [2, 6, 1, 1]
        assert "turn_claims" in tables
        assert {"threads_by_key", "threads_by_key_tool", "threads_by_activity"} <= indexes
        assert "messages_by_thread_time" in indexes and "messages_by_thread" not in indexes
        assert {"answer_ended", "thread_message_added", "thread_run_added"} <= triggers
        test, chat = store.thread("t1"), store.thread("t2")
        assert test is not None and chat is not None
        assert (test.tool_name, test.status, test.tokens_in, test.tokens_out) == (
            "book_flight",
            "complete",
            37,
            6,
        )
        assert test.duration_ms == pytest.approx(2500.0)
        assert (chat.tool_name, chat.status, chat.duration_ms) == (None, "error", 1000.0)
        page = store.conversations(ConversationFilter(agent_key(AGENT)))
        assert [(c.thread.id, c.run is not None) for c in page.rows] == [
            ("t2", False),
            ("t1", True),
        ]
        assert len(store.case_runs()) == 1
        store.add_message("t1", "user", "And tomorrow?")
        later = store.add_message("t1", "assistant", "", status="pending")
        store.update_message(later, content="Yes.", status="complete", tokens_in=3, tokens_out=2)
        after = store.thread("t1")
    assert after is not None and (after.tokens_in, after.tokens_out) == (40, 8)


# -- pages ------------------------------------------------------------------------------------


def _many(store: HistoryStore, count: int, *, agent: str = AGENT) -> list[str]:
    """``count`` served calls, oldest first; the 7th is about Zürich, the rest about Oslo."""
    made = []
    for n in range(count):
        city = "Zürich" if n == 6 else "Oslo"
        thread, run = store.start_call(
            thread_id=None,
            agent_path=agent,
            agent_name="Travel",
            title=f"book_flight: call {n}",
            kind="served",
            tool_name="book_flight" if n % 2 else "find_hotel",
            arguments={"n": n},
            filled_prompt=f"Book {city} 100% for call_{n}.",
            caller="client",
        )
        store.finish_run(run, answer="ok", duration_ms=1.0)
        made.append(thread)
    return made


def test_keyset_pages_list_every_conversation_once_newest_first(store_location: str) -> None:
    with HistoryStore(store_location) as store:
        made = _many(store, 250)
        _many(store, 5, agent="/agents/other.agent.yaml")
        query = ConversationFilter(agent_key(AGENT))
        seen: list[str] = []
        after = None
        while True:
            page = store.conversations(query, after=after, limit=100)
            seen.extend(c.thread.id for c in page.rows)
            after = page.next
            if after is None:
                break
        oldest_first = store.conversations(query, descending=False, limit=3)
    assert seen == made[::-1]
    assert [c.thread.id for c in oldest_first.rows] == made[:3]


def test_a_bounded_scan_goes_on_where_it_stopped_until_it_finds_the_match(
    store_location: str,
) -> None:
    with HistoryStore(store_location) as store:
        made = _many(store, 250)
        query = ConversationFilter(agent_key(AGENT), text="zürich")
        pages = []
        after = None
        while True:
            page = store.conversations(query, after=after, limit=100, scan=40)
            pages.append(page)
            after = page.next
            if after is None:
                break
    assert len(pages) == 7  # 250 threads, 40 at a time
    found = [c.thread.id for page in pages for c in page.rows]
    assert found == [made[6]]
    assert [len(page.rows) for page in pages][:-1] == [0] * 6


def test_text_matches_without_case_and_takes_wildcards_literally(store_location: str) -> None:
    with HistoryStore(store_location) as store:
        made = _many(store, 12)
        scope = ConversationFilter(agent_key(AGENT))

        def found(**filters: Any) -> list[str]:
            return [c.thread.id for c in store.conversations(replace(scope, **filters)).rows]

        assert found(text="ZÜRICH") == [made[6]]
        assert found(text="CALL_11") == [made[11]]
        assert found(text="call_1_") == []  # "_" is no wildcard
        assert len(found(text="100%")) == 12
        assert found(text="nothing", text_kinds=("served",)) == made[::-1]
        assert found(tool="book_flight", text="call_3") == [made[3]]
        assert found(status="error") == []
        assert store.conversation_tools(scope) == ["book_flight", "find_hotel"]
        assert store.has_conversations(scope)
        assert not store.has_conversations(ConversationFilter(None, "Nobody"))


def test_threads_recorded_under_two_spellings_of_the_path_share_one_key(
    tmp_path: Path, store_location: str
) -> None:
    real = tmp_path / "agents"
    real.mkdir()
    (tmp_path / "link").symlink_to(real)
    with HistoryStore(store_location) as store:
        one = _many(store, 1, agent=str(real / "t.agent.yaml"))
        two = _many(store, 1, agent=str(tmp_path / "link" / ".." / "link" / "t.agent.yaml"))
        page = store.conversations(ConversationFilter(agent_key(str(real / "t.agent.yaml"))))
    assert [c.thread.id for c in page.rows] == two + one


# -- the plans ---------------------------------------------------------------------------------


class _Noting(sqlite3.Connection):
    """A connection that notes every statement it runs, with its values."""

    statements: list[tuple[str, tuple[Any, ...]]]

    def execute(self, sql: str, parameters: Any = (), /) -> sqlite3.Cursor:
        self.statements.append((sql, tuple(parameters)))
        return super().execute(sql, parameters)


def _plans(path: Path, run: Any) -> list[str]:
    conn = sqlite3.connect(path, factory=_Noting)
    assert isinstance(conn, _Noting)
    conn.statements = []
    install_functions(conn)
    try:
        run(conn)
        noted = list(conn.statements)
        return [
            " / ".join(
                row[3]
                for row in sqlite3.Connection.execute(conn, f"EXPLAIN QUERY PLAN {sql}", values)
            )
            for sql, values in noted
        ]
    finally:
        conn.close()


def test_the_queries_read_their_index_in_order_and_never_sort_the_agents_rows(
    tmp_path: Path,
) -> None:
    path = tmp_path / "h.sqlite3"
    with HistoryStore(path) as store:
        _many(store, 30)
    query = ConversationFilter(agent_key(AGENT))

    (first,) = _plans(path, lambda conn: conversation_page(conn, query))
    assert "USING INDEX threads_by_key (agent_key=?)" in first
    said, boundary, following = _plans(
        path,
        lambda conn: conversation_page(
            conn, replace(query, text="oslo"), after=(time.time(), 10**6), scan=10
        ),
    )
    assert "SCAN messages_text VIRTUAL TABLE INDEX 0:M" in said, said  # a MATCH of the index
    assert "COVERING INDEX threads_by_key (agent_key=? AND created_at<?)" in boundary
    assert "INDEX threads_by_key (agent_key=? AND created_at>? AND created_at<?)" in following
    (tools,) = _plans(path, lambda conn: conversation_tools(conn, query))
    assert "COVERING INDEX threads_by_key_tool (agent_key=? AND tool_name>?)" in tools
    (threads,) = _plans(path, lambda conn: reads.threads(conn, agent_path=AGENT))
    assert "INDEX threads_by_activity (agent_path=?)" in threads
    (runs,) = _plans(path, lambda conn: reads.runs(conn, agent_path=AGENT))
    assert runs.startswith("SCAN runs")
    for plan in (first, boundary, following, tools, threads, runs):
        assert "TEMP B-TREE" not in plan, plan


def test_the_default_store_path_gets_the_current_schema(metaagent_home: Path) -> None:
    with HistoryStore() as store:
        _many(store, 1)
    raw = sqlite3.connect(metaagent_home / "history.sqlite3")
    try:
        assert raw.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION == 9
        assert "threads_by_key" in _names(raw, "index")
        assert "case_runs_by_thread" in _names(raw, "index")
        assert "turn_claims" in _names(raw, "table")
    finally:
        raw.close()
    assert os.path.realpath(AGENT) == agent_key(AGENT)
