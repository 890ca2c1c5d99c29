"""What ``verify`` found, as data for the studio and as one screen of text for the CLI.

Every text the report renders passes ``redact``: a detail may quote a server's stderr or a
model's answer, and either may repeat a key.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple

from mcp_export.clients.entry import ClientId, ExportEntry
from mcp_export.redact import redact

if TYPE_CHECKING:
    from mcp_export.clients.launch import ClientLaunch
    from mcp_export.clients.verify_call import CallOutcome

__all__ = [
    "Check",
    "Fill",
    "ModeResult",
    "VerifiedPrompt",
    "VerifiedTool",
    "VerifyReport",
    "render_call",
    "render_report",
]

_GREEN, _RED, _DIM, _RESET = "\033[32m", "\033[31m", "\033[2m", "\033[0m"


class Check(NamedTuple):
    """One line of the report: what was checked, whether it passed, and the detail."""

    label: str
    ok: bool
    detail: str = ""


@dataclass(frozen=True)
class Fill:
    """A value the person has to put in before calls can work, and where.

    Attributes:
        name: the environment variable (``OPENAI_API_KEY``).
        config_file: the client's config file that holds (or will hold) the entry; None for a
            client without one.
        key_path: its place in that file (``mcpServers › travel-desk › env › OPENAI_API_KEY``).
        problem: what is wrong with it now (written empty, a variable not set, not in the entry).
        agent_paths: where the agent file reads it (``providers.openai.OPENAI_API_KEY``): a
            ``keyring://`` reference written there needs no value in the config at all.
        provider: the provider id when it is the key of the agent's model, else None.
    """

    name: str
    config_file: Path | None
    key_path: str
    problem: str
    agent_paths: tuple[str, ...] = ()
    provider: str | None = None


@dataclass(frozen=True)
class VerifiedTool:
    """A tool as the server listed it."""

    name: str
    title: str | None
    description: str
    input_schema: dict[str, Any]
    output_schema: dict[str, Any] | None


@dataclass(frozen=True)
class VerifiedPrompt:
    """A prompt as the server listed it.

    Attributes:
        name: the prompt's name (a tool's served name).
        description: its description.
        arguments: its arguments' names, in the listed order.
        required: the names of the required ones.
    """

    name: str
    description: str
    arguments: tuple[str, ...]
    required: tuple[str, ...]


@dataclass
class ModeResult:
    """One connection (``legacy`` or ``auto``): what the server said, or why it failed."""

    mode: str
    error: str | None = None
    protocol: str | None = None
    server_name: str | None = None
    server_version: str | None = None
    instructions: str | None = None
    tools: list[VerifiedTool] = field(default_factory=lambda: list[VerifiedTool]())
    prompts: list[VerifiedPrompt] | None = None
    """The prompts listed; None when the server does not offer prompts."""
    connect_s: float = 0.0
    list_s: float = 0.0


@dataclass
class VerifyReport:
    """What a client will see when it launches the exported server.

    Attributes:
        agent_path: the agent file.
        client: the client whose entry was launched.
        entry: that entry (None when the agent file could not be loaded).
        checks: every check in order, ``(label, ok, detail)``.
        tools: the tools the server listed (legacy mode's listing, else auto's).
        prompts: the prompts the server listed, from the same connection (empty when it offers
            none).
        timings: seconds: ``<mode>.connect`` (spawn → connected), ``<mode>.list`` (tools/list),
            and ``total``.
        server_name: serverInfo name, when the server gave one.
        server_version: serverInfo version.
        instructions: the server's instructions.
        protocols: negotiated protocol version per mode.
        launch: the process the client starts (None when the agent or its config could not be
            read).
        fills: the values to put in by hand, each with where it goes.
        call: the real call's outcome, when one was asked for.
    """

    agent_path: Path
    client: ClientId
    entry: ExportEntry | None
    checks: list[Check] = field(default_factory=lambda: list[Check]())
    tools: list[VerifiedTool] = field(default_factory=lambda: list[VerifiedTool]())
    prompts: list[VerifiedPrompt] = field(default_factory=lambda: list[VerifiedPrompt]())
    timings: dict[str, float] = field(default_factory=lambda: dict[str, float]())
    server_name: str | None = None
    server_version: str | None = None
    instructions: str | None = None
    protocols: dict[str, str] = field(default_factory=lambda: dict[str, str]())
    launch: ClientLaunch | None = None
    fills: list[Fill] = field(default_factory=lambda: list[Fill]())
    call: CallOutcome | None = None

    @property
    def ok(self) -> bool:
        """Whether every check passed (everything a client needs works)."""
        return bool(self.checks) and all(check.ok for check in self.checks)

    @property
    def problems(self) -> list[Check]:
        """The checks that failed."""
        return [check for check in self.checks if not check.ok]

    def add(self, label: str, ok: bool, detail: str = "") -> None:
        """Append a check."""
        self.checks.append(Check(label, ok, detail))


def render_report(
    report: VerifyReport,
    *,
    color: bool = False,
    ascii_only: bool = False,
    answer_lines: int | None = 20,
) -> str:
    """The report as text: one line per check (details of a failure indented below it).

    Args:
        report: from ``verify_export``.
        color: wrap markers in ANSI green/red (for a terminal).
        ascii_only: ``+``/``x`` instead of ``✔``/``✘`` for consoles that cannot show them.
        answer_lines: show at most this many lines of a call's answer (None: all of it).
    """
    good, bad = ("+", "x") if ascii_only else ("✔", "✘")

    def paint(text: str, code: str) -> str:
        return f"{code}{text}{_RESET}" if color else text

    entry = report.entry
    title = f"{entry.name} for {entry.info.label}" if entry is not None else str(report.agent_path)
    lines = [f"Verify {title}"]
    launch = report.launch
    if launch is not None:
        lines.append(paint("  " + " ".join([launch.command, *launch.args]), _DIM))
        lines.extend(paint(f"  {line}", _DIM) for line in _launch_lines(launch))
    elif entry is not None:
        lines.append(paint("  " + " ".join(_launch_words(entry.entry)), _DIM))
    width = max((len(check.label) for check in report.checks), default=0)
    for check in report.checks:
        marker = paint(good, _GREEN) if check.ok else paint(bad, _RED)
        first, *rest = (check.detail or "").splitlines() or [""]
        lines.append(f"{marker} {check.label.ljust(width)}  {first}".rstrip())
        lines.extend(f"    {line}" for line in rest)
    if report.call is not None and report.call.tried:
        lines.extend(f"  {line}" for line in render_call(report.call, answer_lines).splitlines())
    if entry is not None:
        lines.extend(paint(f"  note: {note}", _DIM) for note in entry.notes)
    if report.ok:
        total = report.timings.get("total")
        took = f" ({total:.1f} s)" if total is not None else ""
        lines.append(
            paint(f"{good} ready: a client will see what the agent file says{took}", _GREEN)
        )
    else:
        failed = ", ".join(check.label for check in report.problems)
        lines.append(paint(f"{bad} {len(report.problems)} problem(s): {failed}", _RED))
    return redact("\n".join(lines))


def render_call(outcome: CallOutcome, answer_lines: int | None = None) -> str:
    """A call and what came back, as the client would show it.

    Args:
        outcome: from ``try_call``.
        answer_lines: show at most this many lines of the answer (None: all of it).
    """
    plan = outcome.plan
    arguments = json.dumps(plan.arguments, ensure_ascii=False)
    head = f"call {plan.tool} with {plan.source}: {arguments}" if plan.source else plan.tool
    if not outcome.tried:
        return redact(f"{head}\n  {outcome.text}")
    if outcome.ok:
        kind = "answer"
    elif outcome.is_error:
        kind = "isError result"
    else:
        kind = "no result"
    body = outcome.text.splitlines() or [""]
    if answer_lines is not None and len(body) > answer_lines:
        hidden = len(body) - answer_lines
        body = [*body[:answer_lines], f"… {hidden} more line{'' if hidden == 1 else 's'}"]
    lines = [head, f"  {kind} after {outcome.seconds:.1f} s:", *(f"    {line}" for line in body)]
    return redact("\n".join(lines))


def _launch_lines(launch: ClientLaunch) -> list[str]:
    """Where the entry came from, and the names (never the values) of what the server gets."""
    if launch.source is not None:
        where = f"entry: {launch.key_path()} in {launch.source}"
    elif launch.config_file is not None:
        where = f"entry: not installed in {launch.config_file}; launched as export writes it"
    else:
        where = "entry: as export prints it"
    names = [f"{name} (empty)" if not value else name for name, value in sorted(launch.env.items())]
    defaults = ", ".join(sorted(set(launch.process_env()) - set(launch.env)))
    passed = f"environment: {', '.join(names) or 'nothing'} from the entry"
    return [where, f"{passed}; {defaults or 'nothing'} from the client"]


def _launch_words(entry: dict[str, Any]) -> list[str]:
    words = [str(entry.get("command", ""))]
    args = entry.get("args")
    if isinstance(args, list):
        words.extend(str(arg) for arg in args)
    return words
