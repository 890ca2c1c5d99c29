"""History keeps a caller case's run with its step and caller transcript (``case_runs.caller``):
written and read back on SQLite and PostgreSQL, and a version-5 database of either gains the
column in place, its old rows kept (read as ordinary case runs)."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

import psycopg

from mcp_export.history import schema
from mcp_export.history.pg_schema import PG_SCHEMA_VERSION
from mcp_export.history.store import HistoryStore, open_store
from tests.fakes.postgres import PostgresCluster

pytest_plugins = ["tests.fakes.postgres"]

CALLER = {
    "step": "wrong tool",
    "picked": ["send_email"],
    "description": "Books a flight for a traveller.",
    "transcript": {"request": {"user": "Fly me to Lisbon ✈", "tools": [{"name": "book_flight"}]}},
}


def _add(store: HistoryStore, case: str, caller: dict[str, Any] | None) -> None:
    store.add_case_run(
        matrix_id="m2",
        agent_path="/a.agent.yaml",
        agent_name="Travel",
        tool_name="book_flight",
        case_name=case,
        model="openai:x",
        attempt=1,
        passed=False,
        failures=["picks: called send_email instead of book_flight"],
        answer="",
        is_error=False,
        duration_ms=3.0,
        tokens_in=None,
        tokens_out=None,
        turns=None,
        verdict=None,
        caller=caller,
    )


def _old_row(execute: Any) -> None:
    execute(
        "INSERT INTO case_runs (matrix_id, agent_name, tool_name, case_name, model, attempt, "
        "passed, failures, created_at, writer_pid) "
        "VALUES ('m1', 'Travel', 'book_flight', 'old', 'x:y', 1, 1, '[]', 300.0, 1)"
    )


def test_a_version_5_sqlite_database_gains_the_caller_column_in_place(tmp_path: Path) -> None:
    path = tmp_path / "h.sqlite3"
    with HistoryStore(path):
        pass
    conn = sqlite3.connect(path, isolation_level=None)
    conn.execute("DROP INDEX case_runs_by_version")  # the schema as version 5 left it
    for column in ("caller", "cost_usd", "cost_at_least", "fingerprint", "version"):
        conn.execute(f"ALTER TABLE case_runs DROP COLUMN {column}")
    conn.execute("ALTER TABLE runs DROP COLUMN fingerprint")
    conn.execute("PRAGMA user_version = 5")
    _old_row(conn.execute)
    conn.close()

    with HistoryStore(path) as store:
        _add(store, "words", CALLER)
        _add(store, "plain", None)
        rows = {row.case_name: row for row in store.case_runs()}

    assert rows["old"].caller is None
    assert rows["plain"].caller is None
    assert rows["words"].caller == CALLER
    raw = sqlite3.connect(path)
    try:
        assert raw.execute("PRAGMA user_version").fetchone()[0] == schema.SCHEMA_VERSION == 7
    finally:
        raw.close()


def test_a_version_5_postgresql_database_gains_the_caller_column_in_place(
    postgres_cluster: PostgresCluster, postgres_url: str
) -> None:
    with open_store(postgres_url):
        pass
    with psycopg.connect(postgres_url) as raw:
        raw.execute("ALTER TABLE case_runs DROP COLUMN caller")
        raw.execute("UPDATE history_schema SET version = 5")
        _old_row(raw.execute)

    with open_store(postgres_url) as store:
        _add(store, "words", CALLER)
        rows = {row.case_name: row for row in store.case_runs()}

    assert rows["old"].caller is None
    assert rows["words"].caller == CALLER
    with psycopg.connect(postgres_url) as raw:
        assert raw.execute("SELECT version FROM history_schema").fetchall() == [(7,)]
    assert PG_SCHEMA_VERSION == 7
