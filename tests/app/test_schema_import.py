"""Importing parameters: what pasted definitions, schemas and examples become, and the dialog."""

from __future__ import annotations

import json
from typing import Any

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QDialog
from pytestqt.qtbot import QtBot

from app.tool_editor.schema_import import (
    ImportDialog,
    SchemaImportError,
    import_parameters,
    infer_schema,
)
from schema_types.schema.check import check_parameters_schema

WAIT = 2000  # ms: the dialog reads the text 200 ms after the last keystroke

FLIGHT = {
    "type": "object",
    "properties": {
        "origin": {"type": "string", "description": "IATA code", "pattern": "^[A-Z]{3}$"},
        "passengers": {"type": "integer", "minimum": 1, "default": 1},
    },
    "required": ["origin"],
}


def test_an_mcp_tool_definition_gives_its_input_schema_name_and_description() -> None:
    text = json.dumps(
        {"name": "find_flights", "description": "Find flights.", "inputSchema": FLIGHT}
    )

    found = import_parameters(text)

    assert found.parameters == FLIGHT
    assert found.source == "MCP tool definition"
    assert (found.name, found.description) == ("find_flights", "Find flights.")


def test_a_tools_list_result_with_one_tool_gives_that_tool() -> None:
    text = json.dumps({"tools": [{"name": "find_flights", "inputSchema": FLIGHT}]})

    found = import_parameters(text)

    assert found.parameters == FLIGHT
    assert found.name == "find_flights"


def test_a_tools_list_result_with_several_tools_asks_for_one() -> None:
    tool = {"name": "a", "inputSchema": FLIGHT}
    with pytest.raises(SchemaImportError, match="this holds 2 tools: paste the one to import"):
        import_parameters(json.dumps({"tools": [tool, {**tool, "name": "b"}]}))
    with pytest.raises(SchemaImportError, match="this holds no tool"):
        import_parameters('{"tools": []}')


@pytest.mark.parametrize(
    "definition",
    [
        {
            "type": "function",
            "function": {"name": "find_flights", "description": "Find.", "parameters": FLIGHT},
        },
        {"type": "function", "name": "find_flights", "description": "Find.", "parameters": FLIGHT},
        {"name": "find_flights", "description": "Find.", "parameters": FLIGHT},
    ],
)
def test_an_openai_function_definition_gives_its_parameters(definition: dict[str, Any]) -> None:
    found = import_parameters(json.dumps(definition))

    assert found.parameters == FLIGHT
    assert found.source == "function definition"
    assert (found.name, found.description) == ("find_flights", "Find.")


def test_an_anthropic_tool_definition_gives_its_input_schema() -> None:
    found = import_parameters(json.dumps({"name": "find_flights", "input_schema": FLIGHT}))

    assert found.parameters == FLIGHT
    assert found.source == "Anthropic tool definition"


def test_a_plain_json_schema_is_taken_as_it_is_unmodelled_keywords_included() -> None:
    schema = {**FLIGHT, "$defs": {"code": {"type": "string"}}, "x-owner": "travel"}

    found = import_parameters(json.dumps(schema))

    assert found.parameters == schema
    assert found.source == "JSON Schema"
    assert (found.name, found.description) == (None, None)


def test_an_object_schema_without_properties_is_a_schema_not_an_example() -> None:
    found = import_parameters('{"type": "object", "additionalProperties": false}')

    assert found.parameters == {"type": "object", "additionalProperties": False}
    assert found.source == "JSON Schema"


def test_an_example_object_gives_a_schema_with_inferred_types() -> None:
    example = {
        "city": "Lisbon",
        "nights": 3,
        "budget": 950.5,
        "flexible": True,
        "checkin": "2025-06-01",
        "contact": "ada@example.com",
        "note": None,
        "rooms": [{"beds": 2, "view": "sea"}, {"beds": 1, "view": None}],
        "tags": ["quiet", "central"],
        "traveller": {"name": "Ada", "age": 36, "loyalty": {"tier": "gold"}},
    }

    found = import_parameters(json.dumps(example))

    assert found.source == "example arguments"
    params = found.parameters
    assert check_parameters_schema(params) == []
    props = params["properties"]
    assert {name: node["type"] for name, node in props.items()} == {
        "city": "string",
        "nights": "integer",
        "budget": "number",
        "flexible": "boolean",
        "checkin": "string",
        "contact": "string",
        "note": "string",
        "rooms": "array",
        "tags": "array",
        "traveller": "object",
    }
    assert props["city"]["examples"] == ["Lisbon"]
    assert props["nights"]["examples"] == [3]
    assert props["checkin"]["format"] == "date"
    assert props["contact"]["format"] == "email"
    assert params["required"] == [name for name in example if name != "note"]
    assert props["rooms"]["items"] == {
        "type": "object",
        "properties": {
            "beds": {"type": "integer", "examples": [2]},
            "view": {"type": "string", "examples": ["sea"]},
        },
        "required": ["beds"],
    }
    assert props["tags"]["items"] == {"type": "string", "examples": ["quiet"]}
    traveller = props["traveller"]
    assert traveller["required"] == ["name", "age", "loyalty"]
    assert traveller["properties"]["loyalty"]["properties"]["tier"]["type"] == "string"


def test_examples_of_one_place_are_merged_so_every_example_fits() -> None:
    schema = infer_schema(
        {"prices": [3, 4.5], "legs": [{"from": "LIS", "stops": 0}, {"to": "OPO", "stops": 1.5}]}
    )

    assert schema["properties"]["prices"]["items"]["type"] == "number"
    legs = schema["properties"]["legs"]["items"]
    assert list(legs["properties"]) == ["from", "stops", "to"]
    assert legs["properties"]["stops"]["type"] == "number"
    assert legs["required"] == ["stops"]


def test_inferred_formats_and_plain_values() -> None:
    assert infer_schema("2025-06-01T10:30:00Z")["format"] == "date-time"
    assert infer_schema("https://example.com/a")["format"] == "uri"
    assert infer_schema("1b4e28ba-2fa1-11d2-883f-0016d3cca427")["format"] == "uuid"
    assert "format" not in infer_schema("Lisbon")
    assert infer_schema(False) == {"type": "boolean"}
    assert infer_schema([]) == {"type": "array", "items": {"type": "string"}}
    assert infer_schema(None) == {"type": "string"}


def test_an_example_with_a_tools_key_is_still_an_example() -> None:
    found = import_parameters('{"tools": ["hammer"], "budget": 3}')

    assert found.source == "example arguments"
    assert found.parameters["properties"]["tools"]["items"]["type"] == "string"


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("this is not json", "Line 1, column 1: Expecting value (paste JSON)"),
        ('{"a": 1,\n "b": }', "Line 2, column 7: Expecting value (paste JSON)"),
        ("[1, 2, 3]", "paste a JSON object: a tool definition, a schema or an example"),
        ('{"a": NaN}', "Line 1, column 7: NaN is not a JSON number (paste JSON)"),
        (
            '{"name": "t", "inputSchema": {"type": "array"}}',
            "the MCP tool definition has problems: ",
        ),
        (
            '{"type": "object", "properties": {"n": {"type": "integer", "minimum": 5, '
            '"maximum": 1}}}',
            "the JSON Schema has problems: properties.n.minimum: 5 is greater than maximum 1",
        ),
    ],
)
def test_text_that_cannot_be_used_gives_a_clear_reason(text: str, message: str) -> None:
    with pytest.raises(SchemaImportError) as caught:
        import_parameters(text)

    assert str(caught.value).startswith(message)


# -- the dialog ---------------------------------------------------------------------------------


def _dialog(qtbot: QtBot) -> ImportDialog:
    dialog = ImportDialog()
    qtbot.addWidget(dialog)
    dialog.show()
    dialog.activateWindow()
    qtbot.waitActive(dialog)
    dialog.text_edit.setFocus()
    return dialog


def test_the_dialog_enables_its_button_only_for_usable_text(qtbot: QtBot) -> None:
    dialog = _dialog(qtbot)
    assert not dialog.import_button.isEnabled()

    qtbot.keyClicks(dialog.text_edit, '{"city": "Lisbon", "nights": 3')
    qtbot.waitUntil(lambda: dialog.summary.text().startswith("Line 1"), timeout=WAIT)
    assert not dialog.import_button.isEnabled()

    qtbot.keyClicks(dialog.text_edit, "}")
    qtbot.waitUntil(dialog.import_button.isEnabled, timeout=WAIT)
    assert dialog.summary.text() == "Read as example arguments: 2 top-level parameters."
    assert dialog.take_description.isHidden()

    dialog.text_edit.selectAll()
    qtbot.keyClick(dialog.text_edit, Qt.Key.Key_Delete)
    qtbot.waitUntil(lambda: not dialog.import_button.isEnabled(), timeout=WAIT)
    assert dialog.summary.text() == ""


def test_the_dialog_offers_the_description_of_a_pasted_definition(qtbot: QtBot) -> None:
    dialog = _dialog(qtbot)
    text = json.dumps({"name": "f", "description": "Find flights.", "inputSchema": FLIGHT})

    qtbot.keyClicks(dialog.text_edit, text)
    qtbot.waitUntil(dialog.import_button.isEnabled, timeout=WAIT)

    assert dialog.summary.text() == "Read as an MCP tool definition: 2 top-level parameters."
    assert dialog.take_description.isVisible()
    with qtbot.waitSignal(dialog.accepted, timeout=WAIT):
        qtbot.mouseClick(dialog.import_button, Qt.MouseButton.LeftButton)
    assert dialog.result() == QDialog.DialogCode.Accepted
    assert dialog.result_value is not None
    assert dialog.result_value.parameters == FLIGHT


def test_the_dialog_does_not_accept_unusable_text(qtbot: QtBot) -> None:
    dialog = _dialog(qtbot)
    qtbot.keyClicks(dialog.text_edit, "[1]")

    dialog.accept()  # Enter before the text was read: it is read now, and refused

    assert dialog.isVisible()
    assert dialog.result_value is None
    assert dialog.summary.text() == "paste a JSON object: a tool definition, a schema or an example"
