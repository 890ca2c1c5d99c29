"""The MCP servers page: the servers the agent itself uses, their tools and permissions.

Left, the servers with Add / Edit / Remove (each one undoable command). Right, the selected
server: how it is started, its default ``permissionRequired``, and "Connect", which starts it once
(``mcp_export.toolbox.agent_toolbox.probe_server`` on the qasync loop) and lists its tools. Each
tool can be
marked as needing permission or not and included or not (``mcpServers.<name>.tools.<tool>``,
undoable). A server that fails to start shows the error and its stderr. Above both, the line a
person needs before serving: how many tools a served call can actually use, and why the others
are hidden (DESIGN.md, "Permission").
"""

from __future__ import annotations

import shlex
from collections.abc import Callable

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QAbstractItemView,
    QCheckBox,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QListWidget,
    QListWidgetItem,
    QPlainTextEdit,
    QPushButton,
    QSplitter,
    QTableView,
    QVBoxLayout,
    QWidget,
)

from app.document.agent_document import AgentDocument, FieldPath, touches
from app.errors import reporter
from app.icons import icon
from app.pages.model_endpoint import agent_slug
from app.pages.page_tasks import PageTasks
from app.pages.server_tools import ServerToolsModel, include_all, probe_cache, usable_summary
from schema_types.agent import McpServerConfig

__all__ = ["AskServer", "ServersPage", "describe_transport"]

# (taken names, name or None, config or None) -> (name, config), or None when cancelled.
AskServer = Callable[
    [set[str], str | None, McpServerConfig | None], tuple[str, McpServerConfig] | None
]


def describe_transport(config: McpServerConfig) -> str:
    """One line saying how the server is reached (``stdio: mcp-server-time --local-…``)."""
    if config.type == "stdio":
        line = shlex.join([config.command or "", *config.args])
        if config.cwd:
            line += f"   (in {config.cwd})"
        if config.env:
            line += f"   env: {', '.join(config.env)}"
        return f"stdio: {line}"
    headers = f"   headers: {', '.join(config.headers)}" if config.headers else ""
    return f"{config.type}: {config.url}{headers}"


class ServersPage(QWidget):
    """The agent's MCP servers (list, details, Connect, per-tool settings).

    Attributes:
        ask_server: asks for a server's name and settings (the dialog); tests replace it.
    """

    def __init__(self, document: AgentDocument, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.document = document
        self.cache = probe_cache(document)
        self.tasks = PageTasks(self)
        self.ask_server: AskServer = self._ask_with_dialog

        title = QLabel("<h2>MCP servers</h2>")
        intro = QLabel(
            "The MCP servers this agent uses itself. “Connect” starts a server once and lists "
            "its tools; mark which tools need a person's permission and which are offered to "
            "the model at all."
        )
        intro.setWordWrap(True)
        self.summary = QLabel()
        self.summary.setObjectName("servedToolsSummary")
        self.summary.setWordWrap(True)
        self.summary.setTextFormat(Qt.TextFormat.PlainText)
        self.summary.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)

        # Left: the list and its buttons.
        self.server_list = QListWidget()
        self.server_list.setObjectName("serverList")
        self.server_list.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.server_list.setToolTip("Double-click a server to edit it.")
        self.add_button = QPushButton(icon("add"), "Add…")
        self.add_button.setToolTip("Add an MCP server")
        self.edit_button = QPushButton(icon("rename"), "Edit…")
        self.edit_button.setToolTip("Edit the selected server")
        self.remove_button = QPushButton(icon("delete"), "Remove")
        self.remove_button.setToolTip("Remove the selected server (undoable)")
        buttons = QHBoxLayout()
        for button in (self.add_button, self.edit_button, self.remove_button):
            buttons.addWidget(button)
        buttons.addStretch(1)
        left = QWidget()
        left_layout = QVBoxLayout(left)
        left_layout.setContentsMargins(0, 0, 0, 0)
        servers_label = QLabel("&Servers:")
        servers_label.setBuddy(self.server_list)
        left_layout.addWidget(servers_label)
        left_layout.addWidget(self.server_list, 1)
        left_layout.addLayout(buttons)

        # Right: the selected server.
        self.server_title = QLabel()
        self.server_title.setObjectName("serverTitle")
        self.transport_label = QLabel()
        self.transport_label.setObjectName("serverTransport")
        self.transport_label.setWordWrap(True)
        self.transport_label.setTextFormat(Qt.TextFormat.PlainText)
        self.transport_label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.default_check = QCheckBox(
            "Its tools need a person's permission unless marked otherwise"
        )
        self.default_check.setObjectName("serverDefaultPermission")
        self.default_check.setToolTip(
            "serverToolDefaults.permissionRequired. Served calls cannot ask anybody: with "
            "toolPermission: tool they only get tools that need no permission."
        )
        self.connect_button = QPushButton("Connect")
        self.connect_button.setObjectName("connectServer")
        self.connect_button.setToolTip("Start the server once and list its tools")
        self.connect_status = QLabel()
        self.connect_status.setObjectName("connectStatus")
        self.connect_status.setWordWrap(True)
        self.connect_status.setTextFormat(Qt.TextFormat.PlainText)
        self.error_view = QPlainTextEdit()
        self.error_view.setObjectName("serverError")
        self.error_view.setReadOnly(True)
        self.error_view.setToolTip("The error and the end of the server's stderr")
        self.error_view.setFixedHeight(self.fontMetrics().lineSpacing() * 7 + 12)
        self.tools_model = ServerToolsModel(document, self.cache, self)
        self.tools_view = QTableView()
        self.tools_view.setObjectName("serverTools")
        self.tools_view.setModel(self.tools_model)
        self.tools_view.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.tools_view.setWordWrap(False)
        self.tools_view.verticalHeader().setVisible(False)
        header = self.tools_view.horizontalHeader()
        header.setSectionResizeMode(ServerToolsModel.TOOL, QHeaderView.ResizeMode.ResizeToContents)
        header.setSectionResizeMode(ServerToolsModel.DESCRIPTION, QHeaderView.ResizeMode.Stretch)
        for column in (ServerToolsModel.INCLUDE, ServerToolsModel.PERMISSION):
            header.setSectionResizeMode(column, QHeaderView.ResizeMode.ResizeToContents)
        header.setSectionResizeMode(ServerToolsModel.SERVED, QHeaderView.ResizeMode.Interactive)
        header.resizeSection(ServerToolsModel.SERVED, 260)

        connect_row = QHBoxLayout()
        connect_row.addWidget(self.connect_button)
        connect_row.addWidget(self.connect_status, 1)
        self.details = QWidget()
        details_layout = QVBoxLayout(self.details)
        details_layout.setContentsMargins(0, 0, 0, 0)
        details_layout.addWidget(self.server_title)
        details_layout.addWidget(self.transport_label)
        details_layout.addWidget(self.default_check)
        details_layout.addLayout(connect_row)
        details_layout.addWidget(self.error_view)
        tools_label = QLabel("&Tools (listed at the last connection):")
        tools_label.setBuddy(self.tools_view)
        self.include_all_button = QPushButton("Include all")
        self.include_all_button.setToolTip("Offer the model every tool this server listed")
        self.include_none_button = QPushButton("Include none")
        self.include_none_button.setToolTip("Offer the model none of this server's tools")
        tools_row = QHBoxLayout()
        tools_row.addWidget(tools_label, 1)
        tools_row.addWidget(self.include_all_button)
        tools_row.addWidget(self.include_none_button)
        details_layout.addLayout(tools_row)
        details_layout.addWidget(self.tools_view, 1)
        self.empty_hint = QLabel("Add a server, or select one to see its tools.")
        self.empty_hint.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.empty_hint.setEnabled(False)
        right = QWidget()
        right_layout = QVBoxLayout(right)
        right_layout.setContentsMargins(0, 0, 0, 0)
        right_layout.addWidget(self.details, 1)
        right_layout.addWidget(self.empty_hint, 1)

        self.splitter = QSplitter(Qt.Orientation.Horizontal)
        self.splitter.addWidget(left)
        self.splitter.addWidget(right)
        self.splitter.setStretchFactor(1, 1)
        self.splitter.setSizes([220, 700])
        self.splitter.setChildrenCollapsible(False)
        layout = QVBoxLayout(self)
        layout.addWidget(title)
        layout.addWidget(intro)
        layout.addWidget(self.summary)
        layout.addWidget(self.splitter, 1)

        self.add_button.clicked.connect(self.add_server)
        self.edit_button.clicked.connect(self.edit_selected)
        self.remove_button.clicked.connect(self.remove_selected)
        self.connect_button.clicked.connect(self.connect_selected)
        self.include_all_button.clicked.connect(lambda: self.include_all_tools(True))
        self.include_none_button.clicked.connect(lambda: self.include_all_tools(False))
        self.default_check.clicked.connect(self._on_default_clicked)
        self.server_list.currentItemChanged.connect(lambda *_: self._show_selected())
        self.server_list.itemDoubleClicked.connect(lambda *_: self.edit_selected())
        self.tasks.busy_changed.connect(lambda *_: self._show_selected())
        document.changed_at.connect(self._on_changed_at)
        self.cache.updated.connect(lambda _name: self.refresh())
        self.refresh()

    # -- reading ---------------------------------------------------------------------------

    def selected_name(self) -> str | None:
        """The selected server's name, or None."""
        item = self.server_list.currentItem()
        return str(item.data(Qt.ItemDataRole.UserRole)) if item is not None else None

    def select(self, name: str) -> None:
        """Select the server ``name`` (when the agent has it)."""
        for row in range(self.server_list.count()):
            item = self.server_list.item(row)
            if item.data(Qt.ItemDataRole.UserRole) == name:
                self.server_list.setCurrentItem(item)
                return

    def _on_changed_at(self, path: FieldPath) -> None:
        if touches(path, ("mcp_servers",)) or touches(path, ("settings", "tool_permission")):
            self.refresh()

    def refresh(self) -> None:
        """Re-read the servers from the document."""
        servers = self.document.agent.mcp_servers
        current = self.selected_name()
        names = list(servers)
        shown = [
            self.server_list.item(r).data(Qt.ItemDataRole.UserRole)
            for r in range(self.server_list.count())
        ]
        if shown != names:
            self.server_list.blockSignals(True)
            self.server_list.clear()
            for name in names:
                item = QListWidgetItem(icon("server"), name)
                item.setData(Qt.ItemDataRole.UserRole, name)
                self.server_list.addItem(item)
            self.server_list.blockSignals(False)
            if current in servers:
                self.select(current)
            elif names:
                self.server_list.setCurrentRow(0)
        self.summary.setText(usable_summary(self.document.agent, self.cache))
        self._show_selected()

    def _show_selected(self) -> None:
        name = self.selected_name()
        config = self.document.agent.mcp_servers.get(name) if name else None
        has = config is not None
        self.details.setVisible(has)
        self.empty_hint.setVisible(not has)
        self.edit_button.setEnabled(has)
        self.remove_button.setEnabled(has)
        if self.tools_model.server != name:
            self.tools_model.set_server(name if has else None)
        if name is None or config is None:
            return
        self.server_title.setText(f"<b>{_escape(name)}</b>")
        self.transport_label.setText(describe_transport(config))
        self.default_check.setChecked(config.server_tool_defaults.permission_required is not False)
        busy = self.tasks.is_running(f"connect:{name}")
        self.connect_button.setEnabled(not busy)
        result = self.cache.results.get(name)
        if busy:
            self.connect_status.setText(f"Starting {name}…")
        elif result is None:
            self.connect_status.setText("Not connected yet: press Connect to list its tools.")
        elif result.ok:
            server = " ".join(filter(None, [result.server_name, result.server_version]))
            self.connect_status.setText(
                f"Connected to {server or name} in {result.duration_ms:.0f} ms: "
                f"{len(result.tools)} tool{'s' if len(result.tools) != 1 else ''}."
            )
        else:
            self.connect_status.setText("Could not connect; the error and the server's stderr:")
        listed = bool(self.tools_model.tool_names())
        self.include_all_button.setEnabled(listed)
        self.include_none_button.setEnabled(listed)
        failed = result is not None and not result.ok and not busy
        self.error_view.setVisible(failed)
        if failed and result is not None:
            self.error_view.setPlainText(_failure_text(result.error or "", result.stderr_tail))

    def include_all_tools(self, include: bool) -> int:
        """Include (or leave out) every listed tool of the selected server, one undo step."""
        name = self.selected_name()
        if name is None:
            return 0
        return include_all(self.document, name, self.tools_model.tool_names(), include)

    # -- server edits ----------------------------------------------------------------------

    def add_server(self) -> bool:
        """Ask for a new server and add it (one undoable command)."""
        answer = self.ask_server(set(self.document.agent.mcp_servers), None, None)
        if answer is None:
            return False
        name, config = answer
        if not self.document.insert_item(
            ("mcp_servers", name), config, text=f"Add MCP server {name}"
        ):
            return False
        self.select(name)
        return True

    def edit_selected(self) -> bool:
        """Edit the selected server's settings (one undoable command)."""
        old = self.selected_name()
        config = self.document.agent.mcp_servers.get(old) if old else None
        if old is None or config is None:
            return False
        answer = self.ask_server(set(self.document.agent.mcp_servers), old, config)
        if answer is None:
            return False
        name, new_config = answer
        text = f"Edit MCP server {name}"
        with self.document.macro(text):
            if name != old and not self.document.rename_key(("mcp_servers", old), name, text=text):
                return False
            done = self.document.set_field(("mcp_servers", name), new_config, text=text)
        if done:
            # What it offers may differ now: the last connection's tools no longer say.
            self.cache.drop(old)
            self.cache.drop(name)
            self.select(name)
        return done

    def remove_selected(self) -> bool:
        """Remove the selected server (one undoable command)."""
        name = self.selected_name()
        if name is None:
            return False
        return self.document.remove_item(("mcp_servers", name), text=f"Remove MCP server {name}")

    def _on_default_clicked(self, checked: bool) -> None:
        name = self.selected_name()
        if name is None:
            return
        self.document.set_field(
            ("mcp_servers", name, "server_tool_defaults", "permission_required"),
            checked,
            text=f"Mark {name}'s tools {'' if checked else 'not '}needing permission by default",
        )
        self._show_selected()

    def _ask_with_dialog(
        self, taken: set[str], name: str | None, config: McpServerConfig | None
    ) -> tuple[str, McpServerConfig] | None:
        from app.pages.server_dialog import ServerDialog

        agent = self.document.agent
        dialog = ServerDialog(
            taken,
            name,
            config,
            keyring_prefix=agent_slug(agent),
            tool_permission=agent.settings.tool_permission,
            parent=self,
        )
        try:
            return dialog.result_value if dialog.exec() else None
        finally:
            dialog.deleteLater()

    # -- connecting ------------------------------------------------------------------------

    def connect_selected(self) -> None:
        """Start the selected server once and list its tools (runs on the qasync loop)."""
        name = self.selected_name()
        config = self.document.agent.mcp_servers.get(name) if name else None
        if name is None or config is None:
            return
        self.tasks.start(
            f"connect:{name}", self._connect(name, config), what=f"Connecting to {name}"
        )
        self._show_selected()

    async def _connect(self, name: str, config: McpServerConfig) -> None:
        from mcp_export.toolbox.agent_toolbox import probe_server

        result = await probe_server(config, base_dir=self.document.base_dir, name=name)
        if self.document.agent.mcp_servers.get(name) is not config:
            return  # edited or removed meanwhile: this result describes something else
        self.cache.store(name, result)
        if result.ok:
            # Said where the person looks, so an earlier failure of it does not stay there.
            count = len(result.tools)
            reporter().info(f"Connected to {name}: {count} tool{'s' if count != 1 else ''}.")
        else:
            reporter().error(
                f"MCP server {name} could not start: {(result.error or '').splitlines()[0]}",
                detail=_failure_text(result.error or "", result.stderr_tail),
            )


def _failure_text(error: str, stderr: str) -> str:
    stderr = stderr.strip()
    if not stderr or stderr in error:
        return error
    return f"{error}\n\nThe server's stderr:\n{stderr}"


def _escape(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
