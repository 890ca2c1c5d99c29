"""The tools of an agent with ``settings.toolsAsPrompts``, served also as MCP prompts.

A client that offers no sampling, and an author who ships no model key, can still run a tool's
designed prompt: the client gets it from ``prompts/get`` and runs it on its own model.

- **Which prompts.** One per served tool of every agent whose ``toolsAsPrompts`` is on, under the
  tool's served name (``--prefix`` names included); agents with it off list none. A server none
  of whose agents serve prompts does not offer ``prompts`` at all (``AgentServer``).
- **Arguments.** MCP prompt arguments are text. Each parameter of the tool becomes one argument
  (required as in the schema, its description saying how to write a value that is not text, with
  an example taken from the schema and checked to pass: ``how_to_write``);
  ``conversation_id`` is none: a prompt has no conversation to continue. Given values are read
  back into the schema's types: text stays text where the parameter takes a string; otherwise the
  value is read as JSON (``3``, ``true``, ``["a", "b"]``). Then the tool's own argument validation
  runs (``schema_types.arguments``), with defaults applied, and the template is filled by the
  engine a served call fills it with, so a prompt is exactly the prompt a call would submit.
  Bad arguments are refused with ``INVALID_PARAMS`` and the message a ``tools/call`` with those
  arguments gets, one problem per line.
- **Messages.** Prompt messages are ``user`` or ``assistant`` only, while a served call sends the
  model a system message (the agent's system prompt) and a user message (the filled template).
  Both texts travel unchanged as two ``user`` messages, the system prompt first, marked
  ``_meta["io.metaagent/role"] = "system"`` so a client that knows the mark can put it in its
  system slot, and one that does not still hands the model both texts in order. An agent
  without a system prompt gives one message, as its calls send none. A typed tool (one with an
  ``outputSchema``) adds, after the system prompt and marked the same way, the instruction a
  sampled call's model gets (``providers.structured``): answer with JSON valid against the
  schema, the schema itself included.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

import mcp_types as types
from mcp.shared.exceptions import MCPError

from mcp_export.providers.structured import plan_output
from mcp_export.server.call import invalid_arguments_text, unusable_schema_text
from mcp_export.server.fill import fill_prompt
from mcp_export.server.tools import CONVERSATION_ID, ServedTool
from schema_types.arguments import sample_value, validate_arguments
from schema_types.errors import ArgumentsError, Problem, SchemaDefinitionError
from schema_types.json_text import json_text, json_type_name

__all__ = [
    "ROLE_META",
    "arguments_from_text",
    "get_prompt",
    "how_to_write",
    "list_prompts",
    "prompt_arguments",
    "prompt_tools",
]

ROLE_META = "io.metaagent/role"
"""The ``_meta`` key of a prompt message's content that says which role the text is meant for."""

_AS_JSON = {
    "integer": "an integer",
    "number": "a number",
    "boolean": "true or false",
    "array": "a JSON array",
    "object": "a JSON object",
    "null": "null",
}
_MAX_REF_DEPTH = 8
_SHORT_HINT = 120
"""Past this many characters a hinted value keeps only the required members of its objects."""


def prompt_tools(catalogue: Mapping[str, ServedTool]) -> dict[str, ServedTool]:
    """The served tools that are also prompts (their agent has ``toolsAsPrompts`` on), by name."""
    return {
        name: tool for name, tool in catalogue.items() if tool.owner.agent.settings.tools_as_prompts
    }


def list_prompts(tools: Mapping[str, ServedTool]) -> types.ListPromptsResult:
    """The ``prompts/list`` answer: one prompt per tool, in the tools' order."""
    return types.ListPromptsResult(
        prompts=[
            types.Prompt(
                name=name,
                title=tool.title,
                description=tool.definition.description or None,
                arguments=prompt_arguments(tool.definition.parameters),
            )
            for name, tool in tools.items()
        ]
    )


def prompt_arguments(parameters: Mapping[str, Any]) -> list[types.PromptArgument]:
    """A tool's parameters as prompt arguments (text), in the schema's order."""
    properties = parameters.get("properties")
    if not isinstance(properties, Mapping):
        return []
    required = parameters.get("required")
    needed = set(required) if isinstance(required, list) else set()
    arguments: list[types.PromptArgument] = []
    for name, schema in properties.items():
        arguments.append(
            types.PromptArgument(
                name=name,
                description=_argument_description(name, schema, parameters) or None,
                required=name in needed,
            )
        )
    return arguments


async def get_prompt(tool: ServedTool, given: Mapping[str, str] | None) -> types.GetPromptResult:
    """The ``prompts/get`` answer: the agent's system prompt and the filled template.

    Raises:
        MCPError: ``INVALID_PARAMS`` for bad arguments (every problem, one per line, as a
            ``tools/call`` reports them); ``INTERNAL_ERROR`` when the tool's parameters schema
            cannot be used (the agent file needs fixing).
    """
    definition = tool.definition
    problems: list[Problem] = []
    raw = dict(given or {})
    if tool.conversation and CONVERSATION_ID in raw:
        raw.pop(CONVERSATION_ID)
        problems.append(
            Problem(
                CONVERSATION_ID,
                "a prompt has no conversation to continue: leave it out (it continues the "
                "conversation of a tools/call)",
            )
        )
    arguments, unreadable = arguments_from_text(definition.parameters, raw)
    problems.extend(unreadable)
    try:
        arguments = validate_arguments(definition.parameters, arguments)
    except ArgumentsError as exc:
        # An argument that could not be read is reported once, as unreadable, not again as
        # missing or of the wrong type.
        unread = {problem.path for problem in unreadable}
        problems.extend(p for p in exc.problems if _top_name(p.path) not in unread)
    except SchemaDefinitionError as exc:
        raise MCPError(code=types.INTERNAL_ERROR, message=unusable_schema_text(tool, exc)) from exc
    if problems:
        raise MCPError(code=types.INVALID_PARAMS, message=invalid_arguments_text(tool, problems))
    filled = await fill_prompt(tool, arguments)
    messages: list[types.PromptMessage] = []
    system = tool.owner.agent.system_prompt
    if system:
        messages.append(
            types.PromptMessage(
                role="user",
                content=types.TextContent(text=system, _meta={ROLE_META: "system"}),
            )
        )
    if definition.output_schema is not None:
        # The client's model is told the expected output as a sampled call's model is.
        instruction = plan_output("sampling", definition.output_schema, tool.name).instruction()
        messages.append(
            types.PromptMessage(
                role="user",
                content=types.TextContent(text=instruction, _meta={ROLE_META: "system"}),
            )
        )
    messages.append(types.PromptMessage(role="user", content=types.TextContent(text=filled)))
    return types.GetPromptResult(description=definition.description or None, messages=messages)


def arguments_from_text(
    parameters: Mapping[str, Any], given: Mapping[str, str]
) -> tuple[dict[str, Any], list[Problem]]:
    """Prompt arguments (text) read back into the types the tool's parameters take.

    A parameter that takes a string (or whose type the schema does not tell and whose text is
    not JSON) keeps the text; any other is read as JSON. Arguments the schema does not list are
    passed on as text, for validation to judge.

    Returns:
        The arguments, and a problem for each value that could not be read (left out of them).
    """
    properties = parameters.get("properties")
    schemas: Mapping[str, Any] = properties if isinstance(properties, Mapping) else {}
    arguments: dict[str, Any] = {}
    problems: list[Problem] = []
    for name, text in given.items():
        kinds = _declared_types(schemas.get(name), parameters, 0) if name in schemas else {"string"}
        if kinds is not None and "string" in kinds:
            arguments[name] = text
            continue
        try:
            arguments[name] = json.loads(text)
        except ValueError:
            if kinds is None:
                arguments[name] = text
                continue
            expected = how_to_write(name, parameters)
            problems.append(
                Problem(
                    name,
                    f"expected {expected}, got the text {json_text(text)} (prompt arguments "
                    "arrive as text: write this value as JSON)",
                )
            )
    return arguments, problems


def how_to_write(name: str, parameters: Mapping[str, Any]) -> str:
    """How to write the value of parameter ``name`` as prompt-argument text, with an example.

    ``an integer such as 3``, ``a JSON array such as [{"name": "Ada", "age": 36}]``: the type
    words of the schema, then a value from the schema itself (:func:`sample_value`: its first
    example, else its default, else a skeleton of its properties and items with placeholders of
    the right types and the first of each ``enum``), written as JSON. Past ``_SHORT_HINT``
    characters the objects in it keep only their required members. The example is checked as
    ``prompts/get`` would check it: one that passes is offered "such as"; one that does not (a
    placeholder cannot match every ``pattern``) is offered "in the form" of a shape to fill in.
    """
    properties = parameters.get("properties")
    schema = properties.get(name) if isinstance(properties, Mapping) else None
    kinds = _declared_types(schema, parameters, 0)
    words = " or ".join(_AS_JSON.get(k, k) for k in sorted(kinds)) if kinds else "JSON"
    if kinds == {"boolean"}:
        return words
    target = _resolved(schema, parameters)
    if not isinstance(target, Mapping):
        return words
    example = sample_value(target, name)
    text = json.dumps(example, ensure_ascii=False)
    if len(text) > _SHORT_HINT:
        example = _required_only(example, target, parameters, 0)
        text = json.dumps(example, ensure_ascii=False)
    if isinstance(example, str):  # the schema does not say it is JSON: text is taken as it is
        return words
    return f"{words} {'such as' if _accepted(name, text, parameters) else 'in the form'} {text}"


def _accepted(name: str, text: str, parameters: Mapping[str, Any]) -> bool:
    """Whether ``text``, given as argument ``name`` to ``prompts/get``, draws no complaint about
    that argument."""
    arguments, unreadable = arguments_from_text(parameters, {name: text})
    if unreadable:
        return False
    try:
        validate_arguments(parameters, arguments)
    except ArgumentsError as exc:
        return all(_top_name(problem.path) != name for problem in exc.problems)
    except SchemaDefinitionError:
        return False
    return True


def _required_only(value: Any, schema: Any, root: Mapping[str, Any], depth: int) -> Any:
    """``value`` with only the required members of each of its objects (by ``schema``)."""
    schema = _resolved(schema, root)
    if not isinstance(schema, Mapping) or depth > _MAX_REF_DEPTH:
        return value
    if isinstance(value, dict):
        properties = schema.get("properties")
        subs: Mapping[str, Any] = properties if isinstance(properties, Mapping) else {}
        required = schema.get("required")
        keep = set(required) if isinstance(required, list) else set()
        return {
            key: _required_only(item, subs.get(key), root, depth + 1)
            for key, item in value.items()
            if key in keep
        }
    if isinstance(value, list):
        return [_required_only(item, schema.get("items"), root, depth + 1) for item in value]
    return value


def _resolved(schema: Any, root: Mapping[str, Any]) -> Any:
    """``schema``, or what its local ``$ref`` leads to (followed a few steps at most)."""
    for _ in range(_MAX_REF_DEPTH):
        if not isinstance(schema, Mapping) or not isinstance(schema.get("$ref"), str):
            break
        schema = _local_target(root, schema["$ref"])
    return schema


def _argument_description(name: str, schema: Any, root: Mapping[str, Any]) -> str:
    """The parameter's description, plus how to write its value when it is not text."""
    if not isinstance(schema, Mapping):
        return ""
    text = schema.get("description") or schema.get("title") or ""
    text = text.strip() if isinstance(text, str) else ""
    hints: list[str] = []
    choices = schema.get("enum")
    if isinstance(choices, list) and choices:
        hints.append(
            "one of " + ", ".join(json_text(c) if not isinstance(c, str) else c for c in choices)
        )
    kinds = _declared_types(schema, root, 0)
    if kinds is not None and "string" not in kinds and not choices:
        hints.append("write it as " + how_to_write(name, root))
    if "default" in schema:
        hints.append(f"default {json_text(schema['default'])}")
    if not hints:
        return text
    joined = "; ".join(hints)
    return f"{text} ({joined})" if text else joined[:1].upper() + joined[1:]


def _declared_types(schema: Any, root: Mapping[str, Any], depth: int) -> set[str] | None:
    """The JSON types a parameter's schema allows, or None when it does not say."""
    if not isinstance(schema, Mapping) or depth > _MAX_REF_DEPTH:
        return None
    kind = schema.get("type")
    if isinstance(kind, str):
        return {kind}
    if isinstance(kind, list) and kind and all(isinstance(k, str) for k in kind):
        return set(kind)
    if isinstance(schema.get("enum"), list) and schema["enum"]:
        return {json_type_name(value) for value in schema["enum"]}
    if "const" in schema:
        return {json_type_name(schema["const"])}
    ref = schema.get("$ref")
    if isinstance(ref, str):
        return _declared_types(_local_target(root, ref), root, depth + 1)
    for key in ("anyOf", "oneOf"):
        branches = schema.get(key)
        if isinstance(branches, list) and branches:
            union: set[str] = set()
            for branch in branches:
                found = _declared_types(branch, root, depth + 1)
                if found is None:
                    return None
                union |= found
            return union
    return None


def _local_target(root: Mapping[str, Any], ref: str) -> Any:
    """What a local ``$ref`` (``#/$defs/passenger``) points at in the schema, or None."""
    if not ref.startswith("#/"):
        return None
    node: Any = root
    for part in ref[2:].split("/"):
        part = part.replace("~1", "/").replace("~0", "~")
        if not isinstance(node, Mapping) or part not in node:
            return None
        node = node[part]
    return node


def _top_name(path: str) -> str:
    """The argument a problem's path starts with (``passengers`` in ``passengers[1].age``)."""
    for index, char in enumerate(path):
        if char in ".[":
            return path[:index]
    return path
