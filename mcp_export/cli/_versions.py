"""``metaagent versions AGENT_FILE TOOL``: the versions of a tool its test runs recorded.

Each version (a fingerprint of what decides the tool's answer: ``versions/fingerprint.py``) is
listed newest first with its pass rate, median time, tokens and cost per call and per 100
calls; ``*`` marks the agent file's version as it is now. ``--diff OLD NEW`` prints what
differs between two versions (fingerprints or prefixes of them, or ``current``); ``--json``
writes the list as JSON on stdout. Exit code 0; 2 for a bad agent file, tool or version, or a
history database that cannot be read.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from mcp_export.cli._report import error, load_agent_or_report
from mcp_export.errors import HistoryError
from mcp_export.history.store import HistoryStore
from mcp_export.versions.fingerprint import tool_version
from mcp_export.versions.query import (
    CURRENT,
    UnknownVersion,
    VersionSummary,
    tool_versions,
    version_diff,
)

__all__ = ["register", "run"]


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the ``versions`` subcommand."""
    parser = subparsers.add_parser(
        "versions",
        help="list a tool's versions with pass rate, time, tokens and cost; diff two",
        description=(
            "List the versions of a tool that its test runs recorded, newest first, with pass "
            "rate, median time, tokens and cost; --diff shows what differs between two."
        ),
    )
    parser.add_argument("agent_file", metavar="AGENT_FILE", help="the agent file")
    parser.add_argument("tool", metavar="TOOL", help="the tool's name")
    parser.add_argument(
        "--diff",
        nargs=2,
        metavar=("OLD", "NEW"),
        help=f"show what differs between two versions (fingerprint prefixes, or {CURRENT})",
    )
    parser.add_argument("--json", action="store_true", help="write the versions as JSON")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Run ``versions`` with parsed arguments; returns the exit code."""
    path = Path(args.agent_file)
    agent = load_agent_or_report("versions", path)
    if agent is None:
        return 2
    tool = agent.metadata.tool(args.tool)
    if tool is None:
        names = ", ".join(t.name for t in agent.tools) or "none"
        error("versions", f"the agent has no tool named {args.tool!r} (its tools: {names})")
        return 2
    current = tool_version(agent, tool)
    try:
        with HistoryStore() as history:
            if args.diff:
                old, new = args.diff
                sys.stdout.write(
                    version_diff(history, path, tool.name, old, new, current)
                    or "the two versions are the same\n"
                )
                return 0
            versions = tool_versions(history, path, tool.name, current)
    except UnknownVersion as exc:
        error("versions", str(exc))
        return 2
    except HistoryError as exc:
        error("versions", str(exc))
        return 2
    if args.json:
        data = {
            "agentPath": str(path.resolve()),
            "tool": tool.name,
            "current": current.fingerprint,
            "versions": [v.as_json() for v in versions],
        }
        sys.stdout.write(json.dumps(data, ensure_ascii=False, indent=2) + "\n")
        return 0
    _print(tool.name, versions, current.fingerprint)
    return 0


_HEADER: tuple[str, ...] = ("", "VERSION", "MODEL", "RUNS", "PASSED", "MEDIAN", "TOKENS/CALL")
_HEADER += ("COST/CALL", "COST/100 CALLS", "LAST RUN")


def _print(tool: str, versions: list[VersionSummary], current: str) -> None:
    if not versions:
        sys.stdout.write(
            f"{tool}: no version recorded yet (run metaagent test, or serve it, to record one); "
            f"the file's version is {current[:12]}\n"
        )
        return
    count = len(versions)
    sys.stdout.write(f"{tool}: {count} version{'s' * (count != 1)}, newest first\n")
    rows = [_HEADER] + [v.cells(v.last_at.strftime("%Y-%m-%d %H:%M:%S UTC")) for v in versions]
    widths = [max(len(row[i]) for row in rows) for i in range(len(_HEADER))]
    for row in rows:
        line = "  ".join(cell.ljust(width) for cell, width in zip(row, widths, strict=True))
        sys.stdout.write(line.rstrip() + "\n")
    if not any(v.current for v in versions):
        sys.stdout.write(f"the file's version ({current[:12]}) has no recorded run yet\n")
