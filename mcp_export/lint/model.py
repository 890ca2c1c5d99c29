"""The data of a lint: the clients, a served tool as a client receives it, and a finding."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal, get_args

__all__ = [
    "LINT_CLIENTS",
    "LINT_CLIENT_LABELS",
    "Finding",
    "LintClient",
    "LintTool",
    "Severity",
]

LintClient = Literal["claude-desktop", "claude-code", "vscode", "cursor", "openai", "gemini"]
LINT_CLIENTS: tuple[LintClient, ...] = get_args(LintClient)
LINT_CLIENT_LABELS: dict[LintClient, str] = {
    "claude-desktop": "Claude Desktop",
    "claude-code": "Claude Code",
    "vscode": "VS Code Copilot",
    "cursor": "Cursor",
    "openai": "OpenAI function calling (clients that pass tools on to it)",
    "gemini": "Gemini function calling (clients that pass tools on to it)",
}

Severity = Literal["error", "warning"]
"""``error``: the client refuses the tool or the request, or hides the tool; ``warning``: it
renames, cuts or drops something and the tool still works (less well)."""


@dataclass(frozen=True)
class LintTool:
    """A tool as the server lists it: the parts a client's rules look at."""

    name: str
    description: str
    input_schema: dict[str, Any]


@dataclass(frozen=True)
class Finding:
    """One thing a client refuses or changes.

    Attributes:
        client: whose rule it is.
        tool: the served tool name; None for a rule about the whole tool list (a count).
        rule: a short stable id (``name-characters``, ``tool-count``, ``schema-keyword``).
        severity: see :data:`Severity`.
        message: what the client does and what to change, in the author's terms.
        source: where the rule comes from (the client's docs or source: a URL or repo path).
    """

    client: LintClient
    tool: str | None
    rule: str
    severity: Severity
    message: str
    source: str
