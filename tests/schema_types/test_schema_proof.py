"""The quick proof of soundness never says yes where ``jsonschema`` would find a problem.

``schema._proof`` stands in for the meta-schema check and the value checks on the schemas it can
judge, so it is held to them: every keyword the meta-schema constrains and every keyword
``jsonschema`` validates is one it knows, and on many generated schemas, right and wrong, a yes
from it means ``jsonschema`` finds nothing. The bundled examples take the quick way.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from jsonschema import Draft202012Validator
from jsonschema_specifications import REGISTRY  # type: ignore[import-untyped]

from schema_types.files.agent_file import load_agent
from schema_types.schema._meta import meta_problems, value_problems
from schema_types.schema._proof import META_KEYWORDS, VALUE_KEYWORDS, proves_sound
from schema_types.schema._refs import subschemas

EXAMPLES = sorted((Path(__file__).parents[2] / "resources" / "examples").glob("*.agent.yaml"))


def _jsonschema_finds(schema: dict[str, Any]) -> list[Any]:
    return meta_problems(schema) + value_problems(schema, list(subschemas(schema)))


def test_every_keyword_the_meta_schema_constrains_is_known() -> None:
    meta = Draft202012Validator.META_SCHEMA
    constrained = set(meta.get("properties", {}))
    for part in meta["allOf"]:
        vocabulary = REGISTRY.contents(f"https://json-schema.org/draft/2020-12/{part['$ref']}")
        constrained |= set(vocabulary.get("properties", {}))

    assert constrained - META_KEYWORDS == set()


def test_every_keyword_jsonschema_validates_is_known() -> None:
    assert set(Draft202012Validator.VALIDATORS) - VALUE_KEYWORDS == set()


@pytest.mark.parametrize("value", [1, 1.5, True, None, [], {}])
def test_no_format_constrains_a_value_that_is_not_a_string(value: Any) -> None:
    # The proof skips "format" for such values, as every checker of jsonschema's does.
    checker = Draft202012Validator.FORMAT_CHECKER
    assert all(checker.conforms(value, name) for name in checker.checkers)


@pytest.mark.parametrize("example", EXAMPLES, ids=[p.name for p in EXAMPLES])
def test_the_bundled_examples_are_proven_without_jsonschema(example: Path) -> None:
    for tool in load_agent(example).tools:
        assert proves_sound(tool.parameters), tool.name
        assert _jsonschema_finds(tool.parameters) == []


# Each a mistake on its own: the proof must leave it to jsonschema, which finds it.
WRONG: list[dict[str, Any]] = [
    {"minLength": -1},
    {"minLength": 1.5},
    {"maxItems": True},
    {"minimum": "1"},
    {"maximum": False},
    {"multipleOf": 0},
    {"required": ["a", "a"]},
    {"required": "a"},
    {"type": ["string", "string"]},
    {"type": []},
    {"type": "strnig"},
    {"enum": 3},
    {"examples": 3},
    {"uniqueItems": 1},
    {"allOf": []},
    {"properties": {"a": 3}},
    {"items": 3},
    {"dependentRequired": {"a": [1]}},
    {"$ref": 3},
    {"title": 3},
    {"deprecated": "yes"},
    {"type": "integer", "default": 1.5},
    {"type": "integer", "default": True},
    {"type": "number", "default": None},
    {"enum": [1], "default": True},
    {"enum": [1], "default": None},
    {"enum": [None], "default": 0},
    {"enum": ["a"], "default": "b"},
    {"const": 1, "default": "1"},
    {"type": "string", "minLength": 3, "default": "ab"},
    {"type": "string", "maxLength": 1, "default": "ab"},
    {"maximum": 3, "default": 4},
    {"minimum": 3, "default": 2.5},
    {"exclusiveMinimum": 0, "default": 0},
    {"exclusiveMaximum": 0, "default": 0.0},
    {"pattern": "^a", "default": "b"},
    {"format": "date", "default": "2026-02-30"},
    {"format": "date", "default": "2026-2-3"},
    {"format": "email", "default": "nobody"},
    {"type": "string", "enum": ["a", 1]},
    {"type": "string", "examples": ["a", 1]},
    {"type": "array", "items": {"type": "string"}, "default": [1]},
    {"type": "array", "uniqueItems": True, "default": [1, 1.0]},
    {"type": "array", "minItems": 2, "default": [1]},
    {"type": "array", "items": False, "default": [1]},
    {"properties": {"a": {"type": "string"}}, "additionalProperties": False, "default": {"b": 1}},
    {"properties": {"a": {"type": "string"}}, "default": {"a": 1}},
    {"additionalProperties": {"type": "string"}, "default": {"a": 1}},
    {"required": ["a"], "default": {}},
    {"maxProperties": 0, "default": {"a": 1}},
    {"properties": {"a": {"minimum": "0"}}},
    {"items": {"items": {"enum": [1], "default": 2}}},
]

# Sound as written: the proof says so by itself.
RIGHT: list[dict[str, Any]] = [
    {"type": "object", "properties": {"a": {"type": "string"}}, "required": ["a"]},
    {"type": ["string", "null"], "default": None},
    {"type": "integer", "minimum": 1, "maximum": 30, "default": 1.0},
    {"type": "number", "exclusiveMinimum": 0, "examples": [0.5, 2]},
    {"type": "string", "enum": ["economy", "business"], "default": "economy"},
    {"type": "string", "pattern": "^[A-Z]{3}$", "examples": ["LHR"]},
    {"type": "string", "format": "date", "default": "2026-06-01"},
    {"type": "string", "format": "uri"},
    {"type": "array", "items": {"enum": ["a", "b"]}, "uniqueItems": True, "examples": [["a"]]},
    {"type": "array", "uniqueItems": True, "default": [1, True, "1"]},
    {"type": "object", "properties": {"n": {"type": "integer"}}, "default": {"n": 2}},
    {"type": "object", "additionalProperties": False, "default": {}},
    {"minLength": 2, "default": 5},
    {"x-order": [1, 2], "description": "free keywords are free"},
    {"$defs": {"a": {"type": "string"}}, "definitions": {"b": True}},
]


@pytest.mark.parametrize("schema", WRONG, ids=[str(s) for s in WRONG])
def test_a_mistake_is_left_to_jsonschema(schema: dict[str, Any]) -> None:
    assert not proves_sound(schema)
    assert _jsonschema_finds(schema) != []


@pytest.mark.parametrize("schema", RIGHT, ids=[str(s) for s in RIGHT])
def test_a_sound_schema_is_proven(schema: dict[str, Any]) -> None:
    assert proves_sound(schema)
    assert _jsonschema_finds(schema) == []


# Schemas made of the keywords authors use, with right and wrong values alike (right ones more
# often, so that many whole schemas are sound and the proof is tried on them).
_TYPES = ["string", "number", "integer", "boolean", "array", "object", "null"]
_SCALARS = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-3, 3),
    st.floats(-3, 3, allow_nan=False),
    st.sampled_from(["", "a", "ab", "2026-01-31", "2026-02-30", "x@y", "A1"]),
)
_VALUES = st.recursive(
    _SCALARS,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.sampled_from("abc"), inner),
    max_leaves=5,
)
_RIGHT_NUMBERS = st.one_of(st.integers(-3, 3), st.floats(-3, 3, allow_nan=False))
_NUMBERS = st.one_of(_RIGHT_NUMBERS, _RIGHT_NUMBERS, _RIGHT_NUMBERS, st.booleans(), st.just("1"))
_COUNTS = st.one_of(*[st.integers(0, 3)] * 3, st.integers(-1, -1), st.floats(0, 3), st.booleans())
_KEYWORDS: dict[str, st.SearchStrategy[Any]] = {
    "type": st.one_of(
        st.sampled_from([*_TYPES, "strnig"]), st.lists(st.sampled_from(_TYPES), max_size=3)
    ),
    "minimum": _NUMBERS,
    "maximum": _NUMBERS,
    "exclusiveMinimum": _NUMBERS,
    "multipleOf": _NUMBERS,
    "minLength": _COUNTS,
    "maxLength": _COUNTS,
    "minItems": _COUNTS,
    "maxItems": _COUNTS,
    "maxProperties": _COUNTS,
    "pattern": st.sampled_from(["^a", "b$", "[0-9]", 5]),
    "format": st.sampled_from(["date", "email", "uri", "int32", 3]),
    "enum": st.one_of(st.lists(_VALUES, max_size=3), _SCALARS),
    "const": _VALUES,
    "default": _VALUES,
    "examples": st.one_of(st.lists(_VALUES, max_size=2), _SCALARS),
    "required": st.one_of(st.lists(st.sampled_from("ab"), max_size=3), st.just("a")),
    "uniqueItems": st.one_of(st.booleans(), st.just(1)),
    "title": st.one_of(st.just("T"), st.just(3)),
    "deprecated": st.one_of(st.booleans(), st.just(0)),
    "x-note": _VALUES,
    "$id": st.just("item"),
}


def _with_children(children: st.SearchStrategy[Any]) -> st.SearchStrategy[dict[str, Any]]:
    schema_or_bool = st.one_of(children, st.booleans())
    return st.fixed_dictionaries(
        {},
        optional={
            **_KEYWORDS,
            "properties": st.dictionaries(st.sampled_from("ab"), schema_or_bool, max_size=2),
            "items": schema_or_bool,
            "additionalProperties": schema_or_bool,
            "allOf": st.lists(children, max_size=2),
            "not": children,
        },
    )


_SCHEMAS = st.recursive(st.fixed_dictionaries({}, optional=_KEYWORDS), _with_children, max_leaves=4)


@settings(max_examples=600)
@given(_SCHEMAS)
def test_a_proven_schema_is_one_jsonschema_finds_nothing_in(schema: dict[str, Any]) -> None:
    if proves_sound(schema):
        assert _jsonschema_finds(schema) == []
