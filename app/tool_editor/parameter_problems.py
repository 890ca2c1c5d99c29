"""The problems of one parameter node, for flagging them at the property panel's fields.

``check_parameters_schema`` (the one implementation of the rules) costs ~60 ms on a 300-property
schema, mostly in the meta-schema check, which is too much per keystroke. A field only needs the
problems of its own node, so the node is checked alone: wrapped as the one property of a scratch
object (the root with its properties emptied), and the problems' paths are made relative to it.
"""

from __future__ import annotations

from typing import Any

from app.tool_editor.parameter_edits import NodePath
from schema_types.schema.check import check_parameters_schema

__all__ = ["keyword_matches", "node_problems"]

_PREFIX = "properties.node"


def node_problems(node: Any, path: NodePath) -> list[tuple[str, str]]:
    """The problems of ``node``'s own keywords as ``(keyword path, message)``.

    Args:
        node: the node's JSON (a dict; anything else has no keywords to flag).
        path: the node's path (``()`` for the parameters root).

    Returns:
        e.g. ``[("minimum", "10 is greater than maximum 5"), ("enum[1]", "…")]``; problems of
        the node's children are left out (they are flagged at the children).
    """
    if not isinstance(node, dict):
        return []
    if path:
        data: dict[str, Any] = {"type": "object", "properties": {"node": node}}
        prefix = _PREFIX
    else:
        data = dict(node)
        if isinstance(node.get("properties"), dict):
            data["properties"] = {name: {} for name in node["properties"]}
        prefix = ""
    found: list[tuple[str, str]] = []
    for problem in check_parameters_schema(data):
        if not problem.path.startswith(prefix):
            continue
        rest = problem.path[len(prefix) :].lstrip(".")
        first = rest.split(".")[0].split("[")[0]
        if first not in ("properties", "items") or rest == first:
            found.append((rest, problem.message))
    return found


def keyword_matches(keyword_path: str, keyword: str) -> bool:
    """Whether a problem at ``keyword_path`` (``enum[1]``) belongs to the field ``keyword``."""
    return keyword_path == keyword or keyword_path.startswith((f"{keyword}[", f"{keyword}."))
