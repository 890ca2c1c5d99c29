"""The reading half of the history store: threads, messages, runs and pages of conversations.

:class:`StoreReads` is the base of ``HistoryStore`` (``history/store.py``): every read first
waits until the writes made before it are in the database (``flush``), then reads on the
database's connection. The SQL is in ``history/reads.py`` and ``history/conversations.py``.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import Any

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
from mcp_export.history.schema import (
    CaseRunRecord,
    MessageStatus,
    RunRecord,
    StoredMessage,
    ThreadKind,
    ThreadRecord,
)
from mcp_export.history.versions import VersionFigures, stored_version, version_figures

__all__ = ["StoreReads"]


class StoreReads(ABC):
    """The reads of a history store (``HistoryStore`` holds the database and the writes)."""

    _db: Database

    @abstractmethod
    def flush(self) -> None:
        """Wait until every write made so far is in the database."""

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
        thread_id: str | None = None,
        limit: int = 500,
    ) -> list[RunRecord]:
        """Runs, newest first, optionally only an agent's, a tool's, those with a status or
        those of a conversation (``thread_id``)."""
        self.flush()
        with self._db.connection("read") as conn:
            return reads.runs(
                conn,
                agent_path=agent_path,
                tool_name=tool_name,
                status=status,
                thread_id=thread_id,
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
        thread_id: str | None = None,
        limit: int = 20000,
    ) -> list[CaseRunRecord]:
        """Runs of test cases, newest first, optionally one agent's, one matrix run's or the one
        whose served call is the thread ``thread_id``."""
        self.flush()
        with self._db.connection("read") as conn:
            return reads.case_runs(
                conn,
                agent_path=agent_path,
                matrix_id=matrix_id,
                thread_id=thread_id,
                limit=limit,
            )

    def tool_versions(self, agent_path: str, tool_name: str) -> list[VersionFigures]:
        """The versions of a tool its case runs recorded, newest first, with their figures
        (``history/versions.py``); ``agent_path`` is the agent's key (``agent_key``)."""
        self.flush()
        with self._db.connection("read") as conn:
            return version_figures(conn, agent_path, tool_name)

    def stored_version(
        self, agent_path: str, tool_name: str, fingerprint: str
    ) -> dict[str, Any] | None:
        """What a recorded version of a tool is made of (None: no run recorded it)."""
        self.flush()
        with self._db.connection("read") as conn:
            return stored_version(conn, agent_path, tool_name, fingerprint)

    def latest_thread(
        self, *, agent_path: str | None = None, kind: ThreadKind | None = None
    ) -> ThreadRecord | None:
        """The most recently active thread (of an agent, of a kind), or None."""
        found = self.threads(agent_path=agent_path, kind=kind, limit=1)
        return found[0] if found else None
