"""The ``verify`` check of the prompts: the listing against ``settings.toolsAsPrompts``."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from mcp_export.clients.verify_report import ModeResult, VerifiedPrompt, VerifyReport
from schema_types.agent import Agent, ToolDefinition

__all__ = ["check_prompts"]


def check_prompts(report: VerifyReport, agent: Agent, results: Sequence[ModeResult]) -> None:
    """The prompts against ``settings.toolsAsPrompts``: one per tool, its parameters as the
    arguments (``conversation_id`` none of them) and required alike, or none at all."""
    good = [result for result in results if result.error is None]
    if not good:
        return
    first = good[0]
    listed = first.prompts or []
    report.prompts = listed
    for other in good[1:]:
        if [p.name for p in other.prompts or []] != [p.name for p in listed]:
            names = ", ".join(p.name for p in other.prompts or []) or "none"
            report.add("same prompts in both modes", False, f"{other.mode} listed {names}")
    if not agent.settings.tools_as_prompts:
        names = ", ".join(p.name for p in listed)
        report.add(
            "prompts",
            not listed,
            f"the server lists {names}, but settings.toolsAsPrompts is off"
            if listed
            else "none (settings.toolsAsPrompts is off)",
        )
        return
    if first.prompts is None:
        report.add(
            "prompts",
            False,
            "the server offers no prompts, but settings.toolsAsPrompts is on: the command the "
            "client starts may be an older metaagent; update it",
        )
        return
    served = {prompt.name: prompt for prompt in listed}
    authored = {tool.name: tool for tool in agent.tools}
    problems = [f"missing: {name}" for name in authored if name not in served]
    problems += [f"not a tool of the agent file: {name}" for name in served if name not in authored]
    for name, prompt in served.items():
        definition = authored.get(name)
        if definition is not None:
            problems += _prompt_problems(prompt, definition)
    count = len(listed)
    detail = ", ".join(served) or "none"
    report.add(
        f"{count} prompt{'' if count == 1 else 's'} listed",
        not problems,
        "; ".join([detail, *problems]),
    )


def _prompt_problems(prompt: VerifiedPrompt, definition: ToolDefinition) -> list[str]:
    properties = definition.parameters.get("properties")
    names = tuple(properties) if isinstance(properties, Mapping) else ()
    required = definition.parameters.get("required")
    needed = {n for n in required if n in names} if isinstance(required, list) else set()
    problems: list[str] = []
    if prompt.arguments != names:
        shown = ", ".join(prompt.arguments) or "none"
        problems.append(f"{prompt.name} takes {shown}, its tool {', '.join(names) or 'nothing'}")
    elif set(prompt.required) != needed:
        problems.append(f"{prompt.name} requires {', '.join(prompt.required) or 'nothing'}")
    return problems
