"""What one run shares between the chat loop (``session.chat``) and the typed loop
(``session.typed``): its accumulated state, the session as the typed loop sees it, and the
notice of the last model request.

Below both so neither imports the other for them.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Protocol

from mcp_export.providers.base import ChatMessage, ModelRequest, Provider, ToolCallRequest, Usage
from mcp_export.session.events import OutputChecked, SessionEvent, ToolCallRecord
from mcp_export.session.steps import StepReporter

__all__ = ["Emit", "RunState", "TurnSession", "last_request_notice"]

Emit = Callable[[SessionEvent | None], None]


@dataclass
class RunState:
    """What one run has accumulated so far."""

    started: float
    steps: StepReporter
    turns: int = 0
    usages: list[Usage] = field(default_factory=lambda: list[Usage]())
    calls: list[ToolCallRecord] = field(default_factory=lambda: list[ToolCallRecord]())
    stop_reason: str | None = None
    """Why the last model request ended (``max_tokens``: cut off at the token limit)."""
    output: OutputChecked | None = None
    """A typed run's accepted answer (``session.typed``)."""

    @property
    def usage(self) -> Usage:
        """The run's token totals so far (``Usage.total``: an unknown count is never a 0)."""
        return Usage.total(self.usages)


class TurnSession(Protocol):
    """What the typed loop uses of its chat session (``session.chat.ChatSession``)."""

    @property
    def provider(self) -> Provider: ...

    @property
    def model(self) -> str: ...

    @property
    def max_turns(self) -> int: ...

    @property
    def messages(self) -> list[ChatMessage]: ...

    async def _ask(self, request: ModelRequest, emit: Emit, state: RunState) -> ChatMessage: ...

    async def _run_tools(
        self, calls: Sequence[ToolCallRequest], emit: Emit, state: RunState
    ) -> None: ...

    def _add_message(self, message: ChatMessage) -> None: ...


def last_request_notice(max_turns: int) -> str:
    """The notice of a run's last model request (made with ``tool_choice`` none)."""
    return (
        f"model request {max_turns} of {max_turns} (settings.maxChatTurns): it goes with "
        "tool_choice none, so the model answers with what the tools gave it"
    )
