"""A one-tool agent file written as JSON, for the tests and benchmarks that feed the CLI a
hostile template or schema: ``plan_tool`` (a destination, two optional values ``x`` and ``y``, a
prompt of the caller's) and ``write_json_agent``."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

__all__ = ["plan_tool", "write_json_agent"]


def plan_tool(prompt: str) -> dict[str, Any]:
    """The tool ``plan``: a required ``destination``, untyped ``x`` and ``y``, and ``prompt``."""
    return {
        "name": "plan",
        "description": "Plans a trip.",
        "parameters": {
            "type": "object",
            "properties": {"destination": {"type": "string"}, "x": {}, "y": {}},
            "required": ["destination"],
        },
        "prompt": prompt,
    }


def write_json_agent(path: Path, tool: dict[str, Any]) -> Path:
    """``path``, written as the agent "Hostile" serving ``tool`` alone."""
    data = {
        "metadata": {"name": "Hostile", "version": "1.0.0", "tools": [tool]},
        "settings": {"model": "openai:gpt-4.1-mini"},
    }
    path.write_text(json.dumps(data), encoding="utf-8")
    return path
