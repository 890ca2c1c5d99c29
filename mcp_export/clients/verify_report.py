"""What ``verify`` found, as data for the studio and as one screen of text for the CLI."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NamedTuple

from mcp_export.clients.entry import ClientId, ExportEntry

__all__ = ["Check", "ModeResult", "VerifiedTool", "VerifyReport", "render_report"]

_GREEN, _RED, _DIM, _RESET = "\033[32m", "\033[31m", "\033[2m", "\033[0m"


class Check(NamedTuple):
    """One line of the report: what was checked, whether it passed, and the detail."""

    label: str
    ok: bool
    detail: str = ""


@dataclass(frozen=True)
class VerifiedTool:
    """A tool as the server listed it."""

    name: str
    title: str | None
    description: str
    input_schema: dict[str, Any]
    output_schema: dict[str, Any] | None


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
        timings: seconds: ``<mode>.connect`` (spawn → connected), ``<mode>.list`` (tools/list),
            and ``total``.
        server_name: serverInfo name, when the server gave one.
        server_version: serverInfo version.
        instructions: the server's instructions.
        protocols: negotiated protocol version per mode.
    """

    agent_path: Path
    client: ClientId
    entry: ExportEntry | None
    checks: list[Check] = field(default_factory=lambda: list[Check]())
    tools: list[VerifiedTool] = field(default_factory=lambda: list[VerifiedTool]())
    timings: dict[str, float] = field(default_factory=lambda: dict[str, float]())
    server_name: str | None = None
    server_version: str | None = None
    instructions: str | None = None
    protocols: dict[str, str] = field(default_factory=lambda: dict[str, str]())

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


def render_report(report: VerifyReport, *, color: bool = False, ascii_only: bool = False) -> str:
    """The report as text: one line per check (details of a failure indented below it).

    Args:
        report: from ``verify_export``.
        color: wrap markers in ANSI green/red (for a terminal).
        ascii_only: ``+``/``x`` instead of ``✔``/``✘`` for consoles that cannot show them.
    """
    good, bad = ("+", "x") if ascii_only else ("✔", "✘")

    def paint(text: str, code: str) -> str:
        return f"{code}{text}{_RESET}" if color else text

    entry = report.entry
    title = f"{entry.name} for {entry.info.label}" if entry is not None else str(report.agent_path)
    lines = [f"Verify {title}"]
    if entry is not None:
        lines.append(paint("  " + " ".join(_launch_words(entry.entry)), _DIM))
    width = max((len(check.label) for check in report.checks), default=0)
    for check in report.checks:
        marker = paint(good, _GREEN) if check.ok else paint(bad, _RED)
        first, *rest = (check.detail or "").splitlines() or [""]
        lines.append(f"{marker} {check.label.ljust(width)}  {first}".rstrip())
        lines.extend(f"    {line}" for line in rest)
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
    return "\n".join(lines)


def _launch_words(entry: dict[str, Any]) -> list[str]:
    words = [str(entry.get("command", ""))]
    args = entry.get("args")
    if isinstance(args, list):
        words.extend(str(arg) for arg in args)
    return words
