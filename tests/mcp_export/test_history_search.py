"""History's filter finds what was said and marks the runs of test cases, on a real SQLite file
and a real PostgreSQL (``store_location``): a follow-up or an answer matches the text filter as
the title does; a case run's conversation carries its case, model and matrix run, and the filter
lists only those or none of them; the schema reaches version 5 from version 4 in place.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

import psycopg

from mcp_export.history import schema
from mcp_export.history.conversations import ConversationFilter
from mcp_export.history.pg_schema import PG_SCHEMA_VERSION
from mcp_export.history.schema import CaseMark, agent_key
from mcp_export.history.store import HistoryStore, open_store
from tests.fakes.postgres import PostgresCluster

pytest_plugins = ["tests.fakes.postgres"]

AGENT = "/agents/travel.agent.yaml"
ALL = ConversationFilter(agent_key=agent_key(AGENT))


def _served(store: HistoryStore, prompt: str, answer: str, *, caller: str = "Claude") -> str:
    thread, run = store.start_call(
        thread_id=None,
        agent_path=AGENT,
        agent_name="Travel",
        title=f"meeting_time: {prompt}",
        kind="served",
        tool_name="meeting_time",
        arguments={"city": prompt},
        filled_prompt=prompt,
        caller=caller,
    )
    store.add_message(thread, "user", prompt)
    store.add_message(thread, "assistant", answer)
    store.finish_run(run, answer=answer, duration_ms=5.0, tokens_in=1, tokens_out=1)
    return thread


def _titles(store: HistoryStore, query: ConversationFilter) -> list[str]:
    return [r.thread.title for r in store.conversations(query).rows]


def test_a_follow_up_and_an_answer_are_found_by_the_text_filter(store_location: str) -> None:
    with HistoryStore(store_location) as store:
        paris = _served(store, "Lunch in Paris", "Noon suits Paris.")
        _served(store, "Dinner in Oslo", "Seven in Oslo, with the ferry schedule.")
        store.add_message(paris, "user", "And what about Tokyo?")
        store.add_message(paris, "assistant", "Tokyo is 8 hours ahead.")
        assert _titles(store, ConversationFilter(ALL.agent_key, text="tokyo")) == [
            "meeting_time: Lunch in Paris"
        ]
        assert _titles(store, ConversationFilter(ALL.agent_key, text="FERRY SCHED")) == [
            "meeting_time: Dinner in Oslo"
        ]
        # Beyond ASCII: the dialect's folded comparison, in messages too.
        store.add_message(paris, "user", "Und München?")
        assert _titles(store, ConversationFilter(ALL.agent_key, text="MÜNCHEN")) == [
            "meeting_time: Lunch in Paris"
        ]
        # A LIKE pattern's characters are the text searched for.
        assert _titles(store, ConversationFilter(ALL.agent_key, text="100%")) == []
        # Shorter than the index's trigrams: each thread's messages are read.
        assert _titles(store, ConversationFilter(ALL.agent_key, text="ky")) == [
            "meeting_time: Lunch in Paris"
        ]
        # An answer written while it streams, then completed: the index follows the change.
        pending = store.add_message(paris, "assistant", "", status="pending")
        store.update_message(pending, content="Kyoto is near.", status="complete")
        assert _titles(store, ConversationFilter(ALL.agent_key, text="kyoto")) == [
            "meeting_time: Lunch in Paris"
        ]
        store.delete_thread(paris)
        assert _titles(store, ConversationFilter(ALL.agent_key, text="kyoto")) == []


def test_the_messages_have_a_full_text_index_in_both_stores(store_location: str) -> None:
    with HistoryStore(store_location) as store:
        _served(store, "Tokyo", "Evening.")
        with store._db.connection("read") as conn:
            if store_location.startswith("postgresql"):
                found = conn.execute(
                    "SELECT indexdef FROM pg_indexes WHERE indexname = 'messages_by_text' "
                    "AND schemaname = current_schema()"
                ).fetchone()
                assert "gin_trgm_ops" in found[0]
                plan = conn.execute(
                    "EXPLAIN SELECT 1 FROM messages WHERE content ILIKE '%tokyo%'"
                ).fetchall()
            else:
                plan = conn.execute(
                    "SELECT rowid FROM messages_text WHERE messages_text MATCH '\"oky\"'"
                ).fetchall()
        assert plan


def test_a_case_run_carries_its_case_model_and_matrix_and_can_be_listed_apart(
    store_location: str,
) -> None:
    with HistoryStore(store_location) as store:
        _served(store, "By hand", "An interactive answer.")
        for model in ("openai:gpt-4o-mini", "ollama:llama3"):
            thread = _served(store, "Tokyo", "Evening.", caller="metaagent test")
            store.add_case_run(
                matrix_id="m1",
                agent_path=agent_key(AGENT),
                agent_name="Travel",
                tool_name="meeting_time",
                case_name="evening-in-tokyo",
                model=model,
                attempt=1,
                passed=True,
                failures=[],
                answer="Evening.",
                is_error=False,
                duration_ms=5.0,
                tokens_in=1,
                tokens_out=1,
                turns=1,
                verdict=None,
                thread_id=thread,
            )
        rows = store.conversations(ALL).rows
        assert [r.case for r in rows] == [
            CaseMark("evening-in-tokyo", "ollama:llama3", "m1"),
            CaseMark("evening-in-tokyo", "openai:gpt-4o-mini", "m1"),
            None,
        ]
        without = ConversationFilter(ALL.agent_key, case_runs=False)
        assert _titles(store, without) == ["meeting_time: By hand"]
        only = ConversationFilter(ALL.agent_key, case_runs=True)
        assert len(_titles(store, only)) == 2
        # The case and the model are found by the text filter, and order by the Case column.
        assert len(_titles(store, ConversationFilter(ALL.agent_key, text="llama3"))) == 1
        ordered = store.conversations(ALL, order="case", descending=False).rows
        assert [r.case.model if r.case else None for r in ordered] == [
            None,
            "ollama:llama3",
            "openai:gpt-4o-mini",
        ]
        (linked, *_) = store.case_runs(matrix_id="m1")
        assert linked.thread_id is not None


def test_a_version_4_sqlite_database_gains_the_case_threads_in_place(tmp_path: Path) -> None:
    path = tmp_path / "h.sqlite3"
    conn = sqlite3.connect(path, isolation_level=None)
    for statement in schema._statements(schema._SCHEMA + schema._CASE_RUNS):
        conn.execute(statement)
    schema._summaries(conn)
    for statement in schema._statements(schema._TURN_CLAIMS):
        conn.execute(statement)
    conn.execute("PRAGMA user_version = 4")
    conn.execute(
        "INSERT INTO case_runs (matrix_id, agent_name, tool_name, case_name, model, attempt, "
        "passed, failures, created_at, writer_pid) "
        "VALUES ('m', 'Travel', 'book_flight', 'c', 'x:y', 1, 1, '[]', 300.0, 1)"
    )
    conn.close()
    with HistoryStore(path) as store:
        (old,) = store.case_runs()
        assert old.thread_id is None
        thread = _served(store, "Tokyo", "Evening.")
        store.flush()
        with sqlite3.connect(path) as raw_link:  # the old row named by its conversation
            raw_link.execute("UPDATE case_runs SET thread_id = ? WHERE id = ?", (thread, old.id))
        raw_link.close()
        (row,) = store.conversations(ALL).rows
        assert row.case == CaseMark("c", "x:y", "m")
    raw = sqlite3.connect(path)
    try:
        assert raw.execute("PRAGMA user_version").fetchone()[0] == schema.SCHEMA_VERSION == 9
    finally:
        raw.close()


def test_a_version_4_postgresql_database_gains_the_case_threads_in_place(
    postgres_cluster: PostgresCluster, postgres_url: str
) -> None:
    with open_store(postgres_url) as store:
        thread = _served(store, "Tokyo", "Evening.")
    with psycopg.connect(postgres_url) as raw:  # the schema as version 4 left it
        raw.execute("DROP INDEX case_runs_by_thread")
        raw.execute("ALTER TABLE case_runs DROP COLUMN thread_id")
        raw.execute("ALTER TABLE case_runs DROP COLUMN caller")
        raw.execute("UPDATE history_schema SET version = 4")
        raw.execute(
            "INSERT INTO case_runs (matrix_id, agent_name, tool_name, case_name, model, "
            "attempt, passed, failures, created_at, writer_pid) "
            "VALUES ('m', 'Travel', 'meeting_time', 'c', 'x:y', 1, 1, '[]', 300.0, 1)"
        )
    with open_store(postgres_url) as store:
        (old,) = store.case_runs()
        with psycopg.connect(postgres_url) as raw_link:  # the old row named by its conversation
            raw_link.execute("UPDATE case_runs SET thread_id = %s WHERE id = %s", (thread, old.id))
        (row,) = store.conversations(ALL).rows
        assert row.case == CaseMark("c", "x:y", "m")
    with psycopg.connect(postgres_url) as raw:
        assert raw.execute("SELECT version FROM history_schema").fetchall() == [(9,)]
    assert PG_SCHEMA_VERSION == 9
