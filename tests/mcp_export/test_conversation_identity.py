"""Which server may continue a conversation: one serving the same agent (by its name) and the
same tool, wherever its agent file lies.

Two servers on one store stand for two instances behind a load balancer (each store location of
``store_location``: an SQLite file, a real PostgreSQL schema); both protocol eras, the official
``mcp.Client`` in-process, the real OpenAI provider against ``FakeOpenAIServer``.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import mcp_types as types
import pytest
from mcp import Client

from mcp_export.server.agent_server import AgentServer, load_served_agents
from tests.fakes._script import count_user_turns
from tests.fakes.mcp_clients import book_tool, write_agent
from tests.fakes.openai_server import FakeOpenAIServer

pytestmark = pytest.mark.anyio
pytest_plugins = ["tests.fakes.postgres"]

MODES = pytest.mark.parametrize("mode", ["legacy", "auto"])


def _text(result: types.CallToolResult) -> str:
    return "".join(b.text for b in result.content if isinstance(b, types.TextContent))


async def _continued_elsewhere(
    first: Path, second: Path, store: str, mode: str
) -> tuple[types.CallToolResult, types.CallToolResult]:
    """A conversation opened by a server of ``first``, continued by a server of ``second``."""
    async with (
        AgentServer(load_served_agents([first]), history=store) as one,
        AgentServer(load_served_agents([second]), history=store) as another,
        Client(one.server, mode=mode) as first_client,
        Client(another.server, mode=mode) as second_client,
    ):
        opened = await first_client.call_tool("book_flight", {"destination": "Oslo"})
        assert opened.structured_content is not None
        conversation = opened.structured_content["conversationId"]
        continued = await second_client.call_tool(
            "book_flight", {"destination": "Rome", "conversation_id": conversation}
        )
    return opened, continued


@MODES
async def test_a_copy_of_the_agent_file_at_another_path_continues_the_conversation(
    tmp_path: Path, mode: str, store_location: str
) -> None:
    with FakeOpenAIServer(responder=count_user_turns) as model:
        first = write_agent(
            tmp_path / "a" / "travel.agent.yaml",
            base_url=model.base_url,
            tools=[book_tool(conversation=True)],
        )
        (tmp_path / "b").mkdir()
        second = Path(shutil.copy(first, tmp_path / "b" / "desk.agent.yaml"))
        opened, continued = await _continued_elsewhere(first, second, store_location, mode)
    assert not continued.is_error, _text(continued)
    assert _text(continued) == "turn 2: Book a flight to Rome for 1 passenger(s)."
    assert continued.structured_content is not None
    assert opened.structured_content is not None
    assert (
        continued.structured_content["conversationId"]
        == opened.structured_content["conversationId"]
    )


@MODES
async def test_an_agent_of_another_name_with_the_same_tool_is_refused_the_conversation(
    tmp_path: Path, mode: str, store_location: str
) -> None:
    with FakeOpenAIServer(responder=count_user_turns) as model:
        first = write_agent(
            tmp_path / "a.agent.yaml", base_url=model.base_url, tools=[book_tool(conversation=True)]
        )
        second = write_agent(
            tmp_path / "b.agent.yaml",
            name="Another Desk",
            base_url=model.base_url,
            tools=[book_tool(conversation=True)],
        )
        _opened, continued = await _continued_elsewhere(first, second, store_location, mode)
        asked = len(model.bodies)
    assert continued.is_error
    assert "unknown conversation_id" in _text(continued)
    assert asked == 1
