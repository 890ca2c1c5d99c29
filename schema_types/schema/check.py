"""Is a tool's parameters schema sound? The meta-schema check plus the mistakes authors make.

The Draft 2020-12 meta-schema catches malformed keywords; on top of it we flag what is valid JSON
Schema yet almost certainly a mistake: a root that is not an object, ``required`` names with no
property, an ``enum``/``default``/``examples`` value the schema itself refuses, bounds the wrong
way round, a ``pattern`` Python cannot compile, and a misspelt ``type``; and what would break
every call: a ``$ref`` that leads nowhere or loops back (``schema._refs``). Every problem carries
the dotted JSON path of the offending keyword (``properties.age.minimum``), sorted by path.

Cheap by design, as a load checks every tool: each distinct schema is checked once, and
``jsonschema`` (``schema._meta``) runs only where ``schema._proof`` cannot show it would find
nothing, which for the schemas authors usually write it can.
"""

from __future__ import annotations

import pickle
import re
from collections.abc import Mapping
from typing import Any, TypeGuard

from schema_types.errors import Problem, SchemaDefinitionError
from schema_types.json_text import (
    Located,
    PathParts,
    describe_value,
    json_text,
    json_type_name,
    to_problems,
)
from schema_types.limits import TOO_DEEP
from schema_types.schema._proof import proves_sound
from schema_types.schema._refs import reference_problems, subschemas

# the rest is package-internal
__all__ = ["check_parameters_schema", "ensure_parameters_schema", "json_schema_problem"]

KNOWN_TYPES = ("string", "number", "integer", "boolean", "array", "object", "null")
ROOT_MESSAGE = "the parameters root must be an object schema (type: object)"

# The JSON type of each keyword the typed nodes of ``schema.nodes`` model, by node type; checked
# before
# pydantic sees a dict so a wrong value is reported by its JSON path. "count" is a JSON integer,
# "schema" an object or boolean.
_COMMON_KEYWORDS = {
    "title": "string",
    "description": "string",
    "enum": "array",
    "examples": "array",
}
MODELLED_KEYWORDS: dict[str, dict[str, str]] = {
    "string": {"minLength": "count", "maxLength": "count", "pattern": "string", "format": "string"},
    "number": {
        "minimum": "number",
        "maximum": "number",
        "exclusiveMinimum": "number",
        "exclusiveMaximum": "number",
        "multipleOf": "number",
    },
    "boolean": {},
    "array": {
        "items": "schema",
        "minItems": "count",
        "maxItems": "count",
        "uniqueItems": "boolean",
    },
    "object": {"properties": "schemas", "required": "names", "additionalProperties": "schema"},
}
MODELLED_KEYWORDS["integer"] = MODELLED_KEYWORDS["number"]

# A required name may be defined by these instead of ``properties``; then we cannot tell.
_OTHER_DEFINERS = ("patternProperties", "allOf", "anyOf", "oneOf", "$ref", "if", "dependentSchemas")
_BOUNDS = (
    ("minimum", "maximum"),
    ("minLength", "maxLength"),
    ("minItems", "maxItems"),
    ("minProperties", "maxProperties"),
)
_EXCLUSIVE_BOUNDS = (
    ("exclusiveMinimum", "maximum"),
    ("minimum", "exclusiveMaximum"),
    ("exclusiveMinimum", "exclusiveMaximum"),
)


def check_parameters_schema(data: Mapping[str, Any]) -> list[Problem]:
    """Every problem of a parameters schema, sorted by path; ``[]`` when it is sound.

    Args:
        data: the tool's ``parameters`` as a plain JSON Schema dict.

    Returns:
        Problems such as ``properties.x.type: unknown type "strnig" (expected one of string, …)``
        or ``properties.cabin.default: "first" is not one of "economy", "business"``.
    """
    if not isinstance(data, Mapping):
        detail = f"the parameters schema must be a JSON object, got {describe_value(data)}"
        return [Problem("", detail)]
    try:
        # Generated agents repeat one schema across many tools: each is checked once. pickle
        # tells 1 from 1.0, True and "1" (as keys too), and is three times quicker than json.
        try:
            key = pickle.dumps(data, protocol=pickle.HIGHEST_PROTOCOL)
        except (pickle.PicklingError, TypeError, AttributeError):  # not plain data: not cached
            return _check(data)
        found = _CHECKED.get(key)
        if found is None:
            if len(_CHECKED) >= _CHECKED_MAX:
                _CHECKED.clear()
            found = _CHECKED[key] = tuple(_check(data))
        return list(found)
    except RecursionError:  # a loaded agent nests MAX_NESTING deep at most; other callers may not
        return [Problem("", TOO_DEEP)]


# Problems by the pickled schema (Problem is frozen, so the tuples can be shared).
_CHECKED: dict[bytes, tuple[Problem, ...]] = {}
_CHECKED_MAX = 1024


def _check(data: Mapping[str, Any]) -> list[Problem]:
    own: list[Located] = [] if data.get("type") == "object" else [((), ROOT_MESSAGE)]
    nodes = list(subschemas(data, ()))
    for parts, node in nodes:
        own += _node_problems(node, parts)
    references = reference_problems(data, [node for _, node in nodes])
    if proves_sound(data):
        return to_problems(own + references)
    from schema_types.schema._meta import (  # jsonschema: only when needed
        meta_problems,
        value_problems,
    )

    # Our own message for a keyword is clearer than the meta-schema's ("not valid under any of
    # the given schemas" for a misspelt type), so it replaces those at or below its path.
    own_paths = {parts for parts, _ in own if parts}
    all_meta = meta_problems(data)
    meta = [
        (parts, message)
        for parts, message in all_meta
        if not any(parts[: len(mine)] == mine for mine in own_paths)
    ]
    # Values are only checked against a node whose keywords are all sound: jsonschema cannot
    # apply a malformed keyword (a string minimum, an unknown type) to a value. A reference may
    # lead anywhere, so with references any malformed keyword or reference stops the checks.
    broken = [parts for parts, _ in all_meta]
    uses_refs = any("$ref" in node or "$dynamicRef" in node for _, node in nodes)
    if references or (broken and uses_refs):
        checked: list[tuple[PathParts, Any]] = []
    else:
        checked = [
            (parts, node)
            for parts, node in nodes
            if not any(b[: len(parts)] == parts for b in broken)
        ]
    return to_problems(own + references + meta + value_problems(data, checked))


def ensure_parameters_schema(data: Mapping[str, Any]) -> None:
    """Raise if :func:`check_parameters_schema` finds anything.

    Raises:
        SchemaDefinitionError: with every problem found.
    """
    problems = check_parameters_schema(data)
    if problems:
        raise SchemaDefinitionError(problems)


def json_schema_problem(data: Any) -> str | None:
    """What the Draft 2020-12 meta-schema refuses in any JSON Schema (not only a parameters
    schema), as one message; None when it is sound.

    As for parameters, ``jsonschema`` runs only where ``schema._proof`` cannot vouch for it.

    Args:
        data: a JSON Schema (an object or a boolean).

    Returns:
        A message such as ``type: 3 is not valid under any of the given schemas``, or None.
    """
    if isinstance(data, bool) or (isinstance(data, Mapping) and proves_sound(data)):
        return None
    from schema_types.schema._meta import meta_problems  # jsonschema: only when needed

    problems = to_problems(meta_problems(data))
    return str(problems[0]) if problems else None


def keyword_type_problems(data: Mapping[str, Any], parts: PathParts = ()) -> list[Located]:
    """Modelled keywords whose value has the wrong JSON type (``"minLength": "x"``).

    Follows the typed nodes of ``schema.nodes`` (a sub-schema without a modelled ``type`` is kept
    raw, so it is not looked into); used by ``schema_from_json`` before it builds nodes.
    """
    tag = data.get("type")
    if not isinstance(tag, str) or tag not in MODELLED_KEYWORDS:
        return []
    problems: list[Located] = []
    keywords = {**_COMMON_KEYWORDS, **MODELLED_KEYWORDS[tag]}
    for key, value in data.items():
        expected = keywords.get(key)
        if expected is None:
            continue
        here = (*parts, key)
        if expected == "schemas" and isinstance(value, Mapping):
            for name, sub in value.items():
                problems += _check_schema(sub, (*here, name))
        elif expected == "schema":
            problems += _check_schema(value, here)
        elif expected == "names" and isinstance(value, list):
            problems += [
                ((*here, i), f"expected string, got {describe_value(name)}")
                for i, name in enumerate(value)
                if not isinstance(name, str)
            ]
        elif not _has_json_type(value, expected):
            wanted = {"count": "integer", "names": "array", "schemas": "object"}.get(expected)
            problems.append((here, f"expected {wanted or expected}, got {describe_value(value)}"))
    return problems


def _check_schema(value: Any, parts: PathParts) -> list[Located]:
    if isinstance(value, Mapping):
        return keyword_type_problems(value, parts)
    if isinstance(value, bool):
        return []
    return [(parts, f"expected object or boolean, got {describe_value(value)}")]


def _has_json_type(value: Any, expected: str) -> bool:
    actual = json_type_name(value)
    if expected == "count":
        return actual == "integer" or (actual == "number" and float(value).is_integer())
    if expected == "number":
        return actual in ("integer", "number")
    return actual == expected


def _node_problems(node: Mapping[str, Any], parts: PathParts) -> list[Located]:
    problems: list[Located] = []
    if "type" in node:
        message = _type_problem(node["type"])
        if message:
            problems.append(((*parts, "type"), message))
    properties, required = node.get("properties"), node.get("required")
    if (
        isinstance(properties, Mapping)
        and isinstance(required, list)
        and not any(key in node for key in _OTHER_DEFINERS)
    ):
        problems += [
            ((*parts, "required", index), f"{json_text(name)} is not defined in properties")
            for index, name in enumerate(required)
            if isinstance(name, str) and name not in properties
        ]
    for low_key, high_key in _BOUNDS:
        low, high = node.get(low_key), node.get(high_key)
        if _is_number(low) and _is_number(high) and low > high:
            problems.append(((*parts, low_key), f"{low} is greater than {high_key} {high}"))
    # An exclusive bound leaves no value when it meets the other bound.
    for low_key, high_key in _EXCLUSIVE_BOUNDS:
        low, high = node.get(low_key), node.get(high_key)
        if _is_number(low) and _is_number(high) and low >= high:
            problems.append(((*parts, low_key), f"{low} leaves no number below {high_key} {high}"))
    regexes: list[tuple[PathParts, Any]] = [((*parts, "pattern"), node.get("pattern"))]
    if isinstance(node.get("patternProperties"), Mapping):
        regexes += [((*parts, "patternProperties", p), p) for p in node["patternProperties"]]
    for where, regex in regexes:
        if isinstance(regex, str):
            try:
                re.compile(regex)
            except re.error as exc:
                problems.append((where, f"invalid regular expression: {exc}"))
    return problems


def _type_problem(value: Any) -> str | None:
    names = value if isinstance(value, list) else [value]
    for name in names:
        if not isinstance(name, str):
            return f"expected a type name or a list of type names, got {describe_value(value)}"
        if name not in KNOWN_TYPES:
            return f'unknown type "{name}" (expected one of {", ".join(KNOWN_TYPES)})'
    return None


def _is_number(value: object) -> TypeGuard[float]:
    return isinstance(value, int | float) and not isinstance(value, bool)
