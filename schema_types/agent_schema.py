"""The agent file's own JSON Schema, generated from the models, for editors that check YAML.

``agent_json_schema()`` is what ``metaagent schema`` prints and what ``agent.schema.json`` (shipped
beside this module, kept equal to the generated one by a test) holds; the YAML language server
(VS Code's YAML extension and others) completes and checks an ``*.agent.yaml`` that starts with
``# yaml-language-server: $schema=<path or URL of that file>``.

The schema and the loader agree in one direction everywhere: every file the loader accepts the
schema accepts (unknown keys too: every model keeps them). The other direction holds except for
rules only the loader knows, listed in :data:`LOADER_ONLY_RULES`; where the models coerce a
value (``"10"`` read as 10) the schema asks for the plain form, see :data:`SCHEMA_STRICTER`.
"""

from __future__ import annotations

import copy
import json
from functools import cache
from importlib import resources
from typing import Any

from schema_types.agent import Agent

__all__ = [
    "LOADER_ONLY_RULES",
    "SCHEMA_FILE",
    "SCHEMA_ID",
    "SCHEMA_STRICTER",
    "agent_json_schema",
    "schema_text",
    "shipped_schema_text",
]

SCHEMA_FILE = "agent.schema.json"
"""The schema's file name inside the ``schema_types`` package."""

SCHEMA_ID = "urn:meta-agent-studio:agent-file"

LOADER_ONLY_RULES = (
    "YAML syntax, duplicate keys, aliases, file size and nesting depth (the schema sees data)",
    "tool names unique within metadata.tools, and test-case names unique within a tool",
    "each tool's parameters, outputSchema and expect.jsonSchema are sound JSON Schemas "
    "(meta-schema, references that resolve and do not loop)",
    "expect.matches is a regular expression Python compiles",
    'providers.<id>.stream reads as "true"/"false" and maxConcurrentRequests as a whole number '
    'of at least 1 or "unlimited" (the schema checks only their types)',
)
"""What the loader refuses and the schema lets through: cross-value checks JSON Schema cannot say,
and checks that need Python (regular expressions, the schema soundness proof)."""

SCHEMA_STRICTER = (
    "numbers and booleans written as quoted text ('10', 'true') load, as the models coerce "
    "them; the schema asks for the plain YAML number or boolean",
)
"""Where the schema flags a value the loader takes: the models' lax coercions."""

_TOOL_NAME = {
    # TOOL_NAME_PATTERN, said without '$' (which lets a final newline through in Python's
    # dialect, the one the jsonschema library uses, and not in ECMAScript's, the editors' one).
    "minLength": 1,
    "maxLength": 128,
    "not": {"pattern": "[^A-Za-z0-9_.\\-]"},
    "description": "The MCP tool name: 1 to 128 letters, digits, '_', '-' or '.'.",
}

_PROVIDER_VALUES = {
    "type": "object",
    "description": (
        "Settings of one provider: addresses, keys as references (env://NAME, keyring://…), "
        "and the endpoint settings stream and maxConcurrentRequests."
    ),
    "properties": {
        "stream": {
            "type": ["boolean", "string"],
            "description": 'Whether answers are streamed: true or false ("true"/"false").',
        },
        "maxConcurrentRequests": {
            "type": ["integer", "string"],
            "description": (
                'Requests in flight at once: a whole number of at least 1, or "unlimited".'
            ),
        },
    },
    "additionalProperties": {"type": "string"},
}

_TRANSPORT = {
    # McpServerConfig._check_transport: stdio (the default) needs a command, the others a url.
    "if": {"properties": {"type": {"const": "stdio"}}},
    "then": {
        "required": ["command"],
        "properties": {"command": {"type": "string", "minLength": 1}},
    },
    "else": {"required": ["url"], "properties": {"url": {"type": "string", "minLength": 1}}},
}

_MISPLACED_TOOLS = {
    "not": {},
    "description": "Tools are not read here: they go under metadata.tools.",
}


@cache
def _generated() -> dict[str, Any]:
    schema = Agent.model_json_schema(by_alias=True, mode="validation")
    defs = schema["$defs"]
    defs["ToolDefinition"]["properties"]["name"].update(_TOOL_NAME)
    defs["McpServerConfig"].update(_TRANSPORT)
    properties = schema["properties"]
    properties["providers"] = {
        "type": "object",
        "title": "Providers",
        "description": "Per provider id (openai, anthropic, ollama, …), its settings.",
        "additionalProperties": _PROVIDER_VALUES,
    }
    properties["tools"] = _MISPLACED_TOOLS
    return {
        "$schema": "http://json-schema.org/draft-07/schema#",
        "$id": SCHEMA_ID,
        **{key: value for key, value in schema.items() if key != "title"},
        "title": "Meta Agent Studio agent file (*.agent.yaml)",
    }


def agent_json_schema() -> dict[str, Any]:
    """The agent file's JSON Schema, generated from the models (a fresh copy).

    Declared draft-07, the draft every YAML language server reads; it uses nothing newer
    (``$defs`` is only where the ``$ref`` pointers lead)."""
    return copy.deepcopy(_generated())


def schema_text() -> str:
    """The schema as the shipped file holds it: indented JSON with a final newline."""
    return json.dumps(_generated(), indent=2, ensure_ascii=False) + "\n"


def shipped_schema_text() -> str:
    """The text of the ``agent.schema.json`` shipped in the package."""
    return resources.files("schema_types").joinpath(SCHEMA_FILE).read_text(encoding="utf-8")
