"""How long a run waits for its model: the agent's ``settings.timeoutSeconds``, nothing else.

The limit bounds the wait for the answer to start and each wait between stream chunks of the
provider the agent gets (``provider_for_agent``, which every path builds its provider with: the
served call, ``metaagent call``, test and caller cases, the studio's chat, authoring), and a
whole run of a chat session. When it fires, the message names the limit, the setting to raise
and the server waited on.

The model is ``FakeOpenAIServer`` (real HTTP on loopback) that starts its answer late or pauses
between chunks; the served calls go through the real server object and the official client.
"""

from __future__ import annotations

import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

# Imported ahead: the Anthropic provider imports its SDK with its first request, in the timed wait.
import anthropic  # noqa: F401
import anyio
import mcp_types as types
import pytest
from mcp import Client

from mcp_export.errors import ProviderTimeout
from mcp_export.providers.base import ChatMessage, Completion, ModelRequest, Provider
from mcp_export.providers.factory import provider_for_agent
from mcp_export.server.agent_server import AgentServer, load_served_agents
from mcp_export.testing.callers import CallerResult
from mcp_export.testing.run import run_matrix, select_cases
from schema_types.agent import Agent
from schema_types.files.agent_file import load_agent
from tests.fakes import FakeAnthropicServer, FakeOpenAIServer, text
from tests.fakes._script import delay
from tests.fakes._server import FakeModelServer
from tests.fakes.mcp_clients import book_tool, write_agent

pytestmark = pytest.mark.anyio

SETTING = "settings.timeoutSeconds"


def _agent(base_url: str, timeout_seconds: float, kind: str = "openai") -> Agent:
    names = {
        "openai": {"OPENAI_API_KEY": "sk-test", "OPENAI_BASE_URL": base_url},
        "anthropic": {"ANTHROPIC_API_KEY": "sk-ant-test", "ANTHROPIC_BASE_URL": base_url},
    }
    return Agent.model_validate(
        {
            "settings": {"model": f"{kind}:fake-model", "timeoutSeconds": timeout_seconds},
            "providers": {kind: names[kind]},
        }
    )


@asynccontextmanager
async def _agents_provider(agent: Agent) -> AsyncIterator[tuple[Provider, str]]:
    provider, model = provider_for_agent(agent)
    try:
        yield provider, model
    finally:
        await provider.aclose()


async def _answer(provider: Provider, model: str) -> str:
    request = ModelRequest(model, (ChatMessage("user", "Hi"),))
    async for event in provider.stream(request):
        if isinstance(event, Completion):
            return event.message.content
    raise AssertionError("the stream ended without a completion")


def _where(server: FakeModelServer) -> str:
    return server.origin.removeprefix("http://")


@pytest.mark.parametrize("limit", [1, 2])
async def test_the_agents_provider_waits_for_a_late_model_as_long_as_timeout_seconds(
    limit: int,
) -> None:
    # The model would start answering after 3 s: each limit ends the wait at its own length,
    # so the limit the endpoint gets is the agent's, whatever its value.
    with FakeOpenAIServer([delay(3, text("late"))]) as server:
        async with _agents_provider(_agent(server.base_url, limit)) as (provider, model):
            started = time.monotonic()
            with anyio.fail_after(limit + 5), pytest.raises(ProviderTimeout) as caught:
                await _answer(provider, model)
            waited = time.monotonic() - started
    assert limit - 0.2 <= waited < limit + 1.5, waited
    message = str(caught.value)
    assert f"did not answer within {limit} s" in message
    assert SETTING in message
    assert _where(server) in message


@pytest.mark.parametrize("stream", ["true", "false"])
async def test_the_anthropic_provider_of_an_agent_waits_as_long_as_timeout_seconds(
    stream: str,
) -> None:
    with FakeAnthropicServer([delay(3, text("late"))]) as server:
        agent = _agent(server.base_url, 1, kind="anthropic")
        agent.providers["anthropic"]["stream"] = stream
        async with _agents_provider(agent) as (provider, model):
            started = time.monotonic()
            with anyio.fail_after(1 + 5), pytest.raises(ProviderTimeout) as caught:
                await _answer(provider, model)
            waited = time.monotonic() - started
    assert 0.8 <= waited < 2.5, waited
    message = str(caught.value)
    assert "did not answer within 1 s" in message and SETTING in message, message
    assert _where(server) in message, message


async def test_a_limit_longer_than_the_wait_lets_a_late_model_answer() -> None:
    with FakeOpenAIServer([delay(2, text("late but here"))]) as server:
        async with _agents_provider(_agent(server.base_url, 3)) as (provider, model):
            with anyio.fail_after(3 + 5):
                assert await _answer(provider, model) == "late but here"


async def test_a_stream_that_pauses_longer_than_timeout_seconds_ends_at_the_limit() -> None:
    with FakeOpenAIServer([text("one two three", chunks=3, chunk_delay=3)]) as server:
        async with _agents_provider(_agent(server.base_url, 1)) as (provider, model):
            started = time.monotonic()
            with anyio.fail_after(1 + 5), pytest.raises(ProviderTimeout) as caught:
                await _answer(provider, model)
            waited = time.monotonic() - started
    assert 0.8 <= waited < 2.5, waited
    message = str(caught.value)
    assert "stopped sending for 1 s" in message
    assert SETTING in message
    assert _where(server) in message


def _text(result: types.CallToolResult) -> str:
    return "".join(b.text for b in result.content if isinstance(b, types.TextContent))


async def _served_call(path: Path) -> tuple[types.CallToolResult, float]:
    served = AgentServer(load_served_agents([path]), history=False)
    async with served, Client(served.server, mode="legacy") as client:
        started = time.monotonic()
        with anyio.fail_after(10):
            result = await client.call_tool("book_flight", {"destination": "Oslo"})
        return result, time.monotonic() - started


async def test_a_served_call_to_a_model_that_starts_too_late_fails_at_timeout_seconds(
    tmp_path: Path,
) -> None:
    with FakeOpenAIServer([delay(3, text("Booked."))]) as model:
        path = write_agent(
            tmp_path / "a.agent.yaml", base_url=model.base_url, settings={"timeoutSeconds": 1}
        )
        result, waited = await _served_call(path)
    assert result.is_error
    assert waited < 2.5, waited
    message = _text(result).splitlines()[0]
    assert "within" in message and "1 s" in message, message
    assert SETTING in message, message
    assert _where(model) in message, message


async def test_a_served_call_whose_stream_stalls_fails_at_timeout_seconds(tmp_path: Path) -> None:
    with FakeOpenAIServer([text("Booked AF123 to Oslo.", chunks=3, chunk_delay=3)]) as model:
        path = write_agent(
            tmp_path / "a.agent.yaml", base_url=model.base_url, settings={"timeoutSeconds": 1}
        )
        result, waited = await _served_call(path)
    assert result.is_error
    assert waited < 2.5, waited
    message = _text(result).splitlines()[0]
    assert "1 s" in message and SETTING in message, message
    assert _where(model) in message, message


async def test_a_caller_model_that_starts_too_late_fails_the_case_at_timeout_seconds(
    tmp_path: Path,
) -> None:
    tool = book_tool(tests=[{"name": "words", "ask": "Book a flight to Lisbon"}])
    with FakeOpenAIServer(responder=lambda body: delay(3, text("late"))) as model:
        path = write_agent(
            tmp_path / "desk.agent.yaml",
            base_url=model.base_url,
            tools=[tool],
            settings={"timeoutSeconds": 1},
        )
        agent = load_agent(path)
        started = time.monotonic()
        with anyio.fail_after(15):
            matrix = await run_matrix(agent, path, select_cases(agent))
        waited = time.monotonic() - started
    (result,) = matrix.results
    assert isinstance(result, CallerResult)
    assert not result.passed
    assert waited < 4, waited
    assert result.turn is not None and result.turn.error is not None
    message = result.turn.error
    assert "within 1 s" in message and SETTING in message, message
    assert _where(model) in message, message
