"""The SQLite backend of the history store: how its file is opened, shared, and its errors read.

- The studio and a served server may write at the same time, from two processes: WAL journal
  (readers never block the writer), ``busy_timeout`` 5 s (a writer waits for the other instead of
  failing), every write one autocommitted statement or one ``BEGIN IMMEDIATE`` transaction.
- ``synchronous=NORMAL``: in WAL mode a commit then costs no fsync, so a write takes well under a
  millisecond and can run inline on the event loop. A power cut may lose the last commits, never
  corrupt the file; for a history that is the right trade.
- One connection per store, guarded by a lock, so tasks and threads of one process can share it.
"""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from functools import lru_cache
from pathlib import Path
from typing import Any, TypeVar

from mcp_export.errors import HistoryError
from mcp_export.history.backend import Database
from mcp_export.history.rows import ROW_ID_TABLES
from mcp_export.history.schema import SCHEMA_VERSION, migrate
from mcp_export.history.sql import SQLITE

__all__ = ["HistoryDatabase", "install_functions"]

_T = TypeVar("_T")
_BUSY_TIMEOUT_MS = 5000
_FOLDED = "history_folded_contains"  # SQLITE.folded: a search of non-ASCII text


@lru_cache(maxsize=64)
def _insert_sql(table: str, columns: tuple[str, ...]) -> str:
    """The insert of one row of ``table`` giving ``columns``: made once per column set (a
    served call's rows come in a few)."""
    keep = " ON CONFLICT (id) DO NOTHING" if "id" in columns else ""
    marks = ", ".join("?" * len(columns))
    return f"INSERT INTO {table} ({', '.join(columns)}) VALUES ({marks}){keep}"


def _folded_contains(hay: str | None, needle: str) -> bool:
    return hay is not None and needle in hay.casefold()


def install_functions(conn: sqlite3.Connection) -> None:
    """Register the SQL function a search of non-ASCII text uses, on a new connection."""
    conn.create_function(_FOLDED, 2, _folded_contains, deterministic=True)


class HistoryDatabase(Database):
    """One connection to the history file, set up and migrated, shared under a lock.

    Raises:
        HistoryError: the file cannot be opened or is not a history database this code knows.
    """

    dialect = SQLITE

    def __init__(self, path: Path) -> None:
        self.path: Path = path
        self.location = str(path)
        self._lock = threading.Lock()
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._conn: sqlite3.Connection | None = sqlite3.connect(
                self.path,
                timeout=_BUSY_TIMEOUT_MS / 1000,
                isolation_level=None,  # autocommit: each write is its own transaction
                check_same_thread=False,  # shared by threads, guarded by self._lock
            )
            install_functions(self._conn)
        except (OSError, sqlite3.Error) as exc:
            raise self.error("open", exc) from exc
        try:
            with self.connection("open") as conn:
                conn.execute(f"PRAGMA busy_timeout = {_BUSY_TIMEOUT_MS}")
                conn.execute("PRAGMA journal_mode = WAL")
                conn.execute("PRAGMA synchronous = NORMAL")
                conn.execute("PRAGMA foreign_keys = ON")
                current = conn.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
            if not current:  # a read says so: a file another process keeps locked still opens
                self.transaction("set up", lambda conn: migrate(conn, self.path))
        except HistoryError:
            self.close()
            raise

    @contextmanager
    def patience(self, seconds: float) -> Iterator[None]:
        """Wait at most ``seconds`` for a lock another connection holds, inside the block."""
        with self.connection("set the busy timeout of") as conn:
            conn.execute(f"PRAGMA busy_timeout = {int(seconds * 1000)}")
        try:
            yield
        finally:
            with self.connection("set the busy timeout of") as conn:
                conn.execute(f"PRAGMA busy_timeout = {_BUSY_TIMEOUT_MS}")

    def bound_cache(self, kib: int) -> None:
        """Keep at most ``kib`` KiB of the file's pages in memory (SQLite's default is 2 MiB)."""
        with self.connection("set the page cache of") as conn:
            conn.execute(f"PRAGMA cache_size = {-int(kib)}")

    def error(self, what: str, exc: BaseException) -> HistoryError:
        """A ``HistoryError`` saying that ``what`` failed on this file, and what to do."""
        text = str(exc)
        if "locked" in text or "busy" in text:
            hint = "another process kept it locked for more than 5 s; try again"
        elif "not a database" in text or "malformed" in text:
            hint = "the file is damaged: move it away and a new one is created"
        elif "readonly" in text or isinstance(exc, PermissionError):
            hint = "check that the file and its directory are writable"
        else:
            hint = "check the file and its directory, or set METAAGENT_HOME to another directory"
        return HistoryError(f"cannot {what} the history database {self.path}: {text}; {hint}")

    @contextmanager
    def connection(self, what: str) -> Iterator[sqlite3.Connection]:
        """The connection, held alone; SQLite errors come out as ``HistoryError`` about ``what``."""
        with self._lock:
            if self._conn is None:
                raise HistoryError(f"the history store {self.path} is closed")
            try:
                yield self._conn
            except sqlite3.Error as exc:
                raise self.error(what, exc) from exc

    def transaction(self, what: str, body: Callable[[sqlite3.Connection], _T]) -> _T:
        """Run ``body`` in one write transaction (taken at once, so two writers queue)."""
        with self.connection(what) as conn:
            conn.execute("BEGIN IMMEDIATE")
            try:
                result = body(conn)
            except BaseException:
                conn.execute("ROLLBACK")
                raise
            conn.execute("COMMIT")
            return result

    def insert_row(self, conn: Any, table: str, values: dict[str, Any]) -> int:
        """Insert one row; returns its rowid (see ``Database.insert_row``)."""
        cursor = conn.execute(_insert_sql(table, tuple(values)), tuple(values.values()))
        assert cursor.lastrowid is not None
        return int(cursor.lastrowid) if table in ROW_ID_TABLES else 0

    def reserve_ids(self, conn: Any, table: str, count: int) -> range:
        """Reserve ``count`` row ids of ``table`` from AUTOINCREMENT's sequence.

        No other writer — this process or another, inserting with ids of its own reserving or
        with SQLite's — can get them.
        """
        found = conn.execute("SELECT seq FROM sqlite_sequence WHERE name = ?", (table,)).fetchone()
        top = conn.execute(f"SELECT max(id) FROM {table}").fetchone()[0] or 0
        first = int(max(found[0] if found else 0, top) + 1)
        if found:
            conn.execute(
                "UPDATE sqlite_sequence SET seq = ? WHERE name = ?", (first + count - 1, table)
            )
        else:
            conn.execute(
                "INSERT INTO sqlite_sequence (name, seq) VALUES (?, ?)", (table, first + count - 1)
            )
        return range(first, first + count)

    def refused(self, exc: BaseException) -> bool:
        """A constraint refused the write (its thread is gone)."""
        return isinstance(exc, sqlite3.IntegrityError)

    def busy(self, exc: BaseException) -> bool:
        """Another connection kept the file locked past the busy timeout."""
        cause = exc.__cause__ if isinstance(exc, HistoryError) else exc
        text = str(cause)
        return isinstance(cause, sqlite3.OperationalError) and ("locked" in text or "busy" in text)

    def close(self) -> None:
        """Close the connection (idempotent)."""
        with self._lock:
            if self._conn is not None:
                self._conn.close()
                self._conn = None
