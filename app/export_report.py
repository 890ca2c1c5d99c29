"""How the export dialog shows a Verify report: the one-line summary and the report as HTML.

The text is ``render_report``'s (the CLI's ``metaagent verify`` prints the same), with its check
marks in colour, anchors at the first problem and at the call (the dialog scrolls to them), then
the tools and the prompts the server lists.
"""

from __future__ import annotations

import html
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from mcp_export.clients.verify_report import VerifyReport

__all__ = ["BAD", "CALL_ANCHOR", "GOOD", "PROBLEM_ANCHOR", "report_html", "report_summary"]

GOOD, BAD = "#1b7f3b", "#b3261e"
CALL_ANCHOR, PROBLEM_ANCHOR = "call", "problem"


def report_summary(report: VerifyReport) -> str:
    """The line above the report: ready with what a client sees, or the problems to fix."""
    if report.ok:
        count = len(report.tools)
        summary = f"✔ Ready: a client will see {count} tool{'' if count == 1 else 's'}"
        prompts = len(report.prompts)
        if prompts:
            summary += f" and {prompts} prompt{'' if prompts == 1 else 's'}"
        call = report.call
        if call is not None and call.tried:
            summary += f", and {call.plan.tool} answered"
        return summary + "."
    failed = ", ".join(check.label for check in report.problems)
    summary = f"✘ {len(report.problems)} problem(s): {failed}"
    if report.fills:
        names = ", ".join(fill.name for fill in report.fills)
        summary += f". To fill in: {names} (see below)."
    return summary


def report_html(report: VerifyReport) -> str:
    """The whole report as HTML (one block per line, wrapped where it is too long)."""
    from mcp_export.clients.verify_report import render_report

    text = render_report(report, answer_lines=None)
    call_head = f"  call {report.call.plan.tool} " if report.call is not None else None
    # One block per line, wrapped where it is too long (the launch command, notes, an answer)
    # instead of scrolling sideways; a line of its own is what an anchor scrolls to.
    block = "<p style='margin:0; white-space:pre-wrap; font-family:monospace'>{}</p>"
    parts = []
    first_problem = True
    for line in text.splitlines():
        escaped = html.escape(line) or "&nbsp;"
        if line.startswith("✔"):
            escaped = f"<span style='color:{GOOD}'>{escaped}</span>"
        elif line.startswith("✘"):
            escaped = f"<span style='color:{BAD}'>{escaped}</span>"
            if first_problem:
                escaped = f"<a name='{PROBLEM_ANCHOR}'>{escaped}</a>"
                first_problem = False
        elif call_head is not None and line.startswith(call_head):
            escaped = f"<a name='{CALL_ANCHOR}'><b>{escaped}</b></a>"
        parts.append(block.format(escaped))
    if report.tools:
        parts.append("<p><b>Tools the server lists</b></p><ul>")
        for tool in report.tools:
            first = (tool.description.strip().splitlines() or [""])[0]
            parts.append(f"<li><b>{html.escape(tool.name)}</b> — {html.escape(first)}</li>")
        parts.append("</ul>")
    if report.prompts:
        parts.append(
            "<p><b>Prompts the server lists</b> (for clients that run them on their own "
            "model)</p><ul>"
        )
        for prompt in report.prompts:
            takes = ", ".join(
                html.escape(name) + ("" if name in prompt.required else " (optional)")
                for name in prompt.arguments
            )
            parts.append(f"<li><b>{html.escape(prompt.name)}</b>({takes})</li>")
        parts.append("</ul>")
    return "".join(parts)
