"""History keeps each case run's cost and the version of the tool it ran (schema version 7) on
SQLite and PostgreSQL alike: a version-6 database of either gains the columns in place, its old
rows kept (cost unknown, no version); the versions of a tool come back newest first with the same
figures from both backends, and unknown stays unknown (NULL, never 0)."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

import psycopg

from mcp_export.history import schema
from mcp_export.history.pg_schema import PG_SCHEMA_VERSION
from mcp_export.history.store import HistoryStore, open_store
from mcp_export.versions.query import tool_versions, version_diff
from tests.fakes.postgres import PostgresCluster

pytest_plugins = ["tests.fakes.postgres"]

AGENT = "/a.agent.yaml"
OLD = "a" * 64
NEW = "b" * 64
DECISIVE: dict[str, Any] = {
    "tool": {"description": "Books.", "prompt": "Book {destination}.", "parameters": {}},
    "systemPrompt": "",
    "model": "openai:x",
    "settings": {"temperature": None},
}
V7 = ("cost_usd", "cost_at_least", "fingerprint", "version")


def _add(
    store: HistoryStore,
    fingerprint: str | None,
    *,
    passed: bool = True,
    ms: float = 10.0,
    tokens: tuple[int | None, int | None] = (20, 5),
    cost: float | None = 0.0001,
    at_least: bool = False,
    decisive: dict[str, Any] | None = None,
) -> None:
    store.add_case_run(
        matrix_id="m",
        agent_path=AGENT,
        agent_name="Travel",
        tool_name="book_flight",
        case_name="oslo",
        model="openai:x",
        attempt=1,
        passed=passed,
        failures=[],
        answer="Booked.",
        is_error=False,
        duration_ms=ms,
        tokens_in=tokens[0],
        tokens_out=tokens[1],
        turns=1,
        verdict=None,
        cost_usd=cost,
        cost_at_least=at_least,
        fingerprint=fingerprint,
        version=decisive,
    )


def _old_row(execute: Any) -> None:
    execute(
        "INSERT INTO case_runs (matrix_id, agent_path, agent_name, tool_name, case_name, model, "
        "attempt, passed, failures, created_at, writer_pid) "
        "VALUES ('m0', '/a.agent.yaml', 'Travel', 'book_flight', 'old', 'openai:x', 1, 1, "
        "'[]', 300.0, 1)"
    )


def test_a_version_6_sqlite_database_gains_cost_and_version_columns_in_place(
    tmp_path: Path,
) -> None:
    path = tmp_path / "h.sqlite3"
    with HistoryStore(path):
        pass
    conn = sqlite3.connect(path, isolation_level=None)
    conn.execute("DROP INDEX case_runs_by_version")  # the schema as version 6 left it
    for column in V7:
        conn.execute(f"ALTER TABLE case_runs DROP COLUMN {column}")
    conn.execute("ALTER TABLE runs DROP COLUMN fingerprint")
    conn.execute("PRAGMA user_version = 6")
    _old_row(conn.execute)
    conn.close()

    with HistoryStore(path) as store:
        _add(store, NEW, cost=0.00008, decisive=DECISIVE)
        rows = {row.case_name: row for row in store.case_runs()}
        assert store.stored_version(AGENT, "book_flight", NEW) == DECISIVE

    assert (rows["old"].cost_usd, rows["old"].cost_at_least, rows["old"].fingerprint) == (
        None,
        False,
        None,
    )
    assert (rows["oslo"].cost_usd, rows["oslo"].fingerprint) == (0.00008, NEW)
    raw = sqlite3.connect(path)
    try:
        assert raw.execute("PRAGMA user_version").fetchone()[0] == schema.SCHEMA_VERSION == 9
        indexes = {row[1] for row in raw.execute("PRAGMA index_list(case_runs)")}
        assert "case_runs_by_version" in indexes
    finally:
        raw.close()


def test_a_version_6_postgresql_database_gains_cost_and_version_columns_in_place(
    postgres_cluster: PostgresCluster, postgres_url: str
) -> None:
    with open_store(postgres_url):
        pass
    with psycopg.connect(postgres_url) as raw:
        raw.execute("DROP INDEX case_runs_by_version")
        for column in V7:
            raw.execute(f"ALTER TABLE case_runs DROP COLUMN {column}")
        raw.execute("ALTER TABLE runs DROP COLUMN fingerprint")
        raw.execute("UPDATE history_schema SET version = 6")
        _old_row(raw.execute)

    with open_store(postgres_url) as store:
        _add(store, NEW, cost=0.00008, decisive=DECISIVE)
        rows = {row.case_name: row for row in store.case_runs()}
        assert store.stored_version(AGENT, "book_flight", NEW) == DECISIVE

    assert (rows["old"].cost_usd, rows["old"].fingerprint) == (None, None)
    assert (rows["oslo"].cost_usd, rows["oslo"].fingerprint) == (0.00008, NEW)
    with psycopg.connect(postgres_url) as raw:
        assert raw.execute("SELECT version FROM history_schema").fetchall() == [(9,)]
    assert PG_SCHEMA_VERSION == 9


def test_a_tools_versions_have_the_same_figures_on_both_backends(store_location: str) -> None:
    with open_store(store_location) as store:
        for ms, passed in ((10.0, True), (30.0, False), (20.0, True), (40.0, True)):
            _add(store, OLD, ms=ms, passed=passed, decisive=DECISIVE)
        _add(store, None)  # a run from before versions were recorded: in no version
        newer = {**DECISIVE, "tool": {**DECISIVE["tool"], "prompt": "Book {destination} now."}}
        _add(store, NEW, ms=7.0, tokens=(None, None), cost=None, decisive=newer)
        _add(store, NEW, ms=9.0, tokens=(30, 10), cost=0.0002, at_least=True, decisive=newer)
        _add(store, NEW, ms=8.0, decisive=newer)
        versions = tool_versions(store, AGENT, "book_flight")
        diff = version_diff(store, AGENT, "book_flight", "aaaa", "bbb")

    assert [v.fingerprint for v in versions] == [NEW, OLD]  # newest first
    new, old = versions
    assert (old.runs, old.passed, old.median_ms) == (4, 3, 25.0)  # the two middle runs' mean
    assert (old.tokens.text(), old.cost.total.text(), old.cost.per_call.text()) == (
        "25",
        "$0.000400",
        "$0.000100",
    )
    assert old.cost.per_100.text() == "$0.0100"
    assert (new.runs, new.passed, new.median_ms) == (3, 3, 8.0)
    # One run with no count and no cost: the sums of the others, as lower bounds.
    assert new.tokens.text() == f"≥ {(40 + 25) / 3:.0f}"
    assert new.cost.total.text() == "≥ $0.000300"
    assert new.cost.per_call.text() == "≥ $0.000100"
    assert diff.splitlines()[:2] == ["--- aaaaaaaaaaaa", "+++ bbbbbbbbbbbb"]
    assert "-template: Book {destination}." in diff.splitlines()
    assert "+template: Book {destination} now." in diff.splitlines()


def test_a_version_whose_runs_have_no_cost_says_unknown(store_location: str) -> None:
    with open_store(store_location) as store:
        _add(store, OLD, tokens=(None, None), cost=None, decisive=DECISIVE)
        (only,) = tool_versions(store, AGENT, "book_flight")

    assert (only.tokens.text(), only.cost.per_call.text(), only.cost.per_100.text()) == (
        "unknown",
        "unknown",
        "unknown",
    )
    assert only.as_json()["cost"]["perCall"]["usd"] is None
