"""``metaagent verify --lint``: the per-client rules, from the agent file alone.

With ``--client`` (other than ``json``) only that client's rules run; otherwise every client's,
the OpenAI and Gemini function-calling rules included. ``--name`` is the server's name in the
client (Claude Code and Cursor count it in the tool's name). Exit code 0 when no client refuses
anything (with ``--strict``: changes nothing either), 1 otherwise, 2 when the file cannot be
loaded or served as written.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from mcp_export.cli._report import can_show
from mcp_export.clients.entry import server_name
from mcp_export.errors import ConfigurationError
from mcp_export.lint import LINT_CLIENTS, LintClient, lint_tools, served_tools
from mcp_export.lint.report import lint_exit_code, render_lint
from schema_types.errors import AgentFileError
from schema_types.files.agent_file import load_agent

__all__ = ["run_lint"]


def run_lint(args: argparse.Namespace) -> int:
    """Lint the agent file named in ``args``; returns the exit code."""
    path = Path(args.agent_file)
    try:
        agent = load_agent(path)
        tools = served_tools(agent, path.resolve())
    except (AgentFileError, ConfigurationError) as exc:
        sys.stderr.write(f"metaagent verify: {exc}\n")
        return 2
    clients: tuple[LintClient, ...] = LINT_CLIENTS
    if args.client != "json":
        clients = (args.client,)
    server = args.name or server_name(agent)
    findings = lint_tools(tools, server, clients)
    color = sys.stdout.isatty() and not os.environ.get("NO_COLOR")
    text = render_lint(
        findings,
        file=str(path),
        server=server,
        tool_count=len(tools),
        clients=clients,
        color=color,
        ascii_only=not can_show(sys.stdout, "✔✘"),
    )
    if not can_show(sys.stdout, text):
        encoding = sys.stdout.encoding or "ascii"
        text = text.encode(encoding, errors="replace").decode(encoding)
    sys.stdout.write(text + "\n")
    sys.stdout.flush()
    return lint_exit_code(findings, strict=args.strict)
