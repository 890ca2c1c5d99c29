"""MCP sampling as a provider: the calling client's own model answers, through a ``Sampler``.

The served MCP server (not this module, which never imports ``mcp``) implements the ``Sampler``:
with the 2025-11-25 protocol it calls ``session.create_message``; with 2026-07-28 it runs the
input-required round trip. Either way it gets a provider-neutral ``SamplingRequest`` and returns a
``SamplingResponse``.

A ``SamplingRequest`` is shaped like MCP's ``sampling/createMessage`` (and Anthropic's Messages
API, which MCP copied): a system prompt apart, then ``SamplingTurn`` s of role ``user`` or
``assistant`` whose parts are text, tool uses (assistant) and tool results (user; a user turn
that carries tool results carries nothing else, and consecutive results share one turn).
``to_turns`` builds that shape from ``ChatMessage`` s; the Anthropic provider uses it too.

Without tool support (``supports_tools=False``: the client did not declare ``sampling.tools``)
no tools are offered, and tool uses/results already in the conversation are sent as plain text,
since such a client cannot take tool content at all.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass, field
from typing import Literal, Protocol

from mcp_export.errors import ProviderError, ProviderProtocolError
from mcp_export.providers.base import (
    ChatMessage,
    Completion,
    ModelRequest,
    ProviderEvent,
    TextDelta,
    ToolCallRequest,
    ToolSchema,
    Usage,
)

__all__ = [
    "DEFAULT_MAX_TOKENS",
    "Sampler",
    "SamplingProvider",
    "SamplingRequest",
    "SamplingResponse",
    "SamplingTurn",
    "TextPart",
    "ToolResultPart",
    "ToolUsePart",
    "to_turns",
]

DEFAULT_MAX_TOKENS = 4096
"""``max_tokens`` when the agent sets none: MCP sampling (and Anthropic) require a value."""


@dataclass(frozen=True)
class TextPart:
    """Text in a turn."""

    text: str


@dataclass(frozen=True)
class ToolUsePart:
    """The model's call of a tool (assistant turns only)."""

    id: str
    name: str
    input: dict[str, object]


@dataclass(frozen=True)
class ToolResultPart:
    """A tool's result (user turns only); ``is_error`` when the tool failed."""

    tool_use_id: str
    content: str
    is_error: bool = False


Part = TextPart | ToolUsePart | ToolResultPart


@dataclass(frozen=True)
class SamplingTurn:
    """One message of the conversation sent for sampling."""

    role: Literal["user", "assistant"]
    parts: tuple[Part, ...]


@dataclass(frozen=True)
class SamplingRequest:
    """What the client's model is asked (provider-neutral, maps 1:1 onto ``createMessage``).

    Attributes:
        turns: the conversation, oldest first, user/assistant alternating as MCP expects.
        system_prompt: the agent's system prompt, or None.
        tools: the tools offered (empty when the client cannot sample with tools).
        max_tokens: always set (``DEFAULT_MAX_TOKENS`` unless the agent says otherwise).
        temperature: None for the client's default.
        stop: stop sequences.
        tool_choice: ``auto``, ``none``, ``required``, or None (only with tools).
        model_hint: the model the agent names, a hint the client may ignore.
    """

    turns: tuple[SamplingTurn, ...]
    system_prompt: str | None = None
    tools: tuple[ToolSchema, ...] = ()
    max_tokens: int = DEFAULT_MAX_TOKENS
    temperature: float | None = None
    stop: tuple[str, ...] = ()
    tool_choice: str | None = None
    model_hint: str | None = None


@dataclass(frozen=True)
class SamplingResponse:
    """The client model's answer: text and/or tool calls.

    ``stop_reason`` in MCP's words (``endTurn``, ``toolUse``, ``maxTokens``, ``stopSequence``) or
    Anthropic's; ``model`` is the model the client used, when it says.
    """

    text: str = ""
    tool_calls: tuple[ToolCallRequest, ...] = ()
    stop_reason: str | None = None
    model: str | None = None
    usage: Usage = field(default_factory=Usage)


class Sampler(Protocol):
    """Asks the calling client's model; implemented by the MCP server.

    Raises:
        ProviderError: (a subclass) when the client refused or failed; any other exception is
            wrapped in a ``ProviderError`` by ``SamplingProvider``.
    """

    async def __call__(self, request: SamplingRequest, /) -> SamplingResponse: ...


_STOP_REASONS = {
    "endTurn": "end_turn",
    "toolUse": "tool_use",
    "maxTokens": "max_tokens",
    "stopSequence": "stop_sequence",
}


class SamplingProvider:
    """A ``Provider`` backed by MCP sampling.

    The answer arrives whole (sampling does not stream): one ``TextDelta`` with all the text,
    then the ``Completion``. Usage is zero unless the sampler reports it (MCP does not).

    Args:
        sampler: asks the client's model.
        supports_tools: whether the client can sample with tools; when False the model gets no
            tools and answers in text.
    """

    def __init__(self, sampler: Sampler, *, supports_tools: bool) -> None:
        self._sampler = sampler
        self.supports_tools = supports_tools

    @property
    def name(self) -> str:
        """``sampling``."""
        return "sampling"

    async def stream(self, request: ModelRequest) -> AsyncIterator[ProviderEvent]:
        """Ask the sampler once; yield the text, then the ``Completion``.

        Raises:
            ProviderError: the sampler failed (its own ``ProviderError`` passes unchanged).
            ProviderProtocolError: the client answered with a tool call though no tools were
                offered.
        """
        sampling_request = self.sampling_request(request)
        try:
            response = await self._sampler(sampling_request)
        except ProviderError:
            raise
        except Exception as exc:
            raise ProviderError(f"the MCP client's model could not answer: {exc}") from exc
        if response.tool_calls and not sampling_request.tools:
            raise ProviderProtocolError(
                "the MCP client's model called a tool though no tools were offered"
            )
        if response.text:
            yield TextDelta(response.text)
        stop = response.stop_reason
        yield Completion(
            ChatMessage("assistant", response.text, tool_calls=response.tool_calls),
            response.usage,
            _STOP_REASONS.get(stop, stop) if stop is not None else None,
        )

    def sampling_request(self, request: ModelRequest) -> SamplingRequest:
        """The ``SamplingRequest`` for ``request`` (exposed so a server can inspect it)."""
        system, turns = to_turns(request.messages, tools=self.supports_tools)
        parameters = request.parameters
        tools = tuple(request.tools) if self.supports_tools else ()
        temperature = parameters.get("temperature")
        tool_choice = parameters.get("tool_choice")
        return SamplingRequest(
            turns=tuple(turns),
            system_prompt=system,
            tools=tools,
            max_tokens=int(parameters.get("max_tokens") or DEFAULT_MAX_TOKENS),
            temperature=None if temperature is None else float(temperature),
            stop=tuple(parameters.get("stop") or ()),
            tool_choice=tool_choice if tools and isinstance(tool_choice, str) else None,
            model_hint=request.model or None,
        )

    async def aclose(self) -> None:
        """Nothing to release: the MCP session belongs to the server."""


def to_turns(
    messages: Sequence[ChatMessage], *, tools: bool = True
) -> tuple[str | None, list[SamplingTurn]]:
    """Split a conversation into a system prompt and user/assistant turns.

    System messages are joined (blank line between) into the system prompt. An assistant
    message becomes a turn of its text and tool uses; tool results become user turns, consecutive
    ones merged into one. With ``tools=False`` tool uses and results become text, so a model
    without tool support still sees what happened. Empty assistant messages are dropped (the
    Messages API refuses them).

    Args:
        messages: the conversation.
        tools: whether tool content may be sent as such.

    Returns:
        ``(system prompt or None, turns)``.
    """
    system: list[str] = []
    turns: list[SamplingTurn] = []
    for message in messages:
        if message.role == "system":
            if message.content:
                system.append(message.content)
        elif message.role == "user":
            turns.append(SamplingTurn("user", (TextPart(message.content),)))
        elif message.role == "assistant":
            parts = _assistant_parts(message, tools)
            if parts:
                turns.append(SamplingTurn("assistant", parts))
        else:
            part = _result_part(message, tools)
            last = turns[-1] if turns else None
            if last is not None and last.role == "user" and _only_results(last, part):
                turns[-1] = SamplingTurn("user", (*last.parts, part))
            else:
                turns.append(SamplingTurn("user", (part,)))
    return ("\n\n".join(system) or None), turns


def _assistant_parts(message: ChatMessage, tools: bool) -> tuple[Part, ...]:
    parts: list[Part] = [TextPart(message.content)] if message.content else []
    for call in message.tool_calls:
        if tools:
            parts.append(ToolUsePart(call.id, call.name, dict(call.arguments)))
        else:
            arguments = json.dumps(call.arguments, ensure_ascii=False)
            parts.append(TextPart(f"[called tool {call.name} with {arguments}]"))
    return tuple(parts)


def _result_part(message: ChatMessage, tools: bool) -> Part:
    if tools:
        return ToolResultPart(message.tool_call_id or "", message.content, message.is_error)
    outcome = "failed" if message.is_error else "returned"
    return TextPart(f"[tool {message.name or message.tool_call_id} {outcome}: {message.content}]")


def _only_results(turn: SamplingTurn, part: Part) -> bool:
    """Whether ``part`` may join ``turn``: tool results merge only with tool results."""
    return isinstance(part, ToolResultPart) and all(
        isinstance(p, ToolResultPart) for p in turn.parts
    )
