"""The figures shown about an answer and about a conversation: what each counts, its label, how
it reads. One definition of each, used wherever it is shown (the chat tab's stats, History's
rows and transcripts) and kept by the history database.

An *answer* is one user turn: from the question (a user message, the filled prompt of a tool
call) to the model's answer, or to the failure that ended the turn. A *conversation* is a
thread: a chat, a tool test with its follow-up turns, a served call and the calls that
continued it.

- **Tokens this answer**: the prompt and completion tokens of the model requests of the answer.
- **Time this answer**: from the question to the end of the answer.
- **Tokens in the conversation**: the tokens of every model request of the conversation.
- **Time in the conversation**: the sum of its answers' times (the time between answers, while
  nobody asked anything, is not in it; an answer cut off by a process that ended has no time).

A token count that no model request reported is unknown: shown as "—", never as 0; a sum adds
the counts that were reported, and when some request reported none it is a lower bound and says
so (``≥ 80 in / 9 out``). The history database keeps these figures whoever writes (its
triggers, :func:`triggers`; :func:`backfill` works them out once for rows written before):
each answer's time on the message that ended it (``answer_ms``),
and the conversation's tokens, time and status in its thread row, so a list of conversations
reads them without adding up messages. A tool call's run row keeps the figures of its own answer
(``runs.tokens_in``, ``runs.duration_ms``): the call an MCP client made.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from datetime import datetime
from typing import Any, Protocol

from mcp_export.costs.cost import Cost

__all__ = [
    "ANSWER_COST",
    "ANSWER_TIME",
    "ANSWER_TOKENS",
    "ASKED",
    "CONVERSATION_TIME",
    "CONVERSATION_TOKENS",
    "STATUS_AGAIN",
    "UNKNOWN",
    "WORST_STATUS",
    "Figures",
    "answer_costs",
    "answers",
    "backfill",
    "format_duration",
    "token_count",
    "tokens_text",
    "triggers",
]

ANSWER_TOKENS = "Tokens this answer"
ANSWER_TIME = "Time this answer"
ANSWER_COST = "Cost this answer"
CONVERSATION_TOKENS = "Tokens in the conversation"
CONVERSATION_TIME = "Time in the conversation"
UNKNOWN = "—"


def _known_sum(a: int | None, b: int | None) -> int | None:
    if a is None:
        return b
    return a if b is None else a + b


@dataclass(frozen=True)
class Figures:
    """Tokens and time of an answer or of a conversation (None: unknown)."""

    tokens_in: int | None = None
    tokens_out: int | None = None
    duration_ms: float | None = None
    at_least: bool = False
    """The token counts are lower bounds: a model request did not report its count."""

    def plus(self, other: Figures) -> Figures:
        """The figures of both together: what either knows, None where neither does."""
        duration = (
            other.duration_ms
            if self.duration_ms is None
            else self.duration_ms + (other.duration_ms or 0.0)
        )
        return Figures(
            _known_sum(self.tokens_in, other.tokens_in),
            _known_sum(self.tokens_out, other.tokens_out),
            duration,
            self.at_least or other.at_least,
        )

    def tokens(self) -> str:
        """The token counts as shown: ``80 in / 9 out`` (``— in / — out`` when unknown,
        ``≥ 80 in / 9 out`` when a lower bound)."""
        text = tokens_text(self.tokens_in, self.tokens_out)
        known = self.tokens_in is not None or self.tokens_out is not None
        return f"≥ {text}" if self.at_least and known else text

    def time(self) -> str:
        """The time as shown (see :func:`format_duration`); "—" when unknown."""
        return format_duration(self.duration_ms) or UNKNOWN


def token_count(value: int | None) -> str:
    """A token count as shown: the number, or "—" when it is unknown (never 0 for unknown)."""
    return UNKNOWN if value is None else str(value)


def tokens_text(tokens_in: int | None, tokens_out: int | None) -> str:
    """Prompt and completion tokens as shown: ``80 in / 9 out``."""
    return f"{token_count(tokens_in)} in / {token_count(tokens_out)} out"


def format_duration(ms: float | None) -> str:
    """``850 ms``, ``2.3 s``, ``4 min 05 s``; "" when unknown."""
    if ms is None:
        return ""
    if ms < 1000:
        return f"{ms:.0f} ms"
    seconds = ms / 1000
    if seconds < 60:
        return f"{seconds:.1f} s"
    minutes, rest = divmod(round(seconds), 60)
    return f"{minutes} min {rest:02d} s"


class _Message(Protocol):
    """What the figures read of a stored message (``history.schema.StoredMessage``)."""

    @property
    def id(self) -> int: ...
    @property
    def role(self) -> str: ...
    @property
    def status(self) -> str: ...
    @property
    def tool_calls(self) -> Any: ...
    @property
    def tokens_in(self) -> int | None: ...
    @property
    def tokens_out(self) -> int | None: ...
    @property
    def answer_ms(self) -> float | None: ...
    @property
    def created_at(self) -> datetime: ...


def answers(messages: Sequence[_Message]) -> dict[int, Figures]:
    """The figures of each answer of a conversation, by the id of the message that ended it.

    Args:
        messages: the conversation's messages in order (``HistoryStore.messages``).

    An answer still running has no entry; one cut off by a process that ended has no time; its
    tokens are lower bounds when one of its model requests reported no count.
    """
    found: dict[int, Figures] = {}
    tokens = Figures()
    for message in messages:
        if message.role == "user":
            tokens = Figures()
        elif message.role == "assistant":
            unreported = message.status == "complete" and (
                message.tokens_in is None or message.tokens_out is None
            )  # the rule of ``history/conversation_totals.py``
            tokens = tokens.plus(Figures(message.tokens_in, message.tokens_out, None, unreported))
            if _ends_an_answer(message):
                found[message.id] = replace(tokens, duration_ms=message.answer_ms)
                tokens = Figures()
    return found


class _Run(Protocol):
    """What :func:`answer_costs` reads of a run (``history.schema.RunRecord``)."""

    @property
    def started_at(self) -> datetime: ...
    @property
    def cost_usd(self) -> float | None: ...
    @property
    def cost_at_least(self) -> bool: ...


def answer_costs(messages: Sequence[_Message], runs: Sequence[_Run]) -> dict[int, Cost]:
    """What each answer of a conversation cost, by the id of the message that ended it: the cost
    its run recorded (the run that asked the question: the last one started before the answer
    ended; unknown when its cost is). Answers before the first run have none.

    Args:
        messages: the conversation's messages in order.
        runs: its runs (the tool calls that asked its questions), in any order.
    """
    ordered = sorted(runs, key=lambda r: r.started_at)
    found: dict[int, Cost] = {}
    for message in messages:
        if message.role != "assistant" or not _ends_an_answer(message):
            continue
        asked = [r for r in ordered if r.started_at <= message.created_at]
        if asked:
            run = asked[-1]
            found[message.id] = Cost(run.cost_usd, run.cost_at_least and run.cost_usd is not None)
    return found


def _ends_an_answer(message: _Message) -> bool:
    """Whether ``message`` ended its answer: the model's answer, or the failure of the turn.

    The same rule as the ``answer_ended`` triggers of :func:`triggers`.
    """
    return message.status != "pending" and (message.status == "error" or not message.tool_calls)


# --- the history database's share: triggers that keep the figures, whoever writes -------------
# (SQLite's here; PostgreSQL's, written with the same fragments, in ``history/pg_schema.py``)

# "worst" status of two: error over pending over complete.
WORST_STATUS = """CASE WHEN {a} = 'error' OR {b} = 'error' THEN 'error'
         WHEN {a} = 'pending' OR {b} = 'pending' THEN 'pending' ELSE 'complete' END"""

# A thread's status again, once one of its rows is no longer pending (error stays).
STATUS_AGAIN = """CASE WHEN status = 'error' OR NEW.status = 'error' THEN 'error'
         WHEN EXISTS (SELECT 1 FROM messages WHERE status = 'pending' AND thread_id = threads.id)
           OR EXISTS (SELECT 1 FROM runs WHERE status = 'pending' AND thread_id = threads.id)
         THEN 'pending' ELSE 'complete' END"""

# When the question of the answer that NEW ended was asked: the last user message before it.
ASKED = """(SELECT created_at FROM messages AS q WHERE q.thread_id = NEW.thread_id
           AND q.role = 'user' AND q.created_at <= NEW.created_at
           ORDER BY q.created_at DESC, q.id DESC LIMIT 1)"""

_ANSWER_ENDED = """
    UPDATE messages SET answer_ms = (NEW.updated_at - {asked}) * 1000 WHERE id = NEW.id;
    UPDATE threads SET duration_ms = coalesce(duration_ms, 0)
        + (SELECT answer_ms FROM messages WHERE id = NEW.id)
    WHERE id = NEW.thread_id
      AND (SELECT answer_ms FROM messages WHERE id = NEW.id) IS NOT NULL;"""


def triggers(interrupted: str) -> str:
    """The SQL of the triggers that keep the figures and a thread's summary.

    A thread row keeps its conversation's tokens, time and status (the worst of its messages'
    and runs': error, then pending, then complete), and the tool of its first run; a message
    that ends an answer gets the answer's time. ``interrupted`` is the error of a row marked as
    cut off by a process that ended: its answer has no time.
    """
    ended = _ANSWER_ENDED.format(asked=ASKED)
    not_cut_off = "NEW.error IS NOT '" + interrupted.replace("'", "''") + "'"
    no_calls = "(NEW.status = 'error' OR coalesce(NEW.tool_calls, '[]') = '[]')"
    return f"""
CREATE TRIGGER IF NOT EXISTS thread_keyed AFTER INSERT ON threads
WHEN NEW.agent_key IS NULL AND NEW.agent_path IS NOT NULL BEGIN
    UPDATE threads SET agent_key = NEW.agent_path WHERE rowid = NEW.rowid;
END;
CREATE TRIGGER IF NOT EXISTS thread_message_added AFTER INSERT ON messages BEGIN
    UPDATE threads SET
        updated_at = NEW.created_at,
        tokens_in = CASE WHEN NEW.tokens_in IS NULL THEN tokens_in
                         ELSE coalesce(tokens_in, 0) + NEW.tokens_in END,
        tokens_out = CASE WHEN NEW.tokens_out IS NULL THEN tokens_out
                          ELSE coalesce(tokens_out, 0) + NEW.tokens_out END,
        status = {WORST_STATUS.format(a="status", b="NEW.status")}
    WHERE id = NEW.thread_id;
END;
CREATE TRIGGER IF NOT EXISTS thread_message_changed AFTER UPDATE OF status, tokens_in, tokens_out
ON messages BEGIN
    UPDATE threads SET
        tokens_in = CASE WHEN NEW.tokens_in IS OLD.tokens_in THEN tokens_in
            ELSE coalesce(tokens_in, 0) - coalesce(OLD.tokens_in, 0) + NEW.tokens_in END,
        tokens_out = CASE WHEN NEW.tokens_out IS OLD.tokens_out THEN tokens_out
            ELSE coalesce(tokens_out, 0) - coalesce(OLD.tokens_out, 0) + NEW.tokens_out END,
        status = CASE WHEN NEW.status IS OLD.status THEN status ELSE {STATUS_AGAIN} END
    WHERE id = NEW.thread_id;
END;
CREATE TRIGGER IF NOT EXISTS answer_ended AFTER UPDATE OF status ON messages
WHEN OLD.status = 'pending' AND NEW.status <> 'pending' AND NEW.role = 'assistant'
     AND {no_calls} AND {not_cut_off} BEGIN{ended}
END;
CREATE TRIGGER IF NOT EXISTS answer_ended_at_once AFTER INSERT ON messages
WHEN NEW.status <> 'pending' AND NEW.role = 'assistant' AND {no_calls} BEGIN{ended}
END;
CREATE TRIGGER IF NOT EXISTS thread_run_added AFTER INSERT ON runs
WHEN NEW.thread_id IS NOT NULL BEGIN
    UPDATE threads SET
        updated_at = NEW.started_at,
        first_run = coalesce(first_run, NEW.id),
        tool_name = coalesce(tool_name, NEW.tool_name),
        status = {WORST_STATUS.format(a="status", b="NEW.status")}
    WHERE id = NEW.thread_id;
END;
CREATE TRIGGER IF NOT EXISTS thread_run_changed AFTER UPDATE OF status ON runs
WHEN NEW.thread_id IS NOT NULL AND NEW.status IS NOT OLD.status BEGIN
    UPDATE threads SET status = {STATUS_AGAIN} WHERE id = NEW.thread_id;
END;
"""


def backfill(interrupted: str) -> str:
    """The SQL that works out, once, what :func:`triggers` keeps, for rows written before them
    (the same rules, over whole tables)."""
    not_cut_off = "error IS NOT '" + interrupted.replace("'", "''") + "'"
    return f"""
UPDATE threads SET first_run = (SELECT min(id) FROM runs WHERE runs.thread_id = threads.id);
UPDATE threads SET
    tool_name = (SELECT tool_name FROM runs WHERE runs.id = threads.first_run),
    tokens_in = (SELECT sum(tokens_in) FROM messages WHERE messages.thread_id = threads.id),
    tokens_out = (SELECT sum(tokens_out) FROM messages WHERE messages.thread_id = threads.id),
    status = CASE
        WHEN EXISTS (SELECT 1 FROM messages WHERE thread_id = threads.id AND status = 'error')
          OR EXISTS (SELECT 1 FROM runs WHERE thread_id = threads.id AND status = 'error')
        THEN 'error'
        WHEN EXISTS (SELECT 1 FROM messages WHERE thread_id = threads.id AND status = 'pending')
          OR EXISTS (SELECT 1 FROM runs WHERE thread_id = threads.id AND status = 'pending')
        THEN 'pending' ELSE 'complete' END;
UPDATE messages SET answer_ms = (updated_at - (
        SELECT created_at FROM messages AS q WHERE q.thread_id = messages.thread_id
        AND q.role = 'user' AND q.created_at <= messages.created_at
        ORDER BY q.created_at DESC, q.id DESC LIMIT 1)) * 1000
WHERE role = 'assistant' AND status <> 'pending'
  AND (status = 'error' OR coalesce(tool_calls, '[]') = '[]') AND {not_cut_off};
UPDATE threads SET duration_ms = (
    SELECT sum(answer_ms) FROM messages WHERE messages.thread_id = threads.id);
"""
