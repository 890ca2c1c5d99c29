"""A quick proof that a parameters schema passes the checks that need ``jsonschema``.

Two of the schema checks run ``jsonschema``: every node against the Draft 2020-12 meta-schema,
and each ``enum``, ``default`` and ``examples`` value against its own node. Both cost about a
millisecond per tool (the meta-schema is all ``$dynamicRef``\\ s), and importing ``jsonschema``
costs a tenth of a second. The schemas authors write use a small part of the language, so for
those the same verdicts are reached here by direct tests: :func:`proves_sound` answers True only
when both checks would find nothing. Anything it does not model (an ``$id``, a ``format`` on a
string default, a ``$ref`` that a default would have to follow …) answers False, and the caller
runs ``jsonschema`` itself. It can only be too careful, never too lenient: the tests compare it
with ``jsonschema`` keyword by keyword.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from datetime import date
from typing import Any

from schema_types.schema._refs import ONE_SCHEMA, SCHEMA_LISTS, SCHEMA_MAPS

__all__ = [
    "META_KEYWORDS",
    "VALUE_KEYWORDS",
    "is_integer",
    "is_number",
    "key_sound",
    "proves_sound",
]

_DATE = re.compile(r"^\d{4}-\d{2}-\d{2}$", re.ASCII)
_TYPES = frozenset(("string", "number", "integer", "boolean", "array", "object", "null"))

# What the Draft 2020-12 meta-schema asks of each keyword's value.
_STRINGS = frozenset(
    (
        "title",
        "description",
        "$comment",
        "format",
        "pattern",
        "contentEncoding",
        "contentMediaType",
        "$ref",
        "$dynamicRef",
    )
)
_ARRAYS = frozenset(("enum", "examples"))
_NUMBERS = frozenset(("minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum"))
_COUNTS = frozenset(
    (
        "minLength",
        "maxLength",
        "minItems",
        "maxItems",
        "minProperties",
        "maxProperties",
        "minContains",
        "maxContains",
    )
)
_BOOLEANS = frozenset(("uniqueItems", "deprecated", "readOnly", "writeOnly"))
# The sub-schema keywords the reference walk follows, less additionalItems (not a 2020-12
# keyword, so the meta-schema asks nothing of it), plus contentSchema (a schema, but only an
# annotation: the walk does not follow it).
_ONE_SCHEMA = (frozenset(ONE_SCHEMA) - {"additionalItems"}) | {"contentSchema"}
_SCHEMA_MAPS = frozenset(SCHEMA_MAPS)
_SCHEMA_LISTS = frozenset(SCHEMA_LISTS)
_ANY_VALUE = frozenset(("default", "const"))
# Constrained by the meta-schema, and left to it: rare in tool parameters.
_LEFT_TO_JSONSCHEMA = frozenset(
    (
        "$id",
        "$schema",
        "$anchor",
        "$dynamicAnchor",
        "$vocabulary",
        "dependencies",
        "$recursiveRef",
        "$recursiveAnchor",
    )
)
META_KEYWORDS = (
    _STRINGS
    | _ARRAYS
    | _NUMBERS
    | _COUNTS
    | _BOOLEANS
    | _ONE_SCHEMA
    | _SCHEMA_MAPS
    | _SCHEMA_LISTS
    | _ANY_VALUE
    | _LEFT_TO_JSONSCHEMA
    | {"type", "multipleOf", "required", "dependentRequired"}
)
"""Every keyword the meta-schema constrains, as this module knows them (a test holds it to the
meta-schema itself); any other key is free, as the meta-schema leaves it."""

# How each keyword acts on a value being validated, for the value checks.
_ANNOTATIONS = frozenset(
    (
        "title",
        "description",
        "$comment",
        "default",
        "examples",
        "deprecated",
        "readOnly",
        "writeOnly",
        "contentEncoding",
        "contentMediaType",
        "contentSchema",
        "$defs",
        "definitions",
    )
)
_FOR_OBJECTS = frozenset(
    (
        "properties",
        "patternProperties",
        "additionalProperties",
        "required",
        "minProperties",
        "maxProperties",
        "propertyNames",
        "dependentRequired",
        "dependentSchemas",
        "unevaluatedProperties",
    )
)
_FOR_ARRAYS = frozenset(
    (
        "items",
        "prefixItems",
        "contains",
        "minItems",
        "maxItems",
        "uniqueItems",
        "minContains",
        "maxContains",
        "unevaluatedItems",
    )
)
_FOR_NUMBERS = frozenset(_NUMBERS)
_FOR_STRINGS = frozenset(("minLength", "maxLength", "pattern"))
# Proven here for a value only where they do not apply to it; elsewhere jsonschema decides.
_UNPROVEN = _LEFT_TO_JSONSCHEMA | {
    "$ref",
    "$dynamicRef",
    "allOf",
    "anyOf",
    "oneOf",
    "not",
    "if",
    "then",
    "else",
    "multipleOf",
    "format",
}
VALUE_KEYWORDS = (
    _ANNOTATIONS | _FOR_OBJECTS | _FOR_ARRAYS | _FOR_NUMBERS | _FOR_STRINGS | _UNPROVEN
) | {"type", "enum", "const"}
"""Every keyword this module knows the effect of on a value (a test holds it to the keywords
``jsonschema`` validates); any other key has none, as in ``jsonschema``."""


def proves_sound(schema: Mapping[str, Any]) -> bool:
    """Whether the meta-schema accepts ``schema`` and every ``enum``, ``default`` and
    ``examples`` value fits its node, as far as this module can tell without ``jsonschema``.

    Args:
        schema: a parameters schema (a plain JSON Schema dict).

    Returns:
        True when both ``jsonschema`` checks are certain to find nothing; False when they might
        find something (then they must be run).
    """
    nodes: list[Mapping[str, Any]] = []
    stack: list[Any] = [schema]
    while stack:
        node = stack.pop()
        if isinstance(node, bool):
            continue
        if not isinstance(node, Mapping) or not _meta_sound(node, stack):
            return False
        nodes.append(node)
    # Every node's keywords are well-formed now, so values can be held to them.
    return all(_values_fit(node) for node in nodes)


def _meta_sound(node: Mapping[str, Any], stack: list[Any]) -> bool:
    return all(key_sound(key, value, stack) for key, value in node.items())


def key_sound(key: str, value: Any, stack: list[Any]) -> bool:
    """Whether the meta-schema accepts ``value`` for ``key`` itself, its subschemas aside.

    The subschemas ``value`` holds are put on ``stack`` for the caller to check in turn. False
    may mean "not proven": every keyword of ``_LEFT_TO_JSONSCHEMA`` answers False.
    """
    if key not in META_KEYWORDS:
        return True
    if key in _STRINGS:
        return isinstance(value, str)
    if key in _ONE_SCHEMA:
        stack.append(value)
        return True
    if key in _SCHEMA_MAPS:
        if not isinstance(value, Mapping):
            return False
        stack.extend(value.values())
        return True
    if key in _SCHEMA_LISTS:
        if not (isinstance(value, list) and value):
            return False
        stack.extend(value)
        return True
    if key in _ANY_VALUE:
        return True
    if key in _ARRAYS:
        return isinstance(value, list)
    if key in _NUMBERS:
        return is_number(value)
    if key in _COUNTS:
        return is_integer(value) and value >= 0
    if key in _BOOLEANS:
        return isinstance(value, bool)
    if key == "type":
        return _type_sound(value)
    if key == "multipleOf":
        return is_number(value) and value > 0
    if key == "required":
        return _string_set(value)
    if key == "dependentRequired":
        return isinstance(value, Mapping) and all(_string_set(v) for v in value.values())
    return False  # _LEFT_TO_JSONSCHEMA


def _type_sound(value: Any) -> bool:
    if isinstance(value, str):
        return value in _TYPES
    return (
        isinstance(value, list)
        and bool(value)
        and all(isinstance(name, str) and name in _TYPES for name in value)
        and len(set(value)) == len(value)
    )


def _string_set(value: Any) -> bool:
    return (
        isinstance(value, list)
        and all(isinstance(name, str) for name in value)
        and len(set(value)) == len(value)
    )


def _values_fit(node: Mapping[str, Any]) -> bool:
    if "enum" in node:
        without_enum = {key: value for key, value in node.items() if key != "enum"}
        if not all(_fits(value, without_enum) for value in node["enum"]):
            return False
    if "default" in node and not _fits(node["default"], node):
        return False
    examples = node.get("examples")
    return not isinstance(examples, list) or all(_fits(value, node) for value in examples)


def _fits(value: Any, schema: Any) -> bool:
    """Whether ``value`` is certainly valid against ``schema`` (False also when unsure)."""
    if isinstance(schema, bool):
        return schema
    if not isinstance(schema, Mapping):
        return False
    if isinstance(value, list) and not _array_fits(value, schema):
        return False
    if isinstance(value, dict) and not _object_fits(value, schema):
        return False
    for key, expected in schema.items():
        if key in _ANNOTATIONS or key in _FOR_OBJECTS or key in _FOR_ARRAYS:
            continue
        if key in _UNPROVEN:
            if key == "format" and (not isinstance(value, str) or _format_fits(expected, value)):
                continue  # formats only constrain strings
            if key == "multipleOf" and not is_number(value):
                continue
            return False
        if key == "type":
            names = expected if isinstance(expected, list) else [expected]
            if not any(_has_type(value, name) for name in names):
                return False
        elif key == "enum":
            if not any(_same(value, choice) for choice in expected):
                return False
        elif key == "const":
            if not _same(value, expected):
                return False
        elif key in _FOR_NUMBERS:
            if is_number(value) and not _within(key, value, expected):
                return False
        elif (
            key in _FOR_STRINGS
            and isinstance(value, str)
            and not _string_fits(key, value, expected)
        ):
            return False
    return True


_ARRAY_PROVEN = frozenset(("items", "minItems", "maxItems", "uniqueItems"))
_OBJECT_PROVEN = frozenset(
    ("properties", "required", "additionalProperties", "minProperties", "maxProperties")
)


def _array_fits(value: list[Any], schema: Mapping[str, Any]) -> bool:
    if any(key in _FOR_ARRAYS and key not in _ARRAY_PROVEN for key in schema):
        return False
    if "items" in schema and not all(_fits(item, schema["items"]) for item in value):
        return False
    if len(value) < schema.get("minItems", 0) or len(value) > schema.get("maxItems", len(value)):
        return False
    return not schema.get("uniqueItems") or _distinct(value)


def _object_fits(value: dict[Any, Any], schema: Mapping[str, Any]) -> bool:
    if any(key in _FOR_OBJECTS and key not in _OBJECT_PROVEN for key in schema):
        return False
    properties = schema.get("properties", {})
    extra = schema.get("additionalProperties", True)
    for key, item in value.items():
        if not _fits(item, properties.get(key, extra)):
            return False
    if not all(name in value for name in schema.get("required", [])):
        return False
    low, high = schema.get("minProperties", 0), schema.get("maxProperties", len(value))
    return bool(low <= len(value) <= high)


def _distinct(items: list[Any]) -> bool:
    """Whether no two items are equal as JSON (``true`` is not ``1``); containers: unproven."""
    seen: set[tuple[str, Any]] = set()
    for item in items:
        if isinstance(item, dict | list) or (isinstance(item, float) and item != item):
            return False
        tag = "b" if isinstance(item, bool) else "s" if isinstance(item, str) else "n"
        seen.add((tag, item))
    return len(seen) == len(items)


def _format_fits(name: Any, value: str) -> bool:
    """The formats authors give defaults and examples most, checked as jsonschema's
    ``FORMAT_CHECKER`` checks them; any other is left unproven."""
    if name == "date":
        if not _DATE.fullmatch(value):
            return False
        try:
            date.fromisoformat(value)
        except ValueError:
            return False
        return True
    return name == "email" and "@" in value


def _within(key: str, value: float, bound: float) -> bool:
    if key == "minimum":
        return value >= bound
    if key == "maximum":
        return value <= bound
    if key == "exclusiveMinimum":
        return value > bound
    return value < bound


def _string_fits(key: str, value: str, expected: Any) -> bool:
    if key == "pattern":
        try:
            return re.search(expected, value) is not None
        except re.error:
            return False
    return bool(len(value) >= expected if key == "minLength" else len(value) <= expected)


def _has_type(value: Any, name: str) -> bool:
    if name == "string":
        return isinstance(value, str)
    if name == "integer":
        return is_integer(value)
    if name == "number":
        return is_number(value)
    if name == "boolean":
        return isinstance(value, bool)
    if name == "null":
        return value is None
    if name == "array":
        return isinstance(value, list)
    return name == "object" and isinstance(value, dict)


def _same(value: Any, other: Any) -> bool:
    """JSON equality as ``jsonschema`` has it: ``true`` is not ``1``, ``1`` is ``1.0``;
    containers are left unproven (False)."""
    if isinstance(value, dict | list) or isinstance(other, dict | list):
        return False
    if isinstance(value, bool) or isinstance(other, bool):
        return isinstance(value, bool) and isinstance(other, bool) and value == other
    if isinstance(value, str) or isinstance(other, str):
        return isinstance(value, str) and isinstance(other, str) and value == other
    if value is None or other is None:
        return value is None and other is None
    return bool(value == other)


def is_number(value: Any) -> bool:
    """Whether ``value`` is a JSON number (a bool is not)."""
    return isinstance(value, int | float) and not isinstance(value, bool)


def is_integer(value: Any) -> bool:
    """Whether ``value`` is a JSON integer as JSON Schema has it (``1.0`` is; a bool is not)."""
    if isinstance(value, bool):
        return False
    return isinstance(value, int) or (isinstance(value, float) and value.is_integer())
