"""``metaagent call AGENT_FILE TOOL --arg key=value …``: run one tool of an agent in the terminal.

Fills the tool's prompt template exactly as the served MCP server would and runs one headless chat
session: the answer streams to stdout, the inner tool calls and any error go to stderr. Exit code
0 on an answer, 1 when the session fails (the message and what to do are on stderr), 2 for a bad
command line, agent file or arguments, 3 for an answer cut off at the token limit (it is printed,
and a note on stderr says it is incomplete: a script that checks for 0 does not take half an
answer for a whole one, and one that accepts it can tell it from a failure).
"""

from __future__ import annotations

import argparse
import asyncio
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from mcp_export.cli._render import add_argument_options, parse_cli_arguments, validated_prompt
from mcp_export.cli._report import error, load_agent_or_report
from mcp_export.cli._terminal import (
    EventPrinter,
    Runtime,
    add_session_options,
    parse_parameter_overrides,
    with_runtime,
)
from mcp_export.errors import ExportError
from mcp_export.providers.base import TextDelta
from mcp_export.server.cost import CallPricing, agent_pricing
from mcp_export.session.chat import ChatSession
from mcp_export.session.events import FinalAnswer, OutputChecked, SessionFailed
from mcp_export.session.typed import OutputSpec
from mcp_export.versions.fingerprint import tool_version

if TYPE_CHECKING:
    from mcp_export.history.store import HistoryStore
    from mcp_export.session.events import SessionEvent
    from schema_types.agent import Agent

__all__ = ["TRUNCATED_EXIT", "call_tool", "register", "run"]

TRUNCATED_EXIT = 3
"""The exit code of a call whose answer was cut off at the token limit."""


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the ``call`` subcommand."""
    parser = subparsers.add_parser(
        "call",
        help="run one tool of an agent in the terminal",
        description=(
            "Validate the arguments, fill the tool's prompt template and run one headless chat "
            "session, as the served MCP server would. The answer streams to stdout; inner tool "
            "calls and errors go to stderr."
        ),
    )
    parser.add_argument("agent_file", metavar="AGENT_FILE", help="the agent file")
    parser.add_argument("tool", metavar="TOOL", help="the name of the tool to run")
    add_argument_options(parser)
    add_session_options(parser)
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Run ``call`` with parsed arguments; returns the exit code."""
    path = Path(args.agent_file)
    agent = load_agent_or_report("call", path)
    if agent is None:
        return 2
    tool = agent.metadata.tool(args.tool)
    if tool is None:
        names = ", ".join(t.name for t in agent.tools) or "none"
        error("call", f"{path} has no tool named {args.tool!r} (its tools: {names})")
        return 2
    try:
        raw = parse_cli_arguments(list(args.arg), args.json)
        overrides = parse_parameter_overrides(args.set, agent)
    except ValueError as exc:
        error("call", str(exc))
        return 2
    filled = validated_prompt(
        "call", tool, raw, invalid=f"the arguments do not fit {tool.name}'s parameters:"
    )
    if isinstance(filled, int):
        return filled
    arguments, prompt = filled
    resolved = path.resolve()
    try:
        return _run_async(
            with_runtime(
                agent,
                resolved,
                args,
                lambda runtime, printer: call_tool(
                    runtime, agent, resolved, tool.name, arguments, prompt, overrides, printer
                ),
            )
        )
    except KeyboardInterrupt:
        return 130


def _run_async(main: Any) -> int:
    result: int = asyncio.run(main)
    return result


async def call_tool(
    runtime: Runtime,
    agent: Agent,
    path: Path,
    tool_name: str,
    arguments: dict[str, Any],
    prompt: str,
    overrides: dict[str, Any],
    printer: EventPrinter | None = None,
) -> int:
    """Run one call of ``tool_name`` on ``runtime``, printing its events; the exit code (0 on an
    answer, 1 when the session fails, 3 for an answer cut off at the token limit). The runtime
    stays open."""
    printer = printer or EventPrinter()
    history = runtime.history
    thread_id: str | None = None
    run_id: int | None = None
    definition = agent.metadata.tool(tool_name)
    # A call with --set runs a variant of the tool's version, not the version itself.
    version = tool_version(agent, definition) if definition and not overrides else None
    if history is not None:
        try:
            thread_id, run_id = history.start_call(
                thread_id=None,
                agent_path=str(path),
                agent_name=agent.metadata.name,
                title=f"{tool_name} (metaagent call)",
                kind="call",
                tool_name=tool_name,
                arguments=arguments,
                filled_prompt=prompt,
                caller="metaagent call",
                fingerprint=version.fingerprint if version is not None else None,
                version=version.decisive if version is not None else None,
            )
        except ExportError as exc:
            error("history", f"{exc}; going on without recording")
            history = None
    output = OutputSpec.of(definition) if definition is not None else None
    session = ChatSession(
        agent,
        provider=runtime.provider,
        model=runtime.model,
        toolbox=runtime.toolbox,
        history=history,
        thread_id=thread_id,
        thread_kind="call",
        parameters=overrides,
        agent_path=str(path),
        output=output,
    )
    started = time.perf_counter()
    outcome: SessionEvent | None = None
    async for event in session.run(prompt):
        if output is not None and isinstance(event, TextDelta | OutputChecked | FinalAnswer):
            _typed_event(printer, event)  # stdout is the checked object only
        else:
            printer.handle(event)
        if isinstance(event, FinalAnswer | SessionFailed):
            outcome = event
    if history is not None and run_id is not None:
        try:
            elapsed = (time.perf_counter() - started) * 1000
            _finish_run(history, run_id, outcome, elapsed, agent_pricing(agent))
        except ExportError as exc:
            error("history", f"{exc}; the run stays recorded as pending")
    if isinstance(outcome, FinalAnswer):
        return TRUNCATED_EXIT if outcome.truncated else 0
    return 1


def _typed_event(printer: EventPrinter, event: TextDelta | OutputChecked | FinalAnswer) -> None:
    """A typed tool's answer: the checked object as JSON on stdout; an answer that does not fit
    its outputSchema is said on stderr, with the schema messages, before the repair turn."""
    if isinstance(event, FinalAnswer):
        printer.handle(TextDelta(event.text))
        printer.handle(event)
    elif isinstance(event, OutputChecked) and not event.ok:
        lines = "".join(
            f"\n  {p.path or '(the whole answer)'}: {p.message}" for p in event.problems
        )
        error("call", f"the {event.stage} does not fit the outputSchema:{lines}")


def _finish_run(
    history: HistoryStore,
    run_id: int,
    outcome: SessionEvent | None,
    duration_ms: float,
    pricing: CallPricing,
) -> None:
    if isinstance(outcome, FinalAnswer):
        cost = pricing.cost(outcome.usage)
        history.finish_run(
            run_id,
            answer=outcome.text,
            duration_ms=outcome.duration_ms,
            tokens_in=outcome.usage.exact_input,
            tokens_out=outcome.usage.exact_output,
            tool_calls=len(outcome.tool_calls),
            cost_usd=cost.usd,
            cost_at_least=cost.at_least,
        )
    elif isinstance(outcome, SessionFailed):
        cost = pricing.cost(outcome.usage)
        history.finish_run(
            run_id,
            error=outcome.message,
            duration_ms=duration_ms,
            tool_calls=len(outcome.tool_calls),
            cost_usd=cost.usd,
            cost_at_least=cost.at_least,
        )
    else:
        history.finish_run(run_id, error="no answer", duration_ms=duration_ms)
