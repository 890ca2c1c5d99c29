"""``metaagent export AGENT_FILE --client …``: print or install the entry that serves an agent.

Without ``--install`` the snippet goes to stdout (ready to paste); notes on what the person still
has to do go to stderr. With ``--install`` the entry is merged into the client's config file (its
standard place on this OS, or ``--config PATH``) and the changed file is named. Claude Code edits
its own files: for it ``--install`` runs ``claude mcp add-json NAME JSON --scope user`` when the
``claude`` command is on PATH, and otherwise prints that command and exits 1 (nothing was
installed).

Exit codes: 0 done (or already installed), 1 the agent or the config file was refused, or
nothing could be installed, 2 usage.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import cast

from mcp_export.cli._report import load_agent_or_report
from mcp_export.clients.claude_code import ClaudeNotFound, install_with_claude
from mcp_export.clients.entry import CLIENT_IDS, ClientId, build_entry, default_config_path
from mcp_export.clients.install import InstallError, InstallResult, install
from mcp_export.clients.launchers import LAUNCHERS, PACKAGE, PATH_STYLES, Launch, LauncherId

__all__ = ["register", "run"]


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the ``export`` subcommand."""
    parser = subparsers.add_parser(
        "export",
        help="print or install the MCP client config that serves an agent",
        description=(
            "Print the config entry that makes an MCP client launch `metaagent serve` for this "
            "agent, or merge it into the client's config file (--install). Secret values are "
            "never written: the entry names the environment variables the agent needs."
        ),
    )
    parser.add_argument("agent_file", metavar="AGENT_FILE", help="the agent file to serve")
    parser.add_argument(
        "--client", required=True, choices=CLIENT_IDS, help="which client's config format"
    )
    parser.add_argument("--name", help="the server's name in the client (default: from the agent)")
    parser.add_argument(
        "--launcher",
        choices=LAUNCHERS,
        default=None,
        help=(
            "what starts the server: python (default: this machine's interpreter), uvx "
            f"(`uvx --from {PACKAGE} metaagent serve`), pipx (`pipx run --spec {PACKAGE} …`), "
            "or command (the --command you give); uvx, pipx and command work on other machines"
        ),
    )
    parser.add_argument(
        "--command",
        metavar="CMD",
        help="the command that stands for `metaagent` (implies --launcher command)",
    )
    parser.add_argument(
        "--path",
        dest="path_style",
        choices=PATH_STYLES,
        default="absolute",
        help="name the agent file by its absolute path (default) or exactly as given",
    )
    parser.add_argument(
        "--install",
        action="store_true",
        help=(
            "merge the entry into the client's config file (a backup is written first); for "
            "claude-code, run `claude mcp add-json … --scope user`"
        ),
    )
    parser.add_argument(
        "--config",
        metavar="PATH",
        type=Path,
        help="the config file to install into (default: the client's standard place)",
    )
    parser.add_argument(
        "--force",
        action="store_true",
        help="with --install: replace a different server that has the same name",
    )
    parser.set_defaults(func=run)


def _err(text: str) -> None:
    sys.stderr.write(text.rstrip("\n") + "\n")


def _out(text: str) -> None:
    sys.stdout.write(text.rstrip("\n") + "\n")
    sys.stdout.flush()


def run(args: argparse.Namespace) -> int:
    """Run ``export`` with parsed arguments; returns the exit code."""
    client = cast(ClientId, args.client)
    agent_path = Path(args.agent_file)
    agent = load_agent_or_report("export", agent_path)
    if agent is None:
        return 1
    launcher = cast(LauncherId, args.launcher or ("command" if args.command else "python"))
    if args.command and launcher != "command":
        _err("metaagent export: --command goes with --launcher command (or no --launcher)")
        return 2
    try:
        launch = Launch(launcher, args.command or "", args.path_style)
        entry = build_entry(agent_path, agent, client, name=args.name, launch=launch)
    except ValueError as exc:
        _err(f"metaagent export: {exc}")
        return 2
    if not args.install:
        if args.config is not None or args.force:
            _err("metaagent export: --config and --force only apply with --install")
            return 2
        _out(entry.snippet)
        for note in entry.notes:
            _err(f"note: {note}")
        return 0
    if client == "claude-code":
        if args.config is not None:
            _err(
                "metaagent export: --config does not apply to Claude Code (it edits its own files)"
            )
            return 2
        try:
            result: InstallResult = install_with_claude(entry, force=args.force)
        except ClaudeNotFound:
            _out(entry.snippet)
            _err(
                "metaagent export: the claude command is not on PATH, so nothing was installed: "
                f"run the command above where Claude Code is installed to add '{entry.name}'."
            )
            return 1
        except InstallError as exc:
            return _failed(exc)
        return _installed(result, entry.notes)
    if client == "json":
        _err(
            "metaagent export: the json format has no config file to install into; "
            "print it without --install and paste it into your client's config"
        )
        return 2
    config = args.config if args.config is not None else default_config_path(client)
    if config is None:  # pragma: no cover - every remaining client has a standard place
        _err(f"metaagent export: no standard config file for {client}; give --config PATH")
        return 2
    try:
        result = install(entry, config, force=args.force)
    except InstallError as exc:
        return _failed(exc)
    return _installed(result, entry.notes)


def _failed(exc: InstallError) -> int:
    """Say why nothing was installed; the exit code."""
    _err(f"metaagent export: {exc}")
    return 1


def _installed(result: InstallResult, notes: Sequence[str]) -> int:
    """Say what the install did, and the entry's notes; the exit code."""
    _out(result.message)
    for note in notes:
        _err(f"note: {note}")
    return 0
