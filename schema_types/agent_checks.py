"""From parsed agent-file data to an :class:`Agent`, or to every located problem in it.

The pydantic model checks types and values; on top of it this module checks what the model cannot
see from one value alone (two tools with one name, reported at the second tool; a ``tools`` list at
the top level, which nothing reads; the endpoint settings among a provider's string values,
``stream`` and ``maxConcurrentRequests``, which ``parse_stream`` and ``parse_max_concurrency``
read for the runtime too) and runs the parameters-schema check on every tool (and the same check
on a tool's ``outputSchema``, ``schema_types.output_schema``) — or leaves
that check for later, on the built agent (:func:`tool_schema_problems`; the studio shows an agent
before it loads ``jsonschema`` and checks each tool's schema after). Each problem gets the JSON path
it is about (``metadata.tools[1].name``) and, when the source node tree is known, the line and
column of that value in the file, and a message in the agent file's own terms (``expected an
integer, got "lots"``) instead of pydantic's.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from pydantic import ValidationError
from pydantic_core import ErrorDetails
from yaml.nodes import Node, ScalarNode

from schema_types.agent import Agent
from schema_types.errors import Problem
from schema_types.files.agent_yaml import node_at
from schema_types.json_text import format_path, json_text
from schema_types.output_schema import check_output_schema
from schema_types.schema.check import check_parameters_schema

__all__ = [
    "ENDPOINT_SETTINGS",
    "LocatedProblem",
    "check_agent_data",
    "parse_max_concurrency",
    "parse_path",
    "parse_stream",
    "tool_parameters_problem",
    "tool_schema_problems",
]

Parts = tuple[str | int, ...]


@dataclass(frozen=True)
class LocatedProblem:
    """One problem of an agent file: JSON path parts, message, and 1-based position if known."""

    parts: Parts
    detail: str
    line: int | None = None
    column: int | None = None

    @property
    def path(self) -> str:
        """The JSON path (``metadata.tools[1].name``)."""
        return format_path(self.parts)


def check_agent_data(
    data: Any, root: Node | None, *, check_schemas: bool = True
) -> tuple[Agent | None, list[LocatedProblem]]:
    """Build the agent from a file's data, or find everything wrong with it.

    Args:
        data: the parsed document (any JSON-shaped value).
        root: its YAML node tree, for positions; None when unknown.
        check_schemas: run the parameters-schema check on every tool. False leaves it to the
            caller (:func:`tool_schema_problems`, or per tool); the agent is then built even when
            a tool's schema is unsound.

    Returns:
        ``(agent, [])`` when the data is a sound agent, else ``(None, problems)`` with the
        problems in file order (problems without a position keep the order they were found in).
    """
    if not isinstance(data, Mapping):
        detail = (
            "an agent file holds a mapping of metadata, settings, systemPrompt, providers and "
            f"mcpServers, got {_got(data)}"
        )
        return None, [_locate((), detail, root)]
    found: list[tuple[Parts, str]] = _misplaced_tools(data, check_schemas)
    duplicates = _duplicate_tool_names(data)
    found += duplicates
    settings = _endpoint_setting_problems(data)
    found += settings
    agent: Agent | None = None
    try:
        agent = Agent.model_validate(data)
    except ValidationError as exc:
        found += _model_problems(
            exc,
            data,
            root,
            skip_unique_names=bool(duplicates),
            skip={parts for parts, _ in settings},
        )
    if check_schemas:
        found += _schema_problems(data, {parts for parts, _ in found})
    if not found:
        return agent, []
    problems = [_locate(parts, detail, root) for parts, detail in found]
    problems.sort(key=lambda p: (p.line is None, p.line or 0, p.column or 0))
    return None, problems


def _locate(parts: Parts, detail: str, root: Node | None) -> LocatedProblem:
    node, _ = node_at(root, parts)
    if node is None:
        return LocatedProblem(parts, detail)
    return LocatedProblem(parts, detail, node.start_mark.line + 1, node.start_mark.column + 1)


_PATH_TOKEN = re.compile(r'\[(\d+)\]|\[("(?:[^"\\]|\\.)*")\]|\.?([^.\[\]]+)')


def parse_path(path: str) -> Parts:
    """The parts of a JSON path as ``format_path`` writes it (``a.b[0]["c d"]``)."""
    parts: list[str | int] = []
    for index, quoted, plain in _PATH_TOKEN.findall(path):
        if index:
            parts.append(int(index))
        elif quoted:
            parts.append(str(json.loads(quoted)))
        else:
            parts.append(plain)
    return tuple(parts)


# --- Rules the model cannot check value by value ----------------------------------------------


def _raw_tools(data: Mapping[str, Any]) -> list[Any]:
    metadata = data.get("metadata")
    tools = metadata.get("tools") if isinstance(metadata, Mapping) else None
    return tools if isinstance(tools, list) else []


def _misplaced_tools(data: Mapping[str, Any], check_schemas: bool) -> list[tuple[Parts, str]]:
    """A ``tools`` list at the top level, where nothing reads it (tools go in ``metadata``):
    named, with every problem its tools would have in the right place."""
    if "tools" not in data:
        return []
    detail = (
        "tools are not read here: an agent's tools go under metadata (metadata.tools); "
        "move this list there"
    )
    problems: list[tuple[Parts, str]] = [(("tools",), detail)]
    tools = data["tools"]
    if isinstance(tools, list) and tools:
        _, inner = check_agent_data(
            {"metadata": {"tools": tools}}, None, check_schemas=check_schemas
        )
        problems += [
            (("tools", *p.parts[2:]), p.detail)
            for p in inner
            if p.parts[:2] == ("metadata", "tools") and len(p.parts) > 2
        ]
    return problems


def _duplicate_tool_names(data: Mapping[str, Any]) -> list[tuple[Parts, str]]:
    first: dict[str, int] = {}
    problems: list[tuple[Parts, str]] = []
    for index, tool in enumerate(_raw_tools(data)):
        name = tool.get("name") if isinstance(tool, Mapping) else None
        if not isinstance(name, str):
            continue
        if name in first:
            detail = (
                f"{name!r} is already the name of metadata.tools[{first[name]}]: "
                "tool names must be unique"
            )
            problems.append((("metadata", "tools", index, "name"), detail))
        else:
            first[name] = index
    return problems


ENDPOINT_SETTINGS = ("stream", "maxConcurrentRequests")
"""The keys of ``providers.<id>`` that set how the endpoint is used rather than where it is."""

_STREAM_VALUES = '"true" or "false"'
_CONCURRENCY_VALUES = 'a whole number of at least 1, or "unlimited"'
_WHOLE_NUMBER = re.compile(r"[0-9]+")


def parse_stream(value: str) -> bool:
    """``providers.<id>.stream``: whether answers are streamed (``"true"`` / ``"false"``, in any
    case).

    Raises:
        ValueError: any other value; the message says what is allowed.
    """
    text = value.strip().lower()
    if text not in ("true", "false"):
        raise ValueError(f"expected {_STREAM_VALUES}, got {json_text(value)}")
    return text == "true"


def parse_max_concurrency(value: str) -> int | None:
    """``providers.<id>.maxConcurrentRequests``: how many requests may be in flight to the
    endpoint at once (a positive whole number), or None for ``"unlimited"``.

    Raises:
        ValueError: any other value; the message says what is allowed.
    """
    text = value.strip().lower()
    if text == "unlimited":
        return None
    if _WHOLE_NUMBER.fullmatch(text) and int(text) >= 1:
        return int(text)
    raise ValueError(f"expected {_CONCURRENCY_VALUES}, got {json_text(value)}")


def _endpoint_setting_problems(data: Mapping[str, Any]) -> list[tuple[Parts, str]]:
    """Endpoint settings of ``providers`` that do not read as one (``false`` and ``4`` written
    without quotes are fine: they read as the words)."""
    providers = data.get("providers")
    if not isinstance(providers, Mapping):
        return []
    problems: list[tuple[Parts, str]] = []
    for provider_id, values in providers.items():
        if not isinstance(values, Mapping):
            continue
        for key, parse, allowed in (
            ("stream", parse_stream, _STREAM_VALUES),
            ("maxConcurrentRequests", parse_max_concurrency, _CONCURRENCY_VALUES),
        ):
            if key not in values:
                continue
            value = values[key]
            parts: Parts = ("providers", str(provider_id), key)
            if isinstance(value, bool):  # YAML's unquoted true/false read as the words
                text = "true" if value else "false"
            elif isinstance(value, int | str):
                text = str(value)
            else:
                problems.append((parts, f"expected {allowed}, got {json_text(value)}"))
                continue
            try:
                parse(text)
            except ValueError as exc:
                problems.append((parts, str(exc)))
    return problems


def tool_schema_problems(agent: Agent) -> list[LocatedProblem]:
    """The parameters-schema problems of every tool of a built agent, by JSON path
    (``metadata.tools[1].parameters.properties.age.minimum``), in tool order; ``[]`` when sound.

    The same check :func:`check_agent_data` runs, for an agent built with ``check_schemas=False``
    (no positions: the file's node tree is gone by then).
    """
    data = {
        "metadata": {
            "tools": [
                {"parameters": tool.parameters, "outputSchema": tool.output_schema}
                for tool in agent.tools
            ]
        }
    }
    return [LocatedProblem(parts, detail) for parts, detail in _schema_problems(data, set())]


def _schema_problems(data: Mapping[str, Any], reported: set[Parts]) -> list[tuple[Parts, str]]:
    problems: list[tuple[Parts, str]] = []
    for index, tool in enumerate(_raw_tools(data)):
        if not isinstance(tool, Mapping):
            continue  # the model's to report
        output = tool.get("outputSchema")
        output_prefix: Parts = ("metadata", "tools", index, "outputSchema")
        if isinstance(output, Mapping) and output_prefix not in reported:
            # A typed tool's answers are checked against it, and MCP clients check them too.
            problems += [
                ((*output_prefix, *parse_path(p.path)), p.message)
                for p in check_output_schema(output)
            ]
        if not isinstance(tool.get("parameters"), Mapping):
            continue  # a missing or non-object ``parameters`` is the model's to report
        prefix: Parts = ("metadata", "tools", index, "parameters")
        if prefix in reported:
            continue
        problems += [
            (tool_parameters_problem(index, p).parts, p.message)
            for p in check_parameters_schema(tool["parameters"])
        ]
    return problems


def tool_parameters_problem(index: int, problem: Problem) -> LocatedProblem:
    """A problem of tool ``index``'s parameters schema (path relative to the schema, as
    ``check_parameters_schema`` reports it) at its path in the agent file
    (``metadata.tools[1].parameters.properties.age.minimum``)."""
    parts: Parts = ("metadata", "tools", index, "parameters", *parse_path(problem.path))
    return LocatedProblem(parts, problem.message)


# --- pydantic errors in the file's terms ------------------------------------------------------


def _model_problems(
    exc: ValidationError,
    data: Mapping[str, Any],
    root: Node | None,
    *,
    skip_unique_names: bool,
    skip: set[Parts],
) -> list[tuple[Parts, str]]:
    # A union (``responseFormat: dict | str``) fails once per member, each with the member's
    # name appended to ``loc``: cut ``loc`` back to what exists in the data and merge those.
    groups: dict[Parts, list[ErrorDetails]] = {}
    for error in exc.errors(include_url=False):
        loc = tuple(error["loc"])
        parts = loc if error["type"] == "missing" else _existing_prefix(loc, data)
        if skip_unique_names and parts == ("metadata",) and error["type"] == "value_error":
            continue  # reported at the second tool by _duplicate_tool_names
        if parts in skip:
            continue  # already reported in its own words
        groups.setdefault(parts, []).append(error)
    problems: list[tuple[Parts, str]] = []
    for parts, errors in groups.items():
        node, matched = node_at(root, parts)
        source = node.value if isinstance(node, ScalarNode) and matched == len(parts) else None
        problems.append((parts, _message(errors, source)))
    return problems


def _existing_prefix(loc: Parts, data: Any) -> Parts:
    value = data
    for depth, part in enumerate(loc):
        if isinstance(value, Mapping) and part in value:  # noqa: SIM114 - mapping vs list
            value = value[part]
        elif isinstance(value, list) and isinstance(part, int) and 0 <= part < len(value):
            value = value[part]
        else:
            return loc[:depth]
    return loc


_EXPECTED = {
    "int_parsing": "an integer",
    "int_type": "an integer",
    "int_from_float": "an integer",
    "float_parsing": "a number",
    "float_type": "a number",
    "bool_parsing": "true or false",
    "bool_type": "true or false",
    "string_type": "a string",
    "list_type": "a list",
    "dict_type": "a mapping (key: value pairs)",
    "model_type": "a mapping (key: value pairs)",
    "model_attributes_type": "a mapping (key: value pairs)",
}
_BOUND_WORDS = {
    "greater_than_equal": ("ge", "at least"),
    "less_than_equal": ("le", "at most"),
    "greater_than": ("gt", "greater than"),
    "less_than": ("lt", "less than"),
}
_MODEL_NOUNS = {
    "AgentMetadata": "metadata (name, version, description, mode, tools)",
    "AgentSettings": "settings (model, maxChatTurns, temperature, …)",
    "ToolDefinition": "a tool (name, description, parameters, prompt)",
    "McpServerConfig": "an MCP server (type, command or url, …)",
    "McpToolSetting": "a tool setting (permissionRequired, include)",
}


def _message(errors: Sequence[ErrorDetails], source: str | None) -> str:
    first = errors[0]
    kind, value, ctx = first["type"], first["input"], first.get("ctx") or {}
    if kind == "missing":
        return "required, but missing"
    if len(errors) > 1 and all(e["type"] in _EXPECTED for e in errors):
        nouns = list(dict.fromkeys(_EXPECTED[e["type"]].split(" (")[0] for e in errors))
        return f"expected {' or '.join(nouns)}, got {_got(value)}"
    if kind in ("model_type", "model_attributes_type") and ctx.get("class_name") in _MODEL_NOUNS:
        return f"expected a mapping for {_MODEL_NOUNS[ctx['class_name']]}, got {_got(value)}"
    if kind in _EXPECTED:
        message = f"expected {_EXPECTED[kind]}, got {_got(value)}"
        if kind == "string_type" and isinstance(value, int | float) and source is not None:
            message += f' (put it in quotes: "{source}")'
        return message
    if kind == "literal_error":
        # pydantic words the choices as 'a', 'b' or 'c'; quote them as JSON like the rest.
        expected = str(ctx.get("expected", "")).replace("'", '"')
        return f"expected one of {expected}, got {_got(value)}"
    if kind in _BOUND_WORDS:
        key, words = _BOUND_WORDS[kind]
        return f"must be {words} {_number(ctx.get(key))}, got {_got(value)}"
    if kind in ("value_error", "assertion_error"):
        return str(first["msg"]).removeprefix("Value error, ").removeprefix("Assertion failed, ")
    return f"{first['msg'][:1].lower()}{first['msg'][1:]}, got {_got(value)}"


def _number(value: Any) -> str:
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


def _got(value: Any) -> str:
    if isinstance(value, Mapping):
        return "a mapping"
    if isinstance(value, list | tuple):
        return "a list"
    return json_text(value)
