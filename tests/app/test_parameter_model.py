"""The parameter tree model, without widgets: structure edits, required sync, undo, round trip."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import QModelIndex, QPersistentModelIndex, Qt

from app.document.agent_document import AgentDocument
from app.document.tool_ref import ToolRef
from app.errors import reporter
from app.tool_editor.parameter_edits import REMOVE, same_json
from app.tool_editor.parameter_model import NODE_PATH_ROLE, ParameterTreeModel
from schema_types.agent import Agent, ToolDefinition
from schema_types.schema.nodes import parameters_from_json, schema_to_json

pytestmark = pytest.mark.usefixtures("qapp")  # models use timers; no widgets are made

TRIP = ("properties", "trip")
DEST = (*TRIP, "properties", "destination")


def _params() -> dict[str, Any]:
    return {
        "type": "object",
        "properties": {
            "trip": {
                "type": "object",
                "description": "Where and when.",
                "properties": {
                    "destination": {"type": "string", "x-ui": {"widget": "city"}},
                    "nights": {"type": "integer", "minimum": 1},
                },
                "required": ["destination"],
            },
            "passengers": {
                "type": "array",
                "items": {"type": "object", "properties": {"name": {"type": "string"}}},
            },
            "cabin": {"type": "string", "enum": ["economy", "business"]},
        },
        "required": ["trip", "cabin"],
        "additionalProperties": False,
    }


def _model(params: dict[str, Any] | None = None) -> tuple[ParameterTreeModel, AgentDocument]:
    agent = Agent.model_validate(
        {
            "metadata": {
                "name": "A",
                "tools": [
                    {"name": "other", "parameters": {"type": "object", "properties": {}}},
                    {"name": "plan", "parameters": params or _params(), "prompt": "{trip}"},
                ],
            }
        }
    )
    document = AgentDocument(agent)
    model = ParameterTreeModel(ToolRef(document, 1))
    return model, document


def _names(model: ParameterTreeModel, parent: QModelIndex | None = None) -> list[str]:
    parent = parent or QModelIndex()
    return [model.index(r, 0, parent).data() for r in range(model.rowCount(parent))]


def _params_of(model: ParameterTreeModel) -> dict[str, Any]:
    params = model.parameters()
    assert params is not None
    return params


def test_objects_show_their_properties_and_arrays_their_item_schema() -> None:
    model, _ = _model()

    assert _names(model) == ["trip", "passengers", "cabin"]
    trip = model.index_for_path(TRIP)
    assert _names(model, trip) == ["destination", "nights"]
    passengers = model.index_for_path(("properties", "passengers"))
    assert _names(model, passengers) == ["items"]
    items = model.index(0, 0, passengers)
    assert items.data(NODE_PATH_ROLE) == ("properties", "passengers", "items")
    assert _names(model, items) == ["name"]
    assert model.index(0, 1, passengers).data() == "object"
    assert model.index_for_path(("properties", "passengers"), 1).data() == "array of object"
    assert model.index_for_path(("properties", "cabin"), 1).data() == "string (enum)"
    assert model.index_for_path(TRIP, 3).data() == "Where and when."


def test_required_column_reflects_the_parents_required_list() -> None:
    model, _ = _model()
    checked = Qt.CheckState.Checked
    assert model.index_for_path(TRIP, 2).data(Qt.ItemDataRole.CheckStateRole) == checked
    passengers = model.index_for_path(("properties", "passengers"), 2)
    assert passengers.data(Qt.ItemDataRole.CheckStateRole) == Qt.CheckState.Unchecked
    items = model.index(0, 2, model.index_for_path(("properties", "passengers")))
    assert items.data(Qt.ItemDataRole.CheckStateRole) is None  # an item schema has no name


def test_round_trip_of_every_example_tool_is_identical(example_path: Path) -> None:
    document = AgentDocument.load(example_path)
    for index, tool in enumerate(document.agent.tools):
        original = json.loads(json.dumps(tool.parameters))
        assert same_json(schema_to_json(parameters_from_json(tool.parameters)), original)
        model = ParameterTreeModel(ToolRef(document, index))
        assert model.root_error is None
        first = model.paths()[0]
        model.set_keyword(first, "description", "changed")
        document.undo_stack.undo()
        assert same_json(document.agent.tools[index].parameters, original)


def test_add_property_is_one_undoable_step_with_unique_names() -> None:
    model, document = _model()
    count = document.undo_stack.count()

    first = model.add_property(TRIP)
    second = model.add_property(TRIP)

    assert first == (*TRIP, "properties", "new_property")
    assert second == (*TRIP, "properties", "new_property_2")
    assert document.undo_stack.count() == count + 2
    assert _names(model, model.index_for_path(TRIP))[-2:] == ["new_property", "new_property_2"]
    assert model.node_json(first) == {"type": "string"}
    document.undo_stack.undo()
    document.undo_stack.undo()
    assert same_json(_params_of(model), _params())
    document.undo_stack.redo()
    assert _names(model, model.index_for_path(TRIP))[-1] == "new_property"


def test_add_into_a_non_object_is_refused_and_reported() -> None:
    model, document = _model()
    count = document.undo_stack.count()

    assert model.add_property(("properties", "cabin")) is None

    assert document.undo_stack.count() == count
    assert "only be added to an object" in reporter().history[-1].message


def test_remove_drops_the_required_entry_and_undo_restores_order() -> None:
    model, document = _model()

    assert model.remove(("properties", "cabin"))

    assert _names(model) == ["trip", "passengers"]
    assert _params_of(model)["required"] == ["trip"]
    document.undo_stack.undo()
    assert same_json(_params_of(model), _params())


def test_removing_the_last_required_property_drops_required() -> None:
    model, _ = _model()
    model.remove(DEST)
    assert "required" not in _params_of(model)["properties"]["trip"]


def test_rename_keeps_position_required_and_unknown_keywords() -> None:
    model, document = _model()

    assert model.rename(DEST, "city")

    trip = _params_of(model)["properties"]["trip"]
    assert list(trip["properties"]) == ["city", "nights"]
    assert trip["required"] == ["city"]
    assert trip["properties"]["city"]["x-ui"] == {"widget": "city"}
    document.undo_stack.undo()
    assert same_json(_params_of(model), _params())


@pytest.mark.parametrize(
    ("name", "why"),
    [
        ("nights", "already a property"),
        ("2nd", "cannot be used in a template"),
        ("first name", "cannot be used in a template"),
        ("", "needs a name"),
    ],
)
def test_rename_refuses_duplicates_and_names_templates_cannot_use(name: str, why: str) -> None:
    model, document = _model()
    count = document.undo_stack.count()

    assert model.name_problem(DEST, name) is not None
    assert not model.rename(DEST, name)

    assert document.undo_stack.count() == count
    assert why in reporter().history[-1].message
    assert same_json(_params_of(model), _params())


def test_rename_through_set_data_edits_the_name_column() -> None:
    model, _ = _model()
    assert model.setData(model.index_for_path(("properties", "cabin")), "cabin_class")
    assert _names(model) == ["trip", "passengers", "cabin_class"]
    assert _params_of(model)["required"] == ["trip", "cabin_class"]


def test_required_check_box_syncs_the_parents_required_list() -> None:
    model, document = _model()
    index = model.index_for_path(("properties", "passengers"), 2)

    assert model.setData(index, Qt.CheckState.Checked.value, Qt.ItemDataRole.CheckStateRole)

    assert _params_of(model)["required"] == ["trip", "cabin", "passengers"]
    assert index.data(Qt.ItemDataRole.CheckStateRole) == Qt.CheckState.Checked
    model.set_required(("properties", "passengers"), False)
    model.set_required(("properties", "trip"), False)
    model.set_required(("properties", "cabin"), False)
    assert "required" not in _params_of(model)
    for _ in range(4):
        document.undo_stack.undo()
    assert same_json(_params_of(model), _params())


def test_move_reorders_properties_and_undo_puts_them_back() -> None:
    model, document = _model()

    assert model.move_by(("properties", "cabin"), -1) == ("properties", "cabin")

    assert _names(model) == ["trip", "cabin", "passengers"]
    assert list(_params_of(model)["properties"]) == ["trip", "cabin", "passengers"]
    document.undo_stack.undo()
    assert _names(model) == ["trip", "passengers", "cabin"]
    document.undo_stack.redo()
    assert _names(model) == ["trip", "cabin", "passengers"]


def test_move_into_another_object_carries_the_required_flag() -> None:
    model, document = _model()

    moved = model.move(("properties", "cabin"), TRIP, 0)

    assert moved == (*TRIP, "properties", "cabin")
    params = _params_of(model)
    assert params["required"] == ["trip"]
    assert list(params["properties"]["trip"]["properties"]) == ["cabin", "destination", "nights"]
    assert params["properties"]["trip"]["required"] == ["destination", "cabin"]
    document.undo_stack.undo()
    assert same_json(_params_of(model), _params())


def test_move_refuses_name_clashes_and_moving_into_itself() -> None:
    model, _ = _model()
    model.add_property((), "destination")
    assert model.move(("properties", "destination"), TRIP, 0) is None
    assert "already a property there" in reporter().history[-1].message
    assert model.move(TRIP, TRIP, 0) is None


def test_drag_and_drop_moves_a_property_before_the_drop_row() -> None:
    model, _ = _model()
    data = model.mimeData([model.index_for_path(("properties", "cabin"))])
    action = Qt.DropAction.MoveAction

    assert not model.canDropMimeData(
        data, action, 0, 0, model.index_for_path(("properties", "cabin"))
    )
    assert model.dropMimeData(data, action, 0, 0, QModelIndex())
    assert _names(model) == ["cabin", "trip", "passengers"]

    data = model.mimeData([model.index_for_path(("properties", "cabin"))])
    assert model.dropMimeData(data, action, -1, -1, model.index_for_path(TRIP))
    assert _names(model, model.index_for_path(TRIP)) == ["destination", "nights", "cabin"]


def test_duplicate_inserts_a_copy_after_the_original() -> None:
    model, document = _model()

    copy = model.duplicate(TRIP)

    assert copy == ("properties", "trip_copy")
    assert _names(model) == ["trip", "trip_copy", "passengers", "cabin"]
    params = _params_of(model)
    assert params["properties"]["trip_copy"] == params["properties"]["trip"]
    assert params["properties"]["trip_copy"] is not params["properties"]["trip"]
    assert params["required"] == ["trip", "cabin", "trip_copy"]
    document.undo_stack.undo()
    assert same_json(_params_of(model), _params())


def test_item_schema_can_be_added_to_an_array_without_one() -> None:
    model, _ = _model({"type": "object", "properties": {"tags": {"type": "array"}}})
    tags = ("properties", "tags")
    assert model.rowCount(model.index_for_path(tags)) == 0

    assert model.add_item_schema(tags) == (*tags, "items")

    assert _names(model, model.index_for_path(tags)) == ["items"]
    assert model.add_item_schema(tags) is None  # there is one already


def test_typing_in_one_keyword_merges_into_one_undo_step_until_sealed() -> None:
    model, document = _model()
    count = document.undo_stack.count()

    for text in ("C", "Ci", "Cit", "City"):
        model.set_keyword(DEST, "description", text, typing=True)
    model.set_keyword(DEST, "title", "T", typing=True)
    assert document.undo_stack.count() == count + 2
    model.seal()
    model.set_keyword(DEST, "title", "To", typing=True)
    assert document.undo_stack.count() == count + 3

    document.undo_stack.undo()
    document.undo_stack.undo()
    assert model.node_json(DEST)["description"] == "City"
    document.undo_stack.undo()
    assert same_json(_params_of(model), _params())


def test_a_keyword_of_the_wrong_json_type_is_refused_with_its_path() -> None:
    model, document = _model()
    count = document.undo_stack.count()

    assert not model.set_keyword((*TRIP, "properties", "nights"), "minimum", "one")

    assert document.undo_stack.count() == count
    assert "properties.trip.properties.nights.minimum" in reporter().history[-1].message


def test_removing_a_keyword() -> None:
    model, _ = _model()
    model.set_keyword((*TRIP, "properties", "nights"), "minimum", REMOVE)
    assert model.node_json((*TRIP, "properties", "nights")) == {"type": "integer"}


def test_changing_the_type_drops_what_no_longer_applies() -> None:
    params = {
        "type": "object",
        "properties": {
            "code": {
                "type": "string",
                "title": "Code",
                "pattern": "^[A-Z]+$",
                "enum": ["A", "B"],
                "x-note": "kept",
            }
        },
    }
    model, document = _model(params)
    code = ("properties", "code")

    assert model.set_type(code, "integer")
    assert model.node_json(code) == {"type": "integer", "title": "Code", "x-note": "kept"}
    assert model.set_type(code, "array")
    assert model.node_json(code)["items"] == {"type": "string"}
    assert _names(model, model.index_for_path(code)) == ["items"]
    assert model.set_type(code, "object")
    assert model.node_json(code) == {
        "type": "object",
        "title": "Code",
        "x-note": "kept",
        "properties": {},
    }
    for _ in range(3):
        document.undo_stack.undo()
    assert same_json(_params_of(model), params)


def test_selection_and_expansion_indexes_follow_a_rename_and_its_undo() -> None:
    model, document = _model()
    nights = QPersistentModelIndex(model.index_for_path((*TRIP, "properties", "nights")))
    destination = QPersistentModelIndex(model.index_for_path(DEST, 3))

    model.rename(DEST, "city")
    assert destination.isValid() and destination.column() == 3
    assert model.path_for_index(destination) == (*TRIP, "properties", "city")
    model.move_by((*TRIP, "properties", "nights"), -1)
    assert nights.row() == 0 and nights.data() == "nights"
    document.undo_stack.undo()
    document.undo_stack.undo()
    assert model.path_for_index(destination) == DEST
    assert nights.data() == "nights" and nights.row() == 1


def test_the_model_passes_qts_model_tester_through_edits(qtmodeltester: Any) -> None:
    model, document = _model()
    qtmodeltester.check(model)
    model.add_property(TRIP)
    model.remove(("properties", "passengers"))
    model.move_by(("properties", "cabin"), -1)
    model.set_keyword(TRIP, "description", "x")
    document.undo_stack.undo()
    document.undo_stack.undo()
    qtmodeltester.check(model)


def test_problems_are_found_per_node_and_for_the_whole_schema() -> None:
    model, _ = _model()
    nights = (*TRIP, "properties", "nights")
    model.set_keyword(nights, "maximum", 0)
    model.set_keyword(("properties", "cabin"), "default", "first")

    assert model.node_problems(nights) == [("minimum", "1 is greater than maximum 0")]
    assert [k for k, _ in model.node_problems(("properties", "cabin"))] == ["default"]
    assert model.node_problems(TRIP) == []  # the children's problems are theirs
    paths = [p.path for p in model.schema_problems()]
    assert paths == ["properties.cabin.default", "properties.trip.properties.nights.minimum"]
    assert model.problems_at(nights) == [
        "properties.trip.properties.nights.minimum: 1 is greater than maximum 0"
    ]


def test_root_problems_come_from_the_root_keywords_only() -> None:
    model, _ = _model()
    model.set_keyword((), "required", ["trip", "nowhere"])
    assert model.node_problems(()) == [("required[1]", '"nowhere" is not defined in properties')]


def test_a_root_that_is_not_an_object_leaves_the_tree_empty_with_a_reason() -> None:
    model, _ = _model()
    tool = model.tool()
    assert tool is not None
    model.replace_parameters({"type": "string"}, text="x")  # refused: must stay an object
    assert model.rowCount() == 3
    assert "object" in reporter().history[-1].message


def test_the_tree_empties_when_the_tool_is_deleted() -> None:
    model, document = _model()
    document.remove_item(("metadata", "tools", 1), text="Delete tool")
    assert model.rowCount() == 0
    assert model.add_property() is None
    document.undo_stack.undo()
    assert _names(model) == ["trip", "passengers", "cabin"]


def test_edits_follow_the_tool_after_it_moves() -> None:
    model, document = _model()
    document.move_item(("metadata", "tools", 1), 0, text="Move tool")
    model.add_property((), "late")
    assert "late" in document.agent.tools[0].parameters["properties"]
    assert "late" not in document.agent.tools[1].parameters["properties"]


def test_a_tool_without_parameters_schema_keys_is_listed_empty() -> None:
    tool = ToolDefinition(name="bare")
    assert tool.parameters == {"type": "object", "properties": {}}
