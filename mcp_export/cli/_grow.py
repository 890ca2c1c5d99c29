"""``metaagent grow AGENT_FILE TOOL``: propose test cases for a tool and add the chosen ones.

Proposals come from the tool's schema (bounds, enum values, optional parameters absent and
present), from History (served calls no case has yet, each with its answer) and from the
authoring model (``requests``: caller cases in words, paraphrases of the tool's purpose and
requests meant for another tool; ``--model`` or the agent's own model): ``--from`` chooses
(default ``schema,history``). Without ``--add``
or ``--all`` the proposals are listed and nothing is written; ``--add NAME…`` adds those, ``--all``
adds every one, as one atomic save that keeps the rest of the file. Exit code 0; 2 for a bad
agent file, tool, source or proposal name, no authoring model or key, or a file that cannot be
written; 1 when the authoring model gives no requests.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from pathlib import Path

from mcp_export.authoring.exchange import authoring_model
from mcp_export.authoring.grow import (
    SOURCES,
    GrowError,
    Proposal,
    add_cases,
    history_proposals,
    schema_proposals,
)
from mcp_export.authoring.grow_requests import request_proposals
from mcp_export.cli._report import error, load_agent_or_report
from mcp_export.errors import ExportError, HistoryError
from mcp_export.history.schema import agent_key
from mcp_export.history.store import HistoryStore
from schema_types.agent import Agent, ToolDefinition
from schema_types.errors import SchemaError

__all__ = ["register", "run"]

_ANSWER_SHOWN = 200


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the ``grow`` subcommand."""
    parser = subparsers.add_parser(
        "grow",
        help="propose test cases for a tool (schema bounds, enums, History) and add chosen ones",
        description=(
            "Propose test cases for a tool from its schema and its served calls in History; "
            "list them, or add the ones named with --add (or every one with --all)."
        ),
    )
    parser.add_argument("agent_file", metavar="AGENT_FILE", help="the agent file")
    parser.add_argument("tool", metavar="TOOL", help="the tool's name")
    parser.add_argument(
        "--from",
        dest="sources",
        default="schema,history",
        metavar="SOURCES",
        help=f"comma-separated, of {', '.join(SOURCES)} (default: schema,history)",
    )
    parser.add_argument(
        "--model", metavar="M", help="the authoring model, provider:model (default: the agent's)"
    )
    chosen = parser.add_mutually_exclusive_group()
    chosen.add_argument("--add", nargs="+", metavar="NAME", help="add these proposals")
    chosen.add_argument("--all", action="store_true", help="add every proposal")
    parser.set_defaults(func=run)


def _describe(index: int, proposal: Proposal) -> str:
    case = proposal.case
    lines = [f"{index:>3}. {case.name}  [{proposal.source}: {proposal.kind}]  {proposal.why}"]
    if case.ask is not None:
        lines.append(f"     ask: {case.ask}")
    else:
        lines.append(f"     arguments: {json.dumps(case.arguments, ensure_ascii=False)}")
    expect = case.expect.to_data()
    expect.pop("truncated", None)
    if expect:
        lines.append(f"     expect: {json.dumps(expect, ensure_ascii=False)}")
    if proposal.answer is not None:
        answer = " ".join(proposal.answer.split())
        if len(answer) > _ANSWER_SHOWN:
            answer = answer[: _ANSWER_SHOWN - 1] + "…"
        lines.append(f"     answer: {answer}")
    return "\n".join(lines) + "\n"


def _proposals(
    args: argparse.Namespace,
    sources: list[str],
    agent: Agent,
    tool: ToolDefinition,
    path: Path,
) -> list[Proposal]:
    proposals: list[Proposal] = []
    if "schema" in sources:
        proposals += schema_proposals(tool)
    if "history" not in sources and "requests" not in sources:
        return proposals
    model = authoring_model(agent, args.model) if "requests" in sources else None
    with HistoryStore() as history:
        if "history" in sources:
            proposals += history_proposals(tool, history, path)
        if model is not None:
            asked = request_proposals(tool, model, history=history, agent_path=agent_key(str(path)))
            proposals += asyncio.run(asked)
    return proposals


def run(args: argparse.Namespace) -> int:
    """Run ``grow`` with parsed arguments; returns the exit code."""
    path = Path(args.agent_file)
    sources = [s.strip() for s in str(args.sources).split(",") if s.strip()]
    unknown = [s for s in sources if s not in SOURCES]
    if unknown or not sources:
        error("grow", f"--from takes {', '.join(SOURCES)} (comma-separated), not {args.sources!r}")
        return 2
    agent = load_agent_or_report("grow", path)
    if agent is None:
        return 2
    tool = agent.metadata.tool(args.tool)
    if tool is None:
        names = ", ".join(t.name for t in agent.tools) or "none"
        error("grow", f"the agent has no tool named {args.tool!r} (its tools: {names})")
        return 2
    try:
        proposals = _proposals(args, sources, agent, tool, path)
    except HistoryError as exc:
        error("grow", f"cannot read History: {exc}")
        return 2
    except ExportError as exc:  # no authoring model, or no key for it
        error("grow", str(exc))
        return 2
    except GrowError as exc:  # the authoring model failed
        error("grow", str(exc))
        return 1
    if not (args.add or args.all):
        if not proposals:
            sys.stdout.write(f"no new cases to propose for {tool.name}\n")
        for index, proposal in enumerate(proposals, 1):
            sys.stdout.write(_describe(index, proposal))
        return 0
    by_name = {p.case.name: p for p in proposals}
    if args.all:
        picked = proposals
    else:
        missing = [n for n in args.add if n not in by_name]
        if missing:
            known = ", ".join(repr(n) for n in by_name) or "none"
            error("grow", f"no proposal named {', '.join(map(repr, missing))} (proposals: {known})")
            return 2
        picked = [by_name[n] for n in dict.fromkeys(args.add)]
    try:
        add_cases(path, tool.name, [p.case for p in picked])
    except (GrowError, SchemaError) as exc:
        error("grow", str(exc))
        return 2
    for proposal in picked:
        sys.stdout.write(f"added {proposal.case.name}\n")
    return 0
