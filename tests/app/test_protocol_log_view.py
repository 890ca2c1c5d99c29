"""The protocol log view: a log's messages listed, searched, copied, followed while a run goes on.

``protocol_log_scene`` is also the screenshot of the view (``protocol-log.png``): a real chat with
``FakeOpenAIServer`` and ``mcp-server-time``, the log attached to its provider and toolbox.
"""

from __future__ import annotations

import asyncio
import threading
from pathlib import Path

import pytest
import yaml
from PySide6.QtCore import Qt
from PySide6.QtGui import QFontDatabase, QGuiApplication
from pytestqt.qtbot import QtBot

from app.protocol_log_view import ProtocolLogView
from mcp_export.protocol_log import ProtocolLog, attach
from tests.fakes._script import Reply, RequestBody, text, tool_calls
from tests.fakes.mcp_clients import time_server
from tests.fakes.openai_server import FakeOpenAIServer

SCENE_QUESTION = "What time is it in Lisbon? I fly there tomorrow."


def filled_log() -> ProtocolLog:
    log = ProtocolLog()
    log.record("127.0.0.1:8080", "sent", "request", 'POST /v1/chat/completions\n\n{"a": 1}')
    log.record("time", "sent", "request", '{"method": "tools/call"}', summary="tools/call (id 3)")
    log.record("time", "received", "response", '{"result": "09:41"}', summary="tools/call result")
    log.record("time", "received", "error", '{"error": "no"}', summary="error -32602: bad")
    return log


def make_view(qtbot: QtBot, log: ProtocolLog | None) -> ProtocolLogView:
    view = ProtocolLogView(log)
    qtbot.addWidget(view)
    view.resize(900, 600)
    view.show()
    return view


def cells(view: ProtocolLogView, row: int) -> list[str]:
    model = view.table.model()
    return [str(model.data(model.index(row, column))) for column in range(model.columnCount())]


def test_entries_are_listed_with_time_channel_direction_kind_and_summary(qtbot: QtBot) -> None:
    log = filled_log()
    view = make_view(qtbot, log)
    assert view.table.model().rowCount() == 4
    time_cell, *rest = cells(view, 1)
    assert rest == ["time", "→ sent", "request", "tools/call (id 3)"]
    assert len(time_cell) == len("12:03:04.123") and time_cell[2] == ":"
    assert cells(view, 2)[2:4] == ["← received", "response"]
    assert view.count_label.text() == "4 messages"
    assert view.viewer.toPlainText() == ""


def test_selecting_a_message_shows_it_whole_with_its_heading(qtbot: QtBot) -> None:
    log = filled_log()
    view = make_view(qtbot, log)
    view.select_row(2)
    assert view.viewer.toPlainText() == log.entries()[2].as_text()
    assert view.viewer.lineWrapMode() == view.viewer.LineWrapMode.WidgetWidth
    assert view.viewer.font() == QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont)


def test_search_keeps_the_messages_that_hold_the_text_and_marks_it(qtbot: QtBot) -> None:
    log = filled_log()
    view = make_view(qtbot, log)
    qtbot.keyClicks(view.search_field, "TOOLS/CALL")
    qtbot.waitUntil(lambda: view.table.model().rowCount() == 2, timeout=2000)
    assert [e.summary for e in view.visible_entries()] == ["tools/call (id 3)", "tools/call result"]
    assert view.count_label.text() == "2 of 4"
    view.select_row(0)
    marks = view.viewer.extraSelections()
    assert [mark.cursor.selectedText() for mark in marks] == ["tools/call", "tools/call"]
    view.set_search("09:41")
    assert [e.summary for e in view.visible_entries()] == ["tools/call result"]
    view.set_search("")
    assert view.table.model().rowCount() == 4


def test_copy_puts_the_selected_message_on_the_clipboard(qtbot: QtBot) -> None:
    log = filled_log()
    view = make_view(qtbot, log)
    clipboard = QGuiApplication.clipboard()
    clipboard.setText("before")
    assert not view.copy_button.isEnabled()
    assert view.copy_selected() == ""
    assert clipboard.text() == "before"
    view.select_row(1)
    assert view.copy_button.isEnabled()
    qtbot.mouseClick(view.copy_button, Qt.MouseButton.LeftButton)
    assert clipboard.text() == log.entries()[1].as_text()
    view.table.setFocus()
    view.select_row(3)
    qtbot.keyClick(view.table, "c", Qt.KeyboardModifier.ControlModifier)
    assert clipboard.text() == log.entries()[3].as_text()


def test_select_row_chooses_the_row_even_while_qt_reads_ctrl_as_held(qtbot: QtBot) -> None:
    view = make_view(qtbot, filled_log())
    view.select_row(1)
    # Ctrl+C's release leaves Qt reading Ctrl as held: a plain selectRow then toggles row 1 off.
    qtbot.keyClick(view.table, "c", Qt.KeyboardModifier.ControlModifier)
    view.select_row(1)
    assert [i.row() for i in view.table.selectionModel().selectedRows()] == [1]
    assert view.copy_button.isEnabled()
    view.select_row(2)
    assert [i.row() for i in view.table.selectionModel().selectedRows()] == [2]


def test_copy_all_copies_every_message_the_search_keeps(qtbot: QtBot) -> None:
    log = filled_log()
    view = make_view(qtbot, log)
    qtbot.mouseClick(view.copy_all_button, Qt.MouseButton.LeftButton)
    assert QGuiApplication.clipboard().text() == log.as_text()
    view.set_search("time")
    view.copy_all()
    kept = [e for e in log.entries() if e.channel == "time"]
    assert QGuiApplication.clipboard().text() == "\n\n".join(e.as_text() for e in kept)


def test_new_entries_appear_while_a_run_goes_on_and_the_list_follows_them(
    qtbot: QtBot,
) -> None:
    log = ProtocolLog()
    view = make_view(qtbot, log)
    assert view.count_label.text() == "no messages"
    for number in range(200):
        log.record("time", "received", "notification", f"progress {number}")
    qtbot.waitUntil(lambda: view.table.model().rowCount() == 200, timeout=2000)
    bar = view.table.verticalScrollBar()
    assert bar.maximum() > 0 and bar.value() == bar.maximum()
    bar.setValue(0)
    log.record("time", "received", "notification", "progress 200")
    qtbot.waitUntil(lambda: view.table.model().rowCount() == 201, timeout=2000)
    assert bar.value() == 0  # someone reading older messages is left where they are


def test_entries_recorded_on_another_thread_appear(qtbot: QtBot) -> None:
    log = ProtocolLog()
    view = make_view(qtbot, log)

    def record() -> None:
        for number in range(50):
            log.record("model", "sent", "request", f"request {number}")

    worker = threading.Thread(target=record)
    worker.start()
    worker.join(10)
    qtbot.waitUntil(lambda: view.table.model().rowCount() == 50, timeout=2000)


def test_entries_the_log_drops_leave_the_list_and_clear_empties_it(qtbot: QtBot) -> None:
    log = ProtocolLog(max_entries=3)
    view = make_view(qtbot, log)
    for number in range(5):
        log.record("time", "sent", "request", f"request {number}")
    qtbot.waitUntil(lambda: view.table.model().rowCount() == 3, timeout=2000)
    assert [e.text for e in view.visible_entries()] == ["request 2", "request 3", "request 4"]
    qtbot.mouseClick(view.clear_button, Qt.MouseButton.LeftButton)
    assert view.table.model().rowCount() == 0 and len(log) == 0


def test_another_log_replaces_the_first_one(qtbot: QtBot) -> None:
    first = filled_log()
    view = make_view(qtbot, None)
    assert view.table.model().rowCount() == 0
    view.set_log(first)
    assert view.table.model().rowCount() == 4
    second = ProtocolLog()
    view.set_log(second)
    first.record("time", "sent", "request", "to the first log")
    second.record("time", "sent", "request", "to the second log")
    qtbot.waitUntil(lambda: view.table.model().rowCount() == 1, timeout=2000)
    assert view.visible_entries()[0].text == "to the second log"


def test_a_log_outlives_its_view(qtbot: QtBot) -> None:
    log = filled_log()
    view = ProtocolLogView(log)
    view.deleteLater()
    qtbot.waitUntil(lambda: not log._listeners, timeout=2000)
    log.record("time", "sent", "request", "after the view")


# --- a real run -------------------------------------------------------------------------------


def scene_model(body: RequestBody) -> Reply:
    """Look up the time in Lisbon once, then answer with it."""
    if body.rounds_since_user == 0:
        call = ("call_1", "time__get_current_time", {"timezone": "Europe/Lisbon"})
        return tool_calls([call], usage=(812, 24))
    return text("It is 09:41 in Lisbon now; your flight leaves at 07:05.", chunks=12)


def write_scene_agent(folder: Path, base_url: str) -> Path:
    """An agent with the reference time server whose model is ``base_url``."""
    path = folder / "scene.agent.yaml"
    data = {
        "metadata": {"name": "Travel Desk", "version": "1.0.0", "mode": "interactive"},
        "settings": {"model": "openai:fake-model", "toolPermission": "never"},
        "systemPrompt": "You help travellers. Use the tools for times.",
        "providers": {"openai": {"OPENAI_API_KEY": "sk-local-scene", "OPENAI_BASE_URL": base_url}},
        "mcpServers": {"time": time_server()},
    }
    path.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
    return path


async def protocol_log_scene(agent_path: Path, question: str = SCENE_QUESTION) -> ProtocolLogView:
    """A chat of the agent at ``agent_path`` (its provider and toolbox with a protocol log
    attached, as a chat tab attaches one), then a view of the log with the tool call selected.

    For ``make screenshots``: ``camera.shoot(await protocol_log_scene(agent), "protocol-log.png")``
    (the view is shown at 1100 × 720; close it afterwards).
    """
    from mcp_export.providers.factory import provider_for_agent
    from mcp_export.session.chat import ChatSession, run_to_result
    from mcp_export.toolbox.agent_toolbox import AgentToolbox
    from schema_types.files.agent_file import load_agent

    agent = load_agent(agent_path)
    log = ProtocolLog()
    provider, model = provider_for_agent(agent)
    toolbox = AgentToolbox(agent, base_dir=agent_path.parent)
    attach(log, provider, toolbox)
    try:
        session = ChatSession(agent, provider=provider, model=model, toolbox=toolbox)
        await run_to_result(session, question)
    finally:
        await toolbox.aclose()
        await provider.aclose()
    view = ProtocolLogView(log)
    view.resize(1100, 720)
    view.show()
    calls = [i for i, e in enumerate(view.visible_entries()) if e.summary.startswith("tools/call")]
    view.select_row(calls[0] if calls else 0)
    return view


def test_a_real_chat_fills_the_log_with_model_and_tool_server_messages(
    qtbot: QtBot, qasync_loop: asyncio.AbstractEventLoop, tmp_path: Path
) -> None:
    with FakeOpenAIServer(responder=scene_model) as server:
        agent = write_scene_agent(tmp_path, server.base_url)
        task = asyncio.ensure_future(protocol_log_scene(agent))
        qtbot.waitUntil(task.done, timeout=60_000)
    view = task.result()
    qtbot.addWidget(view)
    entries = view.visible_entries()
    model_channel = server.base_url.split("/")[2]
    kinds = [(e.channel == "time", e.direction, e.kind) for e in entries]
    assert (False, "sent", "request") in kinds and (False, "received", "stream") in kinds
    summaries = [e.summary for e in entries if e.channel == "time"]
    assert summaries.index("tools/list (id 2)") < summaries.index("tools/call (id 3)")
    assert summaries.index("tools/call (id 3)") < summaries.index("tools/call result (id 3)")
    model_requests = [e for e in entries if e.channel == model_channel and e.kind == "request"]
    assert len(model_requests) == 2
    assert "time__get_current_time" in model_requests[0].text
    assert '"role": "tool"' in model_requests[1].text
    assert "sk-local-scene" not in "\n".join(e.as_text() for e in entries)
    assert view.selected_entries()[0].summary == "tools/call (id 3)"
    assert "Europe/Lisbon" in view.viewer.toPlainText()


@pytest.mark.parametrize("count", [2000])
def test_many_entries_at_once_are_taken_in_one_update(qtbot: QtBot, count: int) -> None:
    log = ProtocolLog()
    view = make_view(qtbot, log)
    updates: list[int] = []
    view.model.rowsInserted.connect(lambda *_: updates.append(view.model.rowCount()))
    for number in range(count):
        log.record("model", "received", "notification", f"piece {number}")
    qtbot.waitUntil(lambda: view.model.rowCount() == count, timeout=5000)
    assert updates == [count]
