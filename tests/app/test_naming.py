"""Naming what was just added: a new parameter's name, then a new tool's, typed in place."""

from __future__ import annotations

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QApplication, QLineEdit, QToolButton
from pytestqt.qtbot import QtBot

from app.document.tool_ref import ToolRef
from app.tool_editor.parameter_builder import ParameterBuilder
from tests.app._tool_widgets import one_tool_model, show_active

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
