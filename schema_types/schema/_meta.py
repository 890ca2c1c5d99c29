"""The schema checks that run ``jsonschema``: the meta-schema, and values against their node.

``schema.check`` imports this module only when ``schema._proof`` cannot show that both checks
would find nothing, so loading an agent whose schemas are plain does not import ``jsonschema``.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

from jsonschema import Draft202012Validator
from jsonschema.exceptions import SchemaError
from referencing.exceptions import Unresolvable

from schema_types.arguments import checking_validator, located_problems, meta_validator
from schema_types.json_text import Located, PathParts

__all__ = ["meta_problems", "value_problems"]


def meta_problems(data: Mapping[str, Any]) -> list[Located]:
    """What the Draft 2020-12 meta-schema refuses in ``data``, by path."""
    return located_problems(meta_validator().iter_errors(data))


def value_problems(
    data: Mapping[str, Any], nodes: Sequence[tuple[PathParts, Any]]
) -> list[Located]:
    """``enum``, ``default`` and ``examples`` values their own node refuses.

    Args:
        data: the whole parameters schema (references resolve in it).
        nodes: the nodes to check, with their paths.
    """
    validator = checking_validator(data)
    problems: list[Located] = []
    for parts, node in nodes:
        problems += _node_values(validator, node, parts)
    return problems


def _node_values(
    validator: Draft202012Validator, node: Mapping[str, Any], parts: PathParts
) -> list[Located]:
    checks: list[tuple[PathParts, Any, Mapping[str, Any]]] = []
    if isinstance(node.get("enum"), list):
        # The other keywords must accept each enum value; enum itself trivially would.
        without_enum = {key: value for key, value in node.items() if key != "enum"}
        checks += [((*parts, "enum", i), v, without_enum) for i, v in enumerate(node["enum"])]
    if "default" in node:
        checks.append(((*parts, "default"), node["default"], node))
    if isinstance(node.get("examples"), list):
        checks += [((*parts, "examples", i), v, node) for i, v in enumerate(node["examples"])]
    problems: list[Located] = []
    for where, value, schema in checks:
        try:
            # evolve keeps the root's resolver, so "$ref": "#/$defs/…" still resolves.
            errors = list(validator.evolve(schema=schema).iter_errors(value))
        except (re.error, Unresolvable, SchemaError, RecursionError):
            continue  # the meta-schema and reference checks report what is wrong with the schema
        problems += located_problems(errors, where)
    return problems
