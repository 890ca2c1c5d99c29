"""The agent's own tools: its MCP servers, offered to the model, called under the permission rule.

``AgentToolbox`` is shared by every session of one agent (the studio's chat tabs, concurrent served
calls). Each server is started once, lazily, on first use, and restarted on the next use after it
died (see ``toolbox.connection``). Tools are offered to the model namespaced ``server__tool`` and
routed back by that name.

The permission rule (DESIGN.md, "Permission"), for runs where nobody can be asked:

- ``toolPermission: always`` → the model gets no tools;
- ``never`` → every included tool;
- ``tool`` → only tools whose ``permissionRequired`` is false (the tool's own setting, else the
  server default, else required).

A call outside the allowed set is refused at call time too, as an error result the model sees.
``withheld`` says which tools the rule held back from a run, for its trace (``toolbox.withheld``).
Every failure of a tool (an ``isError`` result, a protocol error, a timeout, a crashed server)
comes back as an error ``ToolOutcome`` with the reason; ``call`` never raises, except when it is
cancelled.

A server that is unavailable — it could not start, did not answer within its start-up limit, or
failed recently and waits for its next try — offers no tools, and the others serve as usual; the
reason is in ``server_errors`` and in the error any call to one of its tools gets. A listing waits
for servers still starting at most half of its caller's remaining time (the rest is the model's),
so a slow server never makes a call overrun its own limit; a start that outlived that wait goes on
in the background, and later calls use the server once it is up without waiting for it.

A tool whose ``inputSchema`` is not a valid JSON Schema object is hidden with the reason:
providers refuse a whole request that carries one.

With a protocol log (``protocol_log``, see ``mcp_export.protocol_log``) every connection records
its JSON-RPC messages in both directions there, named by the server's name. A caller waiting for
a server to come up (a listing, a call) tells the step listener of its context which step the
server is at (``toolbox.steps``), so a status line can say it.
"""

from __future__ import annotations

import hashlib
import logging
import math
import re
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio
import mcp_types as types
from anyio.abc import AsyncResource
from mcp.shared.exceptions import MCPError
from mcp_types import CONNECTION_CLOSED

from mcp_export.errors import ToolServerError
from mcp_export.protocol_log import ProtocolLog
from mcp_export.providers.base import ToolSchema
from mcp_export.toolbox.connection import ProtocolMode, ServerConnection
from mcp_export.toolbox.listing import input_schema_problem, tool_annotations
from mcp_export.toolbox.outcome import ToolOutcome, outcome_from_result

# ProbedTool, ProbeResult and probe_server are part of this module's names (the studio imports
# them from here); they live with the rest of the one-off probe.
from mcp_export.toolbox.probe import ProbedTool, ProbeResult, probe_server
from mcp_export.toolbox.server_io import describe_error
from mcp_export.toolbox.withheld import WithheldTools, find_withheld
from schema_types.agent import Agent, McpServerConfig

__all__ = [
    "AgentToolbox",
    "HiddenTool",
    "ProbeResult",
    "ProbedTool",
    "ToolOutcome",
    "ToolSpec",
    "WithheldTools",
    "probe_server",
    "provider_tool_name",
    "timed_out_text",
    "unavailable_text",
]

logger = logging.getLogger(__name__)

# What every provider accepts as a tool name (OpenAI is the strictest: 64 characters).
_PROVIDER_NAME = re.compile(r"^[A-Za-z0-9_-]{1,64}$")
_NOT_ALLOWED = re.compile(r"[^A-Za-z0-9_-]")
_MAX_NAME = 64


def provider_tool_name(server: str, tool: str) -> str:
    """The name the model sees for ``tool`` of ``server``: ``server__tool``.

    A name with characters providers refuse, or longer than 64 characters, is cleaned and given a
    short hash of the original, so it stays unique and the same across runs.
    """
    name = f"{server}__{tool}"
    if _PROVIDER_NAME.match(name):
        return name
    digest = hashlib.sha256(name.encode()).hexdigest()[:8]
    return f"{_NOT_ALLOWED.sub('_', name)[: _MAX_NAME - 9]}_{digest}"


def timed_out_text(name: str, limit: float) -> str:
    """What the model gets back when the call to ``name`` ran past its ``limit`` (seconds)."""
    return f"tool {name} timed out after {limit:.1f} s"


def unavailable_text(name: str, reason: str) -> str:
    """What the model gets back when it calls ``name`` while its server is unavailable."""
    return f"tool {name} cannot be called: {reason}"


@dataclass(frozen=True)
class ToolSpec:
    """One tool of one of the agent's MCP servers, as offered to the model."""

    name: str  # namespaced, what the model sees: "server__tool"
    server: str
    tool: str
    description: str
    input_schema: dict[str, Any]
    annotations: dict[str, Any] | None
    permission_required: bool
    schema_problem: str | None = None  # why input_schema cannot be offered to a model

    def schema(self) -> ToolSchema:
        """This tool as a provider ``ToolSchema``."""
        return ToolSchema(self.name, self.description, self.input_schema)


@dataclass(frozen=True)
class HiddenTool:
    """A tool the model is not offered, and why (shown in the studio)."""

    spec: ToolSpec
    reason: str


@dataclass(frozen=True)
class _Rejection:
    """Why a call cannot go ahead: refused by the permission rule, or no such tool."""

    text: str
    refused: bool


def _wait_budget() -> float | None:
    """How long a listing may wait for servers still starting: half of the caller's remaining
    time (the rest is for the model and the tools), or None when the caller has no deadline."""
    deadline = anyio.current_effective_deadline()
    if math.isinf(deadline):
        return None
    return max(0.0, (deadline - anyio.current_time()) / 2)


def _wait_for(connection: ServerConnection, budget: float | None) -> float | None:
    """How long to wait for ``connection``'s start: not at all once an earlier caller stopped
    waiting for it (each call would pay for the same silent server again), else ``budget``."""
    return 0.0 if connection.starting_in_background else budget


def _may_offer_any(config: McpServerConfig, policy: str) -> bool:
    """Whether any tool of this server could be allowed, judged from the file alone.

    Lets ``allowed_tools`` skip starting servers whose every tool would be hidden.
    """
    if policy == "always":
        return False
    if policy == "never" or config.server_tool_defaults.permission_required is False:
        return True
    return any(s.include and s.permission_required is False for s in config.tools.values())


class AgentToolbox(AsyncResource):
    """The MCP servers of one agent, shared by its sessions.

    Args:
        agent: The agent whose ``mcpServers`` and ``toolPermission`` apply.
        base_dir: The agent file's directory (relative ``cwd`` and command paths start there).
        call_timeout: The longest one tool call may take, in seconds.
        startup_timeout: The longest a server may take to answer ``initialize`` and
            ``tools/list`` (default ``DEFAULT_STARTUP_TIMEOUT``); past it the server is
            unavailable until its next try.
        protocol_mode: ``auto`` (probe the protocol era, fall back to the 2025-11-25 handshake)
            or ``legacy`` (handshake only). Both connect equally fast to an SDK server.
    """

    def __init__(
        self,
        agent: Agent,
        *,
        base_dir: Path | None = None,
        call_timeout: float = 60.0,
        startup_timeout: float | None = None,
        protocol_mode: ProtocolMode = "auto",
    ) -> None:
        self.agent = agent
        self.call_timeout = call_timeout
        self._connections = {
            name: ServerConnection(
                name, config, base_dir=base_dir, startup_timeout=startup_timeout, mode=protocol_mode
            )
            for name, config in agent.mcp_servers.items()
        }
        self._index: dict[str, ToolSpec] = {}
        # The specs made from each server's last listing (checking their schemas is not free).
        self._listed: dict[str, tuple[list[types.Tool], list[ToolSpec]]] = {}
        self._protocol_log: ProtocolLog | None = None

    @property
    def protocol_log(self) -> ProtocolLog | None:
        """Where every server's JSON-RPC messages are recorded; None, the default, records
        nothing. Takes effect at once, for servers already up too."""
        return self._protocol_log

    @protocol_log.setter
    def protocol_log(self, log: ProtocolLog | None) -> None:
        self._protocol_log = log
        for connection in self._connections.values():
            connection.protocol_log = log

    @property
    def policy(self) -> str:
        """The agent's ``toolPermission``."""
        return self.agent.settings.tool_permission

    @property
    def server_errors(self) -> dict[str, str]:
        """Why each unavailable server is unavailable (with its stderr tail where it has one)."""
        reasons = {n: c.unavailable_reason for n, c in self._connections.items()}
        return {name: reason for name, reason in reasons.items() if reason}

    def connection(self, server: str) -> ServerConnection:
        """The connection object of ``server`` (for diagnostics: start count, connect time)."""
        return self._connections[server]

    async def _server_specs(self, server: str, wait: float | None) -> list[ToolSpec]:
        """The tools of ``server``, starting it if needed; [] while it is unavailable."""
        connection = self._connections[server]
        try:
            await connection.client(_wait_for(connection, wait))
        except ToolServerError as exc:
            # Not offered while down (the index still routes its known names to the error);
            # the connection logged the failure itself, once.
            logger.debug("%s", exc)
            return []
        listing = connection.tools or []
        known = self._listed.get(server)
        if known is not None and known[0] is listing:
            return known[1]
        config = connection.config
        specs = [
            ToolSpec(
                name=provider_tool_name(server, tool.name),
                server=server,
                tool=tool.name,
                description=tool.description or tool.title or "",
                input_schema=dict(tool.input_schema),
                annotations=tool_annotations(tool),
                permission_required=config.permission_required(tool.name),
                schema_problem=input_schema_problem(tool.input_schema),
            )
            for tool in listing
        ]
        for spec in specs:
            self._index[spec.name] = spec
            if spec.schema_problem is not None:
                logger.warning(
                    "MCP server %s: tool %s is hidden: %s", server, spec.tool, spec.schema_problem
                )
        self._listed[server] = (listing, specs)
        return specs

    async def _gather(self, servers: list[str]) -> list[ToolSpec]:
        """The tools of ``servers``, started concurrently, in the agent file's order."""
        found: dict[str, list[ToolSpec]] = {}
        wait = _wait_budget()

        async def one(server: str) -> None:
            found[server] = await self._server_specs(server, wait)

        async with anyio.create_task_group() as group:
            for server in servers:
                group.start_soon(one, server)
        return [spec for server in servers for spec in found[server]]

    def hidden_reason(self, spec: ToolSpec) -> str | None:
        """Why ``spec`` is not offered to the model, or None when it is."""
        config = self._connections[spec.server].config
        if not config.included(spec.tool):
            return "excluded in the agent file"
        if spec.schema_problem is not None:
            return spec.schema_problem
        if self.policy == "always":
            return "toolPermission: always hides every tool"
        if self.policy == "tool" and spec.permission_required:
            return "needs permission (toolPermission: tool)"
        return None

    async def all_tools(self) -> list[ToolSpec]:
        """Every tool of every server (starting them), allowed or not."""
        return await self._gather(list(self._connections))

    async def allowed_tools(self) -> list[ToolSpec]:
        """The tools the model may use under the agent's permission rule.

        Servers none of whose tools could be allowed are not started.
        """
        servers = [n for n, c in self._connections.items() if _may_offer_any(c.config, self.policy)]
        return [spec for spec in await self._gather(servers) if self.hidden_reason(spec) is None]

    def withheld(self) -> list[WithheldTools]:
        """The tools the permission rule keeps from the model, per server, as far as the last
        listing knows them (``toolbox.withheld``): for the run's trace."""
        listed = {
            server: [spec.tool for spec in specs] for server, (_, specs) in self._listed.items()
        }
        skipped = [
            n for n, c in self._connections.items() if not _may_offer_any(c.config, self.policy)
        ]
        return find_withheld(self.agent, listed, skipped)

    async def hidden_tools(self) -> list[HiddenTool]:
        """The tools the model is not offered, each with the reason."""
        hidden: list[HiddenTool] = []
        for spec in await self.all_tools():
            reason = self.hidden_reason(spec)
            if reason is not None:
                hidden.append(HiddenTool(spec, reason))
        return hidden

    async def tool_schemas(self) -> list[ToolSchema]:
        """The allowed tools as provider ``ToolSchema``s."""
        return [spec.schema() for spec in await self.allowed_tools()]

    def _refusal(self, name: str, reason: str) -> str:
        if reason == "excluded in the agent file":
            return f"tool {name} is excluded in the agent file (include: false)"
        if reason.startswith("its inputSchema"):
            return f"tool {name} cannot be used: {reason}; the MCP server must fix its schema"
        if self.policy == "always":
            return (
                f"tool {name} needs permission and this agent runs every tool only with permission "
                "(toolPermission: always); set toolPermission: tool or never in the agent file "
                "to allow tools here"
            )
        return (
            f"tool {name} needs permission and this agent runs without asking "
            "(toolPermission: tool); mark it permissionRequired: false in the agent file "
            "to allow it"
        )

    async def _resolve(self, name: str) -> ToolSpec | _Rejection:
        """The spec of ``name``, else why it cannot be called (refused, or no such tool)."""
        if self.policy == "always":
            return _Rejection(self._refusal(name, "toolPermission: always hides every tool"), True)
        spec = self._index.get(name)
        if spec is None:
            servers = [s for s in self._connections if name.startswith(f"{s}__")]
            servers = servers or list(self._connections)
            if self.policy == "tool" and not any(
                _may_offer_any(self._connections[s].config, "tool") for s in servers
            ):
                # Every tool there needs permission: refuse without starting the server.
                return _Rejection(
                    self._refusal(name, "needs permission (toolPermission: tool)"), True
                )
            await self._gather(servers)
            spec = self._index.get(name)
        if spec is None:
            # From what is known: listing again would restart a server that just failed.
            errors = self.server_errors
            down = [s for s in self._connections if name.startswith(f"{s}__") and s in errors]
            if down:
                return _Rejection(unavailable_text(name, errors[down[0]]), False)
            allowed = [s.name for s in self._index.values() if self.hidden_reason(s) is None]
            text = (
                f"no tool named {name!r}; the tools available are: {', '.join(allowed) or 'none'}"
            )
            for server, error in self.server_errors.items():
                text += f"\n(the MCP server '{server}' is unavailable: {error})"
            return _Rejection(text, False)
        return spec

    async def call(
        self,
        name: str,
        arguments: dict[str, Any],
        *,
        timeout: float | None = None,  # noqa: ASYNC109 - the session passes its remaining time
    ) -> ToolOutcome:
        """Call the tool the model knows as ``name``.

        Args:
            name: The namespaced name (``server__tool``).
            arguments: The tool's arguments.
            timeout: At most this many seconds (never more than ``call_timeout``).

        Returns:
            The outcome; refusals, unknown tools, tool errors, timeouts and crashed servers are
            error outcomes with a text that says what happened.
        """
        started = time.perf_counter()

        def elapsed() -> float:
            return (time.perf_counter() - started) * 1000

        limit = self.call_limit(timeout)
        deadline = anyio.current_time() + limit
        connection: ServerConnection | None = None
        try:
            # One limit for everything the call waits for: finding the tool (its server may be
            # starting), the server, and the tool itself.
            with anyio.fail_after(limit):
                resolved = await self._resolve(name)
                if isinstance(resolved, _Rejection):
                    return ToolOutcome(
                        resolved.text, True, refused=resolved.refused, duration_ms=elapsed()
                    )
                spec = resolved
                reason = self.hidden_reason(spec)
                if reason is not None:
                    return ToolOutcome(
                        self._refusal(name, reason), True, refused=True, duration_ms=elapsed()
                    )
                connection = self._connections[spec.server]
                try:
                    client = await connection.client(_wait_for(connection, _wait_budget()))
                except ToolServerError as exc:
                    return ToolOutcome(str(exc), True, duration_ms=elapsed())
                result = await client.call_tool(spec.tool, arguments)
        except TimeoutError:
            text = timed_out_text(name, limit)
        except MCPError as exc:
            if exc.error.code != CONNECTION_CLOSED or connection is None:
                text = f"tool {name} failed: {exc.error.message}"
            else:
                connection.mark_lost()
                text = await connection.failure_message(
                    f"stopped during the call to {spec.tool} (connection closed); "
                    "it is restarted on the next call",
                    wait=deadline - anyio.current_time(),
                )
        except Exception as exc:  # boundary: a tool failure is a result the model can react to
            logger.warning("tool %s failed", name, exc_info=True)
            text = f"tool {name} failed: {describe_error(exc)}"
        else:
            return outcome_from_result(result, elapsed(), tool=name)
        return ToolOutcome(text, True, duration_ms=elapsed())

    def call_limit(self, timeout: float | None) -> float:
        """The longest a call may take, given the session's remaining ``timeout`` (seconds)."""
        return self.call_timeout if timeout is None else max(0.0, min(timeout, self.call_timeout))

    async def aclose(self) -> None:
        """Stop every server this toolbox started (no process is left behind)."""
        with anyio.CancelScope(shield=True):
            async with anyio.create_task_group() as group:
                for connection in self._connections.values():
                    group.start_soon(connection.aclose)
