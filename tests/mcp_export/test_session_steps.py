"""A session made with ``steps=True`` says what its run waits for, and a cancel ends any wait.

Real parts only: the OpenAI provider against ``FakeOpenAIServer`` (or a port that refuses), the
toolbox with ``tests.fakes.slow_mcp``, a stdio server that is slow to answer ``initialize`` and
``tools/list``. Every wait is bounded.
"""

from __future__ import annotations

import re
import sys
import time
from collections.abc import AsyncIterator, Callable
from contextlib import aclosing, asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import pytest

from mcp_export.providers.openai_provider import OpenAIProvider
from mcp_export.session.chat import ChatSession
from mcp_export.session.events import FinalAnswer, SessionEvent, SessionFailed, Step
from mcp_export.toolbox.agent_toolbox import AgentToolbox
from schema_types.agent import Agent
from tests.fakes._script import Reply, RequestBody, hang, status, text, tool_calls
from tests.fakes.openai_server import FakeOpenAIServer
from tests.fakes.ports import refused_origin

pytestmark = pytest.mark.anyio

REPO = Path(__file__).resolve().parents[2]
ASKING = "Asking the model (openai:fake-model)…"
STOP_WITHIN = 3.0  # seconds from cancel() to the run's last event


def slow_server(initialize: float = 0.0, listing: float = 0.0) -> dict[str, Any]:
    return {
        "command": sys.executable,
        "args": [
            *("-m", "tests.fakes.slow_mcp"),
            *("--initialize-delay", str(initialize), "--list-delay", str(listing)),
        ],
        "serverToolDefaults": {"permissionRequired": False},
    }


def make_agent(**servers: dict[str, Any]) -> Agent:
    return Agent.model_validate(
        {
            "settings": {"model": "openai:fake-model", "toolPermission": "tool"},
            "mcpServers": servers,
        }
    )


def echo_then_answer(body: RequestBody) -> Reply:
    if body.rounds_since_user == 0:
        return tool_calls([("call_1", "slow__echo", {"text": "hi"})])
    return text("done")


@asynccontextmanager
async def session_of(
    base_url: str, agent: Agent, *, retry_delay: float = 0.5
) -> AsyncIterator[ChatSession]:
    provider = OpenAIProvider(api_key="sk-test", base_url=base_url, retry_delay=retry_delay)
    toolbox = AgentToolbox(agent, base_dir=REPO) if agent.mcp_servers else None
    try:
        yield ChatSession(agent, provider=provider, model="fake-model", toolbox=toolbox, steps=True)
    finally:
        if toolbox is not None:
            await toolbox.aclose()
        await provider.aclose()


async def events_of(session: ChatSession, message: str = "go") -> list[SessionEvent]:
    with anyio.fail_after(30):
        async with aclosing(session.run(message)) as stream:
            return [event async for event in stream]


def steps(events: list[SessionEvent]) -> list[str]:
    return [event.text for event in events if isinstance(event, Step)]


async def test_a_slow_tool_server_is_said_starting_then_listing_before_the_model_is_asked():
    with FakeOpenAIServer(responder=echo_then_answer) as model:
        agent = make_agent(slow=slow_server(initialize=0.3, listing=0.3))
        async with session_of(model.base_url, agent) as session:
            events = await events_of(session)
    assert isinstance(events[-1], FinalAnswer)
    assert steps(events) == [
        "Starting slow…",
        "Listing tools of slow…",
        ASKING,
        "Calling slow__echo…",
        "Asking the model (openai:fake-model), request 2…",
    ]
    first_step = next(i for i, e in enumerate(events) if isinstance(e, Step))
    assert events.index(next(e for e in events if isinstance(e, FinalAnswer))) > first_step


async def test_a_refused_model_endpoint_says_each_retry_with_its_number():
    with refused_origin() as origin:
        async with session_of(f"{origin}/v1", make_agent(), retry_delay=0.05) as session:
            events = await events_of(session)
    assert isinstance(events[-1], SessionFailed) and events[-1].kind == "provider"
    said = steps(events)
    assert said[0] == ASKING
    retry = r"Model request failed \(connection refused\), retry {} of 2 in [0-9.]+ s…"
    assert len(said) == 3
    assert re.fullmatch(retry.format(1), said[1]), said
    assert re.fullmatch(retry.format(2), said[2]), said


async def test_a_server_error_with_retry_after_says_its_status_and_wait():
    with FakeOpenAIServer([status(503, retry_after=1), text("back")]) as model:
        async with session_of(model.base_url, make_agent()) as session:
            events = await events_of(session)
    assert isinstance(events[-1], FinalAnswer) and events[-1].text == "back"
    assert steps(events) == [ASKING, "Model request failed (status 503), retry 1 of 2 in 1 s…"]


async def test_a_session_made_without_steps_says_none():
    with FakeOpenAIServer([text("plain")]) as model:
        provider = OpenAIProvider(api_key="sk-test", base_url=model.base_url)
        try:
            session = ChatSession(make_agent(), provider=provider, model="fake-model")
            events = await events_of(session)
        finally:
            await provider.aclose()
    assert isinstance(events[-1], FinalAnswer) and steps(events) == []


async def _cancelled_at(session: ChatSession, step: Callable[[str], bool]) -> float:
    """Run until a step matches ``step``, cancel; seconds from the cancel to the last event."""
    cancelled_at: float | None = None
    last: SessionEvent | None = None
    with anyio.fail_after(30):
        async with aclosing(session.run("go")) as stream:
            async for event in stream:
                last = event
                if cancelled_at is None and isinstance(event, Step) and step(event.text):
                    cancelled_at = time.monotonic()
                    session.cancel()
    assert cancelled_at is not None, "the step never came"
    assert isinstance(last, SessionFailed) and last.kind == "cancelled", last
    return time.monotonic() - cancelled_at


@pytest.mark.parametrize(
    ("initialize", "listing", "step"),
    [(30, 0, "Starting slow…"), (0, 30, "Listing tools of slow…")],
    ids=["starting", "listing"],
)
async def test_cancel_while_a_tool_server_starts_ends_the_run_at_once(
    initialize: float, listing: float, step: str
):
    with FakeOpenAIServer([text("never asked")]) as model:
        agent = make_agent(slow=slow_server(initialize, listing))
        async with session_of(model.base_url, agent) as session:
            assert await _cancelled_at(session, lambda said: said == step) < STOP_WITHIN
        assert model.model_requests == []


async def test_cancel_while_the_model_is_asked_or_a_retry_waits_ends_the_run_at_once():
    with FakeOpenAIServer([hang()]) as model:
        async with session_of(model.base_url, make_agent()) as session:
            assert await _cancelled_at(session, lambda said: said == ASKING) < STOP_WITHIN
    with FakeOpenAIServer([status(503, retry_after=30)]) as model:
        async with session_of(model.base_url, make_agent()) as session:
            waited = await _cancelled_at(session, lambda said: "retry 1 of 2 in 30 s" in said)
            assert waited < STOP_WITHIN
