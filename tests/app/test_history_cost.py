"""History shows what each served call cost, per call and per 100 calls, and a conversation's
tokens as a lower bound (``≥``) when a model request did not report its count.

Real served calls (the real ``AgentServer`` with the official ``mcp.Client`` in-process, the
real OpenAI provider against ``FakeOpenAIServer``, the reference time server as the agent's own
tool) into a real history database, shown by the real History view offscreen.
"""

from __future__ import annotations

from pathlib import Path

import anyio
from mcp import Client
from PySide6.QtCore import Qt
from pytestqt.qtbot import QtBot

from app.history.model import COLUMNS
from app.history.view import HistoryView
from mcp_export.history.figures import CONVERSATION_TOKENS
from mcp_export.history.store import HistoryStore
from mcp_export.server.agent_server import AgentServer, load_served_agents
from tests.app._served import CLIENT, serve_call
from tests.fakes._script import text, tool_call_without_usage
from tests.fakes.mcp_clients import book_tool, time_server, write_agent
from tests.fakes.openai_server import FakeOpenAIServer

PRICES = {"openai:fake-model": {"input": 0.4, "output": 1.6}}


def _view(qtbot: QtBot, store: HistoryStore, agent: Path) -> HistoryView:
    view = HistoryView("Travel Desk", agent, store)
    qtbot.addWidget(view)
    view.resize(1024, 700)
    view.show()
    return view


def _row(view: HistoryView, tool: str) -> int:
    rows = [row for row, e in enumerate(view.visible_entries()) if e.tool == tool]
    assert len(rows) == 1, view.visible_entries()
    return rows[0]


def test_a_served_calls_cost_shows_per_call_and_per_100_calls(qtbot: QtBot, tmp_path: Path) -> None:
    replies = [
        text("Booked Oslo.", usage=(1000, 200)),
        tool_call_without_usage("c1", "time__get_current_time", {"timezone": "UTC"}),
        text("Hotel Bergen booked at noon.", usage=(1000, 200)),
    ]
    with FakeOpenAIServer(replies) as model:
        agent = write_agent(
            tmp_path / "a.agent.yaml",
            base_url=model.base_url,
            tools=[book_tool(), book_tool("find_hotel", prompt="Find a hotel in {destination}.")],
            mcp_servers={"time": time_server()},
            settings={"prices": PRICES},
        )
        with HistoryStore(tmp_path / "h.sqlite3") as store:
            serve_call(agent, store, "book_flight", "Oslo")
            serve_call(agent, store, "find_hotel", "Bergen")
            view = _view(qtbot, store, agent)
            flight, hotel = _row(view, "book_flight"), _row(view, "find_hotel")
            table = view.table.model()
            tip = table.index(flight, 0).data(Qt.ItemDataRole.ToolTipRole)
            hotel_tokens = table.index(hotel, COLUMNS.index(CONVERSATION_TOKENS)).data()
            hotel_tip = table.index(hotel, 0).data(Qt.ItemDataRole.ToolTipRole)
            view.open_entry(flight)
            flight_shown = view.transcript.toPlainText()
            view.open_entry(hotel)
            hotel_shown = view.transcript.toPlainText()

    assert "cost $0.000720 a call, $0.0720 per 100 calls" in flight_shown
    assert "Cost this answer: $0.000720" in flight_shown
    assert "Cost $0.000720 a call, $0.0720 per 100 calls" in tip
    # the hotel call's first request reported no tokens: lower bounds, and said so
    assert "cost ≥ $0.000720 a call, ≥ $0.0720 per 100 calls" in hotel_shown
    assert hotel_tokens == "≥ 1000 in / 200 out"
    assert "Tokens in the conversation: ≥ 1000 in / 200 out" in hotel_shown
    assert "Tokens this answer: ≥ 1000 in / 200 out" in hotel_shown
    assert "Cost this answer: ≥ $0.000720" in hotel_shown
    assert "1 model request(s) did not report their counts" in hotel_tip


def test_a_served_call_of_a_model_without_a_price_shows_cost_unknown(
    qtbot: QtBot, tmp_path: Path
) -> None:
    with FakeOpenAIServer([text("Booked Oslo.", usage=(1000, 200))]) as model:
        agent = write_agent(tmp_path / "a.agent.yaml", base_url=model.base_url)
        with HistoryStore(tmp_path / "h.sqlite3") as store:
            serve_call(agent, store, "book_flight", "Oslo")
            view = _view(qtbot, store, agent)
            view.open_entry(0)
            shown = view.transcript.toPlainText()
    assert "cost unknown" in shown
    assert "$0 " not in shown and "$0." not in shown


def test_a_conversations_answers_each_show_their_calls_cost_and_the_header_the_sum(
    qtbot: QtBot, tmp_path: Path
) -> None:
    replies = [text("Booked Oslo.", usage=(1000, 200)), text("Changed to Rome.", usage=(3000, 100))]
    with FakeOpenAIServer(replies) as model:
        agent = write_agent(
            tmp_path / "a.agent.yaml",
            base_url=model.base_url,
            tools=[book_tool(conversation=True)],
            settings={"prices": PRICES},
        )

        async def call() -> None:
            async with (
                AgentServer(load_served_agents([agent]), history=store) as served,
                Client(served.server, mode="legacy", client_info=CLIENT) as client,
            ):
                first = await client.call_tool("book_flight", {"destination": "Oslo"})
                assert first.structured_content is not None
                conversation = first.structured_content["conversationId"]
                await client.call_tool(
                    "book_flight", {"destination": "Rome", "conversation_id": conversation}
                )

        with HistoryStore(tmp_path / "h.sqlite3") as store:
            anyio.run(call)
            view = _view(qtbot, store, agent)
            view.open_entry(0)
            shown = view.transcript.toPlainText()
    assert "cost $0.00208 in 2 calls: $0.00104 a call, $0.104 per 100 calls" in shown
    first, second = (
        shown.index("Cost this answer: $0.000720"),
        shown.index("Cost this answer: $0.00136"),
    )
    assert first < second
