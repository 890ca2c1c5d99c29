"""Naming what was just added: a new parameter's name, then a new tool's, typed in place."""

from __future__ import annotations

from pathlib import Path

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QApplication, QLineEdit, QToolButton
from pytestqt.qtbot import QtBot

from app.document.agent_document import AgentDocument
from app.document.schema_health import tool_schema_health
from app.document.tool_ref import ToolRef
from app.pages.tools_list import ToolsListWidget
from app.tool_editor.parameter_builder import ParameterBuilder
from tests.app._tool_widgets import one_tool_model, show_active
from tests.app._windows import studio_window

CITY = ("properties", "city")


def _typing_field() -> QLineEdit:
    widget = QApplication.focusWidget()
    assert isinstance(widget, QLineEdit)
    return widget


def _builder(qtbot: QtBot) -> ParameterBuilder:
    _model, document = one_tool_model({"type": "object", "properties": {"a": {"type": "string"}}})
    builder = ParameterBuilder(ToolRef(document, 0))
    show_active(qtbot, builder, 900, 500)
    builder.tree.setFocus()
    qtbot.waitUntil(builder.tree.hasFocus, timeout=5_000)
    return builder


@pytest.mark.parametrize("how", ["Ctrl+T", "Add button"])
def test_a_new_parameter_takes_the_name_typed_right_after_adding_it(qtbot: QtBot, how: str) -> None:
    builder = _builder(qtbot)

    if how == "Ctrl+T":
        qtbot.keyClick(builder.tree, Qt.Key.Key_T, Qt.KeyboardModifier.ControlModifier)
    else:
        button = builder.toolbar.widgetForAction(builder.add_action)
        assert isinstance(button, QToolButton)
        qtbot.mouseClick(button, Qt.MouseButton.LeftButton)
    field = _typing_field()
    assert field.selectedText() == field.text() == "new_property"
    # A person takes a moment to start typing: the tree's problem marks arrive meanwhile.
    qtbot.waitUntil(lambda: builder.model.known_schema_problems() is not None, timeout=5_000)
    assert field.selectedText() == "new_property"
    qtbot.keyClicks(field, "city")
    assert field.text() == "city"
    qtbot.keyClick(field, Qt.Key.Key_Return)

    qtbot.waitUntil(lambda: CITY in builder.model.paths(), timeout=5_000)
    assert builder.model.paths() == [("properties", "a"), CITY]
    assert builder.selected_path() == CITY
    assert builder.document.undo_stack.undoText() == "Rename parameter new_property to city"


def _tools_page(qtbot: QtBot, path: Path) -> ToolsListWidget:
    page = ToolsListWidget(AgentDocument.load(path))
    show_active(qtbot, page, 800, 500)
    page.view.setFocus()
    qtbot.waitUntil(page.view.hasFocus, timeout=5_000)
    return page


def _tool_names(page: ToolsListWidget) -> list[str]:
    return [tool.name for tool in page.document.agent.tools]


def _add_tool(qtbot: QtBot, page: ToolsListWidget) -> QLineEdit:
    """Ctrl+Shift+N, then a person's pause: the tools' schema marks are checked meanwhile."""
    with qtbot.waitSignal(tool_schema_health(page.document).pass_finished, timeout=5_000):
        qtbot.keyClick(
            page.view,
            Qt.Key.Key_N,
            Qt.KeyboardModifier.ControlModifier | Qt.KeyboardModifier.ShiftModifier,
        )
    return _typing_field()


def test_a_new_tool_is_named_in_place_and_enter_opens_it(qtbot: QtBot, example_path: Path) -> None:
    page = _tools_page(qtbot, example_path)
    before = _tool_names(page)

    field = _add_tool(qtbot, page)
    assert field.selectedText() == field.text() == "new_tool"
    assert page.name_hint.isVisible() and "Enter" in page.name_hint.text()
    qtbot.keyClicks(field, "city_weather")
    assert field.text() == "city_weather"
    with qtbot.waitSignal(page.open_tool, timeout=5_000) as opened:
        qtbot.keyClick(field, Qt.Key.Key_Return)

    assert _tool_names(page) == [*before, "city_weather"]
    assert opened.args == [page.document.agent.tools[-1]]
    assert page.selected_row() == len(before)
    assert not page.name_hint.isVisible()


def test_a_new_tools_name_must_suit_mcp_and_be_free_and_escape_takes_the_tool_back(
    qtbot: QtBot, example_path: Path
) -> None:
    page = _tools_page(qtbot, example_path)
    before = _tool_names(page)
    opened: list[object] = []
    page.open_tool.connect(opened.append)

    field = _add_tool(qtbot, page)
    qtbot.keyClicks(field, before[1])
    qtbot.keyClick(field, Qt.Key.Key_Return)
    qtbot.wait(50)  # the delegate would commit on its next event turn
    assert field.isVisible() and QApplication.focusWidget() is field
    assert page.name_hint.text() == f"two tools are named {before[1]!r}: tool names must be unique"
    field.selectAll()
    qtbot.keyClicks(field, "city weather")
    qtbot.keyClick(field, Qt.Key.Key_Return)
    qtbot.wait(50)
    assert field.isVisible()
    assert "is not valid for MCP" in page.name_hint.text()
    assert _tool_names(page) == [*before, "new_tool"]

    qtbot.keyClick(field, Qt.Key.Key_Escape)

    qtbot.waitUntil(lambda: _tool_names(page) == before, timeout=5_000)
    assert opened == []
    assert not page.name_hint.isVisible()
    assert page.document.undo_stack.index() == 0


def test_add_tool_in_the_studio_opens_the_named_tools_editor(
    qtbot: QtBot, example_path: Path
) -> None:
    window = studio_window(qtbot)
    document = window.open_file(example_path)
    assert document is not None
    page = window.show_page(document, "tools")
    assert isinstance(page, ToolsListWidget)
    window.activateWindow()
    qtbot.waitUntil(window.isActiveWindow, timeout=5_000)
    button = next(b for b in page.findChildren(QToolButton) if b.defaultAction() is page.add_action)

    qtbot.mouseClick(button, Qt.MouseButton.LeftButton)
    field = _typing_field()
    assert field.selectedText() == "new_tool"
    qtbot.keyClicks(field, "city_weather")
    qtbot.keyClick(field, Qt.Key.Key_Return)

    qtbot.waitUntil(lambda: window.tabs.currentWidget() in window.tool_tabs(), timeout=10_000)
    tab = window.tabs.currentWidget()
    assert getattr(tab, "tool", None) is document.agent.tools[-1]
    assert document.agent.tools[-1].name == "city_weather"
    assert window.tabs.tabText(window.tabs.currentIndex()) == "city_weather"
