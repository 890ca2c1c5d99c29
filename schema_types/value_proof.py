"""A quick proof that a value fits a schema, so big valid answers skip ``jsonschema``'s walk.

``jsonschema`` takes over a second for a 1 MB answer (a few thousand objects: every keyword of
every node goes through its generic machinery). Most output schemas use a handful of keywords;
for those, :func:`proof_for` compiles the schema into plain Python checks that say whether a
value certainly fits. It only ever *proves*: when it answers False, or when the schema uses a
keyword it does not model (``$ref``, ``anyOf``, ``format``, ``multipleOf``, ``uniqueItems``…,
then there is no proof at all), ``jsonschema`` decides and says what is wrong
(``schema_types.arguments.value_problems``). So the messages, and every verdict on a value that
does not fit, stay the one validator's.

The checks follow Draft 2020-12 as ``jsonschema`` applies it: booleans are not numbers, a float
with no fraction is an integer, lengths count code points, ``pattern`` is searched (not
matched), ``enum``/``const`` compare JSON values (``1`` equals ``1.0``, ``true`` is not ``1``).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping
from functools import lru_cache
from typing import Any

from schema_types.schema._proof import is_integer, is_number

__all__ = ["proof_for"]

Check = Callable[[Any], bool]

# Keywords that say nothing about validity (annotations).
_ANNOTATIONS = frozenset(
    {"title", "description", "examples", "default", "$comment", "$schema", "$id", "deprecated",
     "readOnly", "writeOnly"}
)  # fmt: skip


class _Unsupported(Exception):
    """The schema uses a keyword the proof does not model."""


def proof_for(schema: Mapping[str, Any] | bool) -> Check | None:
    """A check that returns True only for values that fit ``schema``; None when the schema uses
    a keyword the proof does not model (cached by the schema's JSON text)."""
    try:
        key = json.dumps(schema, sort_keys=True)
    except (TypeError, ValueError):
        return None
    return _cached(key)


@lru_cache(maxsize=256)
def _cached(key: str) -> Check | None:
    try:
        return _compile(json.loads(key))
    except _Unsupported:
        return None


def _json_equal(a: Any, b: Any) -> bool:
    if isinstance(a, bool) or isinstance(b, bool):
        return isinstance(a, bool) and isinstance(b, bool) and a == b
    if isinstance(a, int | float) and isinstance(b, int | float):
        return a == b
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(_json_equal(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_json_equal(a[k], b[k]) for k in a)
    return type(a) is type(b) and a == b


_TYPES: dict[str, Check] = {
    "string": lambda v: type(v) is str or isinstance(v, str),
    "number": is_number,
    "integer": is_integer,
    "boolean": lambda v: isinstance(v, bool),
    "array": lambda v: isinstance(v, list),
    "object": lambda v: isinstance(v, dict),
    "null": lambda v: v is None,
}


def _compile(schema: Any) -> Check:
    if schema is True:
        return lambda _v: True
    if schema is False:
        return lambda _v: False
    if not isinstance(schema, dict):
        raise _Unsupported
    keys = set(schema) - _ANNOTATIONS
    if schema.get("type") == "object" and keys <= {"type", "properties", "required"}:
        return _plain_object(schema.get("properties") or {}, schema.get("required") or [])
    checks = [_keyword(key, schema[key], schema) for key in schema if key in keys]
    return _all(checks)


def _all(checks: list[Check]) -> Check:
    if not checks:
        return lambda _v: True
    if len(checks) == 1:
        return checks[0]
    if len(checks) == 2:
        first, second = checks
        return lambda v: first(v) and second(v)

    def every(value: Any) -> bool:
        for check in checks:  # noqa: SIM110 - quicker than all() over a generator
            if not check(value):
                return False
        return True

    return every


_MISSING = object()


_LEAF_TYPES: dict[str, tuple[type, ...]] = {
    "string": (str,),
    "number": (int, float),  # type(True) is bool: booleans are not numbers
    "boolean": (bool,),
    "null": (type(None),),
}
_LEAF_BOUNDS = frozenset({"minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum"})


def _leaf(schema: Any) -> tuple[tuple[type, ...], tuple[float | None, ...]] | None:
    """A property schema that is a JSON type (not integer) with numeric bounds at most, as the
    Python types a ``json.loads`` value of it has and ``(min, max, exclusive min, exclusive
    max)``; None for anything else."""
    if not isinstance(schema, dict) or not isinstance(schema.get("type"), str):
        return None
    types = _LEAF_TYPES.get(schema["type"])
    keys = set(schema) - _ANNOTATIONS - {"type"}
    if types is None or not keys <= _LEAF_BOUNDS or (keys and schema["type"] != "number"):
        return None
    bounds = tuple(schema.get(k) for k in _BOUND_ORDER)
    if not all(b is None or is_number(b) for b in bounds):
        return None
    return types, bounds


_BOUND_ORDER = ("minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum")


def _plain_object(properties: Mapping[str, Any], required: Any) -> Check:
    """``{type: object, properties, required}``, the shape most output nodes have, in one
    function (the generic composition costs several calls a node); a property that is a plain
    JSON type is checked inline."""
    if not isinstance(properties, dict) or not isinstance(required, list):
        raise _Unsupported
    names = frozenset(required)
    # Plain leaves by their one Python type (a string property: str), bounded numbers apart.
    single: list[tuple[str, type]] = []
    several: list[tuple[str, tuple[type, ...]]] = []
    bounded: list[tuple[str, tuple[type, ...], tuple[float | None, ...]]] = []
    others: list[tuple[str, Check]] = []
    for name, sub in properties.items():
        leaf = _leaf(sub)
        if leaf is None:
            others.append((name, _compile(sub)))
            continue
        types, bounds = leaf
        if any(b is not None for b in bounds):
            bounded.append((name, types, bounds))
        elif len(types) == 1:
            single.append((name, types[0]))
        else:
            several.append((name, types))

    def check(value: Any) -> bool:
        if type(value) is not dict or not names <= value.keys():
            return False
        get = value.get
        for name, kind in single:
            item = get(name, _MISSING)
            if item is not _MISSING and type(item) is not kind:
                return False
        for name, types in several:
            item = get(name, _MISSING)
            if item is not _MISSING and type(item) not in types:
                return False
        for name, types, (low, high, above, below) in bounded:
            item = get(name, _MISSING)
            if item is _MISSING:
                continue
            if type(item) not in types:
                return False
            if (
                (low is not None and item < low)
                or (high is not None and item > high)
                or (above is not None and item <= above)
                or (below is not None and item >= below)
            ):
                return False
        for name, sub in others:
            item = get(name, _MISSING)
            if item is not _MISSING and not sub(item):
                return False
        return True

    return check


def _keyword(key: str, wanted: Any, schema: Mapping[str, Any]) -> Check:
    if key == "type":
        names = wanted if isinstance(wanted, list) else [wanted]
        if not all(isinstance(n, str) and n in _TYPES for n in names):
            raise _Unsupported
        tests = [_TYPES[n] for n in names]
        return tests[0] if len(tests) == 1 else lambda v: any(t(v) for t in tests)
    if key == "enum" and isinstance(wanted, list):
        return lambda v: any(_json_equal(v, option) for option in wanted)
    if key == "const":
        return lambda v: _json_equal(v, wanted)
    if key in ("minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum"):
        if not is_number(wanted):
            raise _Unsupported
        compare: Callable[[Any], bool] = {
            "minimum": lambda v: v >= wanted,
            "maximum": lambda v: v <= wanted,
            "exclusiveMinimum": lambda v: v > wanted,
            "exclusiveMaximum": lambda v: v < wanted,
        }[key]
        return lambda v: not is_number(v) or compare(v)
    if key in ("minLength", "maxLength", "minItems", "maxItems", "minProperties", "maxProperties"):
        if not is_integer(wanted):
            raise _Unsupported
        kind = str if key.endswith("Length") else list if key.endswith("Items") else dict
        low = key.startswith("min")
        return lambda v: not isinstance(v, kind) or (len(v) >= wanted if low else len(v) <= wanted)
    if key == "pattern" and isinstance(wanted, str):
        try:
            search = re.compile(wanted).search
        except re.error as exc:
            raise _Unsupported from exc
        return lambda v: not isinstance(v, str) or search(v) is not None
    if key == "required" and isinstance(wanted, list):
        required = frozenset(wanted)
        return lambda v: not isinstance(v, dict) or required <= v.keys()
    if key == "properties" and isinstance(wanted, dict):
        return _properties(wanted, schema)
    if key == "additionalProperties":
        if "patternProperties" in schema:
            raise _Unsupported
        return _additional(wanted, schema.get("properties") or {})
    if key == "items":
        if "prefixItems" in schema:
            raise _Unsupported
        item = _compile(wanted)

        def items(value: Any) -> bool:
            if type(value) is not list:
                return True
            for entry in value:  # noqa: SIM110 - quicker than all() over a generator
                if not item(entry):
                    return False
            return True

        return items
    raise _Unsupported


def _properties(properties: Mapping[str, Any], schema: Mapping[str, Any]) -> Check:
    compiled = [(name, _compile(sub)) for name, sub in properties.items()]

    def check(value: Any) -> bool:
        if not isinstance(value, dict):
            return True
        for name, sub in compiled:
            item = value.get(name, _MISSING)
            if item is not _MISSING and not sub(item):
                return False
        return True

    return check


def _additional(wanted: Any, properties: Mapping[str, Any]) -> Check:
    known = frozenset(properties)
    if wanted is False:
        return lambda v: not isinstance(v, dict) or known.issuperset(v.keys())
    sub = _compile(wanted)
    return lambda v: (
        not isinstance(v, dict) or all(sub(item) for name, item in v.items() if name not in known)
    )
