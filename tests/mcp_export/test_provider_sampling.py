"""The sampling provider with a scripted Python sampler (the MCP server plugs in a real one)."""

from __future__ import annotations

import pytest

from mcp_export.errors import ProviderError, ProviderProtocolError, ProviderRateLimited
from mcp_export.providers.base import (
    ChatMessage,
    Completion,
    ModelRequest,
    TextDelta,
    ToolCallRequest,
    ToolSchema,
    Usage,
)
from mcp_export.providers.sampling import (
    SamplingProvider,
    SamplingRequest,
    SamplingResponse,
    SamplingTurn,
    TextPart,
    ToolResultPart,
    ToolUsePart,
)

pytestmark = pytest.mark.anyio

TOOL = ToolSchema("time__now", "Now.", {"type": "object", "properties": {}})

CONVERSATION = (
    ChatMessage("system", "Be brief."),
    ChatMessage("user", "What time is it?"),
    ChatMessage("assistant", "", tool_calls=(ToolCallRequest("t1", "time__now", {"tz": "UTC"}),)),
    ChatMessage("tool", "12:00", tool_call_id="t1", name="time__now"),
)


class ScriptedSampler:
    """Answers from a list, and keeps every request it got."""

    def __init__(self, *responses: SamplingResponse | Exception) -> None:
        self.responses = list(responses)
        self.requests: list[SamplingRequest] = []

    async def __call__(self, request: SamplingRequest, /) -> SamplingResponse:
        self.requests.append(request)
        response = self.responses.pop(0)
        if isinstance(response, Exception):
            raise response
        return response


async def run(provider: SamplingProvider, request: ModelRequest) -> tuple[list[str], Completion]:
    deltas: list[str] = []
    completions: list[Completion] = []
    async for event in provider.stream(request):
        if isinstance(event, TextDelta):
            deltas.append(event.text)
        elif isinstance(event, Completion):
            completions.append(event)
    assert len(completions) == 1
    return deltas, completions[0]


async def test_the_answer_comes_as_one_delta_then_the_completion_with_unknown_usage() -> None:
    sampler = ScriptedSampler(SamplingResponse("It is noon.", stop_reason="endTurn"))
    provider = SamplingProvider(sampler, supports_tools=True)
    deltas, completion = await run(provider, ModelRequest("gpt-x", CONVERSATION, (TOOL,)))
    assert deltas == ["It is noon."]
    assert completion.message == ChatMessage("assistant", "It is noon.")
    assert completion.usage == Usage(None, None)  # sampling results carry no token counts
    assert completion.stop_reason == "end_turn"


async def test_the_request_carries_turns_system_prompt_tools_and_parameters() -> None:
    sampler = ScriptedSampler(SamplingResponse("ok"))
    provider = SamplingProvider(sampler, supports_tools=True)
    parameters = {"temperature": 0.3, "max_tokens": 50, "stop": ["END"], "tool_choice": "auto"}
    await run(provider, ModelRequest("gpt-x", CONVERSATION, (TOOL,), parameters))
    assert sampler.requests == [
        SamplingRequest(
            turns=(
                SamplingTurn("user", (TextPart("What time is it?"),)),
                SamplingTurn("assistant", (ToolUsePart("t1", "time__now", {"tz": "UTC"}),)),
                SamplingTurn("user", (ToolResultPart("t1", "12:00"),)),
            ),
            system_prompt="Be brief.",
            tools=(TOOL,),
            max_tokens=50,
            temperature=0.3,
            stop=("END",),
            tool_choice="auto",
            model_hint="gpt-x",
        )
    ]


async def test_max_tokens_defaults_because_sampling_requires_it() -> None:
    sampler = ScriptedSampler(SamplingResponse("ok"))
    await run(SamplingProvider(sampler, supports_tools=True), ModelRequest("m", CONVERSATION[:2]))
    assert sampler.requests[0].max_tokens == 4096


async def test_tool_calls_come_back_as_the_completions_tool_calls() -> None:
    call = ToolCallRequest("t2", "time__now", {})
    sampler = ScriptedSampler(SamplingResponse(tool_calls=(call,), stop_reason="toolUse"))
    provider = SamplingProvider(sampler, supports_tools=True)
    deltas, completion = await run(provider, ModelRequest("m", CONVERSATION[:2], (TOOL,)))
    assert deltas == []
    assert completion.message.tool_calls == (call,)
    assert completion.stop_reason == "tool_use"


async def test_without_tool_support_no_tools_are_sent_and_tool_turns_become_text() -> None:
    sampler = ScriptedSampler(SamplingResponse("noon"))
    provider = SamplingProvider(sampler, supports_tools=False)
    parameters = {"tool_choice": "required"}
    await run(provider, ModelRequest("m", CONVERSATION, (TOOL,), parameters))
    request = sampler.requests[0]
    assert request.tools == ()
    assert request.tool_choice is None
    assert request.turns == (
        SamplingTurn("user", (TextPart("What time is it?"),)),
        SamplingTurn("assistant", (TextPart('[called tool time__now with {"tz": "UTC"}]'),)),
        SamplingTurn("user", (TextPart("[tool time__now returned: 12:00]"),)),
    )


async def test_a_tool_call_when_no_tools_were_offered_is_a_protocol_error() -> None:
    call = ToolCallRequest("t2", "time__now", {})
    sampler = ScriptedSampler(SamplingResponse(tool_calls=(call,)))
    provider = SamplingProvider(sampler, supports_tools=False)
    with pytest.raises(ProviderProtocolError, match="no tools were offered"):
        await run(provider, ModelRequest("m", CONVERSATION[:2], (TOOL,)))


async def test_sampler_failures_become_provider_errors() -> None:
    sampler = ScriptedSampler(RuntimeError("user rejected the sampling request"))
    provider = SamplingProvider(sampler, supports_tools=True)
    with pytest.raises(ProviderError, match="could not answer: user rejected"):
        await run(provider, ModelRequest("m", CONVERSATION[:2]))


async def test_a_samplers_own_provider_error_passes_unchanged() -> None:
    refusal = ProviderRateLimited("the client is busy")
    provider = SamplingProvider(ScriptedSampler(refusal), supports_tools=True)
    with pytest.raises(ProviderRateLimited) as caught:
        await run(provider, ModelRequest("m", CONVERSATION[:2]))
    assert caught.value is refusal


async def test_consecutive_tool_results_share_one_user_turn_with_errors_flagged() -> None:
    conversation = (
        ChatMessage("user", "Two lookups"),
        ChatMessage(
            "assistant",
            "On it.",
            tool_calls=(
                ToolCallRequest("a", "lookup", {"k": 1}),
                ToolCallRequest("b", "lookup", {"k": 2}),
            ),
        ),
        ChatMessage("tool", "one", tool_call_id="a"),
        ChatMessage("tool", "no such key", tool_call_id="b", is_error=True),
        ChatMessage("user", "and?"),
    )
    sampler = ScriptedSampler(SamplingResponse("done"))
    await run(SamplingProvider(sampler, supports_tools=True), ModelRequest("m", conversation))
    assert sampler.requests[0].turns == (
        SamplingTurn("user", (TextPart("Two lookups"),)),
        SamplingTurn(
            "assistant",
            (
                TextPart("On it."),
                ToolUsePart("a", "lookup", {"k": 1}),
                ToolUsePart("b", "lookup", {"k": 2}),
            ),
        ),
        SamplingTurn(
            "user", (ToolResultPart("a", "one"), ToolResultPart("b", "no such key", True))
        ),
        SamplingTurn("user", (TextPart("and?"),)),
    )
    assert sampler.requests[0].system_prompt is None
