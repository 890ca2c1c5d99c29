"""*Compare with a variant…* in the studio's matrix: a tool's template and an edited copy run on
the same cases and model through real calls to ``FakeOpenAIServer`` (real SQLite history), both
sides' figures shown side by side with the differing cells first, and *Keep variant* one undo
step (undo gives back the same file bytes). Offscreen.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest
from PySide6.QtCore import Qt
from pytestqt.qtbot import QtBot

from app.test_cases.ab_dialog import ABDialog
from app.test_cases.matrix_tab import MatrixTab
from tests.app._windows import studio_window
from tests.fakes._script import Reply, RequestBody, text
from tests.fakes.mcp_clients import book_tool, write_agent
from tests.fakes.openai_server import FakeOpenAIServer

RUN_MS = 30_000
MODEL = "openai:fake-model"
CASES = [
    {"name": "oslo", "arguments": {"destination": "Oslo"}, "expect": {"contains": ["AF123"]}},
    {"name": "rome", "arguments": {"destination": "Rome"}, "expect": {"contains": ["Booked"]}},
]
VARIANT = "Book a trip to {destination}."


def _by_template(body: RequestBody) -> Reply:
    if "trip" in json.dumps(body):
        return text("Booked AF123.", usage=(30, 6))
    return text("Booked.", usage=(20, 5))


def _cells(table: object) -> list[list[str]]:
    from PySide6.QtWidgets import QTableWidget

    assert isinstance(table, QTableWidget)
    return [
        [str(table.model().index(r, c).data()) for c in range(table.columnCount())]
        for r in range(table.rowCount())
    ]


def test_compare_with_a_variant_shows_both_sides_and_keep_is_one_undo_step(
    qtbot: QtBot,
    qasync_loop: asyncio.AbstractEventLoop,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("AB_TEST_KEY", "sk-test")  # a saved file may not hold a literal key
    with FakeOpenAIServer(responder=_by_template) as server:
        path = write_agent(
            tmp_path / "desk.agent.yaml",
            base_url=server.base_url,
            api_key="env://AB_TEST_KEY",
            tools=[book_tool(tests=CASES)],
            settings={"prices": {MODEL: {"input": 1.0, "output": 2.0}}},
        )
        window = studio_window(qtbot)
        assert window.open_file(path) is not None
        document = window.current_document()
        assert document is not None
        tab = window.open_matrix_tab(document, None, [MODEL])
        assert isinstance(tab, MatrixTab)
        qtbot.waitUntil(lambda: tab.last_end is not None and not tab.busy, timeout=RUN_MS)
        before = len(server.model_requests)
        qtbot.mouseClick(tab.compare_button, Qt.MouseButton.LeftButton)
        dialog = tab.findChild(ABDialog)
        assert isinstance(dialog, ABDialog)
        assert dialog.template.toPlainText() == book_tool()["prompt"]
        dialog.template.selectAll()
        qtbot.keyClicks(dialog.template, VARIANT)
        dialog.rounds.setValue(2)
        qtbot.mouseClick(dialog.run_button, Qt.MouseButton.LeftButton)
        qtbot.waitUntil(lambda: dialog.comparison is not None and not dialog.busy, timeout=RUN_MS)
        sent = ["trip" in json.dumps(r.body) for r in server.model_requests[before:]]
    assert sent == [False, False, True, True] * 2  # A, B, A, B
    figures = _cells(dialog.figures)
    assert [row[:2] for row in figures] == [[MODEL, "A (current)"], [MODEL, "B (variant)"]]
    assert [row[3] for row in figures] == ["2/4 (50%)", "4/4 (100%)"]
    assert [row[5] for row in figures] == ["80 / 20", "120 / 24"]
    assert [row[6] for row in figures] == ["$0.000120", "$0.000168"], figures
    assert figures[0][2] != figures[1][2]  # each side's version fingerprint
    assert _cells(dialog.cells)[0] == ["oslo", MODEL, "0/2", "2/2"]
    assert "1 of 2 cells differ" in dialog.status.text()
    assert document.agent.tools[0].prompt == book_tool()["prompt"]  # nothing kept yet

    document.save(tmp_path / "before.agent.yaml")
    original = (tmp_path / "before.agent.yaml").read_bytes()
    steps = document.undo_stack.index()
    qtbot.mouseClick(dialog.keep_button, Qt.MouseButton.LeftButton)
    assert document.agent.tools[0].prompt == VARIANT
    assert document.undo_stack.index() == steps + 1
    document.save(tmp_path / "kept.agent.yaml")
    assert (tmp_path / "kept.agent.yaml").read_bytes() != original
    document.undo_stack.undo()
    document.save(tmp_path / "undone.agent.yaml")
    assert (tmp_path / "undone.agent.yaml").read_bytes() == original
    window.close()
