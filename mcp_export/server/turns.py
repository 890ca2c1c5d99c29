"""One turn at a time per conversation, whichever instance each turn reaches.

A call that continues a conversation first claims it (``history/turns.py``: a row in SQLite, an
advisory lock in PostgreSQL), then reads it, runs, and lets it go once its own rows are in the
store. A second turn of the same conversation that comes meanwhile, to this instance or to
another, waits for the claim up to :data:`TURN_WAIT_S` seconds; if the first turn has not
answered by then, it is refused with an ``isError`` result telling the client to call again
when the other turn has answered. Two turns therefore never read the same conversation and
answer without each other (a silent fork).

A claim never outlives its holder: an instance that dies mid-turn lets its claim go with its
process (SQLite) or its database session (PostgreSQL), and the next turn finds the interrupted
one marked as such (``session/record.py``).
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

import anyio

from mcp_export.errors import ExportError
from mcp_export.server.history import NoConversation

if TYPE_CHECKING:
    from mcp_export.history.store import HistoryStore
    from mcp_export.providers.base import ChatMessage
    from mcp_export.server.history import HistoryAccess
    from mcp_export.server.tools import ServedTool

__all__ = ["TURN_WAIT_S", "ConversationTurn", "busy_text", "open_conversation"]

logger = logging.getLogger(__name__)

TURN_WAIT_S = 5.0
"""Seconds a turn waits for another turn of its conversation before it is refused."""
_NO_STORE = NoConversation(
    "conversations cannot be continued: the history store is not open", unavailable=True
)
_FIRST_POLL_S = 0.05
_LONGEST_POLL_S = 0.5


def busy_text(conversation_id: str) -> str:
    """What a turn is told when another turn of its conversation holds it too long."""
    return (
        f"conversation_id {conversation_id!r}: another turn of this conversation is in progress "
        f"(still after {TURN_WAIT_S:g} s); call again when it has answered, with the same "
        "conversation_id"
    )


class ConversationTurn:
    """The claim of one conversation for one turn; :meth:`release` lets it go."""

    def __init__(self, store: HistoryStore, conversation_id: str) -> None:
        self._store: HistoryStore | None = store
        self.conversation_id = conversation_id

    async def release(self) -> None:
        """Let the conversation go (once; also while the call is being cancelled)."""
        store, self._store = self._store, None
        if store is None:
            return
        with anyio.CancelScope(shield=True):
            try:
                await anyio.to_thread.run_sync(store.release_turn, self.conversation_id)
            except ExportError as exc:
                logger.warning(
                    "history: could not let conversation %s go (%s); it is free again when "
                    "this process ends or its database session does",
                    self.conversation_id,
                    exc,
                )


def _claim_and_read(
    history: HistoryAccess, store: HistoryStore, conversation_id: str, tool: ServedTool
) -> list[ChatMessage] | NoConversation | None:
    """One try (blocking, on a worker thread): claim the conversation and read it.

    Returns:
        Its messages, the claim held; the refusal of the read (unknown id…), the claim let go;
        None while another turn holds it.

    Raises:
        HistoryError: the claim could not be asked for (the store cannot be reached).
    """
    if not store.claim_turn(conversation_id):
        return None
    try:
        found = history.conversation(conversation_id, tool)
    except BaseException:
        _let_go(store, conversation_id)
        raise
    if isinstance(found, NoConversation):
        _let_go(store, conversation_id)
    return found


def _let_go(store: HistoryStore, conversation_id: str) -> None:
    try:
        store.release_turn(conversation_id)
    except ExportError as exc:
        logger.warning("history: could not let conversation %s go (%s)", conversation_id, exc)


async def open_conversation(
    history: HistoryAccess, conversation_id: str, tool: ServedTool
) -> tuple[list[ChatMessage], ConversationTurn] | NoConversation:
    """Claim a conversation for this turn and read it, waiting up to :data:`TURN_WAIT_S` for
    another turn of it to end; or the text of the refusal.

    Returns:
        The conversation's messages and the claim (to :meth:`ConversationTurn.release` once the
        turn's rows are in the store), or the refusal: no history, an unknown id, a store that
        cannot be reached, another turn in progress.
    """
    store = history.opened
    if store is None:
        refused = history.conversation(conversation_id, tool)
        return refused if isinstance(refused, NoConversation) else _NO_STORE
    deadline = anyio.current_time() + TURN_WAIT_S
    pause = _FIRST_POLL_S
    while True:
        try:
            # Shielded: a claim made on the thread while the call is cancelled must not be lost.
            with anyio.CancelScope(shield=True):
                found = await anyio.to_thread.run_sync(
                    _claim_and_read, history, store, conversation_id, tool
                )
        except ExportError as exc:
            return history.unreadable(conversation_id, exc)
        if isinstance(found, NoConversation):
            return found
        if found is not None:
            return found, ConversationTurn(store, conversation_id)
        left = deadline - anyio.current_time()
        if left <= 0:
            return NoConversation(busy_text(conversation_id))
        await anyio.sleep(min(pause, left))
        pause = min(pause * 1.5, _LONGEST_POLL_S)
