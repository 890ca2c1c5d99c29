"""Launch an exported server exactly as its client would, and check what the client will see.

``verify_export`` builds the client's entry with ``build_entry``, resolves its env placeholders
from the current environment, spawns the command over stdio and connects with the official
``mcp`` Client twice, concurrently: ``mode="legacy"`` (the 2025-11-25 initialize handshake) and
``mode="auto"`` (2026-07-28 discovery). It lists the tools and checks each one's ``inputSchema``
against the JSON Schema meta-schema and against the agent file, compares serverInfo and
instructions with the agent's metadata, and says whether a model is reachable (credentials that
resolve, or a client that offers sampling). The result is a ``VerifyReport`` the CLI prints and
the studio shows.

The spawned server sees what a client would give it: the SDK's small default environment (HOME,
PATH, …) plus the entry's env. Only ``METAAGENT_HOME`` is passed on besides, so a verify run records
its history in the same store as the process that asked for it.
"""

from __future__ import annotations

import os
import tempfile
import time
from collections.abc import Mapping
from pathlib import Path
from typing import IO

import anyio
from mcp import Client, StdioServerParameters
from mcp.client.stdio import stdio_client

from mcp_export.clients.entry import ClientId, ExportEntry, build_entry
from mcp_export.clients.verify_checks import (
    check_connections,
    check_environment,
    check_model,
    check_tools,
)
from mcp_export.clients.verify_report import (
    Check,
    ModeResult,
    VerifiedTool,
    VerifyReport,
    render_report,
)
from schema_types.agent import Agent
from schema_types.errors import SchemaError
from schema_types.files.agent_file import load_agent

__all__ = [
    "MODES",
    "Check",
    "ModeResult",
    "VerifiedTool",
    "VerifyReport",
    "launch_environment",
    "render_report",
    "verify_export",
]

MODES: tuple[str, ...] = ("legacy", "auto")
# Passed on to the server besides the entry's env (see the module docstring).
_PASSTHROUGH = ("METAAGENT_HOME",)


def launch_environment(
    entry: ExportEntry, environ: Mapping[str, str] | None = None
) -> dict[str, str]:
    """The env the verify run gives the server: the entry's variables, valued from ``environ``.

    A variable that is not set here is left out (the server then reports it as missing), exactly
    as an empty placeholder in the client's config would be.
    """
    source: Mapping[str, str] = os.environ if environ is None else environ
    env = {name: source[name] for name in entry.env_names if source.get(name)}
    for name in _PASSTHROUGH:
        if source.get(name):
            env[name] = source[name]
    return env


async def verify_export(
    agent_path: str | os.PathLike[str],
    client: ClientId = "json",
    *,
    timeout: float = 30.0,  # noqa: ASYNC109 - a limit per connection, not for the whole call
    name: str | None = None,
) -> VerifyReport:
    """Launch the server as ``client`` would and check everything that client needs.

    Args:
        agent_path: the agent file.
        client: whose entry to launch (decides env syntax and whether sampling is on offer).
        timeout: seconds each connection may take, spawn to tools listed.
        name: the server name (only shown; the default is the agent's slug).

    Returns:
        The report; ``report.ok`` is True when every check passed. Never raises for a broken
        agent or server: that is a failed check with the reason.
    """

    started = time.perf_counter()
    path = Path(os.fspath(agent_path))
    report = VerifyReport(agent_path=path, client=client, entry=None)
    try:
        # Reading and parsing the file blocks: keep it off the event loop.
        path, agent = await anyio.to_thread.run_sync(_load, path)
        report.agent_path = path
    except (SchemaError, OSError) as exc:
        report.add("agent file loads", False, str(exc))
        return report
    entry = build_entry(path, agent, client, name=name)
    report.entry = entry

    environ = launch_environment(entry)
    results: dict[str, ModeResult] = {}

    async def connect(mode: str) -> None:
        results[mode] = await _connect(entry, environ, mode, timeout)

    # Both connections at once: each is a separate server process, as two clients would start.
    async with anyio.create_task_group() as group:
        for mode in MODES:
            group.start_soon(connect, mode)

    ordered = [results[mode] for mode in MODES]
    check_connections(report, ordered)
    check_tools(report, agent, ordered)
    check_environment(report, agent, entry, environ)
    check_model(report, agent, client, environ)
    report.timings["total"] = time.perf_counter() - started
    return report


def _load(path: Path) -> tuple[Path, Agent]:
    absolute = Path(os.path.abspath(path))
    return absolute, load_agent(absolute)


async def _connect(
    entry: ExportEntry, environ: dict[str, str], mode: str, limit_s: float
) -> ModeResult:
    result = ModeResult(mode)
    params = StdioServerParameters(
        command=str(entry.entry["command"]),
        args=[str(arg) for arg in entry.entry["args"]],
        env=environ,
    )
    with tempfile.TemporaryFile("w+", encoding="utf-8", errors="replace") as errlog:
        started = time.perf_counter()
        try:
            with anyio.fail_after(limit_s):
                transport = stdio_client(params, errlog=errlog)
                async with Client(transport, mode=mode, read_timeout_seconds=limit_s) as session:
                    result.connect_s = time.perf_counter() - started
                    result.protocol = session.protocol_version
                    info = session.server_info
                    if info is not None:
                        result.server_name, result.server_version = info.name, info.version
                    result.instructions = session.instructions
                    listed = time.perf_counter()
                    result.tools = await _list_tools(session)
                    result.list_s = time.perf_counter() - listed
        except TimeoutError:
            result.error = f"no answer within {limit_s:g} s" + _stderr_tail(errlog)
        except Exception as exc:  # any failure to launch or talk is the finding itself
            result.error = _describe(exc) + _stderr_tail(errlog)
    return result


async def _list_tools(session: Client) -> list[VerifiedTool]:
    tools: list[VerifiedTool] = []
    cursor: str | None = None
    for _ in range(100):  # a server that pages forever cannot hang the check
        page = await session.list_tools(cursor=cursor)
        tools.extend(
            VerifiedTool(
                name=tool.name,
                title=tool.title,
                description=tool.description or "",
                input_schema=dict(tool.input_schema),
                output_schema=None if tool.output_schema is None else dict(tool.output_schema),
            )
            for tool in page.tools
        )
        cursor = page.next_cursor
        if not cursor:
            break
    return tools


def _describe(exc: BaseException) -> str:
    # Task groups wrap the real failure; show the innermost ones.
    if isinstance(exc, BaseExceptionGroup):
        return "; ".join(_describe(inner) for inner in exc.exceptions)
    text = str(exc) or type(exc).__name__
    return f"{type(exc).__name__}: {text}" if not isinstance(exc, OSError) else text


def _stderr_tail(errlog: IO[str], lines: int = 6) -> str:
    try:
        errlog.flush()
        errlog.seek(0)
        text = errlog.read()
    except (OSError, ValueError):
        return ""
    tail = [line for line in text.strip().splitlines() if line.strip()][-lines:]
    return ("\nserver stderr:\n  " + "\n  ".join(tail)) if tail else ""
