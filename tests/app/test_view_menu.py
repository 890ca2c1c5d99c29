"""The View menu: the theme applied at once and kept, zoom, the toolbar and the outline."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from PySide6.QtCore import QPoint, Qt
from PySide6.QtGui import QAction, QKeySequence, QPalette
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QApplication, QMenu, QSplitterHandle, QWidget
from pytestqt.qtbot import QtBot

from app.settings_store import SettingsStore
from app.studio import create_main_window
from app.tool_editor.editor import ToolEditor
from app.window.main_window import MainWindow
from app.window.theme import apply_theme
from tests.app._windows import studio_window

WAIT = 5000  # ms: a bound, not a sleep


@pytest.fixture(autouse=True)
def _system_theme_after() -> Iterator[None]:
    """Each test leaves the application in the system theme, as it found it."""
    yield
    apply_theme("system")


def menu_item(menu: QMenu, *path: str) -> QAction:
    """The action at ``path`` (item texts without their mnemonics) under ``menu``."""
    *submenus, last = path
    for title in submenus:
        found = next(a.menu() for a in menu.actions() if a.text().replace("&", "") == title)
        assert isinstance(found, QMenu)
        menu = found
    return next(a for a in menu.actions() if a.text().replace("&", "") == last)


def is_dark(palette: QPalette) -> bool:
    return palette.color(QPalette.ColorRole.Base).lightness() < 128


def activate(qtbot: QtBot, window: QWidget) -> None:
    """Make ``window`` the active window, so its shortcuts answer keys."""
    window.activateWindow()
    qtbot.waitUntil(lambda: QApplication.activeWindow() is window, timeout=WAIT)


def focus_in(widget: QWidget) -> bool:
    """Whether the focus is in ``widget`` (not in a widget another test left behind)."""
    focus = QApplication.focusWidget()
    return focus is not None and widget.isAncestorOf(focus)


def active_window(qtbot: QtBot) -> MainWindow:
    window = studio_window(qtbot)
    activate(qtbot, window)
    return window


def open_tool(window: MainWindow, path: Path) -> ToolEditor:
    document = window.open_file(path)
    assert document is not None
    editor = window.open_tool_tab(document, document.agent.tools[0])
    assert isinstance(editor, ToolEditor)
    return editor


def test_the_dark_theme_applies_at_once_and_the_next_start_keeps_it(
    qtbot: QtBot, example_path: Path
) -> None:
    window = studio_window(qtbot)
    editor = open_tool(window, example_path)
    light_text = editor.template.editor.palette().color(QPalette.ColorRole.Text)

    menu_item(window.view_menu, "Theme", "Dark").trigger()

    assert is_dark(QApplication.palette())
    qtbot.waitUntil(lambda: is_dark(editor.template.editor.palette()), timeout=WAIT)
    assert editor.template.editor.palette().color(QPalette.ColorRole.Text) != light_text
    assert SettingsStore().theme() == "dark"
    assert window.close()

    apply_theme("system")  # as a new process starts
    again = create_main_window()
    qtbot.addWidget(again)
    assert is_dark(QApplication.palette())
    assert again.view.theme_actions["dark"].isChecked()
    assert not again.view.theme_actions["system"].isChecked()


def test_back_to_the_system_theme(qtbot: QtBot) -> None:
    window = studio_window(qtbot)
    menu_item(window.view_menu, "Theme", "Dark").trigger()
    assert is_dark(QApplication.palette())

    menu_item(window.view_menu, "Theme", "System").trigger()

    assert not is_dark(QApplication.palette())  # the offscreen platform's own: light
    assert SettingsStore().theme() == "system"
    assert window.view.theme_actions["system"].isChecked()


def test_the_light_theme_is_light(qtbot: QtBot) -> None:
    window = studio_window(qtbot)
    menu_item(window.view_menu, "Theme", "Dark").trigger()

    menu_item(window.view_menu, "Theme", "Light").trigger()

    assert not is_dark(QApplication.palette())
    assert SettingsStore().theme() == "light"


def test_the_view_menu_zooms_editors_by_its_keys(qtbot: QtBot, example_path: Path) -> None:
    window = active_window(qtbot)
    editor = open_tool(window, example_path).template.editor
    zoom_in = menu_item(window.view_menu, "Zoom in")
    assert zoom_in.shortcuts()[0].toString() == "Ctrl+="
    assert menu_item(window.view_menu, "Zoom out").shortcut().toString() == "Ctrl+-"
    reset = menu_item(window.view_menu, "Actual size")
    assert reset.shortcut().toString() == "Ctrl+0"
    editor.setFocus()
    qtbot.waitUntil(editor.hasFocus, timeout=WAIT)
    before = editor.font().pointSizeF()
    try:
        qtbot.keySequence(editor, QKeySequence("Ctrl+="))
        assert editor.font().pointSizeF() > before
        assert reset.isEnabled()
    finally:
        reset.trigger()
    assert editor.font().pointSizeF() == before


def test_show_outline_hides_and_brings_back_the_outline(qtbot: QtBot, example_path: Path) -> None:
    window = studio_window(qtbot)
    window.open_file(example_path)
    show_outline = menu_item(window.view_menu, "Show outline")
    assert show_outline.isChecked() and window.outline.isVisible()
    width = window.outline.width()
    tabs = window.tabs.width()

    show_outline.trigger()

    assert not window.outline.isVisible()
    qtbot.waitUntil(lambda: window.tabs.width() > tabs, timeout=WAIT)
    show_outline.trigger()
    assert window.outline.isVisible()
    qtbot.waitUntil(lambda: window.outline.width() == width, timeout=WAIT)
    assert window.view.outline_shown()


def drag(widget: QSplitterHandle, by: int) -> None:
    """Drag a splitter handle sideways with the mouse, in one move."""
    start = widget.rect().center()
    QTest.mousePress(widget, Qt.MouseButton.LeftButton, Qt.KeyboardModifier.NoModifier, start)
    QTest.mouseMove(widget, start + QPoint(by, 0))
    QTest.mouseRelease(
        widget, Qt.MouseButton.LeftButton, Qt.KeyboardModifier.NoModifier, start + QPoint(by, 0)
    )


def test_dragging_the_outline_away_collapses_it_and_the_menu_brings_it_back(
    qtbot: QtBot, example_path: Path
) -> None:
    window = studio_window(qtbot)
    window.open_file(example_path)
    show_outline = menu_item(window.view_menu, "Show outline")
    drag(window.splitter.handle(1), -40)
    width = window.outline.width()
    assert width == 280 - 40 and show_outline.isChecked()

    drag(window.splitter.handle(1), -width - 50)

    assert window.splitter.sizes()[0] == 0
    assert not show_outline.isChecked()
    assert not window.view.outline_shown()
    show_outline.trigger()
    assert window.splitter.sizes()[0] == width
    assert window.view.outline_shown()


def test_a_hidden_outline_stays_hidden_in_the_next_window(qtbot: QtBot, example_path: Path) -> None:
    window = studio_window(qtbot)
    window.open_file(example_path)
    menu_item(window.view_menu, "Show outline").trigger()
    assert window.close()

    again = studio_window(qtbot)
    again.open_file(example_path)

    assert not again.outline.isVisible()
    assert not menu_item(again.view_menu, "Show outline").isChecked()
    menu_item(again.view_menu, "Show outline").trigger()
    assert again.outline.isVisible() and again.outline.width() > 100
