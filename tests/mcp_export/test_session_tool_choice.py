"""A forced tool choice (``settings.toolChoice``: ``required`` or a tool's name) forces the first
request only: the requests after a tool round leave the choice to the model, so a run ends with
an answer instead of calling tools until ``maxChatTurns``. Real parts: the OpenAI provider
against ``FakeOpenAIServer``, the fake stdio MCP tool server.
"""

from __future__ import annotations

import sys
from contextlib import aclosing
from pathlib import Path
from typing import Any

import anyio
import pytest

from mcp_export.providers.factory import provider_for_agent
from mcp_export.session.chat import ChatSession
from mcp_export.session.events import FinalAnswer, Notice, SessionEvent, SessionFailed
from mcp_export.toolbox.agent_toolbox import AgentToolbox
from schema_types.agent import Agent
from tests.fakes._script import Reply, RequestBody, text, tool_calls
from tests.fakes.openai_server import FakeOpenAIServer

pytestmark = pytest.mark.anyio

REPO = Path(__file__).resolve().parents[2]


def agent_for(server: FakeOpenAIServer, choice: str) -> Agent:
    return Agent.model_validate(
        {
            "metadata": {"name": "Forced tool choice"},
            "settings": {"model": "openai:fake-model", "toolChoice": choice, "maxChatTurns": 4},
            "providers": {
                "openai": {"OPENAI_API_KEY": "sk-test", "OPENAI_BASE_URL": server.base_url}
            },
            "mcpServers": {
                "fake": {
                    "command": sys.executable,
                    "args": ["-m", "tests.fakes.tool_server"],
                    "cwd": str(REPO),
                    "serverToolDefaults": {"permissionRequired": False},
                }
            },
        }
    )


def obedient(body: RequestBody) -> Reply:
    """A model that calls a tool whenever the request forces one, as real servers do."""
    forced = body.get("tool_choice") not in (None, "auto", "none")
    if forced:
        return tool_calls([(f"c{body.rounds_since_user}", "fake__echo", {"text": "hi"})])
    return text("the echo said hi")


@pytest.mark.parametrize("choice", ["required", "fake__echo"])
async def test_a_forced_choice_forces_the_first_request_and_then_the_model_answers(
    choice: str,
) -> None:
    with FakeOpenAIServer(responder=obedient) as server:
        events, sent = await run_agent(server, choice)

    final = events[-1]
    assert isinstance(final, FinalAnswer), final
    assert final.text == "the echo said hi"
    assert [call.name for call in final.tool_calls] == ["fake__echo"]
    assert sent[0] != "auto" and sent[0] is not None
    assert sent[1:] == ["auto"]


def eager(body: RequestBody) -> Reply:
    """A model that calls the tool on every request it may, as small local models do."""
    if body.get("tool_choice") == "none":
        return text(f"from what I have: {len(body.tool_results)} echo(es)")
    return tool_calls([(f"c{body.rounds_since_user}", "fake__echo", {"text": "hi"})])


async def run_agent(server: FakeOpenAIServer, choice: str) -> tuple[list[SessionEvent], list[Any]]:
    agent = agent_for(server, choice)
    provider, model = provider_for_agent(agent)
    toolbox = AgentToolbox(agent, base_dir=REPO)
    session = ChatSession(agent, provider=provider, model=model, toolbox=toolbox)
    try:
        with anyio.fail_after(30):
            async with aclosing(session.run("Say hi through the echo.")) as stream:
                events = [event async for event in stream]
    finally:
        with anyio.fail_after(20):
            await toolbox.aclose()
            await provider.aclose()
    return events, [body.get("tool_choice") for body in server.bodies]


async def test_the_last_request_goes_without_tools_so_the_run_ends_with_an_answer() -> None:
    with FakeOpenAIServer(responder=eager) as server:
        events, sent = await run_agent(server, "auto")

    final = events[-1]
    assert isinstance(final, FinalAnswer), final
    assert final.text == "from what I have: 3 echo(es)"
    assert final.turns == 4
    assert sent == ["auto", "auto", "auto", "none"]
    notices = [event.text for event in events if isinstance(event, Notice)]
    assert notices == [
        "model request 4 of 4 (settings.maxChatTurns): it goes with tool_choice none, so the "
        "model answers with what the tools gave it"
    ]


async def test_a_model_that_calls_tools_even_when_told_not_to_ends_at_the_turn_limit() -> None:
    def stubborn(body: RequestBody) -> Reply:
        return tool_calls([(f"c{body.rounds_since_user}", "fake__echo", {"text": "hi"})])

    with FakeOpenAIServer(responder=stubborn) as server:
        events, sent = await run_agent(server, "auto")

    final = events[-1]
    assert isinstance(final, SessionFailed), final
    assert final.kind == "turn-limit"
    assert sent[-1] == "none"
    assert len(sent) == 4
