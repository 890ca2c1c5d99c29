"""``metaagent improve AGENT_FILE TOOL``: ask the authoring model to fix a tool's failed cases.

Runs the tool's cases (on the agent's model or each ``--model``); when some fail, the authoring
model (``--authoring-model``, default the agent's own; the exchange is recorded in History
unless ``--no-history``) proposes one change to the tool's description, template or parameters
schema, or to the system prompt, with its reason (``mcp_export.authoring.improve``).
The change is checked like ``metaagent validate`` (one repair
turn, then a refusal), printed as a unified diff of the agent file, and re-run on the same models
with every case that passed before; each model's pass rate before → after follows, regressions
first. ``--apply`` writes the change (atomically, the file's comments and order kept) only when
no case regressed.

Exit codes: 0 nothing failed, or the fix regressed nothing (and ``--apply`` wrote it); 1 the
fix made a passing case fail (nothing written); 2 a bad command line or agent file, or no case
to run; 3 no fix offered (the proposal was refused, or the authoring model could not be asked).
"""

from __future__ import annotations

import argparse
import asyncio
import sys
from pathlib import Path

from mcp_export.authoring.exchange import authoring_model
from mcp_export.authoring.improve import (
    Fix,
    FixRefused,
    compare,
    comparison_lines,
    failed_results,
    fix_conversation,
    rerun,
    rerun_cases,
    suggest_fix,
)
from mcp_export.cli._report import error, load_agent_or_report
from mcp_export.errors import ExportError
from mcp_export.history.store import HistoryStore
from mcp_export.redact import redact
from mcp_export.testing.run import CaseResult, NoCases, run_matrix, select_cases
from schema_types.agent import Agent
from schema_types.errors import SchemaError
from schema_types.files.agent_file import save_agent

__all__ = ["register", "run"]


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the ``improve`` subcommand."""
    parser = subparsers.add_parser(
        "improve",
        help="ask the authoring model to fix a tool's failing test cases",
        description=(
            "Run TOOL's test cases; when some fail, ask the authoring model for one change, "
            "print it as a diff and the pass rates before → after a re-run. Exit 0: nothing "
            "failed or nothing regressed; 1: the fix regressed a case; 2: bad input; 3: no fix."
        ),
    )
    parser.add_argument("agent_file", metavar="AGENT_FILE", help="the agent file")
    parser.add_argument("tool", metavar="TOOL", help="the tool to improve")
    parser.add_argument(
        "--model",
        metavar="M",
        action="append",
        default=[],
        help="run the cases on this model (provider:model); repeat for several",
    )
    parser.add_argument(
        "--authoring-model", metavar="M", help="the model that proposes the fix (default: own)"
    )
    parser.add_argument(
        "--no-history", action="store_true", help="do not record the authoring exchange"
    )
    parser.add_argument(
        "--apply", action="store_true", help="write the fix to AGENT_FILE if nothing regressed"
    )
    parser.set_defaults(func=run)


def _say(text: str) -> None:
    sys.stdout.write(redact(text) + "\n")
    sys.stdout.flush()


async def _suggest(
    agent: Agent, path: Path, args: argparse.Namespace, failed: list[CaseResult]
) -> Fix:
    """The fix, asked of the authoring model and recorded in History (when it opens)."""
    model = authoring_model(agent, args.authoring_model)
    history: HistoryStore | None = None
    if not args.no_history:
        try:
            history = HistoryStore()
        except ExportError as exc:
            error("history", f"{exc}; going on without recording")
    try:
        conversation = fix_conversation(
            model, args.tool, failed, history=history, agent_path=str(path)
        )
        async with conversation:
            return await suggest_fix(agent, path, args.tool, failed, conversation)
    finally:
        if history is not None:
            history.close()


def run(args: argparse.Namespace) -> int:
    """Run, suggest, re-run; returns the exit code."""
    path = Path(args.agent_file).resolve()
    agent = load_agent_or_report("improve", path)
    if agent is None:
        return 2
    try:
        cases = select_cases(agent, tool=args.tool)
    except NoCases as exc:
        error("improve", str(exc))
        return 2
    before = asyncio.run(run_matrix(agent, path, cases, models=args.model))
    failed = failed_results(before, args.tool)
    if not failed:
        _say(f"{args.tool}: every case passed on {', '.join(before.models)}; nothing to fix")
        return 0
    for result in failed:
        _say(f"FAIL  {args.tool} / {result.case}  {result.model}")
        for failure in result.failures:
            _say(f"      {failure}")
    try:
        fix = asyncio.run(_suggest(agent, path, args, failed))
    except FixRefused as exc:
        error("improve", str(exc))
        return 3
    except ExportError as exc:
        error("improve", f"the authoring model could not be asked: {exc}")
        return 3
    repaired = " (after one repair turn)" if fix.repaired else ""
    _say(f"Suggested change to {fix.proposal.field}{repaired}: {fix.proposal.reason}")
    sys.stdout.write(redact(fix.diff))
    after = asyncio.run(rerun(fix, path, before, rerun_cases(before, args.tool)))
    comparison = compare(before, after, args.tool)
    for line in comparison_lines(comparison):
        _say(line)
    if comparison.regressions:
        count = len(comparison.regressions)
        _say(
            f"not applied: the fix makes {count} passing case{'s' * (count != 1)} fail"
            if args.apply
            else f"the fix makes {count} passing case{'s' * (count != 1)} fail"
        )
        return 1
    if args.apply:
        try:
            save_agent(fix.agent, path)
        except SchemaError as exc:
            error("improve", str(exc))
            return 2
        _say(f"applied: {path} saved with the change to {fix.proposal.field}")
    return 0
