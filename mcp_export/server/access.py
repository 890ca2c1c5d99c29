"""The access rules a served HTTP server applies: from the agent files' ``settings.access``,
overridden by ``metaagent serve``'s ``--rate-limit``, ``--calls-at-once`` and ``--tool-scope``.

Limits are the server's (one table of callers for every tool it serves): several agent files
that set different limits are refused at start-up, so no file's limit is silently dropped. Tool
scopes follow the tools: each agent's ``toolScopes`` name its own tools, served under their
served names (``--prefix``); ``--tool-scope`` names served tools.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from mcp_export.server.limits import Limits, LimitsError, parse_rate
from mcp_export.server.scopes import ToolScopes, ToolScopesError
from mcp_export.server.tools import ServedAgent, ServedTool

__all__ = ["served_limits", "served_tool_scopes"]


def served_limits(
    agents: Sequence[ServedAgent],
    *,
    rate_limit: tuple[int, float] | None = None,
    calls_at_once: int | None = None,
) -> Limits:
    """The limits of each caller: the options given, else the agent files' (which must agree).

    Raises:
        LimitsError: two agent files set different limits (and no option overrides them).
    """
    rates = {a.agent.settings.access.rate_limit for a in agents} - {None}
    at_once = {a.agent.settings.access.calls_at_once for a in agents} - {None}
    for name, values, given in (
        ("rateLimit", rates, rate_limit),
        ("callsAtOnce", at_once, calls_at_once),
    ):
        if given is None and len(values) > 1:
            shown = ", ".join(sorted(str(v) for v in values))
            raise LimitsError(
                f"the agent files set different settings.access.{name} ({shown}): one server "
                "has one limit per caller; make them agree or give the limit on the command line"
            )
    if rate_limit is None and rates:
        rate_limit = parse_rate(str(next(iter(rates))))
    calls, period = rate_limit if rate_limit is not None else (None, 60.0)
    if calls_at_once is None and at_once:
        calls_at_once = next(iter(at_once))
    return Limits(calls=calls, period=period, at_once=calls_at_once)


def served_tool_scopes(
    catalogue: Mapping[str, ServedTool], given: Mapping[str, str] | None = None
) -> ToolScopes:
    """Each restricted served tool's scope: the agent files' ``toolScopes``, then ``given``.

    Raises:
        ToolScopesError: an agent file's ``toolScopes`` names a tool it does not define.
    """
    needed: dict[str, str] = {}
    for agent in {id(t.owner): t.owner for t in catalogue.values()}.values():
        scopes = agent.agent.settings.access.tool_scopes
        defined = {t.definition.name for t in catalogue.values() if t.owner is agent}
        unknown = sorted(set(scopes) - defined)
        if unknown:
            raise ToolScopesError(
                f"{agent.path}: settings.access.toolScopes names {', '.join(unknown)}, which "
                f"the agent does not define; its tools are {', '.join(sorted(defined))}"
            )
    for served_name, tool in catalogue.items():
        scope = tool.owner.agent.settings.access.tool_scopes.get(tool.definition.name)
        if scope is not None:
            needed[served_name] = scope.strip()
    needed.update(given or {})
    return ToolScopes(needed)
