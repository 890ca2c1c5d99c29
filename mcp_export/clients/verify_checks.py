"""The judgements of ``verify``: from what each connection saw to ✔/✘ checks.

Each ``check_*`` function appends its checks to a ``VerifyReport``; ``tool_problems`` is the one
rule for a served tool (valid JSON Schema, an object root, the parameters as authored). The
environment and model checks judge the environment the launched server gets
(``ClientLaunch.process_env``), never this process's own: a key set here but written empty in the
client's config is a key the server does not have.
"""

from __future__ import annotations

import copy
import json
import os
import re
from collections.abc import Mapping, Sequence
from typing import Any

from jsonschema.exceptions import SchemaError as JsonSchemaError
from jsonschema.validators import Draft202012Validator, validator_for

from mcp_export.clients.entry import CLIENTS, ClientId, ExportEntry
from mcp_export.clients.launch import ClientLaunch
from mcp_export.clients.verify_call import CallOutcome
from mcp_export.clients.verify_report import Fill, ModeResult, VerifiedTool, VerifyReport
from mcp_export.errors import ConfigurationError
from mcp_export.providers.factory import credentials_available, provider_for_agent
from mcp_export.providers.kinds import PROVIDER_KINDS
from schema_types.agent import Agent, ToolDefinition

__all__ = [
    "CONVERSATION_PROPERTY",
    "check_call",
    "check_command",
    "check_connections",
    "check_environment",
    "check_model",
    "check_tools",
    "render_fill",
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
        if definition.output_schema is not None:
            ok_text += "; outputSchema as authored (a typed tool)"
        report.add(f"tool {tool.name}", not problems, "; ".join(problems) or ok_text)


def tool_problems(tool: VerifiedTool, definition: ToolDefinition) -> list[str]:
    """What is wrong with a served tool, compared with its definition (empty: nothing).

    The input schema must be valid JSON Schema (the meta-schema its ``$schema`` names, Draft
    2020-12 by default) with an object root and equal to the authored parameters, apart from the
    ``conversation_id`` property the server adds to conversation tools; an output schema, when
    given, must be valid too, and a typed tool's must be its authored ``outputSchema`` (an
    object schema, as MCP requires: the client checks ``structuredContent`` against it).
    """
    problems = _schema_problems(tool.input_schema, "inputSchema")
    if tool.output_schema is not None:
        problems += _schema_problems(tool.output_schema, "outputSchema")
    if definition.output_schema is not None:
        if tool.output_schema != definition.output_schema:
            problems.append("outputSchema differs from the outputSchema in the agent file")
        elif tool.output_schema.get("type") != "object":
            problems.append("outputSchema: MCP requires the root to be type: object")
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


def check_command(report: VerifyReport, launch: ClientLaunch) -> bool:
    """Whether the entry's command can be started; a failed check says why when it cannot."""
    if launch.find_command() is not None:
        return True
    command = launch.command
    path = launch.process_env().get("PATH", "")
    if not command:
        why = f"the entry {launch.key_path()} has no command"
    elif os.sep in command or (os.altsep is not None and os.altsep in command):
        exists = os.path.exists(command)
        why = f"{command} {'is not an executable file' if exists else 'does not exist'}"
    else:
        why = f"{command!r} is not on the PATH the server gets ({path or 'no PATH'})"
    where = f" ({launch.key_path('command')} in {launch.source})" if launch.source else ""
    report.add("command", False, f"{why}{where}: {launch.label} cannot start the server")
    return False


def check_environment(
    report: VerifyReport, agent: Agent, entry: ExportEntry, launch: ClientLaunch
) -> None:
    """Each variable the agent reads: whether the server gets a value, else what to fill where.

    A missing key of the agent's model is no problem for a client that lends its own model
    (sampling); everything else the agent reads must reach the server.
    """
    written = launch.written_env
    environ = launch.process_env()
    model_keys = _model_key_names(agent)
    samples = CLIENTS[launch.client].sampling
    for name in entry.env_names:
        if environ.get(name):
            source = written.get(name, "")
            how = "written in the entry" if source == environ[name] else f"from {source}"
            if name not in written:
                how = f"from {launch.label}'s own environment"
            report.add(f"env {name}", True, f"passed to the server ({how})")
            continue
        if name in model_keys and samples:
            report.add(
                f"env {name}",
                True,
                f"not set: {launch.label} lends its own model (sampling) instead",
            )
            continue
        fill = _fill(agent, launch, name, written.get(name), model_keys)
        report.fills.append(fill)
        report.add(f"env {name}", False, render_fill(fill, launch))


def render_fill(fill: Fill, launch: ClientLaunch) -> str:
    """What is wrong with a value, how to fill it in, and the way that needs no editing."""
    written = launch.written_env.get(fill.name)
    if written is None or not written.strip():
        fix = "fill in the value there"
    else:
        fix = f"set {', '.join(launch.unset) or fill.name} where {launch.label} is started"
    places = " and ".join(fill.agent_paths) or f"the agent's reference to {fill.name}"
    studio = " (the studio's Model page stores the key and writes it)" if fill.provider else ""
    keyring = (
        f"or, with no editing: keep it in the keyring and write keyring://SERVICE/NAME at "
        f"{places} in the agent file{studio}; the entry then needs no {fill.name}"
    )
    return f"{fill.problem}\n{fix}\n{keyring}"


def _fill(
    agent: Agent,
    launch: ClientLaunch,
    name: str,
    written: str | None,
    model_keys: dict[str, str],
) -> Fill:
    key_path = launch.key_path("env", name)
    file = launch.source or launch.config_file
    if launch.source is not None:
        where = f"in {launch.source} at {key_path}"
    elif file is not None:
        where = f"in the entry at {key_path} (not installed in {file} yet)"
    else:
        where = f"in the entry at {key_path}"
    if written is None:
        problem = f"not in the entry's env ({key_path} is missing): the server never gets it"
    elif not written.strip():
        problem = f"empty {where}: {launch.label} passes it as written"
    else:
        problem = (
            f"{written} {where}, and it is not set here: {launch.label} reads it from the "
            "environment it is started in"
        )
    return Fill(
        name=name,
        config_file=file,
        key_path=key_path,
        problem=problem,
        agent_paths=_agent_paths(agent, name, model_keys),
        provider=model_keys.get(name),
    )


def _model_key_names(agent: Agent) -> dict[str, str]:
    """The variables the model's key is read from, each with the provider id."""
    provider = agent.settings.provider_id or ""
    kind = PROVIDER_KINDS.get(provider)
    if kind is None:
        return {}
    names = {
        match.group(1): provider
        for key, value in agent.providers.get(provider, {}).items()
        if key in kind.key_names
        for match in _ENV_REFERENCE.finditer(value)
    }
    if not any(agent.providers.get(provider, {}).get(key) for key in kind.key_names):
        names[kind.key_names[0]] = provider  # read from the environment when the agent is silent
    return names


def _agent_paths(agent: Agent, name: str, model_keys: dict[str, str]) -> tuple[str, ...]:
    """Where the agent file reads the variable (where a keyring reference would go)."""
    reference = f"env://{name}"
    paths = [
        f"providers.{provider}.{key}"
        for provider, values in agent.providers.items()
        for key, value in values.items()
        if reference in value
    ]
    for server_name, server in agent.mcp_servers.items():
        for section, values in (("env", server.env), ("headers", server.headers)):
            paths += [
                f"mcpServers.{server_name}.{section}.{key}"
                for key, value in values.items()
                if reference in value
            ]
    provider = model_keys.get(name)
    if not paths and provider is not None:
        paths.append(f"providers.{provider}.{PROVIDER_KINDS[provider].key_names[0]}")
    return tuple(paths)


def check_model(
    report: VerifyReport, agent: Agent, client: ClientId, environ: Mapping[str, str]
) -> None:
    """Whether the served agent will have a model: its own credentials, or the client's.

    ``environ`` is the whole environment the server process is given, so the answer is the
    server's own.
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
        report.add("model", True, f"{model}: credentials resolve in the server's environment")
    elif info.sampling:
        report.add("model", True, f"{model}: {reason}; {info.label} lends its model (sampling)")
    else:
        report.add("model", False, f"{model}: {reason}")


def check_call(report: VerifyReport, outcome: CallOutcome) -> None:
    """The real call: answered, or what the client would have seen instead."""
    report.call = outcome
    report.checks = [check for check in report.checks if not check.label.startswith("call ")]
    label = f"call {outcome.plan.tool}"
    if not outcome.tried:
        report.add(label, True, outcome.text)
    elif outcome.ok:
        report.add(label, True, f"answered in {outcome.seconds:.1f} s")
    elif outcome.is_error:
        report.add(label, False, f"an isError result after {outcome.seconds:.1f} s")
    else:
        report.add(label, False, f"no result after {outcome.seconds:.1f} s")


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
