"""Each client's rule trips on a tool that breaks it and passes the one just inside it; the
bundled examples pass every client (Gemini's schema subset drops some of their keywords: listed,
with the reason)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from mcp_export.clients.entry import server_name
from mcp_export.lint import LINT_CLIENTS, Finding, LintTool, lint_agent, lint_tools
from schema_types.files.agent_file import load_agent

EXAMPLES = sorted((Path(__file__).parents[2] / "resources" / "examples").glob("*.agent.yaml"))
PLAIN = {"type": "object", "properties": {"city": {"type": "string", "description": "City."}}}


def tool(
    name: str = "book_flight", description: str = "Books a flight.", **schema: Any
) -> LintTool:
    return LintTool(name, description, schema or PLAIN)


def many(count: int) -> list[LintTool]:
    return [tool(f"tool_{index}") for index in range(count)]


def rules(found: list[Finding], client: str) -> set[tuple[str | None, str]]:
    return {(f.tool, f.rule) for f in found if f.client == client}


# (client, rule, tools that trip it, tools just inside it, server name)
CASES: list[tuple[str, str, list[LintTool], list[LintTool], str]] = [
    ("claude-desktop", "name", [tool("fetch.page")], [tool("fetch_page")], "web"),
    ("claude-desktop", "name", [tool("n" * 65)], [tool("n" * 64)], "web"),
    # mcp__web__ is 10 characters: 54 more reach the 64.
    ("claude-code", "name-after-prefix", [tool("n" * 55)], [tool("n" * 54)], "web"),
    ("claude-code", "name-after-prefix", [tool("fetch.page")], [tool("fetch-page")], "web"),
    ("vscode", "name-characters", [tool("fetch.page")], [tool("Fetch-Page_2")], "web"),
    ("vscode", "name-length", [tool("n" * 47)], [tool("n" * 46)], "web"),
    ("vscode", "description", [tool(description=" ")], [tool(description="Books.")], "web"),
    ("vscode", "tool-count", many(129), many(128), "web"),
    ("cursor", "name-after-prefix", [tool("n" * 57)], [tool("n" * 56)], "web"),
    ("cursor", "tool-count", many(41), many(40), "web"),
    ("openai", "name", [tool("fetch.page")], [tool("fetch-page")], "web"),
    (
        "openai",
        "description-length",
        [tool(description="d" * 1025)],
        [tool(description="d" * 1024)],
        "web",
    ),
    ("openai", "tool-count", many(129), many(128), "web"),
    ("gemini", "name", [tool("n" * 64)], [tool("n" * 63)], "web"),
]


@pytest.mark.parametrize(
    ("client", "rule", "trips", "passes", "server"),
    CASES,
    ids=[f"{c[0]}-{c[1]}-{i}" for i, c in enumerate(CASES)],
)
def test_each_rule_trips_outside_its_limit_and_passes_inside(
    client: str, rule: str, trips: list[LintTool], passes: list[LintTool], server: str
):
    tripped = lint_tools(trips, server)
    passed = lint_tools(passes, server)

    assert rule in {r for _, r in rules(tripped, client)}
    assert rule not in {r for _, r in rules(passed, client)}
    assert all(f.source for f in tripped)


def test_cursor_counts_the_server_name_in_the_tool_name():
    name = "n" * 50
    assert rules(lint_tools([tool(name)], "s" * 9), "cursor") == set()
    assert rules(lint_tools([tool(name)], "s" * 10), "cursor") == {(name, "name-after-prefix")}


GEMINI_TRIPS: dict[str, dict[str, Any]] = {
    "$ref": {"type": "object", "properties": {"a": {"$ref": "#/$defs/a"}}, "$defs": {"a": {}}},
    "oneOf": {"type": "object", "properties": {"a": {"oneOf": [{"type": "string"}]}}},
    "allOf": {"type": "object", "allOf": [{"required": ["a"]}]},
    "additionalProperties": {"type": "object", "additionalProperties": False},
    "type": {"type": "object", "properties": {"a": {"type": ["string", "null"]}}},
    "format: uuid": {"type": "object", "properties": {"a": {"type": "string", "format": "uuid"}}},
    "pattern": {"type": "object", "properties": {"a": {"type": "string", "pattern": "^x$"}}},
}


@pytest.mark.parametrize(("keyword", "schema"), GEMINI_TRIPS.items(), ids=GEMINI_TRIPS.keys())
def test_gemini_names_each_keyword_its_schema_cannot_carry(keyword: str, schema: dict[str, Any]):
    found = [f for f in lint_tools([tool(**schema)], "web") if f.rule == "schema-keyword"]

    assert any(f.message.startswith(f"{keyword} at ") for f in found), [f.message for f in found]
    assert {f.client for f in found} == {"gemini"} and {f.severity for f in found} == {"warning"}


def test_a_schema_within_gemini_subset_passes():
    schema: dict[str, Any] = {
        "type": "object",
        "description": "A booking.",
        "properties": {
            "when": {"type": "string", "format": "date-time", "title": "When"},
            "cabin": {"type": "string", "enum": ["economy", "business"], "default": "economy"},
            "seats": {"type": "integer", "format": "int32", "minimum": 1, "maximum": 9},
            "names": {"type": "array", "items": {"type": "string"}, "minItems": 1},
            "note": {"anyOf": [{"type": "string"}, {"type": "integer"}], "nullable": True},
        },
        "required": ["when"],
    }
    assert lint_tools([tool(**schema)], "web") == []


def test_the_schema_keyword_is_found_however_deep():
    deep: dict[str, Any] = {
        "type": "object",
        "properties": {
            "a": {
                "type": "array",
                "items": {
                    "anyOf": [
                        {"type": "object", "properties": {"b": {"type": "string", "const": "x"}}}
                    ]
                },
            }
        },
    }
    [finding] = lint_tools([tool(**deep)], "web", ["gemini"])
    assert finding.message.startswith("const at properties.a.items.anyOf[0].properties.b:")


@pytest.mark.parametrize("example", EXAMPLES, ids=[p.name for p in EXAMPLES])
def test_the_bundled_examples_pass_every_client(example: Path):
    agent = load_agent(example)
    found = lint_agent(agent, example.resolve(), server_name(agent))

    assert [f for f in found if f.severity == "error"] == []
    # What is changed is only what Gemini's parameters Schema has no field for (said per keyword).
    assert {(f.client, f.rule) for f in found} <= {("gemini", "schema-keyword")}


def test_every_client_has_rules_with_sources():
    tripping = [tool("n."), tool(description="d" * 1100), *many(130)]
    found = lint_tools(tripping, "s" * 60)
    assert {f.client for f in found} == set(LINT_CLIENTS)
    assert all(f.source and ("http" in f.source or "/" in f.source) for f in found)
