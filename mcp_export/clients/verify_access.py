"""``verify``'s view of ``settings.access``: the limits and tool scopes a shared server applies.

The launched entry is a stdio server (one client, no limits); what ``settings.access`` says is
shown so the author sees what ``metaagent serve --http`` will enforce for each caller (tool
scopes with OAuth only), and a scope for a tool the agent does not define is a problem.
"""

from __future__ import annotations

from mcp_export.clients.verify_report import VerifyReport
from schema_types.agent import Agent

__all__ = ["check_access"]

LABEL = "access over HTTP"


def check_access(report: VerifyReport, agent: Agent) -> None:
    """Add the access line when the agent sets ``settings.access``."""
    access = agent.settings.access
    if not access.any:
        return
    defined = {tool.name for tool in agent.metadata.tools}
    unknown = sorted(set(access.tool_scopes) - defined)
    if unknown:
        report.add(
            LABEL,
            False,
            f"settings.access.toolScopes names {', '.join(unknown)}, which the agent does not "
            f"define; its tools are {', '.join(sorted(defined))}",
        )
        return
    note = " (scopes: OAuth callers only)" if access.tool_scopes else ""
    report.add(LABEL, True, f"{access.describe()}{note}")
