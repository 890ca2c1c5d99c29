"""Which schema of a tool the parameter builder edits: its parameters or its output schema.

The builder (tree, property panel, JSON view, undo) is one implementation for both; a
:class:`SchemaSlot` tells it the ``ToolDefinition`` field it edits, the words its undo steps and
labels use, and the check that finds the schema's problems.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from schema_types.errors import Problem
from schema_types.output_schema import check_output_schema
from schema_types.schema.check import check_parameters_schema

__all__ = ["OUTPUT", "PARAMETERS", "SchemaSlot"]


@dataclass(frozen=True)
class SchemaSlot:
    """One schema field of a tool, as the builder names and checks it.

    Attributes:
        field: the ``ToolDefinition`` attribute (``parameters``, ``output_schema``).
        title: the builder's heading.
        noun: what one property is called in undo steps ("Add parameter city").
        whole: the schema as a whole in undo steps ("Edit type of the output schema").
        wire_name: what MCP clients get it as (``inputSchema``, ``outputSchema``).
        description_hint: what a property's description is for (its field's placeholder).
        check: the problems of the whole schema, each with its dotted JSON path.
    """

    field: str
    title: str
    noun: str
    whole: str
    wire_name: str
    description_hint: str
    check: Callable[[Mapping[str, Any]], list[Problem]] = check_parameters_schema


PARAMETERS = SchemaSlot(
    "parameters",
    "Parameters",
    "parameter",
    "the parameters",
    "inputSchema",
    "What the calling model should pass here.",
)
OUTPUT = SchemaSlot(
    "output_schema",
    "Output",
    "output field",
    "the output schema",
    "outputSchema",
    "What the model should answer here (it reads this too).",
    check_output_schema,
)
