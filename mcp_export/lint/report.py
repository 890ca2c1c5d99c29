"""The lint's findings as one screen of text, client by client, each finding with its source."""

from __future__ import annotations

from collections.abc import Sequence

from mcp_export.lint.model import LINT_CLIENT_LABELS, Finding, LintClient

__all__ = ["lint_exit_code", "render_lint"]

_GREEN, _RED, _YELLOW, _DIM, _RESET = "\033[32m", "\033[31m", "\033[33m", "\033[2m", "\033[0m"


def lint_exit_code(findings: Sequence[Finding], *, strict: bool = False) -> int:
    """1 when a client refuses something (with ``strict``: or changes anything), else 0."""
    failing = [f for f in findings if f.severity == "error" or strict]
    return 1 if failing else 0


def render_lint(
    findings: Sequence[Finding],
    *,
    file: str,
    server: str,
    tool_count: int,
    clients: Sequence[LintClient],
    color: bool = False,
    ascii_only: bool = False,
) -> str:
    """The report: a heading, then per client a mark (✔ nothing, ! changes, ✘ refusals), each
    finding as ``tool (refused|changed): message``, and the sources of that client's findings."""

    def paint(code: str, text: str) -> str:
        return f"{code}{text}{_RESET}" if color else text

    ok, warn, bad = ("ok", "warn", "FAIL") if ascii_only else ("✔", "!", "✘")
    plural = "" if tool_count == 1 else "s"
    lines = [f"Client rules for {file}, served as {server!r} ({tool_count} tool{plural}):"]
    for client in clients:
        own = [f for f in findings if f.client == client]
        errors = sum(f.severity == "error" for f in own)
        warnings = len(own) - errors
        label = LINT_CLIENT_LABELS[client]
        if errors:
            mark, code = bad, _RED
        elif warnings:
            mark, code = warn, _YELLOW
        else:
            mark, code = ok, _GREEN
        counts = ", ".join(
            text
            for count, text in (
                (errors, f"{errors} refused"),
                (warnings, f"{warnings} changed or dropped"),
            )
            if count
        )
        lines.append(paint(code, mark) + f" {label}" + (f": {counts}" if counts else ""))
        for finding in own:
            where = finding.tool if finding.tool is not None else "all tools"
            kind = "refused" if finding.severity == "error" else "changed"
            lines.append(f"    {where} ({kind}): {finding.message}")
        for source in dict.fromkeys(f.source for f in own):
            lines.append(paint(_DIM, f"    source: {source}"))
    refused = sum(f.severity == "error" for f in findings)
    changed = len(findings) - refused
    if not findings:
        lines.append("Every client takes every tool as written.")
    else:
        lines.append(f"{refused} refused, {changed} changed or dropped.")
    return "\n".join(lines)
