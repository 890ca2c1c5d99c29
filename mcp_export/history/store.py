"""The history store: every chat and every served call, in one database.

Where: an SQLite file by default (``default_history_path``, the embedded store of one person),
or a PostgreSQL database that many served instances share (:func:`open_store` with a
``postgresql://`` location): the backends are ``history/db.py`` and ``history/postgres.py``
behind one interface (``history/backend.py``), chosen by the location (``history/locations.py``).
:class:`HistoryStore` holds the database and the writer; its records are written by
``history/store_writes.py`` and read by ``history/store_reads.py``. The tables and records are in
``history/schema.py`` (PostgreSQL's spelling in ``history/pg_schema.py``); every row is written,
and its text redacted, by ``history/rows.py``; pages of an agent's conversations are read by
``history/conversations.py``; what the figures of an answer and of a conversation count is
``history/figures.py``.

Why it is built this way:

- Two processes may write at once (the studio, a served server; many servers on a shared
  database): each backend's connection and settings are in its module.
- A served server opens its store with ``write_behind=True``: each write goes to a log file and a
  queue, and a background thread applies the queue, a batch per transaction
  (``history/writer.py``), so dozens of concurrent calls do not each wait for their commits on
  the event loop. Reads wait for the queue first. What a process logged and could not apply
  before it ended (a crash, ``kill -9``, a close with a backlog) is applied by the next store that
  opens the database (``history/write_log.py``).
- A crash leaves ``pending`` rows behind. Each row records its writer (pid and, where the system
  tells, the process start time; the host in a shared database); opening the store marks pending
  rows of writers that are gone as ``error`` with :data:`INTERRUPTED`, so the trail never claims
  an answer is still coming. In an SQLite file, a writer is gone when its process has ended; in
  PostgreSQL, when none of its database sessions is alive any more, whichever host it ran on
  (``history/postgres.py``), and a write-behind store's writer checks that again once a minute
  while it runs (``history/outage.py``).
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from types import TracebackType
from typing import Any

from mcp_export.errors import HistoryError
from mcp_export.history.locations import default_history_path, open_database
from mcp_export.history.result_cache import CachedAnswer, keep_answer, read_answer
from mcp_export.history.rows import new_write, process_start_marker, writer_alive
from mcp_export.history.schema import (
    INTERRUPTED,
    SCHEMA_VERSION,
    MessageStatus,
    RunRecord,
    StoredMessage,
    ThreadKind,
    ThreadRecord,
    agent_key,
)
from mcp_export.history.store_reads import StoreReads
from mcp_export.history.store_writes import StoreWrites
from mcp_export.history.turns import PROCESS_CLAIMS
from mcp_export.history.write_log import Replayed, replay_logs
from mcp_export.history.writer import WriteBehind

__all__ = [
    "INTERRUPTED",
    "SCHEMA_VERSION",
    "HistoryStore",
    "MessageStatus",
    "RunRecord",
    "StoredMessage",
    "ThreadKind",
    "ThreadRecord",
    "agent_key",
    "default_history_path",
    "open_store",
    "process_start_marker",
    "writer_alive",
]


_OPEN_PATIENCE = 0.2
"""Seconds a write-behind store waits at its open for a file another process keeps locked,
before it leaves the writes that need the lock to its writer (the first call of ``serve`` waits
for the open)."""


_BEHIND_CACHE_KIB = 512
"""The page cache of a served store's file: its writer appends at the tail of each table and
index, and its reads are a conversation's few rows; SQLite's default (2 MiB) is resident memory
that a long-running server fills and keeps for nothing (``bench/server_memory.py``)."""


def open_store(location: str | Path | None = None, *, write_behind: bool = False) -> HistoryStore:
    """The history store at ``location``.

    Args:
        location: None for the default SQLite file (``default_history_path``); a path or
            ``sqlite:///path`` for an SQLite file; ``postgresql://…`` (or ``postgres://…``) for
            a PostgreSQL database, e.g. ``postgresql://user:password@host:5432/dbname``.
        write_behind: see :class:`HistoryStore`.

    Raises:
        HistoryError: the store cannot be opened; the message says where (a database URL
            without its password) and what to do.
    """
    return HistoryStore(location, write_behind=write_behind)


class HistoryStore(StoreReads, StoreWrites):
    """The history database (threads, messages, runs); safe across tasks, threads and processes.

    Args:
        path: The database: a file (default ``default_history_path()``; its directory is
            created), or a location as :func:`open_store` takes it.
        write_behind: Log and queue writes for a background thread (see ``WriteBehind``): the
            write methods return at once with the ids of the rows they insert; when the database
            refuses a write, that is logged once and the later writes stay in the write log for
            the next open, instead of raising.

    Attributes:
        replayed: What this open applied from the write logs of processes that ended before
            their writes were in the database (``applied``, and why any were ``skipped``).
        stale_marked: How many ``pending`` rows of ended processes this open marked as
            interrupted.

        path: The SQLite file (None for a database on a server).
        location: Where the database is, as messages name it (a URL without its password).

    Raises:
        HistoryError: The database cannot be opened or is not a history database of a version
            this code knows; the message names where it is and what to do.
    """

    def __init__(self, path: Path | str | None = None, *, write_behind: bool = False) -> None:
        self._db = open_database(path)
        self.path: Path | None = self._db.path
        self.location = self._db.location
        self._pid = os.getpid()
        self._start = process_start_marker(self._pid)
        self._writer = self._db.writer_columns(self._pid, self._start)
        self._behind: WriteBehind | None = None
        self._kept_versions: set[str] = set()
        # The database as this process's claims name it (one file, however it was spelt).
        self._claims_key = str(self.path.resolve()) if self.path is not None else self.location
        self.replayed = Replayed()
        self.stale_marked = 0
        try:
            if write_behind:
                self._open_behind()
            else:
                self._catch_up()
        except HistoryError:
            self._db.close()
            raise

    def _catch_up(self) -> None:
        # Logged writes of ended processes first: a run they finished is then not marked.
        replayed = replay_logs(self._db, self._pid, self._start)
        self.replayed.applied += replayed.applied
        self.replayed.skipped += replayed.skipped
        self.replayed.left = replayed.left
        self.stale_marked += self._db.mark_interrupted()

    def _open_behind(self) -> None:
        """Open the writer; a file that another process keeps locked now is written as later
        in the session: the writes wait in the log and the queue, with provisional row ids
        (``history/row_ids.py``), and the writer catches up on the logs of ended processes and
        their pending rows once it can write."""
        self._db.bound_cache(_BEHIND_CACHE_KIB)
        later = False
        with self._db.patience(_OPEN_PATIENCE):
            try:
                self._catch_up()
                later = self.replayed.left > 0
            except HistoryError as exc:
                if self._db.path is None or not self._db.busy(exc):
                    raise  # a server database that cannot be reached is refused at the open
                later = True
            self._behind = WriteBehind(
                self._db, self._pid, self._start, catch_up=self._catch_up if later else None
            )

    @property
    def shared(self) -> bool:
        """Whether other machines use this database too (a server's, not a file)."""
        return self._db.host is not None

    def _insert(self, table: str, **values: Any) -> int:
        """Insert one row stamped with this process as its writer; returns its id.

        The id of a ``messages`` or ``runs`` row; 0 for a thread (its id is the caller's).
        """
        values |= self._writer
        if self._behind is not None:
            return self._behind.insert(table, values)
        write = new_write(table, values)
        with self._db.connection("write") as conn:
            return self._db.insert_row(conn, write.table, write.values)

    def _update(self, table: str, row_id: int, changes: dict[str, Any]) -> None:
        given = {key: value for key, value in changes.items() if value is not None}
        if self._behind is not None:
            self._behind.update(table, row_id, given)
            return
        write = new_write(table, given, row_id)
        with self._db.connection("write") as conn:
            if not self._db.update_row(conn, table, row_id, write.values):
                raise HistoryError(f"no row {row_id} in {table} of {self.location}")

    def cached_answer(self, key: str, now: float) -> CachedAnswer | None:
        """The answer the result cache keeps under ``key`` that still holds at ``now``
        (``history/result_cache.py``)."""
        return read_answer(self._db, key, now)

    def keep_answer(self, key: str, tool_name: str, answer: CachedAnswer) -> None:
        """Keep ``answer`` in the result cache under ``key``."""
        keep_answer(self._db, key, tool_name, answer)

    def flush(self) -> None:
        """Wait until every queued write is in the database (at once without write-behind).

        Raises:
            HistoryError: the background writer did not catch up within 10 s.
        """
        if self._behind is not None:
            self._behind.flush()

    def ping(self) -> None:
        """Check that the database answers now (a round trip to a server's database).

        Raises:
            HistoryError: it does not; the message says where it is and what to do.
        """
        with self._db.connection("reach") as conn:
            conn.execute("SELECT 1").fetchone()

    @property
    def unreachable(self) -> str | None:
        """Why a server database cannot be reached now, as its writer last found, or None.

        The writes made meanwhile wait in the queue and are applied once it is back.
        """
        return self._behind.unreachable if self._behind is not None else None

    def backlog_full(self) -> bool:
        """Whether the database is away and the writes waiting for it fill the room kept for
        them: a new call is then better left unrecorded (``history/writer.py``)."""
        return self._behind is not None and self._behind.full()

    def on_settled(self, callback: Callable[[], None]) -> bool:
        """Call ``callback`` once every write made so far is in the database.

        It is called on the background writer's thread (hand it over to an event loop with
        ``call_soon_threadsafe``), also when the writer stops applying, closes or loses the
        database first.

        Returns:
            False when the writes already are in the database (without write-behind, always),
            or when the database cannot be reached now: the callback is not called.
        """
        return self._behind is not None and self._behind.on_applied(callback)

    def claim_turn(self, thread_id: str) -> bool:
        """Claim the turn of a conversation (``history/turns.py``); one try, no waiting.

        Blocking (a round trip to a server's database): call it from a worker thread.

        Returns:
            True when this store holds it now; False while another turn does, in this process
            or in any other that shares the database.

        Raises:
            HistoryError: the database cannot be reached or written.
        """
        if not PROCESS_CLAIMS.take(self._claims_key, thread_id):
            return False
        try:
            if self._db.claim_turn(thread_id, self._pid, self._start):
                return True
        except BaseException:
            PROCESS_CLAIMS.drop(self._claims_key, thread_id)
            raise
        PROCESS_CLAIMS.drop(self._claims_key, thread_id)
        return False

    def release_turn(self, thread_id: str) -> None:
        """Let go of a conversation :meth:`claim_turn` claimed (blocking, as the claim).

        Raises:
            HistoryError: the database cannot be reached; the claim ends with the process (in
                PostgreSQL, with its session).
        """
        try:
            self._db.release_turn(thread_id, self._pid, self._start)
        finally:
            PROCESS_CLAIMS.drop(self._claims_key, thread_id)

    def delete_thread(self, thread_id: str) -> None:
        """Delete a thread and its messages (its runs stay, detached)."""
        self.flush()
        with self._db.connection("write") as conn:
            conn.execute("DELETE FROM threads WHERE id = ?", (thread_id,))

    def close(self) -> None:
        """Apply the queued writes, then close the database (idempotent).

        With write-behind, the queue is applied for up to 5 s; what is left then stays in the
        write log, which the next store to open the database applies (a warning says where).
        """
        behind, self._behind = self._behind, None
        if behind is not None:
            behind.close()
        self._db.close()

    def __enter__(self) -> HistoryStore:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc_val: BaseException | None,
        exc_tb: TracebackType | None,
    ) -> None:
        self.close()
