"""A version of a tool that was only served, never tested, in Versions: a real ``AgentServer``
in-process with the official ``mcp.Client`` and the real OpenAI provider against
``FakeOpenAIServer``, writing to each store location of ``store_location`` (an SQLite file, a
real PostgreSQL); ``metaagent test`` and ``metaagent versions`` as a person runs them.

Its server records what the version is made of once (History schema version 9), so it is
listed with its calls, time, tokens and cost (its pass rate unknown), and can be compared with
a tested one. Calls served under ``--prefix`` count for the agent file's tool. A version-8
database gains the record in place, on SQLite and PostgreSQL.
"""

from __future__ import annotations

import json
import os
import sqlite3
from pathlib import Path
from typing import Any

import anyio
import mcp_types as types
import psycopg
import pytest
from mcp import Client

from mcp_export.history import pg_schema, schema
from mcp_export.history.conversation_totals import PG_TOTALS
from mcp_export.history.store import HistoryStore, open_store
from mcp_export.server.agent_server import AgentServer, load_served_agents
from mcp_export.server.tool_test import ToolTestRecord
from mcp_export.versions.fingerprint import tool_version
from mcp_export.versions.query import tool_versions
from schema_types.files.agent_file import load_agent
from tests.fakes._script import Reply, RequestBody, text
from tests.fakes.cli import metaagent
from tests.fakes.mcp_clients import book_tool, write_agent
from tests.fakes.openai_server import FakeOpenAIServer
from tests.fakes.postgres import PostgresCluster

pytest_plugins = ["tests.fakes.postgres"]

PRICES = {"openai:fake-model": {"input": 0.4, "output": 1.6}}
COST = (1000 * 0.4 + 200 * 1.6) / 1_000_000  # 1000 tokens in, 200 out
CLIENT = types.Implementation(name="test-client", version="9.9")
SERVED = "Book a flight to {destination}."
TESTED = "Book a flight to {destination}, window seat."


async def _serve(
    path: Path, location: str, *destinations: str, prefix: bool = False, conversation: bool = False
) -> list[types.CallToolResult]:
    """Call ``book_flight`` once per destination (as one conversation when ``conversation``)."""
    results: list[types.CallToolResult] = []
    async with (
        AgentServer(load_served_agents([path]), history=location, prefix=prefix) as served,
        Client(served.server, client_info=CLIENT) as client,
    ):
        (name,) = served.catalogue
        assert name.endswith("book_flight") and (name != "book_flight") == prefix
        conversation_id: str | None = None
        for destination in destinations:
            arguments: dict[str, Any] = {"destination": destination}
            if conversation_id is not None:
                arguments["conversation_id"] = conversation_id
            result = await client.call_tool(name, arguments)
            assert not result.is_error, result.content
            if conversation and result.structured_content is not None:
                conversation_id = result.structured_content.get("conversationId")
            results.append(result)
    return results


def _agent(tmp_path: Path, model: FakeOpenAIServer, prompt: str, **tool: Any) -> Path:
    cases = [
        {"name": "oslo", "arguments": {"destination": "Oslo"}, "expect": {"contains": ["AF123"]}}
    ]
    return write_agent(
        tmp_path / "desk.agent.yaml",
        base_url=model.base_url,
        tools=[book_tool(tests=cases, prompt=prompt, **tool)],
        settings={"prices": PRICES},
    )


@pytest.mark.anyio
async def test_a_version_only_served_is_listed_with_its_calls_time_tokens_and_cost(
    tmp_path: Path, store_location: str
) -> None:
    with FakeOpenAIServer([text("Booked AF1.", usage=(1000, 200))] * 3) as model:
        path = _agent(tmp_path, model, SERVED)
        await _serve(path, store_location, "Oslo", "Rome", "Paris")
    agent = load_agent(path)
    tool = agent.metadata.tool("book_flight")
    assert tool is not None
    version = tool_version(agent, tool)
    with open_store(store_location) as store:
        runs = store.runs(tool_name="book_flight")
        (listed,) = tool_versions(store, path, "book_flight", version)
        record = store.stored_version(str(path.resolve()), "book_flight", version.fingerprint)
    times = sorted(run.duration_ms or 0.0 for run in runs)
    assert len(runs) == 3 and all(run.fingerprint == version.fingerprint for run in runs)
    assert record == version.decisive  # Restore and the diff read it
    assert (listed.fingerprint, listed.model, listed.current) == (
        version.fingerprint,
        "openai:fake-model",
        True,
    )
    assert (listed.runs, listed.served_calls, listed.pass_rate) == (0, 3, None)
    assert listed.median_ms == pytest.approx(times[1])  # over its served calls
    assert listed.tokens.text() == "1200"
    assert listed.cost.per_call.usd == pytest.approx(COST)
    assert not listed.cost.total.at_least
    assert listed.last_at.timestamp() >= max(run.started_at.timestamp() for run in runs)
    cells = listed.cells("")
    assert (cells[3], cells[4]) == ("0 + 3 served", "—")  # unknown, never 0 %
    data = listed.as_json()
    assert (data["runs"], data["servedCalls"], data["passRate"]) == (0, 3, None)


@pytest.mark.anyio
async def test_a_served_versions_record_keeps_no_secret(
    tmp_path: Path, store_location: str
) -> None:
    key = "sk-proj-" + "a1B2c3D4e5F6g7H8i9J0" * 2
    with FakeOpenAIServer([text("Booked AF1.")]) as model:
        path = write_agent(
            tmp_path / "desk.agent.yaml",
            base_url=model.base_url,
            tools=[book_tool()],
            system_prompt=f"Use the key {key} nowhere.",
        )
        await _serve(path, store_location, "Oslo")
    agent = load_agent(path)
    version = tool_version(agent, agent.tools[0])
    with open_store(store_location) as store:
        record = store.stored_version(str(path.resolve()), "book_flight", version.fingerprint)
    assert record is not None and record["systemPrompt"] == "Use the key [redacted] nowhere."
    assert key not in json.dumps(record)


def test_the_studios_tool_test_records_its_version(tmp_path: Path) -> None:
    path = write_agent(tmp_path / "desk.agent.yaml", tools=[book_tool()])
    agent = load_agent(path)
    version = tool_version(agent, agent.tools[0])
    with HistoryStore(tmp_path / "h.sqlite3") as store:
        record = ToolTestRecord(
            agent,
            "book_flight",
            arguments={"destination": "Oslo"},
            prompt="Book a flight to Oslo.",
            history=store,
            agent_path=path,
        )
        record.cancelled()  # the tab closed before it ended: the call is over
        (listed,) = tool_versions(store, path, "book_flight", version)
        kept = store.stored_version(str(path.resolve()), "book_flight", version.fingerprint)
    assert (listed.fingerprint, listed.runs, listed.served_calls) == (version.fingerprint, 0, 1)
    assert kept == version.decisive


def _booked(body: RequestBody) -> Reply:
    return text("Booked AF123.", usage=(20, 5))


def test_metaagent_versions_lists_a_served_only_version_and_diffs_it_with_a_tested_one(
    tmp_path: Path,
) -> None:
    home = Path(os.environ["METAAGENT_HOME"])
    home.mkdir(parents=True, exist_ok=True)
    with FakeOpenAIServer(responder=_booked) as model:
        path = _agent(tmp_path, model, SERVED)
        anyio.run(_serve, path, str(home / "history.sqlite3"), "Oslo", "Rome")
        served = tool_version(load_agent(path), load_agent(path).tools[0]).fingerprint
        path = _agent(tmp_path, model, TESTED)
        assert metaagent("test", str(path)).returncode == 0
    tested = tool_version(load_agent(path), load_agent(path).tools[0]).fingerprint

    listed = metaagent("versions", str(path), "book_flight", "--json")
    assert (listed.returncode, listed.stderr) == (0, "")
    versions = json.loads(listed.stdout)["versions"]
    assert [v["fingerprint"] for v in versions] == [tested, served]
    assert [(v["runs"], v["servedCalls"], v["passRate"]) for v in versions] == [
        (1, 0, 1.0),
        (0, 2, None),
    ]
    assert versions[1]["cost"]["perCall"]["usd"] == pytest.approx((20 * 0.4 + 5 * 1.6) / 1e6)
    assert versions[1]["tokensPerCall"] == {"tokens": 25, "atLeast": False}
    assert versions[1]["medianMs"] is not None

    table = metaagent("versions", str(path), "book_flight").stdout.splitlines()
    assert table[0] == "book_flight: 2 versions, newest first"
    assert table[3].startswith(f"   {served[:12]}  openai:fake-model  0 + 2 served  —  ")

    diff = metaagent("versions", str(path), "book_flight", "--diff", served[:8], tested[:8])
    assert (diff.returncode, diff.stderr) == (0, "")
    lines = diff.stdout.splitlines()
    assert lines[:2] == [f"--- {served[:12]}", f"+++ {tested[:12]}"]
    assert f"-template: {SERVED}" in lines and f"+template: {TESTED}" in lines


@pytest.mark.anyio
async def test_a_prefixed_servers_calls_count_for_the_agent_files_tool(
    tmp_path: Path, store_location: str
) -> None:
    with FakeOpenAIServer([text("Booked AF1.", usage=(1000, 200))] * 2) as model:
        path = _agent(tmp_path, model, SERVED, conversation=True)
        await _serve(path, store_location, "Oslo", "Rome", prefix=True, conversation=True)
    with open_store(store_location) as store:
        runs = store.runs()
        (listed,) = tool_versions(store, path, "book_flight")
        thread = store.thread(runs[0].thread_id or "")
    assert [run.tool_name for run in runs] == ["book_flight"] * 2
    # One conversation: the second call continued the first under the prefixed name.
    assert len({run.thread_id for run in runs}) == 1
    assert thread is not None and thread.title == "travel-desk__book_flight: Book a flight to Oslo."
    assert (listed.runs, listed.served_calls) == (0, 2)
    assert listed.cost.per_call.usd == pytest.approx(COST)


# --- schema version 8 → 9 -----------------------------------------------------------------------

_FINGERPRINT = "ab" * 32


def _version_8_rows(execute: Any) -> None:
    """A served call recorded by version 8: its run has a fingerprint, nothing says what the
    version is made of."""
    execute(
        "INSERT INTO threads (id, agent_path, agent_key, agent_name, title, kind, created_at, "
        "updated_at, writer_pid) VALUES ('t1', '/a.agent.yaml', '/a.agent.yaml', 'Travel', "
        "'book_flight: Oslo', 'served', 100.0, 100.0, 1)"
    )
    execute(
        "INSERT INTO runs (id, thread_id, tool_name, arguments, filled_prompt, caller, status, "
        "started_at, finished_at, duration_ms, writer_pid, fingerprint, cost_usd) VALUES (1, "
        f"'t1', 'book_flight', '{{}}', 'Book.', 'client', 'complete', 100.0, 101.0, 40.0, 1, "
        f"'{_FINGERPRINT}', 0.001)"
    )


def _check_upgraded(store: HistoryStore) -> None:
    (old,) = tool_versions(store, "/a.agent.yaml", "book_flight")
    assert (old.fingerprint, old.model, old.runs, old.served_calls) == (
        _FINGERPRINT,
        "unknown",
        0,
        1,
    )
    assert old.median_ms == 40.0 and old.cost.per_call.usd == pytest.approx(0.001)
    assert store.stored_version("/a.agent.yaml", "book_flight", _FINGERPRINT) is None
    decisive = {"model": "openai:m", "tool": {"prompt": "Book."}}
    store.keep_version("cd" * 32, decisive)
    store.keep_version("cd" * 32, {"model": "other"})  # once per store
    store.flush()
    assert store.stored_version("/a.agent.yaml", "book_flight", "cd" * 32) == decisive


def test_a_version_8_sqlite_database_gains_the_served_versions_in_place(tmp_path: Path) -> None:
    path = tmp_path / "h.sqlite3"
    conn = sqlite3.connect(path, isolation_level=None)
    for statement in schema._statements(schema._SCHEMA):
        conn.execute(statement)
    for version in range(2, 9):  # the steps that made version 8
        schema._MIGRATIONS[version](conn)
    conn.execute("PRAGMA user_version = 8")
    _version_8_rows(conn.execute)
    conn.close()
    with HistoryStore(path) as store:
        _check_upgraded(store)
    raw = sqlite3.connect(path)
    try:
        assert raw.execute("PRAGMA user_version").fetchone()[0] == schema.SCHEMA_VERSION == 9
    finally:
        raw.close()


def test_a_version_8_postgresql_database_gains_the_served_versions_in_place(
    postgres_cluster: PostgresCluster, postgres_url: str
) -> None:
    with psycopg.connect(postgres_url) as raw:  # the set-up of a new version-8 database
        raw.execute(
            pg_schema._TABLES
            + pg_schema._TRIGGERS
            + pg_schema._APPLY
            + pg_schema._WRITERS
            + pg_schema._MESSAGES_TEXT
            + PG_TOTALS
        )
        raw.execute("CREATE TABLE history_schema (version integer NOT NULL)")
        raw.execute("INSERT INTO history_schema (version) VALUES (8)")
        _version_8_rows(raw.execute)
        raw.execute("SELECT setval(pg_get_serial_sequence('runs', 'id'), 1)")
    with open_store(postgres_url) as store:
        _check_upgraded(store)
    with psycopg.connect(postgres_url) as raw:
        assert raw.execute("SELECT version FROM history_schema").fetchall() == [(9,)]
    assert pg_schema.PG_SCHEMA_VERSION == 9
