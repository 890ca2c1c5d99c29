"""Step (a) of a caller case: the caller model gets the request and the tool list; what it calls.

One model request, as a client makes it: the caller system prompt, ``ask`` as the user message,
and every offered tool (name, description, input schema: what clients pass on to their model).
Nothing is run; the reply's tool calls are recorded. The request and the reply make the caller
transcript (:meth:`CallerTurn.transcript`), with the whole tool list as it was listed.
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import anyio

from mcp_export.errors import ExportError
from mcp_export.providers.base import (
    ChatMessage,
    Completion,
    ModelRequest,
    NamedEndpoint,
    Provider,
    ToolCallRequest,
    Usage,
)
from mcp_export.testing.callers.offer import OfferedTool
from schema_types.agent import TIMEOUT_SETTING

__all__ = ["DEFAULT_CALLER_PROMPT", "CallerTurn", "ask_caller"]

DEFAULT_CALLER_PROMPT = (
    "You are a helpful assistant. You can use the tools provided when they help with the "
    "user's request."
)
"""The caller system prompt when neither the run nor ``settings.callers.systemPrompt`` sets one."""


@dataclass(frozen=True)
class CallerTurn:
    """What one caller model was asked and what it did.

    Attributes:
        model: the caller model (``provider:model``).
        system_prompt: the system prompt it got.
        ask: the user message.
        tools: every tool offered, in the order offered.
        calls: the tool calls of its reply, in order (none: it answered in words).
        text: the text of its reply.
        error: why the request failed (the model server's error, a time-out); None when it
            answered.
        usage: its token counts.
        duration_ms: the request's wall time.
    """

    model: str
    system_prompt: str
    ask: str
    tools: tuple[OfferedTool, ...]
    calls: tuple[ToolCallRequest, ...] = ()
    text: str = ""
    error: str | None = None
    usage: Usage = field(default_factory=Usage)
    duration_ms: float = 0.0

    def transcript(self, *, with_tools: bool = True) -> dict[str, Any]:
        """The request (system prompt, user message, the offered tools' names and, with
        ``with_tools``, the whole tool list as listed) and the reply, as JSON.

        Every caller of one run is offered the same list: the reports and History keep it once
        per run and each transcript without it (``toolNames`` still says what was offered).
        """
        request: dict[str, Any] = {
            "system": self.system_prompt,
            "user": self.ask,
            "toolNames": [tool.name for tool in self.tools],
        }
        if with_tools:
            request["tools"] = [tool.listing() for tool in self.tools]
        return {
            "model": self.model,
            "request": request,
            "reply": {
                "text": self.text,
                "toolCalls": [_call_json(call) for call in self.calls],
                "error": self.error,
            },
            "usage": {
                "inputTokens": self.usage.input_tokens,
                "outputTokens": self.usage.output_tokens,
            },
            "durationMs": round(self.duration_ms, 3),
        }


def _call_json(call: ToolCallRequest) -> dict[str, Any]:
    data: dict[str, Any] = {"name": call.name, "arguments": call.arguments}
    if call.arguments_error is not None:
        data["argumentsError"] = call.arguments_error
    return data


async def ask_caller(
    provider: Provider,
    model_name: str,
    *,
    model: str,
    ask: str,
    tools: Sequence[OfferedTool],
    system_prompt: str = DEFAULT_CALLER_PROMPT,
    parameters: Mapping[str, Any] | None = None,
    timeout: float = 120.0,  # noqa: ASYNC109 - one request's bound, applied inside
) -> CallerTurn:
    """Ask the caller model once and record what it calls.

    Args:
        provider: the caller model's provider.
        model_name: the model's name on it.
        model: the caller model as the run names it (``provider:model``).
        ask: the case's request in words.
        tools: the tools offered (ours and the decoys).
        system_prompt: the caller system prompt.
        parameters: model parameters (temperature…), already resolved.
        timeout: seconds the request may take (the agent's ``settings.timeoutSeconds``).

    Returns:
        The turn; a failed request is a turn whose ``error`` says why (never raised).
    """
    request = ModelRequest(
        model=model_name,
        messages=[ChatMessage("system", system_prompt), ChatMessage("user", ask)],
        tools=[tool.schema() for tool in tools],
        parameters=dict(parameters or {}),
    )
    began = time.perf_counter()
    turn = CallerTurn(model=model, system_prompt=system_prompt, ask=ask, tools=tuple(tools))
    completion: Completion | None = None
    error: str | None = None
    try:
        with anyio.fail_after(timeout):
            async for event in provider.stream(request):
                if isinstance(event, Completion):
                    completion = event
    except TimeoutError:
        at = f" at {provider.endpoint}" if isinstance(provider, NamedEndpoint) else ""
        error = (
            f"the caller model {model}{at} did not answer within {timeout:g} s ({TIMEOUT_SETTING})"
        )
    except ExportError as exc:
        error = str(exc) or type(exc).__name__
    elapsed = (time.perf_counter() - began) * 1000
    if completion is None:
        missing = error or "the caller model ended without an answer"
        return replace(turn, error=missing, duration_ms=elapsed)
    message = completion.message
    return replace(
        turn,
        calls=message.tool_calls,
        text=message.content,
        usage=completion.usage,
        duration_ms=elapsed,
    )
