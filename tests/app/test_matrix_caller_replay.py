"""The studio's matrix records and replays caller cases as it does ordinary ones: a run in Record
keeps the caller's turn and the served call beside the agent file, a run in Replay passes with
the model server stopped, a changed description makes the caller cell say where the caller's
request differs, and Re-record (for that caller model, served by the tab's model) mends it.
Real runs to ``FakeOpenAIServer``, real SQLite history, offscreen.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

from PySide6.QtCore import Qt
from pytestqt.qtbot import QtBot

from app.test_cases.matrix_tab import MatrixTab
from mcp_export.testing.callers.ask import DEFAULT_CALLER_PROMPT
from tests.app._matrix import RUN_MS, run_in_mode
from tests.app._windows import studio_window
from tests.fakes._script import Reply, RequestBody, text, tool_calls
from tests.fakes.mcp_clients import book_tool, write_agent
from tests.fakes.openai_server import FakeOpenAIServer

MODEL = "openai:fake-model"
CALLER = "openai:caller-model"
CELL = ("book_flight", "words", CALLER)
CASE = {"name": "words", "ask": "Fly me to Oslo", "expect": {"contains": ["AF123"]}}


def _respond(body: RequestBody) -> Reply:
    """A caller picks book_flight for Oslo; the served model books it."""
    if body["messages"][0]["content"] == DEFAULT_CALLER_PROMPT:
        return tool_calls([("call_1", "book_flight", {"destination": "Oslo"})])
    return text("Booked AF123.", usage=(20, 5))


def test_a_caller_case_replays_without_the_model_and_rerecord_mends_a_changed_description(
    qtbot: QtBot, qasync_loop: asyncio.AbstractEventLoop, tmp_path: Path
) -> None:
    with FakeOpenAIServer(responder=_respond) as server:
        path = write_agent(
            tmp_path / "desk.agent.yaml",
            base_url=server.base_url,
            tools=[book_tool(tests=[CASE])],
            settings={"callers": {"decoys": ["mail"], "models": [CALLER]}},
        )
        window = studio_window(qtbot)
        assert window.open_file(path) is not None
        document = window.current_document()
        assert document is not None
        tab = window.open_matrix_tab(document, None, [MODEL])
        assert isinstance(tab, MatrixTab)
        qtbot.waitUntil(lambda: tab.last_end is not None and not tab.busy, timeout=RUN_MS)
        assert tab.model.caller_models == [CALLER]
        run_in_mode(qtbot, tab, "Record")
        assert tab.last_end is not None and [r.passed for r in tab.last_end.results] == [True]
    assert list(tmp_path.glob("desk.agent.yaml.replay/book_flight/words--*.json"))

    run_in_mode(qtbot, tab, "Replay")  # the model server is gone
    end = tab.last_end
    assert end is not None and end.state == "done"
    assert [(r.model, r.passed) for r in end.results] == [(CALLER, True)], end.results
    tab.select_cells([CELL])
    assert not tab.run_modes.bar.isVisible()

    document.set_field(
        ("metadata", "tools", 0, "description"), "Reserves a seat on a plane.", text="Describe"
    )
    run_in_mode(qtbot, tab, "Replay")
    assert tab.last_end is not None and [r.passed for r in tab.last_end.results] == [False]
    tab.select_cells([CELL])
    assert tab.run_modes.bar.isVisible()
    shown = tab.model.data(tab.model.index_of(CELL))
    assert shown.startswith("✘ 0/1") and "replay differs" in shown, shown
    assert shown.endswith("not replayed: re-record it"), shown  # no pick to count
    assert "1 replayed left the recording (not counted)" in tab.rates.text(), tab.rates.text()
    details = tab.details.browser.toPlainText()
    assert "Caller case: failed at replay differs" in details
    assert "The replay left its recording: nothing was asked of the caller" in details, details
    assert "The caller's request failed" not in details, details
    where = tab.run_modes.where.text()
    assert where.startswith(f"book_flight / words on {CALLER}: caller request 1 differs"), where
    assert "tools[0].description" in where and "Reserves a seat" in where, where
    assert "metaagent test" not in where, where  # the button beside it re-records

    with FakeOpenAIServer(responder=_respond) as again:
        document.set_field(
            ("providers", "openai", "OPENAI_BASE_URL"), again.base_url, text="Move the server"
        )
        ends: list[object] = []
        tab.finished.connect(ends.append)
        qtbot.mouseClick(tab.run_modes.rerecord_button, Qt.MouseButton.LeftButton)
        qtbot.waitUntil(lambda: bool(ends) and not tab.busy, timeout=RUN_MS)
        asked = [r.body["model"] for r in again.model_requests]
        assert asked == ["caller-model", "fake-model"]  # the caller's pick, the served call
    assert tab.run_modes.mode() == "replay"
    assert tab.last_end is not None and [r.passed for r in tab.last_end.results] == [True]
    tab.select_cells([CELL])
    assert not tab.run_modes.bar.isVisible()
    window.close()
