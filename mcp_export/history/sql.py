"""What the history's SQL needs of a database, and where its two dialects differ.

The reads, the pages of conversations and the writes are written once, in SQLite's dialect with
``?`` placeholders, against :class:`Connection` (``sqlite3.Connection`` is one; the PostgreSQL
backend wraps its connection in one that takes ``?``). What the two databases spell differently
is a :class:`Dialect` the caller hands in, never a test of which database it is.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

__all__ = ["POSTGRESQL", "SQLITE", "Connection", "Cursor", "Dialect", "dicts", "like_pattern"]


class Cursor(Protocol):
    """The result of one statement."""

    @property
    def description(self) -> Any: ...

    @property
    def rowcount(self) -> int: ...

    def fetchone(self) -> Any: ...

    def fetchall(self) -> list[Any]: ...

    def __iter__(self) -> Iterator[Any]: ...


class Connection(Protocol):
    """A connection that runs one statement with ``?`` placeholders."""

    def execute(self, sql: str, parameters: Sequence[Any] = ..., /) -> Cursor: ...


@dataclass(frozen=True)
class Dialect:
    """How one database spells what the history's SQL needs.

    Attributes:
        name: ``sqlite`` or ``postgresql``.
        same: the operator that says two values are equal, NULL being equal to NULL.
        ascii_like: the operator that matches a LIKE pattern ignoring the case of ASCII letters.
        folded: the condition that a column (``{field}``) contains a case-folded text (the
            parameter, :meth:`fold` of what was searched for).
        driving_join: a join that keeps its left table the outer loop of the plan (SQLite's
            planner takes ``CROSS JOIN`` as that order; PostgreSQL plans a plain join itself).
        said_count: a query counting, up to its second parameter, the messages whose text
            contains the first (:meth:`said`) by the full-text index of the messages.
        said_in: the condition that thread ``t`` has a message whose text contains the
            parameter (:meth:`said`), by the same index.
    """

    name: str
    same: str
    ascii_like: str
    folded: str
    driving_join: str
    said_count: str
    said_in: str

    def fold(self, text: str) -> str:
        """``text`` as :attr:`folded` compares it."""
        return text.casefold() if self.name == "sqlite" else text.lower()

    def said(self, text: str) -> str:
        """An ASCII ``text`` of three characters or more as :attr:`said_in` looks for it: an
        FTS5 phrase in SQLite (a trigram index: a part of a word matches), a LIKE pattern in
        PostgreSQL (a pg_trgm index)."""
        if self.name == "sqlite":
            return '"' + text.replace('"', '""') + '"'
        return like_pattern(text)


def like_pattern(text: str) -> str:
    """A LIKE pattern (with ``\\`` as its escape) that matches a text containing ``text``."""
    return "%" + text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%"


SQLITE = Dialect(
    name="sqlite",
    same="IS",
    ascii_like="LIKE",
    folded="history_folded_contains({field}, ?)",
    driving_join="CROSS JOIN",
    said_count="SELECT count(*) FROM (SELECT 1 FROM messages_text WHERE messages_text MATCH ? "
    "LIMIT ?)",
    said_in="t.id IN (SELECT m.thread_id FROM messages AS m WHERE m.id IN "
    "(SELECT rowid FROM messages_text WHERE messages_text MATCH ?))",
)
# lower() folds every letter the database's character type knows (a UTF-8 locale, or C.UTF-8);
# PostgreSQL 15 has no casefold, so "ß" does not match "SS" there.
POSTGRESQL = Dialect(
    name="postgresql",
    same="IS NOT DISTINCT FROM",
    ascii_like="ILIKE",
    folded="strpos(lower({field}), ?) > 0",
    driving_join="JOIN",
    said_count="SELECT count(*) FROM (SELECT 1 FROM messages WHERE content ILIKE ? ESCAPE '\\' "
    "LIMIT ?) AS said",
    said_in="t.id IN (SELECT m.thread_id FROM messages AS m WHERE m.content ILIKE ? ESCAPE '\\')",
)


def dicts(cursor: Cursor) -> Iterator[dict[str, Any]]:
    """The rows of ``cursor`` as dicts keyed by column name."""
    names = [d[0] for d in cursor.description]
    for row in cursor:
        yield dict(zip(names, row, strict=True))
