"""A tool test run in the studio's chat tab records what it cost, as a served call does: the real
chat tab against ``FakeOpenAIServer`` reporting usage, the agent file's price, a real history
database, shown by the real History view offscreen."""

from __future__ import annotations

import asyncio
from pathlib import Path

from pytestqt.qtbot import QtBot

from app.chat import ChatTab
from app.document.agent_document import AgentDocument
from app.history.view import HistoryView
from mcp_export.history.store import HistoryStore
from tests.fakes._script import text
from tests.fakes.mcp_clients import write_agent
from tests.fakes.openai_server import FakeOpenAIServer

PRICES = {"openai:fake-model": {"input": 0.4, "output": 1.6}}
PROMPT = "Book a flight to Oslo for 1 passenger(s)."
RUN_MS = 30_000


def test_a_tool_test_in_the_studio_records_its_cost(
    qtbot: QtBot, qasync_loop: asyncio.AbstractEventLoop, tmp_path: Path
) -> None:
    with FakeOpenAIServer([text("Booked.", usage=(1000, 200))]) as model:
        path = write_agent(
            tmp_path / "a.agent.yaml", base_url=model.base_url, settings={"prices": PRICES}
        )
        with HistoryStore(tmp_path / "h.sqlite3") as store:
            tab = ChatTab(
                AgentDocument.load(path),
                title="Test",
                tool_name="book_flight",
                arguments={"destination": "Oslo"},
                history=store,
            )
            qtbot.addWidget(tab)
            tab.show()
            try:
                with qtbot.waitSignal(tab.finished, timeout=RUN_MS):
                    assert tab.start_test(PROMPT) is True
            finally:
                closing = asyncio.ensure_future(tab.aclose())
                qtbot.waitUntil(closing.done, timeout=RUN_MS)
            store.flush()
            (run,) = store.runs()
            view = HistoryView("Travel Desk", path, store)
            qtbot.addWidget(view)
            view.show()
            view.open_entry(0)
            shown = view.transcript.toPlainText()
    assert run.cost_usd == (1000 * 0.4 + 200 * 1.6) / 1_000_000
    assert "cost $0.000720 a call, $0.0720 per 100 calls" in shown
