"""The history of served calls: one run row per call, one thread per conversation.

Each call gets a ``served`` thread (a new one, or the conversation it continues) created before
its session starts, so the run row points at it from the first moment; the session writes the
messages into it. The run row starts ``pending`` and ends ``complete`` with the answer or ``error``
with the reason (``cancelled`` for a call the client cancelled).

History never fails a call: if the store of this machine (an SQLite file) cannot be opened or
written, the problem is logged once on stderr and the server goes on without history (``serve``
opens a named store at start-up with :meth:`HistoryAccess.open_now`, so one that cannot be
reached is refused before any call). A shared store (PostgreSQL) is never given up: a database
restart or a network outage passes. While it is away, new calls answer and their writes wait
in the write-behind queue (until the room kept for them is full: then new calls go unrecorded,
said once per outage), a call that continues a conversation is refused with a message to try
again, and :meth:`HistoryAccess.problem` says why the server is not ready; once it is back, the
writes that waited are applied and calls are recorded again. The
store the server opens itself writes behind (``history/writer.py``): rows land a few milliseconds
after the call makes them. A call of a conversation tool waits until its rows are in the
database before it answers (:meth:`CallRecord.settled`): the next call of the conversation may
come to another instance, or another process on the same file, which must find them.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import anyio

from mcp_export.errors import ExportError

if TYPE_CHECKING:
    from mcp.server.context import ServerRequestContext

    from mcp_export.costs.cost import Cost
    from mcp_export.history.schema import ThreadRecord
    from mcp_export.history.store import HistoryStore
    from mcp_export.providers.base import ChatMessage
    from mcp_export.server.cost import CallPricing
    from mcp_export.server.tools import ServedTool
    from mcp_export.session.events import FinalAnswer, SessionFailed

__all__ = [
    "CACHED_TITLE",
    "CallRecord",
    "HistoryAccess",
    "NoConversation",
    "call_title",
    "caller_name",
]

logger = logging.getLogger(__name__)

UNKNOWN_CALLER = "unknown MCP client"
CACHED_TITLE = "(cached) "
"""The start of the history title of a call answered from the result cache."""
_TITLE_LENGTH = 80
_SETTLE_WITHIN = 10.0
"""Seconds a call waits for its rows to reach a shared store before it answers anyway."""


def caller_name(ctx: ServerRequestContext[Any]) -> str:
    """The calling client's name and version from its ``clientInfo`` (both eras), if it sent one."""
    params = ctx.session.client_params
    info = params.client_info if params is not None else None
    if info is None or not info.name:
        return UNKNOWN_CALLER
    return f"{info.name} {info.version}".strip() if info.version else info.name


def _is_conversation_of(thread: ThreadRecord, tool: ServedTool) -> bool:
    """Whether ``thread`` is a conversation of ``tool``: a served thread of an agent of the same
    name (``metadata.name``), started by a tool of the same name (the agent file's, or the name
    it was served under: a thread recorded before runs kept the agent file's name).

    Not the agent file's path: instances behind one address may serve copies of the file at
    different paths (containers, checkouts), and each must continue the others' conversations.
    """
    return (
        thread.kind == "served"
        and thread.agent_name == tool.owner.agent.metadata.name
        and thread.tool_name in (tool.definition.name, tool.name)
    )


def call_title(tool_name: str, prompt: str) -> str:
    """A call's thread title: the tool and the first line of its prompt, at most 80 characters."""
    first = prompt.strip().splitlines()[0] if prompt.strip() else ""
    title = f"{tool_name}: {first}" if first else tool_name
    return title if len(title) <= _TITLE_LENGTH else title[: _TITLE_LENGTH - 1] + "…"


class CallRecord:
    """The history of one call: its thread and its run row (all no-ops without history).

    ``pricing`` reckons what the call cost (``server/cost.py``); None: unknown.
    """

    def __init__(
        self,
        access: HistoryAccess,
        thread_id: str | None,
        run_id: int | None,
        pricing: CallPricing | None = None,
    ) -> None:
        self._access = access
        self.thread_id = thread_id
        self._run_id = run_id
        self._started = time.monotonic()
        self.pricing = pricing

    def cost(self, outcome: FinalAnswer | SessionFailed) -> Cost:
        """What the call that ended with ``outcome`` cost (a failed run's requests cost too)."""
        from mcp_export.costs.cost import UNKNOWN  # the first call's: start-up stays cheap

        return UNKNOWN if self.pricing is None else self.pricing.cost(outcome.usage)

    def _finish(self, **values: Any) -> None:
        store, run_id = self._access.opened, self._run_id
        if store is None or run_id is None:
            return
        self._run_id = None
        try:
            store.finish_run(run_id, **values)
        except ExportError as exc:
            self._access.failed(exc)

    def succeeded(self, answer: FinalAnswer, thread_id: str | None, cost: Cost) -> None:
        """The call answered; it cost ``cost`` (:meth:`cost`)."""
        self._finish(
            answer=answer.text,
            duration_ms=answer.duration_ms,
            tokens_in=answer.usage.exact_input,
            tokens_out=answer.usage.exact_output,
            tool_calls=len(answer.tool_calls),
            cost_usd=cost.usd,
            cost_at_least=cost.at_least,
        )

    def answered_from_cache(self, answer: str, duration_ms: float) -> None:
        """The call was answered from the result cache: no model turn, no token, no tool call
        (its cost: no token at the model's price)."""
        from mcp_export.providers.base import Usage  # as in cost()

        cost = None if self.pricing is None else self.pricing.cost(Usage(0, 0))
        self._finish(
            answer=answer,
            duration_ms=duration_ms,
            tokens_in=0,
            tokens_out=0,
            tool_calls=0,
            cost_usd=None if cost is None else cost.usd,
        )

    def failed(self, failure: SessionFailed | str, cost: Cost | None = None) -> None:
        """The call ended without an answer; a run's failure keeps the count of the tool calls
        it made (its messages hold them) and what its model requests cost (``cost``). Its
        figures stay NULL: they are an answer's."""
        if isinstance(failure, str):
            self._finish(error=failure)
        else:
            self._finish(
                error=failure.message,
                tool_calls=len(failure.tool_calls),
                cost_usd=None if cost is None else cost.usd,
                cost_at_least=cost is not None and cost.at_least,
            )

    def cancelled(self) -> None:
        """The client cancelled the call (or the connection went away); its time is the time
        from its start to the cancellation."""
        elapsed = (time.monotonic() - self._started) * 1000
        self._finish(error="cancelled by the client", duration_ms=elapsed)

    async def settled(self) -> None:
        """Wait until the call's rows are in the store, so another instance (or another process
        on the same SQLite file) finds them.

        At once without history, when the writes are in already, or while a shared database
        cannot be reached (the rows follow once it is back). Never raises: after 10 s the call
        answers anyway, and the rows follow.
        """
        store = self._access.opened
        if store is None:
            return
        loop = asyncio.get_running_loop()
        done = asyncio.Event()

        def wake() -> None:
            with contextlib.suppress(RuntimeError):  # the loop closed meanwhile
                loop.call_soon_threadsafe(done.set)

        if not store.on_settled(wake):
            return
        with anyio.move_on_after(_SETTLE_WITHIN) as waited:
            await done.wait()
        if waited.cancelled_caught:
            logger.warning(
                "history: the rows of a call were not in %s within %g s; a continuation on "
                "another instance may not find them yet",
                store.location,
                _SETTLE_WITHIN,
            )


@dataclass(frozen=True)
class NoConversation:
    """Why a conversation cannot be continued: what the caller is told, and whose doing it is.

    Attributes:
        text: the refusal, for the caller.
        unavailable: the history store cannot be read now (this server's state), rather than
            the caller naming a conversation that is not there.
    """

    text: str
    unavailable: bool = False


class HistoryAccess:
    """The history store of a server, opened on first use; None-safe throughout.

    Args:
        history: a store to use; a store location (an SQLite path, ``sqlite:///path`` or
            ``postgresql://…``, see ``history.store.open_store``); True for the default store
            in METAAGENT_HOME; False or None for no history.
    """

    def __init__(self, history: HistoryStore | bool | str | Path | None) -> None:
        self._location: str | Path | None = None
        if isinstance(history, str | Path):
            self._location, history = history, True
        self._given = history if not isinstance(history, bool) else None
        self.enabled = history is not None and history is not False
        self._store: HistoryStore | None = self._given
        self._owned = False
        self._broken: str | None = None
        self._unrecorded_said = False

    @property
    def opened(self) -> HistoryStore | None:
        """The store, opened now if needed; None when history is off or was given up."""
        if self._store is None and self.enabled:
            try:
                self.open_now()
            except ExportError as exc:
                self.failed(exc)
        return self._store

    @property
    def store(self) -> HistoryStore | None:
        """The store to record a new call in: :attr:`opened`, or None while a shared store
        cannot be reached and the writes waiting for it fill the room kept for them (the call
        goes unrecorded; said once per outage)."""
        store = self.opened
        if store is None or not store.shared:
            return store
        if not store.backlog_full():
            self._unrecorded_said = store.unreachable is not None and self._unrecorded_said
            return store
        if not self._unrecorded_said:
            self._unrecorded_said = True
            logger.warning(
                "history: too many writes wait for %s, which cannot be reached now; new calls "
                "go unrecorded until it is back",
                store.location,
            )
        return None

    def open_now(self) -> HistoryStore | None:
        """Open the store now (``serve`` at start-up: a store that cannot be reached is
        refused before the first call); None when history is off.

        Raises:
            HistoryError: the store cannot be opened; the message says where (a database URL
                without its password) and what to do.
        """
        if self._store is None and self.enabled:
            from mcp_export.history.store import open_store  # first use: start-up stays cheap

            # write-behind: concurrent calls do not queue behind each other's commits
            self._store = open_store(self._location, write_behind=True)
            self._owned = True
        return self._store

    def failed(self, exc: ExportError) -> None:
        """Stop using a store of this machine that failed (logged once); for a shared store,
        only say that the call goes unrecorded (its database may be back for the next)."""
        store = self._store
        if store is not None and store.shared:
            logger.warning("history: %s; this call goes unrecorded", exc)
            return
        if self.enabled:
            logger.warning("history: %s; served calls are no longer recorded", exc)
            self._broken = f"the history store failed: {exc}"
        self.enabled = False
        self._store = None

    def problem(self) -> str | None:
        """Why the history store cannot be used now, or None: it answers, or history is off.

        Blocking (a round trip to a server's database): call it from a worker thread. A store
        that does not answer now is not given up: it may be back for the next call.
        """
        if not self.enabled:
            return self._broken
        try:
            store = self.open_now()
            if store is not None:
                store.ping()
        except ExportError as exc:
            return str(exc)
        return None

    def conversation(
        self, conversation_id: str, tool: ServedTool
    ) -> list[ChatMessage] | NoConversation:
        """The messages of a conversation to continue, or why it cannot be continued."""
        store = self.opened
        if store is None:
            return NoConversation(
                f"conversation_id {conversation_id!r} cannot be continued: this server keeps no "
                "history (it runs with --no-history); omit conversation_id to start a new "
                "conversation"
            )
        from mcp_export.session.record import load_thread_messages  # as HistoryStore above

        unknown = (
            f"unknown conversation_id {conversation_id!r}: no conversation of {tool.name} has "
            "that id; omit it to start a new conversation"
        )
        try:
            thread = store.thread(conversation_id)
            if thread is None or not _is_conversation_of(thread, tool):
                return NoConversation(unknown)
            return load_thread_messages(store, conversation_id)
        except ExportError as exc:
            return self.unreadable(conversation_id, exc)

    def unreadable(self, conversation_id: str, exc: ExportError) -> NoConversation:
        """The refusal of a conversation the store failed to claim or read (a store of this
        machine that fails is given up, as :meth:`failed` says)."""
        store = self._store
        if store is not None and store.shared:
            return NoConversation(
                f"conversation_id {conversation_id!r} cannot be continued now: {exc}; call "
                "again in a moment",
                unavailable=True,
            )
        self.failed(exc)
        return NoConversation(
            f"conversation_id {conversation_id!r} cannot be read from the history: {exc}",
            unavailable=True,
        )

    def start(
        self,
        ctx: ServerRequestContext[Any],
        tool: ServedTool,
        prompt: str,
        arguments: dict[str, Any],
        conversation_id: str | None,
        *,
        cached: bool = False,
        pricing: CallPricing | None = None,
    ) -> CallRecord:
        """Record the start of a call: its thread (new unless continued) and its run row; the
        thread of a call ``cached`` (answered from the result cache) is titled so; ``pricing``
        reckons its cost (None: unknown)."""
        store = self.store
        if store is None:
            return CallRecord(self, conversation_id, None, pricing)
        try:
            thread_id, run_id = store.start_call(
                thread_id=conversation_id,
                agent_path=str(tool.owner.path),
                agent_name=tool.owner.agent.metadata.name,
                title=call_title(f"{CACHED_TITLE}{tool.name}" if cached else tool.name, prompt),
                kind="served",
                # The agent file's tool, whatever name it is served under (``--prefix``): its
                # calls count for its versions; the title keeps the name the client called.
                tool_name=tool.definition.name,
                arguments=arguments,
                filled_prompt=prompt,
                caller=caller_name(ctx),
                fingerprint=tool.fingerprint,
                version=tool.version.decisive,
            )
        except ExportError as exc:
            self.failed(exc)
            return CallRecord(self, conversation_id, None, pricing)
        return CallRecord(self, thread_id, run_id, pricing)

    def close(self) -> None:
        """Close the store if this object opened it."""
        store, self._store = self._store, self._given
        if store is not None and self._owned:
            store.close()
        self._owned = False
