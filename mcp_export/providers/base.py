"""The provider interface: one shape for every model backend.

Backends: OpenAI-compatible, Anthropic, MCP sampling.

A provider turns a conversation (``ChatMessage`` list) plus the tools on offer into a stream of
``ProviderEvent``: zero or more ``TextDelta`` while the answer arrives, then exactly one
``Completion`` holding the whole assistant message (text and/or tool calls) and token usage.
Providers never run tools themselves; the session loop does.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol, runtime_checkable

__all__ = [
    "ChatMessage",
    "Completion",
    "ModelRequest",
    "Provider",
    "ProviderEvent",
    "ProviderNotice",
    "TextDelta",
    "ToolCallRequest",
    "ToolSchema",
    "Usage",
]

Role = Literal["system", "user", "assistant", "tool"]


@dataclass(frozen=True)
class ToolCallRequest:
    """A tool call the model asked for. ``arguments`` is the parsed JSON object.

    ``arguments_error`` says why the model's arguments could not be read (malformed or cut-off
    JSON, not an object); ``arguments`` is then empty. Such a call is not run: the model gets the
    error as the call's result and may try again.
    """

    id: str
    name: str
    arguments: dict[str, Any]
    arguments_error: str | None = None


@dataclass(frozen=True)
class ChatMessage:
    """One message of a conversation, provider-neutral.

    ``role == "tool"`` carries a tool result: ``tool_call_id`` names the call, ``name`` the tool,
    ``is_error`` whether the tool failed (the text then says why).
    """

    role: Role
    content: str = ""
    tool_calls: tuple[ToolCallRequest, ...] = ()
    tool_call_id: str | None = None
    name: str | None = None
    is_error: bool = False


@dataclass(frozen=True)
class ToolSchema:
    """A tool offered to the model (already namespaced, ``server__tool``)."""

    name: str
    description: str
    input_schema: Mapping[str, Any]


@dataclass(frozen=True)
class Usage:
    """Token counts of one model request; None when the provider did not say (absent is not 0)."""

    input_tokens: int | None = None
    output_tokens: int | None = None

    def plus(self, other: Usage) -> Usage:
        """The sum of two counts: what either knows, None where neither does."""
        return Usage(
            _known_sum(self.input_tokens, other.input_tokens),
            _known_sum(self.output_tokens, other.output_tokens),
        )


def _known_sum(a: int | None, b: int | None) -> int | None:
    if a is None:
        return b
    return a if b is None else a + b


@dataclass(frozen=True)
class TextDelta:
    """A piece of the answer text as it streams in."""

    text: str


@dataclass(frozen=True)
class Completion:
    """The end of one model request: the whole assistant message and its usage."""

    message: ChatMessage
    usage: Usage = field(default_factory=Usage)
    stop_reason: str | None = None


@dataclass(frozen=True)
class ProviderNotice:
    """Something the person should know about how the endpoint is being used (shown once in the
    trace), e.g. that tool turns go without streaming because the server refuses streamed tool
    use. Not part of the answer."""

    text: str


ProviderEvent = TextDelta | ProviderNotice | Completion


@dataclass(frozen=True)
class ModelRequest:
    """Everything one model request needs.

    ``parameters`` are already resolved (override → agent settings → provider default), with
    snake_case keys among: temperature, top_p, max_tokens, stop, seed, presence_penalty,
    frequency_penalty, response_format, tool_choice. A key that is absent means "provider default".
    """

    model: str
    messages: Sequence[ChatMessage]
    tools: Sequence[ToolSchema] = ()
    parameters: Mapping[str, Any] = field(default_factory=lambda: dict[str, Any]())


@runtime_checkable
class Provider(Protocol):
    """A model backend."""

    @property
    def name(self) -> str:
        """Short id used in messages (``openai``, ``anthropic``, ``sampling``)."""
        ...

    def stream(self, request: ModelRequest) -> AsyncIterator[ProviderEvent]:
        """Run one model request, yielding text deltas (and notices) then exactly one
        ``Completion``.

        Raises:
            ProviderError: (a subclass) when the request fails after the provider's retries.
        """
        ...

    async def aclose(self) -> None:
        """Release connections."""
        ...
