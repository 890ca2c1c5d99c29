"""The chat loop: events, bounds, cancellation, isolation and history.

The first half drives the loop with a small scripted in-memory provider (the loop's own logic,
no I/O); the second half runs the same cases end to end with the real OpenAI provider against
``FakeOpenAIServer`` (a real HTTP server on loopback).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Callable
from contextlib import aclosing
from dataclasses import dataclass
from typing import Any

import anyio
import pytest

from mcp_export.errors import (
    ProviderProtocolError,
    ProviderServerError,
    SessionTimeout,
    TurnLimitExceeded,
)
from mcp_export.history.store import INTERRUPTED, HistoryStore
from mcp_export.providers.base import (
    ChatMessage,
    Completion,
    ModelRequest,
    ProviderEvent,
    ToolCallRequest,
    Usage,
)
from mcp_export.providers.factory import provider_for_agent
from mcp_export.session.chat import ChatSession, run_to_result
from mcp_export.session.events import (
    FinalAnswer,
    SessionEvent,
    SessionFailed,
    SessionStarted,
    TextDelta,
    ToolCallFinished,
    ToolCallStarted,
    TurnFinished,
)
from mcp_export.session.record import INTERRUPTED_NOTE, UNANSWERED_NOTE, load_thread_messages
from mcp_export.session.result import collect_result
from schema_types.agent import Agent
from tests.fakes import _script as script
from tests.fakes.openai_server import FakeOpenAIServer

pytestmark = pytest.mark.anyio


# --- scripted parts -------------------------------------------------------------------------


Step = Callable[[ModelRequest], list[ProviderEvent]]


class ScriptedProvider:
    """A provider whose answers come from a function of the request (no I/O)."""

    name = "scripted"

    def __init__(self, step: Step, *, pause: float = 0.0) -> None:
        self.step = step
        self.pause = pause
        self.requests: list[ModelRequest] = []
        self.closed_streams = 0
        self.open_streams = 0
        self.streaming = asyncio.Event()

    async def stream(self, request: ModelRequest) -> AsyncIterator[ProviderEvent]:
        self.requests.append(request)
        self.open_streams += 1
        self.streaming.set()
        try:
            for event in self.step(request):
                if self.pause:
                    await anyio.sleep(self.pause)
                yield event
        finally:
            self.open_streams -= 1
            self.closed_streams += 1

    async def aclose(self) -> None:
        pass


def answer(text: str, usage: tuple[int, int] = (10, 2)) -> list[ProviderEvent]:
    return [TextDelta(text), Completion(ChatMessage("assistant", text), Usage(*usage))]


def calls(*triples: tuple[str, str, dict[str, Any]]) -> list[ProviderEvent]:
    requests = tuple(ToolCallRequest(i, n, a) for i, n, a in triples)
    return [Completion(ChatMessage("assistant", "", tool_calls=requests), Usage(5, 1))]


def last_user(request: ModelRequest) -> str:
    return next(m.content for m in reversed(request.messages) if m.role == "user")


def tool_rounds(request: ModelRequest) -> int:
    index = max(i for i, m in enumerate(request.messages) if m.role == "user")
    return sum(1 for m in request.messages[index:] if m.role == "assistant")


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


class ScriptedToolbox:
    """Tools in memory: ``echo`` answers its text; ``gate_a``/``gate_b`` each wait for the other."""

    def __init__(self) -> None:
        self.gates = {"gate_a": asyncio.Event(), "gate_b": asyncio.Event()}
        self.calls: list[str] = []

    async def allowed_tools(self) -> list[Spec]:
        return [Spec(n, f"{n} tool", {"type": "object"}) for n in ("echo", "gate_a", "gate_b")]

    async def call(
        self,
        name: str,
        arguments: dict[str, Any],
        *,
        timeout: float | None,  # noqa: ASYNC109 - the toolbox's own signature
    ) -> Outcome:
        self.calls.append(name)
        if name == "echo":
            return Outcome(str(arguments.get("text", "")))
        if name in self.gates:
            self.gates[name].set()
            other = "gate_b" if name == "gate_a" else "gate_a"
            with anyio.fail_after(2):
                await self.gates[other].wait()
            return Outcome(f"{name} passed")
        if name == "sleep":
            await anyio.sleep(3600)
        return Outcome(f"tool {name!r} is not allowed for this agent", True, True)


def make_agent(**settings: Any) -> Agent:
    return Agent.model_validate(
        {"systemPrompt": "You are terse.", "settings": {"model": "openai:fake", **settings}}
    )


def thread_of(session: ChatSession) -> str:
    assert session.thread_id is not None
    return session.thread_id


async def events_of(session: ChatSession, message: str) -> list[SessionEvent]:
    async with aclosing(session.run(message)) as stream:
        return [event async for event in stream]


# --- the loop, with the scripted provider --------------------------------------------------


async def test_plain_answer_yields_started_deltas_turn_and_final_in_order():
    provider = ScriptedProvider(
        lambda r: [TextDelta("Hello "), TextDelta("world"), *answer("Hello world")[1:]]
    )
    session = ChatSession(make_agent(), provider=provider, model="fake")

    events = await events_of(session, "hi")

    assert [type(e) for e in events] == [
        SessionStarted,
        TextDelta,
        TextDelta,
        TurnFinished,
        FinalAnswer,
    ]
    final = events[-1]
    assert isinstance(final, FinalAnswer)
    assert final.text == "Hello world"
    assert final.turns == 1
    assert final.usage == Usage(10, 2)
    assert [m.role for m in session.messages] == ["system", "user", "assistant"]
    assert provider.requests[0].messages[0] == ChatMessage("system", "You are terse.")


async def test_tool_calls_of_one_turn_run_concurrently_and_results_keep_call_order():
    def step(request: ModelRequest) -> list[ProviderEvent]:
        if tool_rounds(request) == 0:
            return calls(("c1", "gate_a", {}), ("c2", "gate_b", {}), ("c3", "echo", {"text": "x"}))
        return answer("done")

    toolbox = ScriptedToolbox()
    session = ChatSession(make_agent(), provider=ScriptedProvider(step), model="f", toolbox=toolbox)

    with anyio.fail_after(5):
        result = await run_to_result(session, "go")

    assert result.error is None, result.error
    assert result.answer == "done"
    assert [c.call_id for c in result.tool_calls] == ["c1", "c2", "c3"]
    tool_messages = [m for m in session.messages if m.role == "tool"]
    assert [(m.tool_call_id, m.content) for m in tool_messages] == [
        ("c1", "gate_a passed"),
        ("c2", "gate_b passed"),
        ("c3", "x"),
    ]


async def test_tools_are_offered_to_the_model_as_the_toolbox_allows():
    provider = ScriptedProvider(lambda r: answer("ok"))
    session = ChatSession(make_agent(), provider=provider, model="f", toolbox=ScriptedToolbox())

    await run_to_result(session, "hi")

    assert [t.name for t in provider.requests[0].tools] == ["echo", "gate_a", "gate_b"]


async def test_a_tool_outside_the_allowed_set_is_refused_and_the_loop_goes_on():
    def step(request: ModelRequest) -> list[ProviderEvent]:
        if tool_rounds(request) == 0:
            return calls(("c1", "secret__delete", {}))
        return answer("could not")

    session = ChatSession(
        make_agent(), provider=ScriptedProvider(step), model="f", toolbox=ScriptedToolbox()
    )
    events = await events_of(session, "go")

    finished = [e for e in events if isinstance(e, ToolCallFinished)]
    assert len(finished) == 1
    assert finished[0].refused and finished[0].is_error
    assert isinstance(events[-1], FinalAnswer)
    assert events[-1].tool_calls[0].refused


async def test_without_a_toolbox_every_tool_call_is_refused():
    def step(request: ModelRequest) -> list[ProviderEvent]:
        return calls(("c1", "x__y", {})) if tool_rounds(request) == 0 else answer("fine")

    session = ChatSession(make_agent(), provider=ScriptedProvider(step), model="f")
    result = await run_to_result(session, "go")

    assert result.answer == "fine"
    assert result.tool_calls[0].refused
    assert "no tool named" in result.tool_calls[0].result


async def test_turn_limit_ends_with_a_failure_and_does_not_run_the_last_turns_tools():
    toolbox = ScriptedToolbox()
    provider = ScriptedProvider(lambda r: calls((f"c{len(r.messages)}", "echo", {"text": "x"})))
    session = ChatSession(make_agent(maxChatTurns=3), provider=provider, model="f", toolbox=toolbox)

    result = await run_to_result(session, "loop forever")

    assert isinstance(result.error, TurnLimitExceeded)
    assert result.failure is not None and result.failure.kind == "turn-limit"
    assert "maxChatTurns" in result.failure.hint
    assert len(provider.requests) == 3
    assert toolbox.calls == ["echo", "echo"]
    # The last assistant's calls got a "not run" result, so the conversation can go on.
    assert session.messages[-1].role == "tool"
    assert session.messages[-1].content.startswith("not run:")


async def test_timeout_ends_a_hanging_model_with_a_timeout_failure():
    provider = ScriptedProvider(lambda r: answer("late"), pause=3600)
    session = ChatSession(make_agent(), provider=provider, model="f", timeout=0.2)

    started = time.perf_counter()
    with anyio.fail_after(30):
        result = await run_to_result(session, "hi")

    assert isinstance(result.error, SessionTimeout)
    assert result.failure is not None and result.failure.kind == "timeout"
    assert time.perf_counter() - started < 10  # the session's 0.2 s, not the model's hour
    assert provider.open_streams == 0


async def test_timeout_also_bounds_tool_calls():
    def step(request: ModelRequest) -> list[ProviderEvent]:
        return calls(("c1", "sleep", {}), ("c2", "sleep", {}))

    session = ChatSession(
        make_agent(),
        provider=ScriptedProvider(step),
        model="f",
        toolbox=ScriptedToolbox(),
        timeout=0.2,
    )
    with anyio.fail_after(5):
        result = await run_to_result(session, "hi")

    assert result.failure is not None and result.failure.kind == "timeout"
    assert [m.content.startswith("not run:") for m in session.messages if m.role == "tool"] == [
        True,
        True,
    ]


async def test_cancel_ends_the_run_with_a_cancelled_failure_and_closes_the_stream():
    provider = ScriptedProvider(lambda r: answer("never"), pause=3600)
    session = ChatSession(make_agent(), provider=provider, model="f")
    seen: list[SessionEvent] = []

    with anyio.fail_after(5):
        async with aclosing(session.run("hi")) as stream:
            async for event in stream:
                seen.append(event)
                if isinstance(event, SessionStarted):
                    session.cancel()

    assert isinstance(seen[-1], SessionFailed)
    assert seen[-1].kind == "cancelled"
    assert provider.open_streams == 0


async def test_cancelling_the_consumer_task_aborts_the_model_stream_promptly():
    provider = ScriptedProvider(lambda r: answer("never"), pause=3600)
    session = ChatSession(make_agent(), provider=provider, model="f")
    started = asyncio.Event()

    async def consume() -> None:
        async with aclosing(session.run("hi")) as stream:
            async for event in stream:
                if isinstance(event, SessionStarted):
                    started.set()

    task = asyncio.create_task(consume())
    with anyio.fail_after(5):
        await started.wait()
        await provider.streaming.wait()
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
    assert provider.open_streams == 0
    assert provider.closed_streams == 1


async def test_a_provider_error_is_a_failure_event_not_an_exception():
    def step(request: ModelRequest) -> list[ProviderEvent]:
        raise ProviderServerError("the provider answered 500 three times")

    session = ChatSession(make_agent(), provider=ScriptedProvider(step), model="f")
    events = await events_of(session, "hi")

    failed = events[-1]
    assert isinstance(failed, SessionFailed)
    assert failed.kind == "provider"
    assert isinstance(failed.error, ProviderServerError)
    assert failed.hint


async def test_a_stream_without_completion_is_a_protocol_failure():
    session = ChatSession(make_agent(), provider=ScriptedProvider(lambda r: []), model="f")
    result = await run_to_result(session, "hi")
    assert isinstance(result.error, ProviderProtocolError)


async def test_a_second_run_continues_the_same_conversation():
    provider = ScriptedProvider(lambda r: answer(f"you said {last_user(r)}"))
    session = ChatSession(make_agent(), provider=provider, model="f")

    first = await run_to_result(session, "one")
    second = await run_to_result(session, "two")

    assert (first.answer, second.answer) == ("you said one", "you said two")
    assert [m.content for m in provider.requests[1].messages if m.role == "user"] == ["one", "two"]


async def test_a_session_runs_one_turn_at_a_time():
    session = ChatSession(
        make_agent(), provider=ScriptedProvider(lambda r: answer("x"), pause=0.05), model="f"
    )
    async with aclosing(session.run("a")) as first:
        await first.__anext__()
        with pytest.raises(RuntimeError, match="already running"):
            await session.run("b").__anext__()


async def test_model_parameters_resolve_from_settings_and_overrides():
    provider = ScriptedProvider(lambda r: answer("x"))
    session = ChatSession(
        make_agent(temperature=0.2, topP=0.5),
        provider=provider,
        model="f",
        parameters={"temperature": 0.9},
    )
    session.set_parameter("top_p", None)
    await run_to_result(session, "hi")

    parameters = provider.requests[0].parameters
    assert parameters["temperature"] == 0.9
    assert "top_p" not in parameters or parameters["top_p"] is None


async def test_system_prompt_can_be_replaced_and_conversation_cleared():
    provider = ScriptedProvider(lambda r: answer("x"))
    session = ChatSession(make_agent(), provider=provider, model="f")
    await run_to_result(session, "hi")

    session.set_system_prompt("Be loud.")
    session.clear()
    await run_to_result(session, "again")

    assert [(m.role, m.content) for m in provider.requests[1].messages] == [
        ("system", "Be loud."),
        ("user", "again"),
    ]


async def test_twenty_concurrent_sessions_on_one_provider_and_toolbox_do_not_cross():
    def step(request: ModelRequest) -> list[ProviderEvent]:
        said = last_user(request)
        if tool_rounds(request) == 0:
            return calls((f"call-{said}", "echo", {"text": said}))
        result = next(m.content for m in reversed(request.messages) if m.role == "tool")
        return answer(f"{said}->{result}")

    provider = ScriptedProvider(step, pause=0.001)
    toolbox = ScriptedToolbox()
    sessions = [
        ChatSession(make_agent(), provider=provider, model="f", toolbox=toolbox) for _ in range(20)
    ]
    results: dict[int, str] = {}

    async def one(index: int) -> None:
        results[index] = (await run_to_result(sessions[index], f"m{index}")).answer

    with anyio.fail_after(10):
        async with anyio.create_task_group() as group:
            for index in range(20):
                group.start_soon(one, index)

    assert results == {i: f"m{i}->m{i}" for i in range(20)}
    assert len({s.id for s in sessions}) == 20
    for index, session in enumerate(sessions):
        assert {m.content for m in session.messages if m.role == "user"} == {f"m{index}"}


async def test_collect_result_reports_a_stream_that_ends_without_a_final_event():
    async def nothing() -> AsyncIterator[SessionEvent]:
        yield SessionStarted("s", None, "m")

    result = await collect_result(nothing())
    assert result.error is not None
    assert result.answer == ""


async def test_tool_call_events_carry_arguments_results_and_durations():
    def step(request: ModelRequest) -> list[ProviderEvent]:
        return calls(("c1", "echo", {"text": "hey"})) if tool_rounds(request) == 0 else answer("ok")

    session = ChatSession(
        make_agent(), provider=ScriptedProvider(step), model="f", toolbox=ScriptedToolbox()
    )
    events = await events_of(session, "go")

    started = [e for e in events if isinstance(e, ToolCallStarted)]
    finished = [e for e in events if isinstance(e, ToolCallFinished)]
    assert started == [ToolCallStarted("c1", "echo", {"text": "hey"})]
    assert finished[0].result == "hey"
    assert finished[0].duration_ms >= 0
    turns = [e for e in events if isinstance(e, TurnFinished)]
    assert [(t.turn, t.input_tokens) for t in turns] == [(1, 5), (2, 10)]
    assert isinstance(events[-1], FinalAnswer) and events[-1].usage == Usage(15, 3)


# --- end to end: the real OpenAI provider against FakeOpenAIServer, real SQLite history -----


def served_agent(server: FakeOpenAIServer, **settings: Any) -> Agent:
    return Agent.model_validate(
        {
            "metadata": {"name": "Loop agent"},
            "systemPrompt": "You are terse.",
            "settings": {"model": "openai:fake-model", **settings},
            "providers": {
                "openai": {"OPENAI_API_KEY": "env://TEST_KEY", "OPENAI_BASE_URL": server.base_url}
            },
        }
    )


@pytest.fixture
def key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TEST_KEY", "sk-test")


@pytest.fixture
async def history() -> AsyncIterator[HistoryStore]:
    store = HistoryStore()
    yield store
    store.close()


def real_session(
    server: FakeOpenAIServer, history: HistoryStore | None = None, **kwargs: Any
) -> ChatSession:
    agent = served_agent(server)
    provider, model = provider_for_agent(agent)
    return ChatSession(agent, provider=provider, model=model, history=history, **kwargs)


@pytest.mark.usefixtures("key")
async def test_end_to_end_plain_answer_streams_and_is_recorded(history: HistoryStore):
    with FakeOpenAIServer([script.text("Hello there", chunks=3, usage=(21, 4))]) as server:
        session = real_session(server, history)
        with anyio.fail_after(20):
            events = await events_of(session, "Hi")
        await session.provider.aclose()

    deltas = [e.text for e in events if isinstance(e, TextDelta)]
    # "Hell", "o th", "ere" on the wire: each word is released once the space after it came.
    assert deltas == ["Hello ", "there"]
    final = events[-1]
    assert isinstance(final, FinalAnswer) and final.usage == Usage(21, 4)
    assert server.bodies[0]["messages"][0] == {"role": "system", "content": "You are terse."}
    rows = history.messages(thread_of(session))
    assert [(r.role, r.status, r.content) for r in rows] == [
        ("user", "complete", "Hi"),
        ("assistant", "complete", "Hello there"),
    ]
    assert (rows[1].tokens_in, rows[1].tokens_out) == (21, 4)


@pytest.mark.usefixtures("key")
async def test_end_to_end_429_then_success_answers():
    with FakeOpenAIServer([script.status(429, retry_after=0), script.text("fine")]) as server:
        session = real_session(server)
        with anyio.fail_after(20):
            result = await run_to_result(session, "Hi")
        await session.provider.aclose()

    assert result.error is None, result.error
    assert result.answer == "fine"
    assert len(server.model_requests) == 2


@pytest.mark.usefixtures("key")
async def test_end_to_end_500_forever_is_a_clear_provider_failure(history: HistoryStore):
    with FakeOpenAIServer(responder=lambda body: script.status(500)) as server:
        session = real_session(server, history)
        with anyio.fail_after(30):
            result = await run_to_result(session, "Hi")
        await session.provider.aclose()

    assert isinstance(result.error, ProviderServerError)
    assert result.failure is not None and result.failure.kind == "provider"
    assert result.failure.hint
    assert "500" in str(result.error)
    rows = history.messages(thread_of(session))
    assert [(r.role, r.status) for r in rows] == [("user", "complete"), ("assistant", "error")]
    assert "500" in (rows[1].error or "")


@pytest.mark.usefixtures("key")
async def test_end_to_end_garbage_stream_is_a_protocol_failure():
    with FakeOpenAIServer([script.garbage()]) as server:
        session = real_session(server)
        with anyio.fail_after(20):
            result = await run_to_result(session, "Hi")
        await session.provider.aclose()

    assert isinstance(result.error, ProviderProtocolError)
    assert result.failure is not None and result.failure.kind == "provider"


@pytest.mark.usefixtures("key")
async def test_end_to_end_slow_model_hits_the_session_timeout(history: HistoryStore):
    with FakeOpenAIServer([script.text("too late").delayed(30)]) as server:
        session = real_session(server, history, timeout=0.5)
        started = time.perf_counter()
        with anyio.fail_after(20):
            result = await run_to_result(session, "Hi")
        elapsed = time.perf_counter() - started
        assert server.wait_for_disconnect(1, timeout=5)  # the HTTP request was abandoned
        await session.provider.aclose()

    assert isinstance(result.error, SessionTimeout)
    assert 0.4 < elapsed < 15  # the session's 0.5 s, not the model's 30 s
    rows = history.messages(thread_of(session))
    assert rows[-1].role == "assistant" and rows[-1].status == "error"


@pytest.mark.usefixtures("key")
async def test_end_to_end_cancelling_mid_stream_closes_the_request_promptly(
    history: HistoryStore,
):
    slow = script.text("a long answer " * 20, chunks=100, chunk_delay=0.3)  # 30 s in all
    with FakeOpenAIServer([slow]) as server:
        session = real_session(server, history)
        first_delta = asyncio.Event()

        async def consume() -> None:
            async with aclosing(session.run("Hi")) as stream:
                async for event in stream:
                    if isinstance(event, TextDelta):
                        first_delta.set()

        task = asyncio.create_task(consume())
        with anyio.fail_after(20):
            await first_delta.wait()
            cancelled_at = time.perf_counter()
            task.cancel()
            with pytest.raises(asyncio.CancelledError):
                await task
        assert time.perf_counter() - cancelled_at < 10  # not the rest of the 30 s stream
        assert server.wait_for_disconnect(1, timeout=5)
        await session.provider.aclose()

    rows = history.messages(thread_of(session))
    assert rows[-1].role == "assistant" and rows[-1].status == "error"


@pytest.mark.usefixtures("key")
async def test_end_to_end_cancel_method_yields_a_cancelled_failure():
    with FakeOpenAIServer([script.hang()]) as server:
        session = real_session(server)
        events: list[SessionEvent] = []
        with anyio.fail_after(10):
            async with aclosing(session.run("Hi")) as stream:
                async for event in stream:
                    events.append(event)
                    if isinstance(event, SessionStarted):
                        assert await anyio.to_thread.run_sync(server.wait_for_requests, 1)
                        session.cancel()
        assert server.wait_for_disconnect(1, timeout=5)
        await session.provider.aclose()

    assert isinstance(events[-1], SessionFailed) and events[-1].kind == "cancelled"


@pytest.mark.usefixtures("key")
async def test_a_thread_resumes_from_history_in_a_new_session(history: HistoryStore):
    with FakeOpenAIServer() as server:  # echoes the last user message
        first = real_session(server, history)
        await run_to_result(first, "remember 42")
        prior = load_thread_messages(history, thread_of(first))
        second = real_session(server, history, thread_id=first.thread_id, prior_messages=prior)
        result = await run_to_result(second, "what did I say?")
        await first.provider.aclose()
        await second.provider.aclose()

    assert result.answer == "what did I say?"
    sent = [(m["role"], m.get("content")) for m in server.bodies[1]["messages"]]
    assert sent == [
        ("system", "You are terse."),
        ("user", "remember 42"),
        ("assistant", "remember 42"),
        ("user", "what did I say?"),
    ]
    assert second.thread_id == first.thread_id
    assert len(history.messages(thread_of(first))) == 4


async def test_load_thread_messages_skips_failed_turns_and_answers_dangling_tool_calls(
    history: HistoryStore,
):
    thread = history.create_thread(agent_path=None, agent_name="a", title="t", kind="chat")
    history.add_message(thread, "user", "one", status="complete")
    failed = history.add_message(thread, "assistant", "", status="pending")
    history.update_message(failed, status="error", error="the provider answered 500")
    history.add_message(thread, "user", "two", status="complete")
    calls = [{"id": "c1", "name": "t__x", "arguments": {"a": 1}}]
    row = history.add_message(thread, "assistant", "", status="pending")
    history.update_message(row, status="complete", tool_calls=calls, tokens_in=1, tokens_out=1)

    messages = load_thread_messages(history, thread)

    # Never two user turns in a row: each turn without an answer says so, and how it ended.
    assert [(m.role, m.content) for m in messages[:4]] == [
        ("user", "one"),
        ("assistant", UNANSWERED_NOTE),
        ("user", "two"),
        ("assistant", ""),
    ]
    assert messages[3].tool_calls == (ToolCallRequest("c1", "t__x", {"a": 1}),)
    assert messages[4].role == "tool" and messages[4].tool_call_id == "c1"
    assert messages[4].is_error
    assert (messages[5].role, messages[5].content) == ("assistant", INTERRUPTED_NOTE)
    assert len(messages) == 6


async def test_a_turn_cut_off_by_its_process_is_shown_as_interrupted_not_left_unanswered(
    history: HistoryStore,
):
    thread = history.create_thread(agent_path=None, agent_name="a", title="t", kind="chat")
    history.add_message(thread, "user", "one", status="complete")
    answer = history.add_message(thread, "assistant", "", status="pending")
    history.update_message(answer, content="One.", status="complete")
    history.add_message(thread, "user", "two", status="complete")
    cut = history.add_message(thread, "assistant", "", status="pending")
    history.update_message(cut, status="error", error=INTERRUPTED)
    history.add_message(thread, "user", "three", status="complete")
    history.add_message(thread, "assistant", "", status="pending")  # its process is gone too

    messages = load_thread_messages(history, thread)

    assert [(m.role, m.content) for m in messages] == [
        ("user", "one"),
        ("assistant", "One."),
        ("user", "two"),
        ("assistant", INTERRUPTED_NOTE),
        ("user", "three"),
        ("assistant", INTERRUPTED_NOTE),
    ]


@pytest.mark.usefixtures("key")
async def test_end_to_end_an_empty_answer_fails_and_a_resumed_thread_leaves_it_out(
    history: HistoryStore,
):
    with FakeOpenAIServer([script.text(""), script.text("Here it is.")]) as server:
        first = real_session(server, history)
        failed = await run_to_result(first, "tell me")
        prior = load_thread_messages(history, thread_of(first))
        rows = [(r.role, r.status, r.error) for r in history.messages(thread_of(first))]
        second = real_session(server, history, thread_id=first.thread_id, prior_messages=prior)
        answered = await run_to_result(second, "again, please")
        await first.provider.aclose()
        await second.provider.aclose()

    assert failed.failure is not None and failed.failure.kind == "provider"
    assert failed.failure.message == "the model answered with an empty message"
    assert failed.failure.hint == "try again, or make the prompt ask for a written answer"
    assert answered.answer == "Here it is."
    # The model request's row is the run's error row: no empty "complete" answer beside it.
    assert rows == [
        ("user", "complete", None),
        ("assistant", "error", "the model answered with an empty message"),
    ]
    sent = [(m["role"], m.get("content")) for m in server.bodies[1]["messages"]]
    assert sent == [
        ("system", "You are terse."),
        ("user", "tell me"),
        ("assistant", UNANSWERED_NOTE),
        ("user", "again, please"),
    ]


@pytest.mark.usefixtures("key")
async def test_end_to_end_a_stream_without_usage_records_null_counts(history: HistoryStore):
    with FakeOpenAIServer([script.text_without_usage("Hello there", chunks=3)]) as server:
        session = real_session(server, history)
        with anyio.fail_after(20):
            result = await run_to_result(session, "Hi")
        await session.provider.aclose()

    assert result.answer == "Hello there"
    assert result.usage == Usage(None, None)
    rows = history.messages(thread_of(session))
    assert [(r.role, r.tokens_in, r.tokens_out) for r in rows] == [
        ("user", None, None),
        ("assistant", None, None),
    ]
