"""Sample values, defaults and argument validation against a tool's parameters."""

from __future__ import annotations

import copy
import http.server
import threading
from typing import Any

import pytest

from schema_types import arguments as _arguments
from schema_types.arguments import (
    apply_defaults,
    sample_arguments,
    sample_value,
    validate_arguments,
)
from schema_types.errors import ArgumentsError, SchemaDefinitionError
from schema_types.json_text import format_path

BOOKING: dict[str, Any] = {
    "type": "object",
    "properties": {
        "destination": {"type": "string", "description": "city"},
        "cabin": {"type": "string", "enum": ["economy", "business"], "default": "economy"},
        "departure_date": {"type": "string", "format": "date"},
        "trip": {
            "type": "object",
            "properties": {
                "nights": {"type": "integer", "minimum": 1, "default": 2},
                "hotel": {"type": "boolean", "default": True},
            },
        },
        "passengers": {
            "type": "array",
            "minItems": 1,
            "items": {
                "type": "object",
                "properties": {
                    "name": {"type": "string"},
                    "age": {"type": "integer", "minimum": 0},
                    "meal": {"type": "string", "default": "standard"},
                },
                "required": ["name", "age"],
                "additionalProperties": False,
            },
        },
    },
    "required": ["destination", "departure_date"],
    "additionalProperties": False,
}


# --- samples -----------------------------------------------------------------------------------


def test_sample_prefers_examples_then_default_then_enum() -> None:
    schema = {"type": "string", "examples": ["Rome"], "default": "Oslo", "enum": ["Paris"]}
    assert sample_value(schema) == "Rome"
    assert sample_value({"type": "string", "default": "Oslo", "enum": ["Paris"]}) == "Oslo"
    assert sample_value({"type": "string", "enum": ["Paris", "Rome"]}) == "Paris"
    assert sample_value({"type": "integer", "default": None}) is None


def test_string_samples_follow_format_else_name_the_property() -> None:
    formats = {
        "date": "2026-01-31",
        "date-time": "2026-01-31T09:00:00Z",
        "email": "person@example.com",
        "uri": "https://example.com",
    }
    for fmt, expected in formats.items():
        assert sample_value({"type": "string", "format": fmt}, "x") == expected
    assert sample_value({"type": "string"}, "destination") == "<destination>"
    assert sample_value({"type": "string"}) == "<value>"
    assert sample_value({"type": "string", "minLength": 12}, "city") == "<city>xxxxxx"
    assert sample_value({"type": "string", "maxLength": 3}, "city") == "<ci"


def test_number_samples_stay_within_bounds() -> None:
    assert sample_value({"type": "integer"}) == 1
    assert sample_value({"type": "integer", "minimum": 5, "maximum": 9}) == 5
    assert sample_value({"type": "integer", "exclusiveMinimum": 5}) == 6
    assert sample_value({"type": "integer", "maximum": -4}) == -4
    assert sample_value({"type": "number"}) == 1.5
    assert sample_value({"type": "number", "minimum": 10}) == 10
    assert sample_value({"type": "number", "exclusiveMinimum": 1, "exclusiveMaximum": 1.5}) == 1.25
    assert sample_value({"type": "number", "maximum": 0.5}) == 0.5
    assert sample_value({"type": "boolean"}) is True
    assert sample_value({"type": ["integer", "null"], "minimum": 3}) == 3


def test_array_samples_repeat_to_reach_min_items() -> None:
    schema = {"type": "array", "items": {"type": "string"}, "minItems": 2}
    assert sample_value(schema, "tags") == ["<tags>", "<tags>"]
    assert sample_value({"type": "array", "items": {"type": "integer"}}) == [1]
    assert sample_value({"type": "array", "maxItems": 0}) == []


def test_sample_arguments_fill_every_property_recursively() -> None:
    assert sample_arguments(BOOKING) == {
        "destination": "<destination>",
        "cabin": "economy",
        "departure_date": "2026-01-31",
        "trip": {"nights": 2, "hotel": True},
        "passengers": [{"name": "<name>", "age": 0, "meal": "standard"}],
    }
    validate_arguments(BOOKING, sample_arguments(BOOKING))  # samples are valid arguments


def test_untyped_schemas_sample_sensibly() -> None:
    assert sample_value({"anyOf": [{"type": "integer"}, {"type": "string"}]}) == 1
    assert sample_value({"properties": {"a": {"type": "boolean"}}}) == {"a": True}
    assert sample_value({}, "note") == "<note>"
    assert sample_value({"const": "fixed"}) == "fixed"


def test_samples_are_copies() -> None:
    schema = {"type": "object", "default": {"a": [1]}}
    sample_value(schema)["a"].append(2)
    assert schema["default"] == {"a": [1]}


# --- defaults ----------------------------------------------------------------------------------


def test_defaults_fill_nested_objects_and_array_items_that_are_present() -> None:
    arguments = {"destination": "Rome", "trip": {"nights": 5}, "passengers": [{"age": 3}]}
    before = copy.deepcopy(arguments)
    assert apply_defaults(BOOKING, arguments) == {
        "destination": "Rome",
        "trip": {"nights": 5, "hotel": True},
        "passengers": [{"age": 3, "meal": "standard"}],
        "cabin": "economy",
    }
    assert arguments == before  # the caller's arguments are not touched


def test_defaults_do_not_create_absent_objects() -> None:
    assert "trip" not in apply_defaults(BOOKING, {})


# --- validation --------------------------------------------------------------------------------


def test_valid_arguments_come_back_with_defaults_applied() -> None:
    arguments = {
        "destination": "Rome",
        "departure_date": "2026-03-01",
        "trip": {},
        "passengers": [{"name": "Ada", "age": 36}],
    }
    assert validate_arguments(BOOKING, arguments) == {
        **arguments,
        "cabin": "economy",
        "trip": {"nights": 2, "hotel": True},
        "passengers": [{"name": "Ada", "age": 36, "meal": "standard"}],
    }


def test_every_bad_argument_is_listed_by_path() -> None:
    arguments = {
        "cabin": "first",
        "departure_date": "2026-13-01",
        "trip": {"nights": 0},
        "passengers": [
            {"name": "Ada", "age": "x"},
            {"name": "Bob", "age": -3, "pet": "cat"},
            {"age": 1},
        ],
        "budget": 100,
    }
    with pytest.raises(ArgumentsError) as caught:
        validate_arguments(BOOKING, arguments)
    assert [str(problem) for problem in caught.value.problems] == [
        "budget: unexpected argument (allowed: destination, cabin, departure_date, trip, "
        "passengers)",
        'cabin: "first" is not one of "economy", "business"',
        'departure_date: "2026-13-01" is not a valid date',
        "destination: required argument is missing",
        'passengers[0].age: expected integer, got string "x"',
        "passengers[1].age: -3 is less than the minimum of 0",
        "passengers[1].pet: unexpected argument (allowed: name, age, meal)",
        "passengers[2].name: required argument is missing",
        "trip.nights: 0 is less than the minimum of 1",
    ]


def test_more_constraint_messages_read_plainly() -> None:
    params = {
        "type": "object",
        "properties": {
            "code": {"type": "string", "pattern": "^[A-Z]{3}$", "maxLength": 3},
            "tags": {"type": "array", "minItems": 2, "uniqueItems": True},
            "step": {"type": "number", "multipleOf": 5, "exclusiveMaximum": 20},
            "pick": {"anyOf": [{"type": "string", "maxLength": 2}, {"type": "integer"}]},
            "kind": {"const": "trip"},
            "note": {"type": ["string", "null"]},
        },
    }
    arguments = {"code": "ab", "tags": ["a"], "step": 7, "pick": "long", "kind": "x", "note": 1}
    with pytest.raises(ArgumentsError) as caught:
        validate_arguments(params, arguments)
    assert [str(problem) for problem in caught.value.problems] == [
        'code: "ab" does not match the pattern "^[A-Z]{3}$"',
        'kind: must be "trip", got "x"',
        "note: expected string or null, got integer 1",
        'pick: "long" is too long (maximum length 2)',
        "step: 7 is not a multiple of 5",
        "tags: expected at least 2 items, got 1",
    ]
    with pytest.raises(ArgumentsError) as caught:
        validate_arguments(params, {"tags": ["a", "a"], "step": 25})
    assert [str(problem) for problem in caught.value.problems] == [
        "step: 25 must be less than 20",
        "tags: has duplicate items",
    ]


def test_arguments_must_be_an_object() -> None:
    cases = {
        "arguments must be a JSON object, got an array": [1, 2],
        "arguments must be a JSON object, got null": None,
        "arguments must be a JSON object, got a string": "Rome",
    }
    for message, arguments in cases.items():
        with pytest.raises(ArgumentsError) as caught:
            validate_arguments(BOOKING, arguments)
        assert [(p.path, p.message) for p in caught.value.problems] == [("", message)]
        assert str(caught.value) == message


def test_an_invalid_parameters_schema_is_a_schema_error_not_an_arguments_error() -> None:
    params = {"type": "object", "properties": {"age": {"type": "integer", "minimum": "x"}}}
    with pytest.raises(SchemaDefinitionError) as caught:
        validate_arguments(params, {"age": 3})
    assert str(caught.value) == 'properties.age.minimum: expected number, got string "x"'


def test_validators_are_cached_per_schema() -> None:
    _arguments._cached_validator.cache_clear()
    validate_arguments(BOOKING, {"destination": "Rome", "departure_date": "2026-03-01"})
    validate_arguments(
        copy.deepcopy(BOOKING), {"destination": "Oslo", "departure_date": "2026-03-02"}
    )
    info = _arguments._cached_validator.cache_info()
    assert (info.hits, info.misses) == (1, 1)


def test_format_path_renders_indexes_and_odd_names() -> None:
    assert format_path([]) == ""
    assert format_path(["passengers", 1, "age"]) == "passengers[1].age"
    assert format_path([0, "a"]) == "[0].a"
    assert format_path(["properties", "first name", "x-ui", "$defs"]) == (
        'properties["first name"].x-ui.$defs'
    )


# --- a schema that cannot be used, arguments too deep: errors, never a traceback ---------------

TREE: dict[str, Any] = {
    "type": "object",
    "properties": {"root": {"$ref": "#/$defs/node"}},
    "$defs": {
        "node": {
            "type": "object",
            "properties": {"children": {"type": "array", "items": {"$ref": "#/$defs/node"}}},
        }
    },
}


def _nested_children(levels: int) -> dict[str, Any]:
    node: dict[str, Any] = {}
    for _ in range(levels):
        node = {"children": [node]}
    return node


def test_a_schema_that_refers_to_itself_through_properties_validates_a_tree() -> None:
    # Recursion that descends into the value ends with the value: such a schema is sound.
    arguments = {"root": _nested_children(20)}
    assert validate_arguments(TREE, arguments) == arguments


def test_arguments_nested_past_the_limit_are_an_arguments_error() -> None:
    with pytest.raises(ArgumentsError) as caught:
        validate_arguments(TREE, {"root": _nested_children(150)})

    assert [str(p) for p in caught.value.problems] == [
        "the arguments nest too deeply to validate (objects and arrays at most 100 levels "
        "deep): send flatter arguments"
    ]


@pytest.mark.parametrize(
    ("schema", "expected"),
    [
        (
            {"type": "object", "properties": {"a": {"$ref": "#/properties/a"}}},
            'properties.a.$ref: the reference "#/properties/a" leads back here',
        ),
        (
            {"type": "object", "properties": {"a": {"$ref": "#/$defs/nowhere"}}},
            'properties.a.$ref: cannot resolve the reference "#/$defs/nowhere"',
        ),
    ],
    ids=["loop", "unresolvable"],
)
def test_a_schema_whose_references_break_is_a_schema_error_at_call_time(
    schema: dict[str, Any], expected: str
) -> None:
    # A loaded agent never gets here (its file is refused); a schema from elsewhere still
    # gets an error that says why, not a RecursionError from deep inside jsonschema.
    with pytest.raises(SchemaDefinitionError) as caught:
        validate_arguments(schema, {"a": 1})

    assert str(caught.value).startswith(expected)


def test_a_reference_to_another_document_is_never_fetched() -> None:
    # jsonschema would download the URL a $ref names, during a call, with no time limit.
    asked: list[str] = []

    class Schema(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            asked.append(self.path)
            body = b'{"type": "string"}'
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, format: str, *args: Any) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Schema)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        url = f"http://127.0.0.1:{server.server_address[1]}/name.json"
        schema = {"type": "object", "properties": {"name": {"$ref": url}}}
        with pytest.raises(SchemaDefinitionError) as caught:
            validate_arguments(schema, {"name": 5})
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=10)

    assert asked == []
    assert str(caught.value).startswith(
        f'properties.name.$ref: cannot resolve the reference "{url}"'
    )


@pytest.mark.parametrize(
    ("value", "divisor", "fits"),
    [
        (19.99, 0.01, True),
        (0.3, 0.1, True),
        (4.35, 0.05, True),
        (19.995, 0.01, False),
        (1.2345, 0.01, False),
        (10, 2.5, True),
        (7, 5, False),
        (1e308, 0.01, True),
    ],
)
def test_multiple_of_judges_numbers_as_written_not_as_binary_floats(
    value: float, divisor: float, fits: bool
) -> None:
    params = {"type": "object", "properties": {"price": {"type": "number", "multipleOf": divisor}}}
    if fits:
        assert validate_arguments(params, {"price": value}) == {"price": value}
    else:
        with pytest.raises(ArgumentsError) as caught:
            validate_arguments(params, {"price": value})
        assert [str(p) for p in caught.value.problems] == [
            f"price: {value!r} is not a multiple of {divisor}"
        ]
