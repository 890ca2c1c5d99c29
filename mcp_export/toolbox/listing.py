"""What the toolbox makes of one tool a server lists: its annotations as plain JSON, and whether
its ``inputSchema`` can go to a model provider at all.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import mcp_types as types
from jsonschema.exceptions import SchemaError
from jsonschema.validators import Draft202012Validator, validator_for

__all__ = ["input_schema_problem", "tool_annotations"]


def tool_annotations(tool: types.Tool) -> dict[str, Any] | None:
    """A tool's annotations as plain JSON (``readOnlyHint`` …), or None when it has none."""
    if tool.annotations is None:
        return None
    return tool.annotations.model_dump(by_alias=True, exclude_none=True, mode="json")


def input_schema_problem(schema: Mapping[str, Any]) -> str | None:
    """Why a tool's ``inputSchema`` cannot go to a provider, or None when it can."""
    if schema.get("type") != "object":
        return "its inputSchema is not an object schema (type: object)"
    try:
        validator_for(schema, default=Draft202012Validator).check_schema(schema)
    except SchemaError as exc:
        where = ".".join(str(part) for part in exc.path)
        return f"its inputSchema is not a valid JSON Schema: {where or 'root'}: {exc.message}"
    return None
