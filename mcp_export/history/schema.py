"""The history database's tables, their migrations, and the records read from them.

Four tables: ``threads`` (one conversation: a chat tab, a tool test, a served or CLI call),
``messages`` (its messages, with ``pending``/``complete``/``error`` status and token counts),
``runs`` (one tool call of the agent: arguments, filled prompt, answer or error, duration, tokens,
caller) and ``case_runs`` (one run of a test case on one model, grouped by ``matrix_id``: passed,
the failed expectations, answer, duration, tokens, the judge's verdict, ``thread_id``, the
conversation of the served call that ran it, and for a caller case ``caller``: the step that
failed and the caller model's transcript, as JSON). A token count is NULL
where the model server did not report it (absent is not 0). ``turn_claims`` holds the turns of
conversations under way (``history/turns.py``).
``PRAGMA user_version`` holds the schema version. Triggers keep, whoever writes from whichever
process, each thread's summary: when it was last active, the tool of its first run, its status
and the figures of its conversation (``history/figures.py``) with what its calls cost (each run
row keeps its own, ``history/conversation_totals.py``), so a page of conversations is read
from the thread rows alone; a thread's ``agent_key`` is the real path of its agent file, as the
writer resolved it (History finds an agent's threads under it, whichever spelling of the path
each writer had).
"""

from __future__ import annotations

import json
import os
import sqlite3
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal, TypeVar

from mcp_export.costs.cost import CellCost, Cost
from mcp_export.errors import HistoryError
from mcp_export.history.conversation_totals import SQLITE_COLUMNS, SQLITE_TOTALS
from mcp_export.history.figures import backfill, triggers
from mcp_export.history.sql import dicts

__all__ = [
    "INTERRUPTED",
    "SCHEMA_VERSION",
    "CaseMark",
    "CaseRunRecord",
    "ConversationRecord",
    "MessageStatus",
    "RunRecord",
    "StoredMessage",
    "ThreadKind",
    "ThreadRecord",
    "agent_key",
    "case_run_record",
    "dicts",
    "message_record",
    "migrate",
    "run_record",
    "thread_record",
]

ThreadKind = Literal["chat", "tool-test", "served", "call", "caller", "authoring"]
"""``caller``: a caller case's run that made no served call: the caller model's turn only
(``testing/callers``); ``authoring``: an exchange with the authoring model (``authoring``)."""
MessageStatus = Literal["pending", "complete", "error"]
_T = TypeVar("_T")

SCHEMA_VERSION = 9
INTERRUPTED = "interrupted: the process ended before the answer was complete"
"""The error of a row left ``pending`` by a process that is gone (a crash, ``kill -9``)."""

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

_CASE_RUNS = """
CREATE TABLE IF NOT EXISTS case_runs (
    id           INTEGER PRIMARY KEY AUTOINCREMENT,
    matrix_id    TEXT NOT NULL,
    agent_path   TEXT,
    agent_name   TEXT NOT NULL,
    tool_name    TEXT NOT NULL,
    case_name    TEXT NOT NULL,
    model        TEXT NOT NULL,
    attempt      INTEGER NOT NULL,
    passed       INTEGER NOT NULL,
    failures     TEXT NOT NULL,
    answer       TEXT,
    is_error     INTEGER NOT NULL DEFAULT 0,
    duration_ms  REAL,
    tokens_in    INTEGER,
    tokens_out   INTEGER,
    turns        INTEGER,
    verdict      TEXT,
    created_at   REAL NOT NULL,
    writer_pid   INTEGER NOT NULL,
    writer_start TEXT
);
CREATE INDEX IF NOT EXISTS case_runs_by_agent ON case_runs (agent_path, created_at);
CREATE INDEX IF NOT EXISTS case_runs_by_matrix ON case_runs (matrix_id);
"""

# Version 3: the thread summaries (see the module doc), and the indexes that let a page of an
# agent's threads, newest first, be read from an index instead of sorting all of them.
_SUMMARIES = """
ALTER TABLE threads ADD COLUMN agent_key TEXT;
ALTER TABLE threads ADD COLUMN tool_name TEXT;
ALTER TABLE threads ADD COLUMN first_run INTEGER;
ALTER TABLE threads ADD COLUMN status TEXT NOT NULL DEFAULT 'complete';
ALTER TABLE threads ADD COLUMN tokens_in INTEGER;
ALTER TABLE threads ADD COLUMN tokens_out INTEGER;
ALTER TABLE threads ADD COLUMN duration_ms REAL;
ALTER TABLE messages ADD COLUMN answer_ms REAL;

DROP TRIGGER IF EXISTS thread_touched_by_message;
DROP TRIGGER IF EXISTS thread_touched_by_run;
DROP INDEX IF EXISTS messages_by_thread;
CREATE INDEX IF NOT EXISTS messages_by_thread_time ON messages (thread_id, created_at);
CREATE INDEX IF NOT EXISTS threads_by_key ON threads (agent_key, created_at);
CREATE INDEX IF NOT EXISTS threads_by_key_tool ON threads (agent_key, tool_name, created_at);
CREATE INDEX IF NOT EXISTS threads_by_activity ON threads (agent_path, updated_at);
"""


def _summaries(conn: sqlite3.Connection) -> None:
    for statement in _statements(_SUMMARIES + backfill(INTERRUPTED)):
        conn.execute(statement)
    paths = conn.execute("SELECT DISTINCT agent_path FROM threads WHERE agent_path IS NOT NULL")
    for (path,) in paths.fetchall():
        key = agent_key(path)
        conn.execute("UPDATE threads SET agent_key = ? WHERE agent_path = ?", (key, path))
    for statement in _statements(triggers(INTERRUPTED)):
        conn.execute(statement)


# Version 4: which process holds the turn of a conversation (``history/turns.py``).
_TURN_CLAIMS = """
CREATE TABLE IF NOT EXISTS turn_claims (
    thread_id    TEXT PRIMARY KEY,
    claimed_at   REAL NOT NULL,
    writer_pid   INTEGER NOT NULL,
    writer_start TEXT
);
"""


# Version 5: the served call (its thread) that ran each test case, so History can tell a case's
# conversation from the others and name its case and model; and the full-text index of what was
# said (``history/conversations.py``): trigrams of every message's text, case folded, kept by
# triggers, filled once from the messages there are.
_CASE_THREADS = """
ALTER TABLE case_runs ADD COLUMN thread_id TEXT;
CREATE INDEX IF NOT EXISTS case_runs_by_thread ON case_runs (thread_id);

CREATE VIRTUAL TABLE IF NOT EXISTS messages_text USING fts5 (
    content, content = 'messages', content_rowid = 'id', tokenize = 'trigram case_sensitive 0'
);
CREATE TRIGGER IF NOT EXISTS messages_text_added AFTER INSERT ON messages BEGIN
    INSERT INTO messages_text (rowid, content) VALUES (NEW.id, NEW.content);
END;
CREATE TRIGGER IF NOT EXISTS messages_text_changed AFTER UPDATE OF content ON messages BEGIN
    INSERT INTO messages_text (messages_text, rowid, content)
    VALUES ('delete', OLD.id, OLD.content);
    INSERT INTO messages_text (rowid, content) VALUES (NEW.id, NEW.content);
END;
CREATE TRIGGER IF NOT EXISTS messages_text_removed AFTER DELETE ON messages BEGIN
    INSERT INTO messages_text (messages_text, rowid, content)
    VALUES ('delete', OLD.id, OLD.content);
END;
INSERT INTO messages_text (messages_text) VALUES ('rebuild');
"""


# Version 6: a caller case's run (``testing/callers``): the step that failed, what the caller
# model was offered and what it called, and the tool's description then (JSON).
_CALLER_RUNS = """
ALTER TABLE case_runs ADD COLUMN caller TEXT;
"""


# Version 7: what each case run cost (US dollars, NULL unknown; ``cost_at_least``: a lower bound)
# and the version of the tool it ran (``versions/fingerprint.py``: the fingerprint and what it is
# made of), with the index that lists a tool's versions; a served run's tool version too.
_VERSIONS = """
ALTER TABLE case_runs ADD COLUMN cost_usd REAL;
ALTER TABLE case_runs ADD COLUMN cost_at_least INTEGER NOT NULL DEFAULT 0;
ALTER TABLE case_runs ADD COLUMN fingerprint TEXT;
ALTER TABLE case_runs ADD COLUMN version TEXT;
ALTER TABLE runs ADD COLUMN fingerprint TEXT;
CREATE INDEX IF NOT EXISTS case_runs_by_version ON case_runs (agent_path, tool_name, fingerprint);
"""


def _script(script: str) -> Callable[[sqlite3.Connection], None]:
    def run(conn: sqlite3.Connection) -> None:
        for statement in _statements(script):
            conn.execute(statement)

    return run


def _totals(conn: sqlite3.Connection) -> None:
    """Version 8: each run's cost and the conversation's totals (``conversation_totals``)."""
    for table, column, declaration in SQLITE_COLUMNS:
        present = {row[1] for row in conn.execute(f"PRAGMA table_info({table})")}
        if column not in present:
            conn.execute(f"ALTER TABLE {table} ADD COLUMN {column} {declaration}")
    for statement in _statements(SQLITE_TOTALS):
        conn.execute(statement)


# Version 9: what each version of a tool that was served is made of (``versions/fingerprint.py``),
# once per version: ``id`` is its fingerprint (so a second process's record of it is ignored, as a
# write of a row that is there), ``version`` the decisive fields as JSON. A version that no case
# run ran is known from its served calls' fingerprints and this record.
SERVED_VERSIONS = """
CREATE TABLE IF NOT EXISTS served_versions (
    id           TEXT PRIMARY KEY,
    version      TEXT NOT NULL,
    created_at   REAL NOT NULL,
    writer_pid   INTEGER NOT NULL,
    writer_start TEXT
);
"""


# Schema changes: {version reached: step}, applied in order by ``migrate``.
_MIGRATIONS: dict[int, Callable[[sqlite3.Connection], None]] = {
    2: _script(_CASE_RUNS),
    3: _summaries,
    4: _script(_TURN_CLAIMS),
    5: _script(_CASE_THREADS),
    6: _script(_CALLER_RUNS),
    7: _script(_VERSIONS),
    8: _totals,
    9: _script(SERVED_VERSIONS),
}


def agent_key(agent_path: str) -> str:
    """The key of an agent file's threads: its real path (symbolic links and ``..`` resolved,
    relative to this process's working directory)."""
    return os.path.realpath(agent_path)


def migrate(conn: sqlite3.Connection, path: Path) -> None:
    """Create or upgrade the schema of the database at ``path`` (inside a transaction).

    Raises:
        HistoryError: the database has a newer schema than this program knows.
    """
    version = int(conn.execute("PRAGMA user_version").fetchone()[0])
    if version > SCHEMA_VERSION:
        raise HistoryError(
            f"the history database {path} has schema version {version}, newer than this "
            f"program knows ({SCHEMA_VERSION}): update Meta Agent Studio, or set "
            "METAAGENT_HOME to another directory"
        )
    # Statement by statement: executescript would commit the open transaction first.
    if version == 0:
        for statement in _statements(_SCHEMA):
            conn.execute(statement)
    for target in range(max(version, 1) + 1, SCHEMA_VERSION + 1):
        _MIGRATIONS[target](conn)
    if version != SCHEMA_VERSION:
        conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")


def _statements(script: str) -> Iterator[str]:
    """The SQL statements of ``script`` (a trigger body's semicolons do not end a statement)."""
    pending = ""
    for line in script.splitlines(keepends=True):
        pending += line
        if sqlite3.complete_statement(pending):
            yield pending.strip()
            pending = ""


# --- records -------------------------------------------------------------------------------------


@dataclass(frozen=True)
class ThreadRecord:
    """One conversation: a chat, a tool test, a served or CLI call, a caller case's turn.

    ``tool_name`` is the tool of its first run, or the one it was started for (a caller case's
    turn; None for a chat); ``status``, ``tokens_in``, ``tokens_out`` and ``duration_ms`` sum up
    the conversation (``history/figures.py``).
    """

    id: str
    agent_path: str | None
    agent_name: str
    title: str
    kind: str
    created_at: datetime
    updated_at: datetime
    message_count: int = 0
    tool_name: str | None = None
    status: MessageStatus = "complete"
    tokens_in: int | None = None
    tokens_out: int | None = None
    duration_ms: float | None = None
    tokens_unreported: int = 0
    """Model requests of the conversation without a token count: the sums are lower bounds
    when they are known (``history/conversation_totals.py``)."""
    calls: int = 0
    """Runs (tool calls) of the conversation that ended."""
    cost_usd: float | None = None
    """What they cost, the sum of the costs that are known; None: none is."""
    cost_unsure: int = 0
    """Those whose cost is unknown or a lower bound."""

    @property
    def cost(self) -> CellCost:
        """What the conversation's calls cost: in all, per call and per 100 calls."""
        if self.cost_usd is None:
            total = Cost(None, why="no call's cost is known (a price or a token count is missing)")
        elif self.cost_unsure:
            total = Cost(self.cost_usd, True, "some calls' cost is unknown")
        else:
            total = Cost(self.cost_usd)
        return CellCost.of(total, self.calls)


@dataclass(frozen=True)
class StoredMessage:
    """One message of a thread. ``tool_calls`` is the list given when it was written;
    ``answer_ms`` the time of the answer this message ended (``history/figures.py``)."""

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
    answer_ms: float | None = None


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
    fingerprint: str | None = None
    """The version of the tool the call ran (``versions/fingerprint.py``); None before
    schema version 7."""
    cost_usd: float | None = None
    """What the call cost in US dollars; None: unknown (no price, no token count, or before
    schema version 8)."""
    cost_at_least: bool = False
    """``cost_usd`` is a lower bound (a model request did not report its token counts)."""


@dataclass(frozen=True)
class CaseRunRecord:
    """One run of a test case on one model; ``failures`` are ``"expectation: message"`` lines and
    ``verdict`` the judge's ``{"pass", "reason"}`` (None without a judge)."""

    id: int
    matrix_id: str
    agent_path: str | None
    agent_name: str
    tool_name: str
    case_name: str
    model: str
    attempt: int
    passed: bool
    failures: list[str]
    answer: str | None
    is_error: bool
    duration_ms: float | None
    tokens_in: int | None
    tokens_out: int | None
    turns: int | None
    verdict: dict[str, Any] | None
    created_at: datetime
    thread_id: str | None = None
    caller: dict[str, Any] | None = None
    """A caller case's step and caller transcript (``testing/callers``); None: an ordinary case."""
    cost_usd: float | None = None
    """What the run cost in US dollars; None: unknown (no price, or no token count)."""
    cost_at_least: bool = False
    """``cost_usd`` is a lower bound (a model request did not report its token counts)."""
    fingerprint: str | None = None
    """The version of the tool the run ran (``versions/fingerprint.py``); None before version 7."""


@dataclass(frozen=True)
class ConversationRecord:
    """One conversation as History lists it: its thread, the run that started it (None for a
    chat) and, for the served call of a test case, the case that ran it."""

    thread: ThreadRecord
    run: RunRecord | None
    case: CaseMark | None = None


@dataclass(frozen=True)
class CaseMark:
    """The test case whose run a conversation is: its name, the model, the matrix run; for a
    caller case's run, ``caller`` is set, ``model`` is the caller model, ``served_model`` the
    model that served its call and ``step`` the step it failed at (None: it passed); ``served``
    is False when the run never got to a served call (its conversation is the caller's turn);
    ``cost_usd`` what the call cost (None: unknown; ``cost_at_least``: a lower bound)."""

    case_name: str
    model: str
    matrix_id: str
    caller: bool = False
    step: str | None = None
    served_model: str | None = None
    served: bool = True
    cost_usd: float | None = None
    cost_at_least: bool = False

    def cost_text(self) -> str:
        """``cost $0.00008 a call, $0.008 per 100 calls``, or ``cost unknown``."""
        return CellCost.of(Cost(self.cost_usd, self.cost_at_least), 1).text()


def _time(value: float) -> datetime:
    return datetime.fromtimestamp(value, UTC)


def _record(cls: type[_T], row: dict[str, Any], **converted: Any) -> _T:
    """``cls`` from a row: its own fields, with ``converted`` values replacing raw ones."""
    names = cls.__dataclass_fields__  # type: ignore[attr-defined]
    return cls(**{name: converted.get(name, row.get(name)) for name in names})


def thread_record(row: dict[str, Any]) -> ThreadRecord:
    """A ``threads`` row (with its ``message_count``) as a record."""
    return _record(
        ThreadRecord,
        row,
        created_at=_time(row["created_at"]),
        updated_at=_time(row["updated_at"]),
        tokens_unreported=int(row.get("tokens_unreported") or 0),
        calls=int(row.get("calls") or 0),
        cost_unsure=int(row.get("cost_unsure") or 0),
    )


def message_record(row: dict[str, Any]) -> StoredMessage:
    """A ``messages`` row as a record."""
    return _record(
        StoredMessage,
        row,
        tool_calls=json.loads(row["tool_calls"]) if row["tool_calls"] else None,
        is_error=bool(row["is_error"]),
        created_at=_time(row["created_at"]),
        updated_at=_time(row["updated_at"]),
    )


def run_record(row: dict[str, Any]) -> RunRecord:
    """A ``runs`` row (with its thread's agent) as a record."""
    return _record(
        RunRecord,
        row,
        arguments=json.loads(row["arguments"]),
        started_at=_time(row["started_at"]),
        finished_at=_time(row["finished_at"]) if row["finished_at"] else None,
        cost_at_least=bool(row.get("cost_at_least")),
    )


def case_run_record(row: dict[str, Any]) -> CaseRunRecord:
    """A ``case_runs`` row as a record."""
    return _record(
        CaseRunRecord,
        row,
        passed=bool(row["passed"]),
        failures=json.loads(row["failures"]),
        is_error=bool(row["is_error"]),
        verdict=json.loads(row["verdict"]) if row["verdict"] else None,
        created_at=_time(row["created_at"]),
        caller=json.loads(row["caller"]) if row.get("caller") else None,
        cost_at_least=bool(row.get("cost_at_least")),
    )
