"""A tool's output schema: checked as its parameters are, and answers checked against it.

``check_output_schema`` is the parameters check (``schema.check``) with one rule said in the
output's terms: MCP requires a tool's ``outputSchema`` to be an object schema, so a root that is
not ``type: object`` is reported as what MCP requires. ``output_problems`` validates an answer
with the validator the served call uses for arguments (``schema_types.arguments``), without
applying defaults: what the model answered is what the caller receives.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from schema_types.errors import Problem
from schema_types.schema.check import ROOT_MESSAGE, check_parameters_schema

__all__ = ["OUTPUT_ROOT_MESSAGE", "check_output_schema", "output_problems"]

OUTPUT_ROOT_MESSAGE = (
    "MCP requires a tool's outputSchema to be an object schema (type: object); put the value "
    "in a property of an object (e.g. {type: object, properties: {items: ...}})"
)


def check_output_schema(data: Mapping[str, Any]) -> list[Problem]:
    """Every problem of an output schema, sorted by path; ``[]`` when it is sound.

    Args:
        data: the tool's ``outputSchema`` as a plain JSON Schema dict.
    """
    if not isinstance(data, Mapping):
        return [Problem("", OUTPUT_ROOT_MESSAGE)]
    return [
        Problem(p.path, OUTPUT_ROOT_MESSAGE) if not p.path and p.message == ROOT_MESSAGE else p
        for p in check_parameters_schema(data)
    ]


def output_problems(schema: Mapping[str, Any], value: Any) -> list[Problem]:
    """What is wrong with ``value`` as an answer of a tool with output schema ``schema``, by
    JSON path (``flights[1].price: -3 is less than the minimum of 0``); ``[]`` when it fits.

    Raises:
        SchemaDefinitionError: the schema itself cannot be used (loaded agents are checked).
    """
    # jsonschema only when an answer is checked: loading an agent file checks the schema alone.
    from schema_types.arguments import value_problems

    return value_problems(schema, value, missing="required property is missing")
