"""Checking the outcome of one test-case call against the case's expectations.

The outcome is read from the ``CallToolResult`` an MCP client receives (text, ``isError``, and
the run's trace in ``_meta``: inner tool calls, usage, turns, stop reason — a failed call's
too; ``structuredContent`` where there is no trace), so a case checks what a client would get.
Every failed expectation is named by its key in the agent file (``contains[1]``,
``toolCalls[0]``) with what was found instead.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from typing import Any

import mcp_types as types
import regex
from jsonschema.exceptions import SchemaError
from referencing.exceptions import Unresolvable

from mcp_export.server.result import RUN_META
from mcp_export.server.steps import THREAD_META
from mcp_export.server.typed_result import TRACE_META
from mcp_export.testing.bounded import CheckTimeout, Deadline, answer_validator, search
from mcp_export.testing.fields import typed_failures
from mcp_export.testing.outcome import CallOutcome, Failure
from schema_types.cases import CalledTool, Expectations
from schema_types.limits import MAX_NESTING, nesting_depth

__all__ = ["CallOutcome", "Failure", "check", "is_subset", "outcome_of", "quoted"]

_QUOTE_LIMIT = 80


def _count(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def outcome_of(result: types.CallToolResult, duration_ms: float) -> CallOutcome:
    """The outcome of a ``tools/call`` result received after ``duration_ms``."""
    meta = result.meta if isinstance(result.meta, Mapping) else {}
    trace = meta.get(RUN_META)
    trace = trace if isinstance(trace, Mapping) else None
    notes = trace.get("notes") if trace is not None else None
    notes = notes if isinstance(notes, list) else []
    text = "".join(
        b.text for b in result.content if isinstance(b, types.TextContent) and b.text not in notes
    )
    typed = meta.get(TRACE_META)
    value: Any = None
    if isinstance(typed, Mapping):  # a typed tool: the answer is the object, the trace in _meta
        value = result.structured_content
        trace = trace if trace is not None else typed
    structured = trace if trace is not None else result.structured_content or {}
    calls = structured.get("toolCalls")
    usage = structured.get("usage")
    usage = usage if isinstance(usage, Mapping) else {}
    stop = structured.get("stopReason")
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
        tokens_partial=usage.get("inputTokensPartial") is True
        or usage.get("outputTokensPartial") is True,
        stop_reason=stop if isinstance(stop, str) else None,
        value=value,
    )


def _thread(meta: Any) -> str | None:
    found = meta.get(THREAD_META) if isinstance(meta, Mapping) else None
    return found if isinstance(found, str) else None


def quoted(text: str) -> str:
    """``text`` on one line, cut to a readable length, in JSON quotes (for failure messages)."""
    flat = " ".join(text.split())
    cut = flat if len(flat) <= _QUOTE_LIMIT else flat[: _QUOTE_LIMIT - 1] + "…"
    return json.dumps(cut, ensure_ascii=False)


def is_subset(expected: Any, actual: Any) -> bool:
    """Whether ``actual`` holds ``expected``: every key of an object (recursively), else equal."""
    if isinstance(expected, Mapping):
        return isinstance(actual, Mapping) and all(
            key in actual and is_subset(value, actual[key]) for key, value in expected.items()
        )
    if isinstance(expected, bool) or isinstance(actual, bool):
        return expected is actual  # true is not 1
    return bool(expected == actual)


def _called(wanted: str | CalledTool, calls: Sequence[Mapping[str, Any]]) -> bool:
    name, arguments = (wanted, None) if isinstance(wanted, str) else (wanted.name, wanted.arguments)
    for call in calls:
        if call.get("name") == name and (
            arguments is None or is_subset(arguments, call.get("arguments"))
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
                    "isError", f"expected an error result, got the answer {quoted(outcome.text)}"
                )
            )
        else:
            failures.append(Failure("isError", f"the call failed: {quoted(outcome.text)}"))
            return failures  # the answer checks would only repeat that there is no answer
    text = outcome.text
    for index, needle in enumerate(expect.contains):
        if needle not in text:
            failures.append(
                Failure(
                    f"contains[{index}]", f"{quoted(needle)} is not in the answer {quoted(text)}"
                )
            )
    for index, needle in enumerate(expect.not_contains):
        if needle in text:
            failures.append(
                Failure(
                    f"notContains[{index}]", f"{quoted(needle)} is in the answer {quoted(text)}"
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
    if expect.truncated is not None and outcome.truncated != expect.truncated:
        failures.append(
            Failure(
                "truncated",
                "the answer was cut off at the token limit (stop reason max_tokens): it is "
                "incomplete; raise settings.maxOutputTokens, or set truncated: null to allow it"
                if outcome.truncated
                else "the answer was expected to be cut off at the token limit, and was not",
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
    return [Failure("matches", f"/{pattern}/ finds nothing in the answer {quoted(text)}")]


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
