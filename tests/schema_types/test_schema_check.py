"""The parameters schema check: meta-schema problems and our own, each with its exact message."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings

from schema_types.arguments import sample_arguments
from schema_types.errors import SchemaDefinitionError
from schema_types.schema.check import check_parameters_schema, ensure_parameters_schema
from schema_types.schema.nodes import parameters_from_json
from tests.schema_types.test_schema_nodes import parameter_roots


def _messages(data: Any) -> list[str]:
    return [str(problem) for problem in check_parameters_schema(data)]


def _params(**properties: Any) -> dict[str, Any]:
    return {"type": "object", "properties": properties}


def test_a_sound_schema_has_no_problems() -> None:
    data = {
        "type": "object",
        "properties": {
            "destination": {"type": "string", "minLength": 2, "pattern": "^[A-Z]"},
            "cabin": {"type": "string", "enum": ["economy", "business"], "default": "economy"},
            "nights": {"type": "integer", "minimum": 1, "maximum": 30, "examples": [3, 7]},
            "when": {"$ref": "#/$defs/date", "default": "2026-02-01"},
            "passengers": {"type": "array", "items": {"type": "object"}, "minItems": 1},
        },
        "required": ["destination"],
        "$defs": {"date": {"type": "string", "format": "date"}},
    }
    assert check_parameters_schema(data) == []
    ensure_parameters_schema(data)  # does not raise


def test_the_root_must_be_an_object_schema() -> None:
    root = "the parameters root must be an object schema (type: object)"
    assert _messages({"type": "string"}) == [root]
    assert _messages({}) == [root]
    assert _messages([1]) == ["the parameters schema must be a JSON object, got array [1]"]


def test_meta_schema_problems_name_the_keyword_path() -> None:
    data = _params(
        age={"type": "integer", "minimum": "x"},
        name={"type": "string", "minLength": -1},
        tags={"type": "array", "items": 3},
    )
    data["required"] = 3
    assert _messages(data) == [
        'properties.age.minimum: expected number, got string "x"',
        "properties.name.minLength: -1 is less than the minimum of 0",
        "properties.tags.items: expected object or boolean, got integer 3",
        "required: expected array, got integer 3",
    ]


def test_an_unknown_type_is_named_with_the_known_ones() -> None:
    known = "(expected one of string, number, integer, boolean, array, object, null)"
    assert _messages(
        _params(x={"type": "strnig"}, y={"type": ["string", "nul"]}, z={"type": 5})
    ) == [
        f'properties.x.type: unknown type "strnig" {known}',
        f'properties.y.type: unknown type "nul" {known}',
        "properties.z.type: expected a type name or a list of type names, got integer 5",
    ]


def test_required_names_must_be_properties() -> None:
    data = _params(destination={"type": "string"})
    data["required"] = ["destination", "destinaton"]
    assert _messages(data) == ['required[1]: "destinaton" is not defined in properties']


def test_required_names_defined_elsewhere_are_not_flagged() -> None:
    data = _params(a={"type": "string"})
    data.update(required=["b"], patternProperties={"^b$": {"type": "string"}})
    assert check_parameters_schema(data) == []


def test_default_enum_and_examples_must_fit_their_own_schema() -> None:
    data = _params(
        cabin={"type": "string", "enum": ["economy", "business", 3], "default": "first"},
        nights={"type": "integer", "minimum": 1, "examples": [2, 0]},
        when={"type": "string", "format": "date", "default": "next week"},
        trip={
            "type": "object",
            "properties": {"to": {"type": "string"}},
            "required": ["to"],
            "additionalProperties": False,
            "default": {"from": "Oslo"},
        },
    )
    assert _messages(data) == [
        'properties.cabin.default: "first" is not one of "economy", "business", 3',
        "properties.cabin.enum[2]: expected string, got integer 3",
        "properties.nights.examples[1]: 0 is less than the minimum of 1",
        "properties.trip.default.from: unexpected argument (allowed: to)",
        "properties.trip.default.to: required argument is missing",
        'properties.when.default: "next week" is not a valid date',
    ]


def test_a_default_is_checked_through_a_reference() -> None:
    data = _params(cabin={"$ref": "#/$defs/cabin", "default": "first"})
    data["$defs"] = {"cabin": {"enum": ["economy", "business"]}}
    assert _messages(data) == [
        'properties.cabin.default: "first" is not one of "economy", "business"'
    ]


def test_an_unresolvable_reference_is_flagged() -> None:
    data = _params(cabin={"$ref": "#/$defs/cabni", "default": "first"})
    data["$defs"] = {"cabin": {"enum": ["economy"]}}
    assert _messages(data) == [
        'properties.cabin.$ref: cannot resolve the reference "#/$defs/cabni": $defs has no '
        '"cabni" (it has "cabin")'
    ]


def test_bounds_the_wrong_way_round_are_flagged() -> None:
    data = _params(
        age={"type": "integer", "minimum": 5, "maximum": 3},
        name={"type": "string", "minLength": 5, "maxLength": 3},
        tags={"type": "array", "minItems": 3, "maxItems": 1},
    )
    assert _messages(data) == [
        "properties.age.minimum: 5 is greater than maximum 3",
        "properties.name.minLength: 5 is greater than maxLength 3",
        "properties.tags.minItems: 3 is greater than maxItems 1",
    ]


def test_a_pattern_must_compile() -> None:
    data = _params(code={"type": "string", "pattern": "[A-Z", "default": "X"})
    assert _messages(data) == [
        "properties.code.pattern: invalid regular expression: "
        "unterminated character set at position 0"
    ]


def test_a_malformed_keyword_does_not_stop_the_other_checks() -> None:
    # The broken node's own default cannot be checked, but its siblings still are.
    data = _params(
        age={"type": "integer", "minimum": "x", "default": "old"},
        cabin={"enum": ["a"], "default": "b"},
    )
    assert _messages(data) == [
        'properties.age.minimum: expected number, got string "x"',
        'properties.cabin.default: "b" is not one of "a"',
    ]


def test_problems_are_sorted_by_path_naturally() -> None:
    properties = {f"p{i}": {"type": "strnig"} for i in (10, 2)}
    data = {"type": "object", "properties": properties, "required": [f"r{i}" for i in range(11)]}
    paths = [problem.path for problem in check_parameters_schema(data)]
    assert paths == [
        "properties.p10.type",
        "properties.p2.type",
        *[f"required[{i}]" for i in range(11)],
    ]


def test_ensure_raises_with_every_problem() -> None:
    data = _params(x={"type": "strnig"})
    data["required"] = ["y"]
    with pytest.raises(SchemaDefinitionError) as caught:
        ensure_parameters_schema(data)
    assert [p.path for p in caught.value.problems] == ["properties.x.type", "required[0]"]


@settings(max_examples=300)
@given(parameter_roots)
def test_the_check_answers_any_schema_shaped_input(data: dict[str, Any]) -> None:
    # The editor runs the check on every edit, so any JSON-Schema-shaped input must be answered.
    problems = check_parameters_schema(data)
    if not problems:
        parameters_from_json(data)
        sample_arguments(data)


@pytest.mark.parametrize(
    ("bounds", "keyword"),
    [
        ({"exclusiveMinimum": 10, "maximum": 5}, "exclusiveMinimum"),
        ({"exclusiveMinimum": 5, "maximum": 5}, "exclusiveMinimum"),
        ({"minimum": 5, "exclusiveMaximum": 5}, "minimum"),
        ({"exclusiveMinimum": 3, "exclusiveMaximum": 3}, "exclusiveMinimum"),
    ],
)
def test_an_empty_range_with_exclusive_bounds_is_flagged(
    bounds: dict[str, int], keyword: str
) -> None:
    schema = {"type": "object", "properties": {"n": {"type": "number", **bounds}}}

    problems = check_parameters_schema(schema)

    assert [p.path for p in problems] == [f"properties.n.{keyword}"]
    assert "leaves no number below" in problems[0].message


def test_a_range_open_at_one_end_is_sound() -> None:
    schema = {
        "type": "object",
        "properties": {"n": {"type": "number", "exclusiveMinimum": 0, "maximum": 0.5}},
    }
    assert check_parameters_schema(schema) == []
