"""tools/call on the served server: answers, bad arguments, failures, progress, cancel, concurrency.

The model is the real OpenAI provider talking to ``FakeOpenAIServer`` (a real HTTP server on
loopback); inner tools come from the real ``mcp-server-time`` over stdio. Every test runs with the
official ``mcp.Client`` in both protocol eras, connected in-process to the real server object.
"""

from __future__ import annotations

import logging
import sys
import threading
import time
from pathlib import Path
from typing import Any, cast

import anyio
import jsonschema
import mcp_types as types
import pytest
from mcp import Client
from mcp.shared.exceptions import MCPError

from mcp_export.providers.factory import provider_for_agent
from mcp_export.server.agent_server import AgentServer, load_served_agents
from mcp_export.server.result import progress_message
from mcp_export.server.steps import drive
from mcp_export.session.chat import ChatSession
from mcp_export.session.events import FinalAnswer, TurnFinished
from mcp_export.toolbox.agent_toolbox import AgentToolbox
from tests.fakes._script import (
    Reply,
    RequestBody,
    hang,
    status,
    text,
    text_without_usage,
    tool_round_then_text,
)
from tests.fakes.mcp_clients import REPO, ProgressLog, book_tool, time_server, write_agent
from tests.fakes.noticing_provider import NOTICE, NoticingProvider
from tests.fakes.openai_server import FakeOpenAIServer

pytestmark = pytest.mark.anyio

MODES = pytest.mark.parametrize("mode", ["legacy", "auto"])
TIME_CALL = ("call_1", "t__get_current_time", {"timezone": "UTC"})


def _text(result: types.CallToolResult) -> str:
    return "".join(b.text for b in result.content if isinstance(b, types.TextContent))


def _served(path: Path, **options: Any) -> AgentServer:
    options.setdefault("history", False)
    return AgentServer(load_served_agents([path]), **options)


@MODES
async def test_a_good_call_answers_with_text_and_structured_content(
    tmp_path: Path, mode: str
) -> None:
    with FakeOpenAIServer([text("Booked AF123 to Oslo.", chunks=3, usage=(40, 7))]) as model:
        path = write_agent(
            tmp_path / "a.agent.yaml", base_url=model.base_url, system_prompt="You book trips."
        )
        async with _served(path) as served, Client(served.server, mode=mode) as client:
            result = await client.call_tool("book_flight", {"destination": "Oslo"})
        body = model.bodies[0]
    assert not result.is_error
    assert _text(result) == "Booked AF123 to Oslo."
    data = result.structured_content
    assert data is not None
    assert data["answer"] == "Booked AF123 to Oslo."
    assert data["toolCalls"] == []
    assert data["usage"] == {"inputTokens": 40, "outputTokens": 7}
    assert data["durationMs"] > 0
    assert "conversationId" not in data
    # The template was filled with the default of the missing optional argument.
    assert body["messages"][0] == {"role": "system", "content": "You book trips."}
    assert body["messages"][-1]["content"] == "Book a flight to Oslo for 1 passenger(s)."
    assert body["model"] == "fake-model"


@MODES
async def test_inner_tool_calls_reach_the_time_server_and_show_in_the_trace(
    tmp_path: Path, mode: str
) -> None:
    with FakeOpenAIServer(responder=tool_round_then_text([TIME_CALL])) as model:
        path = write_agent(
            tmp_path / "a.agent.yaml", base_url=model.base_url, mcp_servers={"t": time_server()}
        )
        async with _served(path) as served, Client(served.server, mode=mode) as client:
            result = await client.call_tool("book_flight", {"destination": "Oslo"})
        tools_offered = [t["function"]["name"] for t in model.bodies[0]["tools"]]
    assert not result.is_error, _text(result)
    assert "t__get_current_time" in tools_offered
    data = result.structured_content
    assert data is not None
    (call,) = data["toolCalls"]
    assert call["name"] == "t__get_current_time"
    assert call["arguments"] == {"timezone": "UTC"}
    assert call["isError"] is False
    assert call["durationMs"] > 0
    assert data["answer"].startswith("done: ")
    assert '"timezone": "UTC"' in data["answer"] or '"timezone":"UTC"' in data["answer"]


@MODES
async def test_bad_arguments_are_an_error_result_listing_every_bad_field(
    tmp_path: Path, mode: str
) -> None:
    parameters = {
        "type": "object",
        "properties": {
            "destination": {"type": "string"},
            "passengers": {"type": "integer", "minimum": 1},
            "class": {"enum": ["economy", "business"]},
        },
        "required": ["destination"],
        "additionalProperties": False,
    }
    with FakeOpenAIServer() as model:
        path = write_agent(
            tmp_path / "a.agent.yaml",
            base_url=model.base_url,
            tools=[book_tool(parameters=parameters)],
        )
        async with _served(path) as served, Client(served.server, mode=mode) as client:
            result = await client.call_tool(
                "book_flight", {"passengers": 0, "class": "first", "pet": "cat"}
            )
        assert model.model_requests == []
    assert result.is_error
    lines = _text(result).splitlines()
    assert lines[0] == "Invalid arguments for book_flight:"
    problems = "\n".join(lines[1:])
    assert len(lines) == 5, lines
    for field in ("destination", "passengers", "class", "pet"):
        assert field in problems


@MODES
async def test_an_unknown_tool_is_a_protocol_error(tmp_path: Path, mode: str) -> None:
    path = write_agent(tmp_path / "a.agent.yaml")
    async with _served(path) as served, Client(served.server, mode=mode) as client:
        with pytest.raises(MCPError) as caught:
            await client.call_tool("no_such_tool", {})
    assert caught.value.error.code == types.INVALID_PARAMS
    assert caught.value.error.message == "Unknown tool: no_such_tool"


@MODES
async def test_a_failing_model_is_an_error_result_with_the_reason_and_what_to_do(
    tmp_path: Path, mode: str
) -> None:
    with FakeOpenAIServer(responder=lambda body: status(500, message="model exploded")) as model:
        path = write_agent(tmp_path / "a.agent.yaml", base_url=model.base_url)
        async with _served(path) as served, Client(served.server, mode=mode) as client:
            result = await client.call_tool("book_flight", {"destination": "Oslo"})
            # The server stays healthy.
            model.responder = lambda body: text("fine again")
            again = await client.call_tool("book_flight", {"destination": "Oslo"})
    assert result.is_error
    message = _text(result)
    assert message.startswith("book_flight failed: ")
    assert "500" in message or "model exploded" in message
    assert "What to do: " in message
    assert _text(again) == "fine again"


@MODES
async def test_an_inner_tool_refused_by_permission_is_an_error_in_the_trace(
    tmp_path: Path, mode: str
) -> None:
    responder = tool_round_then_text([TIME_CALL], answer="could not check the time")
    with FakeOpenAIServer(responder=responder) as model:
        path = write_agent(
            tmp_path / "a.agent.yaml",
            base_url=model.base_url,
            mcp_servers={"t": time_server(permission_required=True)},
            tool_permission="tool",
        )
        async with _served(path) as served, Client(served.server, mode=mode) as client:
            result = await client.call_tool("book_flight", {"destination": "Oslo"})
        tool_result = model.bodies[1]["messages"][-1]
    assert not result.is_error
    data = result.structured_content
    assert data is not None
    (call,) = data["toolCalls"]
    assert call["name"] == "t__get_current_time"
    assert call["isError"] is True
    assert "needs permission" in tool_result["content"]
    assert data["answer"] == "could not check the time"


@MODES
async def test_progress_is_reported_per_turn_and_per_inner_tool_call(
    tmp_path: Path, mode: str
) -> None:
    with FakeOpenAIServer(responder=tool_round_then_text([TIME_CALL])) as model:
        path = write_agent(
            tmp_path / "a.agent.yaml", base_url=model.base_url, mcp_servers={"t": time_server()}
        )
        progress = ProgressLog()
        async with _served(path) as served, Client(served.server, mode=mode) as client:
            result = await client.call_tool(
                "book_flight", {"destination": "Oslo"}, progress_callback=progress
            )
    assert not result.is_error
    messages = progress.messages
    assert messages[0].startswith("model turn 1 finished")
    assert messages[1] == "calling t__get_current_time"
    assert messages[2].startswith("t__get_current_time finished in ")
    assert messages[3].startswith("model turn 2 finished")
    values = [p for p, _, _ in progress.updates]
    assert values == sorted(values) and len(set(values)) == len(values)


@MODES
async def test_cancelling_a_call_stops_the_model_request_and_the_server_stays_healthy(
    tmp_path: Path, mode: str
) -> None:
    with FakeOpenAIServer([hang()]) as model:
        path = write_agent(tmp_path / "a.agent.yaml", base_url=model.base_url)
        async with _served(path) as served, Client(served.server, mode=mode) as client:
            async with anyio.create_task_group() as group:
                group.start_soon(client.call_tool, "book_flight", {"destination": "Oslo"})
                assert await anyio.to_thread.run_sync(model.wait_for_requests, 1, 10.0)
                group.cancel_scope.cancel()
            # The model request was abandoned: the fake server saw the connection close.
            assert await anyio.to_thread.run_sync(model.wait_for_disconnect, 1, 10.0)
            model.enqueue(text("after the cancel"))
            with anyio.fail_after(10):
                again = await client.call_tool("book_flight", {"destination": "Rome"})
    assert _text(again) == "after the cancel"


@MODES
async def test_twenty_concurrent_calls_run_concurrently_and_get_their_own_answers(
    tmp_path: Path, mode: str
) -> None:
    # The model answers no request before all twenty are in: calls run one after another would
    # never get there, the barrier would break after its bound and every call would fail.
    all_in = threading.Barrier(20, timeout=30)

    def respond(body: RequestBody) -> Reply:
        all_in.wait()
        return text(f"answer for {body.last_user_text}")

    with FakeOpenAIServer(responder=respond) as model:
        path = write_agent(tmp_path / "a.agent.yaml", base_url=model.base_url)
        results: dict[int, types.CallToolResult] = {}
        async with _served(path) as served, Client(served.server, mode=mode) as client:

            async def call(index: int) -> None:
                results[index] = await client.call_tool(
                    "book_flight", {"destination": f"city-{index}"}
                )

            with anyio.fail_after(90):
                async with anyio.create_task_group() as group:
                    for index in range(20):
                        group.start_soon(call, index)
    assert model.errors == [], "the calls did not all wait for the model at the same time"
    assert len(results) == 20
    for index, result in results.items():
        assert not result.is_error
        expected = f"answer for Book a flight to city-{index} for 1 passenger(s)."
        assert _text(result) == expected
    assert len({_text(r) for r in results.values()}) == 20


EMPTY_ANSWER = (
    "book_flight failed: the model answered with an empty message\n"
    "What to do: try again, or make the prompt ask for a written answer"
)


@MODES
async def test_an_empty_model_answer_is_the_sessions_failure_not_an_empty_success(
    tmp_path: Path, mode: str
) -> None:
    with FakeOpenAIServer([text("")]) as model:
        path = write_agent(tmp_path / "a.agent.yaml", base_url=model.base_url)
        async with _served(path) as served, Client(served.server, mode=mode) as client:
            result = await client.call_tool("book_flight", {"destination": "Oslo"})
    assert result.is_error
    assert result.structured_content is None
    assert _text(result) == EMPTY_ANSWER


@MODES
async def test_an_answer_cut_at_max_tokens_before_any_word_says_the_tokens_ran_out(
    tmp_path: Path, mode: str
) -> None:
    with FakeOpenAIServer([text("", finish_reason="length")]) as model:
        path = write_agent(tmp_path / "a.agent.yaml", base_url=model.base_url)
        async with _served(path) as served, Client(served.server, mode=mode) as client:
            result = await client.call_tool("book_flight", {"destination": "Oslo"})
    assert result.is_error
    assert _text(result).splitlines()[0] == (
        "book_flight failed: the model used up its output tokens before writing any answer "
        "(settings.maxOutputTokens)"
    )


@MODES
async def test_a_model_server_that_reports_no_usage_answers_with_null_counts_not_zero(
    tmp_path: Path, mode: str
) -> None:
    with FakeOpenAIServer([text_without_usage("Booked AF123 to Oslo.", chunks=3)]) as model:
        path = write_agent(tmp_path / "a.agent.yaml", base_url=model.base_url)
        progress = ProgressLog()
        async with _served(path) as served, Client(served.server, mode=mode) as client:
            # The SDK client checks structuredContent against the listed outputSchema.
            result = await client.call_tool(
                "book_flight", {"destination": "Oslo"}, progress_callback=progress
            )
            listed = {t.name: t for t in (await client.list_tools()).tools}
        asked_for_usage = model.bodies[0]["stream_options"] == {"include_usage": True}
    assert asked_for_usage
    assert not result.is_error, _text(result)
    data = result.structured_content
    assert data is not None
    assert data["usage"] == {"inputTokens": None, "outputTokens": None}
    schema = listed["book_flight"].output_schema
    assert schema is not None
    jsonschema.validate(data, schema)
    assert progress.messages == ["model turn 1 finished"]


def test_progress_leaves_out_the_counts_that_were_not_reported() -> None:
    assert progress_message(TurnFinished(1, 40, 7)) == "model turn 1 finished (40 tokens in, 7 out)"
    assert progress_message(TurnFinished(2, 40, None)) == "model turn 2 finished (40 tokens in)"
    assert progress_message(TurnFinished(3, None, 7)) == "model turn 3 finished (7 tokens out)"
    assert progress_message(TurnFinished(4, None, None)) == "model turn 4 finished"
    assert progress_message(TurnFinished(5, 0, 0)) == "model turn 5 finished (0 tokens in, 0 out)"


@MODES
async def test_a_server_that_refuses_streamed_tool_use_is_noted_once_in_progress_and_the_log(
    tmp_path: Path, mode: str, caplog: pytest.LogCaptureFixture
) -> None:
    respond = tool_round_then_text([TIME_CALL], "It is noon.")
    with FakeOpenAIServer(responder=respond, refuse_streamed_tool_choice=True) as model:
        path = write_agent(
            tmp_path / "a.agent.yaml", base_url=model.base_url, mcp_servers={"t": time_server()}
        )
        progress = ProgressLog()
        with caplog.at_level(logging.INFO, logger="mcp_export.server.steps"):
            async with _served(path) as served, Client(served.server, mode=mode) as client:
                result = await client.call_tool(
                    "book_flight", {"destination": "Oslo"}, progress_callback=progress
                )
        streamed = [b["stream"] for b in model.bodies]
    host = model.base_url.removeprefix("http://").removesuffix("/v1")
    note = f"note: {host} refuses streamed tool use; tool turns go without streaming"
    assert not result.is_error, _text(result)
    assert _text(result) == "It is noon."  # the notice is not part of the answer
    assert streamed == [True, False, False]  # refused once, then whole answers
    assert progress.messages.count(note) == 1
    assert progress.messages[0] == note
    logged = [r for r in caplog.records if r.name == "mcp_export.server.steps"]
    assert [(r.levelno, r.getMessage()) for r in logged] == [(logging.INFO, note)]


class _ProgressContext:
    """The part of a request context ``drive`` uses: progress for the caller's token."""

    def __init__(self) -> None:
        self.session = self
        self.messages: list[str | None] = []

    async def report_progress(self, progress: float, total: float | None, message: str | None):
        self.messages.append(message)


async def test_a_notice_is_one_progress_message_and_one_info_line_in_the_servers_log(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    with FakeOpenAIServer(responder=tool_round_then_text([TIME_CALL], "It is noon.")) as model:
        path = write_agent(
            tmp_path / "a.agent.yaml", base_url=model.base_url, mcp_servers={"t": time_server()}
        )
        agent = load_served_agents([path])[0].agent
        provider, name = provider_for_agent(agent)
        toolbox = AgentToolbox(agent, base_dir=tmp_path)
        session = ChatSession(
            agent, provider=NoticingProvider(provider), model=name, toolbox=toolbox
        )
        ctx = _ProgressContext()
        try:
            with caplog.at_level(logging.INFO, logger="mcp_export.server.steps"):
                outcome = await drive(cast(Any, ctx), session, "What time is it?")
        finally:
            await toolbox.aclose()
            await provider.aclose()
    assert isinstance(outcome, FinalAnswer) and outcome.text == "It is noon."
    assert len(model.bodies) == 2  # two model requests, each with the notice
    assert ctx.messages[0] == f"note: {NOTICE}"
    assert ctx.messages.count(f"note: {NOTICE}") == 1
    turns = [m for m in ctx.messages if m and m.startswith("model turn")]
    assert len(turns) == 2 and all("tokens in" in m for m in turns)
    logged = [r for r in caplog.records if r.name == "mcp_export.server.steps"]
    assert [(r.levelno, r.getMessage()) for r in logged] == [(logging.INFO, f"note: {NOTICE}")]
    assert "note" not in outcome.text


@MODES
async def test_arguments_that_are_not_an_object_are_refused_as_a_result(
    tmp_path: Path, mode: str
) -> None:
    path = write_agent(tmp_path / "a.agent.yaml")
    async with _served(path) as served, Client(served.server, mode=mode) as client:
        result = await client.call_tool("book_flight", {"destination": ["not", "a", "string"]})
    assert result.is_error
    assert _text(result).splitlines()[1].startswith("destination: ")


@MODES
async def test_a_tool_server_that_never_starts_is_named_in_the_trace_while_the_others_serve(
    tmp_path: Path, mode: str
) -> None:
    silent = {
        "command": sys.executable,
        "args": ["-m", "tests.fakes.tool_server", "--never-initialize"],
        "cwd": str(REPO),
        "startupTimeoutSeconds": 1,
        "serverToolDefaults": {"permissionRequired": False},
    }
    with FakeOpenAIServer(responder=tool_round_then_text([TIME_CALL])) as model:
        path = write_agent(
            tmp_path / "a.agent.yaml",
            base_url=model.base_url,
            mcp_servers={"t": time_server(), "silent": silent},
            settings={"timeoutSeconds": 20},
        )
        async with _served(path) as served, Client(served.server, mode=mode) as client:
            started = time.monotonic()
            result = await client.call_tool("book_flight", {"destination": "Oslo"})
            elapsed = time.monotonic() - started
            listed = await client.list_tools()
        tools_offered = [t["function"]["name"] for t in model.bodies[0]["tools"]]
    assert not result.is_error, _text(result)
    assert "t__get_current_time" in tools_offered
    assert not any(name.startswith("silent__") for name in tools_offered)
    data = result.structured_content
    assert data is not None
    assert [c["name"] for c in data["toolCalls"]] == ["t__get_current_time"]
    assert "did not answer initialize within 1 s" in data["unavailableServers"]["silent"]
    assert elapsed < 10  # the silent server's one-second limit, not the call's twenty
    # The result conforms to the outputSchema the tool is listed with.
    (entry,) = [tool for tool in listed.tools if tool.name == "book_flight"]
    assert entry.output_schema is not None
    assert "unavailableServers" in entry.output_schema["properties"]
