"""The quick proof never disagrees with jsonschema: whatever it says fits, the one validator
finds nothing wrong with; what fits, it proves (so big valid answers skip the walk); a schema with
a keyword it does not model gets no proof at all."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from schema_types.arguments import checking_validator
from schema_types.output_schema import output_problems
from schema_types.value_proof import proof_for

SCHEMAS: list[dict[str, Any]] = [
    {
        "type": "object",
        "properties": {
            "a": {"type": "string", "minLength": 1, "maxLength": 3, "pattern": "^x"},
            "n": {"type": "number", "minimum": 0, "exclusiveMaximum": 10},
            "i": {"type": "integer", "maximum": 5},
            "b": {"type": "boolean"},
            "z": {"type": "null"},
            "e": {"enum": [1, "one", None, [1]]},
            "c": {"const": {"k": 1}},
            "t": {"type": ["string", "null"]},
        },
        "required": ["a", "n"],
    },
    {
        "type": "object",
        "properties": {
            "items": {
                "type": "array",
                "minItems": 1,
                "maxItems": 3,
                "items": {
                    "type": "object",
                    "properties": {"id": {"type": "integer"}, "tags": {"type": "array"}},
                    "required": ["id"],
                    "additionalProperties": False,
                },
            },
            "extra": {"type": "object", "additionalProperties": {"type": "number"}},
        },
        "required": ["items"],
        "maxProperties": 2,
    },
]

scalars = (
    st.none()
    | st.booleans()
    | st.integers(-20, 20)
    | st.floats(-20, 20, allow_nan=False)
    | st.sampled_from(["", "x", "xy", "xyzw", "y", "one"])
)
json_values = st.recursive(
    scalars,
    lambda inner: (
        st.lists(inner, max_size=4)
        | st.dictionaries(
            st.sampled_from(["a", "n", "i", "b", "z", "e", "c", "t", "items", "id", "tags", "k"]),
            inner,
            max_size=5,
        )
    ),
    max_leaves=12,
)


@pytest.mark.parametrize("schema", SCHEMAS, ids=["scalars", "nested"])
@settings(max_examples=400, deadline=None)
@given(value=json_values)
def test_what_the_proof_accepts_jsonschema_finds_nothing_wrong_with(
    schema: dict[str, Any], value: Any
) -> None:
    proof = proof_for(schema)
    assert proof is not None
    valid = not list(checking_validator(schema).iter_errors(value))
    if proof(value):
        assert valid, value


def test_valid_answers_are_proved() -> None:
    first, nested = (proof_for(s) for s in SCHEMAS)
    assert first is not None and nested is not None
    assert first({"a": "xy", "n": 9.5, "i": 5.0, "e": 1.0, "c": {"k": 1}, "t": None})
    assert not first({"a": "xy", "n": 10})  # exclusiveMaximum
    assert not first({"a": "xy", "n": True})  # a boolean is no number
    assert nested({"items": [{"id": 1, "tags": []}], "extra": {"q": 2}})
    assert not nested({"items": [{"id": 1, "more": 1}]})  # additionalProperties false


@pytest.mark.parametrize(
    "schema",
    [
        {"type": "object", "properties": {"d": {"type": "string", "format": "date"}}},
        {"type": "object", "anyOf": [{"required": ["a"]}]},
        {"type": "object", "properties": {"r": {"$ref": "#/$defs/x"}}, "$defs": {"x": {}}},
        {"type": "object", "properties": {"m": {"type": "number", "multipleOf": 0.01}}},
    ],
)
def test_a_keyword_the_proof_does_not_model_leaves_it_to_jsonschema(schema: dict[str, Any]) -> None:
    assert proof_for(schema) is None


def test_a_value_the_proof_cannot_vouch_for_still_gets_jsonschemas_messages() -> None:
    problems = output_problems(SCHEMAS[1], {"items": [{"id": "one"}]})
    assert [str(p) for p in problems] == ['items[0].id: expected integer, got string "one"']
