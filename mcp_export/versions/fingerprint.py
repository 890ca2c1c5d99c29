"""The fingerprint of what decides a tool's answer: one version of the tool on one model.

Decisive: the tool's description, parameters, template and output schema, the agent's system
prompt, the model and its settings (``maxChatTurns``, ``maxOutputTokens``, ``temperature``,
``topP``, ``stop``, ``seed``, the penalties, ``responseFormat``, ``toolChoice``). The fingerprint
is the SHA-256 of their canonical JSON (keys sorted, no spaces, defaults written out), so a YAML
comment, the order of keys or a value written out at its default leaves it as it is, and any
change to a decisive value changes it. Everything else (the tool's title, its test cases, other
tools, the file's metadata) does not.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from typing import Any

from schema_types.agent import Agent, ToolDefinition

__all__ = ["MODEL_SETTINGS", "Version", "canonical", "tool_version", "version_text"]

MODEL_SETTINGS = (
    "max_chat_turns",
    "max_output_tokens",
    "temperature",
    "top_p",
    "stop",
    "seed",
    "presence_penalty",
    "frequency_penalty",
    "response_format",
    "tool_choice",
)
"""The settings that shape the model's requests (names as in ``AgentSettings``)."""

_TOOL_FIELDS = ("description", "parameters", "prompt", "output_schema")


@dataclass(frozen=True)
class Version:
    """One version of a tool on one model.

    Attributes:
        fingerprint: the SHA-256 (hex) of ``decisive``'s canonical JSON.
        decisive: what decides the answer, as plain JSON (file spellings: ``outputSchema``).
    """

    fingerprint: str

    decisive: dict[str, Any]

    @property
    def short(self) -> str:
        """The first 12 characters of the fingerprint, as shown."""
        return self.fingerprint[:12]


def canonical(data: Any) -> str:
    """``data`` as canonical JSON: keys sorted, no spaces, text as it is (the form hashed)."""
    return json.dumps(data, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def tool_version(agent: Agent, tool: ToolDefinition, model: str | None = None) -> Version:
    """The version of ``tool`` of ``agent`` served by ``model`` (default ``settings.model``)."""
    tool_data = tool.model_dump(mode="json", by_alias=True, include=set(_TOOL_FIELDS))
    settings = agent.settings.model_dump(mode="json", by_alias=True, include=set(MODEL_SETTINGS))
    decisive: dict[str, Any] = {
        "tool": tool_data,
        "systemPrompt": agent.system_prompt,
        "model": model if model is not None else agent.settings.model,
        "settings": settings,
    }
    digest = hashlib.sha256(canonical(decisive).encode("utf-8", "surrogatepass")).hexdigest()
    return Version(digest, decisive)


def version_text(decisive: dict[str, Any]) -> str:
    """``decisive`` as lines a person can read and diff: one ``key: value`` a line, texts (the
    template, the system prompt) written out line by line, JSON values indented."""
    lines: list[str] = [f"model: {decisive.get('model')}"]
    tool = decisive.get("tool")
    tool = tool if isinstance(tool, dict) else {}
    lines += _block("description", tool.get("description"))
    lines += _block("parameters", tool.get("parameters"))
    lines += _block("template", tool.get("prompt"))
    lines += _block("outputSchema", tool.get("outputSchema"))
    lines += _block("systemPrompt", decisive.get("systemPrompt"))
    settings = decisive.get("settings")
    for key, value in sorted((settings if isinstance(settings, dict) else {}).items()):
        lines.append(f"settings.{key}: {canonical(value)}")
    return "\n".join(lines) + "\n"


def _block(name: str, value: Any) -> list[str]:
    if isinstance(value, str):
        if "\n" not in value:
            return [f"{name}: {value}"]
        return [f"{name}: |", *(f"  {line}" for line in value.splitlines())]
    if value is None:
        return [f"{name}: null"]
    text = json.dumps(value, sort_keys=True, indent=2, ensure_ascii=False)
    return [f"{name}:", *(f"  {line}" for line in text.splitlines())]
