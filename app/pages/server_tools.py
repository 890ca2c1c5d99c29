# ruff: noqa: N802  (Qt virtual method names are camelCase)
"""The tools of the agent's MCP servers as the studio knows them, and what a served call may use.

- :class:`ProbeCache`: the last "Connect" result of each server of one document (tools with their
  descriptions, or the error and the server's stderr). Shared by the MCP servers page and the
  Model page through :func:`probe_cache`; kept only while the studio runs.
- :func:`tool_verdicts` / :func:`usable_summary`: which known tools a served call can use and why
  the others are hidden — the runtime's own rule (``AgentToolbox.hidden_reason``), applied to the
  probed tools without starting anything.
- :class:`ServerToolsModel`: one server's tools as a table whose "Include" and "Needs permission"
  columns edit ``mcpServers.<name>.tools.<tool>`` through the document (undoable);
  :func:`include_all` includes or leaves out every listed tool of a server as one undo step.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import (
    QAbstractTableModel,
    QModelIndex,
    QObject,
    QPersistentModelIndex,
    Qt,
    Signal,
)

from app.document.agent_document import AgentDocument, FieldPath, touches
from schema_types.agent import Agent, McpToolSetting

if TYPE_CHECKING:
    from mcp_export.toolbox.agent_toolbox import ProbedTool, ProbeResult

__all__ = [
    "ProbeCache",
    "ServerToolsModel",
    "ToolVerdict",
    "include_all",
    "probe_cache",
    "set_tool_setting",
    "tool_verdicts",
    "usable_summary",
]

AnyIndex = QModelIndex | QPersistentModelIndex


class ProbeCache(QObject):
    """The last probe result of each server of one document, by server name.

    Signals:
        updated(server name): a result was stored or dropped.
    """

    updated = Signal(str)

    def __init__(self, document: AgentDocument) -> None:
        super().__init__(document)
        self.setObjectName("probeCache")
        self.results: dict[str, ProbeResult] = {}

    def store(self, server: str, result: ProbeResult) -> None:
        """Keep ``result`` as what ``server`` offers now."""
        self.results[server] = result
        self.updated.emit(server)

    def drop(self, server: str) -> None:
        """Forget ``server`` (its configuration changed, or it was removed)."""
        if self.results.pop(server, None) is not None:
            self.updated.emit(server)

    def tools(self, server: str) -> tuple[ProbedTool, ...]:
        """The tools ``server`` listed at its last successful connection (empty when none)."""
        result = self.results.get(server)
        return result.tools if result is not None and result.ok else ()


def probe_cache(document: AgentDocument) -> ProbeCache:
    """The document's probe cache (created on first use; it lives as long as the document)."""
    found = document.findChild(ProbeCache, "probeCache")
    return found if isinstance(found, ProbeCache) else ProbeCache(document)


@dataclass(frozen=True)
class ToolVerdict:
    """Whether a served call may use one known tool, and if not, why."""

    server: str
    tool: str
    description: str
    permission_required: bool
    included: bool
    hidden_reason: str | None

    @property
    def usable(self) -> bool:
        """True when a served call is offered this tool."""
        return self.hidden_reason is None


def tool_verdicts(agent: Agent, cache: ProbeCache) -> tuple[list[ToolVerdict], list[str]]:
    """The verdict on every tool the cache knows, and the servers whose tools are unknown.

    Returns:
        ``(verdicts in the agent file's server order, names of servers not connected yet or
        that failed to start)``.
    """
    verdicts: list[ToolVerdict] = []
    unknown = [name for name in agent.mcp_servers if name not in cache.results]
    unknown += [name for name, r in cache.results.items() if not r.ok and name in agent.mcp_servers]
    if not any(cache.tools(name) for name in agent.mcp_servers):
        return verdicts, unknown
    # Imported only once something was probed (mcp is already loaded then): importing it costs ~1 s.
    from mcp_export.toolbox.agent_toolbox import AgentToolbox, ToolSpec, provider_tool_name

    toolbox = AgentToolbox(agent)  # builds no connection until a tool is used; none is here
    for server, config in agent.mcp_servers.items():
        for tool in cache.tools(server):
            spec = ToolSpec(
                name=provider_tool_name(server, tool.name),
                server=server,
                tool=tool.name,
                description=tool.description,
                input_schema=tool.input_schema,
                annotations=tool.annotations,
                permission_required=config.permission_required(tool.name),
            )
            verdicts.append(
                ToolVerdict(
                    server,
                    tool.name,
                    tool.description,
                    spec.permission_required,
                    config.included(tool.name),
                    toolbox.hidden_reason(spec),
                )
            )
    return verdicts, unknown


def usable_summary(
    agent: Agent, cache: ProbeCache, *, detailed: bool = True, where: str = ""
) -> str:
    """How many known tools a served call can use, and why the others are hidden (plain text).

    Args:
        detailed: list each hidden tool with the reason.
        where: where to press Connect, for servers not counted yet (" on the MCP servers page").
    """
    policy = agent.settings.tool_permission
    if not agent.mcp_servers:
        return "The agent uses no MCP servers, so a served call has no inner tools."
    verdicts, unknown = tool_verdicts(agent, cache)
    lines: list[str] = []
    if verdicts:
        usable = sum(1 for v in verdicts if v.usable)
        lines.append(
            f"{usable} of {len(verdicts)} inner tools usable by a served call "
            f"(toolPermission: {policy})."
        )
        if detailed:
            lines += [
                f"Hidden: {v.server} › {v.tool} — {v.hidden_reason}"
                for v in verdicts
                if not v.usable
            ]
    elif policy == "always":
        lines.append("No inner tools usable by a served call (toolPermission: always).")
    elif not unknown:
        lines.append("The agent's MCP servers offer no tools.")
    if unknown:
        names = ", ".join(unknown)
        lines.append(f"Tools not counted yet for: {names} — press Connect{where} to list them.")
    return "\n".join(lines)


def set_tool_setting(
    document: AgentDocument, server: str, tool: str, field: str, value: bool
) -> bool:
    """Set ``mcpServers.<server>.tools.<tool>.<field>`` as one undoable edit.

    Args:
        field: ``permission_required`` or ``include``.

    Returns:
        False when the document refused (reported).
    """
    config = document.agent.mcp_servers.get(server)
    if config is None:
        return False
    words = "needs permission" if field == "permission_required" else "included"
    text = f"Mark {server} › {tool} {'' if value else 'not '}{words}"
    if tool in config.tools:
        path = ("mcp_servers", server, "tools", tool, field)
        return document.set_field(path, value, text=text)
    setting = McpToolSetting.model_validate({field: value})
    return document.set_field(("mcp_servers", server, "tools", tool), setting, text=text)


def include_all(document: AgentDocument, server: str, tools: list[str], include: bool) -> int:
    """Include (or leave out) each of ``tools`` of ``server``, as one undo step.

    Returns:
        How many tools changed (0: all were so already, nothing added to the undo stack).
    """
    config = document.agent.mcp_servers.get(server)
    if config is None:
        return 0
    changing = [
        tool
        for tool in tools
        if (config.tools[tool].include if tool in config.tools else True) != include
    ]
    if not changing:
        return 0
    verb = "Include" if include else "Leave out"
    with document.macro(f"{verb} every tool of {server}"):
        for tool in changing:
            set_tool_setting(document, server, tool, "include", include)
    return len(changing)


class ServerToolsModel(QAbstractTableModel):
    """The tools one server listed at its last connection, with their settings in the agent."""

    COLUMNS = ("Tool", "Description", "Include", "Needs permission", "Served call")
    TOOL, DESCRIPTION, INCLUDE, PERMISSION, SERVED = range(5)

    def __init__(
        self, document: AgentDocument, cache: ProbeCache, parent: QObject | None = None
    ) -> None:
        super().__init__(parent)
        self.document = document
        self.cache = cache
        self.server: str | None = None
        self._tools: tuple[ProbedTool, ...] = ()
        self._verdicts: dict[str, ToolVerdict] = {}
        document.changed_at.connect(self._on_changed_at)
        cache.updated.connect(self._on_cache_updated)

    def set_server(self, server: str | None) -> None:
        """Show the tools of ``server`` (None: nothing)."""
        self.server = server
        self._reload()

    def _reload(self) -> None:
        self.beginResetModel()
        self._tools = self.cache.tools(self.server) if self.server else ()
        self._judge()
        self.endResetModel()

    def _judge(self) -> None:
        verdicts, _unknown = tool_verdicts(self.document.agent, self.cache)
        self._verdicts = {v.tool: v for v in verdicts if v.server == self.server}

    def _on_cache_updated(self, server: str) -> None:
        if server == self.server:
            self._reload()
        else:
            self._on_document_changed()

    def _on_changed_at(self, path: FieldPath) -> None:
        if touches(path, ("mcp_servers",)) or touches(path, ("settings", "tool_permission")):
            self._on_document_changed()

    def _on_document_changed(self) -> None:
        if self.server is not None and self.server not in self.document.agent.mcp_servers:
            self.set_server(None)
            return
        self._judge()
        if self._tools:
            last = self.index(len(self._tools) - 1, len(self.COLUMNS) - 1)
            self.dataChanged.emit(self.index(0, 0), last)

    def tool_names(self) -> list[str]:
        """The tools shown, in the server's order."""
        return [tool.name for tool in self._tools]

    # -- Qt model ----------------------------------------------------------------------------

    def rowCount(self, parent: AnyIndex = QModelIndex()) -> int:  # noqa: B008
        return 0 if parent.isValid() else len(self._tools)

    def columnCount(self, parent: AnyIndex = QModelIndex()) -> int:  # noqa: B008
        return 0 if parent.isValid() else len(self.COLUMNS)

    def headerData(
        self, section: int, orientation: Qt.Orientation, role: int = Qt.ItemDataRole.DisplayRole
    ) -> Any:
        if orientation == Qt.Orientation.Horizontal and role == Qt.ItemDataRole.DisplayRole:
            return self.COLUMNS[section]
        if orientation == Qt.Orientation.Horizontal and role == Qt.ItemDataRole.ToolTipRole:
            return _HEADER_TIPS[section]
        return None

    def flags(self, index: AnyIndex) -> Qt.ItemFlag:
        flags = Qt.ItemFlag.ItemIsEnabled | Qt.ItemFlag.ItemIsSelectable
        if index.column() in (self.INCLUDE, self.PERMISSION):
            flags |= Qt.ItemFlag.ItemIsUserCheckable
        return flags

    def data(self, index: AnyIndex, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if not index.isValid() or self.server is None:
            return None
        tool = self._tools[index.row()]
        verdict = self._verdicts.get(tool.name)
        column = index.column()
        if role == Qt.ItemDataRole.DisplayRole:
            if column == self.TOOL:
                return tool.name
            if column == self.DESCRIPTION:
                return " ".join(tool.description.split())
            if column == self.SERVED and verdict is not None:
                return "usable" if verdict.usable else f"hidden: {verdict.hidden_reason}"
        elif role == Qt.ItemDataRole.CheckStateRole and verdict is not None:
            if column == self.INCLUDE:
                return _check(verdict.included)
            if column == self.PERMISSION:
                return _check(verdict.permission_required)
        elif role == Qt.ItemDataRole.ToolTipRole:
            return self._tooltip(tool, column)
        return None

    def _tooltip(self, tool: ProbedTool, column: int) -> str | None:
        if column in (self.TOOL, self.DESCRIPTION):
            return tool.description or None
        if column == self.PERMISSION and self.server is not None:
            config = self.document.agent.mcp_servers.get(self.server)
            own = config.tools.get(tool.name) if config is not None else None
            if own is None or own.permission_required is None:
                return "Follows the server's default (unset counts as needing permission)."
            return "Set for this tool."
        return _HEADER_TIPS[column]

    def setData(self, index: AnyIndex, value: Any, role: int = Qt.ItemDataRole.EditRole) -> bool:
        if (
            role != Qt.ItemDataRole.CheckStateRole
            or self.server is None
            or index.column() not in (self.INCLUDE, self.PERMISSION)
        ):
            return False
        checked = _is_checked(value)
        field = "include" if index.column() == self.INCLUDE else "permission_required"
        return set_tool_setting(
            self.document, self.server, self._tools[index.row()].name, field, checked
        )


_HEADER_TIPS = (
    "The tool's name on its server (the model sees it as server__tool).",
    "What the server says the tool does.",
    "Whether the model is offered this tool at all.",
    "Whether calling it needs a person's permission. Served calls cannot ask anybody, so with "
    "toolPermission: tool they only get tools that need none.",
    "Whether a served call (an MCP client calling this agent's tool) can use it, and why not.",
)


def _check(value: bool) -> Qt.CheckState:
    return Qt.CheckState.Checked if value else Qt.CheckState.Unchecked


def _is_checked(value: Any) -> bool:
    if isinstance(value, Qt.CheckState):
        return value == Qt.CheckState.Checked
    return bool(value == Qt.CheckState.Checked.value or value is True)
