"""The history of served calls: one run row per call, one thread per conversation.

Each call gets a ``served`` thread (a new one, or the conversation it continues) created before
its session starts, so the run row points at it from the first moment; the session writes the
messages into it. The run row starts ``pending`` and ends ``complete`` with the answer or ``error``
with the reason (``cancelled`` for a call the client cancelled).

History never fails a call: if the store cannot be opened or written, the problem is logged once
on stderr and the server goes on without history. The store the server opens itself writes behind
(``history/writer.py``): rows land a few milliseconds after the call makes them.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

from mcp_export.errors import ExportError

if TYPE_CHECKING:
    from mcp.server.context import ServerRequestContext

    from mcp_export.history.store import HistoryStore
    from mcp_export.providers.base import ChatMessage
    from mcp_export.server.tools import ServedTool
    from mcp_export.session.events import FinalAnswer

__all__ = ["CallRecord", "HistoryAccess", "call_title", "caller_name"]

logger = logging.getLogger(__name__)

UNKNOWN_CALLER = "unknown MCP client"
_TITLE_LENGTH = 80


def caller_name(ctx: ServerRequestContext[Any]) -> str:
    """The calling client's name and version from its ``clientInfo`` (both eras), if it sent one."""
    params = ctx.session.client_params
    info = params.client_info if params is not None else None
    if info is None or not info.name:
        return UNKNOWN_CALLER
    return f"{info.name} {info.version}".strip() if info.version else info.name


def call_title(tool_name: str, prompt: str) -> str:
    """A call's thread title: the tool and the first line of its prompt, at most 80 characters."""
    first = prompt.strip().splitlines()[0] if prompt.strip() else ""
    title = f"{tool_name}: {first}" if first else tool_name
    return title if len(title) <= _TITLE_LENGTH else title[: _TITLE_LENGTH - 1] + "…"


class CallRecord:
    """The history of one call: its thread and its run row (all no-ops without history)."""

    def __init__(self, access: HistoryAccess, thread_id: str | None, run_id: int | None) -> None:
        self._access = access
        self.thread_id = thread_id
        self._run_id = run_id

    def _finish(self, **values: Any) -> None:
        store, run_id = self._access.store, self._run_id
        if store is None or run_id is None:
            return
        self._run_id = None
        try:
            store.finish_run(run_id, **values)
        except ExportError as exc:
            self._access.broken(exc)

    def succeeded(self, answer: FinalAnswer, thread_id: str | None) -> None:
        """The call answered."""
        self._finish(
            answer=answer.text,
            duration_ms=answer.duration_ms,
            tokens_in=answer.usage.input_tokens,
            tokens_out=answer.usage.output_tokens,
            tool_calls=len(answer.tool_calls),
        )

    def failed(self, reason: str) -> None:
        """The call ended without an answer."""
        self._finish(error=reason)

    def cancelled(self) -> None:
        """The client cancelled the call (or the connection went away)."""
        self._finish(error="cancelled by the client")


class HistoryAccess:
    """The history store of a server, opened on first use; None-safe throughout.

    Args:
        history: a store to use; True for the default store in METAAGENT_HOME; False or None for
            no history.
    """

    def __init__(self, history: HistoryStore | bool | None) -> None:
        self._given = history if not isinstance(history, bool) else None
        self.enabled = history is not None and history is not False
        self._store: HistoryStore | None = self._given
        self._owned = False

    @property
    def store(self) -> HistoryStore | None:
        """The store, opened now if needed; None when history is off or broken."""
        if self._store is None and self.enabled:
            from mcp_export.history.store import HistoryStore  # a first call: start-up stays cheap

            try:
                # write-behind: concurrent calls do not queue behind each other's commits
                self._store = HistoryStore(write_behind=True)
                self._owned = True
            except ExportError as exc:
                self.broken(exc)
        return self._store

    def broken(self, exc: ExportError) -> None:
        """Stop using a store that failed (logged once)."""
        if self.enabled:
            logger.warning("history: %s; served calls are no longer recorded", exc)
        self.enabled = False
        self._store = None

    def conversation(self, conversation_id: str, tool: ServedTool) -> list[ChatMessage] | str:
        """The messages of a conversation to continue, or the text of the refusal."""
        store = self.store
        if store is None:
            return (
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
            if (
                thread is None
                or thread.kind != "served"
                or thread.agent_path != str(tool.owner.path)
            ):
                return unknown
            return load_thread_messages(store, conversation_id)
        except ExportError as exc:
            self.broken(exc)
            return f"conversation_id {conversation_id!r} cannot be read from the history: {exc}"

    def start(
        self,
        ctx: ServerRequestContext[Any],
        tool: ServedTool,
        prompt: str,
        arguments: dict[str, Any],
        conversation_id: str | None,
    ) -> CallRecord:
        """Record the start of a call: its thread (new unless continued) and its run row."""
        store = self.store
        if store is None:
            return CallRecord(self, conversation_id, None)
        try:
            thread_id, run_id = store.start_call(
                thread_id=conversation_id,
                agent_path=str(tool.owner.path),
                agent_name=tool.owner.agent.metadata.name,
                title=call_title(tool.name, prompt),
                kind="served",
                tool_name=tool.name,
                arguments=arguments,
                filled_prompt=prompt,
                caller=caller_name(ctx),
            )
        except ExportError as exc:
            self.broken(exc)
            return CallRecord(self, conversation_id, None)
        return CallRecord(self, thread_id, run_id)

    def close(self) -> None:
        """Close the store if this object opened it."""
        store, self._store = self._store, self._given
        if store is not None and self._owned:
            store.close()
        self._owned = False
