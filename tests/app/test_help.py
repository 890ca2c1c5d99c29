"""The Help menu: keyboard shortcuts, Getting started on the first run, About with versions."""

from __future__ import annotations

import platform
from collections import Counter
from importlib import metadata
from pathlib import Path

from PySide6.QtCore import QEvent, QObject, Qt, qVersion
from PySide6.QtGui import QUndoCommand, QUndoStack
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QApplication, QMessageBox, QWidget
from pytestqt.qtbot import QtBot

from app.settings_store import SettingsStore
from app.window.help_pages import GettingStartedDialog
from app.window.main_window import MainWindow
from app.window.shortcuts import WINDOW, ShortcutsDialog, shared_keys, studio_shortcuts
from tests.app._windows import studio_window
from tests.app.test_view_menu import activate, menu_item

WAIT = 5000  # ms: a bound, not a sleep


def help_menu_item(window: MainWindow, text: str) -> None:
    menu = next(a.menu() for a in window.menuBar().actions() if a.text() == "&Help")
    assert menu is not None
    menu_item(menu, text).trigger()  # type: ignore[arg-type]


def test_the_shortcuts_list_every_menu_key_and_the_panes_keys(qtbot: QtBot) -> None:
    window = studio_window(qtbot)

    shortcuts = studio_shortcuts(window)

    found = {(s.keys, s.action, s.group) for s in shortcuts}
    assert ("Ctrl+S", "Save", "File") in found
    assert ("Ctrl+Return", "Test tool…", "Agent") in found
    assert ("Ctrl+F", "Find…", "Edit") in found
    assert ("Ctrl+Shift+H", "History", "Agent") in found
    assert ("Ctrl+H", "Replace…", "Edit") in found
    # The platform's Close closes the tab; the agent has its own key.
    assert ("Ctrl+W", "Close tab", "File") in found
    assert ("Ctrl+F4", "Close tab", "File") in found
    assert ("Ctrl+Shift+W", "Close agent", "File") in found
    assert ("Ctrl+=", "Zoom in", "View") in found
    assert ("Ctrl+T", "Add", "Parameter tree") in found
    assert ("Ctrl+Shift+N", "Add tool", "Tools page") in found
    assert ("F3", "Next match", "Find bar") in found
    # Undo and Redo are listed by their names, not by the step they would undo now.
    stack = QUndoStack(window)
    window.undo_group.addStack(stack)
    window.undo_group.setActiveStack(stack)
    stack.push(QUndoCommand("Edit prompt of plan_trip"))
    stack.push(QUndoCommand("Edit name"))
    stack.undo()
    assert window.undo_action.text() == "&Undo Edit prompt of plan_trip"
    named = {(s.keys, s.action) for s in studio_shortcuts(window)}
    assert ("Ctrl+Z", "Undo") in named and ("Ctrl+Y", "Redo") in named
    # In one place a key does one thing; the window's menus never share a key.
    places = Counter((s.keys, s.scope) for s in shortcuts)
    assert [pair for pair, count in places.items() if count > 1] == []
    # Ctrl+H means Replace… only (Qt's standard Replace on Linux and Windows); a key that means
    # two things says where each holds: Ctrl+Return is Test tool… in the window and Run in the
    # Test dialog.
    shared = shared_keys(shortcuts)
    assert "Ctrl+H" not in shared and "Ctrl+W" not in shared
    ctrl_return = {(s.action, s.scope) for s in shared["Ctrl+Return"]}
    assert ("Test tool…", WINDOW) in ctrl_return
    assert ("Run the test with these arguments", "Test dialog") in ctrl_return


def test_the_shortcuts_dialog_opens_from_help_and_searches(qtbot: QtBot) -> None:
    window = studio_window(qtbot)
    activate(qtbot, window)

    QTest.keyClick(window, Qt.Key.Key_Slash, Qt.KeyboardModifier.ControlModifier)

    qtbot.waitUntil(lambda: window.findChild(ShortcutsDialog) is not None, timeout=WAIT)
    dialog = window.findChild(ShortcutsDialog)
    assert isinstance(dialog, ShortcutsDialog)
    qtbot.waitExposed(dialog)
    assert ("Save", "Ctrl+S") in dialog.shown_rows()
    assert (
        "Ctrl+Return: Test tool… (the window); Run the test with these arguments (Test dialog)"
        in dialog.note.text()
    )
    QTest.keyClicks(dialog.search_edit, "save")
    assert {action for action, _keys in dialog.shown_rows()} == {"Save", "Save As…"}
    dialog.search_edit.clear()
    QTest.keyClicks(dialog.search_edit, "ctrl+return")
    assert dialog.shown_rows() == [
        ("Test tool…", "Ctrl+Return"),
        ("Run the test with these arguments", "Ctrl+Return"),
    ]
    dialog.reject()


class _Paints(QObject):
    def __init__(self, widget: QWidget) -> None:
        super().__init__(widget)
        self.count = 0
        widget.installEventFilter(self)

    def eventFilter(self, _watched: QObject, event: QEvent) -> bool:
        self.count += event.type() == QEvent.Type.Paint
        return False


def painted_and_settled(qtbot: QtBot, window: QWidget) -> None:
    """Wait until ``window`` paints, then let the timers that follow a paint run."""
    paints = _Paints(window)
    window.update()
    qtbot.waitUntil(lambda: paints.count > 0, timeout=WAIT)
    for _ in range(3):
        QApplication.processEvents()


def shown_getting_started(window: MainWindow) -> list[GettingStartedDialog]:
    return [d for d in window.findChildren(GettingStartedDialog) if d.isVisible()]


def test_getting_started_shows_on_the_first_run_only(qtbot: QtBot) -> None:
    window = studio_window(qtbot)

    window.show_getting_started_on_first_run()  # as the studio's start does

    assert not shown_getting_started(window)  # not before the window has painted
    qtbot.waitUntil(lambda: bool(shown_getting_started(window)), timeout=WAIT)
    page = shown_getting_started(window)[0].browser.toPlainText()
    assert "A Tools agent is an MCP server" in page
    for step in ("Create an agent", "Choose its model", "Add MCP servers", "Add a tool"):
        assert step in page
    assert "File ▸ New agent (Ctrl+N)" in page
    assert "Agent ▸ Test tool… (Ctrl+Return)" in page
    assert "Agent ▸ Export to an MCP client… (Ctrl+E)" in page
    assert SettingsStore().getting_started_shown()
    assert window.close()

    again = studio_window(qtbot)
    again.show_getting_started_on_first_run()
    painted_and_settled(qtbot, again)
    assert not shown_getting_started(again)
    help_menu_item(again, "Getting started")  # still there under Help
    assert shown_getting_started(again)


def test_getting_started_waits_for_the_files_being_read(qtbot: QtBot, example_path: Path) -> None:
    window = studio_window(qtbot)
    big = example_path.with_name("big.agent.yaml")
    text = example_path.read_text(encoding="utf-8")
    big.write_text(text + ("# " + "x" * 98 + "\n") * 3000, encoding="utf-8")  # read on the worker

    window.open_file_soon(big)
    assert window.file_loader.is_loading()
    window.show_getting_started_on_first_run()

    qtbot.waitUntil(lambda: bool(shown_getting_started(window)), timeout=20_000)
    assert window.documents(), "Getting started came before the agent being read"


def test_about_lists_the_versions_in_use(qtbot: QtBot) -> None:
    window = studio_window(qtbot)

    help_menu_item(window, "About Meta Agent Studio")

    box = next(
        w for w in QApplication.topLevelWidgets() if isinstance(w, QMessageBox) and w.isVisible()
    )
    text = box.informativeText()
    for name, version in (
        ("Meta Agent Studio", metadata.version("meta-agent-studio")),
        ("Python", platform.python_version()),
        ("Qt", qVersion()),
        ("MCP Python SDK", metadata.version("mcp")),
    ):
        assert f"<td>{name}</td><td>&nbsp;{version}</td>" in text
    assert "PySide6" in text
    box.reject()
