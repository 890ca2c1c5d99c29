"""The judgements of ``verify``: from what each connection saw to ✔/✘ checks.

Each ``check_*`` function appends its checks to a ``VerifyReport``; ``tool_problems`` is the one
rule for a served tool (valid JSON Schema, an object root, the parameters as authored).
"""

from __future__ import annotations

import copy
import json
import re
from collections.abc import Mapping, Sequence
from typing import Any

from jsonschema.exceptions import SchemaError as JsonSchemaError
from jsonschema.validators import Draft202012Validator, validator_for

from mcp_export.clients.entry import CLIENTS, ClientId, ExportEntry
from mcp_export.clients.verify_report import ModeResult, VerifiedTool, VerifyReport
from mcp_export.errors import ConfigurationError
from mcp_export.providers.factory import credentials_available, provider_for_agent
from schema_types.agent import Agent, ToolDefinition

__all__ = [
    "CONVERSATION_PROPERTY",
    "check_connections",
    "check_environment",
    "check_model",
    "check_tools",
    "tool_problems",
]

# The optional argument the server adds to tools declared with ``conversation: true``.
CONVERSATION_PROPERTY = "conversation_id"
_MODE_LABELS = {"legacy": "legacy handshake", "auto": "auto discovery"}
_ENV_REFERENCE = re.compile(r"env://([A-Za-z_][A-Za-z0-9_]*)")


def check_connections(report: VerifyReport, results: Sequence[ModeResult]) -> None:
    """One check per mode: connected (protocol, timings) or the reason it did not."""
    for result in results:
        label = f"connects ({_MODE_LABELS.get(result.mode, result.mode)})"
        if result.error is not None:
            report.add(label, False, result.error)
            continue
        report.protocols[result.mode] = result.protocol or "?"
        report.timings[f"{result.mode}.connect"] = result.connect_s
        report.timings[f"{result.mode}.list"] = result.list_s
        report.add(
            label,
            True,
            f"protocol {result.protocol}, connected in {result.connect_s:.2f} s, "
            f"tools listed in {result.list_s * 1000:.0f} ms",
        )


def check_tools(report: VerifyReport, agent: Agent, results: Sequence[ModeResult]) -> None:
    """serverInfo, instructions, the tool list and each tool's schema against the agent file."""
    good = [result for result in results if result.error is None]
    if not good:
        return
    first = good[0]
    report.tools = first.tools
    report.server_name, report.server_version = first.server_name, first.server_version
    report.instructions = first.instructions
    meta = agent.metadata
    same_info = (first.server_name, first.server_version) == (meta.name, meta.version)
    report.add(
        "serverInfo",
        same_info,
        f"{first.server_name} {first.server_version}"
        + ("" if same_info else f" (the agent file says {meta.name} {meta.version})"),
    )
    same_instructions = (first.instructions or None) == (meta.description or None)
    shown = _one_line(first.instructions) if first.instructions else "(none)"
    if not same_instructions:
        shown += f" (the agent's description is {_one_line(meta.description) or 'empty'!r})"
    report.add("instructions", same_instructions, shown)
    for other in good[1:]:
        if _listing(other.tools) != _listing(first.tools):
            names = ", ".join(tool.name for tool in other.tools) or "none"
            report.add("same tools in both modes", False, f"{other.mode} listed {names}")
    served = {tool.name: tool for tool in first.tools}
    authored = [tool.name for tool in agent.tools]
    missing = [name for name in authored if name not in served]
    extra = [name for name in served if name not in authored]
    detail = ", ".join(tool.name for tool in first.tools) or "none"
    if missing:
        detail += f"; missing: {', '.join(missing)}"
    if extra:
        detail += f"; not in the agent file: {', '.join(extra)}"
    count = len(first.tools)
    label = f"{count} tool{'' if count == 1 else 's'} listed"
    report.add(label, not missing and not extra, detail)
    for definition in agent.tools:
        tool = served.get(definition.name)
        if tool is None:
            continue
        problems = tool_problems(tool, definition)
        extra_note = f" (+ {CONVERSATION_PROPERTY})" if definition.conversation else ""
        ok_text = "inputSchema valid and as authored" + extra_note
        report.add(f"tool {tool.name}", not problems, "; ".join(problems) or ok_text)


def tool_problems(tool: VerifiedTool, definition: ToolDefinition) -> list[str]:
    """What is wrong with a served tool, compared with its definition (empty: nothing).

    The input schema must be valid JSON Schema (the meta-schema its ``$schema`` names, Draft
    2020-12 by default) with an object root and equal to the authored parameters, apart from the
    ``conversation_id`` property the server adds to conversation tools; an output schema, when
    given, must be valid too.
    """
    problems = _schema_problems(tool.input_schema, "inputSchema")
    if tool.output_schema is not None:
        problems += _schema_problems(tool.output_schema, "outputSchema")
    if tool.input_schema.get("type") != "object":
        problems.append("inputSchema: the root must be type: object")
    if _as_authored(tool.input_schema, definition.conversation) != definition.parameters:
        problems.append("inputSchema differs from the parameters in the agent file")
    return problems


def _listing(tools: list[VerifiedTool]) -> list[tuple[str, str]]:
    # Key order is not meaning: the two protocol paths serialise the same schema differently.
    return sorted((tool.name, json.dumps(tool.input_schema, sort_keys=True)) for tool in tools)


def _as_authored(schema: dict[str, Any], conversation: bool) -> dict[str, Any]:
    if not conversation:
        return schema
    result = copy.deepcopy(schema)
    properties = result.get("properties")
    if isinstance(properties, dict):
        properties.pop(CONVERSATION_PROPERTY, None)
    return result


def _schema_problems(schema: dict[str, Any], what: str) -> list[str]:
    validator = validator_for(schema, default=Draft202012Validator)
    try:
        validator.check_schema(schema)
    except JsonSchemaError as exc:
        where = "/".join(str(part) for part in exc.path) or "(root)"
        return [f"{what} is not valid JSON Schema at {where}: {exc.message}"]
    return []


def check_environment(
    report: VerifyReport, agent: Agent, entry: ExportEntry, environ: Mapping[str, str]
) -> None:
    """The variables the agent's own MCP servers need (the model's key is ``check_model``'s)."""
    provider = agent.settings.provider_id or ""
    model_names = {
        match.group(1)
        for value in agent.providers.get(provider, {}).values()
        for match in _ENV_REFERENCE.finditer(value)
    }
    for name in entry.env_names:
        if name in model_names:
            continue
        if environ.get(name):
            report.add(f"env {name}", True, "set here and passed to the server")
        else:
            report.add(f"env {name}", False, f"not set here: the agent reads env://{name}")


def check_model(
    report: VerifyReport, agent: Agent, client: ClientId, environ: Mapping[str, str]
) -> None:
    """Whether the served agent will have a model: its own credentials, or the client's.

    ``environ`` is what the server process is given, so the answer is the server's own.
    """
    info = CLIENTS[client]
    model = agent.settings.model
    if model == "sampling" or not model:
        what = "settings.model is 'sampling'" if model else "no settings.model"
        if info.sampling:
            report.add("model", True, f"{what}: the client's model, through MCP sampling")
        else:
            report.add(
                "model",
                False,
                f"{what}, but {info.label} does not offer MCP sampling: set a provider model "
                "(for example openai:gpt-4.1-mini) and its key",
            )
        return
    ok, reason = _credentials(agent, environ)
    if ok:
        report.add("model", True, f"{model}: credentials resolve")
    elif info.sampling:
        report.add("model", True, f"{model}: {reason}; {info.label} lends its model (sampling)")
    else:
        report.add("model", False, f"{model}: {reason}")


def _credentials(agent: Agent, environ: Mapping[str, str]) -> tuple[bool, str]:
    """Whether the agent's provider settings resolve, and if not the provider layer's reason."""
    if credentials_available(agent, env=environ):
        return True, ""
    try:
        provider_for_agent(agent, env=environ)  # only to hear why; nothing is connected
    except ConfigurationError as exc:
        return False, str(exc)
    return False, "its credentials are not set"  # pragma: no cover - the two agree


def _one_line(text: str, width: int = 70) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= width else flat[: width - 1] + "…"
