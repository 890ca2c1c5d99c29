"""History schema version 8: each run's cost and a conversation's totals that follow the rule
of a total, on SQLite and PostgreSQL alike.

A version-7 database (made by the version-7 scripts, its rows written under its own triggers)
is upgraded in place: its conversations count their model requests that reported no token
count and their calls (whose cost was not recorded: unknown), and new calls add their cost.
The totals are kept by triggers whoever writes: a run ended by an update or written ended at
once, a message completed later.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from pathlib import Path
from typing import Any

import psycopg

from mcp_export.history import pg_schema, schema
from mcp_export.history.store import HistoryStore, open_store
from tests.fakes.postgres import PostgresCluster

pytest_plugins = ["tests.fakes.postgres"]

Execute = Callable[..., Any]


def _version_7_rows(execute: Execute) -> None:
    """A served call of version 7: a thread, its run (ended), a question, a model request that
    reported its tokens and one that did not (a tool call), a tool result, the answer."""
    execute(
        "INSERT INTO threads (id, agent_path, agent_name, title, kind, created_at, updated_at, "
        "writer_pid) VALUES ('t1', '/a.agent.yaml', 'Travel', 'book_flight: Oslo', 'served', "
        "100.0, 100.0, 1)"
    )
    execute(
        "INSERT INTO runs (id, thread_id, tool_name, arguments, filled_prompt, caller, status, "
        "started_at, writer_pid) VALUES (1, 't1', 'book_flight', '{}', 'Book.', 'client', "
        "'pending', 100.0, 1)"
    )
    messages = [
        ("user", "complete", None, None, None),
        ("assistant", "complete", None, None, '[{"id": "c1", "name": "t__now"}]'),
        ("tool", "complete", None, None, None),
        ("assistant", "complete", 40, 7, None),
    ]
    for number, (role, status, tokens_in, tokens_out, calls) in enumerate(messages, 1):
        execute(
            "INSERT INTO messages (id, thread_id, role, content, status, tokens_in, tokens_out, "
            "tool_calls, created_at, updated_at, writer_pid) "
            f"VALUES ({number}, 't1', '{role}', 'x', '{status}', "
            f"{'NULL' if tokens_in is None else tokens_in}, "
            f"{'NULL' if tokens_out is None else tokens_out}, "
            f"{'NULL' if calls is None else repr(calls)}, {100 + number}.0, {100 + number}.0, 1)"
        )
    execute("UPDATE runs SET status = 'complete', answer = 'Booked.', finished_at = 105.0")


def _version_7_sqlite(path: Path) -> None:
    conn = sqlite3.connect(path, isolation_level=None)
    for statement in schema._statements(schema._SCHEMA):
        conn.execute(statement)
    for version in range(2, 8):  # the steps that made version 7
        schema._MIGRATIONS[version](conn)
    conn.execute("PRAGMA user_version = 7")
    _version_7_rows(conn.execute)
    conn.close()


def _version_7_postgresql(url: str) -> None:
    with psycopg.connect(url) as raw:  # the set-up of a new version-7 database
        raw.execute(
            pg_schema._TABLES
            + pg_schema._TRIGGERS
            + pg_schema._APPLY
            + pg_schema._WRITERS
            + pg_schema._MESSAGES_TEXT
        )
        raw.execute("CREATE TABLE history_schema (version integer NOT NULL)")
        raw.execute("INSERT INTO history_schema (version) VALUES (7)")
        _version_7_rows(raw.execute)
        # identity columns: the next ids after the rows written with theirs
        raw.execute("SELECT setval(pg_get_serial_sequence('runs', 'id'), 1)")
        raw.execute("SELECT setval(pg_get_serial_sequence('messages', 'id'), 4)")


def _check_upgraded(store: HistoryStore) -> None:
    before = store.thread("t1")
    assert before is not None
    assert (before.tokens_in, before.tokens_out, before.tokens_unreported) == (40, 7, 1)
    assert (before.calls, before.cost_usd, before.cost_unsure) == (1, None, 1)
    assert before.cost.text() == "cost unknown"
    (old,) = store.runs()
    assert (old.cost_usd, old.cost_at_least) == (None, False)

    run = store.start_run(
        thread_id="t1", tool_name="book_flight", arguments={}, filled_prompt="p", caller="c"
    )
    store.finish_run(run, answer="Changed.", cost_usd=0.002)
    store.flush()
    after = store.thread("t1")
    assert after is not None
    assert (after.calls, after.cost_usd, after.cost_unsure) == (2, 0.002, 1)
    assert after.cost.text() == (
        "cost ≥ $0.00200 in 2 calls: ≥ $0.00100 a call, ≥ $0.100 per 100 calls"
    )


def test_a_version_7_sqlite_database_gains_costs_and_totals_in_place(tmp_path: Path) -> None:
    path = tmp_path / "h.sqlite3"
    _version_7_sqlite(path)
    with HistoryStore(path) as store:
        _check_upgraded(store)
    raw = sqlite3.connect(path)
    try:
        assert raw.execute("PRAGMA user_version").fetchone()[0] == schema.SCHEMA_VERSION
    finally:
        raw.close()


def test_a_version_7_postgresql_database_gains_costs_and_totals_in_place(
    postgres_cluster: PostgresCluster, postgres_url: str
) -> None:
    _version_7_postgresql(postgres_url)
    with open_store(postgres_url) as store:
        _check_upgraded(store)
    with psycopg.connect(postgres_url) as raw:
        assert raw.execute("SELECT version FROM history_schema").fetchall() == [(9,)]


def test_a_conversations_totals_follow_its_messages_and_runs(store_location: str) -> None:
    with open_store(store_location) as store:
        thread, run = store.start_call(
            thread_id=None,
            agent_path="/a.agent.yaml",
            agent_name="Travel",
            title="t",
            kind="served",
            tool_name="book_flight",
            arguments={},
            filled_prompt="p",
            caller="c",
        )
        store.add_message(thread, "user", "Book.")
        asked = store.add_message(thread, "assistant", "", status="pending")
        store.flush()
        pending = store.thread(thread)
        store.update_message(asked, status="complete", content="Booked.")  # no count
        store.flush()
        unreported = store.thread(thread)
        store.update_message(asked, tokens_in=40, tokens_out=7)  # reported after all
        store.finish_run(run, answer="Booked.", cost_usd=0.001, cost_at_least=True)
        store.flush()
        reported = store.thread(thread)
    assert pending is not None and unreported is not None and reported is not None
    assert (pending.tokens_unreported, pending.calls) == (0, 0)
    assert unreported.tokens_unreported == 1
    assert (reported.tokens_in, reported.tokens_out, reported.tokens_unreported) == (40, 7, 0)
    assert (reported.calls, reported.cost_usd, reported.cost_unsure) == (1, 0.001, 1)
    assert reported.cost.text() == "cost ≥ $0.00100 a call, ≥ $0.100 per 100 calls"
