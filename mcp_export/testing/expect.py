"""Checking the outcome of one test-case call against the case's expectations.

The outcome is read from the ``CallToolResult`` an MCP client receives (text, ``isError`` and
``structuredContent``: inner tool calls, usage, turns, duration), so a case checks what a client
would get. Every failed expectation is named by its key in the agent file (``contains[1]``,
``toolCalls[0]``) with what was found instead.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import mcp_types as types
import regex
from jsonschema.exceptions import SchemaError
from referencing.exceptions import Unresolvable

from mcp_export.server.steps import THREAD_META
from mcp_export.server.typed_result import TRACE_META
from mcp_export.testing.bounded import CheckTimeout, Deadline, answer_validator, search
from mcp_export.testing.fields import typed_failures
from schema_types.cases import CalledTool, Expectations
from schema_types.limits import MAX_NESTING, nesting_depth

__all__ = ["CallOutcome", "Failure", "check", "outcome_of"]

_QUOTE_LIMIT = 80


@dataclass(frozen=True)
class Failure:
    """One expectation that did not hold.

    Attributes:
        expectation: its key in the agent file, with an index for list entries
            (``contains[0]``, ``maxTurns``, ``judge``).
        message: what was expected and what was found, one sentence.
    """

    expectation: str
    message: str

    def __str__(self) -> str:
        return f"{self.expectation}: {self.message}"


@dataclass(frozen=True)
class CallOutcome:
    """What a client received for one call.

    Attributes:
        text: the result's text (the answer, or the error message).
        is_error: the result's ``isError``.
        tool_calls: the inner tool calls (``name``, ``arguments``, ``isError``), in order.
        turns: model requests the call took (None when the result does not say).
        duration_ms: the call's wall time as the client measured it.
        input_tokens: tokens sent, None when the model server did not say.
        output_tokens: tokens received, None when the model server did not say.
        thread_id: the call's history thread (its transcript), None when it was not recorded.
    """

    text: str
    is_error: bool
    duration_ms: float
    tool_calls: tuple[Mapping[str, Any], ...] = field(default=())
    turns: int | None = None
    input_tokens: int | None = None
    output_tokens: int | None = None
    thread_id: str | None = None
    value: Any = None
    """A typed tool's answer (its ``structuredContent``); None for an untyped tool."""


def _count(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def outcome_of(result: types.CallToolResult, duration_ms: float) -> CallOutcome:
    """The outcome of a ``tools/call`` result received after ``duration_ms``."""
    text = "".join(b.text for b in result.content if isinstance(b, types.TextContent))
    structured = result.structured_content or {}
    trace = result.meta.get(TRACE_META) if isinstance(result.meta, Mapping) else None
    value: Any = None
    if isinstance(trace, Mapping):  # a typed tool: the answer is the object, the trace in _meta
        value, structured = result.structured_content, trace
    calls = structured.get("toolCalls")
    usage = structured.get("usage")
    usage = usage if isinstance(usage, Mapping) else {}
    return CallOutcome(
        text=text,
        is_error=bool(result.is_error),
        duration_ms=duration_ms,
        tool_calls=tuple(c for c in calls if isinstance(c, Mapping))
        if isinstance(calls, list)
        else (),
        turns=_count(structured.get("turns")),
        input_tokens=_count(usage.get("inputTokens")),
        output_tokens=_count(usage.get("outputTokens")),
        thread_id=_thread(result.meta),
        value=value,
    )


def _thread(meta: Any) -> str | None:
    found = meta.get(THREAD_META) if isinstance(meta, Mapping) else None
    return found if isinstance(found, str) else None


def _quote(text: str) -> str:
    flat = " ".join(text.split())
    cut = flat if len(flat) <= _QUOTE_LIMIT else flat[: _QUOTE_LIMIT - 1] + "…"
    return json.dumps(cut, ensure_ascii=False)


def _subset(expected: Any, actual: Any) -> bool:
    """Whether ``actual`` holds ``expected``: every key of an object (recursively), else equal."""
    if isinstance(expected, Mapping):
        return isinstance(actual, Mapping) and all(
            key in actual and _subset(value, actual[key]) for key, value in expected.items()
        )
    if isinstance(expected, bool) or isinstance(actual, bool):
        return expected is actual  # true is not 1
    return bool(expected == actual)


def _called(wanted: str | CalledTool, calls: Sequence[Mapping[str, Any]]) -> bool:
    name, arguments = (wanted, None) if isinstance(wanted, str) else (wanted.name, wanted.arguments)
    for call in calls:
        if call.get("name") == name and (
            arguments is None or _subset(arguments, call.get("arguments"))
        ):
            return True
    return False


def check(
    expect: Expectations,
    outcome: CallOutcome,
    deadline: Deadline | None = None,
    output_schema: Mapping[str, Any] | None = None,
) -> list[Failure]:
    """The expectations of a case that ``outcome`` does not meet (``judge`` is not checked here).

    Every check ends: regular expressions (``matches``, a ``jsonSchema``'s patterns) share
    ``deadline`` and fail their expectation when it passes; an answer or a schema too deep to
    check fails its expectation too. Checking may take the whole deadline on the calling thread:
    call it from a worker thread where that thread has other work.

    Args:
        expect: the case's expectations.
        outcome: what the client received.
        deadline: when the regular expressions must have ended (default: two seconds from now).
        output_schema: the tool's outputSchema: the answer must fit it (checked unasked).

    Returns:
        The failures in the order the expectations are listed in the file format; empty when
        the case passes (apart from its judge).
    """
    failures: list[Failure] = []
    wants_error = bool(expect.is_error)
    if outcome.is_error != wants_error:
        if wants_error:
            failures.append(
                Failure(
                    "isError", f"expected an error result, got the answer {_quote(outcome.text)}"
                )
            )
        else:
            failures.append(Failure("isError", f"the call failed: {_quote(outcome.text)}"))
            return failures  # the answer checks would only repeat that there is no answer
    text = outcome.text
    for index, needle in enumerate(expect.contains):
        if needle not in text:
            failures.append(
                Failure(
                    f"contains[{index}]", f"{_quote(needle)} is not in the answer {_quote(text)}"
                )
            )
    for index, needle in enumerate(expect.not_contains):
        if needle in text:
            failures.append(
                Failure(
                    f"notContains[{index}]", f"{_quote(needle)} is in the answer {_quote(text)}"
                )
            )
    deadline = deadline or Deadline()
    if expect.matches is not None:
        failures.extend(_match_failures(expect.matches, text, deadline))
    if expect.json_schema is not None:
        failures.extend(_json_failures(expect.json_schema, text, deadline))
    if not outcome.is_error:
        failures.extend(typed_failures(expect, outcome, output_schema, deadline))
    calls = outcome.tool_calls
    made = ", ".join(str(c.get("name")) for c in calls) or "none"
    for index, wanted in enumerate(expect.tool_calls):
        if not _called(wanted, calls):
            what = (
                wanted
                if isinstance(wanted, str)
                else f"{wanted.name} with {json.dumps(wanted.arguments, ensure_ascii=False)}"
            )
            failures.append(
                Failure(f"toolCalls[{index}]", f"{what} was not called (calls made: {made})")
            )
    if expect.max_tool_calls is not None and len(calls) > expect.max_tool_calls:
        failures.append(
            Failure(
                "maxToolCalls",
                f"{len(calls)} inner tool calls, at most {expect.max_tool_calls} expected",
            )
        )
    if (
        expect.max_turns is not None
        and outcome.turns is not None
        and outcome.turns > expect.max_turns
    ):
        failures.append(
            Failure(
                "maxTurns", f"{outcome.turns} model requests, at most {expect.max_turns} expected"
            )
        )
    limit = expect.max_duration_ms
    if limit is not None and outcome.duration_ms > limit:
        failures.append(
            Failure(
                "maxDurationMs", f"took {outcome.duration_ms:.0f} ms, at most {limit:g} ms expected"
            )
        )
    return failures


def _match_failures(pattern: str, text: str, deadline: Deadline) -> list[Failure]:
    try:
        if search(pattern, text, deadline):
            return []
    except CheckTimeout as exc:
        return [
            Failure(
                "matches",
                f"/{pattern}/ {exc} on the answer ({len(text)} characters) and was stopped: "
                "it backtracks; write it without nested repeats such as (a+)+ or (a|aa)+",
            )
        ]
    except regex.error as exc:
        return [Failure("matches", f"/{pattern}/ is not a regular expression: {exc}")]
    return [Failure("matches", f"/{pattern}/ finds nothing in the answer {_quote(text)}")]


_TOO_DEEP_ANSWER = (
    f"the answer is JSON nested too deeply to check (objects and arrays at most {MAX_NESTING} "
    "levels deep)"
)


def _json_failures(schema: dict[str, Any] | bool, text: str, deadline: Deadline) -> list[Failure]:
    try:
        value = json.loads(_unfenced(text))
    except json.JSONDecodeError as exc:
        return [
            Failure(
                "jsonSchema",
                f"the answer is not JSON ({exc.msg} at line {exc.lineno}, column {exc.colno})",
            )
        ]
    except RecursionError:
        return [Failure("jsonSchema", _TOO_DEEP_ANSWER)]
    if nesting_depth(value) > MAX_NESTING:
        return [Failure("jsonSchema", _TOO_DEEP_ANSWER)]
    try:
        found = list(answer_validator(schema, deadline).iter_errors(value))
    except CheckTimeout as exc:
        return [
            Failure(
                "jsonSchema",
                f"checking the answer {exc} and was stopped: a pattern of the schema backtracks",
            )
        ]
    except RecursionError:
        return [
            Failure(
                "jsonSchema",
                "the schema cannot be used: its references lead in a loop (run metaagent "
                "validate on the agent file to see where)",
            )
        ]
    except (regex.error, Unresolvable, SchemaError) as exc:
        return [Failure("jsonSchema", f"the schema cannot be used: {exc}")]
    errors = sorted(found, key=lambda e: list(e.absolute_path))
    return [
        Failure(
            "jsonSchema",
            f"at {'/'.join(str(p) for p in error.absolute_path) or 'the top'}: {error.message}",
        )
        for error in errors[:5]
    ]


_FENCE = re.compile(r"^\s*```[A-Za-z0-9_-]*\n(.*?)\n```\s*$", re.DOTALL)


def _unfenced(text: str) -> str:
    """The answer without one Markdown code fence around it (models like to add one)."""
    found = _FENCE.match(text)
    return found.group(1) if found else text
