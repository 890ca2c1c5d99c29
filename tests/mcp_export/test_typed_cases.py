"""A typed tool's cases: the answer is checked against the outputSchema unasked, and ``fields``
address parts of it by JSON Pointer, so "the cheapest flight is under 300" is a case, not a
judge. ``metaagent test`` runs as a real subprocess against ``FakeOpenAIServer``."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from pydantic import ValidationError

from mcp_export.testing.expect import CallOutcome, check
from schema_types.cases import Expectations
from tests.fakes._script import Reply, RequestBody, text
from tests.fakes.cli import metaagent
from tests.fakes.mcp_clients import book_tool, write_agent
from tests.fakes.openai_server import FakeOpenAIServer

SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "cheapest": {
            "type": "object",
            "properties": {"airline": {"type": "string"}, "price": {"type": "number"}},
            "required": ["airline", "price"],
        },
        "flights": {"type": "array", "items": {"type": "string"}},
        "currency": {"type": "string"},
    },
    "required": ["cheapest", "flights", "currency"],
}
ANSWER = {
    "cheapest": {"airline": "SAS", "price": 249.5},
    "flights": ["SK4411", "DY1302"],
    "currency": "EUR",
}


def _answer(body: RequestBody) -> Reply:
    return text(json.dumps(ANSWER))


def test_fields_by_json_pointer_decide_a_case_without_a_judge(tmp_path: Path) -> None:
    cases = [
        {
            "name": "cheapest under 300",
            "arguments": {"destination": "Oslo"},
            "expect": {
                "fields": {
                    "/cheapest/price": {"atMost": 300},
                    "/cheapest/airline": {"oneOf": ["SAS", "Norwegian"], "matches": "^S"},
                    "/flights": {"atLeast": 2},
                    "/currency": {"equals": "EUR"},
                }
            },
        },
        {
            "name": "cheapest under 200",
            "arguments": {"destination": "Oslo"},
            "expect": {"fields": {"/cheapest/price": {"atMost": 200}, "/seats": {"atLeast": 1}}},
        },
    ]
    with FakeOpenAIServer(responder=_answer) as model:
        path = write_agent(
            tmp_path / "typed.agent.yaml",
            base_url=model.base_url,
            tools=[book_tool(outputSchema=SCHEMA, tests=cases)],
        )
        done = metaagent("test", str(path))
    out = done.stdout
    assert done.returncode == 1, out + done.stderr
    assert any(
        line.startswith("PASS") and "cheapest under 300" in line for line in out.splitlines()
    )
    assert any(
        line.startswith("FAIL") and "cheapest under 200" in line for line in out.splitlines()
    )
    assert 'fields["/cheapest/price"].atMost: /cheapest/price is 249.5, more than 200' in out
    assert "fields[\"/seats\"]: the answer has no member 'seats'" in out


def _outcome(value: Any) -> CallOutcome:
    return CallOutcome(json.dumps(value), False, 1.0, value=value)


def test_a_typed_answer_is_checked_against_the_output_schema_unasked() -> None:
    wrong = {"cheapest": {"airline": "SAS", "price": "cheap"}, "flights": []}
    failures = [str(f) for f in check(Expectations(), _outcome(wrong), output_schema=SCHEMA)]
    assert failures == [
        'outputSchema: cheapest.price: expected number, got string "cheap"',
        "outputSchema: currency: required property is missing",
    ]
    assert check(Expectations(), _outcome(ANSWER), output_schema=SCHEMA) == []


def test_an_untyped_answer_is_read_as_json_for_fields() -> None:
    expect = Expectations.model_validate(
        {"fields": {"/n": {"atLeast": 3}, "": {"equals": {"n": 2}}}}
    )
    outcome = CallOutcome('```json\n{"n": 2}\n```', False, 1.0)
    assert [str(f) for f in check(expect, outcome)] == [
        'fields["/n"].atLeast: /n is 2, less than 3'
    ]


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        ({"cheapest/price": {"atMost": 3}}, "is not a JSON Pointer: start it with '/'"),
        ({"/a~2": {"atMost": 3}}, "'~' must be written ~0"),
        ({"/a": {}}, "say what the field must be"),
        ({"/a": {"matches": "("}}, "not a regular expression"),
    ],
)
def test_a_malformed_field_check_is_refused_with_what_to_write(
    fields: dict[str, Any], message: str
) -> None:
    with pytest.raises(ValidationError, match=message.replace("(", r"\(")):
        Expectations.model_validate({"fields": fields})


def test_equals_null_is_a_check_and_true_is_not_one() -> None:
    expect = Expectations.model_validate({"fields": {"/a": {"equals": None}, "/b": {"equals": 1}}})
    failures = [str(f) for f in check(expect, _outcome({"a": 0, "b": True}))]
    assert failures == [
        'fields["/a"].equals: /a is 0, not null',
        'fields["/b"].equals: /b is true, not 1',
    ]
