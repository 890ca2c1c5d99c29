"""Pages of an agent's conversations, as History lists them: keyset-paged, filtered, bounded.

A conversation is a thread with the summary its triggers keep (``history/schema.py``): tool,
status, tokens and time are columns of the thread row, and the run that started it is one
rowid lookup away, so a page costs the rows it returns, not the size of the history:

- **keyset pages**: a page starts after the last row of the one before (its sort value and
  rowid), never at an offset, so the thousandth page costs what the first does. In the default
  order (newest first) the rows come in the order of the ``threads_by_key`` index.
- **bounded scans**: a text, tool or status filter that matches few rows would read the whole
  history to fill a page. With ``scan=N`` a call looks at no more than the next N threads of the
  agent (in the page's order) and says where it stopped (:attr:`ConversationPage.next`), so a
  caller can show what it has and go on later.

Text matches case-insensitively, as a part of a word or of several, in what was said and what
names a conversation: its title, the tool, the caller, the filled prompt and the answer of the
run that started it, the text of every message of the conversation (each follow-up and answer),
the case and the model of a test case's run (and a kind, through the labels the caller gives):
a LIKE that ignores the case of ASCII letters for a text in ASCII, the dialect's folded
comparison for any other text (``history/sql.py``). The messages have a full-text index of their
own (SQLite: the FTS5 table ``messages_text`` with trigrams, kept by triggers; PostgreSQL: a
pg_trgm GIN index), which finds any part of a word of three characters or more. A text said in
fewer than ``_FEW`` messages is looked up there once, as the set of the threads that said it; a
commoner one (a page fills from few threads), a shorter one or one beyond ASCII is tested
thread by thread (one seek of ``messages_by_thread_time`` each), which makes a scan of a given
length slower (History scans fewer threads at a time with a text).

A conversation that is a test case's served call (``case_runs.thread_id``) carries its case,
model and matrix run, and for a caller case the step and the served model from its ``caller``
column, and whether it was served at all (a caller case's run that made no served call is a
conversation of kind ``caller``: the caller model's turn)
(:class:`~mcp_export.history.schema.CaseMark`); ``case_runs`` in the filter lists only those, or
only the others.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Literal

from mcp_export.history.schema import (
    CaseMark,
    ConversationRecord,
    MessageStatus,
    ThreadKind,
    run_record,
    thread_record,
)
from mcp_export.history.sql import SQLITE, Connection, Dialect, dicts, like_pattern

__all__ = [
    "ORDERS",
    "ConversationFilter",
    "ConversationOrder",
    "ConversationPage",
    "Position",
    "conversation_page",
    "conversation_tools",
    "has_conversations",
]

ConversationOrder = Literal[
    "started", "kind", "tool", "status", "time", "tokens", "cost", "title", "case"
]
Position = tuple[Any, int]
"""Where a page ended: the sort value and the rowid of its last row."""

ORDERS: dict[ConversationOrder, str] = {
    "started": "t.created_at",
    "kind": "t.kind",
    "tool": "coalesce(t.tool_name, '')",
    "status": "t.status",
    "time": "coalesce(t.duration_ms, -1)",
    "tokens": "CASE WHEN t.tokens_in IS NULL AND t.tokens_out IS NULL THEN -1 "
    "ELSE coalesce(t.tokens_in, 0) + coalesce(t.tokens_out, 0) END",
    "cost": "CASE WHEN t.calls = 0 THEN -2 ELSE coalesce(t.cost_usd, -1) END",
    "title": "lower(t.title)",
    "case": "coalesce((SELECT c.case_name || ' ' || c.model FROM case_runs AS c "
    "WHERE c.thread_id = t.id ORDER BY c.id LIMIT 1), '')",
}
"""The SQL value each order sorts by (unknown figures sort below every known one; a cost sorts
by the sum of the known costs, a lower bound among the exact ones, and a conversation with no
call that ended below an unknown cost)."""

_THREAD_COLUMNS = (
    "id",
    "agent_path",
    "agent_name",
    "title",
    "kind",
    "created_at",
    "updated_at",
    "tool_name",
    "status",
    "tokens_in",
    "tokens_out",
    "duration_ms",
    "tokens_unreported",
    "calls",
    "cost_usd",
    "cost_unsure",
)
_RUN_COLUMNS = (
    "id",
    "thread_id",
    "tool_name",
    "arguments",
    "filled_prompt",
    "caller",
    "status",
    "answer",
    "error",
    "duration_ms",
    "tokens_in",
    "tokens_out",
    "tool_calls",
    "started_at",
    "finished_at",
    "fingerprint",
    "cost_usd",
    "cost_at_least",
)
_SELECT = ", ".join(
    [f"t.{c} AS {c}" for c in _THREAD_COLUMNS]
    + [f"r.{c} AS run_{c}" for c in _RUN_COLUMNS]
    + ["(SELECT count(*) FROM messages WHERE thread_id = t.id) AS message_count"]
    + [
        f"(SELECT c.{c} FROM case_runs AS c WHERE c.thread_id = t.id ORDER BY c.id LIMIT 1) "
        f"AS case_{c}"
        for c in ("case_name", "model", "matrix_id", "caller", "cost_usd", "cost_at_least")
    ]
)
_FEW = 2000
"""Messages saying a text below which the full-text index finds its conversations as a set."""
_IS_CASE = "EXISTS (SELECT 1 FROM case_runs AS c WHERE c.thread_id = t.id)"


@dataclass(frozen=True)
class ConversationFilter:
    """Which of the conversations to list.

    Attributes:
        agent_key: the agent's threads (``schema.agent_key`` of its file); None for an agent
            without a file, whose threads are found by ``agent_name``.
        agent_name: the name of an agent without a file.
        tool: only conversations started by a run of this tool.
        status: only conversations with this status.
        text: only conversations in which it was said or that it names (see the module doc).
        text_kinds: kinds whose label contains ``text`` (their conversations match it too).
        case_runs: True: only the served calls of test cases; False: all but those; None: all.
        thread_id: only this conversation (whether it is among those the rest lets through).
    """

    agent_key: str | None
    agent_name: str = ""
    tool: str | None = None
    status: MessageStatus | None = None
    text: str = ""
    text_kinds: tuple[ThreadKind, ...] = ()
    case_runs: bool | None = None
    thread_id: str | None = None


@dataclass(frozen=True)
class ConversationPage:
    """One page of conversations, and where the next starts (None: there is no more)."""

    rows: list[ConversationRecord]
    next: Position | None


def _scope(query: ConversationFilter) -> tuple[str, list[Any]]:
    if query.agent_key is not None:
        return "t.agent_key = ?", [query.agent_key]
    return "t.agent_key IS NULL AND t.agent_name = ?", [query.agent_name]


def _matching(
    conn: Connection, query: ConversationFilter, dialect: Dialect
) -> tuple[list[str], list[Any]]:
    """The conditions of the tool, status, case and text filters, and their values."""
    conditions: list[str] = []
    values: list[Any] = []
    if query.tool is not None:
        conditions.append("t.tool_name = ?")
        values.append(query.tool)
    if query.status is not None:
        conditions.append("t.status = ?")
        values.append(query.status)
    if query.case_runs is not None:
        conditions.append(_IS_CASE if query.case_runs else f"NOT {_IS_CASE}")
    if query.thread_id is not None:
        conditions.append("t.id = ?")
        values.append(query.thread_id)
    text = query.text.strip()
    if not text:
        return conditions, values
    if text.isascii():
        pattern, like = like_pattern(text), dialect.ascii_like

        def contains(field: str) -> str:
            values.append(pattern)
            return f"{field} {like} ? ESCAPE '\\'"
    else:
        folded = dialect.fold(text)

        def contains(field: str) -> str:
            values.append(folded)
            return dialect.folded.format(field=field)

    tests = [contains(f) for f in ("t.title", "t.tool_name", "r.caller", "r.filled_prompt")]
    tests.append(contains("r.answer"))
    if not _said_rarely(conn, text, dialect):
        tests.append(
            "EXISTS (SELECT 1 FROM messages AS m WHERE m.thread_id = t.id AND "
            f"{contains('m.content')})"
        )
    else:
        tests.append(dialect.said_in)
        values.append(dialect.said(text))
    tests.append(
        "EXISTS (SELECT 1 FROM case_runs AS c WHERE c.thread_id = t.id AND "
        f"({contains('c.case_name')} OR {contains('c.model')}))"
    )
    if query.text_kinds:
        tests.append(f"t.kind IN ({', '.join('?' * len(query.text_kinds))})")
        values.extend(query.text_kinds)
    conditions.append("(" + " OR ".join(tests) + ")")
    return conditions, values


def _said_rarely(conn: Connection, text: str, dialect: Dialect) -> bool:
    """Whether fewer than :data:`_FEW` messages say ``text``, by the full-text index (which
    takes an ASCII text of three characters or more)."""
    if len(text) < 3 or not text.isascii():
        return False
    found = conn.execute(dialect.said_count, (dialect.said(text), _FEW)).fetchone()
    return int(found[0]) < _FEW


def conversation_page(
    conn: Connection,
    query: ConversationFilter,
    *,
    dialect: Dialect = SQLITE,
    order: ConversationOrder = "started",
    descending: bool = True,
    after: Position | None = None,
    limit: int = 100,
    scan: int | None = None,
) -> ConversationPage:
    """One page of the conversations ``query`` lists, in ``order``.

    Args:
        conn: the history database.
        query: which conversations.
        dialect: the database's dialect.
        order: what they are sorted by (then by rowid, so the order is total).
        descending: largest first (newest first for ``started``).
        after: the ``next`` of the page before; None for the first page.
        limit: at most this many rows.
        scan: look at no more than this many of the agent's threads (None: as many as it takes).
    """
    key = ORDERS[order]
    direction, beyond, within = ("DESC", "<", ">=") if descending else ("ASC", ">", "<=")
    conditions, matching_values = _matching(conn, query, dialect)
    scope, scope_values = _scope(query)
    where = [scope]
    values: list[Any] = list(scope_values)
    if after is not None:
        where.append(f"({key}, t.rowid) {beyond} (?, ?)")
        values.extend(after)
    sort = f"ORDER BY {key} {direction}, t.rowid {direction}"
    boundary: Position | None = None
    if scan is not None:
        found = conn.execute(
            f"SELECT {key}, t.rowid FROM threads AS t WHERE {' AND '.join(where)} {sort} "
            "LIMIT 1 OFFSET ?",
            (*values, scan - 1),
        ).fetchone()
        if found is not None:
            boundary = (found[0], int(found[1]))
            where.append(f"({key}, t.rowid) {within} (?, ?)")
            values.extend(boundary)
    chosen = (
        "FROM threads AS t LEFT JOIN runs AS r ON r.id = t.first_run "
        f"WHERE {' AND '.join(where + conditions)} {sort} LIMIT ?"
    )
    if order == "started":  # read in the index's order: the page's rows are the first found
        statement = f"SELECT {_SELECT}, {key} AS sort_value, t.rowid AS position {chosen}"
    else:
        # Sorted rows: the page is chosen by the sort value alone, and only its rows get their
        # columns (a row that enters the sort's top rows on the way has them read otherwise, and
        # with many equal values, such as an unknown cost, nearly every row enters).
        statement = (
            f"SELECT {_SELECT}, page.sort_value AS sort_value, page.position AS position "
            f"FROM (SELECT {key} AS sort_value, t.rowid AS position {chosen}) AS page "
            "JOIN threads AS t ON t.rowid = page.position "
            "LEFT JOIN runs AS r ON r.id = t.first_run "
            f"ORDER BY page.sort_value {direction}, page.position {direction}"
        )
    rows = conn.execute(statement, (*values, *matching_values, limit))
    found_rows = list(dicts(rows))
    records = [_conversation(row) for row in found_rows]
    if len(found_rows) == limit:
        last = found_rows[-1]
        return ConversationPage(records, (last["sort_value"], int(last["position"])))
    return ConversationPage(records, boundary)


def _conversation(row: dict[str, Any]) -> ConversationRecord:
    thread = thread_record(row)
    case = None
    if row["case_case_name"] is not None:
        caller = _caller_mark(row["case_caller"])
        case = CaseMark(
            row["case_case_name"],
            row["case_model"],
            row["case_matrix_id"],
            caller is not None,
            caller.get("step") if caller else None,
            caller.get("servedModel") if caller else None,
            row["kind"] != "caller",
            row["case_cost_usd"],
            bool(row["case_cost_at_least"]),
        )
    if row["run_id"] is None:
        return ConversationRecord(thread, None, case)
    run = {name[4:]: value for name, value in row.items() if name.startswith("run_")}
    run |= {"agent_path": row["agent_path"], "agent_name": row["agent_name"]}
    return ConversationRecord(thread, run_record(run), case)


def _caller_mark(text: str | None) -> dict[str, Any] | None:
    """A caller case run's step and served model from its ``caller`` JSON (None: not one)."""
    if not text:
        return None
    try:
        found = json.loads(text)
    except ValueError:
        return {}
    if not isinstance(found, dict):
        return {}
    return {key: found[key] for key in ("step", "servedModel") if isinstance(found.get(key), str)}


def conversation_tools(conn: Connection, query: ConversationFilter) -> list[str]:
    """The tools whose runs started the conversations of ``query``'s agent, sorted.

    One seek of the ``threads_by_key_tool`` index per tool, not a read of every thread.
    """
    scope, values = _scope(query)
    rows = conn.execute(
        "WITH RECURSIVE tools (name) AS ("
        f"SELECT (SELECT t.tool_name FROM threads AS t WHERE {scope} AND t.tool_name > '' "
        "ORDER BY t.tool_name LIMIT 1) "
        "UNION ALL SELECT (SELECT t.tool_name FROM threads AS t "
        f"WHERE {scope} AND t.tool_name > tools.name ORDER BY t.tool_name LIMIT 1) "
        "FROM tools WHERE tools.name IS NOT NULL"
        ") SELECT name FROM tools WHERE name IS NOT NULL",
        (*values, *values),
    )
    return [name for (name,) in rows]


def has_conversations(conn: Connection, query: ConversationFilter) -> bool:
    """Whether ``query``'s agent has any conversation at all (whatever the filters)."""
    scope, values = _scope(query)
    found = conn.execute(f"SELECT 1 FROM threads AS t WHERE {scope} LIMIT 1", values)
    return found.fetchone() is not None
