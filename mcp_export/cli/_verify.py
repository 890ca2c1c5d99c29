"""``metaagent verify AGENT_FILE``: launch the server as a client would and show what it sees.

Prints one screen of ✔/✘ lines (green/red on a terminal; ``NO_COLOR`` turns colour off) and exits
0 when everything a client needs works, 1 otherwise.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import cast

import anyio

from mcp_export.clients.entry import CLIENT_IDS, ClientId
from mcp_export.clients.verify import render_report, verify_export

__all__ = ["register", "run"]


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the ``verify`` subcommand."""
    parser = subparsers.add_parser(
        "verify",
        help="launch the exported server as a client would, and check what it sees",
        description=(
            "Spawn the server exactly as the chosen client's entry says, connect with the MCP "
            "client in both protocol modes, list the tools, check their schemas against the "
            "agent file and say whether a model is reachable."
        ),
    )
    parser.add_argument("agent_file", metavar="AGENT_FILE", help="the agent file to verify")
    parser.add_argument(
        "--client",
        default="json",
        choices=CLIENT_IDS,
        help="whose entry to launch (default: json, a client without sampling)",
    )
    parser.add_argument(
        "--timeout",
        type=float,
        default=30.0,
        metavar="S",
        help="seconds each connection may take, spawn to tools listed (default 30)",
    )
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Run ``verify`` with parsed arguments; returns the exit code."""
    if args.timeout <= 0:
        sys.stderr.write("metaagent verify: --timeout must be more than 0 seconds\n")
        return 2
    client = cast(ClientId, args.client)
    path = Path(args.agent_file)

    async def main() -> int:
        report = await verify_export(path, client, timeout=args.timeout)
        color = sys.stdout.isatty() and not os.environ.get("NO_COLOR")
        text = render_report(report, color=color, ascii_only=not _can_show("✔✘"))
        sys.stdout.write(text + "\n")
        sys.stdout.flush()
        return 0 if report.ok else 1

    return anyio.run(main)


def _can_show(text: str) -> bool:
    try:
        text.encode(sys.stdout.encoding or "ascii")
    except (UnicodeEncodeError, LookupError):
        return False
    return True
