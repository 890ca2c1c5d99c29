"""History lists what each conversation cost in a column of its own, read with the row, and
sorts by it in the store's query.

Real served calls (the real ``AgentServer`` with the official ``mcp.Client`` in-process, the
real OpenAI provider against ``FakeOpenAIServer`` reporting usage or not, the price table of
Preferences, ``prices.yaml`` under ``METAAGENT_HOME``) into a real SQLite history, shown by the
real History view offscreen. A priced call shows its dollars, one whose model request reported
no token count a lower bound (``≥``), one without a price ``unknown`` (never ``$0``), a chat
without a call nothing.
"""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import Qt
from pytestqt.qtbot import QtBot

from app.history.model import COLUMNS, CONVERSATION_COST
from app.history.view import HistoryView
from mcp_export.history.store import HistoryStore
from tests.app._served import serve_call
from tests.fakes._script import text, tool_call_without_usage
from tests.fakes.mcp_clients import book_tool, time_server, write_agent
from tests.fakes.openai_server import FakeOpenAIServer

COST = COLUMNS.index(CONVERSATION_COST)


def _history(tmp_path: Path, home: Path, store: HistoryStore) -> Path:
    """A priced call (Oslo), a call whose first model request reported no tokens (Bergen), a
    call after the price was taken out of the table (Rome) and a chat without a call."""
    prices = home / "prices.yaml"
    prices.write_text("openai:fake-model: {input: 0.4, output: 1.6}\n", encoding="utf-8")
    replies = [
        text("Booked Oslo.", usage=(1000, 200)),
        tool_call_without_usage("c1", "time__get_current_time", {"timezone": "UTC"}),
        text("Hotel Bergen booked at noon.", usage=(3000, 100)),
        text("Car in Rome.", usage=(1000, 200)),
    ]
    with FakeOpenAIServer(replies) as model:
        agent = write_agent(
            tmp_path / "a.agent.yaml",
            base_url=model.base_url,
            tools=[
                book_tool(),
                book_tool("find_hotel", prompt="Find a hotel in {destination}."),
                book_tool("rent_car", prompt="Rent a car in {destination}."),
            ],
            mcp_servers={"time": time_server()},
        )
        serve_call(agent, store, "book_flight", "Oslo")
        serve_call(agent, store, "find_hotel", "Bergen")
        prices.unlink()
        serve_call(agent, store, "rent_car", "Rome")
    store.create_thread(
        agent_path=str(agent), agent_name="Travel Desk", title="Hello, about Oslo", kind="chat"
    )
    store.flush()
    return agent


def _view(qtbot: QtBot, store: HistoryStore, agent: Path) -> HistoryView:
    view = HistoryView("Travel Desk", agent, store)
    qtbot.addWidget(view)
    view.resize(1024, 700)
    view.show()
    return view


def _costs(view: HistoryView) -> dict[str, str]:
    table = view.table.model()
    return {
        entry.tool or entry.kind: table.index(row, COST).data()
        for row, entry in enumerate(view.visible_entries())
    }


def test_the_cost_column_shows_each_conversations_total_unknown_never_0(
    qtbot: QtBot, tmp_path: Path, metaagent_home: Path
) -> None:
    with HistoryStore(tmp_path / "h.sqlite3") as store:
        agent = _history(tmp_path, metaagent_home, store)
        view = _view(qtbot, store, agent)
        costs = _costs(view)
        table = view.table.model()
        header = table.headerData(COST, Qt.Orientation.Horizontal)
        header_tip = table.headerData(COST, Qt.Orientation.Horizontal, Qt.ItemDataRole.ToolTipRole)
        hotel = next(r for r, e in enumerate(view.visible_entries()) if e.tool == "find_hotel")
        alignment = table.index(hotel, COST).data(Qt.ItemDataRole.TextAlignmentRole)
        tip = table.index(hotel, COST).data(Qt.ItemDataRole.ToolTipRole)
    assert costs == {
        "book_flight": "$0.000720",
        "find_hotel": "≥ $0.00136",
        "rent_car": "unknown",
        "chat": "",
    }
    assert header == "Cost of the\nconversation"
    assert header_tip == "Cost of the conversation"
    assert alignment == int(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
    # the row's tooltip keeps a call and 100 calls
    assert "Cost ≥ $0.00136 a call, ≥ $0.136 per 100 calls" in tip


def test_history_sorts_by_cost_known_above_unknown_above_no_call(
    qtbot: QtBot, tmp_path: Path, metaagent_home: Path
) -> None:
    with HistoryStore(tmp_path / "h.sqlite3") as store:
        agent = _history(tmp_path, metaagent_home, store)
        view = _view(qtbot, store, agent)
        view.table.sortByColumn(COST, Qt.SortOrder.DescendingOrder)
        descending = list(_costs(view).items())
        view.table.sortByColumn(COST, Qt.SortOrder.AscendingOrder)
        ascending = list(_costs(view).items())
    assert descending == [
        ("find_hotel", "≥ $0.00136"),
        ("book_flight", "$0.000720"),
        ("rent_car", "unknown"),
        ("chat", ""),
    ]
    assert ascending == descending[::-1]


def test_the_cost_column_is_in_sight_at_1024_px_with_the_start_kind_and_case(
    qtbot: QtBot, tmp_path: Path, metaagent_home: Path
) -> None:
    with HistoryStore(tmp_path / "h.sqlite3") as store:
        agent = _history(tmp_path, metaagent_home, store)
        view = _view(qtbot, store, agent)
        qtbot.waitExposed(view)
        header = view.table.horizontalHeader()
        shown = view.table.viewport().width()
        ends = {
            name: header.sectionPosition(column) + header.sectionSize(column)
            for column, name in enumerate(COLUMNS)
        }
        wide = max(view.table.fontMetrics().horizontalAdvance(v) for v in _costs(view).values())
    for name in ("Started", "Kind", "Case · model", CONVERSATION_COST):
        assert ends[name] <= shown, (name, ends, shown)
    assert header.sectionSize(COST) >= wide


def test_a_wide_pane_gives_the_title_its_room_unless_the_person_sized_it(
    qtbot: QtBot, tmp_path: Path, metaagent_home: Path
) -> None:
    with HistoryStore(tmp_path / "h.sqlite3") as store:
        agent = _history(tmp_path, metaagent_home, store)
        view = _view(qtbot, store, agent)
        view.resize(1920, 1080)
        qtbot.waitExposed(view)
        header = view.table.horizontalHeader()
        title = COLUMNS.index("Title")
        metrics = view.table.fontMetrics()
        hotel = metrics.horizontalAdvance("find_hotel: Find a hotel in Bergen.")
        qtbot.waitUntil(lambda: header.sectionSize(title) > hotel + 8, timeout=5000)
        tool = header.sectionPosition(len(COLUMNS) - 1)
        in_sight = tool + metrics.horizontalAdvance("find_hotel") < view.table.viewport().width()
        header.resizeSection(title, 150)  # the person's width stays
        wide = view.table.viewport().width()
        view.resize(1800, 1000)
        qtbot.waitUntil(lambda: view.table.viewport().width() < wide, timeout=5000)
        kept = header.sectionSize(title)
    assert in_sight  # the tool, too
    assert kept == 150
