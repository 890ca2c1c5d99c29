"""``metaagent validate FILE…``: check agent files without starting anything.

For each file prints ``ok: FILE (N tools)`` on stdout, or every problem found on stderr, each
located (``error: FILE:LINE:COLUMN: JSON.path: what is expected``). Things that load but are
probably mistakes are warnings on stderr: literal secrets in the file, and template diagnostics
(unknown placeholders, unbalanced braces, required parameters the prompt never uses), each once
with its line and column in the prompt and how many more places repeat it. Exit code 0 when every
file is valid (with ``--strict``: and has no warning), else 1.
"""

from __future__ import annotations

import argparse
import sys

from schema_types.agent_warnings import warnings_for
from schema_types.errors import AgentFileError
from schema_types.files.agent_file import load_agent

__all__ = ["register", "run", "warnings_for"]


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the ``validate`` subcommand."""
    parser = subparsers.add_parser(
        "validate",
        help="check agent files and report every problem with its location",
        description=(
            "Load each agent file as the studio and the server would, and report what is wrong "
            "with it: file, line and column, the JSON path, and what is expected."
        ),
    )
    parser.add_argument(
        "files",
        metavar="FILE",
        nargs="+",
        help="an agent file (*.agent.yaml, .json) or a tsagent directory",
    )
    parser.add_argument(
        "--strict", action="store_true", help="fail on warnings too (literal secrets, templates)"
    )
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Validate every file; returns the exit code."""
    failed = False
    for file in args.files:
        try:
            agent = load_agent(file)
        except AgentFileError as exc:
            failed = True
            for problem in getattr(exc, "problems", [exc]):
                sys.stderr.write(f"error: {problem}\n")
            continue
        warnings = warnings_for(agent)
        for warning in warnings:
            sys.stderr.write(f"warning: {file}: {warning}\n")
        if warnings and args.strict:
            failed = True
            continue
        count = len(agent.tools)
        sys.stdout.write(f"ok: {file} ({count} tool{'' if count == 1 else 's'})\n")
    sys.stderr.flush()
    sys.stdout.flush()
    return 1 if failed else 0
