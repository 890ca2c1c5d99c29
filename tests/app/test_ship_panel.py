"""The *Ready to ship* panel, driven like a person in the real window offscreen: opened with its
shortcut beside Export, read as it is drawn (marks per client, the verdict line, each finding's
source), a finding clicked to reach its tool, the name retyped there, and the panel green again;
the lint runs in the panel's real worker thread."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QApplication,
    QLineEdit,
    QListWidgetItem,
    QMenu,
    QTabBar,
    QTreeWidgetItem,
)
from pytestqt.qtbot import QtBot

from app.document.agent_document import AgentDocument
from app.ship_panel import CLIENT_HEADINGS, ShipPanel
from app.tool_editor.editor import ToolEditor
from app.window.main_window import MainWindow
from mcp_export.lint import LINT_CLIENTS
from tests.app._windows import studio_window
from tests.app.test_view_menu import activate
from tests.fakes.mcp_clients import book_tool, write_agent

WAIT_MS = 20_000
LONG_NAME = "book_a_flight_for_one_traveller_on_the_cheapest_fare_today"  # 58 characters


def column(client: str) -> int:
    return 1 + [str(c) for c in LINT_CLIENTS].index(client)


def open_panel(qtbot: QtBot, path: Path) -> tuple[MainWindow, ShipPanel]:
    window = studio_window(qtbot)
    document = window.add_document(AgentDocument.load(path))
    activate(qtbot, window)
    window.outline.setFocus()
    shift_ctrl = Qt.KeyboardModifier.ControlModifier | Qt.KeyboardModifier.ShiftModifier
    qtbot.keyClick(window, Qt.Key.Key_E, shift_ctrl)
    panel = window.tabs.currentWidget()
    assert isinstance(panel, ShipPanel) and panel.document is document
    qtbot.waitUntil(lambda: panel.result is not None and panel.is_current(), timeout=WAIT_MS)
    return window, panel


def click(qtbot: QtBot, panel: ShipPanel, item: QListWidgetItem) -> None:
    view = panel.findings
    view.scrollToItem(item)
    rect = view.visualItemRect(item)
    qtbot.mouseClick(view.viewport(), Qt.MouseButton.LeftButton, pos=rect.center())


def click_mark(qtbot: QtBot, panel: ShipPanel, row: QTreeWidgetItem, client: str) -> None:
    view = panel.table
    rect = view.visualRect(view.indexFromItem(row, column(client)))
    qtbot.mouseClick(view.viewport(), Qt.MouseButton.LeftButton, pos=rect.center())


def test_a_name_over_a_clients_limit_is_refused_with_its_source_and_a_fix_turns_green(
    qtbot: QtBot, tmp_path: Path
) -> None:
    path = write_agent(tmp_path / "desk.agent.yaml", tools=[book_tool(), book_tool(LONG_NAME)])
    window, panel = open_panel(qtbot, path)

    assert panel.summary_text().startswith("✘ 2 refused, ! 1 changed or dropped across 2 tools")
    fine = panel.tool_item("book_flight")
    long = panel.tool_item(LONG_NAME)
    assert fine is not None and long is not None
    assert [fine.text(column(c)) for c in LINT_CLIENTS] == ["✔"] * 6
    marks = {c: long.text(column(c)) for c in LINT_CLIENTS}
    assert marks == {
        "claude-desktop": "✔",
        "claude-code": "✘",
        "vscode": "!",
        "cursor": "✘",
        "openai": "✔",
        "gemini": "✔",
    }
    cursor_tip = long.toolTip(column("cursor"))
    assert "69 characters" in cursor_tip and "Source: Cursor's MCP settings warning" in cursor_tip
    assert len(panel.finding_items()) == 3  # every finding listed while nothing is picked

    # Clicking Cursor's mark lists Cursor's finding on that tool alone.
    click_mark(qtbot, panel, long, "cursor")
    assert panel.findings_title.text() == f"<b>Findings — {LONG_NAME}, Cursor</b> (1)"
    rows = [item.text() for item in panel.finding_items()]
    assert len(rows) == 1
    assert rows[0].startswith(f"✘ Cursor refuses {LONG_NAME}: server name 'travel-desk'")

    # Clicking the finding shows its source as a link and opens the tool at its name.
    cursor_row = panel.finding_items()[0]
    assert cursor_row.toolTip().startswith("Source: Cursor's MCP settings warning")
    click(qtbot, panel, cursor_row)
    assert "<a href='https://github.com/awslabs/mcp/issues/1283'>" in panel.source.text()
    assert "<a href='https://github.com/ComposioHQ/composio/issues/2788'>" in panel.source.text()
    editor = window.tabs.currentWidget()
    assert isinstance(editor, ToolEditor) and editor.tool.name == LONG_NAME
    name_edit = QApplication.focusWidget()
    assert isinstance(name_edit, QLineEdit) and name_edit.objectName() == "toolName"
    assert name_edit.selectedText() == LONG_NAME

    # The author types a shorter name over the selection, goes back: every client takes it.
    qtbot.keyClicks(name_edit, "book_cheapest")
    qtbot.keyClick(name_edit, Qt.Key.Key_Return)
    assert panel.document.agent.tools[1].name == "book_cheapest"
    bar: QTabBar = window.tabs.tabBar()
    index = window.tabs.indexOf(panel)
    qtbot.mouseClick(bar, Qt.MouseButton.LeftButton, pos=bar.tabRect(index).center())
    qtbot.waitUntil(lambda: panel.summary_text().startswith("✔ Ready"), timeout=WAIT_MS)
    assert panel.summary_text() == (
        "✔ Ready for every client: each takes all 2 tools as written (served as “travel-desk”)."
    )
    fixed = panel.tool_item("book_cheapest")
    assert fixed is not None and [fixed.text(column(c)) for c in LINT_CLIENTS] == ["✔"] * 6
    assert panel.finding_items() == []

    # Undo (Ctrl+Z) with the panel in front: it checks again by itself and refuses again.
    panel.table.setFocus()
    qtbot.keyClick(panel.table, Qt.Key.Key_Z, Qt.KeyboardModifier.ControlModifier)
    qtbot.waitUntil(lambda: panel.summary_text().startswith("✘ 2 refused"), timeout=WAIT_MS)
    again = panel.tool_item(LONG_NAME)
    assert again is not None and again.text(column("cursor")) == "✘"


def test_a_keyword_gemini_drops_shows_a_warning_for_gemini_alone(
    qtbot: QtBot, tmp_path: Path
) -> None:
    tool = book_tool()
    tool["parameters"]["properties"]["when"] = {
        "oneOf": [{"type": "string", "format": "date"}, {"type": "integer"}],
        "description": "The day to fly.",
    }
    path = write_agent(tmp_path / "desk.agent.yaml", tools=[tool])
    window, panel = open_panel(qtbot, path)

    row = panel.tool_item("book_flight")
    assert row is not None
    assert {c: row.text(column(c)) for c in LINT_CLIENTS if row.text(column(c)) != "✔"} == {
        "gemini": "!"
    }
    assert panel.summary_text().startswith("! 2 changed or dropped across 1 tool")
    found = [item.text() for item in panel.finding_items()]
    assert found[0].startswith(
        "! Gemini changes book_flight: oneOf at properties.when: not in Gemini's"
    )
    assert "googleapis/googleapis" in row.toolTip(column("gemini"))
    assert panel.table.headerItem().text(column("gemini")) == CLIENT_HEADINGS["gemini"]

    # Clicking it opens the tool on its Definition section, the parameters focused.
    click(qtbot, panel, panel.finding_items()[0])
    editor = window.tabs.currentWidget()
    assert isinstance(editor, ToolEditor) and editor.tool.name == "book_flight"
    assert editor.sections.currentIndex() == 0


def test_the_panel_sits_beside_export_in_the_agent_menu(qtbot: QtBot, tmp_path: Path) -> None:
    path = write_agent(tmp_path / "desk.agent.yaml", tools=[book_tool()])
    window, panel = open_panel(qtbot, path)
    agent_menu = next(a.menu() for a in window.menuBar().actions() if a.text() == "&Agent")
    assert isinstance(agent_menu, QMenu)
    texts = [a.text() for a in agent_menu.actions()]
    assert texts[texts.index("&Export to an MCP client…") + 1] == "Ready to &ship…"
    assert panel.summary_text().startswith("✔ Ready for every client")
    # Asked again, the same tab comes forward.
    window.ship_action.trigger()
    assert window.tabs.currentWidget() is panel
