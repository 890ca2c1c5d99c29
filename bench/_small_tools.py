"""Agents of any number of small tools: one line of flow-style YAML each (~170 bytes).

The shape of the 20 000-tool agent of issue 17 (a 3 to 4 MB file): a tool with two parameters,
a required one and a bounded integer, and a short prompt. ``bench/_many_tools.py`` makes the
other shape, ten times larger per tool, after the travel-desk example.
"""

from __future__ import annotations

from pathlib import Path

__all__ = ["write_small_agent"]


def write_small_agent(folder: Path, tool_count: int) -> Path:
    """Write an agent of ``tool_count`` one-line tools into ``folder``; returns its path."""
    lines = ["metadata:", "  name: Small tools", "  version: 1.0.0", "  tools:"]
    lines += [
        f"    - {{name: find_{index}, description: Finds things (number {index})., parameters: "
        "{type: object, properties: {q: {type: string}, n: {type: integer, minimum: 1}}, "
        "required: [q]}, prompt: 'Find {q} ({n}).'}"
        for index in range(tool_count)
    ]
    path = folder / f"small-{tool_count}.agent.yaml"
    lines += ["settings:", "  model: openai:gpt-4.1-mini", ""]
    path.write_text("\n".join(lines), encoding="utf-8")
    return path
