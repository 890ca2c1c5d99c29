"""A forced tool choice (``settings.toolChoice``: a tool's name, or ``required``) is sent in a form
the server honours, and a forced request answered without a tool call is a failure that says so.

llama.cpp's ``llama-server`` (0.6.0-dev) reads ``tool_choice`` only as a string: an object naming
a function falls back to ``auto`` with a warning in its own log only. ``FakeOpenAIServer.
like_llama_server()`` reads it the same way (see its docstring for where in the server's source),
and its model list says ``owned_by: llamacpp`` as the real one's does. The model is scripted
with ``tool_calls(..., otherwise=text(...))``: it calls the tool only when the request, as the
server reads it, forces a call. Real parts: the OpenAI provider over HTTP, the reference
``mcp-server-time`` over stdio (two tools, so "only the named tool" is visible), the served MCP
server through the official client, and ``metaagent call`` as a subprocess.
"""

from __future__ import annotations

from contextlib import aclosing
from pathlib import Path
from typing import Any

import anyio
import mcp_types as types
import pytest
from mcp import Client

from mcp_export.providers.factory import provider_for_agent
from mcp_export.server.agent_server import AgentServer, load_served_agents
from mcp_export.session.chat import ChatSession
from mcp_export.session.events import FinalAnswer, Notice, SessionEvent, SessionFailed
from mcp_export.toolbox.agent_toolbox import AgentToolbox
from schema_types.files.agent_file import load_agent
from tests.fakes._script import Reply, text, tool_calls
from tests.fakes.cli import metaagent
from tests.fakes.mcp_clients import book_tool, time_server, write_agent
from tests.fakes.openai_server import FakeOpenAIServer

pytestmark = pytest.mark.anyio

TIME = "t__get_current_time"
CALL = ("call_1", TIME, {"timezone": "Europe/Lisbon"})
CHATTY = "I believe it is around noon in Lisbon."


def _forced_then_answer() -> list[Reply]:
    """A model that calls the time tool only when forced to, then answers."""
    return [tool_calls([CALL], otherwise=text(CHATTY)), text("It is 13:05 in Lisbon.")]


def _agent_file(tmp_path: Path, server: FakeOpenAIServer, choice: str) -> Path:
    return write_agent(
        tmp_path / "time.agent.yaml",
        base_url=server.base_url,
        tools=[book_tool()],
        mcp_servers={"t": time_server()},
        settings={"toolChoice": choice, "maxChatTurns": 4},
    )


async def _run(path: Path) -> list[SessionEvent]:
    agent = load_agent(path)
    provider, model = provider_for_agent(agent)
    toolbox = AgentToolbox(agent, base_dir=path.parent)
    session = ChatSession(agent, provider=provider, model=model, toolbox=toolbox)
    try:
        with anyio.fail_after(30):
            async with aclosing(session.run("What time is it in Lisbon?")) as events:
                return [event async for event in events]
    finally:
        with anyio.fail_after(20):
            await toolbox.aclose()
            await provider.aclose()


def _tool_names(body: dict[str, Any]) -> list[str]:
    return [tool["function"]["name"] for tool in body.get("tools") or []]


async def test_a_named_choice_reaches_llama_server_as_required_with_only_that_tool(
    tmp_path: Path,
) -> None:
    with FakeOpenAIServer.like_llama_server(_forced_then_answer()) as server:
        events = await _run(_agent_file(tmp_path, server, TIME))
        bodies, log = server.bodies, list(server.log)

    final = events[-1]
    assert isinstance(final, FinalAnswer), final
    assert final.text == "It is 13:05 in Lisbon."
    assert [(c.name, c.arguments) for c in final.tool_calls] == [(TIME, CALL[2])]
    # The forced request: a string choice and only the named tool; the next one is free again.
    assert (bodies[0]["tool_choice"], _tool_names(bodies[0])) == ("required", [TIME])
    assert bodies[1]["tool_choice"] == "auto"
    assert sorted(_tool_names(bodies[1])) == ["t__convert_time", TIME]
    assert log == []  # nothing the server had to fall back on
    notes = [e.text for e in events if isinstance(e, Notice)]
    assert any("takes tool_choice only as a string" in note for note in notes), notes


async def test_other_servers_still_get_the_named_choice_as_an_object(tmp_path: Path) -> None:
    with FakeOpenAIServer(_forced_then_answer(), owned_by="vllm") as server:
        events = await _run(_agent_file(tmp_path, server, TIME))
        body = server.bodies[0]

    assert isinstance(events[-1], FinalAnswer), events[-1]
    assert body["tool_choice"] == {"type": "function", "function": {"name": TIME}}
    assert sorted(_tool_names(body)) == ["t__convert_time", TIME]


@pytest.mark.parametrize("choice", [TIME, "required"])
async def test_a_forced_choice_answered_with_text_fails_and_says_what_the_server_did(
    tmp_path: Path, choice: str
) -> None:
    # A server that reads tool_choice as a string only, but whose model list does not say what
    # it is (a proxy in front of llama-server): the named choice goes as an object and is
    # ignored; and a "required" a server or template does not enforce.
    with FakeOpenAIServer(
        [tool_calls([CALL], otherwise=text(CHATTY)) if choice == TIME else text(CHATTY)],
        string_tool_choice=True,
    ) as server:
        events = await _run(_agent_file(tmp_path, server, choice))
        log = list(server.log)

    failed = events[-1]
    assert isinstance(failed, SessionFailed), failed
    assert failed.message.startswith(f"settings.toolChoice is {choice!r}, which forces ")
    assert "answered with text and no tool call" in failed.message
    assert CHATTY in failed.message
    assert "did not honour the forced choice" in failed.message
    assert "toolChoice" in failed.hint
    assert failed.turns == 1
    if choice == TIME:
        assert log and "Wrong type supplied for parameter 'tool_choice'" in log[0]


async def test_a_served_call_whose_forced_choice_was_ignored_is_an_error_result(
    tmp_path: Path,
) -> None:
    with FakeOpenAIServer(
        [tool_calls([CALL], otherwise=text(CHATTY))], string_tool_choice=True
    ) as server:
        path = _agent_file(tmp_path, server, TIME)
        async with (
            AgentServer(load_served_agents([path]), history=False) as served,
            Client(served.server) as client,
        ):
            result = await client.call_tool("book_flight", {"destination": "Lisbon"})

    assert result.is_error
    message = "".join(b.text for b in result.content if isinstance(b, types.TextContent))
    assert message.startswith(f"book_flight failed: settings.toolChoice is {TIME!r}")
    assert "did not honour the forced choice" in message


def test_metaagent_call_exits_1_when_the_forced_choice_was_ignored(tmp_path: Path) -> None:
    with FakeOpenAIServer(
        [tool_calls([CALL], otherwise=text(CHATTY))], string_tool_choice=True
    ) as server:
        path = _agent_file(tmp_path, server, TIME)
        done = metaagent("call", str(path), "book_flight", "--arg", "destination=Lisbon")

    assert done.returncode == 1, done.stderr
    assert f"error: settings.toolChoice is {TIME!r}" in done.stderr
    assert "did not honour the forced choice" in done.stderr


def test_metaagent_call_on_llama_server_honours_the_named_choice(tmp_path: Path) -> None:
    with FakeOpenAIServer.like_llama_server(_forced_then_answer()) as server:
        path = _agent_file(tmp_path, server, TIME)
        done = metaagent("call", str(path), "book_flight", "--arg", "destination=Lisbon")
        body = server.bodies[0]

    assert (done.returncode, done.stdout) == (0, "It is 13:05 in Lisbon.\n"), done.stderr
    assert body["tool_choice"] == "required"
    assert "takes tool_choice only as a string" in done.stderr


async def test_a_forced_choice_with_no_tool_to_force_is_not_a_failure(tmp_path: Path) -> None:
    # Nothing was offered (no tool servers), so nothing could be forced: the text is the answer.
    with FakeOpenAIServer([text("Booked AF123.")]) as server:
        path = write_agent(
            tmp_path / "bare.agent.yaml",
            base_url=server.base_url,
            settings={"toolChoice": "required"},
        )
        events = await _run(path)
        body = server.bodies[0]

    final = events[-1]
    assert isinstance(final, FinalAnswer), final
    assert final.text == "Booked AF123."
    assert "tool_choice" not in body
