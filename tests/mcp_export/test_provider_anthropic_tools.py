"""Tool turns of the Anthropic provider: what goes back to the Messages API after tool use, and
tool input the model could not finish, through the real provider and ``ChatSession`` against the
fake Messages API (which refuses what the real API refuses: see ``wire_problem``).
"""

from __future__ import annotations

import dataclasses
from collections.abc import AsyncIterator
from contextlib import aclosing, asynccontextmanager
from dataclasses import dataclass
from typing import Any

import anyio
import pytest

from mcp_export.providers.anthropic_provider import AnthropicProvider
from mcp_export.providers.base import (
    ChatMessage,
    Completion,
    ModelRequest,
    TextDelta,
    ToolCallRequest,
    ToolSchema,
)
from mcp_export.session.chat import ChatSession
from mcp_export.session.events import FinalAnswer, SessionEvent, ToolCallFinished
from schema_types.agent import Agent
from tests.fakes import RequestBody, text, tool_calls
from tests.fakes._script import Reply
from tests.fakes.anthropic_server import FakeAnthropicServer, wire_problem

pytestmark = pytest.mark.anyio

LOOKUP = ToolSchema(
    "kb__lookup",
    "Look a word up.",
    {"type": "object", "properties": {"word": {"type": "string"}}, "required": ["word"]},
)


@asynccontextmanager
async def anthropic_provider(base_url: str, **kwargs: Any) -> AsyncIterator[AnthropicProvider]:
    provider = AnthropicProvider("sk-ant-test", base_url, retry_delay=0.01, **kwargs)
    try:
        yield provider
    finally:
        await provider.aclose()


async def complete(provider: AnthropicProvider, request: ModelRequest) -> Completion:
    completions: list[Completion] = []
    async for event in provider.stream(request):
        if not isinstance(event, TextDelta):
            assert isinstance(event, Completion)
            completions.append(event)
    assert len(completions) == 1
    return completions[0]


def conversation(*messages: ChatMessage) -> tuple[ChatMessage, ...]:
    return (ChatMessage("user", "Look up 'tea' and 'fog'."), *messages)


def called(*calls: tuple[str, dict[str, Any]], text: str = "") -> ChatMessage:
    requests = tuple(ToolCallRequest(i, "kb__lookup", a) for i, a in calls)
    return ChatMessage("assistant", text, tool_calls=requests)


def result(call_id: str, content: str, *, is_error: bool = False) -> ChatMessage:
    return ChatMessage("tool", content, tool_call_id=call_id, name="kb__lookup", is_error=is_error)


# --- the fake refuses what the API refuses ------------------------------------------------------


@pytest.mark.parametrize(
    ("content", "refusal"),
    [
        ([{"type": "text", "text": ""}], "text content blocks must be non-empty"),
        ([{"type": "text", "text": "\n\n"}], "must contain non-whitespace text"),
        (
            [{"type": "tool_result", "tool_use_id": "t1", "content": "", "is_error": True}],
            "content cannot be empty if `is_error` is true",
        ),
    ],
    ids=["empty text", "whitespace text", "empty error result"],
)
def test_the_fake_refuses_blocks_the_api_refuses(content: list[Any], refusal: str) -> None:
    calls = [{"type": "tool_use", "id": "t1", "name": "x", "input": {}}]
    messages = [
        {"role": "user", "content": "hi"},
        {"role": "assistant", "content": calls},
        {"role": "user", "content": content},
    ]
    body = {"model": "m", "max_tokens": 10, "messages": messages}
    assert refusal in (wire_problem(body) or "")


# --- what is sent back after tool use -----------------------------------------------------------


async def test_an_assistant_turn_of_whitespace_and_tool_calls_sends_only_tool_use_blocks() -> None:
    messages = conversation(
        called(("t1", {"word": "tea"}), text="\n\n"),
        result("t1", "a drink"),
    )
    with FakeAnthropicServer([text("Tea is a drink.")]) as server:
        async with anthropic_provider(server.base_url) as provider:
            completion = await complete(provider, ModelRequest("m", messages, (LOOKUP,)))
    assert completion.message.content == "Tea is a drink."
    assistant = server.bodies[0]["messages"][1]
    assert assistant == {
        "role": "assistant",
        "content": [
            {"type": "tool_use", "id": "t1", "name": "kb__lookup", "input": {"word": "tea"}}
        ],
    }


async def test_a_tool_that_failed_without_a_word_is_an_error_result_that_says_so() -> None:
    messages = conversation(called(("t1", {"word": "tea"})), result("t1", "", is_error=True))
    with FakeAnthropicServer([text("The lookup failed.")]) as server:
        async with anthropic_provider(server.base_url) as provider:
            await complete(provider, ModelRequest("m", messages, (LOOKUP,)))
    [block] = server.bodies[0]["messages"][2]["content"]
    assert block["type"] == "tool_result" and block["is_error"] is True
    assert block["tool_use_id"] == "t1"
    assert "failed" in block["content"]


async def test_parallel_results_go_back_in_one_user_message_in_call_order() -> None:
    messages = conversation(
        called(("t1", {"word": "tea"}), ("t2", {"word": "fog"}), text="Both."),
        result("t1", "a drink"),
        result("t2", "no such word", is_error=True),
        ChatMessage("assistant", "Tea is a drink; fog I could not find."),
        ChatMessage("user", "Thanks"),
    )
    with FakeAnthropicServer() as server:
        async with anthropic_provider(server.base_url) as provider:
            completion = await complete(provider, ModelRequest("m", messages, (LOOKUP,)))
    assert completion.message.content == "Thanks"
    sent = server.bodies[0]["messages"]
    assert [m["role"] for m in sent] == ["user", "assistant", "user", "assistant", "user"]
    assert sent[2]["content"] == [
        {"type": "tool_result", "tool_use_id": "t1", "content": "a drink"},
        {"type": "tool_result", "tool_use_id": "t2", "content": "no such word", "is_error": True},
    ]


@pytest.mark.parametrize(
    ("choice", "sent"),
    [
        ("auto", {"type": "auto"}),
        ("required", {"type": "any"}),
        ("any", {"type": "any"}),
        ("none", {"type": "none"}),
        ("kb__lookup", {"type": "tool", "name": "kb__lookup"}),
        (
            {"type": "function", "function": {"name": "kb__lookup"}},
            {"type": "tool", "name": "kb__lookup"},
        ),
        ({"type": "tool", "name": "kb__lookup"}, {"type": "tool", "name": "kb__lookup"}),
    ],
    ids=["auto", "required", "any", "none", "a name", "an OpenAI function", "Anthropic's own"],
)
async def test_tool_choice_is_sent_in_the_messages_api_form(choice: Any, sent: Any) -> None:
    request = ModelRequest("m", (ChatMessage("user", "Hi"),), (LOOKUP,), {"tool_choice": choice})
    with FakeAnthropicServer([text("ok")]) as server:
        async with anthropic_provider(server.base_url) as provider:
            await complete(provider, request)
    assert server.bodies[0]["tool_choice"] == sent


async def test_tool_choice_without_tools_is_not_sent() -> None:
    request = ModelRequest("m", (ChatMessage("user", "Hi"),), (), {"tool_choice": "required"})
    with FakeAnthropicServer([text("ok")]) as server:
        async with anthropic_provider(server.base_url) as provider:
            await complete(provider, request)
    assert "tool_choice" not in server.bodies[0]


# --- through the chat session -------------------------------------------------------------------


@dataclass(frozen=True)
class Spec:
    name: str
    description: str
    input_schema: dict[str, Any]


@dataclass(frozen=True)
class Outcome:
    text: str
    is_error: bool = False
    refused: bool = False
    duration_ms: float = 0.0


class Dictionary:
    """``kb__lookup`` in memory: a word it knows is its meaning, any other word fails silently
    (an error with no message, as some tool servers answer)."""

    def __init__(self) -> None:
        self.words = {"tea": "a drink"}
        self.calls: list[dict[str, Any]] = []

    async def allowed_tools(self) -> list[Spec]:
        return [Spec(LOOKUP.name, LOOKUP.description, dict(LOOKUP.input_schema))]

    async def call(
        self,
        name: str,
        arguments: dict[str, Any],
        *,
        timeout: float | None,  # noqa: ASYNC109 - the toolbox's own signature
    ) -> Outcome:
        self.calls.append(arguments)
        meaning = self.words.get(str(arguments.get("word")))
        return Outcome(meaning) if meaning else Outcome("", is_error=True)


def agent(base_url: str) -> Agent:
    return Agent.model_validate(
        {
            "systemPrompt": "You look words up.",
            "settings": {"model": "anthropic:claude-test", "maxChatTurns": 4},
            "providers": {"anthropic": {"ANTHROPIC_BASE_URL": base_url}},
        }
    )


async def run_session(
    server: FakeAnthropicServer, question: str
) -> tuple[list[SessionEvent], Dictionary]:
    toolbox = Dictionary()
    async with anthropic_provider(server.base_url) as provider:
        session = ChatSession(
            agent(server.base_url), provider=provider, model="claude-test", toolbox=toolbox
        )
        with anyio.fail_after(30):
            async with aclosing(session.run(question)) as stream:
                events = [event async for event in stream]
    return events, toolbox


def answer_after_tools(body: RequestBody) -> Reply:
    if body.rounds_since_user == 0:
        calls = [("t1", "kb__lookup", {"word": "tea"}), ("t2", "kb__lookup", {"word": "fog"})]
        return tool_calls(calls, text="\n")
    return text("done: " + " | ".join(f"{r.is_error}:{r.content}" for r in body.tool_results))


async def test_a_session_with_parallel_calls_and_a_silent_failure_runs_to_an_answer() -> None:
    with FakeAnthropicServer(responder=answer_after_tools) as server:
        events, toolbox = await run_session(server, "Look up tea and fog.")
    final = events[-1]
    assert isinstance(final, FinalAnswer), final
    assert toolbox.calls == [{"word": "tea"}, {"word": "fog"}]
    assert [(c.name, c.is_error) for c in final.tool_calls] == [
        ("kb__lookup", False),
        ("kb__lookup", True),
    ]
    second = server.bodies[1]["messages"]
    assert [m["role"] for m in second] == ["user", "assistant", "user"]
    assert [b["type"] for b in second[1]["content"]] == ["tool_use", "tool_use"]
    assert [(b["tool_use_id"], b.get("is_error", False)) for b in second[2]["content"]] == [
        ("t1", False),
        ("t2", True),
    ]
    assert final.text.startswith("done: False:a drink | True:")


# --- tool input the model could not finish ----------------------------------------------------


async def test_tool_input_cut_off_by_max_tokens_is_a_call_with_an_arguments_error() -> None:
    cut = dataclasses.replace(
        tool_calls([("t1", "kb__lookup", '{"word": "te')]), finish_reason="length"
    )
    with FakeAnthropicServer([cut]) as server:
        async with anthropic_provider(server.base_url) as provider:
            completion = await complete(
                provider, ModelRequest("m", (ChatMessage("user", "tea?"),), (LOOKUP,))
            )
    [call] = completion.message.tool_calls
    assert (call.id, call.name, call.arguments) == ("t1", "kb__lookup", {})
    assert call.arguments_error is not None
    assert "max_tokens" in call.arguments_error
    assert completion.stop_reason == "max_tokens"


@pytest.mark.parametrize(
    ("raw", "expected"), [("[1, 2]", "not a JSON object"), ('{"word": ', "malformed")]
)
async def test_tool_input_that_is_not_an_object_is_a_call_with_an_arguments_error(
    raw: str, expected: str
) -> None:
    with FakeAnthropicServer([tool_calls([("t1", "kb__lookup", raw)])]) as server:
        async with anthropic_provider(server.base_url) as provider:
            completion = await complete(
                provider, ModelRequest("m", (ChatMessage("user", "tea?"),), (LOOKUP,))
            )
    [call] = completion.message.tool_calls
    assert call.arguments == {}
    assert call.arguments_error is not None and expected in call.arguments_error
    assert "max_tokens" not in call.arguments_error


async def test_the_model_gets_the_parse_error_as_the_call_result_and_tries_again() -> None:
    def respond(body: RequestBody) -> Reply:
        if body.rounds_since_user == 0:
            cut = tool_calls([("t1", "kb__lookup", '{"word": "te')])
            return dataclasses.replace(cut, finish_reason="length")
        if body.rounds_since_user == 1:
            return tool_calls([("t2", "kb__lookup", {"word": "tea"})])
        return text("Tea is a drink.")

    with FakeAnthropicServer(responder=respond) as server:
        events, toolbox = await run_session(server, "What is tea?")
    final = events[-1]
    assert isinstance(final, FinalAnswer), final
    assert final.text == "Tea is a drink."
    assert toolbox.calls == [{"word": "tea"}]  # the unreadable call was never run
    finished = [e for e in events if isinstance(e, ToolCallFinished)]
    assert finished[0].is_error and "max_tokens" in finished[0].result
    retry = server.bodies[1]["messages"]
    assert retry[1]["content"] == [
        {"type": "tool_use", "id": "t1", "name": "kb__lookup", "input": {}}
    ]
    [returned] = retry[2]["content"]
    assert returned["tool_use_id"] == "t1" and returned["is_error"] is True
    assert "could not be read" in returned["content"] and "max_tokens" in returned["content"]
