"""What an agent file may hold that loads but is probably a mistake: literal secrets, and the
template diagnostics of each tool's prompt (unknown placeholders, unbalanced braces or sections,
required parameters the prompt never uses).

``metaagent validate`` prints them as warnings (failing under ``--strict``); a drafted tool must
have none (``mcp_export.authoring.draft_check``).
"""

from __future__ import annotations

from schema_types.agent import Agent
from schema_types.secrets import find_literal_secrets
from schema_types.template.diagnostic import Diagnostic, grouped, line_starts, location
from schema_types.template.engine import diagnose

__all__ = ["warnings_for"]


def warnings_for(agent: Agent) -> list[str]:
    """What is loadable but probably wrong: literal secrets, then template diagnostics.

    Returns:
        Messages that start with the JSON path they are about.
    """
    found = [str(problem) for problem in find_literal_secrets(agent)]
    for index, tool in enumerate(agent.tools):
        diagnostics = diagnose(tool.prompt, tool.parameters)
        if not diagnostics:
            continue
        starts = line_starts(tool.prompt)
        found += [
            f"metadata.tools[{index}].prompt: {_described(first, count, starts)}"
            for first, count in grouped(diagnostics)
        ]
    return found


def _described(diagnostic: Diagnostic, count: int, starts: list[int]) -> str:
    """``line L, column C: message (and N more like it)``; no place for a prompt-wide one."""
    text = diagnostic.message
    if diagnostic.code != "unused-required":
        line, column = location(starts, diagnostic.start)
        text = f"line {line}, column {column}: {text}"
    if count > 1:
        more = f"{count - 1:,}".replace(",", " ")
        text += f" (and {more} more like it)"
    return text
