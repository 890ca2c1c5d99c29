"""The history store: every chat and every served call, in one SQLite database.

Three tables: ``threads`` (one conversation: a chat tab, a tool test, a served or CLI call),
``messages`` (its messages, with ``pending``/``complete``/``error`` status and token counts) and
``runs`` (one tool call of the agent: arguments, filled prompt, answer or error, duration, tokens,
caller).

Why it is built this way:

- The studio and a served server may write at the same time, from two processes: WAL journal
  (readers never block the writer), ``busy_timeout`` 5 s (a writer waits for the other instead of
  failing), every write one autocommitted statement (triggers keep ``threads.updated_at`` current).
- ``synchronous=NORMAL``: in WAL mode a commit then costs no fsync, so a write takes well under a
  millisecond and can run inline on the event loop. A power cut may lose the last commits, never
  corrupt the file; for a history that is the right trade.
- One connection per store, guarded by a lock, so tasks and threads of one process can share it.
- A crash leaves ``pending`` rows behind. Each row records its writer (pid and, where the system
  tells, the process start time); opening the store marks pending rows of writers that are gone as
  ``error``, so the trail never claims an answer is still coming.
- ``PRAGMA user_version`` holds the schema version, for migrations.
- A served server opens its store with ``write_behind=True``: writes are queued and a background
  thread applies them, a batch per transaction (``_history_writer.py``), so dozens of concurrent
  calls do not each wait for their commits on the event loop. Reads wait for the queue first.
"""

from __future__ import annotations

import json
import os
import sqlite3
import sys
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING, Any, Literal, TypeVar

from mcp_export._errors import HistoryError
from mcp_export._paths import data_dir

if TYPE_CHECKING:
    from ._history_writer import WriteBehind

__all__ = [
    "INTERRUPTED",
    "SCHEMA_VERSION",
    "HistoryStore",
    "MessageStatus",
    "RunRecord",
    "StoredMessage",
    "ThreadKind",
    "ThreadRecord",
    "default_history_path",
    "process_start_marker",
    "writer_alive",
]

ThreadKind = Literal["chat", "tool-test", "served", "call"]
MessageStatus = Literal["pending", "complete", "error"]
_T = TypeVar("_T")

SCHEMA_VERSION = 1
INTERRUPTED = "interrupted: the process ended before the answer was complete"
_BUSY_TIMEOUT_MS = 5000

_SCHEMA = """
CREATE TABLE IF NOT EXISTS threads (
    id           TEXT PRIMARY KEY,
    agent_path   TEXT,
    agent_name   TEXT NOT NULL,
    title        TEXT NOT NULL,
    kind         TEXT NOT NULL,
    created_at   REAL NOT NULL,
    updated_at   REAL NOT NULL,
    writer_pid   INTEGER NOT NULL,
    writer_start TEXT
);
CREATE INDEX IF NOT EXISTS threads_by_agent ON threads (agent_path, kind, updated_at);
CREATE INDEX IF NOT EXISTS threads_by_time ON threads (updated_at);

CREATE TABLE IF NOT EXISTS messages (
    id           INTEGER PRIMARY KEY AUTOINCREMENT,
    thread_id    TEXT NOT NULL REFERENCES threads (id) ON DELETE CASCADE,
    role         TEXT NOT NULL,
    content      TEXT NOT NULL DEFAULT '',
    status       TEXT NOT NULL CHECK (status IN ('pending', 'complete', 'error')),
    tool_calls   TEXT,
    tool_call_id TEXT,
    name         TEXT,
    is_error     INTEGER NOT NULL DEFAULT 0,
    tokens_in    INTEGER,
    tokens_out   INTEGER,
    error        TEXT,
    created_at   REAL NOT NULL,
    updated_at   REAL NOT NULL,
    writer_pid   INTEGER NOT NULL,
    writer_start TEXT
);
CREATE INDEX IF NOT EXISTS messages_by_thread ON messages (thread_id, id);
CREATE INDEX IF NOT EXISTS messages_pending ON messages (status) WHERE status = 'pending';

CREATE TABLE IF NOT EXISTS runs (
    id            INTEGER PRIMARY KEY AUTOINCREMENT,
    thread_id     TEXT REFERENCES threads (id) ON DELETE SET NULL,
    tool_name     TEXT NOT NULL,
    arguments     TEXT NOT NULL,
    filled_prompt TEXT NOT NULL,
    caller        TEXT NOT NULL,
    status        TEXT NOT NULL CHECK (status IN ('pending', 'complete', 'error')),
    answer        TEXT,
    error         TEXT,
    duration_ms   REAL,
    tokens_in     INTEGER,
    tokens_out    INTEGER,
    tool_calls    INTEGER,
    started_at    REAL NOT NULL,
    finished_at   REAL,
    writer_pid    INTEGER NOT NULL,
    writer_start  TEXT
);
CREATE INDEX IF NOT EXISTS runs_by_tool ON runs (tool_name, id);
CREATE INDEX IF NOT EXISTS runs_by_thread ON runs (thread_id);
CREATE INDEX IF NOT EXISTS runs_pending ON runs (status) WHERE status = 'pending';

CREATE TRIGGER IF NOT EXISTS thread_touched_by_message AFTER INSERT ON messages BEGIN
    UPDATE threads SET updated_at = NEW.created_at WHERE id = NEW.thread_id;
END;
CREATE TRIGGER IF NOT EXISTS thread_touched_by_run AFTER INSERT ON runs BEGIN
    UPDATE threads SET updated_at = NEW.started_at WHERE id = NEW.thread_id;
END;
"""

# Future schema changes: {version reached: script}, applied in order by ``_migrate``.
_MIGRATIONS: dict[int, str] = {}


@dataclass(frozen=True)
class ThreadRecord:
    """One conversation: a chat, a tool test, a served or CLI call."""

    id: str
    agent_path: str | None
    agent_name: str
    title: str
    kind: str
    created_at: datetime
    updated_at: datetime
    message_count: int = 0


@dataclass(frozen=True)
class StoredMessage:
    """One message of a thread. ``tool_calls`` is the list given when it was written."""

    id: int
    thread_id: str
    role: str
    content: str
    status: MessageStatus
    tool_calls: list[dict[str, Any]] | None
    tool_call_id: str | None
    name: str | None
    is_error: bool
    tokens_in: int | None
    tokens_out: int | None
    error: str | None
    created_at: datetime
    updated_at: datetime


@dataclass(frozen=True)
class RunRecord:
    """One call of one of the agent's tools, with the agent of its thread."""

    id: int
    thread_id: str | None
    tool_name: str
    arguments: dict[str, Any]
    filled_prompt: str
    caller: str
    status: MessageStatus
    answer: str | None
    error: str | None
    duration_ms: float | None
    tokens_in: int | None
    tokens_out: int | None
    tool_calls: int | None
    started_at: datetime
    finished_at: datetime | None
    agent_path: str | None
    agent_name: str | None


def _time(value: float) -> datetime:
    return datetime.fromtimestamp(value, UTC)


def _record(cls: type[_T], row: dict[str, Any], **converted: Any) -> _T:
    """``cls`` from a row: its own fields, with ``converted`` values replacing raw ones."""
    names = cls.__dataclass_fields__  # type: ignore[attr-defined]
    return cls(**{name: converted.get(name, row.get(name)) for name in names})


def default_history_path() -> Path:
    """``history.sqlite3`` in the data directory (``$METAAGENT_HOME`` or the platform's)."""
    return data_dir() / "history.sqlite3"


def process_start_marker(pid: int) -> str | None:
    """When process ``pid`` started, as the system says (Linux), to tell a reused pid apart.

    None where the system does not say; the pid alone is then the writer's identity.
    """
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    # Fields after the command name (which may hold spaces or parentheses): state is the first,
    # starttime the 20th.
    fields = stat.rsplit(")", 1)[-1].split()
    return fields[19] if len(fields) > 19 and fields[0] != "Z" else None


def _pid_alive(pid: int) -> bool:
    if pid <= 0:
        return False
    if sys.platform == "win32":  # pragma: no cover - os.kill(pid, 0) would send CTRL_C there
        import ctypes

        kernel32 = ctypes.windll.kernel32
        handle = kernel32.OpenProcess(0x1000, False, pid)  # PROCESS_QUERY_LIMITED_INFORMATION
        if not handle:
            return False
        code = ctypes.c_ulong()
        kernel32.GetExitCodeProcess(handle, ctypes.byref(code))
        kernel32.CloseHandle(handle)
        return code.value == 259  # STILL_ACTIVE
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # exists, owned by someone else
    return True


def writer_alive(pid: int, start: str | None) -> bool:
    """Whether the process that wrote a row (pid and start marker) still runs."""
    if not _pid_alive(pid):
        return False
    if start is None:
        return True
    current = process_start_marker(pid)
    # A zombie, or the pid now belongs to another process: the writer is gone.
    return current == start


class HistoryStore:
    """The history database (threads, messages, runs); safe across tasks, threads and processes.

    Args:
        path: The database file; default ``default_history_path()``. Its directory is created.
        write_behind: Queue writes for a background thread (see ``WriteBehind``): the write
            methods return at once (ids of inserted rows are provisional, good for later
            updates through this store), and a failed write is logged and ends the recording
            instead of raising.

    Raises:
        HistoryError: The file cannot be opened or is not a history database of a version this
            code knows; the message names the path and what to do.
    """

    def __init__(self, path: Path | None = None, *, write_behind: bool = False) -> None:
        self.path = Path(path) if path is not None else default_history_path()
        self._lock = threading.Lock()
        self._pid = os.getpid()
        self._start = process_start_marker(self._pid)
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._conn: sqlite3.Connection | None = sqlite3.connect(
                self.path,
                timeout=_BUSY_TIMEOUT_MS / 1000,
                isolation_level=None,  # autocommit: each write is its own transaction
                check_same_thread=False,  # shared by threads, guarded by self._lock
            )
        except (OSError, sqlite3.Error) as exc:
            raise self._error("open", exc) from exc
        try:
            self._prepare()
            self.stale_marked = self._mark_stale()
        except HistoryError:
            self._conn.close()
            self._conn = None
            raise
        self._behind: WriteBehind | None = None
        if write_behind:
            from ._history_writer import WriteBehind

            self._behind = WriteBehind(self)

    def _error(self, what: str, exc: BaseException) -> HistoryError:
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
    def _connection(self, what: str) -> Iterator[sqlite3.Connection]:
        with self._lock:
            if self._conn is None:
                raise HistoryError(f"the history store {self.path} is closed")
            try:
                yield self._conn
            except sqlite3.Error as exc:
                raise self._error(what, exc) from exc

    def transaction(self, what: str, body: Callable[[sqlite3.Connection], _T]) -> _T:
        """Run ``body`` in one write transaction (taken at once, so two writers queue)."""
        with self._connection(what) as conn:
            conn.execute("BEGIN IMMEDIATE")
            try:
                result = body(conn)
            except BaseException:
                conn.execute("ROLLBACK")
                raise
            conn.execute("COMMIT")
            return result

    def _prepare(self) -> None:
        with self._connection("open") as conn:
            conn.execute(f"PRAGMA busy_timeout = {_BUSY_TIMEOUT_MS}")
            conn.execute("PRAGMA journal_mode = WAL")
            conn.execute("PRAGMA synchronous = NORMAL")
            conn.execute("PRAGMA foreign_keys = ON")
        self.transaction("set up", self._migrate)

    def _migrate(self, conn: sqlite3.Connection) -> None:
        version = int(conn.execute("PRAGMA user_version").fetchone()[0])
        if version > SCHEMA_VERSION:
            raise HistoryError(
                f"the history database {self.path} has schema version {version}, newer than this "
                f"program knows ({SCHEMA_VERSION}): update Meta Agent Studio, or set "
                "METAAGENT_HOME to another directory"
            )
        # Statement by statement: executescript would commit the open transaction first.
        if version == 0:
            for statement in _statements(_SCHEMA):
                conn.execute(statement)
        for target in range(max(version, 1) + 1, SCHEMA_VERSION + 1):
            for statement in _statements(_MIGRATIONS[target]):
                conn.execute(statement)
        if version != SCHEMA_VERSION:
            conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")

    def _mark_stale(self) -> int:
        """Mark ``pending`` rows whose writer process is gone as ``error``; returns how many."""

        def body(conn: sqlite3.Connection) -> int:
            writers = conn.execute(
                "SELECT DISTINCT writer_pid, writer_start FROM messages WHERE status = 'pending' "
                "UNION SELECT DISTINCT writer_pid, writer_start FROM runs WHERE status = 'pending'"
            ).fetchall()
            now, marked = time.time(), 0
            for pid, start in writers:
                if writer_alive(pid, start):
                    continue
                for table, stamp in (("messages", "updated_at"), ("runs", "finished_at")):
                    marked += conn.execute(
                        f"UPDATE {table} SET status = 'error', error = ?, {stamp} = ? "
                        "WHERE status = 'pending' AND writer_pid = ? AND writer_start IS ?",
                        (INTERRUPTED, now, pid, start),
                    ).rowcount
            return marked

        return self.transaction("check", body)

    # -- writing ------------------------------------------------------------------------------

    def create_thread(
        self, *, agent_path: str | None, agent_name: str, title: str, kind: ThreadKind
    ) -> str:
        """Start a thread; returns its id (a uuid4 hex string)."""
        thread_id, now = uuid.uuid4().hex, time.time()
        self._insert(
            "threads",
            id=thread_id,
            agent_path=agent_path,
            agent_name=agent_name,
            title=title,
            kind=kind,
            created_at=now,
            updated_at=now,
        )
        return thread_id

    def add_message(
        self,
        thread_id: str,
        role: str,
        content: str,
        *,
        status: MessageStatus = "complete",
        tool_calls: list[dict[str, Any]] | None = None,
        tool_call_id: str | None = None,
        name: str | None = None,
        is_error: bool = False,
        tokens_in: int | None = None,
        tokens_out: int | None = None,
    ) -> int:
        """Append a message to a thread; returns its id.

        Raises:
            HistoryError: No such thread, or the database cannot be written.
        """
        now = time.time()
        try:
            return self._insert(
                "messages",
                thread_id=thread_id,
                role=role,
                content=content,
                status=status,
                tool_calls=_json_or_none(tool_calls),
                tool_call_id=tool_call_id,
                name=name,
                is_error=int(is_error),
                tokens_in=tokens_in,
                tokens_out=tokens_out,
                created_at=now,
                updated_at=now,
            )
        except HistoryError as exc:
            if isinstance(exc.__cause__, sqlite3.IntegrityError):
                raise HistoryError(f"no thread {thread_id!r} in {self.path}") from exc
            raise

    def update_message(
        self,
        message_id: int,
        *,
        content: str | None = None,
        status: MessageStatus | None = None,
        tool_calls: list[dict[str, Any]] | None = None,
        tokens_in: int | None = None,
        tokens_out: int | None = None,
        error: str | None = None,
    ) -> None:
        """Change the given fields of a message (None leaves a field as it is)."""
        changes: dict[str, Any] = {
            "content": content,
            "status": status,
            "tool_calls": _json_or_none(tool_calls),
            "tokens_in": tokens_in,
            "tokens_out": tokens_out,
            "error": error,
        }
        self._update("messages", message_id, changes | {"updated_at": time.time()})

    def start_run(
        self,
        *,
        thread_id: str | None,
        tool_name: str,
        arguments: dict[str, Any],
        filled_prompt: str,
        caller: str,
    ) -> int:
        """Record the start of a tool run (status ``pending``); returns its id."""
        return self._insert(
            "runs",
            thread_id=thread_id,
            tool_name=tool_name,
            arguments=json.dumps(arguments, ensure_ascii=False),
            filled_prompt=filled_prompt,
            caller=caller,
            status="pending",
            started_at=time.time(),
        )

    def start_call(
        self,
        *,
        thread_id: str | None,
        agent_path: str | None,
        agent_name: str,
        title: str,
        kind: ThreadKind,
        tool_name: str,
        arguments: dict[str, Any],
        filled_prompt: str,
        caller: str,
    ) -> tuple[str, int]:
        """Record the start of one tool call; returns its thread id and run id.

        The thread is new unless ``thread_id`` continues one; the run row starts ``pending``.
        """
        if thread_id is None:
            thread_id = self.create_thread(
                agent_path=agent_path, agent_name=agent_name, title=title, kind=kind
            )
        run_id = self.start_run(
            thread_id=thread_id,
            tool_name=tool_name,
            arguments=arguments,
            filled_prompt=filled_prompt,
            caller=caller,
        )
        return thread_id, run_id

    def finish_run(
        self,
        run_id: int,
        *,
        answer: str | None = None,
        error: str | None = None,
        duration_ms: float = 0.0,
        tokens_in: int = 0,
        tokens_out: int = 0,
        tool_calls: int = 0,
    ) -> None:
        """Record how a run ended: ``complete`` with its answer, or ``error`` with ``error``."""
        self._update(
            "runs",
            run_id,
            {
                "status": "error" if error is not None else "complete",
                "answer": answer,
                "error": error,
                "duration_ms": duration_ms,
                "tokens_in": tokens_in,
                "tokens_out": tokens_out,
                "tool_calls": tool_calls,
                "finished_at": time.time(),
            },
        )

    def _insert(self, table: str, **values: Any) -> int:
        """Insert one row stamped with this process as its writer; returns its rowid."""
        values |= {"writer_pid": self._pid, "writer_start": self._start}
        if self._behind is not None:
            updatable = table == "runs" or values.get("status") not in (None, "complete")
            return self._behind.insert(table, values, updatable=updatable)
        with self._connection("write") as conn:
            return insert_row(conn, table, values)

    def _update(self, table: str, row_id: int, changes: dict[str, Any]) -> None:
        given = {key: value for key, value in changes.items() if value is not None}
        if self._behind is not None:
            self._behind.update(table, row_id, given)
            return
        with self._connection("write") as conn:
            if not update_row(conn, table, row_id, given):
                raise HistoryError(f"no row {row_id} in {table} of {self.path}")

    def flush(self) -> None:
        """Wait until every queued write is in the database (at once without write-behind).

        Raises:
            HistoryError: the background writer did not catch up within 10 s.
        """
        if self._behind is not None:
            self._behind.flush()

    def delete_thread(self, thread_id: str) -> None:
        """Delete a thread and its messages (its runs stay, detached)."""
        self.flush()
        with self._connection("write") as conn:
            conn.execute("DELETE FROM threads WHERE id = ?", (thread_id,))

    # -- reading ------------------------------------------------------------------------------

    def messages(self, thread_id: str) -> list[StoredMessage]:
        """The messages of a thread, in the order they were added."""
        self.flush()
        with self._connection("read") as conn:
            rows = conn.execute(
                "SELECT * FROM messages WHERE thread_id = ? ORDER BY id", (thread_id,)
            )
            return [
                _record(
                    StoredMessage,
                    row,
                    tool_calls=json.loads(row["tool_calls"]) if row["tool_calls"] else None,
                    is_error=bool(row["is_error"]),
                    created_at=_time(row["created_at"]),
                    updated_at=_time(row["updated_at"]),
                )
                for row in _dicts(rows)
            ]

    def runs(
        self,
        *,
        agent_path: str | None = None,
        tool_name: str | None = None,
        status: MessageStatus | None = None,
        limit: int = 500,
    ) -> list[RunRecord]:
        """Runs, newest first, optionally only an agent's, a tool's or those with a status."""
        self.flush()
        filters, values = _filters(
            ("threads.agent_path", agent_path),
            ("runs.tool_name", tool_name),
            ("runs.status", status),
        )
        with self._connection("read") as conn:
            rows = conn.execute(
                "SELECT runs.*, threads.agent_path AS agent_path, threads.agent_name AS agent_name "
                f"FROM runs LEFT JOIN threads ON threads.id = runs.thread_id {filters} "
                "ORDER BY runs.id DESC LIMIT ?",
                (*values, limit),
            )
            return [
                _record(
                    RunRecord,
                    row,
                    arguments=json.loads(row["arguments"]),
                    started_at=_time(row["started_at"]),
                    finished_at=_time(row["finished_at"]) if row["finished_at"] else None,
                )
                for row in _dicts(rows)
            ]

    def threads(
        self, *, agent_path: str | None = None, kind: ThreadKind | None = None, limit: int = 500
    ) -> list[ThreadRecord]:
        """Threads, most recently active first."""
        self.flush()
        filters, values = _filters(("agent_path", agent_path), ("kind", kind))
        with self._connection("read") as conn:
            rows = conn.execute(
                "SELECT *, (SELECT count(*) FROM messages WHERE thread_id = threads.id) "
                f"AS message_count FROM threads {filters} "
                "ORDER BY updated_at DESC, rowid DESC LIMIT ?",
                (*values, limit),
            )
            return [_thread(row) for row in _dicts(rows)]

    def thread(self, thread_id: str) -> ThreadRecord | None:
        """One thread, or None."""
        self.flush()
        with self._connection("read") as conn:
            rows = conn.execute(
                "SELECT *, (SELECT count(*) FROM messages WHERE thread_id = threads.id) "
                "AS message_count FROM threads WHERE id = ?",
                (thread_id,),
            )
            found = [_thread(row) for row in _dicts(rows)]
        return found[0] if found else None

    def latest_thread(
        self, *, agent_path: str | None = None, kind: ThreadKind | None = None
    ) -> ThreadRecord | None:
        """The most recently active thread (of an agent, of a kind), or None."""
        found = self.threads(agent_path=agent_path, kind=kind, limit=1)
        return found[0] if found else None

    def close(self) -> None:
        """Apply the queued writes, then close the database (idempotent)."""
        behind, self._behind = self._behind, None
        if behind is not None:
            behind.close()
        with self._lock:
            if self._conn is not None:
                self._conn.close()
                self._conn = None

    def __enter__(self) -> HistoryStore:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc_val: BaseException | None,
        exc_tb: TracebackType | None,
    ) -> None:
        self.close()


def insert_row(conn: sqlite3.Connection, table: str, values: dict[str, Any]) -> int:
    """Insert one row; returns its rowid."""
    columns, marks = ", ".join(values), ", ".join("?" * len(values))
    cursor = conn.execute(
        f"INSERT INTO {table} ({columns}) VALUES ({marks})", tuple(values.values())
    )
    assert cursor.lastrowid is not None
    return cursor.lastrowid


def update_row(conn: sqlite3.Connection, table: str, row_id: int, given: dict[str, Any]) -> bool:
    """Set the ``given`` columns of one row; False when there is no such row."""
    assignments = ", ".join(f"{key} = ?" for key in given)
    cursor = conn.execute(
        f"UPDATE {table} SET {assignments} WHERE id = ?", (*given.values(), row_id)
    )
    return cursor.rowcount > 0


def _thread(row: dict[str, Any]) -> ThreadRecord:
    return _record(
        ThreadRecord,
        row,
        created_at=_time(row["created_at"]),
        updated_at=_time(row["updated_at"]),
    )


def _statements(script: str) -> Iterator[str]:
    """The SQL statements of ``script`` (a trigger body's semicolons do not end a statement)."""
    pending = ""
    for line in script.splitlines(keepends=True):
        pending += line
        if sqlite3.complete_statement(pending):
            yield pending.strip()
            pending = ""


def _json_or_none(value: Any) -> str | None:
    return None if value is None else json.dumps(value, ensure_ascii=False)


def _filters(*pairs: tuple[str, Any]) -> tuple[str, list[Any]]:
    given = [(column, value) for column, value in pairs if value is not None]
    if not given:
        return "", []
    return "WHERE " + " AND ".join(f"{c} = ?" for c, _ in given), [v for _, v in given]


def _dicts(cursor: sqlite3.Cursor) -> Iterator[dict[str, Any]]:
    names = [d[0] for d in cursor.description]
    for row in cursor:
        yield dict(zip(names, row, strict=True))
