"""What a client received for one call, and one expectation that did not hold.

Below the checks (``testing.expect``, ``testing.fields``) so each can name them.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

__all__ = ["CallOutcome", "Failure"]


@dataclass(frozen=True)
class Failure:
    """One expectation that did not hold.

    Attributes:
        expectation: its key in the agent file, with an index for list entries
            (``contains[0]``, ``maxTurns``, ``judge``).
        message: what was expected and what was found, one sentence.
    """

    expectation: str
    message: str

    def __str__(self) -> str:
        return f"{self.expectation}: {self.message}"


@dataclass(frozen=True)
class CallOutcome:
    """What a client received for one call.

    Attributes:
        text: the result's text (the answer, or the error message).
        is_error: the result's ``isError``.
        tool_calls: the inner tool calls (``name``, ``arguments``, ``isError``), in order.
        turns: model requests the call took (None when the result does not say).
        duration_ms: the call's wall time as the client measured it.
        input_tokens: tokens sent, None when the model server did not say.
        output_tokens: tokens received, None when the model server did not say.
        thread_id: the call's history thread (its transcript), None when it was not recorded.
        tokens_partial: a token count is a lower bound (a model request did not report its
            count).
        stop_reason: why the answer's model request ended (``max_tokens``: cut off at the
            token limit); None when the result does not say.
    """

    text: str
    is_error: bool
    duration_ms: float
    tool_calls: tuple[Mapping[str, Any], ...] = field(default=())
    turns: int | None = None
    input_tokens: int | None = None
    output_tokens: int | None = None
    thread_id: str | None = None
    tokens_partial: bool = False
    stop_reason: str | None = None
    value: Any = None
    """A typed tool's answer (its ``structuredContent``); None for an untyped tool."""

    @property
    def truncated(self) -> bool:
        """Whether the answer was cut off at the token limit."""
        return self.stop_reason == "max_tokens"
