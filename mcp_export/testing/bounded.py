"""Regular expressions and JSON Schema checks of an answer that end within a time limit.

A case's ``matches`` pattern, and any ``pattern`` or ``patternProperties`` of its ``jsonSchema``,
is the author's, and the answer is the model's: a pattern that backtracks (``(a|aa)+$`` against a
long run of ``a`` and one ``!``) would take hours on Python's ``re``, holding the GIL all the while.
Here every search runs on the ``regex`` engine with a timeout (it also lets other threads run while
it matches), all of one case's searches sharing one :class:`Deadline`; running out raises
:class:`CheckTimeout`.
"""

from __future__ import annotations

import time
from collections.abc import Iterator, Mapping
from typing import Any

import regex
from jsonschema import Draft202012Validator, ValidationError, validators
from referencing import Registry

__all__ = ["CHECK_LIMIT_S", "CheckTimeout", "Deadline", "answer_validator", "search"]

CHECK_LIMIT_S = 2.0
"""How long the regular expressions of one case's checks may take together."""


class CheckTimeout(Exception):
    """A check ran out of its time (a backtracking pattern)."""


class Deadline:
    """The moment one case's checks must have ended by."""

    def __init__(self, seconds: float = CHECK_LIMIT_S) -> None:
        self.seconds = seconds
        self._end = time.monotonic() + seconds

    def left(self) -> float:
        """Seconds left; :class:`CheckTimeout` when none are."""
        left = self._end - time.monotonic()
        if left <= 0:
            raise CheckTimeout(f"took longer than {self.seconds:g} s")
        return left


def search(pattern: str, text: str, deadline: Deadline) -> bool:
    """Whether ``pattern`` finds something in ``text`` before ``deadline``.

    Raises:
        CheckTimeout: the search did not end in time.
        regex.error: ``pattern`` is not a regular expression.
    """
    try:
        return regex.search(pattern, text, timeout=deadline.left()) is not None
    except TimeoutError as exc:
        raise CheckTimeout(f"took longer than {deadline.seconds:g} s") from exc


def answer_validator(schema: Mapping[str, Any] | bool, deadline: Deadline) -> Any:
    """A Draft 2020-12 validator whose regular expressions keep to ``deadline``.

    Formats are checked and no reference is fetched (a ``$ref`` to a URL does not resolve).
    """

    def pattern(validator: Any, wanted: str, instance: Any, _schema: Any) -> Iterator[Any]:
        if validator.is_type(instance, "string") and not search(wanted, instance, deadline):
            yield ValidationError(f"{instance!r} does not match {wanted!r}")

    def pattern_properties(
        validator: Any, patterns: Mapping[str, Any], instance: Any, _schema: Any
    ) -> Iterator[Any]:
        if not validator.is_type(instance, "object"):
            return
        for wanted, subschema in patterns.items():
            for key, value in instance.items():
                if search(wanted, key, deadline):
                    yield from validator.descend(value, subschema, path=key, schema_path=wanted)

    def additional_properties(
        validator: Any, allowed: Any, instance: Any, schema: Mapping[str, Any]
    ) -> Iterator[Any]:
        if not validator.is_type(instance, "object"):
            return
        known = schema.get("properties", {})
        patterns = list(schema.get("patternProperties", {}))
        extras = [
            key
            for key in instance
            if key not in known and not any(search(p, key, deadline) for p in patterns)
        ]
        if validator.is_type(allowed, "object"):
            for extra in extras:
                yield from validator.descend(instance[extra], allowed, path=extra)
        elif allowed is False and extras:
            listed = ", ".join(repr(each) for each in sorted(extras))
            yield ValidationError(f"Additional properties are not allowed ({listed} unexpected)")

    bounded = validators.extend(
        Draft202012Validator,
        {
            "pattern": pattern,
            "patternProperties": pattern_properties,
            "additionalProperties": additional_properties,
        },
    )
    return bounded(
        schema, format_checker=Draft202012Validator.FORMAT_CHECKER, registry=_NO_RETRIEVAL
    )


_NO_RETRIEVAL: Registry[Any] = Registry()
