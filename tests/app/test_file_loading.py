"""Opening what is not a small agent file: a named pipe, a 60 MB file, an agent of 4000 tools.

The window never waits on the file: it reads on a worker thread, says what it is opening, says
why a file cannot be opened (and opens nothing), and keeps handling events while a large agent is
read and while its tools' schemas are checked.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest
from PySide6.QtCore import QTimer
from PySide6.QtWidgets import QLabel

from app.document.agent_document import DiskStamp
from app.document.schema_health import tool_schema_health
from app.studio import create_main_window
from app.window.files import READ_AT_ONCE_BYTES
from app.window.main_window import MainWindow
from tests.app._windows import studio_window

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="named pipes are POSIX here")

READ_LIMIT_MS = 20_000  # the 4000-tool agent on a slow, busy machine


def _agent_text(tools: int) -> str:
    lines = ["metadata:", "  name: Many Tools", "  mode: tools", "  tools:"]
    for index in range(tools):
        lines += [
            f"    - name: tool_{index:05d}",
            f"      description: Tool number {index}.",
            "      parameters:",
            "        type: object",
            "        properties:",
            "          city: {type: string, description: A city.}",
            f"          days: {{type: integer, minimum: 1, maximum: {index + 2}}}",
            "        required: [city]",
            f"      prompt: 'Plan {index}: {{city}} for {{days}} days.'",
        ]
    return "\n".join(lines) + "\n"


def _status(window: MainWindow) -> str:
    return window.statusBar().currentMessage()


@pytest.fixture
def fifo(tmp_path: Path) -> Path:
    path = tmp_path / "pipe.agent.yaml"
    os.mkfifo(path)
    return path


def test_a_named_pipe_is_refused_and_nothing_opens(qtbot, fifo: Path) -> None:
    window = studio_window(qtbot)

    with qtbot.waitSignal(window.file_loader.failed, timeout=5000):
        window.open_file_soon(fifo)

    assert "Could not open pipe.agent.yaml: it is a named pipe" in _status(window)
    assert window.documents() == []
    assert window.central.currentWidget() is window.welcome
    # The same file opened at once (what the recovery and tests use) does not wait either.
    assert window.open_file(fifo) is None
    assert DiskStamp.of(fifo) is None


def test_a_named_pipe_put_in_place_of_an_open_file_is_a_change_on_disk(
    qtbot, tmp_path: Path, example_path: Path
) -> None:
    window = studio_window(qtbot)
    path = tmp_path / "travel.agent.yaml"
    path.write_bytes(example_path.read_bytes())
    document = window.open_file(path)
    assert document is not None and not document.changed_on_disk()

    path.unlink()
    os.mkfifo(path)

    assert document.changed_on_disk()  # answered without reading the pipe


def test_a_60_mb_file_is_refused_with_the_limit(qtbot, tmp_path: Path) -> None:
    window = studio_window(qtbot)
    path = tmp_path / "huge.agent.yaml"
    with path.open("wb") as out:
        out.truncate(60 * 1024 * 1024)  # sparse: 60 MB without writing them

    with qtbot.waitSignal(window.file_loader.failed, timeout=5000):
        window.open_file_soon(path)

    message = _status(window)
    assert "Could not open huge.agent.yaml" in message
    assert "larger than the 10 MB an agent file may hold" in message
    assert window.documents() == []


def test_an_agent_of_4000_tools_opens_while_the_window_keeps_handling_events(
    qtbot, tmp_path: Path
) -> None:
    path = tmp_path / "many.agent.yaml"
    path.write_text(_agent_text(4000), encoding="utf-8")
    window = studio_window(qtbot)
    ticks: list[int] = []
    ticker = QTimer(window)
    ticker.setInterval(0)
    ticker.timeout.connect(lambda: ticks.append(len(window.documents())))
    ticker.start()

    window.open_file_soon(path)
    opening = window.central.currentWidget()
    assert isinstance(opening, QLabel) and opening.objectName() == "openingPage"
    assert "Opening many.agent.yaml" in opening.text()
    with qtbot.waitSignal(window.document_opened, timeout=READ_LIMIT_MS) as opened:
        pass

    document = opened.args[0]
    assert len(document.agent.tools) == 4000
    assert 0 in ticks  # the event loop ran while the file was read
    assert "Opened many.agent.yaml (4000 tools)" in _status(window)
    outline = window.outline.outline
    assert outline.rowCount(outline.index_for(document, "tools")) == 4000

    # The schemas are checked in slices, with events handled in between.
    health = tool_schema_health(document)
    ticks.clear()
    with qtbot.waitSignal(health.pass_finished, timeout=READ_LIMIT_MS):
        health.check_soon()
    ticker.stop()
    assert len(ticks) > 1
    assert health.checked and health.unsound_tools() == []


def test_the_tools_list_filters_4000_tools_and_acts_on_the_agents_positions(
    qtbot, tmp_path: Path
) -> None:
    path = tmp_path / "many.agent.yaml"
    path.write_text(_agent_text(4000), encoding="utf-8")
    window = studio_window(qtbot)
    document = window.open_file(path)
    assert document is not None
    tools = window.show_page(document, "tools")
    from app.pages.tools_list import ToolsListWidget

    assert isinstance(tools, ToolsListWidget)
    qtbot.keyClicks(tools.filter_edit, "tool_00399")
    assert tools.shown_rows() == 1
    tools.view.setCurrentIndex(tools.shown.index(0, 0))
    assert tools.selected_row() == 399

    tools.delete_selected()

    assert len(document.agent.tools) == 3999
    assert all(tool.name != "tool_00399" for tool in document.agent.tools)
    assert tools.shown_rows() == 0
    document.undo_stack.undo()
    assert document.agent.tools[399].name == "tool_00399"


def test_a_small_file_named_at_start_is_in_the_first_paint_a_large_one_comes_after(
    qtbot, tmp_path: Path, example_path: Path
) -> None:
    large = tmp_path / "many.agent.yaml"
    large.write_text(_agent_text(4000), encoding="utf-8")
    assert example_path.stat().st_size <= READ_AT_ONCE_BYTES < large.stat().st_size

    window = create_main_window([example_path, large])
    window.ask_save = lambda _doc: "discard"  # type: ignore[assignment,method-assign]
    qtbot.addWidget(window)
    assert [d.path for d in window.documents()] == [example_path.resolve()]
    assert window.file_loader.loading() == [large.resolve()]
    with qtbot.waitSignal(window.document_opened, timeout=READ_LIMIT_MS):
        window.show()

    assert [d.path for d in window.documents()] == [example_path.resolve(), large.resolve()]
