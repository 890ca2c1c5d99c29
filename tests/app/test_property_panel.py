"""The property panel with real widgets: per-type fields, typed values, flags at the field, undo."""

from __future__ import annotations

from typing import Any

import pytest
from PySide6.QtCore import QPoint, Qt
from PySide6.QtWidgets import QAbstractButton, QLineEdit, QPlainTextEdit, QWidget
from pytestqt.qtbot import QtBot

from app.document.agent_document import AgentDocument
from app.errors import reporter
from app.tool_editor.parameter_edits import NodePath
from app.tool_editor.parameter_model import ParameterTreeModel
from app.tool_editor.property_panel import PropertyPanel
from app.tool_editor.value_editors import ValueListEditor
from tests.app._tool_widgets import one_tool_model, show_active

NAME = ("properties", "name")
AGE = ("properties", "age")
PRICE = ("properties", "price")
TAGS = ("properties", "tags")
ADDRESS = ("properties", "address")
ACTIVE = ("properties", "active")


def _params() -> dict[str, Any]:
    return {
        "type": "object",
        "properties": {
            "name": {"type": "string", "description": "Who."},
            "age": {"type": "integer"},
            "price": {"type": "number"},
            "active": {"type": "boolean"},
            "tags": {"type": "array", "items": {"type": "string"}},
            "address": {"type": "object", "properties": {"city": {"type": "string"}}},
        },
        "required": ["name"],
    }


def _panel(
    qtbot: QtBot, path: NodePath | None, params: dict[str, Any] | None = None
) -> tuple[PropertyPanel, ParameterTreeModel, AgentDocument]:
    model, document = one_tool_model(params or _params())
    panel = PropertyPanel(model)
    show_active(qtbot, panel, 420, 900)
    panel.set_path(path)
    return panel, model, document


def _node(model: ParameterTreeModel, path: NodePath) -> dict[str, Any]:
    node = model.node_json(path)
    assert isinstance(node, dict)
    return node


def _focus(qtbot: QtBot, widget: QWidget) -> None:
    widget.setFocus(Qt.FocusReason.OtherFocusReason)
    qtbot.waitUntil(widget.hasFocus, timeout=10_000)


def _type(qtbot: QtBot, edit: QLineEdit | QPlainTextEdit, text: str) -> None:
    """Focus the input, select what it holds and type over it key by key (empty: delete it)."""
    _focus(qtbot, edit)
    edit.selectAll()
    if text:
        qtbot.keyClicks(edit, text)
    else:
        qtbot.keyClick(edit, Qt.Key.Key_Delete)


def _click(qtbot: QtBot, button: QAbstractButton) -> None:
    """Click a check box or button where its indicator is (a wide check box's middle is blank)."""
    qtbot.mouseClick(
        button,
        Qt.MouseButton.LeftButton,
        pos=QPoint(min(8, button.width() // 2), button.height() // 2),
    )


def _item_editor(editor: ValueListEditor) -> QLineEdit | None:
    line = editor.list.indexWidget(editor.list.currentIndex())
    return line if isinstance(line, QLineEdit) else None


def _type_in_item_editor(qtbot: QtBot, editor: ValueListEditor, text: str) -> None:
    """Type over the entry whose editor is open and press Enter (Qt commits it queued)."""
    qtbot.waitUntil(lambda: _item_editor(editor) is not None, timeout=10_000)
    line = _item_editor(editor)
    assert line is not None
    line.selectAll()
    qtbot.keyClicks(line, text)
    qtbot.keyClick(line, Qt.Key.Key_Return)
    qtbot.waitUntil(lambda: _item_editor(editor) is None, timeout=10_000)


def _edit_row(qtbot: QtBot, editor: ValueListEditor, row: int, text: str) -> None:
    """Edit entry ``row`` of a value list through its item editor."""
    item = editor.list.item(row)
    editor.list.setCurrentItem(item)
    editor.list.editItem(item)
    _type_in_item_editor(qtbot, editor, text)


def _shown_groups(panel: PropertyPanel) -> set[str]:
    groups = {
        "values": panel.values_group,
        "string": panel.string_group,
        "number": panel.number_group,
        "array": panel.array_group,
        "object": panel.object_group,
    }
    return {name for name, group in groups.items() if group.isVisible()}


# -- which fields each type shows ---------------------------------------------------------------


@pytest.mark.parametrize(
    ("path", "groups"),
    [
        (NAME, {"values", "string"}),
        (AGE, {"values", "number"}),
        (PRICE, {"values", "number"}),
        (ACTIVE, {"values"}),
        (TAGS, {"values", "array"}),
        (ADDRESS, {"values", "object"}),
        ((), {"object"}),
    ],
)
def test_each_type_shows_the_fields_that_apply_to_it(
    qtbot: QtBot, path: NodePath, groups: set[str]
) -> None:
    panel, _model, _doc = _panel(qtbot, path)

    assert _shown_groups(panel) == groups
    assert panel.name_edit.isEnabled() == bool(path)
    assert panel.type_combo.isEnabled() == bool(path)
    assert panel.required_check.isEnabled() == bool(path)


def test_a_boolean_offers_a_default_but_no_allowed_values_or_examples(qtbot: QtBot) -> None:
    panel, model, _doc = _panel(qtbot, ACTIVE)

    assert panel.default_edit.isVisible()
    assert not panel.enum_editor.isVisible()
    assert not panel.examples_editor.isVisible()
    _type(qtbot, panel.default_edit, "true")
    assert _node(model, ACTIVE)["default"] is True
    _type(qtbot, panel.default_edit, "yes")
    assert panel.problem_at("default") == "expected true or false, got 'yes'"
    assert _node(model, ACTIVE)["default"] is True


def test_the_panel_shows_the_selected_nodes_values(qtbot: QtBot) -> None:
    params = _params()
    params["properties"]["age"] = {
        "type": "integer",
        "title": "Age",
        "minimum": 0,
        "exclusiveMaximum": 150,
        "default": 30,
        "enum": [18, 30, 65],
    }
    panel, _model, _doc = _panel(qtbot, AGE, params)

    assert panel.heading.text() == "age — integer"
    assert panel.name_edit.text() == "age"
    assert panel.type_combo.currentText() == "integer"
    assert panel.title_edit.text() == "Age"
    assert panel.minimum.edit.text() == "0"
    assert not panel.minimum.exclusive.isChecked()
    assert panel.maximum.edit.text() == "150"
    assert panel.maximum.exclusive.isChecked()
    assert panel.default_edit.text() == "30"
    assert panel.enum_editor.texts() == ["18", "30", "65"]
    assert not panel.required_check.isChecked()


def test_nothing_selected_disables_the_panel_and_says_so(qtbot: QtBot) -> None:
    panel, _model, _doc = _panel(qtbot, NAME)

    panel.set_path(None)

    assert not panel.content.isEnabled()
    assert panel.heading.text() == "No parameter selected"
    assert panel.note.isVisible()


# -- editing each field: one undo step per field, undo restores ---------------------------------


def _undo_all(document: AgentDocument, steps: int) -> None:
    for _ in range(steps):
        document.undo_stack.undo()


def test_string_fields_each_edit_the_parameter_as_one_undo_step(qtbot: QtBot) -> None:
    panel, model, document = _panel(qtbot, NAME)
    before = model.parameters()
    stack = document.undo_stack

    edits: list[tuple[QLineEdit | QPlainTextEdit, str, str, Any]] = [
        (panel.title_edit, "Full name", "title", "Full name"),
        (panel.description_edit, "The traveller.", "description", "The traveller."),
        (panel.min_length_edit.edit, "2", "minLength", 2),
        (panel.max_length_edit.edit, "40", "maxLength", 40),
        (panel.pattern_edit, "^[A-Z][a-z]+$", "pattern", "^[A-Z][a-z]+$"),
        (panel.format_line, "email", "format", "email"),
        (panel.default_edit, "Ada", "default", "Ada"),
    ]
    for steps, (edit, text, keyword, value) in enumerate(edits, start=1):
        _type(qtbot, edit, text)
        assert _node(model, NAME)[keyword] == value
        assert stack.count() == steps, keyword
    assert _node(model, NAME)["description"] == "The traveller."

    _undo_all(document, len(edits))
    assert model.parameters() == before
    assert panel.title_edit.text() == ""
    assert panel.pattern_edit.text() == "" or panel.pattern_edit.hasFocus()


def test_a_field_typed_again_after_leaving_it_is_a_new_undo_step(qtbot: QtBot) -> None:
    panel, model, document = _panel(qtbot, NAME)

    _type(qtbot, panel.title_edit, "Ab")
    _focus(qtbot, panel.pattern_edit)  # focus leaves the title: its typing run ends
    _focus(qtbot, panel.title_edit)
    qtbot.keyClicks(panel.title_edit, "c")

    assert _node(model, NAME)["title"] == "Abc"
    assert document.undo_stack.count() == 2
    document.undo_stack.undo()
    assert _node(model, NAME)["title"] == "Ab"


def test_clearing_a_field_takes_its_keyword_out(qtbot: QtBot) -> None:
    params = _params()
    params["properties"]["name"].update({"title": "Name", "minLength": 3})
    panel, model, _doc = _panel(qtbot, NAME, params)

    _type(qtbot, panel.title_edit, "")
    _type(qtbot, panel.min_length_edit.edit, "")

    assert "title" not in _node(model, NAME)
    assert "minLength" not in _node(model, NAME)


def test_a_count_that_is_not_a_whole_number_is_refused_at_the_field(qtbot: QtBot) -> None:
    panel, model, document = _panel(qtbot, NAME)

    _type(qtbot, panel.min_length_edit.edit, "-1")

    assert "minLength" not in _node(model, NAME)
    assert document.undo_stack.count() == 0
    assert "expected a whole number of at least 0" in panel.problem_at("minLength")
    _type(qtbot, panel.min_length_edit.edit, "1")
    assert _node(model, NAME)["minLength"] == 1
    assert panel.problem_at("minLength") == ""


@pytest.mark.parametrize(("path", "default", "expected"), [(AGE, "7", 7), (PRICE, "2.5", 2.5)])
def test_number_fields_each_edit_the_parameter_as_one_undo_step(
    qtbot: QtBot, path: NodePath, default: str, expected: float
) -> None:
    panel, model, document = _panel(qtbot, path)
    before = model.parameters()

    _type(qtbot, panel.minimum.edit, "-10")
    _type(qtbot, panel.maximum.edit, "100")
    _type(qtbot, panel.multiple_edit.edit, "0.5" if path == PRICE else "1")
    _type(qtbot, panel.default_edit, default)

    node = _node(model, path)
    assert (node["minimum"], node["maximum"], node["default"]) == (-10, 100, expected)
    assert node["multipleOf"] == (0.5 if path == PRICE else 1)
    assert document.undo_stack.count() == 4
    _undo_all(document, 4)
    assert model.parameters() == before


def test_an_integer_field_refuses_a_fraction_and_a_string_field_keeps_digits_as_text(
    qtbot: QtBot,
) -> None:
    panel, model, _doc = _panel(qtbot, AGE)

    _type(qtbot, panel.default_edit, "5.5")
    assert _node(model, AGE)["default"] == 5  # "5" was read; "5." and "5.5" are not sent
    assert panel.problem_at("default") == "expected an integer, got '5.5'"
    qtbot.keyClick(panel.default_edit, Qt.Key.Key_Backspace)
    qtbot.keyClick(panel.default_edit, Qt.Key.Key_Backspace)
    assert panel.problem_at("default") == ""
    _type(qtbot, panel.default_edit, "6")
    assert _node(model, AGE)["default"] == 6

    panel.set_path(NAME)
    _type(qtbot, panel.default_edit, "5")
    assert _node(model, NAME)["default"] == "5"


def test_array_fields_edit_item_counts_and_uniqueness(qtbot: QtBot) -> None:
    panel, model, document = _panel(qtbot, TAGS)
    before = model.parameters()

    _type(qtbot, panel.min_items_edit.edit, "1")
    _type(qtbot, panel.max_items_edit.edit, "5")
    _click(qtbot, panel.unique_check)
    _type(qtbot, panel.default_edit, '["a", "b"]')

    node = _node(model, TAGS)
    assert (node["minItems"], node["maxItems"], node["uniqueItems"]) == (1, 5, True)
    assert node["default"] == ["a", "b"]
    assert document.undo_stack.count() == 4
    _click(qtbot, panel.unique_check)
    assert "uniqueItems" not in _node(model, TAGS)
    _undo_all(document, 5)
    assert model.parameters() == before


def test_object_additional_properties_check_box(qtbot: QtBot) -> None:
    panel, model, document = _panel(qtbot, ADDRESS)
    assert panel.additional_check.isChecked()

    _click(qtbot, panel.additional_check)
    assert _node(model, ADDRESS)["additionalProperties"] is False
    _click(qtbot, panel.additional_check)
    assert "additionalProperties" not in _node(model, ADDRESS)
    document.undo_stack.undo()
    assert _node(model, ADDRESS)["additionalProperties"] is False
    assert not panel.additional_check.isChecked()


def test_renaming_in_the_name_field_keeps_required_and_flags_bad_names(qtbot: QtBot) -> None:
    panel, model, _doc = _panel(qtbot, NAME)

    _type(qtbot, panel.name_edit, "age")
    assert "already a property here" in panel.problem_at("name")
    qtbot.keyClick(panel.name_edit, Qt.Key.Key_Return)
    assert "age" in _node(model, ())["properties"]
    assert panel.path() == NAME

    _type(qtbot, panel.name_edit, "full_name")
    assert panel.problem_at("name") == ""
    qtbot.keyClick(panel.name_edit, Qt.Key.Key_Return)
    root = _node(model, ())
    assert next(iter(root["properties"])) == "full_name"
    assert root["required"] == ["full_name"]
    assert panel.path() == ("properties", "full_name")


# -- required, type change ----------------------------------------------------------------------


def test_required_check_box_syncs_the_parents_required_list(qtbot: QtBot) -> None:
    panel, model, document = _panel(qtbot, ("properties", "address", "properties", "city"))
    assert not panel.required_check.isChecked()

    _click(qtbot, panel.required_check)
    assert _node(model, ADDRESS)["required"] == ["city"]
    assert model.is_required(("properties", "address", "properties", "city"))

    _click(qtbot, panel.required_check)
    assert "required" not in _node(model, ADDRESS)
    document.undo_stack.undo()
    assert panel.required_check.isChecked()
    assert _node(model, ADDRESS)["required"] == ["city"]


def test_changing_the_type_keeps_what_still_applies(qtbot: QtBot) -> None:
    params = _params()
    params["properties"]["name"].update(
        {"title": "Count", "pattern": "^[0-9]+$", "enum": ["1", "2"], "x-ui": "spin"}
    )
    panel, model, document = _panel(qtbot, NAME, params)

    _focus(qtbot, panel.type_combo)
    qtbot.keyClicks(panel.type_combo, "i")  # keyboard search picks "integer"

    node = _node(model, NAME)
    assert node["type"] == "integer"
    assert (node["title"], node["description"], node["x-ui"]) == ("Count", "Who.", "spin")
    assert "pattern" not in node and "enum" not in node
    assert model.is_required(NAME)
    assert _shown_groups(panel) == {"values", "number"}
    assert panel.heading.text() == "name — integer"
    document.undo_stack.undo()
    assert _node(model, NAME)["pattern"] == "^[0-9]+$"
    assert panel.type_combo.currentText() == "string"


# -- enum and examples lists --------------------------------------------------------------------


def test_enum_values_are_added_edited_reordered_and_removed_typed_per_node(qtbot: QtBot) -> None:
    panel, model, document = _panel(qtbot, AGE)
    enum = panel.enum_editor

    _click(qtbot, enum.add_button)  # opens the new entry's editor
    _type_in_item_editor(qtbot, enum, "5")
    assert _node(model, AGE)["enum"] == [5]
    assert document.undo_stack.count() == 1  # adding and typing the new value: one step

    _click(qtbot, enum.add_button)
    qtbot.waitUntil(lambda: _item_editor(enum) is not None, timeout=10_000)
    qtbot.keyClick(_item_editor(enum), Qt.Key.Key_Escape)
    qtbot.waitUntil(lambda: _item_editor(enum) is None, timeout=10_000)
    _edit_row(qtbot, enum, 1, "7")
    assert _node(model, AGE)["enum"] == [5, 7]

    _click(qtbot, enum.up_button)
    assert _node(model, AGE)["enum"] == [7, 5]
    assert enum.list.currentRow() == 0

    _click(qtbot, enum.remove_button)
    assert _node(model, AGE)["enum"] == [5]
    enum.list.setCurrentRow(0)
    _click(qtbot, enum.remove_button)
    assert "enum" not in _node(model, AGE)

    steps = document.undo_stack.count()
    assert steps == 6  # add 5, add (editor escaped), edit to 7, move up, remove, remove
    document.undo_stack.undo()
    assert _node(model, AGE)["enum"] == [5]
    document.undo_stack.undo()
    assert _node(model, AGE)["enum"] == [7, 5]
    assert enum.texts() == ["7", "5"]


def test_an_enum_value_that_does_not_read_as_the_type_is_refused_at_the_field(
    qtbot: QtBot,
) -> None:
    params = _params()
    params["properties"]["age"]["enum"] = [1, 2]
    panel, model, _doc = _panel(qtbot, AGE, params)

    _edit_row(qtbot, panel.enum_editor, 1, "5.5")

    assert _node(model, AGE)["enum"] == [1, 2]
    assert panel.problem_at("enum") == "value 2: expected an integer, got '5.5'"
    assert panel.enum_editor.texts() == ["1", "5.5"]  # what was typed stays to be fixed
    _edit_row(qtbot, panel.enum_editor, 1, "5")
    assert _node(model, AGE)["enum"] == [1, 5]
    assert panel.problem_at("enum") == ""


def test_string_enum_and_examples_keep_digits_as_text(qtbot: QtBot) -> None:
    panel, model, _doc = _panel(qtbot, NAME)

    for editor in (panel.enum_editor, panel.examples_editor):
        _click(qtbot, editor.add_button)
        _type_in_item_editor(qtbot, editor, "5")

    node = _node(model, NAME)
    assert node["enum"] == ["5"]
    assert node["examples"] == ["5"]


# -- invalid combinations are flagged at the field ------------------------------------------------


def test_minimum_above_maximum_is_flagged_at_both_bounds_until_fixed(qtbot: QtBot) -> None:
    panel, model, _doc = _panel(qtbot, AGE)

    _type(qtbot, panel.minimum.edit, "10")
    _type(qtbot, panel.maximum.edit, "5")

    assert (_node(model, AGE)["minimum"], _node(model, AGE)["maximum"]) == (10, 5)
    assert panel.problem_at("minimum") == "10 is greater than maximum 5"
    assert panel.problem_at("maximum") == "10 is greater than maximum 5"
    assert panel.minimum.edit.toolTip() == "10 is greater than maximum 5"

    _type(qtbot, panel.maximum.edit, "50")
    assert panel.problem_at("minimum") == ""
    assert panel.problem_at("maximum") == ""


def test_the_tree_flags_the_node_a_moment_after_the_edit(qtbot: QtBot) -> None:
    panel, model, _doc = _panel(qtbot, NAME)
    with qtbot.waitSignal(model.problems_changed, timeout=10_000):
        _type(qtbot, panel.min_length_edit.edit, "9")
        _type(qtbot, panel.max_length_edit.edit, "3")
    qtbot.waitUntil(lambda: model.problems_at(NAME) != [], timeout=10_000)

    assert model.problems_at(NAME) == ["properties.name.minLength: 9 is greater than maxLength 3"]
    assert panel.problem_at("maxLength") == "9 is greater than maxLength 3"


def test_a_default_not_among_the_allowed_values_is_flagged_until_fixed(qtbot: QtBot) -> None:
    params = _params()
    params["properties"]["name"]["enum"] = ["ann", "bob"]
    panel, model, _doc = _panel(qtbot, NAME, params)

    _type(qtbot, panel.default_edit, "cy")

    assert _node(model, NAME)["default"] == "cy"  # applied: the person may be mid-fix
    assert panel.problem_at("default") == '"cy" is not one of "ann", "bob"'
    _type(qtbot, panel.default_edit, "bob")
    assert panel.problem_at("default") == ""


def test_a_default_that_does_not_match_the_pattern_is_flagged_until_fixed(qtbot: QtBot) -> None:
    panel, model, _doc = _panel(qtbot, NAME)

    _type(qtbot, panel.pattern_edit, "^[a-z]+$")
    _type(qtbot, panel.default_edit, "ABC")
    assert panel.problem_at("default") == '"ABC" does not match the pattern "^[a-z]+$"'

    _type(qtbot, panel.pattern_edit, "^[A-Za-z]+$")
    assert panel.problem_at("default") == ""
    assert _node(model, NAME)["pattern"] == "^[A-Za-z]+$"


def test_a_pattern_that_is_not_a_regular_expression_is_flagged_until_fixed(qtbot: QtBot) -> None:
    panel, model, _doc = _panel(qtbot, NAME)

    _type(qtbot, panel.pattern_edit, "[a-")

    assert _node(model, NAME)["pattern"] == "[a-"
    assert panel.problem_at("pattern").startswith("invalid regular expression")
    qtbot.keyClicks(panel.pattern_edit, "z]")
    assert panel.problem_at("pattern") == ""


def test_an_enum_value_the_pattern_refuses_is_marked_in_the_list(qtbot: QtBot) -> None:
    params = _params()
    params["properties"]["name"].update({"pattern": "^[a-z]+$", "enum": ["ok", "NO"]})
    panel, _model, _doc = _panel(qtbot, NAME, params)

    message = '"NO" does not match the pattern "^[a-z]+$"'
    assert panel.problem_at("enum") == message
    assert panel.enum_editor.list.item(1).toolTip() == message
    assert panel.enum_editor.list.item(0).toolTip() == ""


# -- exclusive bounds ---------------------------------------------------------------------------


def test_the_exclusive_toggle_writes_exclusive_minimum_instead_of_minimum(qtbot: QtBot) -> None:
    panel, model, document = _panel(qtbot, PRICE)

    _type(qtbot, panel.minimum.edit, "0")
    assert _node(model, PRICE)["minimum"] == 0
    _click(qtbot, panel.minimum.exclusive)

    node = _node(model, PRICE)
    assert node["exclusiveMinimum"] == 0
    assert "minimum" not in node
    assert document.undo_stack.count() == 2  # the toggle is its own step
    _type(qtbot, panel.minimum.edit, "1.5")
    assert _node(model, PRICE)["exclusiveMinimum"] == 1.5

    _click(qtbot, panel.maximum.exclusive)
    _type(qtbot, panel.maximum.edit, "9")
    node = _node(model, PRICE)
    assert node["exclusiveMaximum"] == 9 and "maximum" not in node

    _click(qtbot, panel.minimum.exclusive)
    node = _node(model, PRICE)
    assert node["minimum"] == 1.5 and "exclusiveMinimum" not in node
    document.undo_stack.undo()
    assert panel.minimum.exclusive.isChecked()
    assert _node(model, PRICE)["exclusiveMinimum"] == 1.5


# -- keywords the panel does not model ----------------------------------------------------------


def test_unmodelled_keywords_are_listed_and_survive_a_panel_edit(qtbot: QtBot) -> None:
    params = _params()
    params["properties"]["name"]["x-custom"] = {"keep": True}
    params["properties"]["name"]["contentMediaType"] = "text/plain"
    panel, model, _doc = _panel(qtbot, NAME, params)

    assert panel.other_label.isVisible()
    assert "x-custom" in panel.other_label.text()
    assert "contentMediaType" in panel.other_label.text()
    _type(qtbot, panel.title_edit, "Name")

    node = _node(model, NAME)
    assert node["x-custom"] == {"keep": True}
    assert node["contentMediaType"] == "text/plain"


def test_a_schema_without_a_type_can_be_given_one(qtbot: QtBot) -> None:
    params = _params()
    params["properties"]["name"] = {"anyOf": [{"type": "string"}, {"type": "integer"}]}
    panel, model, _doc = _panel(qtbot, NAME, params)

    assert panel.note.isVisible()
    assert panel.type_combo.currentIndex() == -1
    _focus(qtbot, panel.type_combo)
    qtbot.keyClicks(panel.type_combo, "s")

    assert _node(model, NAME)["type"] == "string"
    assert _shown_groups(panel) == {"values", "string"}


def test_a_refused_name_is_put_back_when_focus_leaves_the_field(qtbot: QtBot) -> None:
    panel, model, _doc = _panel(qtbot, NAME)

    _type(qtbot, panel.name_edit, "age")
    assert "already a property here" in panel.problem_at("name")
    _focus(qtbot, panel.title_edit)

    assert list(_node(model, ())["properties"])[:2] == ["name", "age"]
    assert "already a property here" in reporter().history[-1].message
    assert panel.name_edit.text() == "name"
    assert panel.problem_at("name") == ""
    _type(qtbot, panel.title_edit, "T")
    assert panel.problem_at("name") == ""


def test_numbers_json_cannot_carry_are_refused_at_the_field(qtbot: QtBot) -> None:
    panel, model, _doc = _panel(qtbot, PRICE)

    _type(qtbot, panel.maximum.edit, "Infinity")
    assert panel.problem_at("maximum") == "expected a number, got 'Infinity'"
    _type(qtbot, panel.default_edit, "NaN")
    assert panel.problem_at("default") == "expected a number, got 'NaN'"
    _type(qtbot, panel.minimum.edit, "1e999")
    assert panel.problem_at("minimum") == "expected a number, got '1e999'"

    node = _node(model, PRICE)
    assert "maximum" not in node and "default" not in node
    assert node["minimum"] == 1e99  # read on the way; "1e999" was not sent


def test_undo_shows_in_the_field_being_typed_in(qtbot: QtBot) -> None:
    panel, model, document = _panel(qtbot, PRICE)

    _type(qtbot, panel.title_edit, "Price")
    _type(qtbot, panel.default_edit, "1e2")  # 100.0, shown as typed while typing
    assert _node(model, PRICE)["default"] == 100.0
    assert panel.default_edit.text() == "1e2"

    document.undo_stack.undo()
    assert panel.default_edit.hasFocus()
    assert panel.default_edit.text() == ""
    document.undo_stack.undo()
    assert panel.title_edit.text() == ""
    document.undo_stack.redo()
    assert panel.title_edit.text() == "Price"
