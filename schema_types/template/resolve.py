"""What a template's paths refer to in a tool's parameters schema, and the values they take.

A path's head is a top-level parameter (or, unclaimed, a tool field); each further step must exist
in the nested schema (an object that declares no properties, or allows additional ones, accepts
any key). Values come from the call's arguments, else from schema defaults at any depth. A path
*has a value* when one is found and it is not null, ``""`` or ``[]``.
"""

from __future__ import annotations

import difflib
from collections.abc import Mapping
from functools import lru_cache
from typing import Any, Literal

from schema_types.template.tokens import TOOL_FIELD_PATHS

__all__ = [
    "ABSENT",
    "BARE_TOOL_FIELDS",
    "PlaceholderKind",
    "Resolver",
    "always_has_value",
    "child_schema",
    "has_value",
    "lookup",
    "parameter_paths",
    "placeholder_kind",
    "root_properties",
]

PlaceholderKind = Literal["parameter", "tool_field", "unknown"]

ABSENT: Any = object()
"""What ``lookup`` returns for a path with no argument and no default."""

# Bare names that fall back to the tool's own fields when no parameter claims them.
BARE_TOOL_FIELDS = frozenset({("name",), ("description",)})
# Bounds on walking a parameters schema for suggestions: a schema being edited may be deep or
# (built in Python) even cyclic, and suggestions must not cost the editor a keystroke.
_MAX_DEPTH = 8
_MAX_PATHS = 2000
# difflib costs ~0.1 ms per unknown placeholder against 100 parameters; a pasted template full of
# unknowns (no parameters defined yet) must not freeze the editor, so only the first few distinct
# unknowns of a template get a "did you mean".
_MAX_SUGGESTIONS = 32
# difflib compares two names in time that grows with the product of their lengths; no parameter
# name a person types is this long, so a longer unknown name gets no suggestion.
_MAX_SUGGESTED_LENGTH = 200


def _may_be_object(node: Mapping[str, Any]) -> bool:
    declared = node.get("type")
    if isinstance(declared, str):
        return declared == "object"
    if isinstance(declared, list):
        return "object" in declared
    return True  # no (or an odd) "type": anything, objects included


def child_schema(node: Any, key: str) -> tuple[Mapping[str, Any] | None, str]:
    """The schema of property ``key`` of an object schema ``node``, or None and why not.

    Declared properties are checked strictly so typos are caught; an object that declares no
    properties, or allows additional ones explicitly, accepts any key (an empty schema).
    """
    if not isinstance(node, Mapping):
        return {}, ""  # a boolean or malformed schema: nothing to check against
    properties = node.get("properties")
    if isinstance(properties, Mapping) and key in properties:
        child = properties[key]
        return (child if isinstance(child, Mapping) else {}), ""
    if not _may_be_object(node):
        return None, "is not an object"
    additional = node.get("additionalProperties", ABSENT)
    if isinstance(additional, Mapping):
        return additional, ""
    if additional is True or "patternProperties" in node:
        return {}, ""
    if additional is ABSENT and not properties:
        return {}, ""
    return None, f'has no property "{key}"'


def root_properties(parameters: Any) -> Mapping[str, Any]:
    properties = parameters.get("properties") if isinstance(parameters, Mapping) else None
    return properties if isinstance(properties, Mapping) else {}


def _problem(path: tuple[str, ...], parameters: Mapping[str, Any]) -> tuple[PlaceholderKind, str]:
    """Classify a path; for ``unknown`` also say why, as the tail of a diagnostic message."""
    if path in TOOL_FIELD_PATHS:
        return "tool_field", ""
    root = root_properties(parameters)
    if not path or path[0] not in root:
        if path in BARE_TOOL_FIELDS:
            return "tool_field", ""
        return "unknown", f'no parameter "{path[0] if path else ""}"'
    node = root[path[0]]
    for depth in range(1, len(path)):
        child, why = child_schema(node, path[depth])
        if child is None:
            return "unknown", f'parameter "{".".join(path[:depth])}" {why}'
        node = child
    return "parameter", ""


def placeholder_kind(path: tuple[str, ...], parameters: Mapping[str, Any]) -> PlaceholderKind:
    """Say what a placeholder path refers to.

    Args:
        path: the placeholder's path, e.g. ``("trip", "destination")``.
        parameters: the tool's parameters as a JSON Schema object.

    Returns:
        ``"tool_field"`` for ``tool.name``/``tool.description`` and for bare ``name``/
        ``description`` when no top-level parameter has that name; ``"parameter"`` when the head
        is a top-level property and every further step exists in the nested schema (an object
        that declares no properties, or sets ``additionalProperties``, accepts any key);
        ``"unknown"`` otherwise.
    """
    return _problem(tuple(path), parameters)[0]


def parameter_paths(parameters: Mapping[str, Any]) -> list[tuple[str, ...]]:
    """Every declared parameter path, parents before children (for completion and suggestions).

    Args:
        parameters: the tool's parameters as a JSON Schema object.

    Returns:
        ``[("trip",), ("trip", "destination"), ...]`` in declaration order, bounded in depth and
        count so a pathological schema cannot stall the editor.
    """
    paths: list[tuple[str, ...]] = []

    def walk(properties: Mapping[str, Any], prefix: tuple[str, ...]) -> None:
        for key, child in properties.items():
            if len(paths) >= _MAX_PATHS or not isinstance(key, str):
                return
            path = (*prefix, key)
            paths.append(path)
            if len(path) < _MAX_DEPTH and isinstance(child, Mapping):
                walk(root_properties(child), path)

    walk(root_properties(parameters), ())
    return paths


class Resolver:
    """Per-call memo of path classification, so repeated placeholders cost one dict lookup."""

    def __init__(self, parameters: Mapping[str, Any]) -> None:
        self.parameters = parameters
        self._memo: dict[tuple[str, ...], tuple[PlaceholderKind, str]] = {}
        self._candidates: tuple[str, ...] | None = None
        self._suggested: dict[str, str | None] = {}
        self._always: dict[tuple[str, ...], str | None] = {}
        self._required: dict[int, frozenset[Any]] = {}

    def classify(self, path: tuple[str, ...]) -> tuple[PlaceholderKind, str]:
        found = self._memo.get(path)
        if found is None:
            found = self._memo[path] = _problem(path, self.parameters)
        return found

    def always(self, path: tuple[str, ...]) -> str | None:
        """:func:`always_has_value` of ``path``, once per path and call."""
        if path in self._always:
            return self._always[path]
        found = self._always[path] = always_has_value(path, self.parameters, self._required)
        return found

    def suggestion(self, dotted: str) -> str | None:
        if dotted in self._suggested:
            return self._suggested[dotted]
        if len(self._suggested) >= _MAX_SUGGESTIONS or len(dotted) > _MAX_SUGGESTED_LENGTH:
            return None
        if self._candidates is None:
            names = [".".join(p) for p in parameter_paths(self.parameters)]
            names = [name for name in names if len(name) <= _MAX_SUGGESTED_LENGTH]
            names += [".".join(p) for p in sorted(TOOL_FIELD_PATHS)]
            root = root_properties(self.parameters)
            names += [p[0] for p in sorted(BARE_TOOL_FIELDS) if p[0] not in root]
            self._candidates = tuple(names)
        found = self._suggested[dotted] = _closest(dotted, self._candidates)
        return found


@lru_cache(maxsize=1024)
def _closest(dotted: str, candidates: tuple[str, ...]) -> str | None:
    # difflib is the slow part of diagnose; the cache makes an unchanged unknown placeholder free
    # on the next keystroke.
    matches = difflib.get_close_matches(dotted, candidates, n=1, cutoff=0.6)
    return matches[0] if matches else None


def lookup(
    path: tuple[str, ...], arguments: Any, parameters: Mapping[str, Any]
) -> tuple[Any, bool]:
    """The value at ``path`` and whether a schema default supplied it; ``ABSENT`` if none.

    At each step an argument wins over a default. A parent's default object is used before its
    children's defaults (as a default-filling validator would apply them), and a key absent from
    both the argument and the parent's default still takes the child's own default, even when
    the parent itself is absent: ``{trip.nights}`` shows ``nights``' default without a ``trip``.
    """
    value: Any = arguments
    node: Any = parameters
    defaulted = False
    for key in path:
        child, _ = child_schema(node, key)
        if isinstance(value, Mapping) and key in value:
            value = value[key]
        elif child is not None and "default" in child:
            value = child["default"]
            defaulted = True
        else:
            value = ABSENT  # keep walking: a deeper default may still apply
        node = child
    return value, defaulted


def has_value(value: Any) -> bool:
    """Whether a value counts as given for sections and fallbacks.

    Args:
        value: an argument value.

    Returns:
        False for None, ``""`` and ``[]`` (and any other empty list); True for everything else,
        ``false``, ``0`` and ``{}`` included.
    """
    return not (value is None or value == "" or (isinstance(value, list) and not value))


def always_has_value(
    path: tuple[str, ...],
    parameters: Mapping[str, Any],
    required_sets: dict[int, frozenset[Any]] | None = None,
) -> str | None:
    """Why ``path`` has a value whenever a call leaves it out or must send it, or None.

    That is ``required`` when each step of the path is required, ``has a default`` when the
    path has one; with ``(unless a call sends it empty)`` after it when its schema allows a
    value that counts as none (null, ``""``, ``[]``). ``required_sets`` keeps each ``required``
    list of ``parameters`` as a set between calls on the same schema (by the list's identity),
    so asking about many paths does not scan a long list once per path.
    """
    if required_sets is None:
        required_sets = {}
    root = root_properties(parameters)
    if not path or path[0] not in root:
        return None
    node: Any = parameters
    required = True
    for key in path:
        listed = node.get("required") if isinstance(node, Mapping) else None
        if required and isinstance(listed, list):
            names = required_sets.get(id(listed))
            if names is None:
                names = required_sets[id(listed)] = frozenset(_hashable(listed))
            required = key in names
        else:
            required = False
        child, _ = child_schema(node, key)
        if child is None:
            return None
        node = child
    if required:
        why = "is required"
    else:
        value, _ = lookup(path, {}, parameters)
        if value is ABSENT or not has_value(value):
            return None
        why = "has a default"
    if not isinstance(node, Mapping) or _may_be_empty(node):
        why += " (unless a call sends it empty)"
    return why


def _hashable(listed: list[Any]) -> list[Any]:
    # A schema being edited may hold lists or objects in "required": they name no key anyway.
    return [name for name in listed if isinstance(name, str)]


def _may_be_empty(node: Mapping[str, Any]) -> bool:
    """Whether a value valid for ``node`` may count as no value (null, ``""``, ``[]``)."""
    if isinstance(node.get("enum"), list):
        return any(not has_value(choice) for choice in node["enum"])
    if "const" in node:
        return not has_value(node["const"])
    declared = node.get("type")
    types = [declared] if isinstance(declared, str) else declared
    if not isinstance(types, list) or "null" in types:
        return True
    if "string" in types and not _at_least_one(node.get("minLength")):
        return True
    return "array" in types and not _at_least_one(node.get("minItems"))


def _at_least_one(bound: Any) -> bool:
    return isinstance(bound, int | float) and not isinstance(bound, bool) and bound >= 1
