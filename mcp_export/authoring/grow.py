"""Grow a tool's test cases: proposals from its schema and from History, added when accepted.

From the schema (no model): each bound of a top-level parameter (``minimum``, ``maximum`` and
their exclusive forms, ``minLength``/``maxLength``, ``minItems``/``maxItems``) on it and just
outside it, each ``enum`` value, and each optional parameter absent and present. Every proposal
starts from the tool's sample arguments (``sample_arguments``) and its expectation comes from
the one validation of arguments (``validate_arguments``): arguments it refuses expect
``isError: true``, the others ``isError: false``.

From History (no model): served calls of the tool (threads of kind ``served`` that are not a
test case's run) whose arguments, defaults filled, equal no existing case's and no earlier
proposal's; each is offered with the answer it got, for the author to turn into expectations.

Nothing is written until :func:`add_cases` (an atomic save that keeps the rest of the file).
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Mapping, Sequence
from copy import deepcopy
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from mcp_export.history.schema import agent_key
from mcp_export.history.store_reads import StoreReads
from schema_types.agent import Agent, ToolDefinition
from schema_types.arguments import (
    apply_defaults,
    sample_arguments,
    sample_value,
    validate_arguments,
)
from schema_types.cases import Expectations, TestCase
from schema_types.errors import ArgumentsError, SchemaError
from schema_types.files.agent_file import load_agent, save_agent

__all__ = [
    "SOURCES",
    "GrowError",
    "Proposal",
    "Source",
    "add_cases",
    "history_proposals",
    "schema_proposals",
    "unique_proposals",
    "with_cases",
]

Source = Literal["schema", "history", "requests"]
SOURCES: tuple[Source, ...] = ("schema", "history", "requests")

_MAX_DEPTH = 4
"""How deep into nested objects schema proposals go."""

_HISTORY_SCAN = 500
"""How many of the tool's newest runs History proposals look at."""


class GrowError(Exception):
    """A proposal cannot be added (its name is taken, or the tool is gone); says what to do."""


@dataclass(frozen=True)
class Proposal:
    """One proposed test case.

    Attributes:
        source: where it came from (``schema``, ``history`` or ``requests``).
        kind: what it tries (``bound``, ``enum``, ``optional``, ``served``, ``paraphrase``,
            ``decoy``).
        case: the case as it would be added.
        why: one line a person reads in the list.
        answer: a History proposal's served answer (or error), for choosing expectations.
    """

    source: Source
    kind: str
    case: TestCase
    why: str
    answer: str | None = None


def _expect_for(parameters: Mapping[str, Any], arguments: dict[str, Any]) -> Expectations:
    try:
        validate_arguments(parameters, arguments)
    except ArgumentsError:
        return Expectations(is_error=True)
    except SchemaError:
        return Expectations()
    return Expectations(is_error=False)


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _number(schema: Mapping[str, Any], key: str) -> float | None:
    value = schema.get(key)
    return value if _is_number(value) else None


def _bound_values(schema: Mapping[str, Any]) -> list[tuple[str, Any, str]]:
    """(label, value, phrase) for each bound of one parameter: on it and just outside."""
    out: list[tuple[str, Any, str]] = []
    kind = schema.get("type")
    step: float = 1 if kind == "integer" else 0.5
    for key, sign in (("minimum", -1), ("maximum", 1)):
        bound = _number(schema, key)
        if bound is not None:
            inside = math.ceil(bound) if kind == "integer" and sign < 0 else bound
            inside = math.floor(bound) if kind == "integer" and sign > 0 else inside
            out.append((f"at {key}", inside, f"{key} {bound}"))
            out.append((f"past {key}", inside + sign * step, f"just past {key} {bound}"))
    for key, sign in (("exclusiveMinimum", -1), ("exclusiveMaximum", 1)):
        bound = _number(schema, key)
        if bound is not None:
            out.append((f"on {key}", bound, f"{key} {bound} (excluded)"))
            out.append((f"inside {key}", bound - sign * step, f"just inside {key} {bound}"))
    for low, high, unit in (("minLength", "maxLength", "chars"), ("minItems", "maxItems", "items")):
        for key, sign in ((low, -1), (high, 1)):
            bound = _number(schema, key)
            if bound is None:
                continue
            count = int(bound)
            for label, n in ((f"at {key}", count), (f"past {key}", count + sign)):
                if n < 0:
                    continue
                value: Any
                if unit == "chars":
                    value = "x" * n
                else:
                    value = [sample_value(schema.get("items", {})) for _ in range(n)]
                out.append((label, value, f"{n} {unit} ({key} {count})"))
    return out


def _required_sample(schema: Any, name: str | None = None) -> Any:
    """A sample value with only the required properties of each object (the shortest call)."""
    if (
        isinstance(schema, Mapping)
        and isinstance(schema.get("properties"), Mapping)
        and not any(k in schema for k in ("examples", "default", "const", "enum"))
    ):
        required = set(schema.get("required") or [])
        return {
            key: _required_sample(sub, key)
            for key, sub in schema["properties"].items()
            if key in required
        }
    return sample_value(schema, name)


def _sites(
    schema: Mapping[str, Any], prefix: tuple[str, ...] = ()
) -> list[tuple[tuple[str, ...], Mapping[str, Any], bool]]:
    """Each property, nested objects' included, as (path, schema, whether it is optional)."""
    properties = schema.get("properties")
    if not isinstance(properties, Mapping) or len(prefix) >= _MAX_DEPTH:
        return []
    required = set(schema.get("required") or [])
    out: list[tuple[tuple[str, ...], Mapping[str, Any], bool]] = []
    for key, sub in properties.items():
        if isinstance(sub, Mapping):
            path = (*prefix, key)
            out.append((path, sub, key not in required))
            out += _sites(sub, path)
    return out


def _schema_at(parameters: Mapping[str, Any], path: Sequence[str]) -> Any:
    schema: Any = parameters
    for key in path:
        schema = schema["properties"][key]
    return schema


def _put(
    parameters: Mapping[str, Any], arguments: dict[str, Any], path: Sequence[str], value: Any
) -> dict[str, Any]:
    """A copy of ``arguments`` with ``value`` at ``path`` (parents made from their shortest
    sample where missing)."""
    result = deepcopy(arguments)
    here: Any = result
    for depth, key in enumerate(path[:-1]):
        if not isinstance(here.get(key), dict):
            here[key] = _required_sample(_schema_at(parameters, path[: depth + 1]), key)
        here = here[key]
    here[path[-1]] = deepcopy(value)
    return result


def _without(arguments: dict[str, Any], path: Sequence[str]) -> dict[str, Any]:
    result = deepcopy(arguments)
    here: Any = result
    for key in path[:-1]:
        here = here.get(key) if isinstance(here, dict) else None
    if isinstance(here, dict):
        here.pop(path[-1], None)
    return result


def _present_value(
    parameters: Mapping[str, Any], base: dict[str, Any], path: Sequence[str], schema: Any
) -> Any:
    """A value for an optional parameter that differs from its default where one is easy to
    find (leaving it out already calls with the default)."""
    value = sample_value({k: v for k, v in schema.items() if k != "default"}, path[-1])
    if "default" not in schema or value != schema["default"]:
        return value
    enum = schema.get("enum")
    others = [v for v in enum if v != value] if isinstance(enum, list) else []
    if others:
        return others[0]
    if _is_number(value):
        nudged = value + 1
        if not _expect_for(parameters, _put(parameters, base, path, nudged)).is_error:
            return nudged
    return value


def schema_proposals(tool: ToolDefinition) -> list[Proposal]:
    """Boundaries, each enum value and each optional parameter absent and present, for every
    property (nested objects' too, named by their dotted path)."""
    parameters = tool.parameters
    if not isinstance(parameters.get("properties"), Mapping):
        return []
    full = sample_arguments(parameters)
    # bounds, enum values and a present optional one go into the shortest call; an absent
    # optional one is left out of the fullest (each absent case then calls differently)
    base = _required_sample(parameters)
    if not isinstance(base, dict):
        return []
    out: list[Proposal] = []
    tried: set[str] = set()  # one parameter's proposals with the same call are one

    def propose(prop: str, kind: str, name: str, arguments: dict[str, Any], why: str) -> None:
        key = json.dumps([prop, apply_defaults(parameters, arguments)], sort_keys=True)
        if key in tried:
            return
        tried.add(key)
        case = TestCase(name=name, arguments=arguments, expect=_expect_for(parameters, arguments))
        verdict = "must fail" if case.expect.is_error else "must succeed"
        out.append(Proposal("schema", kind, case, f"{why}: {verdict}"))

    for path, schema, optional in _sites(parameters):
        prop = ".".join(path)
        if optional:
            absent = _without(full, path)
            present = _put(parameters, base, path, _present_value(parameters, base, path, schema))
            propose(prop, "optional", f"{prop} absent", absent, f"optional {prop} left out")
            if not isinstance(schema.get("enum"), list):  # else each enum value presents it
                propose(prop, "optional", f"{prop} present", present, f"optional {prop} given")
        for label, value, phrase in _bound_values(schema):
            at = _put(parameters, base, path, value)
            propose(prop, "bound", f"{prop} {label}", at, f"{prop} {phrase}")
        enum = schema.get("enum")
        if isinstance(enum, list):
            for value in enum:
                shown = json.dumps(value, ensure_ascii=False)
                at = _put(parameters, base, path, value)
                propose(prop, "enum", f"{prop} = {shown}", at, f"{prop} {shown}")
    return unique_proposals(tool, out, among=False)


def _served_thread_ids(store: StoreReads, agent_path: str) -> set[str]:
    served = {t.id for t in store.threads(agent_path=agent_path, kind="served", limit=5000)}
    tested = {r.thread_id for r in store.case_runs(agent_path=agent_path) if r.thread_id}
    return served - tested


def history_proposals(tool: ToolDefinition, store: StoreReads, agent_path: Path) -> list[Proposal]:
    """The tool's served calls (newest first) whose arguments no case has yet, with answers."""
    path = agent_key(str(agent_path))
    served = _served_thread_ids(store, path)
    out: list[Proposal] = []
    for run in store.runs(agent_path=path, tool_name=tool.name, limit=_HISTORY_SCAN):
        if run.thread_id not in served or run.status == "pending":
            continue
        answer = run.answer if run.status == "complete" else (run.error or "error")
        stamp = run.started_at.strftime("%Y-%m-%d %H:%M")
        case = TestCase(name=f"served {stamp}", arguments=dict(run.arguments))
        why = f"served to {run.caller or 'a client'} on {stamp}"
        if run.status == "error":
            case = case.model_copy(update={"expect": Expectations(is_error=True)})
            why += " (it failed)"
        out.append(Proposal("history", "served", case, why, answer=answer))
    return unique_proposals(tool, out)


def _key(parameters: Mapping[str, Any], case: TestCase) -> str:
    arguments = apply_defaults(parameters, case.arguments)
    return json.dumps(arguments, sort_keys=True, ensure_ascii=False)


def unique_proposals(
    tool: ToolDefinition, proposals: Iterable[Proposal], *, among: bool = True
) -> list[Proposal]:
    """Proposals whose arguments no existing case has (nor, with ``among``, an earlier
    proposal), with names no existing case and no earlier proposal has (``name (2)``…)."""
    seen = {_key(tool.parameters, c) for c in tool.tests if not c.is_caller_case}
    names = {c.name for c in tool.tests}
    out: list[Proposal] = []
    for proposal in proposals:
        case = proposal.case
        if not case.is_caller_case:
            key = _key(tool.parameters, case)
            if key in seen:
                continue
            if among:
                seen.add(key)
        name, n = case.name, 1
        while name in names:
            n += 1
            name = f"{case.name} ({n})"
        names.add(name)
        if name != case.name:
            proposal = Proposal(
                proposal.source,
                proposal.kind,
                case.model_copy(update={"name": name}),
                proposal.why,
                proposal.answer,
            )
        out.append(proposal)
    return out


def with_cases(agent: Agent, tool_name: str, cases: Sequence[TestCase]) -> Agent:
    """The agent with ``cases`` appended to the tool's cases.

    Raises:
        GrowError: the agent has no such tool, or a case's name is taken.
    """
    tool = agent.metadata.tool(tool_name)
    if tool is None:
        raise GrowError(f"the agent has no tool named {tool_name!r}")
    taken = {c.name for c in tool.tests}
    for case in cases:
        if case.name in taken:
            raise GrowError(f"tool {tool_name!r} already has a case named {case.name!r}: rename it")
        taken.add(case.name)
    grown = tool.model_copy(update={"tests": [*tool.tests, *(deepcopy(c) for c in cases)]})
    tools = [grown if t.name == tool_name else t for t in agent.metadata.tools]
    metadata = agent.metadata.model_copy(update={"tools": tools})
    return agent.model_copy(update={"metadata": metadata})


def add_cases(path: Path, tool_name: str, cases: Sequence[TestCase]) -> None:
    """Add ``cases`` to the tool in the agent file at ``path``: re-read, appended, saved
    atomically with the rest of the file (comments, order, quoting) kept.

    Raises:
        AgentFileError: the file cannot be read or written.
        GrowError: the tool is gone or a case's name is taken.
    """
    agent = load_agent(path)
    save_agent(with_cases(agent, tool_name, cases), path, allow_literal_secrets=True)
