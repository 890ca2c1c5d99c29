"""The studio's "Connect": start one MCP server once, list its tools, and stop it.

``probe_server`` never raises for a server that fails: the result carries the error and the
server's stderr tail, so the studio can show what went wrong.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from mcp_export.errors import ToolServerError
from mcp_export.toolbox.connection import ProtocolMode, ServerConnection
from mcp_export.toolbox.listing import input_schema_problem, tool_annotations
from schema_types.agent import McpServerConfig

__all__ = ["ProbeResult", "ProbedTool", "probe_server"]


@dataclass(frozen=True)
class ProbedTool:
    """A tool as listed by ``probe_server``."""

    name: str
    description: str
    annotations: dict[str, Any] | None
    input_schema: dict[str, Any]
    schema_problem: str | None = None  # why a model cannot be offered it (see ToolSpec)


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
        name, config, base_dir=base_dir, startup_timeout=timeout, mode=protocol_mode
    )
    try:
        client = await connection.client()
        info = client.server_info
        version = client.protocol_version
        tools = tuple(
            ProbedTool(
                t.name,
                t.description or "",
                tool_annotations(t),
                dict(t.input_schema),
                input_schema_problem(t.input_schema),
            )
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
