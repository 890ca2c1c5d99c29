"""The history store's reads, as functions of a connection: messages, runs, threads, case runs.

Each reads an index in the order it returns rows and stops at its ``limit``, never sorting all
the rows of an agent first (checked with ``EXPLAIN QUERY PLAN`` in the tests). History's pages
of conversations are ``history/conversations.py``.
"""

from __future__ import annotations

from typing import Any

from mcp_export.history.schema import (
    CaseRunRecord,
    MessageStatus,
    RunRecord,
    StoredMessage,
    ThreadKind,
    ThreadRecord,
    case_run_record,
    message_record,
    run_record,
    thread_record,
)
from mcp_export.history.sql import SQLITE, Connection, Dialect, dicts

__all__ = ["case_runs", "messages", "runs", "thread", "threads"]

_MESSAGE_COUNT = "(SELECT count(*) FROM messages WHERE thread_id = threads.id) AS message_count"


def _filters(*pairs: tuple[str, Any]) -> tuple[str, list[Any]]:
    given = [(column, value) for column, value in pairs if value is not None]
    if not given:
        return "", []
    return "WHERE " + " AND ".join(f"{c} = ?" for c, _ in given), [v for _, v in given]


def messages(conn: Connection, thread_id: str) -> list[StoredMessage]:
    """The messages of a thread, in the order they were added."""
    rows = conn.execute(
        "SELECT * FROM messages WHERE thread_id = ? ORDER BY created_at, id", (thread_id,)
    )
    return [message_record(row) for row in dicts(rows)]


def runs(
    conn: Connection,
    *,
    agent_path: str | None = None,
    tool_name: str | None = None,
    status: MessageStatus | None = None,
    thread_id: str | None = None,
    limit: int = 500,
    dialect: Dialect = SQLITE,
) -> list[RunRecord]:
    """Runs, newest first, optionally only an agent's, a tool's, those with a status or those
    of a conversation.

    The runs are read newest first from the runs table (by the tool's index with a tool), each
    joined to its thread, until ``limit`` match.
    """
    filters, values = _filters(
        ("threads.agent_path", agent_path),
        ("runs.tool_name", tool_name),
        ("runs.status", status),
        ("runs.thread_id", thread_id),
    )
    # A driving join keeps runs the outer loop: SQLite would otherwise start from the agent's
    # threads and sort all their runs to find the newest.
    join = dialect.driving_join if agent_path is not None else "LEFT JOIN"
    rows = conn.execute(
        "SELECT runs.*, threads.agent_path AS agent_path, threads.agent_name AS agent_name "
        f"FROM runs {join} threads ON threads.id = runs.thread_id {filters} "
        "ORDER BY runs.id DESC LIMIT ?",
        (*values, limit),
    )
    return [run_record(row) for row in dicts(rows)]


def threads(
    conn: Connection,
    *,
    agent_path: str | None = None,
    kind: ThreadKind | None = None,
    limit: int = 500,
) -> list[ThreadRecord]:
    """Threads, most recently active first (``threads_by_activity``, ``threads_by_agent`` with
    a kind, ``threads_by_time`` for all)."""
    filters, values = _filters(("agent_path", agent_path), ("kind", kind))
    rows = conn.execute(
        f"SELECT *, {_MESSAGE_COUNT} FROM threads {filters} "
        "ORDER BY updated_at DESC, rowid DESC LIMIT ?",
        (*values, limit),
    )
    return [thread_record(row) for row in dicts(rows)]


def thread(conn: Connection, thread_id: str) -> ThreadRecord | None:
    """One thread, or None."""
    rows = conn.execute(f"SELECT *, {_MESSAGE_COUNT} FROM threads WHERE id = ?", (thread_id,))
    found = [thread_record(row) for row in dicts(rows)]
    return found[0] if found else None


def case_runs(
    conn: Connection,
    *,
    agent_path: str | None = None,
    matrix_id: str | None = None,
    thread_id: str | None = None,
    limit: int = 20000,
) -> list[CaseRunRecord]:
    """Runs of test cases, newest first, optionally one agent's, one matrix run's or the one
    whose served call is a thread."""
    filters, values = _filters(
        ("agent_path", agent_path), ("matrix_id", matrix_id), ("thread_id", thread_id)
    )
    rows = conn.execute(
        f"SELECT * FROM case_runs {filters} ORDER BY id DESC LIMIT ?", (*values, limit)
    )
    return [case_run_record(row) for row in dicts(rows)]
