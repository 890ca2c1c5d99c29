"""The writing half of the history store: the records of chats, served calls and test cases.

:class:`StoreWrites` is a base of ``HistoryStore`` (``history/store.py``): each record is one
row inserted or updated through the store's ``_insert`` and ``_update``, which stamp the writer
and either write at once or hand the write to the background writer (``history/writer.py``).
The rows' columns and their redaction are ``history/rows.py``'s.
"""

from __future__ import annotations

import time
import uuid
from abc import ABC, abstractmethod
from functools import lru_cache
from typing import Any

from mcp_export.errors import HistoryError
from mcp_export.history.backend import Database
from mcp_export.history.schema import MessageStatus, ThreadKind, agent_key

__all__ = ["StoreWrites"]

_agent_key = lru_cache(maxsize=64)(agent_key)  # a served call must not resolve a path each time


class StoreWrites(ABC):
    """The records a history store writes (``HistoryStore`` holds the database and the writer)."""

    _db: Database
    location: str
    _kept_versions: set[str]
    """The fingerprints of the versions this store recorded (``keep_version``)."""

    @abstractmethod
    def _insert(self, table: str, **values: Any) -> int:
        """Insert one row stamped with this process as its writer; returns its id."""

    @abstractmethod
    def _update(self, table: str, row_id: int, changes: dict[str, Any]) -> None:
        """Set the columns of one row that ``changes`` gives (None leaves a column as it is)."""

    def create_thread(
        self,
        *,
        agent_path: str | None,
        agent_name: str,
        title: str,
        kind: ThreadKind,
        tool_name: str | None = None,
    ) -> str:
        """Start a thread; returns its id (a uuid4 hex string). ``tool_name``: the tool the
        thread is about when no run of it will say so (its first run's tool otherwise)."""
        thread_id, now = uuid.uuid4().hex, time.time()
        named = {"tool_name": tool_name} if tool_name is not None else {}
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
            **named,
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
        fingerprint: str | None = None,
    ) -> int:
        """Record the start of a tool run (status ``pending``; ``fingerprint``: the version of
        the tool it runs, ``versions/fingerprint.py``); returns its id."""
        return self._insert(
            "runs",
            thread_id=thread_id,
            tool_name=tool_name,
            arguments=arguments,
            filled_prompt=filled_prompt,
            caller=caller,
            fingerprint=fingerprint,
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
        fingerprint: str | None = None,
        version: dict[str, Any] | None = None,
    ) -> tuple[str, int]:
        """Record the start of one tool call; returns its thread id and run id.

        The thread is new unless ``thread_id`` continues one; the run row starts ``pending``.
        ``version``: what the version ``fingerprint`` is made of (``keep_version``).
        """
        if fingerprint is not None and version is not None:
            self.keep_version(fingerprint, version)
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
            fingerprint=fingerprint,
        )
        return thread_id, run_id

    def keep_version(self, fingerprint: str, version: dict[str, Any]) -> None:
        """Record what the version ``fingerprint`` of a tool is made of (its decisive fields,
        ``versions/fingerprint.py``; redacted as every JSON column is), so that a version only
        ever served is listed and can be compared and restored: once per store, and a record
        that is there already (another process's) is kept as it is."""
        if fingerprint in self._kept_versions:
            return
        self._insert("served_versions", id=fingerprint, version=version, created_at=time.time())
        self._kept_versions.add(fingerprint)

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
        cost_usd: float | None = None,
        cost_at_least: bool = False,
    ) -> None:
        """Record how a run ended: ``complete`` with its answer, or ``error`` with ``error``.

        The figures are those of the run's own answer (``history/figures.py``): ``duration_ms``
        from the question to the answer, the tokens of its model requests. A figure that is None
        (a failed run's time, a count the model server did not report) stays NULL: absent is
        not 0. ``cost_usd``: what its model requests cost (None unknown, ``cost_at_least`` a
        lower bound; ``server/cost.py``).
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
                "cost_usd": cost_usd,
                "cost_at_least": int(cost_at_least),
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
        thread_id: str | None = None,
        caller: dict[str, Any] | None = None,
        cost_usd: float | None = None,
        cost_at_least: bool = False,
        fingerprint: str | None = None,
        version: dict[str, Any] | None = None,
    ) -> int:
        """Record one run of a test case on one model (``thread_id``: the conversation of the
        served call that ran it; ``caller``: a caller case's step and caller transcript;
        ``cost_usd``: what it cost, None unknown, ``cost_at_least`` a lower bound;
        ``fingerprint`` and ``version``: the tool's version, ``versions/fingerprint.py``);
        returns the row id."""
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
            thread_id=thread_id,
            caller=caller,
            cost_usd=cost_usd,
            cost_at_least=int(cost_at_least),
            fingerprint=fingerprint,
            version=version,
            created_at=time.time(),
        )
