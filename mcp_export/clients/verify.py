"""Launch an exported server exactly as its client would, and check what the client will see.

``verify_export`` builds the client's entry with ``build_entry`` and turns it into the process the
client starts (``client_launch``): the entry as installed in the client's config file (else as the
export writes it), its variables expanded as that client expands them, and an environment of the
MCP SDK's small default set plus the entry's env, nothing else of this process (see
``clients.launch`` for what each client passes). It spawns that over stdio and connects with the
official ``mcp`` Client twice, concurrently: ``mode="legacy"`` (the 2025-11-25 initialize
handshake) and ``mode="auto"`` (2026-07-28 discovery). It lists the tools and checks each one's
``inputSchema`` against the JSON Schema meta-schema and against the agent file, compares
serverInfo and instructions with the agent's metadata, lists the prompts when the server offers
them and compares them with ``toolsAsPrompts`` (one per tool, its parameters as arguments, or
none), checks that every variable the agent reads reaches the server (naming the value to fill
in, and where, when one does not), and says whether a model is reachable (credentials that
resolve in the server's environment, or a client that offers sampling). With ``call=True`` it
also makes one real ``tools/call`` (``verify_call``). The result is a ``VerifyReport`` the CLI
prints and the studio shows.
"""

from __future__ import annotations

import os
import tempfile
import time
from pathlib import Path

import anyio
from mcp import Client
from mcp.client.stdio import stdio_client

from mcp_export.clients.entry import ClientId, build_entry
from mcp_export.clients.install import InstallError
from mcp_export.clients.launch import ClientLaunch, client_launch
from mcp_export.clients.verify_access import check_access
from mcp_export.clients.verify_call import (
    CallOutcome,
    describe_failure,
    plan_call,
    stderr_tail,
    try_call,
)
from mcp_export.clients.verify_checks import (
    check_call,
    check_command,
    check_connections,
    check_environment,
    check_model,
    check_tools,
)
from mcp_export.clients.verify_prompts import check_prompts
from mcp_export.clients.verify_report import (
    ModeResult,
    VerifiedPrompt,
    VerifiedTool,
    VerifyReport,
)
from schema_types.agent import Agent
from schema_types.errors import SchemaError
from schema_types.files.agent_file import load_agent

__all__ = ["MODES", "call_after_verify", "verify_export"]

MODES: tuple[str, ...] = ("legacy", "auto")


async def verify_export(
    agent_path: str | os.PathLike[str],
    client: ClientId = "json",
    *,
    timeout: float = 30.0,  # noqa: ASYNC109 - a limit per connection, not for the whole call
    name: str | None = None,
    config_path: str | os.PathLike[str] | None = None,
    call: bool = False,
    tool: str | None = None,
    call_timeout: float = 120.0,
) -> VerifyReport:
    """Launch the server as ``client`` would and check everything that client needs.

    Args:
        agent_path: the agent file.
        client: whose entry to launch (decides where it is read from, how its variables expand
            and whether sampling is on offer).
        timeout: seconds each connection may take, spawn to tools listed.
        name: the server's name in the client's config (default: the agent's slug).
        config_path: the client's config file to read the entry from (default: its standard
            place); an entry not installed there is launched as the export writes it.
        call: also make one real call (see ``verify_call``).
        tool: the tool to call (default: the first of the agent's tools the server lists).
        call_timeout: seconds the call may take, spawn to result.

    Returns:
        The report; ``report.ok`` is True when every check passed. Never raises for a broken
        agent, config or server: that is a failed check with the reason.
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
    try:
        launch = await anyio.to_thread.run_sync(
            lambda: client_launch(entry, config_path=config_path)
        )
    except InstallError as exc:
        report.add("config file", False, str(exc))
        return report
    report.launch = launch

    if check_command(report, launch):
        results: dict[str, ModeResult] = {}

        async def connect(mode: str) -> None:
            results[mode] = await _connect(launch, mode, timeout)

        # Both connections at once: each is a separate server process, as two clients would start.
        async with anyio.create_task_group() as group:
            for mode in MODES:
                group.start_soon(connect, mode)

        ordered = [results[mode] for mode in MODES]
        check_connections(report, ordered)
        check_tools(report, agent, ordered)
        check_prompts(report, agent, ordered)
    check_access(report, agent)
    check_environment(report, agent, entry, launch)
    check_model(report, agent, client, launch.process_env())
    if call and report.tools:
        await call_after_verify(report, agent, tool, timeout=call_timeout)
    elif call:
        report.add(f"call {tool or 'a tool'}", False, "not tried: the server listed no tools")
    report.timings["total"] = time.perf_counter() - started
    return report


async def call_after_verify(
    report: VerifyReport,
    agent: Agent,
    tool: str | None,
    *,
    timeout: float,  # noqa: ASYNC109 - spawn, connect and call, together
) -> CallOutcome | None:
    """Make one real call with the launch a verify run found, and add its check to the report.

    Args:
        report: a report from ``verify_export`` (its launch and listed tools are used).
        agent: the agent file's agent (for the tool's test cases and schema).
        tool: the tool to call (default: the first of the agent's tools the server lists).
        timeout: seconds for the call, spawn to result.

    Returns:
        The outcome, also in ``report.call``; None when the report has no launch, or the server
        does not list that tool (a failed check says so).
    """
    launch = report.launch
    if launch is None:
        return None
    plan = plan_call(agent, tool, [listed.name for listed in report.tools])
    if plan is None:
        report.add(f"call {tool or 'a tool'}", False, "not tried: the server does not list it")
        return None
    outcome = await try_call(launch, plan, timeout=timeout, agent=agent)
    check_call(report, outcome)
    return outcome


def _load(path: Path) -> tuple[Path, Agent]:
    absolute = Path(os.path.abspath(path))
    return absolute, load_agent(absolute)


async def _connect(launch: ClientLaunch, mode: str, limit_s: float) -> ModeResult:
    result = ModeResult(mode)
    with tempfile.TemporaryFile("w+", encoding="utf-8", errors="replace") as errlog:
        started = time.perf_counter()
        try:
            with anyio.fail_after(limit_s):
                transport = stdio_client(launch.parameters(), errlog=errlog)
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
                    if session.server_capabilities.prompts is not None:
                        result.prompts = await _list_prompts(session)
        except TimeoutError:
            result.error = f"no answer within {limit_s:g} s" + stderr_tail(errlog)
        except Exception as exc:  # any failure to launch or talk is the finding itself
            result.error = describe_failure(exc) + stderr_tail(errlog)
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


async def _list_prompts(session: Client) -> list[VerifiedPrompt]:
    prompts: list[VerifiedPrompt] = []
    cursor: str | None = None
    for _ in range(100):  # as for tools: a server that pages forever cannot hang the check
        page = await session.list_prompts(cursor=cursor)
        prompts.extend(
            VerifiedPrompt(
                name=prompt.name,
                description=prompt.description or "",
                arguments=tuple(argument.name for argument in prompt.arguments or ()),
                required=tuple(a.name for a in prompt.arguments or () if a.required),
            )
            for prompt in page.prompts
        )
        cursor = page.next_cursor
        if not cursor:
            break
    return prompts
