"""A real ``tools/call`` through the server as its client launches it, for ``verify``.

The arguments are the tool's first test case that expects an answer (``tests:`` in the agent
file), else sample values from its schema (``sample_arguments``: examples, defaults, enums, then
placeholders). The call runs in a fresh server process started from the ``ClientLaunch`` with the
official ``mcp`` Client, within a time limit, and its outcome is what the client would show: the
answer, or an ``isError`` result's text, or why the server could not be reached. Every text is
redacted.

A client that offers MCP sampling answers with its own model when the agent has no credentials
of its own; verify has no model to lend, so that call is not made (the outcome says why).
"""

from __future__ import annotations

import json
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import IO, Any

import anyio
from mcp import Client
from mcp.client.stdio import stdio_client
from mcp.types import CallToolResult, TextContent

from mcp_export.clients.entry import CLIENTS
from mcp_export.clients.launch import ClientLaunch
from mcp_export.providers.factory import credentials_available
from mcp_export.redact import redact
from schema_types.agent import Agent
from schema_types.arguments import sample_arguments

__all__ = [
    "CallOutcome",
    "CallPlan",
    "client_model_needed",
    "describe_failure",
    "plan_call",
    "result_text",
    "stderr_tail",
    "try_call",
]


@dataclass(frozen=True)
class CallPlan:
    """Which tool to call and with what.

    Attributes:
        tool: the tool's name.
        arguments: the arguments to send.
        source: where they come from, for people (``test case 'Lisbon'``, ``sample values``).
    """

    tool: str
    arguments: dict[str, Any] = field(default_factory=lambda: dict[str, Any]())
    source: str = ""


@dataclass(frozen=True)
class CallOutcome:
    """What the client would see for one call.

    Attributes:
        plan: the call that was made (or not).
        ok: a plain answer came back.
        text: the answer, the ``isError`` result's text, or the reason there was no result.
        seconds: from spawning the server to the result.
        is_error: the server answered with an ``isError`` result.
        tried: False when the call was not made (see the module docstring).
    """

    plan: CallPlan
    ok: bool
    text: str
    seconds: float = 0.0
    is_error: bool = False
    tried: bool = True


def plan_call(agent: Agent, tool: str | None, listed: Sequence[str]) -> CallPlan | None:
    """The call to try: ``tool`` (default: the first of the agent's tools the server lists).

    Returns:
        The plan, or None when there is no such tool (or the server lists none).
    """
    authored = {definition.name: definition for definition in agent.tools}
    if tool is None:
        tool = next((name for name in authored if name in listed), None)
        tool = tool if tool is not None else next(iter(listed), None)
        if tool is None:
            return None
    elif tool not in listed:
        return None
    definition = authored.get(tool)
    if definition is None:
        return CallPlan(tool, {}, "no arguments (the tool is not in the agent file)")
    case = next((case for case in definition.tests if case.expect.is_error is not True), None)
    if case is not None:
        return CallPlan(tool, dict(case.arguments), f"test case '{case.name}'")
    return CallPlan(tool, sample_arguments(definition.parameters), "sample values")


def client_model_needed(agent: Agent, launch: ClientLaunch) -> bool:
    """Whether a call would be answered by the client's own model (MCP sampling).

    True when the client offers sampling and the agent's model is ``sampling`` or its
    credentials do not resolve in the environment the server gets.
    """
    if not CLIENTS[launch.client].sampling:
        return False
    if agent.settings.model == "sampling":
        return True
    return not credentials_available(agent, env=launch.process_env())


async def try_call(
    launch: ClientLaunch,
    plan: CallPlan,
    *,
    timeout: float,  # noqa: ASYNC109 - spawn, connect and call, together
    agent: Agent | None = None,
) -> CallOutcome:
    """Start the server as the client does, call ``plan.tool`` once, and say what came back.

    Args:
        launch: the process the client starts.
        plan: the tool and its arguments.
        timeout: seconds for the whole call, from spawning the server to the result.
        agent: the agent file's agent; with it, a call that only the client's own model could
            answer is not made (see :func:`client_model_needed`).

    Returns:
        The outcome; never raises for a failed launch or call (that is the outcome).
    """
    if agent is not None and client_model_needed(agent, launch):
        return CallOutcome(
            plan,
            ok=True,
            tried=False,
            text=(
                f"not tried: {launch.label} answers it with its own model (MCP sampling), which "
                "verify has none of; try it from the client"
            ),
        )
    started = time.perf_counter()
    with tempfile.TemporaryFile("w+", encoding="utf-8", errors="replace") as errlog:
        try:
            with anyio.fail_after(timeout):
                transport = stdio_client(launch.parameters(), errlog=errlog)
                async with Client(transport, read_timeout_seconds=timeout) as session:
                    result = await session.call_tool(plan.tool, plan.arguments)
        except TimeoutError:
            text = f"no answer within {timeout:g} s" + stderr_tail(errlog)
            return CallOutcome(plan, ok=False, text=redact(text), seconds=_since(started))
        except Exception as exc:  # a launch or protocol failure is the finding itself
            text = describe_failure(exc) + stderr_tail(errlog)
            return CallOutcome(plan, ok=False, text=redact(text), seconds=_since(started))
    return CallOutcome(
        plan,
        ok=not result.is_error,
        text=redact(result_text(result)),
        seconds=_since(started),
        is_error=bool(result.is_error),
    )


def result_text(result: CallToolResult) -> str:
    """A result's content as a client shows it: its texts, other blocks named by their type."""
    parts = [
        block.text if isinstance(block, TextContent) else f"[{block.type}]"
        for block in result.content
    ]
    if not parts and result.structured_content is not None:
        return json.dumps(result.structured_content, ensure_ascii=False)
    return "\n".join(parts) or "(an empty result)"


def describe_failure(exc: BaseException) -> str:
    """An exception from launching or talking to a server, in one line per cause."""
    # Task groups wrap the real failure; show the innermost ones.
    if isinstance(exc, BaseExceptionGroup):
        return "; ".join(describe_failure(inner) for inner in exc.exceptions)
    text = str(exc) or type(exc).__name__
    return f"{type(exc).__name__}: {text}" if not isinstance(exc, OSError) else text


def stderr_tail(errlog: IO[str], lines: int = 6) -> str:
    """The last lines the server wrote to stderr, indented under a heading (or nothing)."""
    try:
        errlog.flush()
        errlog.seek(0)
        text = errlog.read()
    except (OSError, ValueError):
        return ""
    tail = [line for line in text.strip().splitlines() if line.strip()][-lines:]
    return ("\nserver stderr:\n  " + "\n  ".join(tail)) if tail else ""


def _since(started: float) -> float:
    return time.perf_counter() - started
