"""What the terminal commands (``call``, ``chat``) share: ``--set`` and ``/set`` parsing, opening
the runtime, and printing session events.

Output rule: answer text goes to stdout; tool calls, failures and notices go to stderr. Every text
written passes ``redact`` first (``cli._report.error``, ``EventPrinter``): the terminal is a sink
like the history and the served results.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

from mcp_export.cli._report import can_show, error
from mcp_export.errors import ConfigurationError, ExportError, HistoryError
from mcp_export.history.store import HistoryStore
from mcp_export.providers.factory import provider_for_agent
from mcp_export.providers.parameters import resolve_parameters
from mcp_export.redact import redact
from mcp_export.session.events import (
    FinalAnswer,
    Notice,
    SessionFailed,
    TextDelta,
    ToolCallFinished,
    ToolCallStarted,
)
from mcp_export.session.failure import failure_for

if TYPE_CHECKING:
    from mcp_export.providers.base import Provider
    from mcp_export.session.events import SessionEvent
    from mcp_export.toolbox.agent_toolbox import AgentToolbox
    from schema_types.agent import Agent

__all__ = [
    "EventPrinter",
    "Runtime",
    "add_session_options",
    "check_parameters",
    "open_runtime",
    "parameter_name",
    "parse_parameter_overrides",
    "parse_parameter_value",
]

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
    provider, model = provider_for_agent(agent)
    toolbox: AgentToolbox | None = None
    if agent.mcp_servers:
        # Here, not at the top: the toolbox loads the mcp SDK, which an agent without
        # tool servers never needs.
        from mcp_export.toolbox.agent_toolbox import AgentToolbox

        toolbox = AgentToolbox(agent, base_dir=path.resolve().parent)
    store: HistoryStore | None = None
    if history:
        try:
            store = HistoryStore()
        except HistoryError as exc:  # the answer matters more than its record
            error("history", f"{exc}; going on without recording")
    return Runtime(provider, model, toolbox, store)


async def with_runtime(
    agent: Agent,
    path: Path,
    args: argparse.Namespace,
    body: Callable[[Runtime, EventPrinter], Awaitable[int]],
) -> int:
    """Open the runtime for ``agent`` (without history under ``--no-history``), run ``body`` on
    it and close it; the exit code ``body`` returns, or 1 after printing why the runtime could
    not be opened."""
    printer = EventPrinter()
    try:
        runtime = open_runtime(agent, path, history=not args.no_history)
    except ExportError as exc:
        printer.handle(failure_for(exc))
        return 1
    try:
        return await body(runtime, printer)
    finally:
        await runtime.aclose()


class EventPrinter:
    """Prints session events: answer text to ``out``, tool calls, notices and failures to
    ``err``.

    A notice is printed once (``note: …``), however many turns repeat it. Everything printed is
    redacted (the session's events already are; a printer may be handed events from elsewhere).
    """

    def __init__(self, out: TextIO | None = None, err: TextIO | None = None) -> None:
        self.out = out or sys.stdout
        self.err = err or sys.stderr
        self._fancy = can_show(self.err, "→←")
        self._line_open = False
        self._noted: set[str] = set()

    def handle(self, event: SessionEvent) -> None:
        """Print one event."""
        if isinstance(event, TextDelta):
            self.out.write(redact(event.text))
            self.out.flush()
            self._line_open = not event.text.endswith("\n")
        elif isinstance(event, Notice):
            if event.text not in self._noted:
                self._noted.add(event.text)
                # stdout is the answer: a note in mid-answer breaks the line on stderr only.
                self._say(("\n" if self._line_open else "") + f"note: {event.text}\n")
        elif isinstance(event, ToolCallStarted):
            self._end_line()
            arrow = "→" if self._fancy else "->"
            arguments = json.dumps(event.arguments, ensure_ascii=False, separators=(",", ":"))
            self._say(f"{arrow} {event.name} {arguments}\n")
        elif isinstance(event, ToolCallFinished):
            arrow = "←" if self._fancy else "<-"
            if event.refused:
                verdict = f"refused: {_one_line(event.result)}"
            elif event.is_error:
                verdict = f"error: {_one_line(event.result)}"
            else:
                verdict = "ok"
            self._say(f"{arrow} {event.name} {event.duration_ms:.0f} ms {verdict}\n")
        elif isinstance(event, FinalAnswer):
            self._end_line()
        elif isinstance(event, SessionFailed):
            self._end_line()
            self._say(f"error: {event.message}\nhint: {event.hint}\n")

    def _say(self, text: str) -> None:
        self.err.write(redact(text))
        self.err.flush()

    def _end_line(self) -> None:
        if self._line_open:
            self.out.write("\n")
            self.out.flush()
            self._line_open = False


def _one_line(text: str, limit: int = 200) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"
