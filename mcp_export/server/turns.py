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

if TYPE_CHECKING:
    from mcp_export.history.store import HistoryStore
    from mcp_export.providers.base import ChatMessage
    from mcp_export.server.history import HistoryAccess
    from mcp_export.server.tools import ServedTool

__all__ = ["TURN_WAIT_S", "ConversationTurn", "busy_text", "open_conversation"]

logger = logging.getLogger(__name__)

TURN_WAIT_S = 5.0
"""Seconds a turn waits for another turn of its conversation before it is refused."""
_NO_STORE = "conversations cannot be continued: the history store is not open"
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


async def _claim(store: HistoryStore, conversation_id: str) -> bool:
    """Claim the conversation, waiting up to :data:`TURN_WAIT_S` for another turn to end."""
    deadline = anyio.current_time() + TURN_WAIT_S
    pause = _FIRST_POLL_S
    while True:
        # Shielded: a claim made in the thread while the call is cancelled must not be lost.
        with anyio.CancelScope(shield=True):
            held = await anyio.to_thread.run_sync(store.claim_turn, conversation_id)
        if held:
            return True
        left = deadline - anyio.current_time()
        if left <= 0:
            return False
        await anyio.sleep(min(pause, left))
        pause = min(pause * 1.5, _LONGEST_POLL_S)


async def open_conversation(
    history: HistoryAccess, conversation_id: str, tool: ServedTool
) -> tuple[list[ChatMessage], ConversationTurn] | str:
    """Claim a conversation for this turn and read it; or the text of the refusal.

    Returns:
        The conversation's messages and the claim (to :meth:`ConversationTurn.release` once the
        turn's rows are in the store), or the refusal: no history, an unknown id, a store that
        cannot be reached, another turn in progress.
    """
    store = history.opened
    if store is None:
        refused = history.conversation(conversation_id, tool)
        return refused if isinstance(refused, str) else _NO_STORE
    try:
        held = await _claim(store, conversation_id)
    except ExportError as exc:
        return history.unreadable(conversation_id, exc)
    if not held:
        return busy_text(conversation_id)
    turn = ConversationTurn(store, conversation_id)
    try:
        found = await anyio.to_thread.run_sync(history.conversation, conversation_id, tool)
    except BaseException:
        await turn.release()
        raise
    if isinstance(found, str):
        await turn.release()
        return found
    return found, turn
