"""The figures of a conversation are one number wherever they are shown: the chat tab's stats
strip and status line, History's row and History's transcript.

A tool test with a tool round and a follow-up turn runs in a real chat tab against the real
OpenAI provider and a scripted ``FakeOpenAIServer`` whose replies report known usage, with the
real ``mcp-server-time`` as the agent's tool and a real SQLite history; then History opens on
that database.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path

import pytest
from pytestqt.qtbot import QtBot

from app.chat import ChatTab
from app.document.agent_document import AgentDocument
from app.history.model import COLUMNS
from app.history.view import HistoryView
from mcp_export.history.figures import (
    ANSWER_TIME,
    ANSWER_TOKENS,
    CONVERSATION_TIME,
    CONVERSATION_TOKENS,
)
from mcp_export.history.store import HistoryStore
from mcp_export.session.events import FinalAnswer
from tests.fakes._script import text, tool_calls
from tests.fakes.mcp_clients import time_server, write_agent
from tests.fakes.openai_server import FakeOpenAIServer

RUN_MS = 30_000
TIME_CALL = ("call_1", "t__get_current_time", {"timezone": "UTC"})
PROMPT = "Book a flight to Oslo for 1 passenger(s)."


@pytest.fixture
def model() -> Iterator[FakeOpenAIServer]:
    # The call: a tool round (30 in, 5 out), then the answer (50, 4); the follow-up (21, 7).
    replies = [
        tool_calls([TIME_CALL], usage=(30, 5)),
        text("Booked AF123 to Oslo.", usage=(50, 4)),
        text("Take the 07:10 back.", usage=(21, 7)),
    ]
    with FakeOpenAIServer(replies) as server:
        yield server


def _turn(qtbot: QtBot, tab: ChatTab, message: str, *, test: bool = False) -> object:
    with qtbot.waitSignal(tab.finished, timeout=RUN_MS) as finished:
        assert (tab.start_test(message) if test else tab.submit(message)) is True
    return finished.args[0]


def _closed(qtbot: QtBot, tab: ChatTab) -> None:
    future = asyncio.ensure_future(tab.aclose())
    qtbot.waitUntil(future.done, timeout=RUN_MS)


def test_a_tool_test_with_a_follow_up_shows_the_same_totals_in_the_tab_and_in_history(
    qtbot: QtBot,
    qasync_loop: asyncio.AbstractEventLoop,
    model: FakeOpenAIServer,
    tmp_path: Path,
) -> None:
    path = write_agent(
        tmp_path / "a.agent.yaml", base_url=model.base_url, mcp_servers={"t": time_server()}
    )
    with HistoryStore(tmp_path / "history.sqlite3") as store:
        tab = ChatTab(
            AgentDocument.load(path),
            title="book_flight",
            tool_name="book_flight",
            arguments={"destination": "Oslo"},
            history=store,
        )
        qtbot.addWidget(tab)
        tab.show()
        try:
            assert isinstance(_turn(qtbot, tab, PROMPT, test=True), FinalAnswer)
            call = tab.stats.answer
            follow_up = _turn(qtbot, tab, "And back?")
            assert isinstance(follow_up, FinalAnswer)
        finally:
            _closed(qtbot, tab)

        # The chat tab: the conversation in the strip, the last answer in the status line.
        assert f"{CONVERSATION_TOKENS}: 101 in / 16 out" in tab.stats.text()
        assert f"{ANSWER_TOKENS}: 21 in / 7 out" in tab.status.text()
        assert call is not None and call.tokens() == "80 in / 9 out"
        assert tab.stats.conversation.duration_ms is not None
        assert tab.stats.answer is not None
        assert tab.stats.answer.duration_ms == follow_up.duration_ms
        assert tab.stats.conversation.duration_ms == pytest.approx(
            (call.duration_ms or 0) + follow_up.duration_ms
        )
        assert f"{ANSWER_TIME}: {tab.stats.answer.time()}" in tab.status.text()

        # History: one row, the same conversation.
        view = HistoryView("Travel Desk", path, store)
        qtbot.addWidget(view)
        view.show()
        (entry,) = view.visible_entries()
        row = {
            name: view.table.model().index(0, column).data() for column, name in enumerate(COLUMNS)
        }
        assert (entry.kind, entry.tool, entry.status) == ("test", "book_flight", "complete")
        assert row[CONVERSATION_TOKENS] == tab.stats.conversation.tokens() == "101 in / 16 out"
        # Two clocks (the session's, the rows' time stamps) time the same answers.
        assert entry.duration_ms == pytest.approx(tab.stats.conversation.duration_ms, abs=50)
        assert entry.run is not None
        assert (entry.run.tokens_in, entry.run.tokens_out) == (80, 9)  # the call's own answer

        view.open_entry(0)
        shown = view.transcript.toPlainText()
        assert f"{CONVERSATION_TOKENS}: 101 in / 16 out" in shown
        assert f"{CONVERSATION_TIME}: " in shown
        assert shown.count(f"{ANSWER_TOKENS}: ") == 2
        assert f"{ANSWER_TOKENS}: 80 in / 9 out" in shown
        assert f"{ANSWER_TOKENS}: 21 in / 7 out" in shown
