"""History keeps a caller case's run with its step and caller transcript (``case_runs.caller``):
written and read back on SQLite and PostgreSQL, and a version-5 database of either gains the
column in place, its old rows kept (read as ordinary case runs). A caller run that made no served
call is listed as a conversation of the caller's turn on either."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

import anyio
import psycopg
import pytest

from mcp_export.history import schema
from mcp_export.history.conversations import ConversationFilter
from mcp_export.history.pg_schema import PG_SCHEMA_VERSION
from mcp_export.history.store import HistoryStore, open_store
from mcp_export.testing.callers import CallerOptions
from mcp_export.testing.record import record_matrix
from mcp_export.testing.run import run_matrix, select_cases
from schema_types.files.agent_file import load_agent
from tests.fakes._script import caller
from tests.fakes.mcp_clients import book_tool, write_agent
from tests.fakes.openai_server import FakeOpenAIServer
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
        assert raw.execute("PRAGMA user_version").fetchone()[0] == schema.SCHEMA_VERSION == 9
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
        assert raw.execute("SELECT version FROM history_schema").fetchall() == [(9,)]
    assert PG_SCHEMA_VERSION == 9


@pytest.mark.parametrize("backend", ["sqlite", "postgresql"])
def test_a_caller_run_with_no_served_call_is_listed_as_the_callers_turn(
    tmp_path: Path, backend: str, request: pytest.FixtureRequest
) -> None:
    url = (
        str(request.getfixturevalue("postgres_url"))
        if backend == "postgresql"
        else str(tmp_path / "h.sqlite3")
    )
    cases = [{"name": "mail", "ask": "Email Ana that I land at 9", "expect": {}}]
    declines = caller(pick=lambda ask, offered: None, declines="I cannot send mail.")
    with FakeOpenAIServer(responder=declines) as model:
        path = write_agent(
            tmp_path / "a.agent.yaml", base_url=model.base_url, tools=[book_tool(tests=cases)]
        )
        agent = load_agent(path)
        with open_store(url) as store:
            matrix = anyio.run(
                lambda: run_matrix(
                    agent,
                    path,
                    select_cases(agent),
                    history=store,
                    callers=CallerOptions(decoy_sets=()),
                )
            )
            record_matrix(matrix, store)
            page = store.conversations(ConversationFilter(schema.agent_key(str(path))))
            (row,) = page.rows
            said = [(m.role, m.content, m.status) for m in store.messages(row.thread.id)]

    assert row.case is not None and row.run is None
    assert (row.case.case_name, row.case.model, row.case.step) == (
        "mail",
        "openai:fake-model",
        "no call",
    )
    assert (row.case.caller, row.case.served, row.thread.kind) == (True, False, "caller")
    assert row.thread.title == "book_flight: Email Ana that I land at 9"
    assert row.thread.tool_name == "book_flight"  # History's Tool column and filter
    assert said == [
        ("user", "Email Ana that I land at 9", "complete"),
        ("assistant", "I cannot send mail.", "complete"),
    ]


def test_a_caller_model_that_cannot_be_used_is_listed_with_its_error(tmp_path: Path) -> None:
    cases = [{"name": "mail", "ask": "Email Ana", "expect": {}}]
    with FakeOpenAIServer(responder=caller()) as model:
        path = write_agent(
            tmp_path / "a.agent.yaml", base_url=model.base_url, tools=[book_tool(tests=cases)]
        )
        agent = load_agent(path)
        with HistoryStore(tmp_path / "h.sqlite3") as store:
            options = CallerOptions(models=("nosuch:model",), decoy_sets=())
            matrix = anyio.run(
                lambda: run_matrix(agent, path, select_cases(agent), callers=options)
            )
            record_matrix(matrix, store)
            (row,) = store.conversations(ConversationFilter(schema.agent_key(str(path)))).rows
            said = [(m.role, m.status, m.is_error) for m in store.messages(row.thread.id)]

    assert row.case is not None
    assert (row.case.model, row.case.step, row.case.served) == ("nosuch:model", "caller", False)
    assert row.thread.status == "error"
    assert said == [("user", "complete", False), ("assistant", "error", True)]
