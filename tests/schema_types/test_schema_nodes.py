"""Typed schema nodes: lossless JSON round trip, edits through the model, walking and paths."""

from __future__ import annotations

import json
from typing import Any

import pydantic
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from schema_types.errors import SchemaDefinitionError
from schema_types.schema.nodes import (
    ArraySchema,
    BooleanSchema,
    IntegerSchema,
    NumberSchema,
    ObjectSchema,
    RawSchema,
    StringSchema,
    iter_nodes,
    parameter_paths,
    parameters_from_json,
    schema_from_json,
    schema_to_json,
)

# --- strategies: JSON-Schema-shaped dicts ------------------------------------------------------

names = st.text(alphabet="abcdefgh_-. ", min_size=1, max_size=6)
scalars = (
    st.none()
    | st.booleans()
    | st.integers(-1000, 1000)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=6)
)
json_values = st.recursive(
    scalars,
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=4), inner, max_size=3)
    ),
    max_leaves=6,
)
counts = st.integers(0, 20)
numbers = st.integers(-50, 50) | st.floats(-50, 50, allow_nan=False)

# Keywords no node models, and keywords that belong to another type than the node's.
UNKNOWN = ["x-ui", "$defs", "anyOf", "const", "$schema", "$comment", "extras", "min_length", "data"]
FOREIGN = ["minimum", "minLength", "items", "properties", "required", "pattern", "uniqueItems"]

COMMON = {
    "title": st.text(max_size=8),
    "description": st.text(max_size=8),
    "enum": st.lists(json_values, max_size=3),
    "default": json_values,
    "examples": st.lists(json_values, max_size=2),
}


def _shuffled(data: dict[str, Any]) -> st.SearchStrategy[dict[str, Any]]:
    return st.permutations(list(data.items())).map(dict)


def _node(kind: str, own: dict[str, st.SearchStrategy[Any]]) -> st.SearchStrategy[dict[str, Any]]:
    optional: dict[str, st.SearchStrategy[Any]] = {
        key: json_values for key in UNKNOWN + FOREIGN if key not in own
    }
    optional.update(COMMON)
    optional.update(own)
    return st.fixed_dictionaries({"type": st.just(kind)}, optional=optional).flatmap(_shuffled)


# Sub-schemas the builder cannot model; their keywords are kept as they are, even malformed ones.
RAW_EXAMPLES: list[dict[str, Any]] = [
    {"type": ["string", "null"]},
    {"type": "null"},
    {"type": "strnig", "minLength": "x"},
    {"type": ["integer"], "minimum": "x"},
    {"$ref": "#/$defs/x"},
    {"anyOf": [{"type": "string"}, {"type": "integer"}]},
    {"type": 5},
    {},
]
RAW_KEYWORDS: dict[str, st.SearchStrategy[Any]] = {
    "type": st.sampled_from([["string", "null"], "null", "strnig", 5]),
    "$ref": st.just("#/$defs/x"),
    "description": st.text(max_size=5),
    "x-ui": json_values,
}
raw_schemas: st.SearchStrategy[dict[str, Any]] = st.sampled_from(RAW_EXAMPLES) | (
    st.fixed_dictionaries({}, optional=RAW_KEYWORDS).flatmap(_shuffled)
)


def _leaf_schemas() -> st.SearchStrategy[dict[str, Any]]:
    number_keywords = {
        "minimum": numbers,
        "maximum": numbers,
        "exclusiveMinimum": numbers,
        "exclusiveMaximum": numbers,
        "multipleOf": numbers,
    }
    string_keywords = {
        "minLength": counts,
        "maxLength": counts,
        "pattern": st.sampled_from(["^a", "[0-9]+", "("]),
        "format": st.sampled_from(["date", "email", "made-up"]),
    }
    return (
        _node("string", string_keywords)
        | _node("number", number_keywords)
        | _node("integer", number_keywords)
        | _node("boolean", {})
        | raw_schemas
    )


def _containers(children: st.SearchStrategy[Any]) -> st.SearchStrategy[dict[str, Any]]:
    # Boolean and raw sub-schemas where the typed nodes hold sub-schemas.
    sub = children | st.booleans() | raw_schemas
    return (
        _node(
            "array",
            {"items": sub, "minItems": counts, "maxItems": counts, "uniqueItems": st.booleans()},
        )
        | _objects(children)
        | st.fixed_dictionaries({"anyOf": st.lists(children, max_size=2)})
    )


def _objects(children: st.SearchStrategy[Any]) -> st.SearchStrategy[dict[str, Any]]:
    sub = children | st.booleans() | raw_schemas
    return _node(
        "object",
        {
            "properties": st.dictionaries(names, sub, max_size=3),
            "required": st.lists(names, max_size=3),
            "additionalProperties": sub,
        },
    )


schemas = st.recursive(_leaf_schemas(), _containers, max_leaves=8)
parameter_roots = _objects(schemas)

# --- round trip --------------------------------------------------------------------------------


@settings(max_examples=300)
@given(schemas)
def test_any_schema_round_trips_exactly_with_key_order(data: dict[str, Any]) -> None:
    before = json.dumps(data)
    out = schema_to_json(schema_from_json(data))
    assert out == data
    assert json.dumps(out) == before  # key order kept, and the input was not mutated
    assert json.dumps(data) == before


@settings(max_examples=200)
@given(parameter_roots)
def test_any_parameters_root_round_trips_exactly(data: dict[str, Any]) -> None:
    node = parameters_from_json(data)
    assert isinstance(node, ObjectSchema)
    assert json.dumps(schema_to_json(node)) == json.dumps(data)
    assert node.model_dump() == data  # nodes embed in other models as plain JSON Schema


def test_nodes_are_chosen_by_type_and_the_rest_is_raw() -> None:
    data = {
        "type": "object",
        "properties": {
            "s": {"type": "string"},
            "n": {"type": "number"},
            "i": {"type": "integer"},
            "b": {"type": "boolean"},
            "a": {"type": "array", "items": {"type": ["string", "null"]}},
            "nul": {"type": "null"},
            "any": {"anyOf": [{"type": "string"}, {"type": "integer"}]},
            "bare": {},
            "never": False,
        },
    }
    node = parameters_from_json(data)
    props = node.properties or {}
    kinds = {name: type(sub).__name__ for name, sub in props.items()}
    assert kinds == {
        "s": "StringSchema",
        "n": "NumberSchema",
        "i": "IntegerSchema",
        "b": "BooleanSchema",
        "a": "ArraySchema",
        "nul": "RawSchema",
        "any": "RawSchema",
        "bare": "RawSchema",
        "never": "bool",
    }
    array = props["a"]
    assert isinstance(array, ArraySchema)
    assert isinstance(array.items, RawSchema)
    assert array.items.data == {"type": ["string", "null"]}


def test_unmodelled_keywords_land_in_extras_by_their_json_name() -> None:
    node = schema_from_json({"type": "string", "const": "x", "extras": 1, "min_length": 2})
    assert isinstance(node, StringSchema)
    assert node.extras == {"const": "x", "extras": 1, "min_length": 2}
    assert node.min_length is None


def test_null_default_is_kept_and_clear_default_removes_it() -> None:
    node = schema_from_json({"type": "string", "default": None})
    assert isinstance(node, StringSchema)
    assert schema_to_json(node) == {"type": "string", "default": None}
    node.clear_default()
    assert schema_to_json(node) == {"type": "string"}


# --- edits through the model -------------------------------------------------------------------


def test_edits_through_the_model_produce_the_expected_dict() -> None:
    params = parameters_from_json(
        {"type": "object", "x-ui": {"order": 1}, "properties": {"city": {"type": "string"}}}
    )
    params.title = "Trip"
    assert params.properties is not None
    params.properties["nights"] = IntegerSchema(minimum=1, description="how many nights")
    params.set_required("city")
    params.set_required("nights")
    params.set_required("city", False)
    city = params.properties["city"]
    assert isinstance(city, StringSchema)
    city.min_length = 2
    assert schema_to_json(params) == {
        "type": "object",
        "x-ui": {"order": 1},
        "properties": {
            "city": {"type": "string", "minLength": 2},
            "nights": {"type": "integer", "description": "how many nights", "minimum": 1},
        },
        "title": "Trip",
        "required": ["nights"],
    }
    params.set_required("nights", False)
    assert "required" not in schema_to_json(params)


def test_a_keyword_set_to_none_disappears() -> None:
    node = schema_from_json({"type": "integer", "minimum": 0, "maximum": 9})
    assert isinstance(node, IntegerSchema)
    node.maximum = None
    assert schema_to_json(node) == {"type": "integer", "minimum": 0}


def test_a_new_node_emits_only_what_was_set_in_canonical_order() -> None:
    node = ArraySchema(
        unique_items=True, items=BooleanSchema(), title="Flags", examples=[[True]], min_items=1
    )
    out = schema_to_json(node)
    assert list(out) == ["type", "title", "items", "minItems", "uniqueItems", "examples"]
    assert out["items"] == {"type": "boolean"}


def test_assignment_is_validated_strictly() -> None:
    node = StringSchema()
    with pytest.raises(pydantic.ValidationError):
        node.min_length = "3"  # type: ignore[assignment]
    with pytest.raises(pydantic.ValidationError):
        NumberSchema(minimum=True)


def test_wrong_keyword_types_are_reported_by_json_path() -> None:
    data = {
        "type": "object",
        "properties": {
            "passengers": {
                "type": "array",
                "items": {
                    "type": "object",
                    "properties": {"age": {"type": "integer", "minimum": "x"}},
                    "required": ["age", 3],
                },
            },
            "name": {"type": "string", "minLength": 2.5, "title": None},
            "tags": {"type": "array", "items": 3},
        },
        "required": 3,
    }
    with pytest.raises(SchemaDefinitionError) as caught:
        schema_from_json(data)
    assert [str(p) for p in caught.value.problems] == [
        "properties.name.minLength: expected integer, got number 2.5",
        "properties.name.title: expected string, got null",
        'properties.passengers.items.properties.age.minimum: expected number, got string "x"',
        "properties.passengers.items.required[1]: expected string, got integer 3",
        "properties.tags.items: expected object or boolean, got integer 3",
        "required: expected array, got integer 3",
    ]


def test_the_parameters_root_must_be_an_object_schema() -> None:
    roots: list[dict[str, Any]] = [{}, {"type": "string"}, {"properties": {}}]
    for data in roots:
        with pytest.raises(SchemaDefinitionError) as caught:
            parameters_from_json(data)
        assert str(caught.value) == "the parameters root must be an object schema (type: object)"
    assert schema_to_json(parameters_from_json({"type": "object"})) == {"type": "object"}


# --- walking -----------------------------------------------------------------------------------

TRIP = {
    "type": "object",
    "properties": {
        "trip": {
            "type": "object",
            "description": "where and when",
            "properties": {
                "destination": {"type": "string", "description": "city"},
                "dates": {"type": "object", "properties": {"start": {"type": "string"}}},
            },
            "required": ["destination"],
        },
        "passengers": {
            "type": "array",
            "items": {"type": "object", "properties": {"age": {"type": "integer"}}},
        },
        "note": {"type": ["string", "null"]},
        "extra": {"anyOf": [{"type": "string"}]},
    },
    "required": ["passengers"],
    "additionalProperties": {"type": "string"},
}


def test_iter_nodes_yields_every_node_with_its_schema_path() -> None:
    paths = [(path, type(node).__name__) for path, node in iter_nodes(schema_from_json(TRIP))]
    assert paths == [
        ("", "ObjectSchema"),
        ("properties.trip", "ObjectSchema"),
        ("properties.trip.properties.destination", "StringSchema"),
        ("properties.trip.properties.dates", "ObjectSchema"),
        ("properties.trip.properties.dates.properties.start", "StringSchema"),
        ("properties.passengers", "ArraySchema"),
        ("properties.passengers.items", "ObjectSchema"),
        ("properties.passengers.items.properties.age", "IntegerSchema"),
        ("properties.note", "RawSchema"),
        ("properties.extra", "RawSchema"),
        ("additionalProperties", "StringSchema"),
    ]


def test_parameter_paths_are_dotted_and_do_not_enter_arrays() -> None:
    for params in (TRIP, parameters_from_json(TRIP)):
        found = [(p.path, p.type, p.description, p.required) for p in parameter_paths(params)]
        assert found == [
            ("trip", "object", "where and when", False),
            ("trip.destination", "string", "city", True),
            ("trip.dates", "object", None, False),
            ("trip.dates.start", "string", None, False),
            ("passengers", "array", None, True),
            ("note", "string | null", None, False),
            ("extra", None, None, False),
        ]


def test_parameter_paths_of_a_malformed_dict_list_what_can_be_understood() -> None:
    data = {"type": "object", "properties": {"a": 3, "b": {"type": "string"}}, "required": "b"}
    assert [(p.path, p.type, p.required) for p in parameter_paths(data)] == [
        ("a", None, False),
        ("b", "string", False),
    ]
    assert parameter_paths({"type": "object", "properties": []}) == []
