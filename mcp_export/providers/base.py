"""The provider interface: one shape for every model backend.

Backends: OpenAI-compatible, Anthropic, MCP sampling.

A provider turns a conversation (``ChatMessage`` list) plus the tools on offer into a stream of
``ProviderEvent``: zero or more ``TextDelta`` while the answer arrives, then exactly one
``Completion`` holding the whole assistant message (text and/or tool calls) and token usage.
Providers never run tools themselves; the session loop does.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol, runtime_checkable

__all__ = [
    "ChatMessage",
    "Completion",
    "ModelRequest",
    "NamedEndpoint",
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
    """Token counts of one model request, or a run's totals; None when unknown (absent is not 0).

    A total over requests of which some did not report a count (a streamed answer without a
    usage chunk) is the sum of the counts that are known with ``input_partial`` /
    ``output_partial`` set: a lower bound, shown as ``≥ N``, never an exact figure. A total of
    requests that all left a count out is None.
    """

    input_tokens: int | None = None
    output_tokens: int | None = None
    input_partial: bool = False
    output_partial: bool = False

    @classmethod
    def total(cls, requests: Iterable[Usage]) -> Usage:
        """The totals of a run's model requests (no requests: None, nothing known)."""
        inputs: list[int | None] = []
        outputs: list[int | None] = []
        partial_in = partial_out = False
        for usage in requests:
            inputs.append(usage.input_tokens)
            outputs.append(usage.output_tokens)
            partial_in = partial_in or usage.input_partial
            partial_out = partial_out or usage.output_partial
        total_in, unknown_in = _total(inputs)
        total_out, unknown_out = _total(outputs)
        return cls(
            total_in,
            total_out,
            total_in is not None and (partial_in or unknown_in),
            total_out is not None and (partial_out or unknown_out),
        )

    @property
    def exact_input(self) -> int | None:
        """``input_tokens`` when it is an exact figure; None when unknown or a lower bound
        (where a figure is read as exact: a history column, a schema's count)."""
        return None if self.input_partial else self.input_tokens

    @property
    def exact_output(self) -> int | None:
        """``output_tokens`` when it is an exact figure (see ``exact_input``)."""
        return None if self.output_partial else self.output_tokens


def _total(counts: list[int | None]) -> tuple[int | None, bool]:
    """The sum of the known counts (None when none is known) and whether any is unknown."""
    known = [count for count in counts if count is not None]
    return (sum(known) if known else None), len(known) != len(counts)


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


@runtime_checkable
class NamedEndpoint(Protocol):
    """A provider that sends its requests to a server, which a message can name (the HTTP
    providers; not sampling, whose model is the calling client's)."""

    @property
    def endpoint(self) -> str:
        """Where the requests go, as messages name it (``OpenAI``, ``127.0.0.1:8080``)."""
        ...
