"""One turn at a time per conversation, across every process and machine that shares a store.

A served call that continues a conversation claims it for the time of its turn (reading the
conversation, asking the model, writing the answer); a second turn of the same conversation
finds it claimed and waits, or is refused (``server/turns.py``). Without that, two turns sent at
once would each read the conversation without the other and fork it silently.

- **SQLite** (the processes of one machine): a row of ``turn_claims`` per claimed conversation,
  naming the process that holds it (pid and start marker, as the history's rows do). A claim
  whose process has ended (a crash, ``kill -9``) is taken over at once.
- **PostgreSQL** (many machines): a session-level advisory lock on the conversation's id, held on
  the store's connection. The database lets it go when that session ends, whichever way the
  instance died, so a claim never outlives its holder. The lock's key is a 32-bit hash of the id:
  two conversations whose hashes meet (one pair in about four billion) wait for each other. A
  connection that breaks mid-turn and is made again has lost its locks: that turn then runs
  unclaimed to its end.

Within one process both are re-entrant, so the turns of one process are told apart here, in
:data:`PROCESS_CLAIMS`, whichever of its stores claims them.
"""

from __future__ import annotations

import threading
import time

from mcp_export.history.rows import writer_alive
from mcp_export.history.sql import Connection

__all__ = ["PG_CLAIM", "PG_RELEASE", "PROCESS_CLAIMS", "ProcessClaims", "claim_row", "release_row"]

_TURNS = 0x7475726E  # the advisory locks' first key ("turn"); the second is the id's hash

PG_CLAIM = f"SELECT pg_try_advisory_lock({_TURNS}, hashtext(?))"
"""Claim a conversation (its id) on PostgreSQL; true when this database connection holds it now."""
PG_RELEASE = f"SELECT pg_advisory_unlock({_TURNS}, hashtext(?))"
"""Let a conversation's claim go on PostgreSQL."""


class ProcessClaims:
    """The conversations whose turn runs in this process, by database (thread-safe)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._held: set[tuple[str, str]] = set()

    def take(self, database: str, thread_id: str) -> bool:
        """Hold ``thread_id`` of ``database`` in this process; False when it is held already."""
        with self._lock:
            if (database, thread_id) in self._held:
                return False
            self._held.add((database, thread_id))
            return True

    def drop(self, database: str, thread_id: str) -> None:
        """Let it go (nothing happens when it was not held)."""
        with self._lock:
            self._held.discard((database, thread_id))


PROCESS_CLAIMS = ProcessClaims()
"""This process's claims, shared by all its stores."""


def claim_row(conn: Connection, thread_id: str, pid: int, start: str | None) -> bool:
    """Claim a conversation in SQLite's ``turn_claims`` (inside the caller's write transaction).

    Returns:
        True when the process ``pid`` (started at ``start``) holds it now: nobody held it, its
        holder has ended, or it is this process (whose turns the store tells apart); False
        while another live process holds it.
    """
    held = conn.execute(
        "SELECT writer_pid, writer_start FROM turn_claims WHERE thread_id = ?", (thread_id,)
    ).fetchone()
    if (
        held is not None
        and (int(held[0]), held[1]) != (pid, start)
        and writer_alive(int(held[0]), held[1])
    ):
        return False
    conn.execute(
        "INSERT OR REPLACE INTO turn_claims (thread_id, claimed_at, writer_pid, writer_start) "
        "VALUES (?, ?, ?, ?)",
        (thread_id, time.time(), pid, start),
    )
    return True


def release_row(conn: Connection, thread_id: str, pid: int, start: str | None) -> None:
    """Let go of a conversation this process claimed in SQLite (none: nothing happens)."""
    conn.execute(
        "DELETE FROM turn_claims WHERE thread_id = ? AND writer_pid = ? AND writer_start IS ?",
        (thread_id, pid, start),
    )
