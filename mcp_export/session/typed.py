"""A typed run: the chat loop for a tool with an output schema.

The model is made to answer in the schema the way its endpoint supports best
(``providers.structured``); every answer is parsed and checked against the schema
(``schema_types.output_schema``, the one validation implementation), each check reported as an
``OutputChecked`` event. An answer that does not fit gets **one repair turn**: the model is told
the schema messages (as a user message, or as the final tool's error result) and answers again;
a second answer that does not fit ends the run with ``OutputInvalid``, whose message names every
JSON path. Inner tool calls run as in an untyped run until the model answers.

An endpoint whose ``response_format`` cannot go with tool calls (local servers that turn the
schema into a grammar) answers its tool turns unconstrained; a text answer that already fits is
taken, else a **format turn** asks for it under the schema (``tool_choice: none``). The format
turn is not a repair: the repair, if needed, comes after it.

The repair and format turns may go past ``settings.maxChatTurns`` (by two at most): the limit
bounds tool rounds, and a typed answer must not fail for want of the turn that checks it.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from mcp_export.errors import OutputInvalid
from mcp_export.providers.base import ChatMessage, ModelRequest, ToolCallRequest, ToolSchema
from mcp_export.providers.structured import FINAL_TOOL, StructuredOutput, plan_output
from mcp_export.redact import redact, redact_json
from mcp_export.session.events import Notice, SessionEvent
from mcp_export.session.failure import turn_limit_error
from mcp_export.session.output_events import OutputChecked, OutputStage
from mcp_export.session.run_state import RunState, TurnSession, last_request_notice
from schema_types.errors import Problem, SchemaDefinitionError
from schema_types.output_schema import output_problems

if TYPE_CHECKING:
    from collections.abc import Callable

    from schema_types.agent import ToolDefinition

__all__ = [
    "OutputSpec",
    "check_answer",
    "parse_answer",
    "repair_text",
    "request_additions",
    "typed_turns",
]

_PROBLEMS_SHOWN = 20
"""Schema messages a repair turn or a failure lists at most (the rest are counted)."""


@dataclass(frozen=True)
class OutputSpec:
    """What a typed run must answer: the tool's output schema and the tool's name."""

    schema: Mapping[str, Any]
    tool_name: str

    @classmethod
    def of(cls, tool: ToolDefinition) -> OutputSpec | None:
        """A tool's output spec; None for a tool that answers text."""
        if tool.output_schema is None:
            return None
        return cls(tool.output_schema, tool.name)


def request_additions(
    provider: str, schema: Mapping[str, Any], tool_name: str, *, tools: bool
) -> dict[str, Any]:
    """What is added to a model request for ``schema`` on ``provider`` (a provider id such as
    ``openai``, ``anthropic``, ``llamacpp``, ``sampling``): ``method``, ``source`` (where the
    wire format comes from), ``when``, and the wire parameters (``response_format``, or
    ``tools`` + ``tool_choice``, or ``system``). For the studio's preview.

    Args:
        provider: the provider id.
        schema: the tool's output schema.
        tool_name: the tool's name (names the schema on the wire).
        tools: whether the model is offered inner tools.
    """
    return plan_output(provider, schema, tool_name).additions(tools=tools)


_FENCED_PREFIXES = ("```json", "```JSON", "```")


def parse_answer(text: str) -> tuple[Any, Problem | None]:
    """The JSON value of an answer (one Markdown code fence around it is dropped), or the
    problem that it is not JSON."""
    body = text.strip()
    for prefix in _FENCED_PREFIXES:
        if body.startswith(prefix) and body.endswith("```") and len(body) > len(prefix) + 3:
            body = body[len(prefix) : -3].strip()
            break
    try:
        return json.loads(body), None
    except json.JSONDecodeError as exc:
        detail = f"the answer is not JSON ({exc.msg} at line {exc.lineno}, column {exc.colno})"
        return None, Problem("", detail)
    except RecursionError:
        return None, Problem("", "the answer is JSON nested too deeply to read")


def check_answer(
    schema: Mapping[str, Any], text: str, *, stage: OutputStage, method: str, value: Any = None
) -> OutputChecked:
    """Parse (unless ``value`` is given: a final tool's input) and check one answer (as the model
    gave it: a run emits it redacted, see ``_redacted``)."""
    problems: list[Problem]
    if value is None:
        value, problem = parse_answer(text)
        if problem is not None:
            return OutputChecked(stage, method, text, None, (problem,))
    try:
        problems = output_problems(schema, value)
    except SchemaDefinitionError as exc:
        problems = [Problem("", f"the output schema cannot be used: {exc}")]
    return OutputChecked(stage, method, text, value, tuple(problems))


def _redacted(checked: OutputChecked) -> OutputChecked:
    """A check as an event shows it: the text, the value and the messages (which may quote a
    value) through ``redact``, as every event of a session."""
    return OutputChecked(
        checked.stage,
        checked.method,
        redact(checked.text),
        redact_json(checked.value),
        tuple(Problem(p.path, redact(p.message)) for p in checked.problems),
    )


def _listed(problems: Sequence[Problem]) -> str:
    lines = [f"- {p.path or '(the whole answer)'}: {p.message}" for p in problems[:_PROBLEMS_SHOWN]]
    if len(problems) > _PROBLEMS_SHOWN:
        lines.append(f"- and {len(problems) - _PROBLEMS_SHOWN} more")
    return "\n".join(lines)


def repair_text(problems: Sequence[Problem]) -> str:
    """What the repair turn tells the model."""
    return (
        "Your answer does not match the required JSON Schema:\n"
        + _listed(problems)
        + "\nAnswer again with the corrected JSON only."
    )


def _failure(checked: OutputChecked) -> OutputInvalid:
    where = "; ".join(
        f"{p.path or '(root)'}: {p.message}" for p in checked.problems[:_PROBLEMS_SHOWN]
    )
    more = len(checked.problems) - _PROBLEMS_SHOWN
    if more > 0:
        where += f"; and {more} more"
    return OutputInvalid(
        f"the answer does not match the tool's outputSchema after one repair turn: {where}",
        checked.problems,
    )


_FORMAT_REQUEST = "Now give your final answer as JSON only, valid against the required JSON Schema."


class _TypedRun:
    """The state of one typed run (see the module docstring)."""

    def __init__(
        self,
        session: TurnSession,
        plan: StructuredOutput,
        tools: tuple[ToolSchema, ...],
        emit: Callable[[SessionEvent | None], None],
        state: RunState,
    ) -> None:
        self.session, self.plan, self.tools, self.emit, self.state = (
            session,
            plan,
            tools,
            emit,
            state,
        )
        self.repaired = False
        self.formatted = False
        self.final_next = False
        self.stage: OutputStage = "answer"

    def _check(self, text: str, *, value: Any = None) -> OutputChecked | None:
        """Check an answer; the accepted one, or None when another turn was arranged."""
        checked = _redacted(
            check_answer(
                self.plan.schema, text, stage=self.stage, method=self.plan.method, value=value
            )
        )
        self.emit(checked)
        if checked.ok:
            self.state.output = checked
            return checked
        if self.repaired:
            raise _failure(checked)
        self.repaired, self.stage, self.final_next = True, "repair", True
        self._problems = checked.problems
        return None

    async def run(self, parameters: dict[str, Any]) -> str:
        session, plan, state = self.session, self.plan, self.state
        turn = 0
        while True:
            turn += 1
            state.turns = turn
            last = turn >= session.max_turns
            asked = parameters
            if (
                self.tools
                and last
                and turn > 1
                and not self.final_next
                and plan.method != "final_tool"
                and asked.get("tool_choice") != "none"
            ):
                asked = {**parameters, "tool_choice": "none"}
                self.emit(Notice(last_request_notice(session.max_turns)))
            request = ModelRequest(session.model, tuple(session.messages), self.tools, asked)
            final = self.final_next or (last and turn > 1)
            sent = plan.shape(request, final=final)
            self.final_next = False
            message = await session._ask(sent, self.emit, state)
            if plan.method == "final_tool":
                answer = await self._final_tool_turn(message, last)
            else:
                answer = await self._text_turn(message, sent, last)
            if answer is not None:
                return answer
            if parameters.get("tool_choice") not in (None, "auto", "none"):
                parameters = {**parameters, "tool_choice": "auto"}

    async def _text_turn(self, message: ChatMessage, sent: ModelRequest, last: bool) -> str | None:
        if message.tool_calls:
            if last and not self.final_next:
                raise turn_limit_error(self.session.max_turns)
            await self.session._run_tools(message.tool_calls, self.emit, self.state)
            return None
        constrained = "response_format" in sent.parameters or self.plan.method != "response_format"
        if not constrained and not self.formatted:
            # Unconstrained text on an endpoint that cannot combine: taken if it already fits.
            loose = _redacted(
                check_answer(
                    self.plan.schema, message.content, stage="answer", method=self.plan.method
                )
            )
            self.emit(loose)
            if loose.ok:
                self.state.output = loose
                return _json(loose.value)
            self.formatted, self.stage, self.final_next = True, "format", True
            self.session._add_message(ChatMessage("user", _FORMAT_REQUEST))
            return None
        checked = self._check(message.content)
        if checked is not None:
            return _json(checked.value)
        self.session._add_message(ChatMessage("user", repair_text(self._problems)))
        return None

    async def _final_tool_turn(self, message: ChatMessage, last: bool) -> str | None:
        final = next((c for c in message.tool_calls if c.name == FINAL_TOOL), None)
        if final is None:
            if not message.tool_calls:
                # The model wrote its answer instead of calling the final tool: checked as text.
                checked = self._check(message.content)
                if checked is not None:
                    return _json(checked.value)
                self.session._add_message(ChatMessage("user", repair_text(self._problems)))
                return None
            if last and not self.repaired:
                raise turn_limit_error(self.session.max_turns)
            await self.session._run_tools(message.tool_calls, self.emit, self.state)
            return None
        if final.arguments_error is not None:
            checked = OutputChecked(
                self.stage,
                self.plan.method,
                "",
                None,
                (Problem("", redact(final.arguments_error)),),
            )
            self.emit(checked)
            if self.repaired:
                raise _failure(checked)
            self.repaired, self.stage, self.final_next = True, "repair", True
            self._problems = checked.problems
            accepted = None
        else:
            value = final.arguments
            accepted = self._check(json.dumps(value, ensure_ascii=False), value=value)
        # Every call of the turn gets its result, so the conversation stays well formed.
        for call in message.tool_calls:
            self.session._add_message(self._final_result(call, final, accepted))
        return None if accepted is None else _json(accepted.value)

    def _final_result(
        self, call: ToolCallRequest, final: ToolCallRequest, accepted: OutputChecked | None
    ) -> ChatMessage:
        if call is not final:
            text, is_error = "not run: the final answer was given in the same turn", True
        elif accepted is not None:
            text, is_error = "answer received", False
        else:
            text, is_error = repair_text(self._problems), True
        return ChatMessage("tool", text, tool_call_id=call.id, name=call.name, is_error=is_error)

    _problems: tuple[Problem, ...] = ()


def _json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False)


async def typed_turns(
    session: TurnSession,
    output: OutputSpec,
    tools: tuple[ToolSchema, ...],
    parameters: dict[str, Any],
    emit: Callable[[SessionEvent | None], None],
    state: RunState,
) -> str:
    """Play a typed run's turns (after the user message is added); the accepted answer as JSON
    text (its object is ``state.output``).

    Raises:
        OutputInvalid: the repaired answer still does not fit.
        TurnLimitExceeded: the model was still calling tools at ``maxChatTurns``.
    """
    plan = plan_output(session.provider.name, output.schema, output.tool_name)
    return await _TypedRun(session, plan, tools, emit, state).run(parameters)
