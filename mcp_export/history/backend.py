"""One history database, whichever it is: what the store, the writer and the write log ask of it.

Two backends implement :class:`Database`: an SQLite file (``history/db.py``, the embedded
default) and a PostgreSQL database (``history/postgres.py``) that many served instances share.
Everything above them — the store, the reads, the pages of conversations, the background
writer — is written once against this interface and the ``?``-placeholder SQL of
``history/sql.py``.
"""

from __future__ import annotations

import time
from abc import ABC, abstractmethod
from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager, nullcontext
from pathlib import Path
from typing import Any, TypeVar

from mcp_export.history.rows import Write, merged_writes, writer_alive
from mcp_export.history.schema import INTERRUPTED
from mcp_export.history.sql import Connection, Dialect
from mcp_export.history.turns import claim_row, release_row

__all__ = ["Database"]

_T = TypeVar("_T")


class Database(ABC):
    """A history database, set up and migrated, shared by the tasks and threads of a process.

    Attributes:
        dialect: how its SQL differs (``history/sql.py``).
        location: where it is, as messages name it (a path; a URL without its password).
        path: the SQLite file, next to which write logs live; None for a server database.
        host: this machine's name, recorded with each row where many machines write (None:
            only this machine's processes write).
    """

    dialect: Dialect
    location: str
    path: Path | None = None
    host: str | None = None

    @abstractmethod
    def connection(self, what: str) -> AbstractContextManager[Connection]:
        """The connection, held alone; errors come out as ``HistoryError`` about ``what``."""

    @abstractmethod
    def transaction(self, what: str, body: Callable[[Connection], _T]) -> _T:
        """Run ``body`` in one write transaction; errors come out as ``HistoryError``."""

    @abstractmethod
    def insert_row(self, conn: Connection, table: str, values: dict[str, Any]) -> int:
        """Insert one row; returns its id (0 for a thread). A row whose given id is already
        there is left alone (a write applied a second time)."""

    @abstractmethod
    def reserve_ids(self, conn: Connection, table: str, count: int) -> Sequence[int]:
        """Reserve ``count`` row ids of ``table`` that no other writer, in any process, gets."""

    @abstractmethod
    def refused(self, exc: BaseException) -> bool:
        """Whether ``exc`` refuses one write (it names a row that is gone), not the database."""

    @abstractmethod
    def busy(self, exc: BaseException) -> bool:
        """Whether ``exc`` (a ``HistoryError`` or its cause) is worth trying again soon."""

    def gone(self, exc: BaseException) -> bool:
        """Whether ``exc`` says that a server database cannot be reached now (an outage, not a
        fault of the writes); never for a file."""
        return False

    @abstractmethod
    def close(self) -> None:
        """Close the connection (idempotent)."""

    def patience(self, seconds: float) -> AbstractContextManager[None]:
        """Inside the block, wait at most ``seconds`` for a lock that another connection holds
        (a file's; a server database decides its own waits)."""
        return nullcontext()

    def bound_cache(self, kib: int) -> None:  # noqa: B027 - a server database keeps its own
        """Keep at most ``kib`` KiB of the database's pages in this process (a file's page
        cache)."""

    def for_writer(self) -> Database:
        """The database as a background writer should use it (its own connection, or this)."""
        return self

    def writer_columns(self, pid: int, start: str | None) -> dict[str, Any]:
        """The columns that record who wrote a row: the process, and the host where it runs."""
        columns: dict[str, Any] = {"writer_pid": pid, "writer_start": start}
        if self.host is not None:
            columns["writer_host"] = self.host
        return columns

    def update_row(self, conn: Connection, table: str, row_id: int, given: dict[str, Any]) -> bool:
        """Set the ``given`` columns of one row; False when there is no such row."""
        assignments = ", ".join(f"{key} = ?" for key in given)
        cursor = conn.execute(
            f"UPDATE {table} SET {assignments} WHERE id = ?", (*given.values(), row_id)
        )
        return cursor.rowcount > 0

    def apply_write(self, conn: Connection, write: Write) -> str | None:
        """Apply one write inside the caller's transaction; the reason when it was skipped.

        A write is skipped when it names a row that is gone (its thread was deleted meanwhile):
        the failed statement alone is undone, the transaction goes on.
        """
        try:
            if write.row is None:
                self.insert_row(conn, write.table, write.values)
            elif not self.update_row(conn, write.table, write.row, write.values):
                return f"no row {write.row} in {write.table} to update"
        except Exception as exc:
            if not self.refused(exc):
                raise
            return f"{write.table}: {exc}"
        return None

    def apply_writes(self, writes: Sequence[Write]) -> list[str]:
        """Apply ``writes`` in one transaction (an update folded into the insert of its row
        when both are in ``writes``: ``rows.merged_writes``); why each one that was skipped was.

        Raises:
            HistoryError: the database cannot be written (not a fault of a write).
        """

        def body(conn: Connection) -> list[str]:
            reasons = (self.apply_write(conn, write) for write in merged_writes(writes))
            return [reason for reason in reasons if reason is not None]

        return self.transaction("write", body)

    def claim_turn(self, thread_id: str, pid: int, start: str | None) -> bool:
        """Claim the turn of a conversation for the process ``pid`` (``history/turns.py``):
        True when it holds it now (also when it held it already), False while another live
        process does.

        Here, SQLite's ``turn_claims`` row; PostgreSQL overrides it with an advisory lock.
        """
        return self.transaction(
            "claim a conversation in", lambda conn: claim_row(conn, thread_id, pid, start)
        )

    def release_turn(self, thread_id: str, pid: int, start: str | None) -> None:
        """Let go of a conversation that :meth:`claim_turn` claimed."""
        with self.connection("release a conversation in") as conn:
            release_row(conn, thread_id, pid, start)

    def mark_interrupted(self) -> int:
        """Mark ``pending`` rows whose writer is gone as ``error`` with :data:`INTERRUPTED`.

        Here, by the writer's process: only rows of this :attr:`host` where one is recorded,
        since whether a process of another machine still runs cannot be told from here.
        PostgreSQL overrides it (``history/postgres.py``): there a writer is gone when none of
        its database sessions is alive, whichever host it ran on.

        Returns:
            How many rows were marked.
        """
        host = self.host
        scope, values = ("AND writer_host = ?", (host,)) if host is not None else ("", ())
        same = self.dialect.same

        def writers(conn: Connection) -> list[tuple[int, str | None]]:
            return [
                (pid, start)
                for pid, start in conn.execute(
                    "SELECT DISTINCT writer_pid, writer_start FROM messages "
                    f"WHERE status = 'pending' {scope} UNION SELECT DISTINCT writer_pid, "
                    f"writer_start FROM runs WHERE status = 'pending' {scope}",
                    (*values, *values),
                ).fetchall()
                if not writer_alive(pid, start)
            ]

        # Read first: with no writer gone (the usual open) nothing waits for the write lock.
        with self.connection("check") as conn:
            if not writers(conn):
                return 0

        def body(conn: Connection) -> int:
            now, marked = time.time(), 0
            for pid, start in writers(conn):
                for table, stamp in (("messages", "updated_at"), ("runs", "finished_at")):
                    marked += conn.execute(
                        f"UPDATE {table} SET status = 'error', error = ?, {stamp} = ? "
                        f"WHERE status = 'pending' AND writer_pid = ? AND writer_start {same} ? "
                        f"{scope}",
                        (INTERRUPTED, now, pid, start, *values),
                    ).rowcount
            return marked

        return self.transaction("check", body)
