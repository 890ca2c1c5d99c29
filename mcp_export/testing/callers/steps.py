"""What a caller model's reply means for a caller case: which step failed, or the call to serve.

The steps, in the order a caller case goes through them (:data:`STEPS`; a result names the
first that failed):

- ``caller``: the caller model's request failed (no reply to judge).
- ``no call``: it answered in words and called no tool.
- ``wrong tool``: it called other tools, not the one expected (the failure names them).
- ``unwanted call``: the case expects ``picks: none`` and it called one of ours.
- ``invalid arguments``: it called the right tool with arguments the tool's schema refuses
  (the messages are the served call's own, from ``validate_arguments``).
- ``unexpected arguments``: valid, but not holding the case's ``expect.arguments``.
- ``answer``: the call was served and the answer's expectations did not hold.

Failures are named by their key in the agent file (``picks``, ``arguments``) like every other
expectation.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal, get_args

from mcp_export.providers.base import ToolCallRequest
from mcp_export.testing.callers.ask import CallerTurn
from mcp_export.testing.expect import Failure, is_subset, quoted
from schema_types.arguments import validate_arguments
from schema_types.cases import Expectations
from schema_types.errors import ArgumentsError, SchemaDefinitionError

__all__ = ["NONE", "STEPS", "PickCheck", "Step", "check_pick"]

Step = Literal[
    "caller",
    "no call",
    "wrong tool",
    "unwanted call",
    "invalid arguments",
    "unexpected arguments",
    "answer",
]
STEPS: tuple[Step, ...] = get_args(Step)
NONE = "none"
"""``picks: none``: the caller must call none of the agent's tools."""


@dataclass(frozen=True)
class PickCheck:
    """Step (a) judged.

    Attributes:
        step: the step that failed; None when the caller did what the case expects.
        failures: what did not hold (empty when ``step`` is None).
        wanted: the tool the case expects called (its served name), or ``none``.
        picked: the names of the tools the caller called, in order.
        call: the caller's call of the wanted tool, when it made one.
        arguments_valid: whether that call's arguments passed the schema (None: no such call,
            or a decoy whose schema is not ours to apply).
        arguments_expected: whether they hold ``expect.arguments`` (None: not checked).
    """

    step: Step | None
    failures: tuple[Failure, ...]
    wanted: str
    picked: tuple[str, ...]
    call: ToolCallRequest | None = None
    arguments_valid: bool | None = None
    arguments_expected: bool | None = None

    @property
    def picked_right(self) -> bool:
        """Whether the caller called the wanted tool (or, for ``none``, none of ours)."""
        return self.step not in ("caller", "no call", "wrong tool", "unwanted call")

    @property
    def serve(self) -> bool:
        """Whether the call goes on to step (b): one of ours, with arguments that passed."""
        return self.step is None and self.call is not None and self.arguments_valid is True


def check_pick(
    expect: Expectations,
    turn: CallerTurn,
    *,
    wanted: str,
    parameters: Mapping[str, Any] | None,
    strip: Sequence[str] = (),
) -> PickCheck:
    """Judge the caller's reply against a caller case's ``picks`` and ``arguments``.

    Args:
        expect: the case's expectations.
        turn: what the caller did.
        wanted: the tool the case expects called, as offered (``picks`` resolved: the case's
            own tool by default, one of ours by its served name), or :data:`NONE`.
        parameters: the wanted tool's parameters when it is one of ours (its arguments are
            validated against them and the call is served); None: a decoy, not ours to serve.
        strip: argument names the wanted tool's served call takes off before validating
            (``conversationId`` of a conversation tool).
    """
    picked = tuple(call.name for call in turn.calls)
    ours = {tool.name for tool in turn.tools if tool.ours}
    if turn.error is not None:
        return PickCheck("caller", (Failure("caller", turn.error),), wanted, picked)
    if wanted == NONE:
        called = [name for name in picked if name in ours]
        if called:
            message = f"called {', '.join(called)}, though the case expects none of our tools"
            return PickCheck("unwanted call", (Failure("picks", message),), wanted, picked)
        return PickCheck(None, (), wanted, picked)
    call = next((c for c in turn.calls if c.name == wanted), None)
    if call is None:
        if not picked:
            said = f"it answered {quoted(turn.text)}" if turn.text else "its reply was empty"
            message = f"no tool was called ({said}); expected {wanted}"
            return PickCheck("no call", (Failure("picks", message),), wanted, picked)
        message = f"called {', '.join(picked)} instead of {wanted}"
        return PickCheck("wrong tool", (Failure("picks", message),), wanted, picked)
    if call.arguments_error is not None:
        failure = Failure(
            "arguments", f"{wanted}'s arguments cannot be read: {call.arguments_error}"
        )
        return PickCheck("invalid arguments", (failure,), wanted, picked, call, False)
    valid: bool | None = None
    if parameters is not None:
        arguments = {k: v for k, v in call.arguments.items() if k not in strip}
        try:
            validate_arguments(parameters, arguments)
        except (ArgumentsError, SchemaDefinitionError) as exc:
            problems = "; ".join(str(p) for p in exc.problems) or str(exc)
            failure = Failure(
                "arguments", f"{wanted} was called with invalid arguments: {problems}"
            )
            return PickCheck("invalid arguments", (failure,), wanted, picked, call, False)
        valid = True
    expected: bool | None = None
    if expect.arguments is not None:
        expected = is_subset(expect.arguments, call.arguments)
        if not expected:
            failure = Failure(
                "arguments",
                f"{wanted} was called with {_json(call.arguments)}, which does not hold "
                f"{_json(expect.arguments)}",
            )
            return PickCheck("unexpected arguments", (failure,), wanted, picked, call, valid, False)
    return PickCheck(None, (), wanted, picked, call, valid, expected)


def _json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, default=str)
