"""Call arguments against a tool's parameters: sample values, defaults and validation.

One implementation serves the template preview, the test dialog and the served MCP call, so what a
person tests is what a client gets. Everything here works on plain JSON Schema dicts (the
``parameters`` of a tool as written), not on the typed nodes of ``schema.nodes``.

Errors name the argument by its path (``passengers[1].age``) and say what is wrong in words a person
can act on; :func:`located_problems` turns ``jsonschema`` errors into those, and ``schema.check``
reuses it for meta-schema errors so both read alike.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Iterable, Iterator, Mapping, Sequence, Sized
from copy import deepcopy
from decimal import Decimal, InvalidOperation
from functools import lru_cache
from typing import Any

from jsonschema import Draft202012Validator, validators
from jsonschema.exceptions import SchemaError, ValidationError, best_match, relevance
from referencing import Registry
from referencing.exceptions import Unresolvable

from schema_types.errors import ArgumentsError, Problem, SchemaDefinitionError
from schema_types.json_text import (
    Located,
    PathParts,
    describe_value,
    json_text,
    json_type_name,
    path_sort_key,
    to_problems,
)
from schema_types.limits import MAX_NESTING, nesting_depth
from schema_types.schema._refs import reference_problems
from schema_types.value_proof import proof_for

__all__ = [
    "apply_defaults",
    "sample_arguments",
    "sample_value",
    "validate_arguments",
    "value_problems",
]

_FORMAT_SAMPLES = {
    "date": "2026-01-31",
    "date-time": "2026-01-31T09:00:00Z",
    "time": "09:00:00Z",
    "email": "person@example.com",
    "uri": "https://example.com",
    "url": "https://example.com",
    "uuid": "123e4567-e89b-12d3-a456-426614174000",
}


def _with_article(type_name: str) -> str:
    if type_name == "null":
        return type_name
    return ("an " if type_name[0] in "aeiou" else "a ") + type_name


def _or_list(words: Sequence[str]) -> str:
    return words[0] if len(words) == 1 else ", ".join(words[:-1]) + " or " + words[-1]


def _plural(count: Any, one: str, many: str) -> str:
    return f"{count} {one if count == 1 else many}"


def _message(error: ValidationError) -> str:
    """A person-readable message for one ``jsonschema`` error (without its path)."""
    kind, expected, instance = error.validator, error.validator_value, error.instance
    simple = {
        "minimum": f"{json_text(instance)} is less than the minimum of {expected}",
        "maximum": f"{json_text(instance)} is greater than the maximum of {expected}",
        "exclusiveMinimum": f"{json_text(instance)} must be greater than {expected}",
        "exclusiveMaximum": f"{json_text(instance)} must be less than {expected}",
        "multipleOf": f"{json_text(instance)} is not a multiple of {expected}",
        "minLength": f"{json_text(instance)} is too short (minimum length {expected})",
        "maxLength": f"{json_text(instance)} is too long (maximum length {expected})",
        "format": f"{json_text(instance)} is not a valid {expected}",
        "uniqueItems": "has duplicate items",
    }
    if kind in simple:
        return simple[kind]
    if kind == "type":
        types = [expected] if isinstance(expected, str) else list(expected)
        return f"expected {_or_list(types)}, got {describe_value(instance)}"
    if kind == "enum":
        choices = ", ".join(json_text(choice) for choice in expected)
        return f"{json_text(instance)} is not one of {choices}"
    if kind == "const":
        return f"must be {json_text(expected)}, got {json_text(instance)}"
    if kind == "pattern":
        return f"{json_text(instance)} does not match the pattern {json_text(expected)}"
    if kind in ("minItems", "maxItems", "minProperties", "maxProperties"):
        bound = "at least" if kind.startswith("min") else "at most"
        nouns = ("item", "items") if kind.endswith("Items") else ("property", "properties")
        count = len(instance) if isinstance(instance, Sized) else instance
        return f"expected {bound} {_plural(expected, *nouns)}, got {count}"
    if kind in ("anyOf", "oneOf") and not error.context:
        return "does not match any of the allowed schemas"
    if kind == "oneOf":
        return "matches more than one of the allowed schemas"
    if kind is None:  # the ``false`` schema
        return "is not allowed here"
    text = str(error.message).rstrip(".")
    return text[:1].lower() + text[1:]


def _located(
    error: ValidationError, prefix: PathParts, missing_text: str = "required argument is missing"
) -> list[Located]:
    """One error as (path, message) pairs; ``required``/``additionalProperties`` name each key."""
    parts = prefix + tuple(error.absolute_path)
    instance, schema = error.instance, error.schema
    if error.validator == "required" and isinstance(instance, Mapping):
        missing = [name for name in error.validator_value if name not in instance]
        return [((*parts, name), missing_text) for name in missing]
    if error.validator == "additionalProperties" and isinstance(instance, Mapping):
        known = schema.get("properties") or {}
        patterns = list(schema.get("patternProperties") or {})
        extra = [
            key
            for key in instance
            if key not in known and not any(re.search(p, key) for p in patterns)
        ]
        allowed = f"allowed: {', '.join(known)}" if known else "no arguments are allowed here"
        return [((*parts, key), f"unexpected argument ({allowed})") for key in extra]
    return [(parts, _message(error))]


def located_problems(
    errors: Iterable[ValidationError],
    prefix: PathParts = (),
    missing_text: str = "required argument is missing",
) -> list[Located]:
    """The best error per location, as (path parts, message) pairs sorted by path.

    ``anyOf``/``oneOf`` errors are replaced by their most relevant sub-error first, so a value that
    fits none of the alternatives is reported by what is wrong with it, not by the keyword.
    """
    best: dict[PathParts, tuple[ValidationError, str]] = {}
    for error in errors:
        leaf = _best_leaf(error)
        for parts, message in _located(leaf, prefix, missing_text):
            if parts not in best or relevance(leaf) > relevance(best[parts][0]):
                best[parts] = (leaf, message)
    return sorted(
        ((parts, message) for parts, (_, message) in best.items()),
        key=lambda item: (path_sort_key(item[0]), item[1]),
    )


def _best_leaf(error: ValidationError) -> ValidationError:
    # best_match descends into anyOf/oneOf, preferring the branch whose type fits the value.
    leaf: ValidationError = best_match([error])
    return leaf


# --- samples -----------------------------------------------------------------------------------


def sample_value(schema: Mapping[str, Any] | bool, name: str | None = None) -> Any:
    """A plausible value for a schema, for previews and to prefill the test form.

    The first of ``examples``, else ``default``, else ``const``, else the first ``enum`` value,
    else a placeholder of the right type that respects the bounds (a string by ``format``, or the
    property name in angle brackets like ``"<destination>"``).

    Args:
        schema: a JSON Schema dict (a boolean schema gives a placeholder string).
        name: the property name, used in string placeholders and passed down to nested values.
    """
    if not isinstance(schema, Mapping):
        return f"<{name or 'value'}>"
    examples = schema.get("examples")
    if isinstance(examples, list) and examples:
        return deepcopy(examples[0])
    for keyword in ("default", "const"):
        if keyword in schema:
            return deepcopy(schema[keyword])
    enum = schema.get("enum")
    if isinstance(enum, list) and enum:
        return deepcopy(enum[0])
    kind = schema.get("type")
    if isinstance(kind, list):
        kind = next((t for t in kind if t != "null"), "null")
    if kind is None:
        for keyword in ("anyOf", "oneOf"):
            branches = schema.get(keyword)
            if isinstance(branches, list) and branches and isinstance(branches[0], Mapping):
                return sample_value(branches[0], name)
        kind = "object" if "properties" in schema else "array" if "items" in schema else "string"
    if kind == "integer":
        return _sample_integer(schema)
    if kind == "number":
        return _sample_number(schema)
    if kind == "boolean":
        return True
    if kind == "null":
        return None
    if kind == "array":
        return _sample_array(schema, name)
    if kind == "object":
        properties = schema.get("properties")
        if not isinstance(properties, Mapping):
            return {}
        return {key: sample_value(sub, key) for key, sub in properties.items()}
    return _sample_string(schema, name)


def sample_arguments(parameters: Mapping[str, Any]) -> dict[str, Any]:
    """Sample arguments for every property of a parameters schema (nested objects included)."""
    value = sample_value(parameters)
    return value if isinstance(value, dict) else {}


def _number(schema: Mapping[str, Any], keyword: str) -> float | None:
    value = schema.get(keyword)
    return value if isinstance(value, int | float) and not isinstance(value, bool) else None


def _count(schema: Mapping[str, Any], keyword: str) -> int | None:
    value = _number(schema, keyword)
    return None if value is None else max(0, int(value))


def _sample_string(schema: Mapping[str, Any], name: str | None) -> str:
    text = _FORMAT_SAMPLES.get(str(schema.get("format")), f"<{name or 'value'}>")
    shortest, longest = _count(schema, "minLength"), _count(schema, "maxLength")
    if shortest is not None and len(text) < shortest:
        text += "x" * (shortest - len(text))
    return text if longest is None else text[:longest]


def _sample_integer(schema: Mapping[str, Any]) -> int:
    lows, highs = [], []
    if (low := _number(schema, "minimum")) is not None:
        lows.append(math.ceil(low))
    if (low := _number(schema, "exclusiveMinimum")) is not None:
        lows.append(math.floor(low) + 1)
    if (high := _number(schema, "maximum")) is not None:
        highs.append(math.floor(high))
    if (high := _number(schema, "exclusiveMaximum")) is not None:
        highs.append(math.ceil(high) - 1)
    value = max(lows) if lows else 1  # the minimum itself is the likeliest real value
    return min([value, *highs])


def _sample_number(schema: Mapping[str, Any]) -> float:
    value: float = 1.5
    low, low_open = _number(schema, "minimum"), False
    high, high_open = _number(schema, "maximum"), False
    excl = _number(schema, "exclusiveMinimum")
    if excl is not None and (low is None or excl >= low):
        low, low_open = excl, True
    excl = _number(schema, "exclusiveMaximum")
    if excl is not None and (high is None or excl <= high):
        high, high_open = excl, True
    if low is not None and (value < low or (low_open and value == low)):
        value = low + 1 if low_open else low
    if high is not None and (value > high or (high_open and value == high)):
        value = (low + high) / 2 if low is not None else (high - 1 if high_open else high)
    return value


def _sample_array(schema: Mapping[str, Any], name: str | None) -> list[Any]:
    count = max(1, _count(schema, "minItems") or 0)
    longest = _count(schema, "maxItems")
    if longest is not None:
        count = min(count, longest)
    items = schema.get("items", {})
    return [sample_value(items, name) for _ in range(count)]


# --- defaults and validation -------------------------------------------------------------------


def apply_defaults(parameters: Mapping[str, Any], arguments: Mapping[str, Any]) -> dict[str, Any]:
    """A deep copy of ``arguments`` with the ``default`` of every missing property filled in.

    Defaults are filled recursively into nested objects that are present and into the object
    items of arrays; an absent object is not created just to hold defaults.
    """
    result = deepcopy(dict(arguments))
    _fill_defaults(parameters, result)
    return result


def _fill_defaults(schema: Any, value: Any) -> None:
    if not isinstance(schema, Mapping):
        return
    if isinstance(value, dict):
        properties = schema.get("properties")
        if isinstance(properties, Mapping):
            for key, sub in properties.items():
                if key in value:
                    _fill_defaults(sub, value[key])
                elif isinstance(sub, Mapping) and "default" in sub:
                    value[key] = deepcopy(sub["default"])
    elif isinstance(value, list):
        for item in value:
            _fill_defaults(schema.get("items"), item)


def validate_arguments(parameters: Mapping[str, Any], arguments: Any) -> dict[str, Any]:
    """Apply defaults, then validate the arguments of a call against the tool's parameters.

    Args:
        parameters: the tool's parameters schema (a JSON Schema object).
        arguments: the arguments as received (should be a JSON object).

    Returns:
        The arguments with defaults applied.

    Raises:
        ArgumentsError: listing every bad argument by path (``passengers[1].age: -3 is less than
            the minimum of 0``), sorted by path; also arguments nested deeper than
            :data:`MAX_NESTING`, or too deeply for this schema to validate.
        SchemaDefinitionError: the parameters schema itself is not valid JSON Schema, or its
            references cannot be followed (loaded agents are checked for both; this is the
            last line of defence, so a call never ends in a traceback).
    """
    if not isinstance(arguments, Mapping):
        got = _with_article(json_type_name(arguments))
        raise ArgumentsError([Problem("", f"arguments must be a JSON object, got {got}")])
    if nesting_depth(arguments) > MAX_NESTING:
        raise ArgumentsError([Problem("", _TOO_DEEP_ARGUMENTS)])
    validator = _validator_for(parameters)
    try:
        filled = apply_defaults(parameters, arguments)
        problems = to_problems(located_problems(validator.iter_errors(filled)))
    except RecursionError as exc:
        raise ArgumentsError([Problem("", _TOO_DEEP_ARGUMENTS)]) from exc
    except (re.error, Unresolvable, SchemaError) as exc:
        detail = f"the parameters schema cannot be used to validate: {exc}"
        raise SchemaDefinitionError([Problem("", detail)]) from exc
    if problems:
        raise ArgumentsError(problems)
    return filled


def value_problems(
    schema: Mapping[str, Any], value: Any, *, missing: str = "required argument is missing"
) -> list[Problem]:
    """Every problem of ``value`` against ``schema`` by path, sorted; no defaults applied.

    The validator is :func:`validate_arguments`'s (cached per schema, formats checked, nothing
    downloaded); a value ``schema_types.value_proof`` proves to fit skips its walk (a 1 MB
    answer). ``missing`` is what a missing required property is called.

    Raises:
        SchemaDefinitionError: the schema cannot be used to validate.
    """
    validator = _validator_for(schema)  # an unusable schema raises, proof or not
    proof = proof_for(schema)
    if proof is not None:
        try:
            if proof(value):
                return []  # proved to fit: jsonschema's walk would find nothing
        except RecursionError:
            pass
    if nesting_depth(value) > MAX_NESTING:
        return [Problem("", _TOO_DEEP_VALUE)]
    try:
        return to_problems(located_problems(validator.iter_errors(value), (), missing))
    except RecursionError:
        return [Problem("", _TOO_DEEP_VALUE)]
    except (re.error, Unresolvable, SchemaError) as exc:
        detail = f"the schema cannot be used to validate: {exc}"
        raise SchemaDefinitionError([Problem("", detail)]) from exc


_TOO_DEEP_VALUE = (
    f"the value nests too deeply to validate (objects and arrays at most {MAX_NESTING} levels deep)"
)

_TOO_DEEP_ARGUMENTS = (
    f"the arguments nest too deeply to validate (objects and arrays at most {MAX_NESTING} "
    "levels deep): send flatter arguments"
)


def _validator_for(parameters: Mapping[str, Any]) -> Any:
    # The server validates on every call, so the checked validator is cached by the schema text
    # (in key order: the order of properties shows in messages).
    try:
        key = json.dumps(parameters)
    except (TypeError, ValueError):  # not JSON (a YAML date, say): fine, just not cacheable
        return _build_validator(parameters)
    return _cached_validator(key)


@lru_cache(maxsize=256)
def _cached_validator(key: str) -> Any:
    return _build_validator(json.loads(key))


def _build_validator(parameters: Mapping[str, Any]) -> Any:
    located = located_problems(meta_validator().iter_errors(parameters))
    if not located and nesting_depth(parameters) <= MAX_NESTING:
        located = reference_problems(parameters)
    problems = to_problems(located)
    if problems:
        raise SchemaDefinitionError(problems)
    return checking_validator(parameters)


@lru_cache(maxsize=1)
def meta_validator() -> Draft202012Validator:
    """The Draft 2020-12 meta-schema's validator (built once: it is reused for every schema)."""
    return Draft202012Validator(Draft202012Validator.META_SCHEMA)


# References are followed within the schema and to the JSON Schema specifications, never fetched:
# jsonschema's default would download any URL a $ref names, at call time, with no time limit.
_NO_RETRIEVAL: Registry[Any] = Registry()


def _multiple_of(validator: Any, divisor: Any, instance: Any, schema: Any) -> Iterator[Any]:
    """``multipleOf`` on the numbers as written: 19.99 is a multiple of 0.01.

    jsonschema divides the binary floats (19.99 / 0.01 = 1998.9999999999998) and refuses it; a
    float's ``repr`` is the shortest text that reads back as it, so its Decimal is what the
    person (or the JSON) wrote.
    """
    if not validator.is_type(instance, "number"):
        return
    if isinstance(divisor, float) or isinstance(instance, float):
        try:
            quotient = Decimal(repr(instance)) / Decimal(repr(divisor))
            failed = quotient != quotient.to_integral_value()
        except (InvalidOperation, ValueError):
            failed = True
    else:
        failed = bool(instance % divisor)
    if failed:
        yield ValidationError(f"{instance!r} is not a multiple of {divisor}")


_Checking = validators.extend(Draft202012Validator, {"multipleOf": _multiple_of})


def checking_validator(parameters: Mapping[str, Any]) -> Draft202012Validator:
    """A validator for values against ``parameters`` (formats checked, nothing downloaded)."""
    checking: Draft202012Validator = _Checking(
        parameters, format_checker=Draft202012Validator.FORMAT_CHECKER, registry=_NO_RETRIEVAL
    )
    return checking
