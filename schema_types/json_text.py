"""JSON paths and values in words: the text every problem message is made of.

``format_path`` writes the dotted path that names an argument or a schema keyword
(``passengers[1].age``); ``describe_value`` and ``json_text`` quote values in messages. Kept apart
from ``arguments`` (which needs ``jsonschema``) so that reading an agent file, which only reports
problems, does not import a validator.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping
from typing import Any

from schema_types.errors import Problem

__all__ = [
    "Located",
    "PathParts",
    "describe_value",
    "format_path",
    "json_text",
    "json_type_name",
    "path_sort_key",
    "to_problems",
]

PathParts = tuple[str | int, ...]
Located = tuple[PathParts, str]

# Keys that read unambiguously in a dotted path; anything else is quoted (``a["first name"]``).
_PLAIN_KEY = re.compile(r"^[A-Za-z0-9_$@-]+$")


def format_path(parts: Iterable[str | int]) -> str:
    """Render path parts as a JSON path: ``("passengers", 1, "age")`` → ``passengers[1].age``.

    Args:
        parts: property names (str) and array indexes (int), outermost first.

    Returns:
        The dotted path, ``""`` for the root; odd property names are quoted (``a["b.c"]``).
    """
    text = ""
    for part in parts:
        if isinstance(part, int):
            text += f"[{part}]"
        elif _PLAIN_KEY.match(part):
            text += f".{part}" if text else part
        else:
            text += f"[{json.dumps(part, ensure_ascii=False)}]"
    return text


def json_type_name(value: Any) -> str:
    """The JSON type of a Python value (``integer``, ``string``, ``array`` …)."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, Mapping):
        return "object"
    if isinstance(value, list | tuple):
        return "array"
    return type(value).__name__


def json_text(value: Any, limit: int = 60) -> str:
    """Compact JSON for a message, shortened so one huge value cannot flood it."""
    text = json.dumps(value, ensure_ascii=False, default=str)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def describe_value(value: Any) -> str:
    """``string "x"``, ``integer 5``, ``null``: the type and the value, for "got …" messages."""
    return "null" if value is None else f"{json_type_name(value)} {json_text(value)}"


def path_sort_key(parts: PathParts) -> tuple[tuple[int, int, str], ...]:
    """Orders paths naturally (``a[2]`` before ``a[10]``, parents before children)."""
    return tuple((1, part, "") if isinstance(part, int) else (2, 0, part) for part in parts)


def to_problems(located: Iterable[Located]) -> list[Problem]:
    """Sort (path parts, message) pairs by path and turn them into :class:`Problem` objects."""
    ordered = sorted(located, key=lambda item: (path_sort_key(item[0]), item[1]))
    return [Problem(format_path(parts), message) for parts, message in ordered]
