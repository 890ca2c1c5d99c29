"""Restore a recorded version of a tool into the editor: one undo step.

The version's decisive fields (``versions/fingerprint.py``) go back where they came from: the
tool's description, parameters, template and output schema, the system prompt, the model and its
settings. A field the version has at its default is put back out of the file (as it was before
anyone typed it). Afterwards the editor's version is that version again, fingerprint and all —
unless History's copy of it was redacted (a secret in the template), which :func:`restore`
reports by returning False.
"""

from __future__ import annotations

from typing import Any

from app.document.agent_document import AgentDocument, FieldPath
from mcp_export.versions.fingerprint import MODEL_SETTINGS, tool_version
from schema_types.agent import AgentSettings, ToolDefinition

__all__ = ["restore"]

_TOOL_FIELDS = ("description", "parameters", "prompt", "output_schema")


def _alias(model: type[AgentSettings] | type[ToolDefinition], name: str) -> str:
    return model.model_fields[name].alias or name


def restore(document: AgentDocument, tool_name: str, fingerprint: str, decisive: Any) -> bool:
    """Put the version ``decisive`` (recorded as ``fingerprint``) of ``tool_name`` into
    ``document`` as one undo step; True when the editor's version is then that version."""
    agent = document.agent
    index = next((i for i, t in enumerate(agent.metadata.tools) if t.name == tool_name), None)
    if index is None or not isinstance(decisive, dict):
        return False
    found_tool, found_settings = decisive.get("tool"), decisive.get("settings")
    tool: dict[str, Any] = found_tool if isinstance(found_tool, dict) else {}
    settings: dict[str, Any] = found_settings if isinstance(found_settings, dict) else {}
    edits: list[tuple[FieldPath, Any]] = [
        (("metadata", "tools", index, name), tool.get(_alias(ToolDefinition, name)))
        for name in _TOOL_FIELDS
    ]
    edits.append((("system_prompt",), decisive.get("systemPrompt", "")))
    edits.append((("settings", "model"), decisive.get("model")))
    edits += [
        (("settings", name), settings.get(_alias(AgentSettings, name))) for name in MODEL_SETTINGS
    ]
    with document.macro(f"Restore version {fingerprint[:12]} of {tool_name}"):
        for path, value in edits:
            if value is None:
                document.unset_field(path, text="Restore")
            else:
                document.set_field(path, value, text="Restore")
    restored = document.agent.metadata.tool(tool_name)
    return restored is not None and tool_version(document.agent, restored).fingerprint == (
        fingerprint
    )
