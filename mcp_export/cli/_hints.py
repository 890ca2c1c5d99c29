"""``metaagent hints FILE…``: how a client's model will read the tools, before any model runs.

For the agent files served together (as ``metaagent serve FILE… [--prefix]`` would), prints per
tool what its ``tools/list`` entry costs in tokens (and of that, its description, ``inputSchema``
and ``outputSchema``), how long its description is and whether it says when to use the tool, and
each hint (:mod:`mcp_export.hints.checks`); then what the whole list costs. ``--json`` prints the
same as one JSON object. Exit code 0 whatever the hints say (``--strict``: 1 when there is any);
1 when a file does not load or the tools cannot be served together (a name clash).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from mcp_export.hints import (
    TOKENIZER_NOTE,
    HintsReport,
    TokenizerError,
    ToolReport,
    build_report,
)
from mcp_export.server.tools import ServedAgent
from schema_types.errors import AgentFileError
from schema_types.files.agent_file import load_agent

__all__ = ["register", "run"]


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the ``hints`` subcommand."""
    parser = subparsers.add_parser(
        "hints",
        help="description and schema hints per tool, and what the tool list costs in tokens",
        description=(
            "Report, per tool, what a client's model reads: the tokens its tools/list entry "
            "costs, whether its description says when to use it, parameters without a "
            "description, enums whose values are not explained, names that differ only by "
            f"case, required parameters the prompt never uses. {TOKENIZER_NOTE[0].upper()}"
            f"{TOKENIZER_NOTE[1:]}."
        ),
    )
    parser.add_argument(
        "files",
        metavar="FILE",
        nargs="+",
        help="an agent file (*.agent.yaml, .json) or a tsagent directory; several are "
        "reported as served together",
    )
    parser.add_argument(
        "--prefix",
        action="store_true",
        help="name tools <agent>__<tool>, as serve --prefix does",
    )
    parser.add_argument(
        "--tool",
        action="append",
        metavar="NAME",
        help="report only this tool (its served name; repeatable); the list's total stays "
        "the whole list's",
    )
    parser.add_argument("--json", action="store_true", help="print the report as JSON")
    parser.add_argument(
        "--strict", action="store_true", help="exit 1 when any reported tool has a hint"
    )
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Print the report; returns the exit code."""
    agents: list[ServedAgent] = []
    failed = False
    for file in args.files:
        path = Path(file).expanduser().resolve()
        try:
            agents.append(ServedAgent(load_agent(path), path))
        except AgentFileError as exc:
            failed = True
            for problem in getattr(exc, "problems", [exc]):
                sys.stderr.write(f"error: {problem}\n")
    if failed:
        return 1
    try:
        report = build_report(agents, prefix=args.prefix)
    except TokenizerError as exc:
        sys.stderr.write(f"error: {exc}\n")
        return 1
    tools = list(report.tools)
    if args.tool:
        unknown = sorted(set(args.tool) - {tool.name for tool in tools})
        if unknown:
            known = ", ".join(tool.name for tool in tools) or "none"
            sys.stderr.write(
                f"error: no tool named {', '.join(unknown)} (the tools are: {known})\n"
            )
            return 1
        tools = [tool for tool in tools if tool.name in args.tool]
    if args.json:
        data = report.as_json()
        data["tokenizerNote"] = TOKENIZER_NOTE
        data["tools"] = [entry for entry in data["tools"] if entry["name"] in _names(tools)]
        sys.stdout.write(json.dumps(data, indent=2, ensure_ascii=False) + "\n")
    else:
        sys.stdout.write(_text(report, tools))
    sys.stdout.flush()
    if report.problem is not None:
        sys.stderr.write(f"error: the tools cannot be served together: {report.problem}\n")
        return 1
    if args.strict and any(tool.hints for tool in tools):
        return 1
    return 0


def _names(tools: list[ToolReport]) -> set[str]:
    return {tool.name for tool in tools}


def _text(report: HintsReport, tools: list[ToolReport]) -> str:
    lines: list[str] = []
    for tool in tools:
        cost = tool.tokens
        if cost is None:
            lines.append(tool.name)
        else:
            lines.append(
                f"{tool.name}: {cost.entry} tokens (description {cost.description}, "
                f"inputSchema {cost.input_schema}, outputSchema {cost.output_schema})"
            )
        when = "says when to use it" if tool.says_when else "does not say when to use it"
        lines.append(
            f"  description: {tool.description_chars} characters, "
            f"{tool.description_words} words; {when}"
        )
        lines += [f"  {hint.code}: {hint.message}" for hint in tool.hints]
        if not tool.hints:
            lines.append("  no hints")
    count = sum(len(tool.hints) for tool in tools)
    summary = f"{len(tools)} tool{'' if len(tools) == 1 else 's'}, {count} hint"
    summary += "" if count == 1 else "s"
    if report.list_tokens is not None:
        summary += f"; the tool list costs {report.list_tokens} tokens in all"
    lines.append(summary)
    if report.list_tokens is not None:
        lines.append(f"{TOKENIZER_NOTE[0].upper()}{TOKENIZER_NOTE[1:]}.")
    return "\n".join(lines) + "\n"
