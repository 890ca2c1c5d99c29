"""Room for the tool editor's sample values in a small window (1024×700, 1200×780)."""

from __future__ import annotations

from pathlib import Path

import pytest
from pytestqt.qtbot import QtBot

from app.tool_editor.editor import ToolEditor
from tests.app._windows import studio_window


@pytest.mark.parametrize(("size", "rows"), [((1024, 700), 4), ((1200, 780), 4)])
def test_the_sample_values_table_shows_several_rows(
    qtbot: QtBot, example_path: Path, size: tuple[int, int], rows: int
) -> None:
    window = studio_window(qtbot)
    window.resize(*size)
    document = window.open_file(example_path)
    assert document is not None
    tool = document.agent.metadata.tool("book_flight")
    assert tool is not None
    editor = window.open_tool_tab(document, tool)
    assert isinstance(editor, ToolEditor)
    table = editor.template.sample_panel.view
    qtbot.waitExposed(table)
    row = table.verticalHeader().defaultSectionSize()

    qtbot.waitUntil(lambda: table.viewport().height() // row >= rows, timeout=5000)
    assert editor.template.preview.height() >= 3 * editor.template.preview.fontMetrics().height()
    assert not editor.template.preview_note.isVisible()  # said in the preview's tool tip
