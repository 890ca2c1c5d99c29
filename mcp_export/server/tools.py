"""The tools a served agent offers: names, schemas and annotations, built from the agent files.

Cheap by design: this runs before the server answers its first request, so it reads only the
loaded agent models (no JSON-Schema compilation, no tool server started). What it decides:

- **Names.** Each tool definition is served under its own name. With several agent files, a
  name used by two agents is a start-up error (``ToolNameClash``, naming both files), unless
  ``prefix`` is set: then *every* tool is served as ``<agent-slug>__<tool>`` (the slug is the
  agent's name in lower case, runs of other characters turned into ``-``; ``Travel Desk`` →
  ``travel-desk__book_flight``), mirroring the ``server__tool`` names the agents' own tools get.
- **inputSchema** is the tool's ``parameters`` exactly as authored. A ``conversation: true`` tool
  gets one more optional property, ``conversation_id`` (a string).
- **outputSchema** is a typed tool's own (its ``outputSchema`` as authored: its answers are that
  object, ``server.typed_result``); for any other tool it describes the ``structuredContent`` of
  every successful call, the trace (``OUTPUT_SCHEMA``; conversation tools add
  ``conversationId``). A token count the model server did not report is ``null``: absent is not
  zero.
- **annotations**: as authored; where the author set none, derived from the agent's own tools
  (``derive_annotations``).
"""

from __future__ import annotations

import copy
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from mcp_export.errors import ConfigurationError
from mcp_export.versions.fingerprint import Version, tool_version

if TYPE_CHECKING:
    from mcp_export.server.stand_ins import StandIns
    from mcp_export.toolbox.agent_toolbox import ToolSpec
    from schema_types.agent import Agent, McpServerConfig, ToolDefinition

__all__ = [
    "CONVERSATION_ID",
    "OUTPUT_SCHEMA",
    "ServedAgent",
    "ServedTool",
    "ToolNameClash",
    "agent_slug",
    "build_catalogue",
    "derive_annotations",
    "output_schema",
]

CONVERSATION_ID = "conversation_id"
"""The argument a conversation tool takes to continue an earlier exchange."""

PREFIX_SEPARATOR = "__"

_CONVERSATION_PROPERTY: dict[str, Any] = {
    "type": "string",
    "description": (
        "Continue an earlier conversation with this tool: pass the conversationId of a previous "
        "answer. Omit it to start a new conversation."
    ),
}

_TOOL_CALL_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "name": {"type": "string", "description": "The inner tool, as server__tool."},
        "arguments": {"type": "object"},
        "isError": {"type": "boolean"},
        "durationMs": {"type": "number"},
    },
    "required": ["name", "arguments", "isError", "durationMs"],
}

# "An integer or unknown" as anyOf of single types: a type array (["integer", "null"]) is less
# portable (clients that map schemas onto a single-type dialect, such as Gemini's OpenAPI subset,
# may drop it), and strict checkers warn about it (the MCP Inspector's --strict).
_COUNT_OR_NULL: dict[str, Any] = {"anyOf": [{"type": "integer"}, {"type": "null"}]}

OUTPUT_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "answer": {"type": "string", "description": "The agent's final answer."},
        "toolCalls": {
            "type": "array",
            "description": "The agent's own tool calls, in the order the model asked for them.",
            "items": _TOOL_CALL_SCHEMA,
        },
        "usage": {
            "type": "object",
            "description": (
                "Tokens over all model requests of the call; null where the model server did "
                "not report a count (not zero), and where a request left its count out (the "
                "sum of the others, a lower bound, is in _meta io.metaagent/run)."
            ),
            "properties": {"inputTokens": _COUNT_OR_NULL, "outputTokens": _COUNT_OR_NULL},
            "required": ["inputTokens", "outputTokens"],
        },
        "durationMs": {"type": "number"},
        "turns": {"type": "integer", "description": "Model requests the call took."},
        "unavailableServers": {
            "type": "object",
            "description": "The agent's tool servers that could not be used, with why.",
            "additionalProperties": {"type": "string"},
        },
    },
    "required": ["answer", "toolCalls", "usage", "durationMs"],
}
"""The ``outputSchema`` of every served tool (see ``output_schema`` for conversation tools)."""


def output_schema(conversation: bool) -> dict[str, Any]:
    """The ``outputSchema`` of a tool (a fresh copy); conversation tools also return
    ``conversationId``."""
    schema = copy.deepcopy(OUTPUT_SCHEMA)
    if conversation:
        schema["properties"]["conversationId"] = {
            "type": "string",
            "description": "Pass it back as conversation_id to continue this conversation.",
        }
    return schema


# The listing's entries share these (they are only read: serialized for the wire), so listing
# 500 tools does not copy the output schema 500 times.
_LISTED_OUTPUT_SCHEMAS = {False: output_schema(False), True: output_schema(True)}


class ToolNameClash(ConfigurationError):
    """Two served agents offer a tool of the same name (and ``--prefix`` was not given)."""


@dataclass(frozen=True)
class ServedAgent:
    """One agent file being served.

    Attributes:
        agent: the loaded agent.
        path: the agent file (absolute), recorded with history runs and named in errors.
        stand_ins: what answers in place of the agent's provider and tool servers (a test
            case's recording, replay or mocks: ``testing.replay``); None: the real ones.
    """

    agent: Agent
    path: Path
    stand_ins: StandIns | None = None

    @property
    def base_dir(self) -> Path:
        """Where the agent's relative paths (tool server commands, cwd) start."""
        return self.path.parent


@dataclass
class ServedTool:
    """One tool as the server offers it.

    Attributes:
        name: the served name (prefixed with ``--prefix``).
        owner: the agent it belongs to.
        definition: the tool definition from the agent file.
        input_schema: the served ``inputSchema``: the authored parameters themselves, or for
            a conversation tool a copy with ``conversation_id`` added. Read it, never change it.
        authored_annotations: the annotations written in the agent file, or None.
    """

    name: str
    owner: ServedAgent
    definition: ToolDefinition
    input_schema: dict[str, Any]
    authored_annotations: dict[str, Any] | None = None
    _listing: dict[str, Any] | None = field(default=None, repr=False)
    _version: Version | None = field(default=None, repr=False)

    @property
    def version(self) -> Version:
        """The version of the tool served (``versions/fingerprint.py``), made once."""
        if self._version is None:
            self._version = tool_version(self.owner.agent, self.definition)
        return self._version

    @property
    def fingerprint(self) -> str:
        """The fingerprint of :attr:`version`."""
        return self.version.fingerprint

    @property
    def conversation(self) -> bool:
        """Whether calls may continue an earlier conversation."""
        return self.definition.conversation

    @property
    def title(self) -> str:
        """The title clients show: as authored, else made from the name (``Book flight``)."""
        return self.definition.title or _title_from_name(self.definition.name)

    def listing(self, inner_tools: Sequence[ToolSpec] | None) -> dict[str, Any]:
        """This tool's ``tools/list`` entry as wire JSON.

        Args:
            inner_tools: the agent's allowed inner tools when they are known (the agent's tool
                servers have been started by a call), else None.
        """
        if self.authored_annotations is not None or inner_tools is None:
            if self._listing is None:
                self._listing = self._build(inner_tools)
            return self._listing
        return self._build(inner_tools)

    def _build(self, inner_tools: Sequence[ToolSpec] | None) -> dict[str, Any]:
        definition = self.definition
        entry: dict[str, Any] = {
            "name": self.name,
            "title": self.title,
            "description": definition.description,
            "inputSchema": self.input_schema,
            "outputSchema": (
                _LISTED_OUTPUT_SCHEMAS[self.conversation]
                if definition.output_schema is None
                else definition.output_schema
            ),
        }
        annotations = self.authored_annotations
        if annotations is None:
            annotations = derive_annotations(self.owner.agent, inner_tools)
        if annotations:
            entry["annotations"] = annotations
        return entry


def _title_from_name(name: str) -> str:
    """A readable title for a tool without one: ``book_flight`` → ``Book flight``."""
    words = re.sub(r"[_.\-]+", " ", name).strip()
    return words[:1].upper() + words[1:] if words else name


def agent_slug(agent: Agent) -> str:
    """The agent's name as a tool-name prefix: ``Travel Desk`` → ``travel-desk``."""
    slug = re.sub(r"[^a-z0-9]+", "-", agent.metadata.name.lower()).strip("-")
    return slug or "agent"


def _served_input_schema(served: ServedAgent, tool: ToolDefinition) -> dict[str, Any]:
    if not tool.conversation:
        return tool.parameters  # only read (serialized for the wire): no copy needed
    properties = tool.parameters.get("properties", {})
    if not isinstance(properties, dict):
        raise ConfigurationError(
            f"{served.path}: tool {tool.name!r}: parameters.properties must be an object"
        )
    if CONVERSATION_ID in properties:
        raise ConfigurationError(
            f"{served.path}: tool {tool.name!r} has conversation: true and its own parameter "
            f"{CONVERSATION_ID!r}; rename that parameter (the server adds {CONVERSATION_ID!r} to "
            "continue conversations)"
        )
    # Only the two objects that gain the property are copied: what they hold is shared with the
    # authored parameters, which are only read too.
    conversation_id = dict(_CONVERSATION_PROPERTY)
    return {**tool.parameters, "properties": {**properties, CONVERSATION_ID: conversation_id}}


def _authored_annotations(served: ServedAgent, tool: ToolDefinition) -> dict[str, Any] | None:
    raw = tool.annotations
    if raw is None:
        return None
    if not isinstance(raw, Mapping):
        raise ConfigurationError(
            f"{served.path}: tool {tool.name!r}: annotations must be an object"
        )
    for key, value in raw.items():
        if key.endswith("Hint") and not isinstance(value, bool):
            raise ConfigurationError(
                f"{served.path}: tool {tool.name!r}: annotations.{key} must be true or false"
            )
    return dict(raw)


def build_catalogue(agents: Sequence[ServedAgent], *, prefix: bool) -> dict[str, ServedTool]:
    """Every tool of every agent, by served name, in file order.

    Raises:
        ToolNameClash: two agents offer the same tool name and ``prefix`` is false (the message
            names both files and suggests ``--prefix``).
        ConfigurationError: a tool cannot be served as written (the message says why).
    """
    catalogue: dict[str, ServedTool] = {}
    for served in agents:
        slug = agent_slug(served.agent)
        for tool in served.agent.tools:
            name = f"{slug}{PREFIX_SEPARATOR}{tool.name}" if prefix else tool.name
            other = catalogue.get(name)
            if other is not None:
                if prefix:
                    detail = (
                        f"the agents in {other.owner.path} and {served.path} have the same "
                        f"name slug {slug!r} and both define tool {tool.name!r}; rename one agent"
                    )
                else:
                    detail = (
                        f"tool {tool.name!r} is defined by both {other.owner.path} and "
                        f"{served.path}; rename one of them, or serve with --prefix to name "
                        "every tool <agent>__<tool>"
                    )
                raise ToolNameClash(detail)
            catalogue[name] = ServedTool(
                name=name,
                owner=served,
                definition=tool,
                input_schema=_served_input_schema(served, tool),
                authored_annotations=_authored_annotations(served, tool),
            )
    return catalogue


def _may_allow_any(config: McpServerConfig, policy: str) -> bool:
    """Whether a tool of this server could be allowed under ``policy``, judged from the file."""
    if policy == "always":
        return False
    if policy == "never" or config.server_tool_defaults.permission_required is False:
        return True
    return any(s.include and s.permission_required is False for s in config.tools.values())


def derive_annotations(agent: Agent, inner_tools: Sequence[ToolSpec] | None) -> dict[str, Any]:
    """Annotations for a tool of ``agent`` whose author set none.

    A served call runs a model and the agent's *allowed* inner tools, so the call is as safe as
    the least safe of them:

    - no inner tool can run (``toolPermission: always``, no servers, every tool needs
      permission): read-only, not destructive, not open-world (the model alone touches nothing);
    - ``readOnlyHint`` only if every allowed inner tool says it is read-only;
    - ``destructiveHint`` false only if every allowed inner tool says it is read-only or not
      destructive;
    - ``openWorldHint`` if any allowed inner tool is open-world (an unset hint counts as
      open-world, as in the MCP specification) or any server is reached over HTTP.

    ``idempotentHint`` is never claimed: model answers vary from call to call.

    Args:
        agent: the agent.
        inner_tools: the allowed inner tools when known; None when the agent's tool servers have
            not been started yet. Then only what the file tells is claimed (open-world for an
            HTTP server) and the rest is left to the specification's cautious defaults.
    """
    policy = agent.settings.tool_permission
    servers = {n: c for n, c in agent.mcp_servers.items() if _may_allow_any(c, policy)}
    if not servers:
        return {"readOnlyHint": True, "destructiveHint": False, "openWorldHint": False}
    remote = any(c.type != "stdio" for c in servers.values())
    if inner_tools is None:
        return {"openWorldHint": True} if remote else {}
    if not inner_tools:
        return {"readOnlyHint": True, "destructiveHint": False, "openWorldHint": remote}

    def hint(spec: ToolSpec, key: str) -> Any:
        return (spec.annotations or {}).get(key)

    read_only = all(hint(s, "readOnlyHint") is True for s in inner_tools)
    harmless = all(
        hint(s, "readOnlyHint") is True or hint(s, "destructiveHint") is False for s in inner_tools
    )
    open_world = remote or any(hint(s, "openWorldHint") is not False for s in inner_tools)
    return {"readOnlyHint": read_only, "destructiveHint": not harmless, "openWorldHint": open_world}
