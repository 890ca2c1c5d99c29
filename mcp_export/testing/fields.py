"""A case's checks of a typed answer: the tool's outputSchema (checked without being told) and
``fields`` (parts of the answer by JSON Pointer: equals, oneOf, matches, atLeast, atMost).

The answer is a typed tool's ``structuredContent``; for an untyped tool, the answer text read
as JSON. Failures are named by their key in the agent file (``outputSchema``,
``fields["/cheapest/price"].atMost``).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from mcp_export.session.typed import parse_answer
from mcp_export.testing.bounded import CheckTimeout, Deadline, search
from mcp_export.testing.outcome import CallOutcome, Failure
from schema_types.cases import Expectations, FieldCheck
from schema_types.errors import SchemaDefinitionError
from schema_types.output_schema import output_problems
from schema_types.pointer import PointerError, resolve_pointer

__all__ = ["typed_failures"]

_SHOWN = 5
_QUOTE = 60


def _shown(value: Any) -> str:
    text = json.dumps(value, ensure_ascii=False)
    return text if len(text) <= _QUOTE else text[: _QUOTE - 1] + "…"


def typed_failures(
    expect: Expectations,
    outcome: CallOutcome,
    output_schema: Mapping[str, Any] | None,
    deadline: Deadline,
) -> list[Failure]:
    """The typed checks of one successful call (see the module docstring)."""
    failures: list[Failure] = []
    value = outcome.value
    if output_schema is not None:
        if value is None:
            value, problem = parse_answer(outcome.text)
            if problem is not None:
                return [Failure("outputSchema", f"the answer is not JSON: {problem.message}")]
        try:
            problems = output_problems(output_schema, value)
        except SchemaDefinitionError as exc:
            problems = []
            failures.append(Failure("outputSchema", f"the schema cannot be used: {exc}"))
        failures += [
            Failure("outputSchema", f"{p.path or 'the answer'}: {p.message}")
            for p in problems[:_SHOWN]
        ]
    if not expect.fields:
        return failures
    if value is None:
        value, problem = parse_answer(outcome.text)
        if problem is not None:
            return [*failures, Failure("fields", f"the answer is not JSON: {problem.message}")]
    for pointer, wanted in expect.fields.items():
        failures += _field_failures(pointer, wanted, value, deadline)
    return failures


def _field_failures(
    pointer: str, wanted: FieldCheck, value: Any, deadline: Deadline
) -> list[Failure]:
    key = f"fields[{json.dumps(pointer)}]"
    try:
        found = resolve_pointer(value, pointer)
    except PointerError as exc:
        return [Failure(key, f"{exc}")]
    failures: list[Failure] = []
    where = pointer or "the answer"
    if "equals" in wanted.model_fields_set and not _same(wanted.equals, found):
        failures.append(
            Failure(f"{key}.equals", f"{where} is {_shown(found)}, not {_shown(wanted.equals)}")
        )
    if wanted.one_of is not None and not any(_same(option, found) for option in wanted.one_of):
        failures.append(
            Failure(
                f"{key}.oneOf",
                f"{where} is {_shown(found)}, none of {_shown(wanted.one_of)}",
            )
        )
    if wanted.matches is not None:
        failures += _match(key, where, wanted.matches, found, deadline)
    for bound, limit in (("atLeast", wanted.at_least), ("atMost", wanted.at_most)):
        if limit is None:
            continue
        measured, what = _measure(found)
        if measured is None:
            failures.append(
                Failure(
                    f"{key}.{bound}",
                    f"{where} is {_shown(found)}: not a number, an array or a string",
                )
            )
        elif (bound == "atLeast" and measured < limit) or (bound == "atMost" and measured > limit):
            relation = "less" if bound == "atLeast" else "more"
            failures.append(
                Failure(
                    f"{key}.{bound}",
                    f"{where}{what} is {measured:g}, {relation} than {limit:g}",
                )
            )
    return failures


def _same(expected: Any, actual: Any) -> bool:
    if isinstance(expected, bool) or isinstance(actual, bool):
        return expected is actual  # true is not 1
    return bool(expected == actual)


def _measure(value: Any) -> tuple[float | None, str]:
    if isinstance(value, bool):
        return None, ""
    if isinstance(value, int | float):
        return float(value), ""
    if isinstance(value, list | str):
        return float(len(value)), "'s length"
    return None, ""


def _match(key: str, where: str, pattern: str, found: Any, deadline: Deadline) -> list[Failure]:
    if not isinstance(found, str):
        return [Failure(f"{key}.matches", f"{where} is {_shown(found)}, not text")]
    try:
        if search(pattern, found, deadline):
            return []
    except CheckTimeout as exc:
        return [Failure(f"{key}.matches", f"/{pattern}/ {exc} and was stopped")]
    return [Failure(f"{key}.matches", f"/{pattern}/ finds nothing in {where} {_shown(found)}")]
