"""The history store: every chat and every served call, in one database.

Where: an SQLite file by default (``default_history_path``, the embedded store of one person),
or a PostgreSQL database that many served instances share (:func:`open_store` with a
``postgresql://`` location): the backends are ``history/db.py`` and ``history/postgres.py``
behind one interface (``history/backend.py``). The tables and records are in
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
  rows of writers that are gone (of this host) as ``error`` with :data:`INTERRUPTED`, so the
  trail never claims an answer is still coming.
"""

from __future__ import annotations

import os
import re
import time
import uuid
from collections.abc import Callable
from functools import lru_cache
from pathlib import Path
from types import TracebackType
from typing import Any

from mcp_export.errors import HistoryError
from mcp_export.history import reads
from mcp_export.history.backend import Database
from mcp_export.history.conversations import (
    ConversationFilter,
    ConversationOrder,
    ConversationPage,
    Position,
    conversation_page,
    conversation_tools,
    has_conversations,
)
from mcp_export.history.db import HistoryDatabase
from mcp_export.history.rows import new_write, process_start_marker, writer_alive
from mcp_export.history.schema import (
    INTERRUPTED,
    SCHEMA_VERSION,
    CaseRunRecord,
    MessageStatus,
    RunRecord,
    StoredMessage,
    ThreadKind,
    ThreadRecord,
    agent_key,
)
from mcp_export.history.write_log import Replayed, replay_logs
from mcp_export.history.writer import WriteBehind
from mcp_export.paths import data_dir

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


_SCHEME = re.compile(r"([A-Za-z][A-Za-z0-9+.\-]*)://")
_agent_key = lru_cache(maxsize=64)(agent_key)  # a served call must not resolve a path each time


def default_history_path() -> Path:
    """``history.sqlite3`` in the data directory (``$METAAGENT_HOME`` or the platform's)."""
    return data_dir() / "history.sqlite3"


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


def _open_database(location: str | Path | None) -> Database:
    if location is None:
        return HistoryDatabase(default_history_path())
    if isinstance(location, Path):
        return HistoryDatabase(location)
    if location.lower().startswith(("postgresql://", "postgres://")):
        from mcp_export.history.postgres import PostgresDatabase  # psycopg: only when asked for

        return PostgresDatabase(location)
    if location.startswith("sqlite://"):
        rest = location.removeprefix("sqlite://")
        if not rest.startswith("/") or rest == "/":
            raise HistoryError(
                f"the store location {location!r} names no file: write sqlite:///relative/path "
                "or sqlite:////absolute/path"
            )
        return HistoryDatabase(Path(rest[1:]))
    scheme = _SCHEME.match(location)
    if scheme is not None:
        raise HistoryError(
            f"the store location has the scheme {scheme[1]!r}, which is not a history store: give "
            "a file path, sqlite:///path or postgresql://user:password@host:port/dbname"
        )
    return HistoryDatabase(Path(location).expanduser())


class HistoryStore:
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
        self._db = _open_database(path)
        self.path: Path | None = self._db.path
        self.location = self._db.location
        self._pid = os.getpid()
        self._start = process_start_marker(self._pid)
        self._writer = self._db.writer_columns(self._pid, self._start)
        self._behind: WriteBehind | None = None
        try:
            # Logged writes of ended processes first: a run they finished is then not marked.
            self.replayed: Replayed = replay_logs(self._db, self._pid, self._start)
            self.stale_marked: int = self._db.mark_interrupted()
            if write_behind:
                self._behind = WriteBehind(self._db, self._pid, self._start)
        except HistoryError:
            self._db.close()
            raise

    @property
    def shared(self) -> bool:
        """Whether other machines use this database too (a server's, not a file)."""
        return self._db.host is not None

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
            agent_key=_agent_key(agent_path) if agent_path is not None else None,
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
                tool_calls=tool_calls,
                tool_call_id=tool_call_id,
                name=name,
                is_error=int(is_error),
                tokens_in=tokens_in,
                tokens_out=tokens_out,
                created_at=now,
                updated_at=now,
            )
        except HistoryError as exc:
            if exc.__cause__ is not None and self._db.refused(exc.__cause__):
                raise HistoryError(f"no thread {thread_id!r} in {self.location}") from exc
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
            "tool_calls": tool_calls,
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
            arguments=arguments,
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
        duration_ms: float | None = None,
        tokens_in: int | None = None,
        tokens_out: int | None = None,
        tool_calls: int = 0,
    ) -> None:
        """Record how a run ended: ``complete`` with its answer, or ``error`` with ``error``.

        The figures are those of the run's own answer (``history/figures.py``): ``duration_ms``
        from the question to the answer, the tokens of its model requests. A figure that is None
        (a failed run's time, a count the model server did not report) stays NULL: absent is
        not 0.
        """
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

    def add_case_run(
        self,
        *,
        matrix_id: str,
        agent_path: str | None,
        agent_name: str,
        tool_name: str,
        case_name: str,
        model: str,
        attempt: int,
        passed: bool,
        failures: list[str],
        answer: str | None,
        is_error: bool,
        duration_ms: float | None,
        tokens_in: int | None,
        tokens_out: int | None,
        turns: int | None,
        verdict: dict[str, Any] | None,
    ) -> int:
        """Record one run of a test case on one model; returns the row id."""
        return self._insert(
            "case_runs",
            matrix_id=matrix_id,
            agent_path=agent_path,
            agent_name=agent_name,
            tool_name=tool_name,
            case_name=case_name,
            model=model,
            attempt=attempt,
            passed=int(passed),
            failures=failures,
            answer=answer,
            is_error=int(is_error),
            duration_ms=duration_ms,
            tokens_in=tokens_in,
            tokens_out=tokens_out,
            turns=turns,
            verdict=verdict,
            created_at=time.time(),
        )

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

    def on_settled(self, callback: Callable[[], None]) -> bool:
        """Call ``callback`` once every write made so far is in the database.

        It is called on the background writer's thread (hand it over to an event loop with
        ``call_soon_threadsafe``), also when the writer stops applying or closes first.

        Returns:
            False when the writes already are in the database (without write-behind, always):
            the callback is not called.
        """
        return self._behind is not None and self._behind.on_applied(callback)

    def delete_thread(self, thread_id: str) -> None:
        """Delete a thread and its messages (its runs stay, detached)."""
        self.flush()
        with self._db.connection("write") as conn:
            conn.execute("DELETE FROM threads WHERE id = ?", (thread_id,))

    # -- reading ------------------------------------------------------------------------------

    def messages(self, thread_id: str) -> list[StoredMessage]:
        """The messages of a thread, in the order they were added."""
        self.flush()
        with self._db.connection("read") as conn:
            return reads.messages(conn, thread_id)

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
        with self._db.connection("read") as conn:
            return reads.runs(
                conn,
                agent_path=agent_path,
                tool_name=tool_name,
                status=status,
                limit=limit,
                dialect=self._db.dialect,
            )

    def threads(
        self, *, agent_path: str | None = None, kind: ThreadKind | None = None, limit: int = 500
    ) -> list[ThreadRecord]:
        """Threads, most recently active first."""
        self.flush()
        with self._db.connection("read") as conn:
            return reads.threads(conn, agent_path=agent_path, kind=kind, limit=limit)

    def thread(self, thread_id: str) -> ThreadRecord | None:
        """One thread, or None."""
        self.flush()
        with self._db.connection("read") as conn:
            return reads.thread(conn, thread_id)

    def conversations(
        self,
        query: ConversationFilter,
        *,
        order: ConversationOrder = "started",
        descending: bool = True,
        after: Position | None = None,
        limit: int = 100,
        scan: int | None = None,
    ) -> ConversationPage:
        """A page of an agent's conversations (``history/conversations.py``).

        Args:
            query: the agent, and the tool, status and text to filter by.
            order: what the rows are sorted by; ``started`` (the default) reads an index.
            descending: largest (newest) first.
            after: the ``next`` of the page before; None for the first page.
            limit: at most this many rows.
            scan: look at no more than this many of the agent's conversations.
        """
        self.flush()
        with self._db.connection("read") as conn:
            return conversation_page(
                conn,
                query,
                dialect=self._db.dialect,
                order=order,
                descending=descending,
                after=after,
                limit=limit,
                scan=scan,
            )

    def conversation_tools(self, query: ConversationFilter) -> list[str]:
        """The tools of the runs that started ``query``'s agent's conversations, sorted."""
        self.flush()
        with self._db.connection("read") as conn:
            return conversation_tools(conn, query)

    def has_conversations(self, query: ConversationFilter) -> bool:
        """Whether ``query``'s agent has a conversation at all, whatever the filters say."""
        self.flush()
        with self._db.connection("read") as conn:
            return has_conversations(conn, query)

    def case_runs(
        self,
        *,
        agent_path: str | None = None,
        matrix_id: str | None = None,
        limit: int = 20000,
    ) -> list[CaseRunRecord]:
        """Runs of test cases, newest first, optionally one agent's or one matrix run's."""
        self.flush()
        with self._db.connection("read") as conn:
            return reads.case_runs(conn, agent_path=agent_path, matrix_id=matrix_id, limit=limit)

    def latest_thread(
        self, *, agent_path: str | None = None, kind: ThreadKind | None = None
    ) -> ThreadRecord | None:
        """The most recently active thread (of an agent, of a kind), or None."""
        found = self.threads(agent_path=agent_path, kind=kind, limit=1)
        return found[0] if found else None

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
