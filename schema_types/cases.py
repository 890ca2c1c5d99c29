"""Test cases of a tool: arguments to call it with and what a good answer looks like.

Written under each tool of the agent file::

    tests:
      - name: Lisbon family of three
        arguments: {origin: LHR, destination: LIS}
        expect:
          contains: [TP1351]             # every string appears in the answer
          notContains: [sorry]           # none of these does
          matches: (?i)window seat       # a regular expression found in the answer
          jsonSchema: {type: object}     # the answer parses as JSON and validates
          toolCalls: [flights__search]   # inner tools called (or {name, arguments} subsets)
          maxToolCalls: 3
          maxTurns: 4
          maxDurationMs: 20000
          maxCost: 0.002                 # US dollars the call may cost (settings.prices)
          judge: The answer recommends exactly one flight.   # a judge model decides
          isError: false                 # true: the call must fail (e.g. bad arguments)
          truncated: false               # the default: an answer cut off at the token limit
                                         # (maxOutputTokens) fails; true: it must be; null: either

A **caller case** starts from a request in words instead of arguments: a caller model (the
client's model) gets ``ask`` with the tool list a client would see, and the case checks what it
calls before the answer expectations apply to that call::

      - name: family trip, words only
        ask: Book me, my wife and our 7-year-old from London to Lisbon on 1 June.
        expect:
          picks: book_flight             # default: the case's own tool; none: must not call it
          arguments: {destination: LIS}  # a subset of the arguments the caller filled

A caller case's ``arguments`` come from the caller model, so it may not also give its own;
``picks`` and ``arguments`` under ``expect`` belong to caller cases only. How the caller is set up
(its system prompt, the decoy tools offered beside ours) is ``settings.callers`` in the agent
file (:class:`schema_types.agent.CallerSettings`).

A **typed tool** (one with an ``outputSchema``) has every answer checked against its schema
without being told (the failure is named ``outputSchema``), and ``fields`` addresses parts of the
answer by JSON Pointer (RFC 6901; ``""`` is the whole answer; an untyped tool's answer text is
read as JSON), each with one or more of ``equals``, ``oneOf``, ``matches`` (a regular expression
found in a string), ``atLeast`` and ``atMost`` (a number, or an array's or a string's length)::

      - name: cheapest under 300
        arguments: {destination: OSL}
        expect:
          fields:
            /cheapest/price: {atMost: 300}
            /cheapest/airline: {oneOf: [SAS, Norwegian]}
            /flights: {atLeast: 1}         # at least one flight listed
            /currency: {equals: EUR}

**Mocked tools and injected faults** (``mock``): an inner tool answered by the case instead of its
server, keyed by the name the model sees (``server__tool``), or a whole tool server by its name::

      - name: calendar fails
        arguments: {destination: LIS}
        mock:
          calendar__free_slots: {result: {slots: []}}        # a fixed result (text or JSON)
          calendar__book: {error: "Error: calendar locked"}  # an error result (isError)
          flights__search: {delayMs: 90000}                  # answers this late (past its limit:
                                                             # the call's timeout fires as it would)
          weather: {down: true}                              # the server is down: not offered,
                                                             # a call says it cannot be called
        expect:
          contains: [calendar]

``delayMs`` may go with ``result`` or ``error`` (or alone: the server answers after the delay);
``down`` goes alone. Each reaches the model in the form a real server's would (an error as an
error result, a delay past the limit as the time-out text, a down server as an unavailable one).

Keys are camelCase like the rest of the file. A case with no expectation passes when the call
succeeds.
"""

from __future__ import annotations

import re
from typing import Annotated, Any

from pydantic import AfterValidator, Field, field_validator, model_validator

from schema_types.file_model import FileModel
from schema_types.json_text import format_path, path_sort_key
from schema_types.limits import MAX_NESTING, TOO_DEEP, nesting_depth
from schema_types.pointer import PointerError, parse_pointer
from schema_types.schema._refs import reference_problems
from schema_types.schema.meta_schema import meta_schema_error

__all__ = ["CalledTool", "Expectations", "FieldCheck", "MockedTool", "TestCase"]


def _check_pattern(value: str | None) -> str | None:
    if value is not None:
        try:
            re.compile(value)
        except re.error as exc:
            raise ValueError(f"not a regular expression: {exc}") from None
    return value


_RegularExpression = Annotated[str | None, AfterValidator(_check_pattern)]
"""A ``matches``: a regular expression that compiles (or None)."""


class CalledTool(FileModel):
    """An inner tool call a case expects: its name and, optionally, arguments it must include.

    Attributes:
        name: the inner tool's name as the model sees it (``server__tool``).
        arguments: a subset of the call's arguments (each key must be present with an equal
            value; nested objects are compared as subsets too); None: any arguments.
    """

    name: str = Field(min_length=1)
    arguments: dict[str, Any] | None = None


class FieldCheck(FileModel):
    """What one field of the answer (``fields``, by JSON Pointer) must be; every check set must
    hold. ``equals`` may be null (the field must be null): whether it is set is what counts."""

    equals: Any = None
    one_of: list[Any] | None = None
    matches: _RegularExpression = None
    at_least: float | None = None
    at_most: float | None = None

    @model_validator(mode="after")
    def _something_checked(self) -> FieldCheck:
        if not ({"equals", "one_of", "matches", "at_least", "at_most"} & self.model_fields_set):
            raise ValueError(
                "say what the field must be: equals, oneOf, matches, atLeast or atMost"
            )
        return self


class MockedTool(FileModel):
    """What a case's mocked inner tool (or tool server) does instead of running.

    Attributes:
        result: the tool's fixed result (a string is its text; any other value its JSON).
        error: the text of an error result (``isError``), as a failing tool returns.
        delay_ms: how long the tool takes before it answers (or times out at its limit).
        down: the tool's server is down (alone: no other key with it).
    """

    result: Any = None
    error: str | None = None
    delay_ms: float | None = Field(default=None, ge=0)
    down: bool = False

    @model_validator(mode="after")
    def _one_answer(self) -> MockedTool:
        answers = [k for k in ("result", "error") if k in self.model_fields_set]
        if len(answers) > 1:
            raise ValueError("a mock has result or error, not both")
        if self.down and (answers or self.delay_ms is not None):
            raise ValueError("down: true goes alone (a server that is down answers nothing)")
        if not self.down and not answers and self.delay_ms is None:
            raise ValueError("a mock needs result, error, delayMs or down: true")
        return self


class Expectations(FileModel):
    """What a good answer of a case looks like; every expectation set must hold."""

    contains: list[str] = Field(default_factory=lambda: list[str]())
    not_contains: list[str] = Field(default_factory=lambda: list[str]())
    matches: _RegularExpression = None
    json_schema: dict[str, Any] | bool | None = None
    tool_calls: list[str | CalledTool] = Field(default_factory=lambda: list[str | CalledTool]())
    max_tool_calls: int | None = Field(default=None, ge=0)
    max_turns: int | None = Field(default=None, ge=1)
    max_duration_ms: float | None = Field(default=None, gt=0)
    max_cost: float | None = Field(default=None, ge=0)
    """The most the call may cost in US dollars (its tokens at the model's price); a cost that
    is unknown, or only known as a lower bound below the limit, fails it too."""
    judge: str | None = None
    is_error: bool | None = None
    truncated: bool | None = False
    """Whether the answer must be cut off at the token limit (stop reason ``max_tokens``):
    false by default, so a half answer never passes a case; null: either."""
    picks: str | None = None
    """A caller case's tool the caller model must call (``none``: it must call none of ours);
    None: the case's own tool."""
    arguments: dict[str, Any] | None = None
    """A caller case's subset of the arguments the caller model must fill (nested objects as
    subsets, as ``tool_calls`` compares them)."""
    fields: dict[str, FieldCheck] = Field(default_factory=lambda: dict[str, FieldCheck]())
    """Checks of parts of the answer, by JSON Pointer (module docstring)."""

    @field_validator("fields")
    @classmethod
    def _check_pointers(cls, value: dict[str, FieldCheck]) -> dict[str, FieldCheck]:
        for pointer in value:
            try:
                parse_pointer(pointer)
            except PointerError as exc:
                raise ValueError(str(exc)) from None
        return value

    @field_validator("json_schema")
    @classmethod
    def _check_schema(cls, value: dict[str, Any] | bool | None) -> dict[str, Any] | bool | None:
        if value is None:
            return value
        if nesting_depth(value) > MAX_NESTING:
            raise ValueError(f"not a schema an answer can be checked with: {TOO_DEEP}")
        error = meta_schema_error(value)
        if error is not None:
            raise ValueError(f"not a valid JSON Schema: {error}")
        # Valid on paper, yet every check would fail on it (a reference that leads nowhere) or
        # never end (one that leads back to where it started): the parameters' rule.
        located = reference_problems(value) if isinstance(value, dict) else []
        if located:
            parts, message = min(located, key=lambda item: path_sort_key(item[0]))
            where = format_path(parts) or "the root"
            raise ValueError(f"not a schema an answer can be checked with: at {where}, {message}")
        return value


class TestCase(FileModel):
    """One test case of a tool.

    Attributes:
        name: unique among the tool's cases.
        arguments: the call's arguments, exactly as an MCP client would send them.
        ask: a caller case's request in words (its arguments then come from the caller model);
            None: an ordinary case.
        expect: what a good answer looks like.
        mock: inner tools (``server__tool``) or tool servers (``server``) the case answers
            itself, with a fixed result or an injected fault.
    """

    __test__ = False  # not a pytest test class, despite the name

    name: str = Field(min_length=1)
    arguments: dict[str, Any] = Field(default_factory=lambda: dict[str, Any]())
    ask: str | None = None
    expect: Expectations = Field(default_factory=Expectations)
    mock: dict[str, MockedTool] = Field(default_factory=lambda: dict[str, MockedTool]())

    @field_validator("ask")
    @classmethod
    def _check_ask(cls, value: str | None) -> str | None:
        if value is not None and not value.strip():
            raise ValueError("ask is empty: write the request in words a person would type")
        return value

    @model_validator(mode="after")
    def _caller_keys(self) -> TestCase:
        if self.ask is not None and self.arguments:
            raise ValueError(
                f"case {self.name!r} has both ask and arguments: a caller case's arguments come "
                "from the caller model; move the arguments you expect under expect.arguments "
                "(a subset), or remove ask to call with these arguments"
            )
        if self.ask is None:
            used = [
                k
                for k, v in (("picks", self.expect.picks), ("arguments", self.expect.arguments))
                if v is not None
            ]
            if used:
                keys = " and ".join(f"expect.{k}" for k in used)
                raise ValueError(
                    f"case {self.name!r} has {keys}, which only a caller case checks: add ask "
                    "(the request in words), or remove them"
                )
        return self

    @property
    def is_caller_case(self) -> bool:
        """Whether the case starts from a request in words (``ask``)."""
        return self.ask is not None
