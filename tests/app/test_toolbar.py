"""The main window's toolbar: the frequent actions as buttons a mouse reaches, readable at 1024."""

from __future__ import annotations

from pathlib import Path
from typing import TypeVar

from PySide6.QtCore import Qt
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QApplication, QLineEdit, QToolButton, QWidget
from pytestqt.qtbot import QtBot

from app.export_dialog import ExportDialog
from app.pages.tools_list import ToolsListWidget
from app.test_run import TestToolDialog
from app.window.main_window import MainWindow
from tests.app._windows import studio_window
from tests.app.test_view_menu import focus_in

W = TypeVar("W", bound=QWidget)
WAIT = 5000  # ms: a bound, not a sleep
LABELS = ["New", "Open", "Save", "Add tool", "Test", "Export", "Ready to ship"]


def button(window: MainWindow, label: str) -> QToolButton:
    action = next(a for a in window.toolbar.actions() if a.iconText() == label)
    widget = window.toolbar.widgetForAction(action)
    assert isinstance(widget, QToolButton)
    return widget


def click(qtbot: QtBot, window: MainWindow, label: str) -> None:
    widget = button(window, label)
    qtbot.waitUntil(widget.isEnabled, timeout=WAIT)
    QTest.mouseClick(widget, Qt.MouseButton.LeftButton)


def visible_dialog(kind: type[W]) -> W:
    return next(w for w in QApplication.topLevelWidgets() if isinstance(w, kind) and w.isVisible())


def test_the_toolbar_holds_the_frequent_actions_with_icons_and_short_labels(qtbot: QtBot) -> None:
    window = studio_window(qtbot)

    actions = [a for a in window.toolbar.actions() if not a.isSeparator()]

    assert [a.iconText() for a in actions] == LABELS
    assert actions == [
        window.new_blank_action,
        window.open_action,
        window.save_action,
        window.add_tool_action,
        window.test_action,
        window.export_action,
        window.ship_action,
    ]
    assert all(not a.icon().isNull() for a in actions)
    assert window.toolbar.toolButtonStyle() == Qt.ToolButtonStyle.ToolButtonTextBesideIcon
    assert "Ctrl+S" in window.save_action.toolTip()
    # Nothing to save, test or add a tool to before an agent is open.
    assert [a.isEnabled() for a in actions] == [True, True, False, False, False, False, False]


def test_every_button_shows_its_whole_label_at_1024_wide(qtbot: QtBot) -> None:
    window = studio_window(qtbot)
    window.resize(1024, 700)
    qtbot.waitUntil(lambda: window.width() == 1024, timeout=WAIT)

    for label in LABELS:
        widget = button(window, label)
        assert widget.isVisible(), f"{label} went into the toolbar's overflow"
        assert widget.text() == label
        assert widget.width() >= widget.sizeHint().width()


def test_toolbar_buttons_create_add_a_tool_and_save(qtbot: QtBot, tmp_path: Path) -> None:
    window = studio_window(qtbot)
    target = tmp_path / "clicked.agent.yaml"
    window.ask_save_path = lambda _document: target  # type: ignore[assignment,method-assign]

    click(qtbot, window, "New")
    document = window.current_document()
    assert document is not None and not document.agent.tools

    click(qtbot, window, "Add tool")
    page = window.page(document, "tools")
    assert isinstance(page, ToolsListWidget) and window.page_stack.currentWidget() is page
    qtbot.waitUntil(lambda: focus_in(page.view), timeout=WAIT)
    name_editor = QApplication.focusWidget()
    assert isinstance(name_editor, QLineEdit) and name_editor.selectedText() == "new_tool"
    QTest.keyClicks(name_editor, "lookup_order")
    QTest.keyClick(name_editor, Qt.Key.Key_Return)  # the delegate commits on its next turn
    qtbot.waitUntil(
        lambda: [t.name for t in document.agent.tools] == ["lookup_order"], timeout=WAIT
    )

    click(qtbot, window, "Save")
    assert target.exists() and "lookup_order" in target.read_text(encoding="utf-8")


def test_toolbar_buttons_test_a_tool_and_export(qtbot: QtBot, example_path: Path) -> None:
    window = studio_window(qtbot)
    assert window.open_file(example_path) is not None

    click(qtbot, window, "Test")
    dialog = visible_dialog(TestToolDialog)
    dialog.reject()

    click(qtbot, window, "Export")
    export = visible_dialog(ExportDialog)
    assert str(example_path.resolve()) in export.snippet_text()
    export.reject()


def test_view_menu_hides_the_toolbar_and_the_next_window_keeps_it_hidden(qtbot: QtBot) -> None:
    window = studio_window(qtbot)
    assert window.toolbar.isVisible() and window.view.show_toolbar_action.isChecked()

    window.view.show_toolbar_action.trigger()

    assert not window.toolbar.isVisible()
    assert window.close()
    again = studio_window(qtbot)
    assert not again.toolbar.isVisible() and not again.view.show_toolbar_action.isChecked()
    again.view.show_toolbar_action.trigger()
    assert again.toolbar.isVisible()
