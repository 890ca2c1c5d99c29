"""The OpenAI-compatible provider against what real model servers do differently from OpenAI.

Each quirk is played by ``FakeOpenAIServer``'s options (llama-cpp-python's all at once with
``FakeOpenAIServer.like_llama_cpp_python``) over real HTTP on loopback, to the real provider.
"""

from __future__ import annotations

import json
import re
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import anyio
import pytest

from mcp_export.errors import ProviderError, ProviderProtocolError, ProviderServerError
from mcp_export.providers._endpoint import endpoint_name
from mcp_export.providers.base import (
    ChatMessage,
    Completion,
    ModelRequest,
    ProviderEvent,
    ProviderNotice,
    TextDelta,
    ToolCallRequest,
    ToolSchema,
    Usage,
)
from mcp_export.providers.openai_provider import OpenAIProvider
from mcp_export.session.chat import ChatSession, run_to_result
from schema_types.agent import Agent
from tests.fakes import (
    FakeOpenAIServer,
    Reply,
    RequestBody,
    events,
    page,
    status,
    text,
    tool_calls,
)

pytestmark = pytest.mark.anyio

WEATHER = ToolSchema(
    "get_weather",
    "The weather in a city.",
    {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
)


def ask(question: str = "Hi", **kwargs: Any) -> ModelRequest:
    return ModelRequest("fake-model", (ChatMessage("user", question),), **kwargs)


@asynccontextmanager
async def provider_at(base_url: str, **kwargs: Any) -> AsyncIterator[OpenAIProvider]:
    kwargs.setdefault("retry_delay", 0.01)
    provider = OpenAIProvider(kwargs.pop("api_key", None), base_url, **kwargs)
    try:
        yield provider
    finally:
        await provider.aclose()


async def events_of(provider: OpenAIProvider, request: ModelRequest) -> list[ProviderEvent]:
    return [event async for event in provider.stream(request)]


def chunk(delta: dict[str, Any], finish: str | None = None) -> bytes:
    """One Chat Completions stream event with one choice."""
    choice = {"index": 0, "delta": delta, "finish_reason": finish}
    return b"data: " + json.dumps({"choices": [choice]}).encode() + b"\n\n"


def completion_of(events: list[ProviderEvent]) -> Completion:
    completions = [e for e in events if isinstance(e, Completion)]
    assert len(completions) == 1 and events[-1] is completions[0]
    return completions[0]


# --- tool-call names ----------------------------------------------------------------------------


async def test_a_name_repeated_in_every_delta_is_read_once() -> None:
    calls = [
        ("call_1", "get_weather", {"city": "Oslo"}),
        ("call_2", "get_weather", {"city": "Rome"}),
    ]
    with FakeOpenAIServer([tool_calls(calls)], repeat_tool_names=True) as server:
        async with provider_at(server.base_url) as provider:
            completion = completion_of(await events_of(provider, ask(tools=(WEATHER,))))
    assert completion.message.tool_calls == (
        ToolCallRequest("call_1", "get_weather", {"city": "Oslo"}),
        ToolCallRequest("call_2", "get_weather", {"city": "Rome"}),
    )


@pytest.mark.parametrize(
    ("pieces", "offered", "name"),
    [
        (["get_", "weather"], ("get_weather",), "get_weather"),  # a name sent in pieces joins
        (["get_weather", "get_weather"], ("get_weather",), "get_weather"),  # repeated whole
        (["a", "a"], ("aa",), "aa"),  # only the doubled name is offered
        (["a", "a"], ("a", "aa"), "a"),  # both are: a repeat is the likelier
    ],
)
async def test_name_pieces_join_unless_a_piece_repeats_the_name(
    pieces: list[str], offered: tuple[str, ...], name: str
) -> None:
    def call(function: dict[str, str]) -> bytes:
        return chunk({"tool_calls": [{"index": 0, "id": "c1", "function": function}]})

    stream = [call({"name": piece, "arguments": ""}) for piece in pieces]
    stream += [call({"arguments": "{}"}), chunk({}, "tool_calls"), b"data: [DONE]\n\n"]
    tools = tuple(ToolSchema(n, "", {"type": "object"}) for n in offered)
    with FakeOpenAIServer([events(*stream)]) as server:
        async with provider_at(server.base_url) as provider:
            completion = completion_of(await events_of(provider, ask(tools=tools)))
    assert [call.name for call in completion.message.tool_calls] == [name]


# --- what the request carries -------------------------------------------------------------------


async def test_an_assistant_message_that_only_calls_tools_has_empty_not_null_content() -> None:
    conversation = (
        ChatMessage("user", "Weather in Oslo?"),
        ChatMessage(
            "assistant", "", tool_calls=(ToolCallRequest("c1", "get_weather", {"city": "Oslo"}),)
        ),
        ChatMessage("tool", "sunny", tool_call_id="c1", name="get_weather"),
    )
    request = ModelRequest("fake-model", conversation, (WEATHER,))
    with FakeOpenAIServer([text("Sunny.")], refuse_null_content=True) as server:
        async with provider_at(server.base_url) as provider:
            completion = completion_of(await events_of(provider, request))
    assert completion.message.content == "Sunny."
    assert server.bodies[0]["messages"][1]["content"] == ""
    nulls = [
        (index, key)
        for index, message in enumerate(server.bodies[0]["messages"])
        for key, value in message.items()
        if value is None
    ]
    assert nulls == []


# --- token counts -------------------------------------------------------------------------------


async def test_a_stream_without_usage_leaves_the_counts_unknown_not_zero() -> None:
    with FakeOpenAIServer([text("Hello")], usage_in_stream=False) as server:
        async with provider_at(server.base_url) as provider:
            completion = completion_of(await events_of(provider, ask()))
    assert server.bodies[0]["stream_options"] == {"include_usage": True}
    assert completion.usage == Usage(None, None)


@pytest.mark.parametrize(
    ("usage", "expected"),
    [
        ({"prompt_tokens": 5}, Usage(5, None)),
        ({"completion_tokens": 2, "prompt_tokens": "many"}, Usage(None, 2)),
        ({"prompt_tokens": True, "completion_tokens": 0}, Usage(None, 0)),
    ],
)
async def test_a_count_the_usage_chunk_lacks_stays_unknown(
    usage: dict[str, Any], expected: Usage
) -> None:
    answer = [
        chunk({"content": "Hi"}),
        chunk({}, "stop"),
        b"data: " + json.dumps({"choices": [], "usage": usage}).encode() + b"\n\n",
        b"data: [DONE]\n\n",
    ]
    with FakeOpenAIServer([events(*answer)]) as server:
        async with provider_at(server.base_url) as provider:
            completion = completion_of(await events_of(provider, ask()))
    assert completion.usage == expected


# --- streaming and tools ------------------------------------------------------------------------


async def test_offered_tools_go_with_an_explicit_automatic_choice() -> None:
    provider = OpenAIProvider(None, "http://127.0.0.1:1/v1")
    assert provider.request_arguments(ask(tools=(WEATHER,)))["tool_choice"] == "auto"
    named = provider.request_arguments(ask(tools=(WEATHER,), parameters={"tool_choice": "none"}))
    assert named["tool_choice"] == "none"
    assert "tool_choice" not in provider.request_arguments(ask())


async def test_a_server_that_refuses_streamed_tool_use_gets_tool_turns_whole() -> None:
    weather = tool_calls([("c1", "get_weather", {"city": "Oslo"})], usage=(9, 4))
    script = [weather, tool_calls([("c2", "get_weather", {"city": "Rome"})]), text("Plain.")]
    with FakeOpenAIServer(script, refuse_streamed_tool_choice=True) as server:
        async with provider_at(server.base_url, max_retries=2) as provider:
            first = await events_of(provider, ask(tools=(WEATHER,)))
            second = await events_of(provider, ask(tools=(WEATHER,)))
            plain = await events_of(provider, ask())
        bodies = server.bodies
    host = server.base_url.removeprefix("http://").removesuffix("/v1")
    assert first[0] == ProviderNotice(
        f"{host} refuses streamed tool use; tool turns go without streaming"
    )
    assert completion_of(first).message.tool_calls == (
        ToolCallRequest("c1", "get_weather", {"city": "Oslo"}),
    )
    assert completion_of(first).usage == Usage(9, 4)
    assert completion_of(first).stop_reason == "tool_use"
    # Refused once (not retried), asked again whole; the endpoint is remembered, without a
    # second notice; a request without tools still streams.
    assert [(b["stream"], "stream_options" in b) for b in bodies] == [
        (True, True),
        (False, False),
        (False, False),
        (True, True),
    ]
    assert not any(isinstance(e, ProviderNotice) for e in second + plain)
    assert completion_of(second).message.tool_calls[0].arguments == {"city": "Rome"}
    assert completion_of(plain).message.content == "Plain."


async def test_an_empty_streamed_answer_is_asked_again_whole_once() -> None:
    empty = events()  # a 200 event stream without a byte: llama-cpp-python failing inside it
    script = [
        empty,
        status(400, message="the prompt is too long"),
        empty,
        text("Whole."),
        text("x"),
    ]
    with FakeOpenAIServer(script) as server:
        async with provider_at(server.base_url, max_retries=2) as provider:
            with pytest.raises(ProviderError, match=r"\(400\): the prompt is too long$"):
                await events_of(provider, ask())
            found = await events_of(provider, ask())
            again = await events_of(provider, ask())
        bodies = server.bodies
    assert found == [
        TextDelta("Whole."),
        Completion(ChatMessage("assistant", "Whole."), Usage(1, 1), "end_turn"),
    ]
    assert completion_of(again).message.content == "x"
    # Without tools nothing is remembered and no notice is given: the next request streams.
    assert [b["stream"] for b in bodies] == [True, False, True, False, True]


@pytest.mark.parametrize(
    "refusal", ["Automatic streaming tool choice is not supported", "Cannot use tools with stream"]
)
async def test_each_known_refusal_of_streamed_tools_is_recognised(refusal: str) -> None:
    script = [status(500, message=refusal), text("Whole.")]
    with FakeOpenAIServer(script) as server:
        async with provider_at(server.base_url, max_retries=2) as provider:
            found = await events_of(provider, ask(tools=(WEATHER,)))
    assert isinstance(found[0], ProviderNotice)
    assert completion_of(found).message.content == "Whole."
    assert [b["stream"] for b in server.bodies] == [True, False]


async def test_the_stream_setting_off_asks_for_whole_answers() -> None:
    with FakeOpenAIServer([text("Hello world", chunks=3, usage=(7, 2))]) as server:
        async with provider_at(server.base_url, stream=False) as provider:
            found = await events_of(provider, ask())
    assert found == [
        TextDelta("Hello world"),
        Completion(ChatMessage("assistant", "Hello world"), Usage(7, 2), "end_turn"),
    ]
    assert server.bodies[0]["stream"] is False
    assert "stream_options" not in server.bodies[0]


async def test_a_whole_answer_with_arguments_as_an_object_and_no_finish_reason_is_read() -> None:
    body = {
        "choices": [
            {
                "index": 0,
                "message": {
                    "role": "assistant",
                    "content": None,
                    "tool_calls": [
                        {
                            "id": "c1",
                            "function": {"name": "get_weather", "arguments": {"city": "Oslo"}},
                        }
                    ],
                },
            }
        ]
    }
    with FakeOpenAIServer([page(200, json.dumps(body), content_type="application/json")]) as server:
        async with provider_at(server.base_url, stream=False) as provider:
            found = await events_of(provider, ask(tools=(WEATHER,)))
    assert found == [
        Completion(
            ChatMessage(
                "assistant",
                "",
                tool_calls=(ToolCallRequest("c1", "get_weather", {"city": "Oslo"}),),
            ),
            Usage(None, None),
            "tool_use",
        )
    ]


@pytest.mark.parametrize(
    ("answer", "error", "message"),
    [
        (
            page(200, "OK", content_type="text/plain"),
            ProviderProtocolError,
            r"answered 200 with a text/plain body \('OK'\), not a Chat Completions answer",
        ),
        (
            page(200, '{"object": "list"}', content_type="application/json"),
            ProviderProtocolError,
            r"which holds no answer \(no choices\)",
        ),
        (
            page(
                200, '{"error": {"message": "model is loading"}}', content_type="application/json"
            ),
            ProviderServerError,
            r"answered with an error: model is loading",
        ),
    ],
    ids=["text", "no-choices", "error"],
)
async def test_a_whole_answer_that_is_not_one_says_what_came(
    answer: Any, error: type[Exception], message: str
) -> None:
    with FakeOpenAIServer([answer]) as server:
        async with provider_at(server.base_url, stream=False) as provider:
            with pytest.raises(error, match=message):
                await events_of(provider, ask())


# --- how messages name the endpoint -------------------------------------------------------------


@pytest.mark.parametrize(
    ("owned_by", "kind"),
    [
        ("me", "llama-cpp-python"),
        ("llamacpp", "llama.cpp"),
        ("vllm", "vLLM"),
        ("library", "Ollama"),
        ("organization_owner", "LM Studio"),
    ],
)
async def test_a_failure_names_the_server_where_it_is_and_what_its_model_list_says(
    owned_by: str, kind: str
) -> None:
    with FakeOpenAIServer(responder=lambda body: status(500), owned_by=owned_by) as server:
        async with provider_at(server.base_url, max_retries=1) as provider:
            with pytest.raises(ProviderServerError) as caught:
                await events_of(provider, ask())
        asked = [r.path for r in server.requests if r.method == "GET"]
    host = server.base_url.removeprefix("http://").removesuffix("/v1")
    assert str(caught.value).startswith(f"{host} ({kind}) failed with 500: ")
    assert asked == ["/v1/models"]  # asked once, not once per attempt


async def test_a_server_whose_model_list_says_nothing_is_named_by_its_server_header() -> None:
    with FakeOpenAIServer([status(400, message="bad temperature")]) as server:
        async with provider_at(server.base_url) as provider:
            with pytest.raises(ProviderError) as caught:
                await events_of(provider, ask())
    host = server.base_url.removeprefix("http://").removesuffix("/v1")
    assert re.match(
        rf"{re.escape(host)} \(server: BaseHTTP/[\d.]+ Python/[\d.]+\) refused the request "
        r"\(400\): bad temperature$",
        str(caught.value),
    ), caught.value


@pytest.mark.parametrize(
    ("url", "name"),
    [
        ("https://api.openai.com/v1", "OpenAI"),
        ("https://openrouter.ai/api/v1", "OpenRouter"),
        ("https://work.openai.azure.com/openai/deployments/gpt-4o", "Azure OpenAI"),
        ("https://work.openai.azure.com/openai/v1", "Azure OpenAI"),
        ("http://gpu-box:8000/v1", "gpu-box:8000"),
        ("https://user:secret@models.example.com/v1", "models.example.com"),
    ],
)
def test_hosted_apis_go_by_their_name_and_others_by_where_they_are(url: str, name: str) -> None:
    assert endpoint_name(url) == name


# --- tool arguments the model got wrong ---------------------------------------------------------


async def test_arguments_cut_off_by_max_tokens_make_a_call_that_says_so() -> None:
    call = {"index": 0, "id": "c1", "function": {"name": "get_weather", "arguments": '{"ci'}}
    answer = [chunk({"tool_calls": [call]}), chunk({}, "length"), b"data: [DONE]\n\n"]
    with FakeOpenAIServer([events(*answer)]) as server:
        async with provider_at(server.base_url) as provider:
            completion = completion_of(await events_of(provider, ask(tools=(WEATHER,))))
    (made,) = completion.message.tool_calls
    assert (made.name, made.arguments) == ("get_weather", {})
    assert made.arguments_error is not None
    assert made.arguments_error.startswith(
        "the arguments are not valid JSON (the answer hit max_tokens): Unterminated string"
    )
    assert completion.stop_reason == "max_tokens"


@pytest.mark.parametrize(
    ("arguments", "error"),
    [("[1, 2]", "the arguments are a JSON array, not a JSON object"), ('"Oslo"', "a JSON string")],
)
async def test_arguments_that_are_not_an_object_make_a_call_that_says_so(
    arguments: str, error: str
) -> None:
    with FakeOpenAIServer([tool_calls([("c1", "get_weather", arguments)])]) as server:
        async with provider_at(server.base_url) as provider:
            completion = completion_of(await events_of(provider, ask(tools=(WEATHER,))))
    (made,) = completion.message.tool_calls
    assert made.arguments == {}
    assert made.arguments_error is not None and error in made.arguments_error


async def test_the_model_reads_why_its_call_could_not_run_and_the_next_turn_answers() -> None:
    script = [tool_calls([("c1", "get_weather", '{"city": "Os')]), text("Sorry, Oslo is sunny.")]
    agent = Agent.model_validate({"settings": {"model": "openai:fake-model"}})
    with FakeOpenAIServer(script) as server:
        async with provider_at(server.base_url) as provider:
            session = ChatSession(agent, provider=provider, model="fake-model")
            with anyio.fail_after(20):
                result = await run_to_result(session, "Weather in Oslo?")
        bodies = server.bodies
    assert result.answer == "Sorry, Oslo is sunny.", result
    assistant, tool_result = bodies[1]["messages"][-2:]
    assert assistant["tool_calls"][0]["function"] == {"name": "get_weather", "arguments": "{}"}
    assert tool_result["tool_call_id"] == "c1"
    assert tool_result["content"].startswith(
        "Error: the arguments of this call could not be read: the arguments are not valid JSON: "
    )


# --- how many requests at once ------------------------------------------------------------------


async def test_a_limit_of_one_sends_one_request_at_a_time_and_the_rest_wait_in_line() -> None:
    def slow(body: RequestBody) -> Reply:
        return text(body.last_user_text, chunks=3, chunk_delay=0.02)

    with FakeOpenAIServer(responder=slow) as server:
        async with provider_at(server.base_url, max_concurrency=1) as provider:
            answers: dict[int, str] = {}

            async def one(index: int) -> None:
                found = completion_of(await events_of(provider, ask(f"q{index}")))
                answers[index] = found.message.content

            with anyio.fail_after(30):
                async with anyio.create_task_group() as group:
                    for index in range(6):
                        group.start_soon(one, index)
        assert server.max_in_flight == 1
    assert answers == {i: f"q{i}" for i in range(6)}


async def test_without_a_limit_two_hundred_requests_are_in_flight_at_once() -> None:
    count = 200
    with FakeOpenAIServer(hold_until_in_flight=count, hold_seconds=10) as server:
        async with provider_at(server.base_url) as provider:
            answers: list[str] = []

            async def one(index: int) -> None:
                answers.append(
                    completion_of(await events_of(provider, ask(f"q{index}"))).message.content
                )

            with anyio.fail_after(60):
                async with anyio.create_task_group() as group:
                    for index in range(count):
                        group.start_soon(one, index)
        assert server.max_in_flight == count
    assert sorted(answers) == sorted(f"q{i}" for i in range(count))


async def test_a_limit_is_shared_by_every_provider_of_the_endpoint() -> None:
    with FakeOpenAIServer.like_llama_cpp_python(
        responder=lambda body: text(body.last_user_text, chunks=4, chunk_delay=0.05)
    ) as server:
        async with (
            provider_at(server.base_url, max_concurrency=1) as first,
            provider_at(server.base_url, max_concurrency=1) as second,
        ):
            with anyio.fail_after(30):
                async with anyio.create_task_group() as group:
                    results: list[str] = []

                    async def one(provider: OpenAIProvider, question: str) -> None:
                        found = completion_of(await events_of(provider, ask(question)))
                        results.append(found.message.content)

                    group.start_soon(one, first, "one two three four")
                    group.start_soon(one, second, "five six seven eight")
        assert server.max_in_flight == 1
    # The server cuts off a stream in progress when another starts: both whole means in line.
    assert sorted(results) == ["five six seven eight", "one two three four"]
