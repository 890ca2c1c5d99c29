"""What a chat session tells its consumers: one event type per thing that happens.

A session's ``run`` yields, in order::

    SessionStarted
    ( (TextDelta | Notice)* TurnFinished [ToolCallStarted+ ToolCallFinished+] )+
                                                                         one per model request
    FinalAnswer | SessionFailed                                          exactly one, always last

A ``Notice`` may be a ``ToolsHidden``: tools the permission rule held back from the run, said
once per server before the first model request. And, from a session made with ``steps=True``,
a ``Step`` anywhere before the last event: what the run waits for from then on (a tool server
starting, the model, a retry), for a status line; the next ``Step`` replaces it.

The studio's chat tab renders them, the served MCP server turns them into progress notifications
and the structured result, the CLI prints them. They are plain frozen dataclasses: cheap to
make, safe to hand to another task or thread.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

from mcp_export.errors import ExportError
from mcp_export.providers.base import TextDelta, Usage
from mcp_export.session.output_events import OutputChecked

__all__ = [
    "FailureKind",
    "FinalAnswer",
    "Notice",
    "OutputChecked",
    "SessionEvent",
    "SessionFailed",
    "SessionStarted",
    "Step",
    "TextDelta",
    "ToolCallFinished",
    "ToolCallRecord",
    "ToolCallStarted",
    "ToolsHidden",
    "TurnFinished",
]

FailureKind = Literal[
    "turn-limit",
    "timeout",
    "provider",
    "configuration",
    "tool-server",
    "cancelled",
    "internal",
]


@dataclass(frozen=True)
class SessionStarted:
    """A user turn began: the session, its history thread (None without history) and the model."""

    session_id: str
    thread_id: str | None
    model: str


@dataclass(frozen=True)
class _ToolCall:
    """What names a tool call: its id, the tool as the model called it, and the arguments."""

    call_id: str
    name: str
    arguments: dict[str, Any]


@dataclass(frozen=True)
class ToolCallStarted(_ToolCall):
    """The model asked for a tool; the call is about to run (calls of one turn run concurrently)."""


@dataclass(frozen=True)
class ToolCallRecord(_ToolCall):
    """One finished inner tool call, as kept in a ``FinalAnswer`` trace.

    ``refused`` means the tool is outside the agent's allowed set and was never run; ``is_error``
    is then true too and ``result`` says why.
    """

    result: str
    is_error: bool
    refused: bool
    duration_ms: float


@dataclass(frozen=True)
class ToolCallFinished(ToolCallRecord):
    """A tool call ended (successfully, with a tool error, or refused): the facts of its trace
    record, as an event."""

    def record(self) -> ToolCallRecord:
        """The same facts as a trace record."""
        return ToolCallRecord(
            self.call_id,
            self.name,
            self.arguments,
            self.result,
            self.is_error,
            self.refused,
            self.duration_ms,
        )


@dataclass(frozen=True)
class TurnFinished:
    """One model request finished (``turn`` counts from 1), with its token usage (None: the
    provider did not say)."""

    turn: int
    input_tokens: int | None
    output_tokens: int | None


@dataclass(frozen=True)
class Notice:
    """Something about how the model endpoint is used that the trace shows once (for example
    that tool turns go without streaming there); not part of the answer."""

    text: str


@dataclass(frozen=True)
class ToolsHidden(Notice):
    """A ``Notice`` that the permission rule held back tools of one of the agent's MCP servers
    from this run (nobody can give permission in it): ``text`` says which, why and where to
    change it; ``tools`` is empty when the server was not started, so its names are unknown;
    ``policy`` is the agent's ``toolPermission`` (``tool`` or ``always``)."""

    server: str = ""
    tools: tuple[str, ...] = ()
    policy: str = "tool"


@dataclass(frozen=True)
class Step:
    """What the run waits for from now on, as a status line says it (``Starting time…``,
    ``Asking the model (openai:gpt-4o)…``, ``Model request failed (connection refused), retry
    1 of 2 in 0.5 s…``); not part of the trace."""

    text: str


@dataclass(frozen=True)
class FinalAnswer:
    """The model answered without asking for more tools: the end of a successful run.

    ``usage`` and ``turns`` are totals over the run (a count no turn reported is None);
    ``tool_calls`` the trace in the order the model asked for them.
    """

    text: str
    usage: Usage
    duration_ms: float
    turns: int
    tool_calls: tuple[ToolCallRecord, ...] = field(default=())
    output: OutputChecked | None = None
    """A typed tool's accepted answer (its object, and whether a repair turn made it), else
    None."""


@dataclass(frozen=True)
class SessionFailed:
    """The run ended without an answer.

    Attributes:
        error: what went wrong (an ``ExportError`` subclass: ``TurnLimitExceeded``,
            ``SessionTimeout``, a ``ProviderError``…).
        kind: a short machine-readable category (see ``FailureKind``).
        hint: what the person can do about it, one sentence.
    """

    error: ExportError
    kind: FailureKind
    hint: str

    @property
    def message(self) -> str:
        """The error message as a person reads it."""
        return str(self.error)


SessionEvent = (
    SessionStarted
    | TextDelta
    | Notice
    | ToolsHidden
    | Step
    | ToolCallStarted
    | ToolCallFinished
    | TurnFinished
    | OutputChecked
    | FinalAnswer
    | SessionFailed
)
