"""``metaagent verify AGENT_FILE``: launch the server as a client would and show what it sees.

The entry is the one installed in the client's config file (its standard place, or ``--config``),
else the one the export would write; it is started with its own command, args and env and the MCP
SDK's small default environment, nothing else of this shell (``mcp_export.clients.launch``).
``--call [TOOL]`` also makes one real call (the tool's first test case's arguments, else sample
values) and shows the answer or the error as the client would.

Prints one screen of ✔/✘ lines (green/red on a terminal; ``NO_COLOR`` turns colour off), redacted,
and exits 0 when everything a client needs works, 1 otherwise, 2 for usage errors.

``--lint`` launches nothing: it checks the tools against each client's rules
(``mcp_export.lint``, run by ``mcp_export.cli._lint``).
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import cast

import anyio

from mcp_export.cli._lint import run_lint
from mcp_export.cli._report import can_show
from mcp_export.clients.entry import CLIENT_IDS, ClientId
from mcp_export.clients.verify import verify_export
from mcp_export.clients.verify_report import render_report

__all__ = ["register", "run"]

_FIRST_TOOL = ""  # --call without a tool name


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the ``verify`` subcommand."""
    parser = subparsers.add_parser(
        "verify",
        help="launch the exported server as a client would, and check what it sees",
        description=(
            "Spawn the server exactly as the chosen client's config entry says (the installed "
            "one, else the one export writes), with only the environment that client passes, "
            "connect with the MCP client in both protocol modes, list the tools, check their "
            "schemas against the agent file, list the prompts (settings.toolsAsPrompts), name "
            "every value still to fill in and say whether a model is reachable. --call makes "
            "one real call."
        ),
    )
    parser.add_argument("agent_file", metavar="AGENT_FILE", help="the agent file to verify")
    parser.add_argument(
        "--client",
        default="json",
        choices=CLIENT_IDS,
        help="whose entry to launch (default: json, a client without sampling)",
    )
    parser.add_argument("--name", help="the server's name in the client (default: from the agent)")
    parser.add_argument(
        "--config",
        metavar="PATH",
        type=Path,
        help="the client's config file to read the entry from (default: its standard place)",
    )
    parser.add_argument(
        "--timeout",
        type=float,
        default=30.0,
        metavar="S",
        help="seconds each connection may take, spawn to tools listed (default 30)",
    )
    parser.add_argument(
        "--call",
        nargs="?",
        const=_FIRST_TOOL,
        metavar="TOOL",
        help=(
            "also call TOOL (default: the first tool) through the launched server, with its "
            "first test case's arguments or sample values, and show the answer"
        ),
    )
    parser.add_argument(
        "--call-timeout",
        type=float,
        default=120.0,
        metavar="S",
        help="seconds the call may take, spawn to result (default 120)",
    )
    parser.add_argument(
        "--lint",
        action="store_true",
        help=(
            "check the tools against each client's rules instead of launching (names, schema "
            "keywords, tool counts, description lengths; every rule with its source); exit 1 "
            "when a client refuses something"
        ),
    )
    parser.add_argument(
        "--strict",
        action="store_true",
        help="with --lint: exit 1 when a client renames, cuts or drops anything too",
    )
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Run ``verify`` with parsed arguments; returns the exit code."""
    if args.lint:
        return run_lint(args)
    if args.strict:
        sys.stderr.write("metaagent verify: --strict goes with --lint\n")
        return 2
    if args.timeout <= 0 or args.call_timeout <= 0:
        sys.stderr.write("metaagent verify: --timeout and --call-timeout must be more than 0\n")
        return 2
    if args.client == "json" and args.config is not None:
        sys.stderr.write("metaagent verify: the json format has no config file to read\n")
        return 2
    client = cast(ClientId, args.client)
    path = Path(args.agent_file)
    call = args.call is not None
    tool = args.call or None

    async def main() -> int:
        report = await verify_export(
            path,
            client,
            timeout=args.timeout,
            name=args.name,
            config_path=args.config,
            call=call,
            tool=tool,
            call_timeout=args.call_timeout,
        )
        color = sys.stdout.isatty() and not os.environ.get("NO_COLOR")
        text = render_report(report, color=color, ascii_only=not can_show(sys.stdout, "✔✘"))
        if not can_show(sys.stdout, text):  # a console that cannot show ›, … or a quoted answer
            encoding = sys.stdout.encoding or "ascii"
            text = text.encode(encoding, errors="replace").decode(encoding)
        sys.stdout.write(text + "\n")
        sys.stdout.flush()
        return 0 if report.ok else 1

    return anyio.run(main)
