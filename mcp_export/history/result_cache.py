"""The cached results of tools that declare a cache, in the history database.

One table, ``result_cache``, created when first used (``CREATE TABLE IF NOT EXISTS``; no schema
version: an older file gains it the first time a cached tool is called, a newer one that has
it is read as before). The same SQL serves SQLite and PostgreSQL, so instances sharing a
PostgreSQL store share their cached answers. A row is one answer under its key (the tool's
version and its arguments, ``server/cache.py``), kept until ``expires_at``; an expired row is
never read and is deleted by the next write.
"""

from __future__ import annotations

import weakref
from dataclasses import dataclass

from mcp_export.history.backend import Database
from mcp_export.history.sql import Connection

__all__ = ["CachedAnswer", "keep_answer", "read_answer"]

_TABLE = """
CREATE TABLE IF NOT EXISTS result_cache (
    key         TEXT PRIMARY KEY,
    tool_name   TEXT NOT NULL,
    result      TEXT NOT NULL,
    thread_id   TEXT,
    stored_at   DOUBLE PRECISION NOT NULL,
    expires_at  DOUBLE PRECISION NOT NULL
)
"""
_INDEX = "CREATE INDEX IF NOT EXISTS result_cache_expiry ON result_cache (expires_at)"

_made: weakref.WeakSet[Database] = weakref.WeakSet()
"""The databases whose table this process has made sure of."""


@dataclass(frozen=True)
class CachedAnswer:
    """One kept answer: the result as JSON, when it was stored and until when it holds, and the
    history thread of the call that answered it."""

    result: str
    stored_at: float
    expires_at: float
    thread_id: str | None


def _ensure(db: Database) -> None:
    if db in _made:
        return

    def body(conn: Connection) -> None:
        conn.execute(_TABLE)
        conn.execute(_INDEX)

    try:
        db.transaction("create the result cache in", body)
    except Exception:
        # Two instances creating it at once: one of them wins; the table is there either way.
        db.transaction("create the result cache in", body)
    _made.add(db)


def read_answer(db: Database, key: str, now: float) -> CachedAnswer | None:
    """The answer kept under ``key`` that still holds at ``now``, or None."""
    _ensure(db)
    with db.connection("read the result cache in") as conn:
        row = conn.execute(
            "SELECT result, stored_at, expires_at, thread_id FROM result_cache "
            "WHERE key = ? AND expires_at > ?",
            (key, now),
        ).fetchone()
    if row is None:
        return None
    return CachedAnswer(str(row[0]), float(row[1]), float(row[2]), row[3])


def keep_answer(db: Database, key: str, tool_name: str, answer: CachedAnswer) -> None:
    """Keep ``answer`` under ``key`` (replacing what was there), and delete expired answers."""
    _ensure(db)

    def body(conn: Connection) -> None:
        conn.execute("DELETE FROM result_cache WHERE expires_at <= ?", (answer.stored_at,))
        conn.execute(
            "INSERT INTO result_cache (key, tool_name, result, thread_id, stored_at, expires_at) "
            "VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (key) DO UPDATE SET tool_name = "
            "excluded.tool_name, result = excluded.result, thread_id = excluded.thread_id, "
            "stored_at = excluded.stored_at, expires_at = excluded.expires_at",
            (
                key,
                tool_name,
                answer.result,
                answer.thread_id,
                answer.stored_at,
                answer.expires_at,
            ),
        )

    db.transaction("write the result cache in", body)
