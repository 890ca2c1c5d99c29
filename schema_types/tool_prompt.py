"""A tool's prompt template filled with a call's arguments, as the model receives it."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from schema_types.agent import ToolDefinition
from schema_types.template.engine import render

__all__ = ["filled_prompt"]


def filled_prompt(tool: ToolDefinition, arguments: Mapping[str, Any]) -> str:
    """``tool``'s prompt template filled with ``arguments`` (already validated, defaults applied),
    the tool's name and its description.

    Args:
        tool: the tool whose template is filled.
        arguments: the call's arguments.

    Returns:
        The prompt text a served call sends.
    """
    return render(
        tool.prompt,
        arguments,
        tool.parameters,
        tool_name=tool.name,
        tool_description=tool.description,
    )
