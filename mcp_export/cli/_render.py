"""``metaagent render AGENT_FILE TOOL [--arg key=value …] [--json ARGS]``: show a filled prompt.

Validates the arguments exactly as a served call would (defaults applied first) and prints the
prompt the model would receive, so a template can be checked without a model. Exit codes: 0 with
the prompt on stdout; 1 when the agent file cannot be loaded (the located message on stderr); 2
for a bad command line, an unknown tool (its tools are listed) or arguments that do not validate
(every bad argument on stderr, by path).

:func:`add_argument_options` and :func:`parse_cli_arguments` are the one ``--arg``/``--json``
that ``call`` uses too, and :func:`validated_prompt` the one way both fill a tool's prompt.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from mcp_export.cli._report import error, load_agent_or_report
from schema_types.arguments import validate_arguments
from schema_types.errors import ArgumentsError, SchemaDefinitionError
from schema_types.tool_prompt import filled_prompt

if TYPE_CHECKING:
    from schema_types.agent import ToolDefinition

__all__ = [
    "add_argument_options",
    "parse_cli_arguments",
    "register",
    "run",
    "validated_prompt",
]


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the ``render`` subcommand."""
    parser = subparsers.add_parser(
        "render",
        help="print a tool's filled prompt for some arguments",
        description=(
            "Validate the arguments against the tool's parameters (defaults applied first) and "
            "print the filled prompt template, exactly as a served call would send it."
        ),
    )
    parser.add_argument("agent_file", metavar="AGENT_FILE", help="the agent file")
    parser.add_argument("tool", metavar="TOOL", help="the name of the tool")
    add_argument_options(parser)
    parser.set_defaults(func=run)


def add_argument_options(parser: argparse.ArgumentParser) -> None:
    """``--arg KEY=VALUE`` and ``--json ARGS``, the options :func:`parse_cli_arguments` reads."""
    parser.add_argument(
        "--arg",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="a tool argument (repeatable); VALUE is JSON when it parses as JSON, else a string; "
        "KEY may be a dotted path (trip.destination=Paris builds an object)",
    )
    parser.add_argument(
        "--json",
        metavar="ARGS",
        help="all arguments as one JSON object, or @FILE to read it from a file (--arg entries "
        "are merged on top)",
    )


def parse_cli_arguments(pairs: Sequence[str], json_text: str | None) -> dict[str, Any]:
    """Tool arguments from ``--arg KEY=VALUE`` entries and a ``--json`` object.

    Each VALUE is parsed as JSON when it parses (``3``, ``true``, ``["a"]``, ``"3"``), else taken
    as a string (``Paris``, ``2026-06-01``); ``NaN`` and ``Infinity`` stay strings. A dotted KEY
    builds nested objects. ``--arg`` entries are merged over the ``--json`` object, into nested
    objects too.

    Args:
        pairs: the ``--arg`` values, in order (a later entry for the same key wins).
        json_text: the ``--json`` value: a JSON object, or ``@FILE`` holding one; None if absent.

    Returns:
        The arguments object.

    Raises:
        ValueError: malformed input; the message names the entry and how to write it.
    """
    arguments = _json_object(json_text) if json_text is not None else {}
    for pair in pairs:
        key, sep, text = pair.partition("=")
        parts = key.split(".")
        if not sep or not all(part.strip() for part in parts):
            raise ValueError(
                f"--arg {pair!r}: write it as KEY=VALUE, where KEY is a name or a dotted path "
                "(trip.destination=Paris)"
            )
        target = arguments
        for depth, part in enumerate(parts[:-1]):
            child = target.setdefault(part, {})
            if not isinstance(child, dict):
                where = ".".join(parts[: depth + 1])
                raise ValueError(
                    f"--arg {pair!r}: {where} is already {json.dumps(child)}, not an object"
                )
            target = child
        target[parts[-1]] = _json_or_text(text)
    return arguments


def _reject_constant(name: str) -> Any:
    raise ValueError(name)  # NaN/Infinity are not JSON: keep such a value as text


def _json_or_text(text: str) -> Any:
    try:
        return json.loads(text, parse_constant=_reject_constant)
    except ValueError:
        return text


def _json_object(json_text: str) -> dict[str, Any]:
    source = "--json"
    if json_text.startswith("@"):
        source = f"--json {json_text}"
        try:
            json_text = Path(json_text[1:]).read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            raise ValueError(f"{source}: cannot read the file: {exc}") from None
    try:
        loaded = json.loads(json_text, parse_constant=_reject_constant)
    except ValueError as exc:
        raise ValueError(f"{source} is not valid JSON: {exc}") from None
    if not isinstance(loaded, dict):
        raise ValueError(f'{source} must be a JSON object ({{"key": value, …}})')
    return loaded


def run(args: argparse.Namespace) -> int:
    """Render one tool's prompt; returns the exit code."""
    agent = load_agent_or_report("render", Path(args.agent_file))
    if agent is None:
        return 1
    tool = agent.metadata.tool(args.tool)
    if tool is None:
        names = ", ".join(t.name for t in agent.tools) or "none"
        error("render", f"{args.agent_file} has no tool {args.tool!r}; its tools: {names}")
        return 2
    try:
        arguments = parse_cli_arguments(args.arg, args.json)
    except ValueError as exc:
        error("render", str(exc))
        return 2
    filled = validated_prompt(
        "render", tool, arguments, invalid=f"invalid arguments for {tool.name}:"
    )
    if isinstance(filled, int):
        return filled
    _arguments, prompt = filled
    # The prompt exactly; a final newline only where the template has none, for the terminal.
    sys.stdout.write(prompt if prompt.endswith("\n") else prompt + "\n")
    sys.stdout.flush()
    return 0


def validated_prompt(
    command: str, tool: ToolDefinition, raw: dict[str, Any], *, invalid: str
) -> tuple[dict[str, Any], str] | int:
    """``raw`` validated against the tool's parameters (defaults applied) and the tool's prompt
    filled with them, exactly as a served call fills it; or, after saying why on stderr, the exit
    code: 2 for arguments that do not validate (each problem on a line of its own after
    ``invalid``), 1 for parameters that are not a usable JSON Schema.
    """
    try:
        arguments = validate_arguments(tool.parameters, raw)
    except ArgumentsError as exc:
        lines = "\n".join(f"  {problem}" for problem in exc.problems)
        error(command, f"{invalid}\n{lines}")
        return 2
    except SchemaDefinitionError as exc:
        error(command, f"the parameters of {tool.name} are not a usable JSON Schema: {exc}")
        return 1
    return arguments, filled_prompt(tool, arguments)
