"""The JSON view of the parameters with real widgets: both ways, errors located, keywords kept."""

from __future__ import annotations

import json
from typing import Any

from PySide6.QtCore import Qt
from PySide6.QtGui import QGuiApplication
from PySide6.QtWidgets import QLineEdit, QListWidget, QWidget
from pytestqt.qtbot import QtBot

from app.document.agent_document import AgentDocument
from app.tool_editor.parameter_model import ParameterTreeModel
from app.tool_editor.property_panel import PropertyPanel
from app.tool_editor.schema_json_view import SchemaJsonView, check_parameters_text, dump_parameters
from tests.app._tool_widgets import one_tool_model, show_active

CITY = ("properties", "city")
WAIT = 2000  # ms: the apply timer is 300 ms; a bound, not a sleep


def listed(widget: QListWidget) -> list[str]:
    """The rows of a list widget, as shown."""
    return [widget.item(row).text() for row in range(widget.count())]


def _params() -> dict[str, Any]:
    return {
        "type": "object",
        "properties": {
            "city": {"type": "string", "description": "Where."},
            "when": {"anyOf": [{"type": "string", "format": "date"}, {"$ref": "#/$defs/span"}]},
        },
        "required": ["city"],
        "$defs": {"span": {"type": "object", "properties": {"days": {"type": "integer"}}}},
        "x-custom": {"owner": "travel"},
    }


def _view(
    qtbot: QtBot, params: dict[str, Any] | None = None
) -> tuple[SchemaJsonView, ParameterTreeModel, AgentDocument]:
    model, document = one_tool_model(params or _params())
    view = SchemaJsonView(model)
    show_active(qtbot, view, 500, 600)
    return view, model, document


def _focus(qtbot: QtBot, widget: QWidget) -> None:
    widget.setFocus(Qt.FocusReason.OtherFocusReason)
    qtbot.waitUntil(widget.hasFocus, timeout=10_000)


def _replace_text(qtbot: QtBot, view: SchemaJsonView, text: str) -> None:
    """Select all in the editor and type ``text`` (one line) over it, key by key."""
    _focus(qtbot, view.editor)
    view.editor.selectAll()
    qtbot.keyClicks(view.editor, text)


def _paste(qtbot: QtBot, view: SchemaJsonView, text: str) -> None:
    """Select all in the editor and paste ``text`` over it (Ctrl+V)."""
    clipboard = QGuiApplication.clipboard()
    clipboard.setText(text)
    _focus(qtbot, view.editor)
    view.editor.selectAll()
    qtbot.keyClick(view.editor, Qt.Key.Key_V, Qt.KeyboardModifier.ControlModifier)


def _shown(view: SchemaJsonView) -> Any:
    return json.loads(view.editor.toPlainText())


def test_the_text_is_the_served_schema_with_keywords_the_tree_does_not_model(
    qtbot: QtBot,
) -> None:
    view, model, _doc = _view(qtbot)

    assert view.editor.toPlainText() == dump_parameters(_params())
    text = view.editor.toPlainText()
    for keyword in ('"$defs"', '"anyOf"', '"x-custom"', '"$ref": "#/$defs/span"'):
        assert keyword in text
    assert model.paths() == [CITY, ("properties", "when")]


def test_a_tree_edit_updates_the_text(qtbot: QtBot) -> None:
    view, model, _doc = _view(qtbot)

    model.set_keyword(CITY, "minLength", 2)

    assert _shown(view)["properties"]["city"] == {
        "type": "string",
        "description": "Where.",
        "minLength": 2,
    }
    assert not view.problems.isVisible()


def test_typing_valid_json_updates_the_parameters_and_the_tree(qtbot: QtBot) -> None:
    view, model, document = _view(qtbot, {"type": "object", "properties": {}})
    new = {
        "type": "object",
        "properties": {"nights": {"type": "integer", "minimum": 1}, "tags": {"type": "array"}},
        "required": ["nights"],
    }

    with qtbot.waitSignal(view.applied, timeout=WAIT):
        _replace_text(qtbot, view, json.dumps(new))

    assert model.parameters() == new
    assert model.paths() == [("properties", "nights"), ("properties", "tags")]
    assert model.is_required(("properties", "nights"))
    assert document.undo_stack.count() == 1  # the typing run is one step
    document.undo_stack.undo()
    assert model.parameters() == {"type": "object", "properties": {}}


def test_invalid_json_shows_where_and_the_parameters_keep_the_last_good_state(
    qtbot: QtBot,
) -> None:
    view, model, document = _view(qtbot)
    before = json.loads(json.dumps(model.parameters()))

    _paste(qtbot, view, '{\n  "type": "object",\n  "properties": {}\n  "required": []\n}\n')
    qtbot.waitUntil(lambda: view.problems.isVisible(), timeout=WAIT)

    assert listed(view.problems) == ["Line 4, column 3: Expecting ',' delimiter"]
    assert "Not applied" in view.status.text()
    assert view.editor.extraSelections()  # the spot is underlined
    assert model.parameters() == before
    assert model.paths() == [CITY, ("properties", "when")]
    assert document.undo_stack.count() == 0

    with qtbot.waitSignal(view.applied, timeout=WAIT):
        _paste(qtbot, view, '{"type": "object", "properties": {}, "required": []}')
    assert model.parameters() == {"type": "object", "properties": {}, "required": []}
    assert not view.problems.isVisible()
    assert view.status.text() == ""
    assert not view.editor.extraSelections()


def test_sound_json_that_breaks_a_schema_rule_is_located_and_not_applied(qtbot: QtBot) -> None:
    view, model, _doc = _view(qtbot)
    before = json.loads(json.dumps(model.parameters()))
    bad = {"type": "object", "properties": {"n": {"type": "integer", "minimum": 9, "maximum": 1}}}

    _paste(qtbot, view, json.dumps(bad, indent=2))
    qtbot.waitUntil(lambda: view.problems.isVisible(), timeout=WAIT)

    assert listed(view.problems) == [
        "Line 6, column 18: properties.n.minimum: 9 is greater than maximum 1"
    ]
    assert model.parameters() == before


def test_an_unsound_schema_the_document_holds_is_listed_and_fixing_it_clears_the_list(
    qtbot: QtBot,
) -> None:
    """An agent opened (or restored) with an unsound schema: the text is shown as it is, with
    what to fix; a tree or panel edit that fixes it empties the list."""
    unsound = {
        "type": "object",
        "properties": {"cabin": {"type": "string", "enum": ["economy"], "default": "first"}},
    }
    view, _model, document = _view(qtbot, unsound)

    qtbot.waitUntil(lambda: view.problems.isVisible(), timeout=WAIT)
    assert _shown(view) == unsound  # nothing applied or rewritten
    assert view.status.text() == "The MCP server refuses this schema until these are fixed:"
    assert listed(view.problems) == [
        'Line 9, column 18: properties.cabin.default: "first" is not one of "economy"'
    ]

    path = ("metadata", "tools", 0, "parameters", "properties", "cabin", "default")
    assert document.set_field(path, "economy", text="Edit default")
    qtbot.waitUntil(lambda: not view.problems.isVisible(), timeout=WAIT)
    assert view.status.text() == ""


def test_a_root_that_is_not_an_object_is_refused(qtbot: QtBot) -> None:
    view, model, _doc = _view(qtbot)
    before = json.loads(json.dumps(model.parameters()))

    _replace_text(qtbot, view, "[1, 2]")
    qtbot.waitUntil(lambda: view.problems.isVisible(), timeout=WAIT)

    assert listed(view.problems) == ["Line 1, column 1: the parameters must be a JSON object"]
    assert model.parameters() == before


def test_numbers_json_cannot_carry_are_refused(qtbot: QtBot) -> None:
    view, model, _doc = _view(qtbot)
    before = json.loads(json.dumps(model.parameters()))

    _paste(qtbot, view, '{"type": "object", "properties": {}, "x-max": NaN}')
    qtbot.waitUntil(lambda: view.problems.isVisible(), timeout=WAIT)

    assert listed(view.problems) == ["Line 1, column 47: NaN is not a JSON number"]
    assert model.parameters() == before


def test_clicking_a_problem_puts_the_cursor_at_it(qtbot: QtBot) -> None:
    view, _model, _doc = _view(qtbot)
    _paste(qtbot, view, '{\n  "type": "object",\n  "properties": {}\n  "required": []\n}\n')
    qtbot.waitUntil(lambda: view.problems.isVisible(), timeout=WAIT)

    item = view.problems.item(0)
    rect = view.problems.visualItemRect(item)
    qtbot.mouseClick(view.problems.viewport(), Qt.MouseButton.LeftButton, pos=rect.center())

    cursor = view.editor.textCursor()
    assert (cursor.blockNumber() + 1, cursor.positionInBlock() + 1) == (4, 3)
    assert view.editor.hasFocus()


def test_text_not_applied_yet_is_not_overwritten_while_typing(qtbot: QtBot) -> None:
    view, model, document = _view(qtbot)
    model.set_keyword(CITY, "title", "City")

    _replace_text(qtbot, view, '{"type": "object", "properties": {')
    document.undo_stack.undo()  # a change elsewhere while the person is typing

    assert view.editor.toPlainText() == '{"type": "object", "properties": {'
    assert "title" not in model.node_json(CITY)


def test_leaving_the_editor_applies_at_once_and_ends_the_undo_step(qtbot: QtBot) -> None:
    view, model, document = _view(qtbot, {"type": "object", "properties": {}})
    other = QLineEdit()
    qtbot.addWidget(other)
    layout = view.layout()
    assert layout is not None
    layout.addWidget(other)

    _replace_text(qtbot, view, '{"type": "object", "properties": {"a": {"type": "string"}}}')
    _focus(qtbot, other)

    assert model.paths() == [("properties", "a")]
    _replace_text(qtbot, view, '{"type": "object", "properties": {"b": {"type": "string"}}}')
    _focus(qtbot, other)
    assert model.paths() == [("properties", "b")]
    assert document.undo_stack.count() == 2
    document.undo_stack.undo()
    assert model.paths() == [("properties", "a")]
    assert _shown(view) == {"type": "object", "properties": {"a": {"type": "string"}}}


def test_unmodelled_keywords_survive_a_panel_edit_and_stay_visible(qtbot: QtBot) -> None:
    view, model, _doc = _view(qtbot)
    panel = PropertyPanel(model)
    qtbot.addWidget(panel)
    panel.show()
    panel.set_path(CITY)

    _focus(qtbot, panel.title_edit)
    qtbot.keyClicks(panel.title_edit, "City")

    shown = _shown(view)
    assert shown["properties"]["city"]["title"] == "City"
    assert shown["$defs"] == _params()["$defs"]
    assert shown["x-custom"] == {"owner": "travel"}
    assert shown["properties"]["when"] == _params()["properties"]["when"]
    assert model.parameters() == shown


def test_a_hidden_view_catches_up_when_shown(qtbot: QtBot) -> None:
    view, model, _doc = _view(qtbot)
    view.hide()

    model.set_keyword(CITY, "format", "email")
    assert "email" not in view.editor.toPlainText()
    view.show()

    assert _shown(view)["properties"]["city"]["format"] == "email"


def test_check_parameters_text_reads_sound_text_and_locates_problems() -> None:
    params, problems = check_parameters_text('{"type": "object", "properties": {}}')
    assert params == {"type": "object", "properties": {}} and problems == []

    params, problems = check_parameters_text('{"type": "object",\n "properties": {"a": 3}}')
    assert params is None
    assert len(problems) == 1
    assert (problems[0].line, problems[0].column) == (2, 22)
    assert "properties.a" in problems[0].message
