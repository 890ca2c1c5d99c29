"""Agent ▸ Versions of a tool: the versions that real ``metaagent test`` runs and a real
``AgentServer``'s served calls recorded in History, newest first with their figures (``*`` the
editor's version), and the diff of one against the editor's version or of two against each
other."""

from __future__ import annotations

import os
from pathlib import Path

import anyio
from mcp import Client
from PySide6.QtCore import QItemSelectionModel
from PySide6.QtWidgets import QTableWidgetItem
from pytestqt.qtbot import QtBot

from app.versions.view import COLUMNS, SAME_AS_EDITOR, VersionsView
from mcp_export.costs.prices import PRICES_FILE
from mcp_export.server.agent_server import AgentServer, load_served_agents
from schema_types.files.agent_file import load_agent
from tests.app._tables import pick_row
from tests.app._windows import studio_window
from tests.fakes._script import Reply, RequestBody, text
from tests.fakes.cli import metaagent
from tests.fakes.mcp_clients import book_tool, write_agent
from tests.fakes.openai_server import FakeOpenAIServer

OLD = "Book a flight to {destination}."
NEW = "Book a flight to {destination}, window seat."


def _text(item: QTableWidgetItem | None) -> str:
    assert item is not None
    return item.text()


def _booked(body: RequestBody) -> Reply:
    return text("Booked AF123." if "window" not in body.last_user_text else "Sorry.", usage=(20, 5))


def _write(tmp_path: Path, server: FakeOpenAIServer, prompt: str) -> Path:
    cases = [
        {"name": "oslo", "arguments": {"destination": "Oslo"}, "expect": {"contains": ["AF123"]}}
    ]
    return write_agent(
        tmp_path / "desk.agent.yaml",
        base_url=server.base_url,
        tools=[book_tool(tests=cases, prompt=prompt)],
    )


def test_the_versions_tab_lists_recorded_versions_and_diffs_them(
    qtbot: QtBot, tmp_path: Path
) -> None:
    home = Path(os.environ["METAAGENT_HOME"])
    home.mkdir(parents=True, exist_ok=True)
    (home / PRICES_FILE).write_text("openai:fake-model: {input: 2, output: 8}\n", encoding="utf-8")
    with FakeOpenAIServer(responder=_booked) as model:
        path = _write(tmp_path, model, OLD)
        old_bytes = path.read_bytes()
        assert metaagent("test", str(path), "--repeat", "2").returncode == 0
        path = _write(tmp_path, model, NEW)
        assert metaagent("test", str(path)).returncode == 1
        served = metaagent("call", str(path), "book_flight", "--arg", "destination=Lisbon")
        assert served.returncode == 0, served.stderr

    window = studio_window(qtbot)
    document = window.open_file(path)
    assert document is not None
    view = window.open_versions_tab(document)
    assert isinstance(view, VersionsView)
    assert window.tabs.currentWidget() is view
    qtbot.waitUntil(lambda: not view.reading, timeout=5_000)
    rows = [
        [_text(view.table.item(r, c)) for c in range(len(COLUMNS))]
        for r in range(view.table.rowCount())
    ]
    assert [row[0] for row in rows] == ["*", ""]  # the newest is the editor's version
    assert [row[3] for row in rows] == ["0/1 (0%)", "2/2 (100%)"]
    assert [(row[6], row[7]) for row in rows] == [("$0.0000800", "$0.00800")] * 2
    # The newest version's cost counts its served call too, and says so.
    cost_items = [view.table.item(r, COLUMNS.index("Cost/call")) for r in range(2)]
    costs = [item.toolTip() if item is not None else None for item in cost_items]
    assert costs == ["Over 1 case run and 1 other served call", "Over 2 case runs"], costs
    assert view.note.text().startswith("2 version(s) of book_flight, newest first")

    view.table.clearSelection()
    pick_row(view.table, 1)  # the older one against the editor's
    lines = view.diff.toPlainText().splitlines()
    assert f"-template: {OLD}" in lines and f"+template: {NEW}" in lines
    model_index = view.table.model().index(0, 0)
    view.table.selectionModel().select(
        model_index,
        QItemSelectionModel.SelectionFlag.Select | QItemSelectionModel.SelectionFlag.Rows,
    )
    lines = view.diff.toPlainText().splitlines()
    assert lines[0] == f"--- {rows[1][1]}" and lines[1] == f"+++ {rows[0][1]}"
    assert f"+template: {NEW}" in lines
    pick_row(view.table, 0)
    assert view.diff.toPlainText() == SAME_AS_EDITOR

    # Restore the older version: one undo step; the agent is the old file's agent again.
    pick_row(view.table, 1)
    assert view.restore_selected() is True
    qtbot.waitUntil(lambda: not view.reading, timeout=5_000)
    tool = document.agent.metadata.tool("book_flight")
    assert tool is not None and tool.prompt == OLD
    assert [_text(view.table.item(r, 0)) for r in range(2)] == ["", "*"]
    assert view.note.text().startswith(f"Restored version {rows[1][1]} of book_flight")
    # The restored version stays selected, its diff against the editor's version shown again.
    assert view.table.selectionModel().selectedRows()[0].row() == 1
    assert view.diff.toPlainText() == SAME_AS_EDITOR
    assert view.restore_button.isEnabled()
    old_file = tmp_path / "old.agent.yaml"
    old_file.write_bytes(old_bytes)
    assert document.agent.to_data() == load_agent(old_file).to_data()
    document.undo_stack.undo()
    tool = document.agent.metadata.tool("book_flight")
    assert tool is not None and tool.prompt == NEW
    window.close()


def test_a_version_only_served_is_listed_and_restored_exactly(qtbot: QtBot, tmp_path: Path) -> None:
    home = Path(os.environ["METAAGENT_HOME"])
    home.mkdir(parents=True, exist_ok=True)
    (home / PRICES_FILE).write_text("openai:fake-model: {input: 2, output: 8}\n", encoding="utf-8")
    with FakeOpenAIServer(responder=_booked) as model:
        path = _write(tmp_path, model, OLD)
        served_bytes = path.read_bytes()
        anyio.run(_serve_twice, path, home / "history.sqlite3")
        path = _write(tmp_path, model, NEW)
        assert metaagent("test", str(path)).returncode == 1

    window = studio_window(qtbot)
    document = window.open_file(path)
    assert document is not None
    view = window.open_versions_tab(document)
    assert isinstance(view, VersionsView)
    qtbot.waitUntil(lambda: not view.reading, timeout=5_000)
    rows = [
        [_text(view.table.item(r, c)) for c in range(len(COLUMNS))]
        for r in range(view.table.rowCount())
    ]
    assert [row[0] for row in rows] == ["*", ""]
    # Served only: the pass rate unknown, never 0 %, and its calls.
    assert [row[3] for row in rows] == ["0/1 (0%)", "— (2 served)"]
    passed = view.table.item(1, COLUMNS.index("Passed"))
    assert passed is not None and passed.toolTip().startswith("Served only (2 calls)")
    cost = view.table.item(1, COLUMNS.index("Cost/call"))
    assert cost is not None and cost.toolTip().startswith("Over 2 served calls")
    assert rows[1][COLUMNS.index("Cost/call")] == "$0.0000800"

    view.table.clearSelection()
    pick_row(view.table, 1)
    lines = view.diff.toPlainText().splitlines()
    assert f"-template: {OLD}" in lines and f"+template: {NEW}" in lines
    assert view.restore_selected() is True
    qtbot.waitUntil(lambda: not view.reading, timeout=5_000)
    assert [_text(view.table.item(r, 0)) for r in range(2)] == ["", "*"]
    served_file = tmp_path / "served.agent.yaml"
    served_file.write_bytes(served_bytes)
    assert document.agent.to_data() == load_agent(served_file).to_data()
    document.undo_stack.undo()
    tool = document.agent.metadata.tool("book_flight")
    assert tool is not None and tool.prompt == NEW
    window.close()


async def _serve_twice(path: Path, location: Path) -> None:
    """Two calls of the tool served by a real ``AgentServer`` recording to ``location``."""
    async with (
        AgentServer(load_served_agents([path]), history=str(location)) as served,
        Client(served.server) as client,
    ):
        for destination in ("Oslo", "Rome"):
            result = await client.call_tool("book_flight", {"destination": destination})
            assert not result.is_error, result.content
