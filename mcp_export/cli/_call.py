"""``metaagent call AGENT_FILE TOOL --arg key=value …``: run one tool of an agent in the terminal.

Fills the tool's prompt template exactly as the served MCP server would and runs one headless chat
session: the answer streams to stdout, the inner tool calls and any error go to stderr. Exit code
0 on an answer, 1 when the session fails (the message and what to do are on stderr), 2 for a bad
command line, agent file or arguments.

The pieces both ``call`` and ``chat`` need (loading the agent, ``--set`` parsing, opening the
runtime, printing session events) live here; ``_chat`` imports them.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

if TYPE_CHECKING:
    from schema_types._agent import Agent

    from .._events import SessionEvent
    from .._history import HistoryStore
    from .._toolbox import AgentToolbox
    from ..providers._base import Provider

__all__ = [
    "EventPrinter",
    "Runtime",
    "check_parameters",
    "load_agent_or_report",
    "open_runtime",
    "parse_parameter_overrides",
    "register",
    "run",
]

# Model parameters a person may set (``--set``, ``/set``), by the names they may use for them.
_PARAMETER_NAMES = {
    "temperature": "temperature",
    "top_p": "top_p",
    "max_tokens": "max_tokens",
    "max_output_tokens": "max_tokens",
    "stop": "stop",
    "seed": "seed",
    "presence_penalty": "presence_penalty",
    "frequency_penalty": "frequency_penalty",
    "response_format": "response_format",
    "tool_choice": "tool_choice",
}


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


def add_argument_options(parser: argparse.ArgumentParser) -> None:
    """``--arg key=value`` and ``--json ARGS``."""
    parser.add_argument(
        "--arg",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="a tool argument (repeatable); VALUE is JSON when it parses as JSON, else a string; "
        "KEY may be a dotted path (passenger.name)",
    )
    parser.add_argument(
        "--json", metavar="ARGS", help="all arguments as one JSON object (--arg entries win)"
    )


def add_session_options(parser: argparse.ArgumentParser) -> None:
    """``--set param=value`` and ``--no-history``."""
    parser.add_argument(
        "--set",
        action="append",
        default=[],
        metavar="PARAM=VALUE",
        help="a model parameter for this run (temperature, top_p, max_tokens, stop, seed, "
        "presence_penalty, frequency_penalty, response_format, tool_choice); VALUE is JSON "
        "when it parses, else a string; null clears the agent's setting",
    )
    parser.add_argument(
        "--no-history", action="store_true", help="do not record this run in the history"
    )


def _error(command: str, message: str) -> None:
    sys.stderr.write(f"metaagent {command}: {message}\n")
    sys.stderr.flush()


def load_agent_or_report(command: str, path: Path) -> Agent | None:
    """The agent in ``path``, or None after saying on stderr why it cannot be loaded."""
    from schema_types._agent_file import load_agent
    from schema_types._errors import SchemaError

    try:
        return load_agent(path)
    except SchemaError as exc:
        _error(command, str(exc))
    except OSError as exc:
        _error(command, f"cannot read {path}: {exc.strerror or exc}")
    return None


def _json_or_text(text: str) -> Any:
    try:
        return json.loads(text)
    except ValueError:
        return text


def parameter_name(name: str) -> str:
    """The snake_case model parameter ``name`` stands for (camelCase accepted).

    Raises:
        ValueError: not a model parameter.
    """
    snake = re.sub(r"(?<!^)(?=[A-Z])", "_", name.strip()).lower().replace("-", "_")
    try:
        return _PARAMETER_NAMES[snake]
    except KeyError:
        known = ", ".join(sorted(set(_PARAMETER_NAMES.values())))
        raise ValueError(f"{name!r} is not a model parameter; use one of {known}") from None


def parse_parameter_value(text: str) -> Any:
    """A ``--set``/``/set`` value: JSON when it parses as JSON, else the text itself."""
    return _json_or_text(text)


def check_parameters(agent: Agent, overrides: dict[str, Any]) -> None:
    """Check that ``overrides`` resolve against the agent's settings.

    Raises:
        ValueError: a value has the wrong type or range (the message says which).
    """
    from .._errors import ConfigurationError
    from ..providers import resolve_parameters

    try:
        resolve_parameters(agent.settings, overrides)
    except ConfigurationError as exc:
        raise ValueError(str(exc)) from None


def parse_parameter_overrides(pairs: Sequence[str], agent: Agent) -> dict[str, Any]:
    """``["temperature=0.3", "stop=[\\"END\\"]"]`` → ``{"temperature": 0.3, "stop": ["END"]}``.

    Raises:
        ValueError: an entry is not ``name=value``, names no model parameter, or its value does
            not fit the parameter.
    """
    overrides: dict[str, Any] = {}
    for pair in pairs:
        name, sep, value = pair.partition("=")
        if not sep or not name.strip():
            raise ValueError(f"--set {pair!r}: write it as PARAM=VALUE (temperature=0.2)")
        overrides[parameter_name(name)] = parse_parameter_value(value)
    check_parameters(agent, overrides)
    return overrides


@dataclass
class Runtime:
    """What one CLI command needs to run sessions: the model, the agent's tools, the history."""

    provider: Provider
    model: str
    toolbox: AgentToolbox | None  # None: the agent has no MCP servers (the mcp SDK stays unloaded)
    history: HistoryStore | None

    async def aclose(self) -> None:
        """Stop the tool servers and release connections and the database."""
        try:
            if self.toolbox is not None:
                await self.toolbox.aclose()
        finally:
            try:
                await self.provider.aclose()
            finally:
                if self.history is not None:
                    self.history.close()


def open_runtime(agent: Agent, path: Path, *, history: bool) -> Runtime:
    """Provider, toolbox and history store for ``agent`` (tool servers start on first use).

    Raises:
        ExportError: no model is configured, or its credentials are missing.
    """
    from .._errors import HistoryError
    from .._history import HistoryStore
    from ..providers import provider_for_agent

    provider, model = provider_for_agent(agent)
    toolbox: AgentToolbox | None = None
    if agent.mcp_servers:
        from .._toolbox import AgentToolbox

        toolbox = AgentToolbox(agent, base_dir=path.resolve().parent)
    store: HistoryStore | None = None
    if history:
        try:
            store = HistoryStore()
        except HistoryError as exc:  # the answer matters more than its record
            _error("history", f"{exc}; going on without recording")
    return Runtime(provider, model, toolbox, store)


class EventPrinter:
    """Prints session events: answer text to ``out``, tool calls and failures to ``err``."""

    def __init__(self, out: TextIO | None = None, err: TextIO | None = None) -> None:
        self.out = out or sys.stdout
        self.err = err or sys.stderr
        self._fancy = _can_show(self.err, "→←")
        self._line_open = False

    def handle(self, event: SessionEvent) -> None:
        """Print one event."""
        from .._events import (
            FinalAnswer,
            SessionFailed,
            TextDelta,
            ToolCallFinished,
            ToolCallStarted,
        )

        if isinstance(event, TextDelta):
            self.out.write(event.text)
            self.out.flush()
            self._line_open = not event.text.endswith("\n")
        elif isinstance(event, ToolCallStarted):
            self._end_line()
            arrow = "→" if self._fancy else "->"
            arguments = json.dumps(event.arguments, ensure_ascii=False, separators=(",", ":"))
            self.err.write(f"{arrow} {event.name} {arguments}\n")
            self.err.flush()
        elif isinstance(event, ToolCallFinished):
            arrow = "←" if self._fancy else "<-"
            if event.refused:
                verdict = f"refused: {_one_line(event.result)}"
            elif event.is_error:
                verdict = f"error: {_one_line(event.result)}"
            else:
                verdict = "ok"
            self.err.write(f"{arrow} {event.name} {event.duration_ms:.0f} ms {verdict}\n")
            self.err.flush()
        elif isinstance(event, FinalAnswer):
            self._end_line()
        elif isinstance(event, SessionFailed):
            self._end_line()
            self.err.write(f"error: {event.message}\nhint: {event.hint}\n")
            self.err.flush()

    def _end_line(self) -> None:
        if self._line_open:
            self.out.write("\n")
            self.out.flush()
            self._line_open = False


def _one_line(text: str, limit: int = 200) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def _can_show(stream: TextIO, text: str) -> bool:
    try:
        text.encode(getattr(stream, "encoding", None) or "ascii")
    except (UnicodeEncodeError, LookupError):
        return False
    return True


def run(args: argparse.Namespace) -> int:
    """Run ``call`` with parsed arguments; returns the exit code."""
    from schema_types._arguments import validate_arguments
    from schema_types._errors import ArgumentsError
    from schema_types._template import render

    from ._render import parse_cli_arguments

    path = Path(args.agent_file)
    agent = load_agent_or_report("call", path)
    if agent is None:
        return 2
    tool = agent.metadata.tool(args.tool)
    if tool is None:
        names = ", ".join(t.name for t in agent.tools) or "none"
        _error("call", f"{path} has no tool named {args.tool!r} (its tools: {names})")
        return 2
    try:
        raw = parse_cli_arguments(list(args.arg), args.json)
        overrides = parse_parameter_overrides(args.set, agent)
    except ValueError as exc:
        _error("call", str(exc))
        return 2
    try:
        arguments = validate_arguments(tool.parameters, raw)
    except ArgumentsError as exc:
        lines = "\n".join(f"  {problem}" for problem in exc.problems)
        _error("call", f"the arguments do not fit {tool.name}'s parameters:\n{lines}")
        return 2
    prompt = render(
        tool.prompt,
        arguments,
        tool.parameters,
        tool_name=tool.name,
        tool_description=tool.description,
    )
    try:
        return _run_async(
            _call(agent, path.resolve(), tool.name, arguments, prompt, overrides, args)
        )
    except KeyboardInterrupt:
        return 130


def _run_async(main: Any) -> int:
    import asyncio

    result: int = asyncio.run(main)
    return result


async def _call(
    agent: Agent,
    path: Path,
    tool_name: str,
    arguments: dict[str, Any],
    prompt: str,
    overrides: dict[str, Any],
    args: argparse.Namespace,
) -> int:
    import time

    from .._errors import ExportError
    from .._events import FinalAnswer, SessionFailed
    from .._session import ChatSession
    from .._session_failure import failure_for

    printer = EventPrinter()
    try:
        runtime = open_runtime(agent, path, history=not args.no_history)
    except ExportError as exc:
        printer.handle(failure_for(exc))
        return 1
    try:
        history = runtime.history
        thread_id: str | None = None
        run_id: int | None = None
        if history is not None:
            try:
                thread_id = history.create_thread(
                    agent_path=str(path),
                    agent_name=agent.metadata.name,
                    title=f"{tool_name} (metaagent call)",
                    kind="call",
                )
                run_id = history.start_run(
                    thread_id=thread_id,
                    tool_name=tool_name,
                    arguments=arguments,
                    filled_prompt=prompt,
                    caller="metaagent call",
                )
            except ExportError as exc:
                _error("history", f"{exc}; going on without recording")
                history = None
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
        )
        started = time.perf_counter()
        outcome: SessionEvent | None = None
        async for event in session.run(prompt):
            printer.handle(event)
            if isinstance(event, FinalAnswer | SessionFailed):
                outcome = event
        if history is not None and run_id is not None:
            try:
                _finish_run(history, run_id, outcome, (time.perf_counter() - started) * 1000)
            except ExportError as exc:
                _error("history", f"{exc}; the run stays recorded as pending")
        return 0 if isinstance(outcome, FinalAnswer) else 1
    finally:
        await runtime.aclose()


def _finish_run(
    history: HistoryStore, run_id: int, outcome: SessionEvent | None, duration_ms: float
) -> None:
    from .._events import FinalAnswer, SessionFailed

    if isinstance(outcome, FinalAnswer):
        history.finish_run(
            run_id,
            answer=outcome.text,
            duration_ms=outcome.duration_ms,
            tokens_in=outcome.usage.input_tokens,
            tokens_out=outcome.usage.output_tokens,
            tool_calls=len(outcome.tool_calls),
        )
    else:
        message = outcome.message if isinstance(outcome, SessionFailed) else "no answer"
        history.finish_run(run_id, error=message, duration_ms=duration_ms)
