"""The PostgreSQL backend of the history store: one database that many served instances share.

- A store location ``postgresql://user:password@host:port/dbname`` (or ``postgres://``) names
  it. The password never appears in a message: the store names the database as
  :func:`display_location` gives it, and every error text has the password taken out (and
  remembered for :func:`~mcp_export.redact.redact`, for the logs).
- One connection per database object, autocommit, guarded by a lock; a connection that broke
  or that the server ended (a restart sends a last message to its idle connections) is made
  again on the next use. A background writer gets its own
  (:meth:`PostgresDatabase.for_writer`), so reads never wait behind its commits.
- A batch of writes is one statement: its writes as one JSON array (the lines a write log would
  hold), applied by the database's ``history_apply`` (``history/pg_schema.py``) in one
  transaction, one round trip; an update of a row inserted in the same batch is folded into
  the insert first. A batch that a
  constraint refuses (a row whose thread was deleted meanwhile) is applied again a write at a
  time, each in a savepoint, so the others still land.
- Ids that a write-behind store hands out before the rows exist come from the tables' own
  identity sequences (``nextval``), which no two sessions share.
- Pending rows of writers that are gone are marked interrupted by what the database knows: a
  writer (host, pid, process start, as its rows record it) registers each connection it makes,
  before it writes on it, by the session's ``pg_backend_pid()`` and ``backend_start``; a writer
  none of whose sessions is in ``pg_stat_activity`` any more is gone, whichever machine it ran
  on (``MARK_GONE`` in ``history/pg_schema.py``). A reconnect registers the new session under
  the same writer; a row marked while a live writer had no connection is set by its real end
  when that comes. Rows written before schema 4 (no session recorded) are checked as before:
  the pid, on this host only. A store checks when it opens, and its background writer once a
  minute, whether writes come or not (``history/outage.py``): a served call pays nothing for it.
"""

from __future__ import annotations

import contextlib
import os
import select
import socket
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from functools import lru_cache
from typing import Any, TypeVar
from urllib.parse import urlsplit

import psycopg
from psycopg import errors
from psycopg.conninfo import conninfo_to_dict

from mcp_export.errors import HistoryError
from mcp_export.history.backend import Database
from mcp_export.history.pg_schema import MARK_GONE, REGISTER_SESSION, migrate
from mcp_export.history.rows import (
    ROW_ID_TABLES,
    Write,
    merged_writes,
    process_start_marker,
    writer_alive,
)
from mcp_export.history.schema import INTERRUPTED
from mcp_export.history.sql import POSTGRESQL, Connection, Cursor
from mcp_export.history.turns import PG_CLAIM, PG_RELEASE
from mcp_export.redact import REDACTED, remember_secret

__all__ = ["PostgresDatabase", "display_location", "is_postgres_location"]

_T = TypeVar("_T")
_CONNECT_TIMEOUT_S = 10
_SCHEMES = ("postgresql://", "postgres://")


def is_postgres_location(location: str) -> bool:
    """Whether a store location names a PostgreSQL database."""
    return location.lower().startswith(_SCHEMES)


def display_location(url: str) -> str:
    """``postgresql://user@host:port/dbname``: the URL as messages show it (no password, no
    options)."""
    try:
        found = conninfo_to_dict(url)
    except psycopg.Error:
        parts = urlsplit(url)
        host = parts.hostname or "localhost"
        return f"postgresql://{host}{parts.path}"
    user = f"{found['user']}@" if found.get("user") else ""
    port = f":{found['port']}" if found.get("port") else ""
    host = str(found.get("host") or found.get("hostaddr") or "localhost")
    return f"postgresql://{user}{host}{port}/{found.get('dbname') or ''}"


@lru_cache(maxsize=256)
def _placeholders(sql: str) -> str:
    """The history's ``?`` SQL in psycopg's ``%s`` style."""
    return sql.replace("%", "%%").replace("?", "%s")


class _PgConnection:
    """A psycopg connection that takes the history's ``?`` placeholders (``sql.Connection``)."""

    def __init__(self, raw: psycopg.Connection[Any]) -> None:
        self.raw = raw

    def execute(self, sql: str, parameters: Sequence[Any] = (), /) -> Cursor:
        if not parameters:  # a whole script may be one statement list without parameters
            return self.raw.execute(sql)
        return self.raw.execute(_placeholders(sql), parameters)

    def savepoint(self) -> contextlib.AbstractContextManager[Any]:
        """A savepoint inside the transaction: a statement that fails is undone alone."""
        return self.raw.transaction()


class PostgresDatabase(Database):
    """A connection to a PostgreSQL history database, set up and migrated, shared under a lock.

    Args:
        url: ``postgresql://…`` (libpq's URL: user, password, host, port, database, options).
        set_up: create or check the schema (False for a second connection of the same store).

    Raises:
        HistoryError: the database cannot be reached or used, or has a newer schema; the
            message names the host and database (never the password) and what to do.
    """

    dialect = POSTGRESQL

    def __init__(self, url: str, *, set_up: bool = True) -> None:
        self._url = url
        self.location = display_location(url)
        self.host = socket.gethostname()
        self._password = (
            urlsplit(url).password or _option(url, "password") or os.environ.get("PGPASSWORD")
        )
        remember_secret(self._password)
        self._lock = threading.Lock()
        self._closed = False
        self._conn: psycopg.Connection[Any] | None = None
        pid = os.getpid()
        self._writer = (self.host, pid, process_start_marker(pid))
        self._registering = not set_up  # once the schema is known to have history_writers
        with self._lock:
            self._connect()
        if set_up:
            try:
                self.transaction("set up", self._set_up)
            except HistoryError:
                self.close()
                raise
            self._registering = True

    def _set_up(self, conn: Connection) -> None:
        migrate(conn, self.location)
        conn.execute(REGISTER_SESSION, self._writer)

    def _connect(self) -> psycopg.Connection[Any]:
        """A new connection, its session registered as this writer's (once set up)."""
        try:
            conn = psycopg.connect(
                self._url,
                autocommit=True,
                connect_timeout=_CONNECT_TIMEOUT_S,
                application_name=f"metaagent-{os.getpid()}",
            )
        except psycopg.Error as exc:
            raise self.error("connect to", exc) from None  # its text may hold the URL
        if self._registering:
            try:
                conn.execute(_placeholders(REGISTER_SESSION), self._writer)
            except psycopg.Error as exc:
                conn.close()
                raise self.error("register a session with", exc) from exc
        self._conn = conn
        return conn

    def for_writer(self) -> PostgresDatabase:
        """The same database on a connection of its own."""
        return PostgresDatabase(self._url, set_up=False)

    def error(self, what: str, exc: BaseException) -> HistoryError:
        """A ``HistoryError`` saying that ``what`` failed on this database, and what to do."""
        text = " ".join(str(exc).split())
        if self._password:
            text = text.replace(self._password, REDACTED)
        lowered = text.lower()
        if "password" in lowered or "authentication" in lowered or "pg_hba" in lowered:
            hint = "check the user name and password of the store URL (or PGPASSWORD, ~/.pgpass)"
        elif "does not exist" in lowered and "database" in lowered:
            hint = "create the database (createdb) or name one that exists in the store URL"
        elif any(
            word in lowered
            for word in ("refused", "translate host", "timeout", "no route", "unreachable")
        ):
            hint = "check that PostgreSQL runs there and that the host and port are right"
        elif "permission denied" in lowered:
            hint = "grant the store's user the right to create and write tables in it"
        else:
            hint = "check the store URL and the database's log"
        return HistoryError(f"cannot {what} the history database {self.location}: {text}; {hint}")

    @contextmanager
    def connection(self, what: str) -> Iterator[_PgConnection]:
        """The connection, held alone (made again if it broke); errors as ``HistoryError``."""
        with self._lock:
            if self._closed:
                raise HistoryError(f"the history store {self.location} is closed")
            conn = self._conn
            if conn is None or not _usable(conn):
                conn = self._connect()
            try:
                yield _PgConnection(conn)
            except psycopg.Error as exc:
                raise self.error(what, exc) from exc

    def transaction(self, what: str, body: Callable[[Connection], _T]) -> _T:
        """Run ``body`` in one transaction."""
        with self.connection(what) as conn, conn.raw.transaction():
            return body(conn)

    def insert_row(self, conn: Connection, table: str, values: dict[str, Any]) -> int:
        """Insert one row; returns its id (0 for a thread)."""
        columns, marks = ", ".join(values), ", ".join("?" * len(values))
        if "id" in values:  # ids given: nothing to read back, nothing to wait for in a pipeline
            conn.execute(
                f"INSERT INTO {table} ({columns}) VALUES ({marks}) ON CONFLICT (id) DO NOTHING",
                tuple(values.values()),
            )
            return int(values["id"]) if table in ROW_ID_TABLES else 0
        cursor = conn.execute(
            f"INSERT INTO {table} ({columns}) VALUES ({marks}) RETURNING id",
            tuple(values.values()),
        )
        return int(cursor.fetchone()[0]) if table in ROW_ID_TABLES else 0

    def reserve_ids(self, conn: Connection, table: str, count: int) -> list[int]:
        """``count`` ids from the table's identity sequence."""
        rows = conn.execute(
            "SELECT nextval(pg_get_serial_sequence(?, 'id')) FROM generate_series(1, ?)",
            (table, count),
        )
        return [int(row[0]) for row in rows]

    def refused(self, exc: BaseException) -> bool:
        """A constraint refused the write (its thread is gone)."""
        return isinstance(exc, errors.IntegrityError)

    def busy(self, exc: BaseException) -> bool:
        """A deadlock or serialization failure, or a connection that broke: worth a retry."""
        cause = exc.__cause__ if isinstance(exc, HistoryError) else exc
        if isinstance(exc, HistoryError) and cause is None:
            # The server went away and is not back yet (see _connect: no cause, for the URL).
            return str(exc).startswith("cannot connect to ")
        return isinstance(
            cause, errors.DeadlockDetected | errors.SerializationFailure | psycopg.OperationalError
        )

    def gone(self, exc: BaseException) -> bool:
        """The server cannot be reached, or the connection broke (not a deadlock or a
        serialization failure, which a retry gets past at once)."""
        cause = exc.__cause__ if isinstance(exc, HistoryError) else exc
        if isinstance(exc, HistoryError) and cause is None:
            return str(exc).startswith("cannot connect to ")
        return isinstance(cause, psycopg.OperationalError) and not isinstance(
            cause, errors.DeadlockDetected | errors.SerializationFailure
        )

    def apply_write(self, conn: Connection, write: Write) -> str | None:
        """Apply one write in a savepoint of the caller's transaction (see the module doc)."""
        assert isinstance(conn, _PgConnection)
        try:
            with conn.savepoint():
                if write.row is None:
                    self.insert_row(conn, write.table, write.values)
                elif not self.update_row(conn, write.table, write.row, write.values):
                    return f"no row {write.row} in {write.table} to update"
        except errors.IntegrityError as exc:
            return f"{write.table}: {exc}"
        return None

    def apply_writes(self, writes: Sequence[Write]) -> list[str]:
        """Apply ``writes`` in one statement (see the module doc)."""
        batch = b"[" + b",".join(write.line() for write in merged_writes(writes)) + b"]"
        try:
            with self.connection("write") as conn:
                found = conn.execute("SELECT history_apply(?::jsonb)", (batch.decode(),))
                skipped: list[str] = found.fetchone()[0]
                return skipped
        except HistoryError as exc:
            if not self.refused(exc.__cause__ or exc):
                raise
        return super().apply_writes(writes)

    def claim_turn(self, thread_id: str, pid: int, start: str | None) -> bool:
        """Claim a conversation with an advisory lock of this connection's session, which the
        database lets go when the session ends (``history/turns.py``)."""
        with self.connection("claim a conversation in") as conn:
            return bool(conn.execute(PG_CLAIM, (thread_id,)).fetchone()[0])

    def release_turn(self, thread_id: str, pid: int, start: str | None) -> None:
        """Let the advisory lock of a conversation go (gone already with a session that ended)."""
        with self.connection("release a conversation in") as conn:
            conn.execute(PG_RELEASE, (thread_id,)).fetchone()

    def mark_interrupted(self) -> int:
        """Mark ``pending`` rows whose writer is gone as ``error`` with :data:`INTERRUPTED`
        (see the module doc): one statement, unless rows from before schema 4 wait for a
        writer of this host that has ended.

        Returns:
            How many rows were marked.
        """
        now = time.time()
        with self.connection("check") as conn:
            marked, unregistered = conn.execute(
                MARK_GONE, (INTERRUPTED, now, INTERRUPTED, now, self.host, self.host)
            ).fetchone()
        ended = [(pid, start) for pid, start in unregistered if not writer_alive(pid, start)]
        if not ended:
            return int(marked)

        def body(conn: Connection) -> int:
            count = 0
            for pid, start in ended:
                for table, stamp in (("messages", "updated_at"), ("runs", "finished_at")):
                    count += conn.execute(
                        f"UPDATE {table} SET status = 'error', error = ?, {stamp} = ? "
                        "WHERE status = 'pending' AND writer_host = ? AND writer_pid = ? "
                        "AND writer_start IS NOT DISTINCT FROM ?",
                        (INTERRUPTED, now, self.host, pid, start),
                    ).rowcount
            return count

        return int(marked) + self.transaction("check", body)

    def close(self) -> None:
        """Close the connection (idempotent)."""
        with self._lock:
            self._closed = True
            conn, self._conn = self._conn, None
        if conn is not None:
            conn.close()


def _usable(conn: psycopg.Connection[Any]) -> bool:
    """Whether an idle connection can still be used: open, and nothing waiting on its socket.

    An idle connection in autocommit has nothing to read unless the server ended it (a restart
    or a shutdown sends a last message, then closes): it is made again at once instead of
    failing the next statement.
    """
    if conn.broken or conn.closed:
        return False
    try:
        readable, _, _ = select.select([conn.fileno()], [], [], 0)
    except (OSError, ValueError, psycopg.Error):
        return False
    if readable:
        with contextlib.suppress(psycopg.Error):
            conn.close()
        return False
    return True


def _option(url: str, name: str) -> str | None:
    """A libpq option of ``url`` (``?password=…``), if it has it."""
    with contextlib.suppress(psycopg.Error):
        value = conninfo_to_dict(url).get(name)
        return str(value) if value is not None else None
    return None
