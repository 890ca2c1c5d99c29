"""Where a parameters schema's sub-schemas are, and where its ``$ref``\\ s lead.

A reference that leads nowhere, or back to where it started without the value getting any
smaller, is valid JSON Schema on paper but breaks every call: the first fails to resolve, the
second recurses until the stack runs out. Both are found here, before anything is validated:

- a reference is followed only within the parameters schema (``#``, ``#/json/pointer``, or
  ``#name`` for an ``$anchor``), in the resource its nearest ``$id`` starts; a reference to
  another document is refused, as the server never fetches one;
- "in place" edges go from a schema to the schemas that apply to the *same* value: its
  ``$ref``/``$dynamicRef`` target and its ``allOf``/``anyOf``/``oneOf``/``not``/``if``/
  ``then``/``else``/``dependentSchemas`` members. A loop of such edges never ends; a loop that
  passes through ``properties``, ``items`` and the like descends into the value and does end
  (a tree of nodes is fine). A chain of in-place edges longer than :data:`MAX_NESTING` is
  refused too: validation recurses once per edge.

Everything here is pure Python over plain dicts (no ``jsonschema``), linear in the schema's size.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import unquote

from schema_types.json_text import (
    Located,
    PathParts,
    describe_value,
    format_path,
    json_text,
    path_sort_key,
)
from schema_types.limits import MAX_NESTING

__all__ = ["reference_problems", "subschemas"]

# Where sub-schemas live, by the shape of the keyword's value.
ONE_SCHEMA = (
    "items",
    "additionalProperties",
    "additionalItems",
    "contains",
    "not",
    "if",
    "then",
    "else",
    "propertyNames",
    "unevaluatedItems",
    "unevaluatedProperties",
)
SCHEMA_MAPS = ("properties", "patternProperties", "$defs", "definitions", "dependentSchemas")
SCHEMA_LISTS = ("anyOf", "allOf", "oneOf", "prefixItems")

# Sub-schemas that apply to the same value as their parent (the others apply to a part of it).
_IN_PLACE_ONE = ("not", "if", "then", "else")
_IN_PLACE_LISTS = ("allOf", "anyOf", "oneOf")
_REFERENCES = ("$ref", "$dynamicRef")


def subschemas(schema: Mapping[str, Any], parts: PathParts = ()) -> Iterator[tuple[PathParts, Any]]:
    """Every sub-schema object (``schema`` first), with its path, depth first in key order."""
    yield parts, schema
    for key, value in schema.items():
        if key in ONE_SCHEMA and isinstance(value, Mapping):
            yield from subschemas(value, (*parts, key))
        elif key in SCHEMA_MAPS and isinstance(value, Mapping):
            for name, sub in value.items():
                if isinstance(sub, Mapping):
                    yield from subschemas(sub, (*parts, key, name))
        elif key in SCHEMA_LISTS and isinstance(value, list):
            for index, sub in enumerate(value):
                if isinstance(sub, Mapping):
                    yield from subschemas(sub, (*parts, key, index))


@dataclass
class _Node:
    """One schema object: where it is, the resource it belongs to, and its in-place edges."""

    parts: PathParts
    schema: Mapping[str, Any]
    resource: Mapping[str, Any]
    # (target id, path of the $ref keyword or None for a combinator member)
    edges: list[tuple[int, PathParts | None]] = field(default_factory=list)


def reference_problems(
    schema: Mapping[str, Any], nodes: Sequence[Mapping[str, Any]] | None = None
) -> list[Located]:
    """References that cannot be resolved, loops of in-place references, and in-place chains
    deeper than :data:`MAX_NESTING`, each at the path of the ``$ref`` keyword it is about.

    Args:
        schema: the parameters schema (a plain JSON Schema dict).
        nodes: its sub-schemas, when the caller has them: a schema without references and with
            no more sub-schemas than a chain may be long has nothing to report, and the graph
            (most of the cost of a tool's check) is not built.
    """
    if (
        nodes is not None
        and len(nodes) <= MAX_NESTING
        and not any(isinstance(node.get(key), str) for node in nodes for key in _REFERENCES)
    ):
        return []
    graph = _Graph(schema)
    problems = graph.unresolved
    loops = graph.loops()
    if loops:
        return problems + loops
    return problems + graph.too_long()


class _Graph:
    def __init__(self, root: Mapping[str, Any]) -> None:
        self.nodes: dict[int, _Node] = {}
        self.unresolved: list[Located] = []
        self._anchors: dict[tuple[int, str], Mapping[str, Any]] = {}
        pending: list[tuple[PathParts, Mapping[str, Any], Mapping[str, Any]]] = [((), root, root)]
        referring: list[_Node] = []
        # Visit every sub-schema first (anchors must be known before references are followed),
        # then the targets of references that point outside the usual keywords.
        while pending or referring:
            while pending:
                self._visit(*pending.pop(), pending, referring)
            if not referring:
                break
            node = referring.pop()
            for keyword in _REFERENCES:
                ref = node.schema.get(keyword)
                if isinstance(ref, str):
                    target = self._resolve(node, keyword, ref)
                    if target is None:
                        continue
                    target_parts, target_schema = target
                    if id(target_schema) not in self.nodes:
                        pending.append((target_parts, target_schema, node.resource))
                    node.edges.append((id(target_schema), (*node.parts, keyword)))

    def _visit(
        self,
        parts: PathParts,
        schema: Mapping[str, Any],
        resource: Mapping[str, Any],
        pending: list[tuple[PathParts, Mapping[str, Any], Mapping[str, Any]]],
        referring: list[_Node],
    ) -> None:
        if id(schema) in self.nodes:
            return
        if isinstance(schema.get("$id"), str) and parts:
            resource = schema
        node = self.nodes[id(schema)] = _Node(parts, schema, resource)
        for keyword in ("$anchor", "$dynamicAnchor"):
            name = schema.get(keyword)
            if isinstance(name, str):
                self._anchors.setdefault((id(resource), name), schema)
        if any(isinstance(schema.get(keyword), str) for keyword in _REFERENCES):
            referring.append(node)
        for key, value in schema.items():
            if key in ONE_SCHEMA and isinstance(value, Mapping):
                pending.append(((*parts, key), value, resource))
                if key in _IN_PLACE_ONE:
                    node.edges.append((id(value), None))
            elif key in SCHEMA_MAPS and isinstance(value, Mapping):
                for name, sub in value.items():
                    if isinstance(sub, Mapping):
                        pending.append(((*parts, key, name), sub, resource))
                        if key == "dependentSchemas":
                            node.edges.append((id(sub), None))
            elif key in SCHEMA_LISTS and isinstance(value, list):
                for index, sub in enumerate(value):
                    if isinstance(sub, Mapping):
                        pending.append(((*parts, key, index), sub, resource))
                        if key in _IN_PLACE_LISTS:
                            node.edges.append((id(sub), None))

    def _resolve(
        self, node: _Node, keyword: str, ref: str
    ) -> tuple[PathParts, Mapping[str, Any]] | None:
        """The target of a reference (None for a boolean schema, or after noting the problem)."""
        where = (*node.parts, keyword)
        if not ref.startswith("#"):
            self.unresolved.append(
                (
                    where,
                    f"cannot resolve the reference {json_text(ref)}: only references within the "
                    "parameters schema (#/$defs/NAME, #/properties/NAME, …) are followed; copy "
                    "the schema it names under $defs and refer to it as #/$defs/NAME",
                )
            )
            return None
        fragment = unquote(ref[1:])
        resource = node.resource
        resource_parts = self.nodes[id(resource)].parts
        if fragment and not fragment.startswith("/"):
            anchored = self._anchors.get((id(resource), fragment))
            if anchored is None:
                self.unresolved.append(
                    (
                        where,
                        f"cannot resolve the reference {json_text(ref)}: no $anchor is named "
                        f"{json_text(fragment)}",
                    )
                )
                return None
            return self.nodes[id(anchored)].parts, anchored
        target: Any = resource
        parts = list(resource_parts)
        for token in fragment.split("/")[1:] if fragment else []:
            token = token.replace("~1", "/").replace("~0", "~")
            if isinstance(target, Mapping) and token in target:
                target = target[token]
                parts.append(token)
            elif isinstance(target, list) and token.isdigit() and int(token) < len(target):
                target = target[int(token)]
                parts.append(int(token))
            else:
                self.unresolved.append(
                    (
                        where,
                        f"cannot resolve the reference {json_text(ref)}: "
                        + _missing(parts, target, token),
                    )
                )
                return None
        if isinstance(target, bool):
            return None
        if not isinstance(target, Mapping):
            self.unresolved.append(
                (
                    where,
                    f"the reference {json_text(ref)} leads to {describe_value(target)}, "
                    "not to a schema",
                )
            )
            return None
        return tuple(parts), target

    def loops(self) -> list[Located]:
        """One problem per loop of in-place edges, at the loop's first ``$ref`` by path."""
        problems: list[Located] = []
        state: dict[int, int] = {}  # 1 while on the current path, 2 when finished
        for start in self.nodes:
            if start in state:
                continue
            path: list[tuple[int, PathParts | None]] = [(start, None)]
            edges_left = [iter(self.nodes[start].edges)]
            state[start] = 1
            while edges_left:
                step = next(edges_left[-1], None)
                if step is None:
                    state[path.pop()[0]] = 2
                    edges_left.pop()
                    continue
                target, via = step
                if state.get(target) == 1:
                    first = next(i for i, (node, _) in enumerate(path) if node == target)
                    found = self._loop_problem([*path[first + 1 :], (target, via)])
                    if all(found[0] != parts for parts, _ in problems):
                        problems.append(found)
                elif target not in state:
                    state[target] = 1
                    path.append((target, via))
                    edges_left.append(iter(self.nodes[target].edges))
        return problems

    def _loop_problem(self, steps: list[tuple[int, PathParts | None]]) -> Located:
        # ``steps``: each node of the loop with the edge that led to it; the last is the start.
        # Only a reference can lead back (combinators lead down), so the loop has one; the one
        # first by path is reported, so one loop gives one problem whichever node it is met at.
        at = min(
            (i for i, (_, via) in enumerate(steps) if via is not None),
            key=lambda i: path_sort_key(steps[i][1] or ()),
            default=0,
        )
        source = self.nodes[steps[at - 1][0]]
        keyword = steps[at][1] or source.parts
        ordered = steps[at:] + steps[:at]
        names = [_name(source.parts)] + [_name(self.nodes[node].parts) for node, _ in ordered]
        ref = source.schema.get(str(keyword[-1])) if keyword else None
        return (
            keyword,
            f"the reference {json_text(ref)} leads back here without descending into a "
            f"property or an item ({' → '.join(names)}), so validating a value would never end: "
            "make one of these references point to a schema outside the loop",
        )

    def too_long(self) -> list[Located]:
        """In-place chains longer than :data:`MAX_NESTING`, reported where the longest starts."""
        longest: dict[int, int] = {}
        for start in self.nodes:
            stack = [start]
            while stack:
                current = stack[-1]
                waiting = [t for t, _ in self.nodes[current].edges if t not in longest]
                if waiting:
                    stack += waiting
                    continue
                stack.pop()
                longest[current] = 1 + max(
                    (longest[t] for t, _ in self.nodes[current].edges), default=0
                )
        deep = [node for key, node in self.nodes.items() if longest[key] > MAX_NESTING]
        if not deep:
            return []
        node = min(deep, key=lambda n: path_sort_key(n.parts))
        return [
            (
                node.parts,
                f"references and combinations (allOf, anyOf, …) lead more than {MAX_NESTING} "
                "schemas deep from here without descending into a property or an item, deeper "
                "than a value can be validated: shorten the chain",
            )
        ]


def _missing(parts: list[str | int], target: Any, token: str) -> str:
    """What a JSON pointer found missing, and what is there instead."""
    where = format_path(parts) or "the schema"
    if isinstance(target, Mapping):
        keys = [json_text(key) for key in list(target)[:8]]
        there = f" (it has {', '.join(keys)})" if keys else " (it is empty)"
        return f"{where} has no {json_text(token)}{there}"
    if isinstance(target, list):
        return f"{where} has no item {json_text(token)} (it has {len(target)})"
    return f"{where} is {describe_value(target)}, which has no {json_text(token)}"


def _name(parts: PathParts) -> str:
    return format_path(parts) or "the root"
