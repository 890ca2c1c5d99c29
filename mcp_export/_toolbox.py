"""The agent's own tools: its MCP servers, offered to the model, called under the permission rule.

``AgentToolbox`` is shared by every session of one agent (the studio's chat tabs, concurrent served
calls). Each server is started once, lazily, on first use, and restarted on the next use after it
died (see ``_tool_connection``). Tools are offered to the model namespaced ``server__tool`` and
routed back by that name.

The permission rule (DESIGN.md, "Permission"), for runs where nobody can be asked:

- ``toolPermission: always`` → the model gets no tools;
- ``never`` → every included tool;
- ``tool`` → only tools whose ``permissionRequired`` is false (the tool's own setting, else the
  server default, else required).

A call outside the allowed set is refused at call time too, as an error result the model sees.
Every failure of a tool (an ``isError`` result, a protocol error, a timeout, a crashed server)
comes back as an error ``ToolOutcome`` with the reason; ``call`` never raises, except when it is
cancelled.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import json
import logging
import re
import time
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType
from typing import Any

import anyio
import mcp_types as types
from mcp.shared.exceptions import MCPError
from mcp_types import CONNECTION_CLOSED

from mcp_export._errors import ToolServerError
from mcp_export._tool_connection import ProtocolMode, ServerConnection, describe_error
from mcp_export.providers._base import ToolSchema
from schema_types._agent import Agent, McpServerConfig

__all__ = [
    "AgentToolbox",
    "HiddenTool",
    "ProbeResult",
    "ProbedTool",
    "ToolOutcome",
    "ToolSpec",
    "probe_server",
    "provider_tool_name",
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

    def schema(self) -> ToolSchema:
        """This tool as a provider ``ToolSchema``."""
        return ToolSchema(self.name, self.description, self.input_schema)


@dataclass(frozen=True)
class HiddenTool:
    """A tool the model is not offered, and why (shown in the studio)."""

    spec: ToolSpec
    reason: str


@dataclass(frozen=True)
class ToolOutcome:
    """The result of one tool call, in the form the model gets it back.

    ``refused`` means the permission rule stopped the call: the tool did not run.
    """

    text: str
    is_error: bool
    structured: dict[str, Any] | None = None
    refused: bool = False
    duration_ms: float = 0.0


@dataclass(frozen=True)
class _Rejection:
    """Why a call cannot go ahead: refused by the permission rule, or no such tool."""

    text: str
    refused: bool


def _annotations(tool: types.Tool) -> dict[str, Any] | None:
    if tool.annotations is None:
        return None
    return tool.annotations.model_dump(by_alias=True, exclude_none=True, mode="json")


def _blob_size(data: str) -> int:
    try:
        return len(base64.b64decode(data, validate=False))
    except (binascii.Error, ValueError):
        return len(data)


def _content_text(block: types.ContentBlock) -> str:
    """A content block as text for the model: text as is, anything else summarized."""
    if isinstance(block, types.TextContent):
        return block.text
    if isinstance(block, types.ImageContent | types.AudioContent):
        return f"[{block.mime_type}, {_blob_size(block.data)} bytes]"
    if isinstance(block, types.ResourceLink):
        return f"[resource link: {block.uri}]"
    if isinstance(block, types.EmbeddedResource):
        resource = block.resource
        if isinstance(resource, types.TextResourceContents):
            return f"[resource {resource.uri}]\n{resource.text}"
        mime = resource.mime_type or "binary"
        return f"[resource {resource.uri}, {mime}, {_blob_size(resource.blob)} bytes]"
    return f"[{getattr(block, 'type', 'unknown')} content]"


def outcome_from_result(result: types.CallToolResult, duration_ms: float) -> ToolOutcome:
    """Turn an MCP tool result into a ``ToolOutcome`` (text blocks joined, others summarized)."""
    text = "\n".join(_content_text(block) for block in result.content)
    value = result.structured_content
    structured = value if isinstance(value, dict) or value is None else {"result": value}
    if not text and structured is not None:
        text = json.dumps(structured, ensure_ascii=False)
    if result.is_error and not text:
        text = "the tool reported an error without saying why"
    return ToolOutcome(text, result.is_error, structured, duration_ms=duration_ms)


def _may_offer_any(config: McpServerConfig, policy: str) -> bool:
    """Whether any tool of this server could be allowed, judged from the file alone.

    Lets ``allowed_tools`` skip starting servers whose every tool would be hidden.
    """
    if policy == "always":
        return False
    if policy == "never" or config.server_tool_defaults.permission_required is False:
        return True
    return any(s.include and s.permission_required is False for s in config.tools.values())


class AgentToolbox:
    """The MCP servers of one agent, shared by its sessions.

    Args:
        agent: The agent whose ``mcpServers`` and ``toolPermission`` apply.
        base_dir: The agent file's directory (relative ``cwd`` and command paths start there).
        call_timeout: The longest one tool call may take, in seconds.
        connect_timeout: The longest a server may take to start and answer the handshake.
        protocol_mode: ``auto`` (probe the protocol era, fall back to the 2025-11-25 handshake)
            or ``legacy`` (handshake only). Both connect equally fast to an SDK server.
    """

    def __init__(
        self,
        agent: Agent,
        *,
        base_dir: Path | None = None,
        call_timeout: float = 60.0,
        connect_timeout: float = 30.0,
        protocol_mode: ProtocolMode = "auto",
    ) -> None:
        self.agent = agent
        self.call_timeout = call_timeout
        self._connections = {
            name: ServerConnection(
                name, config, base_dir=base_dir, connect_timeout=connect_timeout, mode=protocol_mode
            )
            for name, config in agent.mcp_servers.items()
        }
        self._index: dict[str, ToolSpec] = {}

    @property
    def policy(self) -> str:
        """The agent's ``toolPermission``."""
        return self.agent.settings.tool_permission

    @property
    def server_errors(self) -> dict[str, str]:
        """The last connection error of each server that has one (with its stderr tail)."""
        return {n: c.last_error for n, c in self._connections.items() if c.last_error}

    def connection(self, server: str) -> ServerConnection:
        """The connection object of ``server`` (for diagnostics: start count, connect time)."""
        return self._connections[server]

    async def _server_specs(self, server: str) -> list[ToolSpec]:
        """The tools of ``server``, starting it if needed; [] when it cannot start."""
        connection = self._connections[server]
        try:
            await connection.client()
        except ToolServerError as exc:
            # Not offered while down (the index still routes its known names to the error).
            logger.warning("%s", exc)
            return []
        listing = connection.tools or []
        config = connection.config
        specs = [
            ToolSpec(
                name=provider_tool_name(server, tool.name),
                server=server,
                tool=tool.name,
                description=tool.description or tool.title or "",
                input_schema=dict(tool.input_schema),
                annotations=_annotations(tool),
                permission_required=config.permission_required(tool.name),
            )
            for tool in listing
        ]
        for spec in specs:
            self._index[spec.name] = spec
        return specs

    async def _gather(self, servers: list[str]) -> list[ToolSpec]:
        """The tools of ``servers``, started concurrently, in the agent file's order."""
        found: dict[str, list[ToolSpec]] = {}

        async def one(server: str) -> None:
            found[server] = await self._server_specs(server)

        async with anyio.create_task_group() as group:
            for server in servers:
                group.start_soon(one, server)
        return [spec for server in servers for spec in found[server]]

    def hidden_reason(self, spec: ToolSpec) -> str | None:
        """Why ``spec`` is not offered to the model, or None when it is."""
        config = self._connections[spec.server].config
        if not config.included(spec.tool):
            return "excluded in the agent file"
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

        resolved = await self._resolve(name)
        if isinstance(resolved, _Rejection):
            return ToolOutcome(resolved.text, True, refused=resolved.refused, duration_ms=elapsed())
        spec = resolved
        reason = self.hidden_reason(spec)
        if reason is not None:
            return ToolOutcome(
                self._refusal(name, reason), True, refused=True, duration_ms=elapsed()
            )
        connection = self._connections[spec.server]
        try:
            client = await connection.client()
        except ToolServerError as exc:
            return ToolOutcome(str(exc), True, duration_ms=elapsed())
        limit = self.call_timeout if timeout is None else max(0.0, min(timeout, self.call_timeout))
        try:
            with anyio.fail_after(limit):
                result = await client.call_tool(spec.tool, arguments)
        except TimeoutError:
            text = f"tool {name} timed out after {limit:.1f} s"
        except MCPError as exc:
            if exc.error.code != CONNECTION_CLOSED:
                text = f"tool {name} failed: {exc.error.message}"
            else:
                connection.mark_lost()
                text = await connection.failure_message(
                    f"stopped during the call to {spec.tool} (connection closed); "
                    "it is restarted on the next call"
                )
        except Exception as exc:  # boundary: a tool failure is a result the model can react to
            logger.warning("tool %s failed", name, exc_info=True)
            text = f"tool {name} failed: {describe_error(exc)}"
        else:
            return outcome_from_result(result, elapsed())
        return ToolOutcome(text, True, duration_ms=elapsed())

    async def aclose(self) -> None:
        """Stop every server this toolbox started (no process is left behind)."""
        with anyio.CancelScope(shield=True):
            async with anyio.create_task_group() as group:
                for connection in self._connections.values():
                    group.start_soon(connection.aclose)

    async def __aenter__(self) -> AgentToolbox:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc_val: BaseException | None,
        exc_tb: TracebackType | None,
    ) -> None:
        await self.aclose()


@dataclass(frozen=True)
class ProbedTool:
    """A tool as listed by ``probe_server``."""

    name: str
    description: str
    annotations: dict[str, Any] | None
    input_schema: dict[str, Any]


@dataclass(frozen=True)
class ProbeResult:
    """What ``probe_server`` found: the tools, or the error with the server's stderr tail."""

    ok: bool
    tools: tuple[ProbedTool, ...] = ()
    error: str | None = None
    stderr_tail: str = ""
    server_name: str | None = None
    server_version: str | None = None
    protocol_version: str | None = None
    duration_ms: float = 0.0


async def probe_server(
    config: McpServerConfig,
    *,
    base_dir: Path | None = None,
    timeout: float = 30.0,  # noqa: ASYNC109 - bounds start + handshake, applied inside
    name: str = "server",
    protocol_mode: ProtocolMode = "auto",
) -> ProbeResult:
    """Start a server once, list its tools, and shut it down (the studio's "Connect").

    Never raises for a server that fails: the result carries the error and the stderr tail.
    """
    started = time.perf_counter()
    connection = ServerConnection(
        name, config, base_dir=base_dir, connect_timeout=timeout, mode=protocol_mode
    )
    try:
        client = await connection.client()
        info = client.server_info
        version = client.protocol_version
        tools = tuple(
            ProbedTool(t.name, t.description or "", _annotations(t), dict(t.input_schema))
            for t in connection.tools or []
        )
    except ToolServerError as exc:
        return ProbeResult(
            ok=False,
            error=str(exc),
            stderr_tail=connection.stderr_text(),
            duration_ms=(time.perf_counter() - started) * 1000,
        )
    finally:
        await connection.aclose()
    return ProbeResult(
        ok=True,
        tools=tools,
        stderr_tail=connection.stderr_text(),
        server_name=info.name if info is not None else None,
        server_version=info.version if info is not None else None,
        protocol_version=version,
        duration_ms=(time.perf_counter() - started) * 1000,
    )
