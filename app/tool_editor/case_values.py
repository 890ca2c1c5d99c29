"""A test case's values as the Tests panel's fields show them, and a case with one value changed.

Pure functions, no widgets. The text forms:

- a list of strings (``contains``, ``notContains``): one entry per line, blank lines ignored; an
  entry with a line break, an empty one, one with spaces at its ends or one that starts with a
  double quote is written as a JSON string (``"two\\nlines"``), and any line that starts with
  ``"`` is read as one;
- ``toolCalls``: one call per line, the inner tool's name, optionally followed by a JSON object
  of arguments the call must include (``time__now {"timezone": "UTC"}``);
- ``jsonSchema``: JSON text (empty: no schema).

A text that cannot be read raises :class:`ValueError` with what to fix, and the case is not
changed. :func:`with_expectation`, :func:`with_arguments`, :func:`with_ask` and :func:`with_name`
build the changed case the way the agent document builds an edit: a copy whose changed field is
a validated assignment (so the model's own rules, such as a valid pattern, refuse a bad value),
everything else, unknown keys included, kept; a value set empty is taken out of the file rather
than written as ``null`` or ``[]``.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError

from schema_types.cases import CalledTool, TestCase

_M = TypeVar("_M", bound=BaseModel)

__all__ = [
    "json_value",
    "list_text",
    "parse_list",
    "parse_schema",
    "parse_tool_calls",
    "schema_text",
    "tool_calls_text",
    "with_arguments",
    "with_ask",
    "with_expectation",
    "with_name",
]


def _is_empty(value: Any) -> bool:
    """None, ``[]`` and ``""`` take an expectation out of the file."""
    return value is None or (isinstance(value, list | str) and not value)


def _needs_quotes(entry: str) -> bool:
    return (
        not entry.strip()
        or entry != entry.strip()
        or "\n" in entry
        or "\r" in entry
        or entry.startswith('"')
    )


def list_text(values: Sequence[str]) -> str:
    """The entries one per line (JSON strings where a plain line would not read back)."""
    return "\n".join(json.dumps(v, ensure_ascii=False) if _needs_quotes(v) else v for v in values)


def parse_list(text: str) -> list[str]:
    """The entries of :func:`list_text`'s form.

    Raises:
        ValueError: a line that starts with ``"`` is not one JSON string.
    """
    values: list[str] = []
    for number, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        if line.lstrip().startswith('"'):
            try:
                value = json.loads(line)
            except json.JSONDecodeError as exc:
                raise ValueError(
                    f'line {number}: a line starting with " is read as a JSON string: {exc.msg}'
                ) from None
            if not isinstance(value, str):
                raise ValueError(f"line {number}: not one JSON string")
            values.append(value)
        else:
            values.append(line)
    return values


def tool_calls_text(calls: Sequence[str | CalledTool]) -> str:
    """One call per line: the name, and the arguments it must include as JSON after it."""
    lines: list[str] = []
    for call in calls:
        if isinstance(call, str):
            lines.append(call)
        elif call.arguments is None:
            lines.append(call.name)
        else:
            lines.append(f"{call.name} {json.dumps(call.arguments, ensure_ascii=False)}")
    return "\n".join(lines)


def parse_tool_calls(text: str) -> list[str | dict[str, Any]]:
    """The calls of :func:`tool_calls_text`'s form (``{name, arguments}`` where arguments are
    given).

    Raises:
        ValueError: the arguments after a name are not a JSON object.
    """
    calls: list[str | dict[str, Any]] = []
    for number, line in enumerate(text.splitlines(), 1):
        name, _space, rest = line.strip().partition(" ")
        if not name:
            continue
        rest = rest.strip()
        if not rest:
            calls.append(name)
            continue
        try:
            arguments = json.loads(rest)
        except json.JSONDecodeError as exc:
            raise ValueError(
                f"line {number}: after the tool name, the arguments it must include as a JSON "
                f"object: {exc.msg} (column {len(name) + 1 + exc.colno})"
            ) from None
        if not isinstance(arguments, dict):
            raise ValueError(f"line {number}: the arguments after {name} must be a JSON object")
        calls.append({"name": name, "arguments": arguments})
    return calls


def schema_text(schema: Mapping[str, Any] | bool | None) -> str:
    """The JSON Schema as indented JSON (empty when there is none)."""
    return "" if schema is None else json.dumps(schema, indent=2, ensure_ascii=False)


def parse_schema(text: str) -> dict[str, Any] | bool | None:
    """The JSON Schema typed as JSON (None for an empty text).

    Raises:
        ValueError: not JSON, or neither an object nor a boolean.
    """
    if not text.strip():
        return None
    value = json_value(text)
    if not isinstance(value, dict | bool):
        raise ValueError("a JSON Schema is an object (or true / false)")
    return value


def json_value(text: str) -> Any:
    """The JSON value typed.

    Raises:
        ValueError: not JSON, saying where.
    """
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise ValueError(f"line {exc.lineno}, column {exc.colno}: {exc.msg}") from None


def _refusal(exc: ValidationError) -> str:
    messages = [str(error.get("msg", "")).removeprefix("Value error, ") for error in exc.errors()]
    return "; ".join(m for m in messages if m) or str(exc)


def _without(model: _M, name: str) -> _M:
    """A copy of ``model`` with field ``name`` at its default and not set (out of the file)."""
    kind = type(model)
    values = {field: getattr(model, field) for field in kind.model_fields if field != name}
    return kind.model_construct(
        model.model_fields_set - {name}, **values, **(model.model_extra or {})
    )


def _with(model: _M, name: str, value: Any) -> _M:
    copy = model.model_copy()
    try:
        setattr(copy, name, value)
    except ValidationError as exc:
        raise ValueError(_refusal(exc)) from None
    return copy


def with_expectation(case: TestCase, name: str, value: Any) -> TestCase:
    """``case`` with the expectation ``name`` (a field of ``Expectations``, e.g. ``max_turns``)
    set to ``value``; an empty value (None, ``[]``, ``""``) takes it out.

    Raises:
        ValueError: the case model refuses the value (the message says why).
    """
    expect = _without(case.expect, name) if _is_empty(value) else _with(case.expect, name, value)
    if not expect.model_fields_set and not expect.model_extra:
        return _without(case, "expect") if "expect" in case.model_fields_set else case
    return _with(case, "expect", expect)


def with_arguments(case: TestCase, arguments: Mapping[str, Any]) -> TestCase:
    """``case`` with these arguments."""
    return _with(case, "arguments", dict(arguments))


def with_ask(case: TestCase, ask: str) -> TestCase:
    """``case`` (a caller case) with this request in words.

    Raises:
        ValueError: the request is blank: a caller model would get nothing to act on.
    """
    if not ask.strip():
        raise ValueError("a caller case needs a request in words, as a person would type it")
    return _with(case, "ask", ask)


def with_name(case: TestCase, name: str) -> TestCase:
    """``case`` under another name.

    Raises:
        ValueError: the name is empty.
    """
    return _with(case, "name", name)
