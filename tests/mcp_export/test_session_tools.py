"""The chat loop with real parts all the way: the OpenAI provider against ``FakeOpenAIServer``,
real MCP tool servers over stdio (``mcp-server-time`` and the error-case ``tool_server``), the
shared ``AgentToolbox`` and the SQLite history store.
"""

from __future__ import annotations

import json
import shutil
import sys
from collections.abc import AsyncIterator
from contextlib import aclosing
from pathlib import Path
from typing import Any

import anyio
import pytest

from mcp_export.errors import TurnLimitExceeded
from mcp_export.history.store import HistoryStore
from mcp_export.providers.factory import provider_for_agent
from mcp_export.session.chat import ChatSession, run_to_result
from mcp_export.session.events import FinalAnswer, SessionEvent, SessionFailed, ToolCallFinished
from mcp_export.session.record import UNANSWERED_NOTE, load_thread_messages
from mcp_export.toolbox.agent_toolbox import AgentToolbox
from mcp_export.toolbox.connection import DEFAULT_STARTUP_TIMEOUT
from schema_types.agent import Agent
from tests.fakes._script import Reply, RequestBody, text, tool_calls
from tests.fakes.openai_server import FakeOpenAIServer

pytestmark = pytest.mark.anyio

REPO = Path(__file__).resolve().parents[2]


def time_server(**extra: Any) -> dict[str, Any]:
    """``mcp-server-time`` from PyPI, with UTC as its local zone (answers not host-dependent)."""
    local = Path(sys.executable).parent / "mcp-server-time"
    found = str(local) if local.exists() else shutil.which("mcp-server-time")
    base = (
        {"command": found, "args": ["--local-timezone", "UTC"]}
        if found
        else {
            "command": sys.executable,
            "args": ["-m", "mcp_server_time", "--local-timezone", "UTC"],
        }
    )
    return base | extra


def fake_tool_server(**extra: Any) -> dict[str, Any]:
    return {
        "command": sys.executable,
        "args": ["-m", "tests.fakes.tool_server"],
        "cwd": str(REPO),
    } | extra


FREE = {"serverToolDefaults": {"permissionRequired": False}}


def make_agent(server: FakeOpenAIServer, servers: dict[str, Any], **settings: Any) -> Agent:
    return Agent.model_validate(
        {
            "metadata": {"name": "Session test agent"},
            "systemPrompt": "You use tools.",
            "settings": {"model": "openai:fake-model", "toolPermission": "tool", **settings},
            "providers": {
                "openai": {"OPENAI_API_KEY": "env://TEST_KEY", "OPENAI_BASE_URL": server.base_url}
            },
            "mcpServers": servers,
        }
    )


@pytest.fixture(autouse=True)
def _key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TEST_KEY", "sk-test")


def thread_of(session: ChatSession) -> str:
    assert session.thread_id is not None
    return session.thread_id


async def events_of(session: ChatSession, message: str) -> list[SessionEvent]:
    async with aclosing(session.run(message)) as stream:
        return [event async for event in stream]


class Runtime:
    """Provider, shared toolbox and history for one agent, closed at the end of a test."""

    def __init__(self, agent: Agent, **toolbox: Any) -> None:
        self.agent = agent
        self.provider, self.model = provider_for_agent(agent)
        self.toolbox = AgentToolbox(agent, base_dir=REPO, **toolbox)
        self.history = HistoryStore()

    def session(self, **kwargs: Any) -> ChatSession:
        return ChatSession(
            self.agent,
            provider=self.provider,
            model=self.model,
            toolbox=self.toolbox,
            history=self.history,
            **kwargs,
        )

    async def aclose(self) -> None:
        await self.toolbox.aclose()
        await self.provider.aclose()
        self.history.close()


@pytest.fixture
async def runtimes() -> AsyncIterator[list[Runtime]]:
    made: list[Runtime] = []
    yield made
    with anyio.fail_after(20):
        for runtime in made:
            await runtime.aclose()


def results_text(body: RequestBody) -> str:
    return "done: " + " | ".join(r.content for r in body.tool_results)


# --- the cases ------------------------------------------------------------------------------


async def test_two_rounds_of_tool_calls_with_mcp_server_time(runtimes: list[Runtime]):
    def respond(body: RequestBody) -> Reply:
        if body.rounds_since_user == 0:
            return tool_calls([("c1", "time__get_current_time", {"timezone": "UTC"})])
        if body.rounds_since_user == 1:
            arguments = {"source_timezone": "UTC", "time": "12:00", "target_timezone": "Asia/Tokyo"}
            return tool_calls([("c2", "time__convert_time", arguments)], usage=(40, 9))
        return text(results_text(body), chunks=4, usage=(60, 12))

    with FakeOpenAIServer(responder=respond) as server:
        runtime = Runtime(make_agent(server, {"time": time_server(**FREE)}))
        runtimes.append(runtime)
        session = runtime.session()
        with anyio.fail_after(60):
            events = await events_of(session, "What time is it in Tokyo at noon UTC?")

    final = events[-1]
    assert isinstance(final, FinalAnswer), final
    assert final.turns == 3
    assert [c.name for c in final.tool_calls] == ["time__get_current_time", "time__convert_time"]
    assert not any(c.is_error for c in final.tool_calls)
    assert '"timezone": "UTC"' in final.text or '"timezone":"UTC"' in final.text
    assert "+09:00" in final.text  # Tokyo, from the real server's conversion
    assert final.usage.input_tokens is not None and final.usage.input_tokens >= 100
    assert final.usage.output_tokens is not None and final.usage.output_tokens >= 21
    offered = sorted(t["function"]["name"] for t in server.bodies[0]["tools"])
    assert offered == ["time__convert_time", "time__get_current_time"]

    rows = runtime.history.messages(thread_of(session))
    assert [(r.role, r.status) for r in rows] == [
        ("user", "complete"),
        ("assistant", "complete"),
        ("tool", "complete"),
        ("assistant", "complete"),
        ("tool", "complete"),
        ("assistant", "complete"),
    ]
    assert rows[-1].content == final.text
    assert rows[-1].tokens_in == 60 and rows[-1].tokens_out == 12
    assert rows[1].tool_calls and rows[1].tool_calls[0]["name"] == "time__get_current_time"


async def test_a_permission_required_tool_is_hidden_and_refused(runtimes: list[Runtime]):
    def respond(body: RequestBody) -> Reply:
        if body.rounds_since_user == 0:
            arguments = {"source_timezone": "UTC", "time": "12:00", "target_timezone": "Asia/Tokyo"}
            return tool_calls([("c1", "time__convert_time", arguments)])
        return text(results_text(body))

    servers = {
        "time": time_server(**FREE, tools={"convert_time": {"permissionRequired": True}}),
    }
    with FakeOpenAIServer(responder=respond) as server:
        runtime = Runtime(make_agent(server, servers))
        runtimes.append(runtime)
        session = runtime.session()
        with anyio.fail_after(60):
            events = await events_of(session, "convert")

    assert [t["function"]["name"] for t in server.bodies[0]["tools"]] == ["time__get_current_time"]
    finished = [e for e in events if isinstance(e, ToolCallFinished)]
    assert len(finished) == 1 and finished[0].refused and finished[0].is_error
    assert "permission" in finished[0].result
    final = events[-1]
    assert isinstance(final, FinalAnswer)
    assert final.tool_calls[0].refused
    # The model saw the refusal as the tool's result.
    tool_message = server.bodies[1]["messages"][-1]
    assert tool_message["role"] == "tool" and "permission" in tool_message["content"]
    tool_rows = [r for r in runtime.history.messages(thread_of(session)) if r.role == "tool"]
    assert len(tool_rows) == 1 and tool_rows[0].is_error


async def test_a_crashed_tool_server_is_an_error_result_and_the_next_session_recovers(
    runtimes: list[Runtime],
):
    def respond(body: RequestBody) -> Reply:
        if body.rounds_since_user == 0:
            if body.last_user_text == "crash it":
                return tool_calls([("c1", "fake__crash", {"code": 3})])
            return tool_calls([("c2", "fake__echo", {"text": "back again"})])
        return text(results_text(body))

    with FakeOpenAIServer(responder=respond) as server:
        runtime = Runtime(make_agent(server, {"fake": fake_tool_server(**FREE)}))
        runtimes.append(runtime)
        with anyio.fail_after(60):
            first = await run_to_result(runtime.session(), "crash it")
            second = await run_to_result(runtime.session(), "echo")

    assert first.error is None, first.error
    assert first.tool_calls[0].is_error
    assert "restarted on the next call" in first.tool_calls[0].result
    assert second.error is None, second.error
    assert not second.tool_calls[0].is_error
    assert "back again" in second.answer


async def test_twenty_concurrent_sessions_share_one_tool_server_without_crossing(
    runtimes: list[Runtime],
):
    def respond(body: RequestBody) -> Reply:
        if body.rounds_since_user == 0:
            said = body.last_user_text
            return tool_calls([(f"call-{said}", "fake__echo", {"text": said})])
        return text(results_text(body))

    with FakeOpenAIServer(responder=respond) as server:
        runtime = Runtime(make_agent(server, {"fake": fake_tool_server(**FREE)}))
        runtimes.append(runtime)
        sessions = [runtime.session() for _ in range(20)]
        answers: dict[int, str] = {}
        pids: set[int] = set()

        async def one(index: int) -> None:
            result = await run_to_result(sessions[index], f"message-{index:02d}")
            assert result.error is None, result.error
            answers[index] = result.answer
            pids.add(json.loads(result.tool_calls[0].result)["pid"])

        with anyio.fail_after(60):
            async with anyio.create_task_group() as group:
                for index in range(20):
                    group.start_soon(one, index)

    for index, answer in answers.items():
        assert f"message-{index:02d}" in answer
        assert sum(f"message-{other:02d}" in answer for other in range(20)) == 1
    assert len(answers) == 20
    assert len(pids) == 1  # one shared server process
    threads = {s.thread_id for s in sessions}
    assert len(threads) == 20 and None not in threads
    for index, session in enumerate(sessions):
        rows = runtime.history.messages(thread_of(session))
        assert [r.role for r in rows] == ["user", "assistant", "tool", "assistant"]
        assert rows[0].content == f"message-{index:02d}"
        assert all(r.status == "complete" for r in rows)
        assert f"message-{index:02d}" in rows[2].content


async def test_loop_cap_with_a_real_tool_server_ends_in_a_turn_limit_failure(
    runtimes: list[Runtime],
):
    def respond(body: RequestBody) -> Reply:
        call_id = f"c{body.rounds_since_user}"
        return tool_calls([(call_id, "time__get_current_time", {"timezone": "UTC"})])

    with FakeOpenAIServer(responder=respond) as server:
        runtime = Runtime(make_agent(server, {"time": time_server(**FREE)}, maxChatTurns=3))
        runtimes.append(runtime)
        session = runtime.session()
        with anyio.fail_after(60):
            events = await events_of(session, "loop")

    failed = events[-1]
    assert isinstance(failed, SessionFailed) and failed.kind == "turn-limit"
    assert isinstance(failed.error, TurnLimitExceeded)
    assert "maxChatTurns" in failed.hint
    assert len(server.model_requests) == 3
    assert len([e for e in events if isinstance(e, ToolCallFinished)]) == 2
    rows = runtime.history.messages(thread_of(session))
    assert [(r.role, r.status) for r in rows] == [
        ("user", "complete"),
        ("assistant", "complete"),
        ("tool", "complete"),
        ("assistant", "complete"),
        ("tool", "complete"),
        ("assistant", "complete"),
        ("assistant", "error"),
    ]
    assert "3 model requests" in (rows[-1].error or "")
    # The thread can be continued: the unanswered calls of the last turn get a "not run" result,
    # and the turn a note that it ended without an answer.
    resumed = load_thread_messages(runtime.history, thread_of(session))
    assert resumed[-2].role == "tool" and resumed[-2].content.startswith("not run:")
    assert (resumed[-1].role, resumed[-1].content) == ("assistant", UNANSWERED_NOTE)


async def test_a_tool_server_that_never_initializes_leaves_the_others_serving_in_time(
    runtimes: list[Runtime],
):
    def respond(body: RequestBody) -> Reply:
        if body.rounds_since_user == 0:
            return tool_calls([("c1", "time__get_current_time", {"timezone": "UTC"})])
        return text(results_text(body))

    # The silent server's start-up limit (16 s) is longer than a whole call (14 s): the call
    # waits for tool servers at most half its time, 7 s, which a busy machine's cold start of
    # the time server needs a good part of.
    silent = fake_tool_server(
        **FREE,
        args=["-m", "tests.fakes.tool_server", "--never-initialize"],
        startupTimeoutSeconds=16,
    )
    servers = {"time": time_server(**FREE), "silent": silent}
    with FakeOpenAIServer(responder=respond) as server:
        runtime = Runtime(make_agent(server, servers, timeoutSeconds=14))
        runtimes.append(runtime)
        with anyio.fail_after(14 + 2):
            first = await run_to_result(runtime.session(), "What time is it?")
        assert first.error is None, first.error
        starting = runtime.toolbox.server_errors["silent"]
        assert "'silent' is still starting: no answer to initialize after" in starting
        # The start goes on in the background until its own limit ends it.
        with anyio.fail_after(16 + 8):
            await runtime.toolbox.connection("silent").wait_stopped()
        with anyio.fail_after(14 + 2):
            second = await run_to_result(runtime.session(), "And now?")

    for result in (first, second):
        assert result.error is None, result.error
        assert [c.name for c in result.tool_calls] == ["time__get_current_time"]
        assert '"timezone": "UTC"' in result.answer
    offered = {t["function"]["name"] for body in server.bodies for t in body["tools"]}
    assert offered == {"time__get_current_time", "time__convert_time"}
    error = runtime.toolbox.server_errors["silent"]
    assert "the MCP server 'silent' did not answer initialize within 16 s" in error
    assert runtime.toolbox.connection("silent").starts == 1


async def test_a_tool_that_hangs_ends_the_run_at_its_time_limit(runtimes: list[Runtime]):
    def respond(body: RequestBody) -> Reply:
        return tool_calls([("c1", "fake__hang", {})])

    with FakeOpenAIServer(responder=respond) as server:
        runtime = Runtime(make_agent(server, {"fake": fake_tool_server(**FREE)}, timeoutSeconds=4))
        runtimes.append(runtime)
        # The server is up before the run: a run's listing waits at most half of its 4 s for a
        # start, which a busy machine can exceed, and then the tool is not there to hang.
        with anyio.fail_after(DEFAULT_STARTUP_TIMEOUT + 2):
            await runtime.toolbox.connection("fake").client()
        with anyio.fail_after(4 + 2):
            result = await run_to_result(runtime.session(), "hang")

    assert "no answer within the 4 s time limit" in str(result.error)
    # It ended in the one call the model made, to the tool it was offered.
    assert len(server.bodies) == 1
    assert "fake__hang" in {t["function"]["name"] for t in server.bodies[0]["tools"]}
