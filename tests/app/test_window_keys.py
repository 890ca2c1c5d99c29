"""The window's keys follow the platform: Ctrl+W closes the tab in view, not the agent."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import Qt
from PySide6.QtTest import QTest
from pytestqt.qtbot import QtBot

from tests.app._windows import studio_window
from tests.app.test_view_menu import activate

WAIT = 5000  # ms: a bound, not a sleep


def test_ctrl_w_closes_the_tab_and_ctrl_shift_w_the_agent(qtbot: QtBot, example_path: Path) -> None:
    window = studio_window(qtbot)
    document = window.open_file(example_path)
    assert document is not None
    tab = window.open_tool_tab(document, document.agent.tools[0])
    activate(qtbot, window)
    assert window.tabs.currentWidget() is tab

    QTest.keyClick(window, Qt.Key.Key_W, Qt.KeyboardModifier.ControlModifier)

    qtbot.waitUntil(lambda: window.tool_tabs() == [], timeout=WAIT)
    assert window.documents() == [document]  # the agent is still open

    QTest.keyClick(
        window,
        Qt.Key.Key_W,
        Qt.KeyboardModifier.ControlModifier | Qt.KeyboardModifier.ShiftModifier,
    )
    qtbot.waitUntil(lambda: window.documents() == [], timeout=WAIT)


def test_ctrl_shift_h_opens_the_history_and_ctrl_h_does_not(
    qtbot: QtBot, example_path: Path
) -> None:
    window = studio_window(qtbot)
    document = window.open_file(example_path)
    assert document is not None
    activate(qtbot, window)
    window.outline.setFocus()

    def history_open() -> bool:
        titles = [window.tabs.tabText(i) for i in range(window.tabs.count())]
        return any(title.startswith("History ·") for title in titles)

    QTest.keyClick(window, Qt.Key.Key_H, Qt.KeyboardModifier.ControlModifier)
    QTest.qWait(50)
    assert not history_open()  # Ctrl+H is Replace…, which only a template or JSON editor answers
    QTest.keyClick(
        window,
        Qt.Key.Key_H,
        Qt.KeyboardModifier.ControlModifier | Qt.KeyboardModifier.ShiftModifier,
    )
    qtbot.waitUntil(history_open, timeout=WAIT)
