"""The meta-schema check of a test case's ``expect.jsonSchema``: ``jsonschema``'s verdict, in
linear time.

Each schema below goes through both :func:`meta_schema_error` and ``jsonschema``'s own
``check_schema`` (with its format checks): they must agree on whether it is valid and, for a
schema with one mistake, on the message. Then the shape that took ``check_schema`` over ten
seconds, 50 000 pattern properties, must be read (the file loads) within a bounded subprocess.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from jsonschema import Draft202012Validator
from jsonschema.exceptions import SchemaError

from schema_types.schema.meta_schema import meta_schema_error

SCHEMAS: list[Any] = [
    True,
    {},
    {"type": "object", "properties": {"a": {"type": "string", "pattern": "^a+$"}}},
    {"type": "object", "patternProperties": {"^p[0-9]+$": {"type": "integer"}}},
    {"$schema": "https://json-schema.org/draft/2020-12/schema", "type": "array"},
    {"$id": "https://example.com/s", "$defs": {"x": {"$anchor": "x1", "type": "null"}}},
    {"$ref": "#/$defs/x", "$defs": {"x": {"type": "string"}}},
    {"$vocabulary": {"https://example.com/v": True}},
    {"dependencies": {"a": ["b"], "c": {"type": "object"}}},
    {"anyOf": [{"type": "string"}, {"minLength": 2}], "x-free": [1, 2]},
    {"required": ["a", "b"], "dependentRequired": {"a": ["b"]}, "multipleOf": 0.5},
    # One mistake each:
    3,
    {"type": "strin"},
    {"type": 3},
    {"minimum": "1"},
    {"minLength": -1},
    {"properties": []},
    {"items": 5},
    {"allOf": []},
    {"required": [1]},
    {"required": ["a", "a"]},
    {"pattern": "("},
    {"patternProperties": {"[": {}}},
    {"properties": {"a": {"properties": {"b": {"pattern": "a{2,1}"}}}}},
    {"$ref": "has space"},
    {"$id": "https://example.com/s#frag"},
    {"$schema": "not a uri"},
    {"$anchor": "1bad"},
    {"$defs": {"x": {"type": "objec"}}},
    {"uniqueItems": "yes"},
    {"multipleOf": 0},
    {"$vocabulary": {"https://example.com/v": "yes"}},
]


def _jsonschema(schema: Any) -> str | None:
    try:
        Draft202012Validator.check_schema(schema)
    except SchemaError as exc:
        return str(exc.message)
    return None


@pytest.mark.parametrize("schema", SCHEMAS, ids=[json.dumps(s)[:40] for s in SCHEMAS])
def test_the_verdict_and_message_are_jsonschemas(schema: Any) -> None:
    assert meta_schema_error(schema) == _jsonschema(schema)


def test_fifty_thousand_pattern_properties_are_checked_in_seconds(tmp_path: Path) -> None:
    patterns = {f"^p{i}_[a-z]+$": {"type": "string"} for i in range(50_000)}
    schema = {"type": "object", "patternProperties": patterns}
    path = tmp_path / "schema.json"
    path.write_text(json.dumps(schema), encoding="utf-8")
    code = (
        "import json, sys\n"
        "from schema_types.cases import Expectations\n"
        "schema = json.loads(open(sys.argv[1], encoding='utf-8').read())\n"
        "checked = Expectations.model_validate({'jsonSchema': schema}).json_schema\n"
        "print(len(checked['patternProperties']))\n"
    )

    done = subprocess.run(
        [sys.executable, "-c", code, str(path)],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )

    assert (done.returncode, done.stdout) == (0, "50000\n"), done.stderr


def test_a_bad_pattern_among_many_is_named() -> None:
    patterns: dict[str, Any] = {f"^p{i}$": {} for i in range(1000)}
    patterns["(unclosed"] = {}

    assert meta_schema_error({"patternProperties": patterns}) == "'(unclosed' is not a 'regex'"


def test_a_pattern_nested_too_deeply_to_compile_is_refused_with_a_reason() -> None:
    assert meta_schema_error({"pattern": "(" * 10_000 + ")" * 10_000}) == (
        "nested too deeply to be checked (or compiled, for a pattern)"
    )
