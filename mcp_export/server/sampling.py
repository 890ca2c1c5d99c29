"""MCP sampling for served calls: the calling client's model answers, in both protocol eras.

Both samplers implement the provider-neutral ``Sampler`` of ``providers._sampling``, so the chat
session runs unchanged on top of a ``SamplingProvider``; only this module knows MCP's shapes.

- **2025-11-25** (``SessionSampler``): each model request is a ``sampling/createMessage``
  request to the client in the middle of the call (``ctx.session.create_message``).
- **2026-07-28** (``RoundTripSampler``): the server cannot send a request in the middle of a
  call. When the loop needs the model, the call ends with an ``InputRequiredResult`` holding a
  ``CreateMessageRequest`` and a ``requestState``; the client samples and calls the tool again
  with the answer and the state. The state (``RoundTripState``) carries everything the run has
  learnt so far: the model's earlier answers and the inner tools' results. Each retry replays the
  loop from the start with those (instantly: nothing is asked or run twice) until it reaches the
  new answer, then goes on until the loop needs the model again or finishes. The SDK's
  ``RequestStateBoundary`` seals the state (encrypted and authenticated, bound to this tool call
  and its arguments, expiring), so a client can neither read nor forge it.

Sampling is deprecated by the 2026-07-28 specification (SEP-2577); the SDK marks its sampling
calls with ``MCPDeprecationWarning``. Serving agents through a client's model is still what some
clients offer, so the warning is silenced here, where the deprecated calls are made on purpose.
"""

from __future__ import annotations

import json
import warnings
from collections import defaultdict, deque
from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, Any

import mcp_types as types
from mcp.shared.exceptions import MCPDeprecationWarning, MCPError

from mcp_export.errors import ProviderError
from mcp_export.providers.base import ToolCallRequest, Usage
from mcp_export.providers.sampling import (
    SamplingRequest,
    SamplingResponse,
    SamplingTurn,
    TextPart,
    ToolResultPart,
    ToolUsePart,
)
from mcp_export.toolbox.agent_toolbox import ToolOutcome

if TYPE_CHECKING:
    from mcp.server.context import ServerRequestContext

    from mcp_export.toolbox.agent_toolbox import AgentToolbox, ToolSpec

__all__ = [
    "SAMPLE_KEY",
    "RecordedToolCall",
    "ReplayToolbox",
    "RoundTripSampler",
    "RoundTripState",
    "SamplingInputRequired",
    "SamplingRefused",
    "SessionSampler",
    "client_sampling",
    "create_message_params",
    "response_from_result",
]

SAMPLE_KEY = "sample"
"""The key of the one input request of a round trip."""

_STATE_VERSION = 1


class SamplingRefused(ProviderError):
    """The client refused or failed the sampling request."""


class SamplingInputRequired(ProviderError):
    """Not a failure: the loop needs the client's model and the call must return to ask it."""

    def __init__(self, request: SamplingRequest) -> None:
        super().__init__("waiting for the MCP client's model (input required)")
        self.request = request


def client_sampling(ctx: ServerRequestContext[Any]) -> tuple[bool, bool]:
    """Whether the client declared sampling, and whether sampling with tools (SEP-1577)."""
    session = ctx.session
    can_sample = session.check_client_capability(
        types.ClientCapabilities(sampling=types.SamplingCapability())
    )
    with_tools = can_sample and session.check_client_capability(
        types.ClientCapabilities(
            sampling=types.SamplingCapability(tools=types.SamplingToolsCapability())
        )
    )
    return can_sample, with_tools


# --- provider-neutral request/response <-> MCP ------------------------------------------------


def _block(part: TextPart | ToolUsePart | ToolResultPart) -> Any:
    if isinstance(part, TextPart):
        return types.TextContent(type="text", text=part.text)
    if isinstance(part, ToolUsePart):
        return types.ToolUseContent(type="tool_use", id=part.id, name=part.name, input=part.input)
    return types.ToolResultContent(
        type="tool_result",
        tool_use_id=part.tool_use_id,
        content=[types.TextContent(type="text", text=part.content)],
        is_error=part.is_error or None,
    )


def _message(turn: SamplingTurn) -> types.SamplingMessage:
    blocks = [_block(part) for part in turn.parts]
    content = blocks[0] if len(blocks) == 1 else blocks
    return types.SamplingMessage(role=turn.role, content=content)


def create_message_params(request: SamplingRequest) -> types.CreateMessageRequestParams:
    """The ``sampling/createMessage`` params asking ``request``."""
    tools = [
        types.Tool(name=t.name, description=t.description, input_schema=dict(t.input_schema))
        for t in request.tools
    ]
    choice = request.tool_choice if request.tool_choice in ("auto", "required", "none") else None
    return types.CreateMessageRequestParams(
        messages=[_message(turn) for turn in request.turns],
        system_prompt=request.system_prompt,
        max_tokens=request.max_tokens,
        temperature=request.temperature,
        stop_sequences=list(request.stop) or None,
        tools=tools or None,
        tool_choice=types.ToolChoice(mode=choice) if tools and choice else None,
        model_preferences=(
            types.ModelPreferences(hints=[types.ModelHint(name=request.model_hint)])
            if request.model_hint
            else None
        ),
    )


def _blocks(content: Any) -> list[Any]:
    return list(content) if isinstance(content, list) else [content]


def response_from_result(result: Any) -> SamplingResponse:
    """A client's ``CreateMessageResult`` (with or without tools) as a ``SamplingResponse``.

    Raises:
        SamplingRefused: the answer is not an assistant message.
    """
    if getattr(result, "role", "assistant") != "assistant":
        raise SamplingRefused(f"the MCP client's model answered as {result.role!r}, not assistant")
    texts: list[str] = []
    calls: list[ToolCallRequest] = []
    for block in _blocks(result.content):
        if isinstance(block, types.TextContent):
            texts.append(block.text)
        elif isinstance(block, types.ToolUseContent):
            calls.append(ToolCallRequest(block.id, block.name, dict(block.input)))
        else:
            texts.append(f"[{getattr(block, 'type', 'unknown')} content]")
    return SamplingResponse(
        text="".join(texts),
        tool_calls=tuple(calls),
        stop_reason=result.stop_reason,
        model=result.model,
    )


# --- 2025-11-25: createMessage in the middle of the call ------------------------------------


class SessionSampler:
    """Samples through ``ctx.session.create_message`` (2025-11-25 connections).

    Args:
        ctx: the ``tools/call`` request's context (the request goes out as related to it).
    """

    def __init__(self, ctx: ServerRequestContext[Any]) -> None:
        self._ctx = ctx

    async def __call__(self, request: SamplingRequest, /) -> SamplingResponse:
        params = create_message_params(request)
        session = self._ctx.session
        common: dict[str, Any] = {
            "messages": params.messages,
            "max_tokens": params.max_tokens,
            "system_prompt": params.system_prompt,
            "temperature": params.temperature,
            "stop_sequences": params.stop_sequences,
            "model_preferences": params.model_preferences,
            "related_request_id": self._ctx.request_id,
        }
        result: types.CreateMessageResult | types.CreateMessageResultWithTools
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", MCPDeprecationWarning)
                if params.tools:
                    result = await session.create_message(
                        **common, tools=params.tools, tool_choice=params.tool_choice
                    )
                else:
                    result = await session.create_message(**common)
        except MCPError as exc:
            raise SamplingRefused(
                f"the MCP client refused to sample: {exc.error.message} (code {exc.error.code})"
            ) from exc
        return response_from_result(result)


# --- 2026-07-28: the input-required round trip -------------------------------------------------


@dataclass(frozen=True)
class RecordedToolCall:
    """One inner tool call of an earlier round, replayed instead of run again."""

    name: str
    arguments: dict[str, Any]
    text: str
    is_error: bool
    refused: bool = False
    duration_ms: float = 0.0


def _response_data(response: SamplingResponse) -> dict[str, Any]:
    return {
        "text": response.text,
        "toolCalls": [
            {"id": c.id, "name": c.name, "arguments": c.arguments} for c in response.tool_calls
        ],
        "stopReason": response.stop_reason,
        "model": response.model,
    }


def _response_from_data(data: dict[str, Any]) -> SamplingResponse:
    return SamplingResponse(
        text=str(data.get("text", "")),
        tool_calls=tuple(
            ToolCallRequest(str(c["id"]), str(c["name"]), dict(c["arguments"]))
            for c in data.get("toolCalls", ())
        ),
        stop_reason=data.get("stopReason"),
        model=data.get("model"),
        usage=Usage(),
    )


@dataclass
class RoundTripState:
    """What a 2026-07-28 sampling run has learnt so far (the plaintext of ``requestState``).

    Attributes:
        responses: the client model's answers, in order.
        tool_calls: the inner tool calls run so far, in the order they finished.
        started: wall-clock time (``time.time()``) the first round started.
        prior: how many messages the continued conversation had when the first round read it
            (None for a call that continues none): a later round that finds another number
            knows that another turn answered meanwhile, unseen by this one.
    """

    responses: list[SamplingResponse] = field(default_factory=lambda: list[SamplingResponse]())
    tool_calls: list[RecordedToolCall] = field(default_factory=lambda: list[RecordedToolCall]())
    started: float = 0.0
    prior: int | None = None

    def dumps(self) -> str:
        """The state as JSON text (sealed by the SDK's boundary before it leaves)."""
        return json.dumps(
            {
                "v": _STATE_VERSION,
                "responses": [_response_data(r) for r in self.responses],
                "toolCalls": [asdict(c) for c in self.tool_calls],
                "started": self.started,
                "prior": self.prior,
            },
            separators=(",", ":"),
        )

    @classmethod
    def loads(cls, text: str) -> RoundTripState:
        """Read a state made by ``dumps``.

        Raises:
            ValueError: not a state of this version (the boundary already checked its seal).
        """
        data = json.loads(text)
        if not isinstance(data, dict) or data.get("v") != _STATE_VERSION:
            raise ValueError("requestState of another version")
        return cls(
            responses=[_response_from_data(r) for r in data["responses"]],
            tool_calls=[RecordedToolCall(**c) for c in data["toolCalls"]],
            started=float(data["started"]),
            prior=int(data["prior"]) if data.get("prior") is not None else None,
        )


class RoundTripSampler:
    """Answers model requests from a ``RoundTripState``, then from the client's new answer.

    The n-th request of a replayed run gets the n-th recorded answer; the first request past
    them gets ``fresh`` (the answer the client just sent) and records it; the next one raises
    ``SamplingInputRequired`` with the request to send to the client.
    """

    def __init__(self, state: RoundTripState, fresh: SamplingResponse | None) -> None:
        self._state = state
        self._fresh = fresh
        self._asked = 0
        self.replayed_turns = len(state.responses)
        """How many model turns of this round are replays (their events are not news)."""

    async def __call__(self, request: SamplingRequest, /) -> SamplingResponse:
        index = self._asked
        self._asked += 1
        responses = self._state.responses
        if index < len(responses):
            return responses[index]
        if index == len(responses) and self._fresh is not None:
            responses.append(self._fresh)
            self._fresh = None
            return responses[-1]
        raise SamplingInputRequired(request)


def _key(name: str, arguments: dict[str, Any]) -> tuple[str, str]:
    return name, json.dumps(arguments, sort_keys=True, separators=(",", ":"))


class ReplayToolbox:
    """The agent's toolbox, answering the calls of earlier rounds from the state.

    A replayed run asks for the same calls with the same arguments in the same order; those get
    their recorded outcomes (matched by name and arguments, first in first out), anything new is
    run by the real toolbox and recorded.
    """

    def __init__(self, toolbox: AgentToolbox | None, state: RoundTripState) -> None:
        self._toolbox = toolbox
        self._state = state
        self._outcome = ToolOutcome
        self._recorded: dict[tuple[str, str], deque[RecordedToolCall]] = defaultdict(deque)
        for call in state.tool_calls:
            self._recorded[_key(call.name, call.arguments)].append(call)

    async def allowed_tools(self) -> list[ToolSpec]:
        """The real toolbox's allowed tools (none without a toolbox)."""
        return [] if self._toolbox is None else await self._toolbox.allowed_tools()

    async def call(
        self,
        name: str,
        arguments: dict[str, Any],
        *,
        timeout: float | None = None,  # noqa: ASYNC109 - the toolbox's signature
    ) -> ToolOutcome:
        """The recorded outcome of this call, or the real one (then recorded)."""
        queue = self._recorded.get(_key(name, arguments))
        if queue:
            old = queue.popleft()
            return self._outcome(
                old.text, old.is_error, refused=old.refused, duration_ms=old.duration_ms
            )
        if self._toolbox is None:
            outcome = self._outcome(
                f"no tool named {name!r}: this agent has no tools", True, refused=True
            )
        else:
            outcome = await self._toolbox.call(name, arguments, timeout=timeout)
        self._state.tool_calls.append(
            RecordedToolCall(
                name,
                dict(arguments),
                outcome.text,
                outcome.is_error,
                outcome.refused,
                outcome.duration_ms,
            )
        )
        return outcome
