"""``metaagent verify --lint``: what each MCP client will refuse, rename or drop of the tools.

Per tool and per client (Claude Desktop, Claude Code, VS Code Copilot, Cursor, and the OpenAI
and Gemini function-calling rules that clients pass tools on to): names a client refuses or
renames (characters, length, with the client's prefix), schema keywords a client drops or
rejects, tool-count limits and descriptions over a client's limit. Every rule names its source
(``Finding.source``); a limit without one is not checked. The tools are linted as the server
lists them (a conversation tool with its ``conversation_id``), from the agent file alone:
nothing is started.

Modules: ``model`` (clients, findings), ``names`` (names, descriptions, counts),
``gemini_schema`` (the schema subset Gemini takes), ``report`` (text for the CLI).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from pathlib import Path

from mcp_export.lint.gemini_schema import gemini_schema_findings
from mcp_export.lint.model import (
    LINT_CLIENT_LABELS,
    LINT_CLIENTS,
    Finding,
    LintClient,
    LintTool,
    Severity,
)
from mcp_export.lint.names import CLIENT_RULES
from mcp_export.server.tools import ServedAgent, build_catalogue
from schema_types.agent import Agent

__all__ = [
    "LINT_CLIENTS",
    "LINT_CLIENT_LABELS",
    "Finding",
    "LintClient",
    "LintTool",
    "Severity",
    "lint_agent",
    "lint_tools",
    "served_tools",
]


def served_tools(agent: Agent, path: Path) -> list[LintTool]:
    """The agent's tools as ``tools/list`` shows them (name, description, inputSchema)."""
    catalogue = build_catalogue([ServedAgent(agent, path)], prefix=False)
    return [
        LintTool(tool.name, tool.definition.description, tool.input_schema)
        for tool in catalogue.values()
    ]


def lint_tools(
    tools: Sequence[LintTool], server: str, clients: Iterable[LintClient] = LINT_CLIENTS
) -> list[Finding]:
    """Every finding of ``clients``' rules on ``tools`` served as ``server``, client by client
    and tool by tool."""
    found: list[Finding] = []
    for client in clients:
        found += CLIENT_RULES[client](tools, server)
        if client == "gemini":
            for tool in tools:
                found += gemini_schema_findings(tool)
    return found


def lint_agent(
    agent: Agent, path: Path, server: str, clients: Iterable[LintClient] = LINT_CLIENTS
) -> list[Finding]:
    """:func:`lint_tools` on the agent's served tools.

    Raises:
        ConfigurationError: a tool cannot be served as written (the message says why).
    """
    return lint_tools(served_tools(agent, path), server, clients)
