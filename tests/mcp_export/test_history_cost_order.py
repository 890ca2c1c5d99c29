"""History's conversations sorted by what they cost, in the store's own query: each store location
of ``store_location`` (an SQLite file, a real PostgreSQL), filled by real served calls (a real
``AgentServer`` in-process with the official ``mcp.Client``, the real OpenAI provider against
``FakeOpenAIServer``, a price in the agent file for some calls and none for the others).

A known cost sorts by its amount (a lower bound by the part that is known), an unknown one below
every known one, a conversation without a call below those; a page ends where the next starts.
"""

from __future__ import annotations

from pathlib import Path

import mcp_types as types
import pytest
from mcp import Client

from mcp_export.history.conversations import ConversationFilter
from mcp_export.history.schema import ConversationRecord, agent_key
from mcp_export.history.store import open_store
from mcp_export.server.agent_server import AgentServer, load_served_agents
from tests.fakes._script import text, tool_call_without_usage
from tests.fakes.mcp_clients import book_tool, time_server, write_agent
from tests.fakes.openai_server import FakeOpenAIServer

pytestmark = pytest.mark.anyio
pytest_plugins = ["tests.fakes.postgres"]

PRICES = {"openai:fake-model": {"input": 0.4, "output": 1.6}}
CLIENT = types.Implementation(name="test-client", version="9.9")
TOOLS = [
    book_tool(),
    book_tool("find_hotel", prompt="Find a hotel in {destination}."),
    book_tool("rent_car", prompt="Rent a car in {destination}."),
]


async def _serve(path: Path, location: str, tool: str, destination: str) -> None:
    async with (
        AgentServer(load_served_agents([path]), history=location) as served,
        Client(served.server, client_info=CLIENT) as client,
    ):
        result = await client.call_tool(tool, {"destination": destination})
        assert not result.is_error, result.content


async def test_conversations_sort_by_cost_in_the_store_a_page_at_a_time(
    tmp_path: Path, store_location: str
) -> None:
    replies = [
        text("Booked Oslo.", usage=(1000, 200)),
        tool_call_without_usage("c1", "time__get_current_time", {"timezone": "UTC"}),
        text("Hotel Bergen booked.", usage=(3000, 100)),
        text("Car in Rome.", usage=(1000, 200)),
    ]
    path = tmp_path / "a.agent.yaml"
    with FakeOpenAIServer(replies) as model:

        def agent(**settings: object) -> None:
            write_agent(
                path,
                base_url=model.base_url,
                tools=TOOLS,
                mcp_servers={"time": time_server()},
                settings=settings,
            )

        agent(prices=PRICES)
        await _serve(path, location=store_location, tool="book_flight", destination="Oslo")
        await _serve(path, location=store_location, tool="find_hotel", destination="Bergen")
        agent()  # no price: the next call's cost is unknown
        await _serve(path, location=store_location, tool="rent_car", destination="Rome")
    query = ConversationFilter(agent_key=agent_key(str(path)))
    with open_store(store_location) as store:
        store.create_thread(
            agent_path=str(path), agent_name="Travel Desk", title="Hello", kind="chat"
        )
        whole = store.conversations(query, order="cost", descending=True).rows
        pages = []
        page = store.conversations(query, order="cost", descending=False, limit=1)
        pages.extend(page.rows)
        while page.next is not None:
            page = store.conversations(
                query, order="cost", descending=False, after=page.next, limit=1
            )
            pages.extend(page.rows)

    def shown(rows: list[ConversationRecord]) -> list[tuple[str, str]]:
        return [(r.thread.kind, r.thread.cost.total.text() if r.thread.calls else "") for r in rows]

    assert shown(whole) == [
        ("served", "≥ $0.00136"),
        ("served", "$0.000720"),
        ("served", "unknown"),
        ("chat", ""),
    ]
    assert [r.thread.id for r in pages] == [r.thread.id for r in reversed(whole)]
