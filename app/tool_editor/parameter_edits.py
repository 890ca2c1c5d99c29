"""Edits of a tool's ``parameters`` dict by node path, as pure functions (no Qt).

The parameter tree addresses a node by its **node path**: the JSON keys leading to it from the
parameters root, e.g. ``("properties", "trip", "properties", "budget")`` or
``("properties", "passengers", "items")``; the root is ``()``. Every function here takes the
current parameters dict and returns a NEW dict (the input is never changed), so the model can
push "old dict → new dict" as one undoable command. Key order is kept everywhere: the order of
``properties`` is the order the tree (and an MCP client) shows.

Validation is not re-implemented here: callers check the result with
``schema_types.schema.nodes.parameters_from_json`` (keyword types) and
``schema_types.schema.check.check_parameters_schema`` (everything else).
"""

from __future__ import annotations

import json
import re
from copy import deepcopy
from typing import Any

from app.naming import numbered_name
from schema_types.json_text import format_path, json_type_name
from schema_types.schema.check import MODELLED_KEYWORDS

__all__ = [
    "IDENTIFIER",
    "NODE_TYPES",
    "REMOVE",
    "NodePath",
    "fits_type",
    "identifier_problem",
    "is_property",
    "name_problem",
    "node_at",
    "parent_object",
    "same_json",
    "schema_path",
    "template_path",
    "unique_name",
    "with_item_schema",
    "with_keyword",
    "with_keywords",
    "with_moved",
    "with_property",
    "with_removed",
    "with_renamed",
    "with_required",
    "with_type",
]

NodePath = tuple[str, ...]

# A property name must be usable in a template placeholder ({trip.destination}).
IDENTIFIER = re.compile(r"^[A-Za-z_][A-Za-z0-9_-]*$")
NODE_TYPES = ("string", "number", "integer", "boolean", "array", "object")


class _Remove:
    """Marker for "remove this keyword" in :func:`with_keyword`."""

    def __repr__(self) -> str:
        return "REMOVE"


REMOVE: Any = _Remove()


def same_json(a: Any, b: Any) -> bool:
    """Equal including key order (dict ``==`` ignores order; a reorder is a real edit here)."""
    if a != b:
        return False
    return json.dumps(a, ensure_ascii=False, default=str) == json.dumps(
        b, ensure_ascii=False, default=str
    )


def is_property(path: NodePath) -> bool:
    """Whether ``path`` names a property (``(…, "properties", name)``), not an item schema."""
    return len(path) >= 2 and path[-2] == "properties"


def parent_object(path: NodePath) -> NodePath:
    """The object whose property ``path`` is (``path`` must be a property path)."""
    return path[:-2]


def schema_path(path: NodePath, *keyword: str | int) -> str:
    """The dotted JSON path ``check_parameters_schema`` uses for ``keyword`` of the node."""
    return format_path((*path, *keyword))


def template_path(path: NodePath) -> str | None:
    """The placeholder path of a property (``trip.destination``); None inside arrays."""
    if not path or len(path) % 2 or any(part != "properties" for part in path[0::2]):
        return None
    return ".".join(path[1::2])


def node_at(params: Any, path: NodePath) -> Any:
    """The sub-schema at ``path`` (a dict, a boolean schema), or None when it is not there."""
    node = params
    for key in path:
        if not isinstance(node, dict) or key not in node:
            return None
        node = node[key]
    return node


def fits_type(value: Any, kind: str) -> bool:
    """Whether a JSON value is of JSON Schema type ``kind`` (an integer is a number too)."""
    actual = json_type_name(value)
    if kind == "number":
        return actual in ("integer", "number")
    if kind == "integer" and actual == "number":
        return float(value).is_integer()
    return actual == kind


def identifier_problem(name: str) -> str | None:
    """Why ``name`` cannot name a property a template can use (None when it can)."""
    if IDENTIFIER.match(name):
        return None
    if not name:
        return "a property needs a name"
    return (
        f"{name!r} cannot be used in a template: start with a letter or '_', then use "
        "letters, digits, '_' or '-'"
    )


def name_problem(params: Any, path: NodePath, new_name: str) -> str | None:
    """Why property ``path`` cannot be renamed to ``new_name`` (None when it can)."""
    if not is_property(path):
        return "only properties have names"
    problem = identifier_problem(new_name)
    if problem:
        return problem
    siblings = _properties(node_at(params, parent_object(path)))
    if new_name != path[-1] and new_name in siblings:
        return f"{new_name!r} is already a property here: names must be unique"
    return None


def unique_name(params: Any, object_path: NodePath, base: str) -> str:
    """``base``, or ``base_2``, ``base_3``… : a name not yet used in the object's properties."""
    return numbered_name(base, _properties(node_at(params, object_path)))


def _properties(node: Any) -> dict[str, Any]:
    props = node.get("properties") if isinstance(node, dict) else None
    return props if isinstance(props, dict) else {}


def _copy_with(params: Any, path: NodePath) -> tuple[dict[str, Any], Any]:
    """A deep copy of ``params`` and the copy's node at ``path`` (KeyError when missing)."""
    new = deepcopy(params)
    node = node_at(new, path)
    if node is None:
        raise KeyError(f"no schema at {schema_path(path) or 'the root'}")
    return new, node


def _object_at(new: Any, path: NodePath) -> dict[str, Any]:
    node = node_at(new, path)
    if not isinstance(node, dict) or node.get("type") != "object":
        raise ValueError("properties can only be added to an object")
    return node


def _set_required(obj: dict[str, Any], name: str, required: bool) -> None:
    names = obj.get("required")
    names = list(names) if isinstance(names, list) else []
    if required and name not in names:
        names.append(name)
    elif not required:
        names = [n for n in names if n != name]
    if names:
        obj["required"] = names
    else:
        obj.pop("required", None)


def _insert(mapping: dict[str, Any], key: str, value: Any, row: int | None) -> dict[str, Any]:
    items = [(k, v) for k, v in mapping.items() if k != key]
    position = len(items) if row is None else max(0, min(row, len(items)))
    items.insert(position, (key, value))
    return dict(items)


def with_property(
    params: Any,
    object_path: NodePath,
    name: str,
    schema: Any = None,
    *,
    row: int | None = None,
    required: bool = False,
) -> dict[str, Any]:
    """Add property ``name`` (default schema ``{"type": "string"}``) at ``row`` (None: last)."""
    new: dict[str, Any] = deepcopy(params)
    obj = _object_at(new, object_path)
    props = _properties(obj)
    if name in props:
        raise ValueError(f"{name!r} is already a property here")
    schema = deepcopy(schema) if schema is not None else _string()
    obj["properties"] = _insert(props, name, schema, row)
    if required:
        _set_required(obj, name, True)
    return new


def _string() -> dict[str, Any]:
    return {"type": "string"}


def with_item_schema(params: Any, array_path: NodePath, schema: Any = None) -> dict[str, Any]:
    """Give the array at ``array_path`` an ``items`` schema (default ``{"type": "string"}``)."""
    new, node = _copy_with(params, array_path)
    if not isinstance(node, dict) or node.get("type") != "array":
        raise ValueError("only an array has an item schema")
    if isinstance(node.get("items"), dict):
        raise ValueError("this array has an item schema already")
    node["items"] = deepcopy(schema) if schema is not None else _string()
    return new


def with_removed(params: Any, path: NodePath) -> dict[str, Any]:
    """Remove the property (and its ``required`` entry) or the item schema at ``path``."""
    if not path:
        raise ValueError("the parameters root cannot be removed")
    new, _node = _copy_with(params, path)
    parent = node_at(new, path[:-1])
    del parent[path[-1]]
    if is_property(path):
        _set_required(node_at(new, parent_object(path)), path[-1], False)
    return new


def with_renamed(params: Any, path: NodePath, new_name: str) -> dict[str, Any]:
    """Rename property ``path``, keeping its position and its ``required`` entry."""
    problem = name_problem(params, path, new_name)
    if problem:
        raise ValueError(problem)
    new, _node = _copy_with(params, path)
    obj = node_at(new, parent_object(path))
    old_name = path[-1]
    obj["properties"] = {
        (new_name if key == old_name else key): value for key, value in obj["properties"].items()
    }
    if isinstance(obj.get("required"), list):
        obj["required"] = [new_name if n == old_name else n for n in obj["required"]]
    return new


def with_required(params: Any, path: NodePath, required: bool) -> dict[str, Any]:
    """List property ``path`` in its object's ``required`` (or take it out)."""
    if not is_property(path):
        raise ValueError("only properties can be required")
    new, _node = _copy_with(params, path)
    _set_required(node_at(new, parent_object(path)), path[-1], required)
    return new


def with_moved(
    params: Any, path: NodePath, target_object: NodePath, row: int
) -> tuple[dict[str, Any], NodePath]:
    """Move property ``path`` into ``target_object`` at ``row`` (its index after the move).

    The ``required`` flag moves with it. Returns the new dict and the property's new path.
    """
    if not is_property(path):
        raise ValueError("only properties can be moved")
    if target_object[: len(path)] == path:
        raise ValueError("a property cannot be moved into itself")
    name = path[-1]
    source_object = parent_object(path)
    new, node = _copy_with(params, path)
    target = _object_at(new, target_object)
    if target_object != source_object and name in _properties(target):
        raise ValueError(f"{name!r} is already a property there: rename it first")
    source = node_at(new, source_object)
    was_required = isinstance(source.get("required"), list) and name in source["required"]
    del source["properties"][name]
    _set_required(source, name, False)
    target["properties"] = _insert(_properties(target), name, node, row)
    if was_required:
        _set_required(target, name, True)
    return new, (*target_object, "properties", name)


def with_keyword(params: Any, path: NodePath, keyword: str, value: Any) -> dict[str, Any]:
    """Set one JSON keyword of the node at ``path`` (``REMOVE`` takes it out)."""
    return with_keywords(params, path, {keyword: value})


def with_keywords(params: Any, path: NodePath, values: dict[str, Any]) -> dict[str, Any]:
    """Set several keywords of one node at once (``REMOVE`` takes a keyword out)."""
    new, node = _copy_with(params, path)
    if not isinstance(node, dict):
        raise ValueError("a boolean schema has no keywords: change its type first")
    for keyword, value in values.items():
        if value is REMOVE:
            node.pop(keyword, None)
        else:
            node[keyword] = deepcopy(value)
    return new


def with_type(params: Any, path: NodePath, new_type: str) -> dict[str, Any]:
    """Change the node's type, keeping what still applies (title, description, fitting values).

    Keywords of the old type the new one does not have are dropped (``pattern`` when a string
    becomes a number), as are ``enum``/``default``/``examples`` values of the wrong type. A new
    object gets ``properties: {}``; a new array gets a string item schema.
    """
    if new_type not in NODE_TYPES:
        raise ValueError(f"unknown type {new_type!r}")
    new, node = _copy_with(params, path)
    if not isinstance(node, dict):
        node = {}
    old_type = node.get("type")
    if old_type == new_type:
        return new
    old_keywords = set(MODELLED_KEYWORDS.get(str(old_type), {}))
    for keyword in old_keywords - set(MODELLED_KEYWORDS[new_type]):
        node.pop(keyword, None)
    node["type"] = new_type
    for keyword in ("enum", "examples"):
        values = node.get(keyword)
        if isinstance(values, list):
            kept = [v for v in values if fits_type(v, new_type)]
            if kept:
                node[keyword] = kept
            else:
                del node[keyword]
    if "default" in node and not fits_type(node["default"], new_type):
        del node["default"]
    if new_type == "object":
        node.setdefault("properties", {})
    elif new_type == "array":
        node.setdefault("items", _string())
    if path:
        node_at(new, path[:-1])[path[-1]] = node
        return new
    return node
