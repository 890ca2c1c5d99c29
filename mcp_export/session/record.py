"""How a chat session writes its trail into the history store, and how a thread is read back.

Kept apart from the loop so the loop reads as the algorithm. A run writes few rows: the user
message, one assistant row per model request (inserted ``pending`` when the request starts, then
updated once to ``complete`` or ``error``) and one row per tool result. A failing history store
never fails a session: the answer matters more than its record, so write errors are logged and
the rest of the run goes on without history.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from mcp_export.errors import ExportError
from mcp_export.history.schema import INTERRUPTED
from mcp_export.providers.base import ChatMessage, ToolCallRequest, Usage

if TYPE_CHECKING:
    from mcp_export.history.store import HistoryStore, ThreadKind

__all__ = [
    "INTERRUPTED_NOTE",
    "UNANSWERED_NOTE",
    "SessionRecorder",
    "load_thread_messages",
    "repair_tool_results",
]

logger = logging.getLogger(__name__)

_TITLE_LENGTH = 80


def _title(text: str) -> str:
    line = text.strip().splitlines()[0] if text.strip() else "(empty message)"
    return line if len(line) <= _TITLE_LENGTH else line[: _TITLE_LENGTH - 1] + "…"


def _calls_data(calls: Sequence[ToolCallRequest]) -> list[dict[str, Any]] | None:
    if not calls:
        return None
    return [{"id": c.id, "name": c.name, "arguments": c.arguments} for c in calls]


class SessionRecorder:
    """The history writes of one session (a no-op object when the session has no store)."""

    def __init__(
        self,
        history: HistoryStore | None,
        *,
        thread_id: str | None,
        thread_kind: ThreadKind,
        agent_name: str,
        agent_path: str | None,
    ) -> None:
        self._history = history
        self.thread_id = thread_id
        self._kind = thread_kind
        self._agent_name = agent_name
        self._agent_path = agent_path
        self._pending: int | None = None

    def _failed(self, what: str, exc: ExportError) -> None:
        logger.warning("history: could not %s (%s); this run goes on unrecorded", what, exc)
        self._history = None

    def user_message(self, text: str) -> None:
        """Record the user's message, creating the thread on the first message."""
        history = self._history
        if history is None:
            return
        try:
            if self.thread_id is None:
                self.thread_id = history.create_thread(
                    agent_path=self._agent_path,
                    agent_name=self._agent_name,
                    title=_title(text),
                    kind=self._kind,
                )
            history.add_message(self.thread_id, "user", text, status="complete")
        except ExportError as exc:
            self._failed("record the user message", exc)

    def model_turn_started(self) -> None:
        """Insert the ``pending`` assistant row of a model request."""
        history = self._history
        if history is None or self.thread_id is None:
            return
        try:
            self._pending = history.add_message(self.thread_id, "assistant", "", status="pending")
        except ExportError as exc:
            self._failed("record the model turn", exc)

    def model_turn_finished(self, message: ChatMessage, usage: Usage) -> None:
        """Complete the pending assistant row with the model's message and token counts (a count
        the provider did not report stays NULL)."""
        history, row = self._history, self._pending
        if history is None or row is None:
            return
        self._pending = None
        try:
            history.update_message(
                row,
                content=message.content,
                status="complete",
                tool_calls=_calls_data(message.tool_calls),
                tokens_in=usage.input_tokens,
                tokens_out=usage.output_tokens,
            )
        except ExportError as exc:
            self._failed("complete the model turn", exc)

    def tool_result(self, message: ChatMessage) -> None:
        """Record one tool result message."""
        history = self._history
        if history is None or self.thread_id is None:
            return
        try:
            history.add_message(
                self.thread_id,
                "tool",
                message.content,
                status="complete",
                tool_call_id=message.tool_call_id,
                name=message.name,
                is_error=message.is_error,
            )
        except ExportError as exc:
            self._failed("record a tool result", exc)

    def failed(self, error: str) -> None:
        """Record why the run ended without an answer, as an assistant row with status ``error``.

        The pending row of the model request in flight becomes that row; when no request was in
        flight (turn limit, timeout or cancel during tool calls) one is added, so the thread
        never reads as if the run had ended well.
        """
        history, row = self._history, self._pending
        if history is None or self.thread_id is None:
            return
        self._pending = None
        try:
            if row is None:
                row = history.add_message(self.thread_id, "assistant", "", status="error")
            history.update_message(row, status="error", error=error)
        except ExportError as exc:
            self._failed("record the failure", exc)


def repair_tool_results(messages: list[ChatMessage], reason: str) -> None:
    """Give every tool call of the last assistant message a result, in place.

    Model APIs reject a conversation where an assistant's tool calls lack results; a run that
    stopped between asking for tools and getting their results (turn limit, timeout, crash) would
    otherwise poison the thread for every later message.
    """
    for index in range(len(messages) - 1, -1, -1):
        message = messages[index]
        if message.role == "assistant":
            if not message.tool_calls:
                return
            answered = {m.tool_call_id for m in messages[index + 1 :] if m.role == "tool"}
            for call in message.tool_calls:
                if call.id not in answered:
                    messages.append(
                        ChatMessage(
                            "tool",
                            f"not run: {reason}",
                            tool_call_id=call.id,
                            name=call.name,
                            is_error=True,
                        )
                    )
            return
        if message.role == "user":
            return


def _parse_calls(raw: Any) -> tuple[ToolCallRequest, ...]:
    if isinstance(raw, str):
        raw = json.loads(raw) if raw else None
    if not raw:
        return ()
    calls: list[ToolCallRequest] = []
    for item in raw:
        arguments = item.get("arguments") or {}
        if isinstance(arguments, str):
            arguments = json.loads(arguments) if arguments else {}
        calls.append(ToolCallRequest(str(item["id"]), str(item["name"]), dict(arguments)))
    return tuple(calls)


INTERRUPTED_NOTE = "(this turn was interrupted before an answer)"
"""What the model is shown for a turn whose process ended before it answered."""
UNANSWERED_NOTE = "(this turn ended without an answer)"
"""What the model is shown for a turn that failed or was cancelled before it answered."""


def _close_turn(messages: list[ChatMessage], interrupted: bool) -> None:
    """End a turn the way a model API accepts it: every tool call with a result, and an
    assistant message last; a turn that never got its answer gets a note saying so."""
    repair_tool_results(messages, "the run ended before this tool answered")
    if not messages:
        return
    last = messages[-1]
    if last.role == "assistant" and not last.tool_calls:
        return
    messages.append(ChatMessage("assistant", INTERRUPTED_NOTE if interrupted else UNANSWERED_NOTE))


def load_thread_messages(history: HistoryStore, thread_id: str) -> list[ChatMessage]:
    """The conversation of a history thread, ready to continue (``prior_messages`` of a session).

    Assistant rows that never completed (``pending`` from a crash, ``error`` from a failed model
    request) and empty answers (no text, no tool call: the session failed the run) are left out:
    they are not something the model said, and some model APIs refuse an empty message. Tool
    calls left without a result get an error result, and a turn that ended without an answer
    gets an assistant note saying so (:data:`INTERRUPTED_NOTE` when its process ended first,
    :data:`UNANSWERED_NOTE` when it failed): the model never sees two user turns in a row, nor
    takes an unanswered question for one it answered, and every model API accepts the thread.

    Raises:
        HistoryError: the store cannot be read.
    """
    messages: list[ChatMessage] = []
    failed = False  # the current turn ended with an error of its own (not a process that ended)
    for row in history.messages(thread_id):
        if row.role == "tool":
            messages.append(
                ChatMessage(
                    "tool",
                    row.content or "",
                    tool_call_id=row.tool_call_id,
                    name=row.name,
                    is_error=row.is_error,
                )
            )
        elif row.role == "user":
            if any(m.role == "user" for m in messages):
                _close_turn(messages, interrupted=not failed)
            failed = False
            messages.append(ChatMessage("user", row.content or ""))
        elif row.role == "assistant" and row.status == "complete":
            calls = _parse_calls(row.tool_calls)
            if calls or (row.content or "").strip():
                messages.append(ChatMessage("assistant", row.content or "", tool_calls=calls))
        elif row.role == "assistant" and row.status == "error" and row.error != INTERRUPTED:
            failed = True
        # system rows, unfinished assistant rows and empty answers (the session failed them)
        # are not part of the conversation
    if any(m.role == "user" for m in messages):
        _close_turn(messages, interrupted=not failed)
    return messages
