"""The chat tab's protocol log: the raw exchange of a real run, shown below the transcript.

A tool test against ``FakeOpenAIServer`` (real HTTP on loopback, the real OpenAI provider) and
the real ``mcp-server-time`` over stdio; every wait is bounded.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path

import pytest
from PySide6.QtCore import Qt
from pytestqt.qtbot import QtBot

from app.chat import ChatTab
from app.document.agent_document import AgentDocument
from app.protocol_log_view import ProtocolLogView
from mcp_export.protocol_log import ProtocolEntry
from mcp_export.redact import REDACTED
from mcp_export.session.events import FinalAnswer
from tests.app._windows import studio_window
from tests.fakes._script import Reply, RequestBody, text, tool_calls
from tests.fakes.mcp_clients import time_server, write_agent
from tests.fakes.openai_server import FakeOpenAIServer

RUN_MS = 30_000  # the first tool call starts mcp-server-time (about a second; more when busy)
KEY = "sk-proj-echoed0123456789abcdefXYZ"
PROMPT = "Book a flight to Oslo for 1 passenger(s)."


def _tool_then_echo(body: RequestBody) -> Reply:
    """Ask for the time, then answer with the key the request carried (a careless proxy)."""
    if body.rounds_since_user == 0:
        return tool_calls([("call_1", "t__get_current_time", {"timezone": "UTC"})])
    return text(f"Booked. Your key was {KEY}.").delayed(0.5)


@pytest.fixture
def tool_tab(
    qtbot: QtBot, qasync_loop: asyncio.AbstractEventLoop, tmp_path: Path
) -> Iterator[tuple[ChatTab, FakeOpenAIServer]]:
    """A shown tool-test tab of an agent with the time server; closed after the test."""
    with FakeOpenAIServer(responder=_tool_then_echo) as model:
        path = write_agent(
            tmp_path / "a.agent.yaml",
            base_url=model.base_url,
            api_key=KEY,
            mcp_servers={"t": time_server()},
        )
        tab = ChatTab(
            AgentDocument.load(path),
            title="book_flight",
            tool_name="book_flight",
            arguments={"destination": "Oslo"},
        )
        qtbot.addWidget(tab)
        tab.resize(900, 700)
        tab.show()
        yield tab, model
        future = asyncio.ensure_future(tab.aclose())
        qtbot.waitUntil(future.done, timeout=RUN_MS)


def _summaries(entries: list[ProtocolEntry], channel: str) -> list[str]:
    return [e.summary for e in entries if e.channel == channel]


def test_a_tool_test_run_shows_its_model_requests_and_tool_call_in_the_protocol_log(
    qtbot: QtBot, tool_tab: tuple[ChatTab, FakeOpenAIServer]
) -> None:
    tab, model = tool_tab
    assert tab.protocol_log_view is None and not tab.protocol_log_toggle.isChecked()
    qtbot.mouseClick(tab.protocol_log_toggle, Qt.MouseButton.LeftButton)
    view = tab.protocol_log_view
    assert view is not None and view.isVisible()
    assert tab.protocol_log_action.isChecked()
    assert view.count_label.text() == "no messages"

    with qtbot.waitSignal(tab.finished, timeout=RUN_MS) as finished:
        assert tab.start_test(PROMPT)
        # Live: the tool call is listed while the run still waits for the model's answer.
        qtbot.waitUntil(
            lambda: "tools/call result (id 3)" in _summaries(view.visible_entries(), "t"),
            timeout=RUN_MS,
        )
        assert tab.busy
    assert isinstance(finished.args[0], FinalAnswer)
    qtbot.waitUntil(
        lambda: len(view.visible_entries()) == len(tab.runner.protocol_log), timeout=2000
    )

    entries = view.visible_entries()
    endpoint = model.base_url.split("/")[2]
    requests = [e for e in entries if e.channel == endpoint and e.kind == "request"]
    assert len(requests) == 2 and len(model.bodies) == 2
    assert all(e.summary == "POST /v1/chat/completions" for e in requests)
    assert PROMPT in requests[0].text and '"role": "tool"' in requests[1].text
    tool_messages = _summaries(entries, "t")
    assert tool_messages.index("tools/list (id 2)") < tool_messages.index("tools/call (id 3)")
    call = next(e for e in entries if e.summary == "tools/call (id 3)")
    assert '"timezone": "UTC"' in call.text
    # The key went out in a header and came back in the answer: masked both times.
    everything = "\n".join(e.as_text() for e in tab.runner.protocol_log.entries())
    assert KEY not in everything and f"Bearer {REDACTED}" in everything
    assert f"Your key was {REDACTED}" in everything
    assert KEY not in tab.transcript.assistant_text()


def test_the_toggle_and_the_context_menu_show_and_hide_the_same_panel(
    qtbot: QtBot, tool_tab: tuple[ChatTab, FakeOpenAIServer]
) -> None:
    tab, _ = tool_tab
    assert tab.contextMenuPolicy() == Qt.ContextMenuPolicy.ActionsContextMenu
    assert tab.protocol_log_action in tab.actions()
    tab.protocol_log_action.trigger()
    view = tab.protocol_log_view
    assert view is not None and view.isVisible() and tab.protocol_log_toggle.isChecked()
    assert tab.splitter.indexOf(view) == 1 and tab.splitter.indexOf(tab.pages) == 0
    assert min(tab.splitter.sizes()) > 0  # below the transcript, both visible
    qtbot.mouseClick(tab.protocol_log_toggle, Qt.MouseButton.LeftButton)
    assert not view.isVisible() and not tab.protocol_log_action.isChecked()
    tab.protocol_log_action.trigger()
    assert tab.protocol_log_view is view and view.isVisible()


def test_a_plain_chat_records_its_log_before_the_panel_is_first_shown(
    qtbot: QtBot, qasync_loop: asyncio.AbstractEventLoop, tmp_path: Path
) -> None:
    with FakeOpenAIServer([text("Hello there.", chunks=2)]) as model:
        tab = ChatTab(
            AgentDocument.load(write_agent(tmp_path / "a.agent.yaml", base_url=model.base_url)),
            title="Chat",
        )
        qtbot.addWidget(tab)
        tab.show()
        try:
            with qtbot.waitSignal(tab.finished, timeout=RUN_MS):
                assert tab.submit("Hi")
            assert tab.protocol_log_action in tab.actions()
            tab.protocol_log_action.trigger()
            view = tab.protocol_log_view
            assert view is not None
            kinds = [(e.direction, e.kind) for e in view.visible_entries()]
            assert kinds == [("sent", "request"), ("received", "stream")]
        finally:
            future = asyncio.ensure_future(tab.aclose())
            qtbot.waitUntil(future.done, timeout=RUN_MS)


def _rows_that_fit(view: ProtocolLogView) -> int:
    """How many messages the list shows at once, as a person sees it."""
    return view.table.viewport().height() // view.table.verticalHeader().defaultSectionSize()


def test_at_1024x700_the_log_shows_its_messages_and_can_take_the_whole_tab(
    qtbot: QtBot, qasync_loop: asyncio.AbstractEventLoop, tmp_path: Path
) -> None:
    with FakeOpenAIServer(responder=lambda _body: text("Hello.")) as model:
        path = write_agent(tmp_path / "a.agent.yaml", base_url=model.base_url)
        window = studio_window(qtbot)
        document = window.open_file(path)
        assert document is not None
        window.resize(1024, 700)
        tab = window.open_chat_tab(document)
        assert isinstance(tab, ChatTab)
        qtbot.mouseClick(tab.protocol_log_toggle, Qt.MouseButton.LeftButton)
        view = tab.protocol_log_view
        assert view is not None
        with qtbot.waitSignal(tab.finished, timeout=RUN_MS):
            tab.submit("Hi")

        qtbot.waitUntil(lambda: view.model.rowCount() >= 2, timeout=RUN_MS)
        assert _rows_that_fit(view) >= 6  # beside the trace, before a message is picked
        assert not view.viewer.isVisible()  # no empty "select a message" pane taking room

        qtbot.mouseClick(tab.log_whole_button, Qt.MouseButton.LeftButton)
        assert not tab.transcript.isVisible() and view.isVisible()
        qtbot.waitUntil(lambda: _rows_that_fit(view) >= 15, timeout=RUN_MS)  # once laid out
        view.select_row(0)
        assert view.viewer.isVisible() and view.viewer.toPlainText()
        qtbot.waitUntil(lambda: view.viewer.height() > 100, timeout=RUN_MS)
        assert _rows_that_fit(view) >= 7  # the message read whole below, the list still roomy

        qtbot.mouseClick(tab.log_whole_button, Qt.MouseButton.LeftButton)
        assert tab.transcript.isVisible() and view.isVisible()  # both again
        qtbot.mouseClick(tab.log_whole_button, Qt.MouseButton.LeftButton)
        qtbot.mouseClick(tab.protocol_log_toggle, Qt.MouseButton.LeftButton)  # the trace's turn
        assert tab.transcript.isVisible() and not view.isVisible()
        assert not tab.log_whole_button.isChecked()
        # The header row still fits a 1024-pixel window.
        assert window.width() == 1024 and tab.minimumSizeHint().width() <= tab.width()
        window.remove_run_tab(tab)
        future = asyncio.ensure_future(tab.aclose())
        qtbot.waitUntil(future.done, timeout=RUN_MS)
