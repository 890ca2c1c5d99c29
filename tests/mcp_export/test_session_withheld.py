"""A run whose tools the permission rule holds back says so in its trace: which, why, where.

Real parts: the OpenAI provider against ``FakeOpenAIServer``, the real ``mcp-server-time`` over
stdio through the agent's toolbox, and the served path (``run_to_result``'s trace as the CLI and
a served call show it).
"""

from __future__ import annotations

from typing import Any

import anyio
import pytest

from mcp_export.session.events import FinalAnswer, Notice, SessionEvent, ToolsHidden
from tests.fakes._script import text
from tests.fakes.openai_server import FakeOpenAIServer
from tests.mcp_export.test_session_tools import (
    Runtime,
    events_of,
    make_agent,
    runtimes,
    time_server,
)

__all__ = ["runtimes"]  # the fixture this file uses

pytestmark = pytest.mark.anyio


@pytest.fixture(autouse=True)
def _key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TEST_KEY", "sk-test")


async def run(
    runtimes: list[Runtime], servers: dict[str, Any], **settings: Any
) -> list[ToolsHidden]:
    with FakeOpenAIServer(responder=lambda body: text("It is noon.")) as server:
        runtime = Runtime(make_agent(server, servers, **settings))
        runtimes.append(runtime)
        with anyio.fail_after(60):
            events: list[SessionEvent] = await events_of(runtime.session(), "What time is it?")
    assert isinstance(events[-1], FinalAnswer)
    return [event for event in events if isinstance(event, ToolsHidden)]


async def test_a_server_whose_tools_all_need_permission_is_named_with_where_to_change_it(
    runtimes: list[Runtime],
) -> None:
    servers = {"time": time_server(serverToolDefaults={"permissionRequired": True})}

    (hidden,) = await run(runtimes, servers)

    assert isinstance(hidden, Notice)  # every consumer of notices shows it
    assert hidden.server == "time" and hidden.tools == ()
    assert hidden.text.startswith("The tools of time are hidden (the server was not started): ")
    assert "they need a person's permission, and this run cannot ask (toolPermission: tool)" in (
        hidden.text
    )
    assert "Agent ▸ MCP servers ▸ time ▸ untick" in hidden.text
    assert "mcpServers.time.serverToolDefaults.permissionRequired: false" in hidden.text


async def test_the_tools_held_back_from_a_started_server_are_named(
    runtimes: list[Runtime],
) -> None:
    servers = {"time": time_server(tools={"convert_time": {"permissionRequired": False}})}

    (hidden,) = await run(runtimes, servers)

    assert hidden.tools == ("get_current_time",)
    assert hidden.text.startswith("1 tool of time hidden (get_current_time): they need a person's")


async def test_toolpermission_always_points_at_the_model_page(runtimes: list[Runtime]) -> None:
    servers = {"time": time_server(serverToolDefaults={"permissionRequired": False})}

    (hidden,) = await run(runtimes, servers, toolPermission="always")

    assert hidden.policy == "always"
    assert "(toolPermission: always)" in hidden.text and "Model ▸ Tool permission" in hidden.text


async def test_nothing_is_said_when_every_tool_is_offered_or_left_out_on_purpose(
    runtimes: list[Runtime],
) -> None:
    servers = {
        "time": time_server(
            serverToolDefaults={"permissionRequired": False},
            tools={"convert_time": {"include": False, "permissionRequired": True}},
        )
    }

    assert await run(runtimes, servers) == []
