"""A tool's outputSchema is checked like its parameters, with MCP's object-root rule said in the
output's terms, and answers are checked with the one validator the served call uses."""

from __future__ import annotations

from pathlib import Path

from schema_types.agent_checks import check_agent_data, tool_schema_problems
from schema_types.errors import Problem
from schema_types.output_schema import OUTPUT_ROOT_MESSAGE, check_output_schema, output_problems
from tests.fakes.cli import metaagent

_TOOL = {"name": "t", "parameters": {"type": "object", "properties": {}}, "prompt": "hi"}


def test_a_non_object_output_schema_says_mcp_requires_an_object() -> None:
    problems = check_output_schema({"type": "array", "items": {"type": "string"}})
    assert problems == [Problem("", OUTPUT_ROOT_MESSAGE)]
    assert "MCP requires" in OUTPUT_ROOT_MESSAGE


def test_output_schema_problems_are_located_in_the_agent_file() -> None:
    output = {
        "type": "object",
        "properties": {
            "x": {"type": "integer", "minimum": 5, "maximum": 1},
            "y": {"type": "strnig"},
        },
        "required": ["x", "z"],
    }
    data = {"metadata": {"tools": [_TOOL, {**_TOOL, "name": "u", "outputSchema": output}]}}
    agent, problems = check_agent_data(data, None)
    assert agent is None
    assert [p.path for p in problems] == [
        "metadata.tools[1].outputSchema.properties.x.minimum",
        "metadata.tools[1].outputSchema.properties.y.type",
        "metadata.tools[1].outputSchema.required[1]",
    ]


def test_a_built_agent_reports_its_output_schema_problems_too() -> None:
    data = {"metadata": {"tools": [{**_TOOL, "outputSchema": {"type": "string"}}]}}
    agent, problems = check_agent_data(data, None, check_schemas=False)
    assert agent is not None and problems == []
    (problem,) = tool_schema_problems(agent)
    assert (problem.path, problem.detail) == ("metadata.tools[0].outputSchema", OUTPUT_ROOT_MESSAGE)


def test_answers_are_checked_by_path_without_defaults() -> None:
    schema = {
        "type": "object",
        "properties": {
            "items": {
                "type": "array",
                "items": {
                    "type": "object",
                    "properties": {"price": {"type": "number", "minimum": 0}},
                    "required": ["price"],
                },
            },
            "note": {"type": "string", "default": "none"},
        },
        "required": ["items", "note"],
    }
    found = output_problems(schema, {"items": [{"price": 3}, {"price": -2}, {}]})
    assert [str(p) for p in found] == [
        "items[1].price: -2 is less than the minimum of 0",
        "items[2].price: required property is missing",
        "note: required property is missing",
    ]
    assert output_problems(schema, {"items": [], "note": "ok"}) == []


def test_metaagent_validate_reports_the_output_schema(tmp_path: Path) -> None:
    path = tmp_path / "a.agent.yaml"
    path.write_text(
        "metadata:\n  tools:\n    - name: t\n      prompt: hi\n      outputSchema:\n"
        "        type: array\n",
        encoding="utf-8",
    )
    done = metaagent("validate", str(path))
    assert done.returncode == 1
    assert f"{path}:6:9: metadata.tools[0].outputSchema: MCP requires" in done.stderr
