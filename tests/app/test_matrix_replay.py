"""The studio's matrix records and replays, as ``metaagent test --record/--replay`` does: a run in
Record keeps each case's exchange beside the agent file, a run in Replay passes with the model
server stopped, a changed template makes the replay say where it differs, and Re-record mends
it. Real runs to ``FakeOpenAIServer``, real SQLite history, offscreen.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

from PySide6.QtCore import Qt
from pytestqt.qtbot import QtBot

from app.test_cases.matrix_tab import MatrixTab
from tests.app._matrix import RUN_MS, run_in_mode
from tests.app._windows import studio_window
from tests.fakes._script import Reply, RequestBody, text
from tests.fakes.mcp_clients import book_tool, write_agent
from tests.fakes.openai_server import FakeOpenAIServer

MODEL = "openai:fake-model"
CELL = ("book_flight", "oslo", MODEL)


def _booked(body: RequestBody) -> Reply:
    return text("Booked AF123.", usage=(20, 5))


def test_record_then_replay_without_the_model_and_rerecord_mends_a_changed_template(
    qtbot: QtBot, qasync_loop: asyncio.AbstractEventLoop, tmp_path: Path
) -> None:
    cases = [
        {"name": "oslo", "arguments": {"destination": "Oslo"}, "expect": {"contains": ["AF123"]}}
    ]
    with FakeOpenAIServer(responder=_booked) as server:
        path = write_agent(
            tmp_path / "desk.agent.yaml", base_url=server.base_url, tools=[book_tool(tests=cases)]
        )
        window = studio_window(qtbot)
        assert window.open_file(path) is not None
        document = window.current_document()
        assert document is not None
        tab = window.open_matrix_tab(document, None, [MODEL])
        assert isinstance(tab, MatrixTab)
        qtbot.waitUntil(lambda: tab.last_end is not None and not tab.busy, timeout=RUN_MS)
        run_in_mode(qtbot, tab, "Record")
        assert tab.last_end is not None and all(r.passed for r in tab.last_end.results)
        asked = len(server.model_requests)
    assert list((tmp_path).rglob("*.json")), "the recording is beside the agent file"

    run_in_mode(qtbot, tab, "Replay")  # the model server is gone
    end = tab.last_end
    assert end is not None and end.state == "done"
    assert [r.passed for r in end.results] == [True], end.results
    tab.select_cells([CELL])
    assert not tab.run_modes.bar.isVisible()

    document.set_field(
        ("metadata", "tools", 0, "prompt"), "Book a trip to {destination}.", text="Edit prompt"
    )
    run_in_mode(qtbot, tab, "Replay")
    assert tab.last_end is not None and [r.passed for r in tab.last_end.results] == [False]
    tab.select_cells([CELL])
    assert tab.run_modes.bar.isVisible()
    where = tab.run_modes.where.text()
    assert "differs from the recording at" in where, where
    assert "metaagent test" not in where, where  # the button beside it re-records
    assert "Book a trip to Oslo" in where or "messages" in where, where

    with FakeOpenAIServer(responder=_booked) as again:
        document.set_field(
            ("providers", "openai", "OPENAI_BASE_URL"), again.base_url, text="Move the server"
        )
        ends: list[object] = []
        tab.finished.connect(ends.append)
        qtbot.mouseClick(tab.run_modes.rerecord_button, Qt.MouseButton.LeftButton)
        qtbot.waitUntil(lambda: bool(ends) and not tab.busy, timeout=RUN_MS)
        assert len(again.requests) >= 1
    assert tab.run_modes.mode() == "replay"
    assert tab.last_end is not None and [r.passed for r in tab.last_end.results] == [True]
    tab.select_cells([CELL])
    assert not tab.run_modes.bar.isVisible()
    assert asked >= 1
    window.close()
