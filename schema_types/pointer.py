"""JSON Pointers (RFC 6901): ``/cheapest/price``, ``/flights/0/id``, ``""`` for the whole value.

A case's ``fields`` expectation addresses the parts of a typed answer with them.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

__all__ = ["PointerError", "parse_pointer", "resolve_pointer"]


class PointerError(ValueError):
    """A pointer that is not well formed, or leads to nothing in a value."""


def parse_pointer(pointer: str) -> tuple[str, ...]:
    """The reference tokens of ``pointer`` (``~1`` read as ``/``, ``~0`` as ``~``).

    Raises:
        PointerError: it neither is empty nor starts with ``/``, or has a ``~`` not followed by
            ``0`` or ``1``.
    """
    if pointer == "":
        return ()
    if not pointer.startswith("/"):
        raise PointerError(
            f"{pointer!r} is not a JSON Pointer: start it with '/' (e.g. /cheapest/price), or "
            "write '' for the whole answer"
        )
    tokens = pointer[1:].split("/")
    for token in tokens:
        rest = token.replace("~0", "").replace("~1", "")
        if "~" in rest:
            raise PointerError(
                f"{pointer!r} is not a JSON Pointer: '~' must be written ~0 and '/' in a name ~1"
            )
    return tuple(t.replace("~1", "/").replace("~0", "~") for t in tokens)


def resolve_pointer(value: Any, pointer: str) -> Any:
    """The part of ``value`` that ``pointer`` names.

    Raises:
        PointerError: the pointer is malformed, or names a member or an index that is not there
            (the message says how far it got).
    """
    current = value
    walked = ""
    for token in parse_pointer(pointer):
        if isinstance(current, Mapping):
            if token not in current:
                raise PointerError(f"{walked or 'the answer'} has no member {token!r}")
            current = current[token]
        elif isinstance(current, list):
            if not token.isdigit() or (len(token) > 1 and token.startswith("0")):
                raise PointerError(f"{walked or 'the answer'} is an array: {token!r} is no index")
            index = int(token)
            if index >= len(current):
                raise PointerError(
                    f"{walked or 'the answer'} has {len(current)} items: no index {index}"
                )
            current = current[index]
        else:
            raise PointerError(f"{walked or 'the answer'} is not an object or an array")
        walked += "/" + token.replace("~", "~0").replace("/", "~1")
    return current
