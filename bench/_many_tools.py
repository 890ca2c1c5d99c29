"""Agents of any number of tools, made like the bundled travel-desk example.

The example's four tools (nested objects, arrays of objects, enums, patterns, formats, defaults,
examples, annotations, a conversation tool) are repeated in turn, each copy with its own name,
description and parameters (its first parameter's description is numbered), so a 500-tool agent
has 500 distinct schemas of the kind a real one would, not one schema repeated or empty ones.
"""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import yaml

__all__ = ["EXAMPLE", "agent_data", "write_agent"]

EXAMPLE = Path(__file__).resolve().parents[1] / "resources" / "examples" / "travel-desk.agent.yaml"


def agent_data(tool_count: int) -> dict[str, Any]:
    """The example agent's data with ``tool_count`` tools."""
    data: dict[str, Any] = yaml.safe_load(EXAMPLE.read_text(encoding="utf-8"))
    models: list[dict[str, Any]] = data["metadata"]["tools"]
    tools: list[dict[str, Any]] = []
    for index in range(tool_count):
        tool = copy.deepcopy(models[index % len(models)])
        tool["name"] = f"{tool['name']}_{index + 1}"
        tool["description"] = f"{tool['description']} (desk {index + 1})"
        first = next(iter(tool["parameters"]["properties"].values()))
        described = first.get("description", "The first parameter.")
        first["description"] = f"{described} Desk {index + 1}."
        tools.append(tool)
    data["metadata"]["tools"] = tools
    return data


def write_agent(folder: Path, tool_count: int) -> Path:
    """Write the agent of ``tool_count`` tools as YAML into ``folder``; returns its path."""
    path = folder / f"desk-{tool_count}.agent.yaml"
    path.write_text(
        yaml.safe_dump(agent_data(tool_count), sort_keys=False, allow_unicode=True),
        encoding="utf-8",
    )
    return path
