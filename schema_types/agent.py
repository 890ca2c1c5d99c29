"""The agent model: an agent file's content as pydantic objects.

Laid out like the agent files of the seed design (tsagent), so agents move between the two::

    metadata: {name, version, description, mode, tools: [ToolDefinition…]}
    settings: {model, maxChatTurns, maxOutputTokens, temperature, topP, toolPermission,
               toolsAsPrompts, …}
    systemPrompt: str
    providers: {provider id: {KEY: value or reference}}
    mcpServers: {server name: McpServerConfig}

Every model keeps keys it does not know (``extra="allow"``) so files written by other tools survive
a load/save round trip. Python names are snake_case; the file uses camelCase (aliases). Dumps use
``exclude_unset`` so a key absent from the file stays absent when saved.
"""

from __future__ import annotations

import re
from typing import Any, Literal

from pydantic import Field, field_validator, model_validator

from schema_types.access import AccessSettings
from schema_types.cases import TestCase
from schema_types.file_model import FileModel
from schema_types.prices import ModelPrice

__all__ = [
    "CALLER_MAX_OUTPUT_TOKENS",
    "DEFAULT_TIMEOUT_SECONDS",
    "TIMEOUT_SETTING",
    "TOOL_NAME_PATTERN",
    "Agent",
    "AgentMetadata",
    "AgentMode",
    "AgentSettings",
    "CallerSettings",
    "McpServerConfig",
    "McpToolSetting",
    "ToolCache",
    "ToolDefinition",
    "ToolPermission",
]

# MCP tool names: 1–128 characters of letters, digits, underscore, hyphen and dot.
TOOL_NAME_PATTERN = re.compile(r"^[A-Za-z0-9_.\-]{1,128}$")

CALLER_MAX_OUTPUT_TOKENS = 1024
"""``settings.callers.maxOutputTokens`` when the file says nothing."""
DEFAULT_TIMEOUT_SECONDS = 120.0
"""``settings.timeoutSeconds`` when the file says nothing: how long a run may take, and so how
long it waits for its model to start answering or to send its next piece."""
TIMEOUT_SETTING = "settings.timeoutSeconds"
"""That setting as messages name it (the file's spelling)."""

AgentMode = Literal["interactive", "autonomous", "tools"]
ToolPermission = Literal["never", "tool", "always"]
ServerType = Literal["stdio", "streamable-http", "sse"]


def _empty_parameters() -> dict[str, Any]:
    return {"type": "object", "properties": {}}


class ToolCache(FileModel):
    """A tool's cached results (``cache`` under the tool): an answer is kept ``ttl_seconds``
    (``ttlSeconds``) and given again to a call with the same arguments while the tool, the system
    prompt, the model and its settings stay as they were. Conversation tools never use it."""

    ttl_seconds: float = Field(gt=0, le=365 * 24 * 3600)


class ToolDefinition(FileModel):
    """One MCP tool the agent exposes: a name, a description, parameters and a prompt template.

    ``parameters`` is the plain JSON Schema object exactly as authored (served as ``inputSchema``);
    the typed nodes of ``schema_types.schema.nodes`` are a view over it for the editor.
    ``output_schema`` (``outputSchema`` in the file), when set, is the JSON Schema of the data
    the tool answers with (served as the tool's ``outputSchema``, its answer as
    ``structuredContent``); None: the tool answers text. ``cache``, when set, keeps its answers
    for a while (:class:`ToolCache`).
    """

    name: str
    description: str = ""
    title: str | None = None
    parameters: dict[str, Any] = Field(default_factory=_empty_parameters)
    prompt: str = ""
    annotations: dict[str, Any] | None = None
    conversation: bool = False
    output_schema: dict[str, Any] | None = None
    cache: ToolCache | None = None
    tests: list[TestCase] = Field(default_factory=lambda: list[TestCase]())

    @field_validator("name")
    @classmethod
    def _check_name(cls, value: str) -> str:
        if not TOOL_NAME_PATTERN.fullmatch(value):
            raise ValueError(
                f"tool name {value!r} is not valid for MCP: use 1 to 128 letters, digits, "
                "'_', '-' or '.'"
            )
        return value

    @field_validator("tests")
    @classmethod
    def _unique_case_names(cls, value: list[TestCase]) -> list[TestCase]:
        seen: set[str] = set()
        for case in value:
            if case.name in seen:
                raise ValueError(
                    f"two test cases are named {case.name!r}: case names must be unique per tool"
                )
            seen.add(case.name)
        return value

    def case(self, name: str) -> TestCase | None:
        """The test case called ``name``, or None."""
        return next((case for case in self.tests if case.name == name), None)


class AgentMetadata(FileModel):
    """``metadata``: who the agent is (served as MCP serverInfo and instructions) and its tools."""

    name: str = "Untitled agent"
    version: str = "1.0.0"
    description: str = ""
    mode: AgentMode = "tools"
    tools: list[ToolDefinition] = Field(default_factory=lambda: list[ToolDefinition]())

    @model_validator(mode="after")
    def _unique_tool_names(self) -> AgentMetadata:
        seen: set[str] = set()
        for tool in self.tools:
            if tool.name in seen:
                raise ValueError(f"two tools are named {tool.name!r}: tool names must be unique")
            seen.add(tool.name)
        return self

    def tool(self, name: str) -> ToolDefinition | None:
        """The tool called ``name``, or None."""
        return next((t for t in self.tools if t.name == name), None)


class AgentSettings(FileModel):
    """``settings``: the model and its parameters, loop bounds and the tool permission policy.

    ``model`` is ``provider:model`` (``openai:gpt-4.1-mini``, ``ollama:llama3.2``,
    ``anthropic:claude-sonnet-4-5``) or ``sampling`` (the calling MCP client's model).

    ``tools_as_prompts`` (``toolsAsPrompts`` in the file) also serves every tool as an MCP prompt
    of the same name: ``prompts/get`` answers the system prompt and the filled template, for a
    client that runs them on its own model. Off unless set, as it shows the system prompt and
    the templates to whoever connects.
    """

    model: str | None = None
    max_chat_turns: int = Field(default=10, ge=1, le=1000)
    max_output_tokens: int | None = Field(default=None, ge=1)
    temperature: float | None = Field(default=None, ge=0, le=2)
    top_p: float | None = Field(default=None, ge=0, le=1)
    stop: list[str] | None = None
    seed: int | None = None
    presence_penalty: float | None = None
    frequency_penalty: float | None = None
    response_format: dict[str, Any] | str | None = None
    tool_choice: str | None = None
    timeout_seconds: float = Field(default=DEFAULT_TIMEOUT_SECONDS, gt=0)
    tool_permission: ToolPermission = "tool"
    tools_as_prompts: bool = False
    callers: CallerSettings = Field(default_factory=lambda: CallerSettings())
    """How caller cases (cases with ``ask``) set up the caller model: :class:`CallerSettings`."""
    access: AccessSettings = Field(default_factory=lambda: AccessSettings())
    """What a shared HTTP server lets each caller do: :class:`AccessSettings`."""
    prices: dict[str, ModelPrice] = Field(default_factory=lambda: dict[str, ModelPrice]())
    """What each ``provider:model`` costs (:class:`schema_types.prices.ModelPrice`); an entry
    here wins over the price table of Preferences."""

    @property
    def provider_id(self) -> str | None:
        """The provider part of ``model`` (``openai`` in ``openai:gpt-4.1``), or None."""
        if not self.model:
            return None
        return self.model.split(":", 1)[0] if ":" in self.model else self.model

    @property
    def model_name(self) -> str | None:
        """The model part of ``model`` (``gpt-4.1`` in ``openai:gpt-4.1``), or None."""
        if not self.model or ":" not in self.model:
            return None
        return self.model.split(":", 1)[1]


class McpToolSetting(FileModel):
    """Per-tool setting of an MCP server the agent uses."""

    permission_required: bool | None = None
    include: bool = True


class McpServerConfig(FileModel):
    """An MCP server the agent itself uses (stdio, streamable HTTP or SSE)."""

    type: ServerType = "stdio"
    command: str | None = None
    args: list[str] = Field(default_factory=lambda: list[str]())
    env: dict[str, str] = Field(default_factory=lambda: dict[str, str]())
    cwd: str | None = None
    url: str | None = None
    headers: dict[str, str] = Field(default_factory=lambda: dict[str, str]())
    startup_timeout_seconds: float | None = Field(default=None, gt=0, le=600)
    """How long the server may take to start and list its tools; None: the runtime's default."""
    server_tool_defaults: McpToolSetting = Field(default_factory=McpToolSetting)
    tools: dict[str, McpToolSetting] = Field(default_factory=lambda: dict[str, McpToolSetting]())

    @model_validator(mode="after")
    def _check_transport(self) -> McpServerConfig:
        if self.type == "stdio" and not self.command:
            raise ValueError("a stdio server needs a 'command'")
        if self.type != "stdio" and not self.url:
            raise ValueError(f"a {self.type} server needs a 'url'")
        return self

    def permission_required(self, tool_name: str) -> bool:
        """Whether calling ``tool_name`` needs a person's permission.

        The tool's own setting wins, else the server default; with neither the tool counts as
        permission-required (the safe default).
        """
        own = self.tools.get(tool_name)
        if own is not None and own.permission_required is not None:
            return own.permission_required
        default = self.server_tool_defaults.permission_required
        return True if default is None else default

    def included(self, tool_name: str) -> bool:
        """Whether ``tool_name`` is offered to the model at all."""
        own = self.tools.get(tool_name)
        return True if own is None else own.include


class CallerSettings(FileModel):
    """``settings.callers``: what a caller model sees in the agent's caller cases.

    A caller case (a test case with ``ask``) gives its request to a caller model with our tool
    list plus decoys, the other tools a real client would offer beside ours::

        settings:
          callers:
            models: [openai:gpt-4.1-mini, ollama:qwen3]  # default: the agent's own model
            systemPrompt: You are a helpful assistant.   # default: a short neutral prompt
            decoys: [calendar, mail]      # bundled common tool sets; default all; [] none
            decoyAgents: [../crm.agent.yaml]             # tools of other agent files
            decoyServers:                                # real MCP servers, listed live
              time: {command: mcp-server-time}
            maxOutputTokens: 1024         # the caller's answer at most; default 1024

    Attributes:
        models: the caller models (``provider:model`` of the agent's providers) a run uses
            when it names none; empty: the model that serves the calls.
        system_prompt: the caller model's system prompt (a client's own, to reproduce it);
            None: a short neutral assistant prompt.
        decoys: names of the bundled common tool sets offered as decoys (``calendar``,
            ``mail``, ``web``, ``files``); None: all of them.
        decoy_agents: agent files (relative to this one) whose tools are offered as decoys.
        decoy_servers: MCP servers whose tools, as they list them, are offered as decoys (never
            called).
        max_output_tokens: the most tokens a caller model's answer may have. A caller answers
            with a tool call or a few words; the bound matters on a local server, which has no
            limit of its own (llama-server generates until the model stops or its context is
            full): without it a model that rambles holds the case until its time limit.
    """

    models: list[str] = Field(default_factory=lambda: list[str]())
    system_prompt: str | None = None
    decoys: list[str] | None = None
    decoy_agents: list[str] = Field(default_factory=lambda: list[str]())
    decoy_servers: dict[str, McpServerConfig] = Field(
        default_factory=lambda: dict[str, McpServerConfig]()
    )
    max_output_tokens: int = Field(default=CALLER_MAX_OUTPUT_TOKENS, ge=1)


AgentSettings.model_rebuild()


_TYPED_SETTINGS = frozenset({"stream", "maxConcurrentRequests"})
"""Provider settings whose natural YAML is a boolean or a number (the others are addresses, keys
and references: text)."""


def _setting_text(value: Any) -> Any:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    return value


class Agent(FileModel):
    """A whole agent file."""

    metadata: AgentMetadata = Field(default_factory=AgentMetadata)
    settings: AgentSettings = Field(default_factory=AgentSettings)
    system_prompt: str = ""
    providers: dict[str, dict[str, str]] = Field(
        default_factory=lambda: dict[str, dict[str, str]]()
    )
    mcp_servers: dict[str, McpServerConfig] = Field(
        default_factory=lambda: dict[str, McpServerConfig]()
    )

    @field_validator("providers", mode="before")
    @classmethod
    def _scalar_settings_as_text(cls, value: Any) -> Any:
        """``stream: false`` and ``maxConcurrentRequests: 4`` written without quotes read as the
        strings every provider setting is (``"false"``, ``"4"``)."""
        if not isinstance(value, dict):
            return value
        out: dict[Any, Any] = {}
        for provider_id, values in value.items():
            if isinstance(values, dict):
                values = {
                    key: _setting_text(item) if key in _TYPED_SETTINGS else item
                    for key, item in values.items()
                }
            out[provider_id] = values
        return out

    @property
    def tools(self) -> list[ToolDefinition]:
        """The tool definitions (``metadata.tools``)."""
        return self.metadata.tools
