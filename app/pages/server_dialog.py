"""The dialog that adds or edits one MCP server of the agent (name, transport, defaults).

The dialog edits a copy: OK gives ``(name, McpServerConfig)`` and the MCP servers page applies it
to the document as one undoable command. Keys the dialog does not show (per-tool settings, keys
other tools wrote) are kept. Environment values and headers that look like credentials are moved
to the system keyring on OK, so the agent file only gets ``keyring://`` references.
"""

from __future__ import annotations

import shlex
from collections.abc import Callable
from typing import Any

from pydantic import ValidationError
from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QButtonGroup,
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QFileDialog,
    QFormLayout,
    QGroupBox,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPlainTextEdit,
    QPushButton,
    QRadioButton,
    QStackedWidget,
    QVBoxLayout,
    QWidget,
)

from app.document.agent_document import validation_message
from app.pages.model_endpoint import KEYRING_SERVICE
from schema_types.agent import McpServerConfig
from schema_types.errors import SecretError
from schema_types.secrets import looks_secret

__all__ = ["SERVER_TYPES", "ServerDialog", "parse_pairs"]

# (value, label)
SERVER_TYPES = (
    ("stdio", "stdio (a local command)"),
    ("streamable-http", "Streamable HTTP (a URL)"),
    ("sse", "SSE (older HTTP servers)"),
)
_STDIO_KEYS = ("command", "args", "env", "cwd")
_HTTP_KEYS = ("url", "headers")


def parse_pairs(text: str, separator: str, what: str) -> dict[str, str]:
    """``NAME=value`` (or ``Name: value``) lines as a dict; blank lines are skipped.

    Raises:
        ValueError: a line without the separator or without a name (the message names it).
    """
    pairs: dict[str, str] = {}
    for number, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        name, found, value = line.partition(separator)
        if not found or not name.strip():
            example = "NAME=value" if separator == "=" else "Name: value"
            raise ValueError(f"{what}, line {number}: write {example}")
        pairs[name.strip()] = value.strip()
    return pairs


def _pairs_text(pairs: dict[str, str], separator: str) -> str:
    return "\n".join(f"{k}{separator}{v}" for k, v in pairs.items())


class ServerDialog(QDialog):
    """Add (``name`` None) or edit one server.

    Args:
        taken: names of the agent's other servers (a name must be unique).
        name / config: the server being edited, or None to add one.
        keyring_prefix: the start of keyring entry names for secrets moved out of the file
            (``travel-desk``); entries are ``<prefix>-<server>-<NAME>``.
        tool_permission: the agent's ``toolPermission``, to say what the permission choice
            means for its runs.
    """

    def __init__(
        self,
        taken: set[str],
        name: str | None = None,
        config: McpServerConfig | None = None,
        *,
        keyring_prefix: str = "agent",
        tool_permission: str = "tool",
        parent: QWidget | None = None,
    ) -> None:
        super().__init__(parent)
        self.setWindowTitle("Edit MCP server" if name else "Add MCP server")
        self.setMinimumWidth(560)
        self._tool_permission = tool_permission
        self._taken = taken - ({name} if name else set())
        self._original = config
        self._keyring_prefix = keyring_prefix
        self.result_value: tuple[str, McpServerConfig] | None = None

        self.name_edit = QLineEdit(name or "")
        self.name_edit.setPlaceholderText("time")
        self.name_edit.setToolTip("How the agent names this server; tools are server__tool.")
        self.type_combo = QComboBox()
        for value, label in SERVER_TYPES:
            self.type_combo.addItem(label, value)
        self.command_edit = QLineEdit()
        self.command_edit.setPlaceholderText("mcp-server-time, uvx, npx, /path/to/server")
        self.command_note = QLabel()
        self.command_note.setObjectName("serverCommandNote")
        self.command_note.setWordWrap(True)
        self.command_note.setTextFormat(Qt.TextFormat.PlainText)
        self.command_note.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        # Room for the note from the start ("Starts …" or a two-line "Not found…"): the fields
        # below moved at each key of the command, so a click aimed at Arguments missed it.
        self.command_note.setMinimumHeight(2 * self.command_note.fontMetrics().lineSpacing())
        self.command_note.setAlignment(Qt.AlignmentFlag.AlignTop | Qt.AlignmentFlag.AlignLeft)
        self.args_edit = QLineEdit()
        self.args_edit.setPlaceholderText("--local-timezone Europe/Lisbon")
        self.args_edit.setToolTip("Arguments as in a shell: quote an argument that has spaces.")
        self.cwd_edit = QLineEdit()
        self.cwd_edit.setPlaceholderText("the agent file's folder")
        browse = QPushButton("Browse…")
        browse.clicked.connect(self._browse_cwd)
        self.env_edit = _lines_edit("GITHUB_TOKEN=env://GITHUB_TOKEN")
        self.env_edit.setToolTip(
            "One NAME=value per line, added to the studio's environment. Use env://NAME or "
            "keyring://service/name for secrets; a literal secret is moved to the keyring."
        )
        self.url_edit = QLineEdit()
        self.url_edit.setPlaceholderText("http://127.0.0.1:8000/mcp")
        self.headers_edit = _lines_edit("Authorization: Bearer env://API_TOKEN")
        self.headers_edit.setToolTip(
            "One 'Name: value' per line. A reference may follow a word: Bearer env://TOKEN. "
            "A literal secret is moved to the keyring."
        )
        self.permission_box = self._build_permission()
        self.error_label = QLabel()
        self.error_label.setObjectName("serverDialogError")
        self.error_label.setWordWrap(True)

        cwd_row = QHBoxLayout()
        cwd_row.addWidget(self.cwd_edit, 1)
        cwd_row.addWidget(browse)
        stdio_form = QFormLayout()
        stdio_form.addRow(_buddy("&Command:", self.command_edit), self.command_edit)
        stdio_form.addRow("", self.command_note)
        stdio_form.addRow(_buddy("&Arguments:", self.args_edit), self.args_edit)
        stdio_form.addRow(_buddy("&Working folder:", self.cwd_edit), cwd_row)
        stdio_form.addRow(_buddy("&Environment:", self.env_edit), self.env_edit)
        stdio_page = QWidget()
        stdio_page.setLayout(stdio_form)
        http_form = QFormLayout()
        http_form.addRow(_buddy("&URL:", self.url_edit), self.url_edit)
        http_form.addRow(_buddy("&Headers:", self.headers_edit), self.headers_edit)
        http_page = QWidget()
        http_page.setLayout(http_form)
        self.transport_stack = QStackedWidget()
        self.transport_stack.addWidget(stdio_page)
        self.transport_stack.addWidget(http_page)
        for form in (stdio_form, http_form):
            form.setContentsMargins(0, 0, 0, 0)
            form.setFieldGrowthPolicy(QFormLayout.FieldGrowthPolicy.AllNonFixedFieldsGrow)

        top = QFormLayout()
        top.setFieldGrowthPolicy(QFormLayout.FieldGrowthPolicy.AllNonFixedFieldsGrow)
        top.addRow(_buddy("&Name:", self.name_edit), self.name_edit)
        top.addRow(_buddy("&Type:", self.type_combo), self.type_combo)
        buttons = QDialogButtonBox(
            QDialogButtonBox.StandardButton.Ok | QDialogButtonBox.StandardButton.Cancel
        )
        buttons.accepted.connect(self.accept)
        buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.addLayout(top)
        layout.addWidget(self.transport_stack)
        layout.addWidget(self.permission_box)
        layout.addWidget(self.error_label)
        layout.addWidget(buttons)

        self.type_combo.currentIndexChanged.connect(self._on_type_changed)
        self.command_edit.textChanged.connect(self._on_command_changed)
        self.cwd_edit.textChanged.connect(self._on_command_changed)
        self.env_edit.textChanged.connect(self._on_command_changed)
        self._show(config)

    def _build_permission(self) -> QGroupBox:
        """The server's default ``permissionRequired``, as a choice with its effect beside it."""
        box = QGroupBox("Its tools, in runs that cannot ask a person (test runs, served calls)")
        self.ask_radio = QRadioButton("Need a person's permission: such runs do not get them")
        self.ask_radio.setObjectName("serverNeedsPermission")
        self.free_radio = QRadioButton("May be used without asking: such runs get them")
        self.free_radio.setObjectName("serverNoPermission")
        self.permission_effect = QLabel()
        self.permission_effect.setObjectName("serverPermissionEffect")
        self.permission_effect.setWordWrap(True)
        self.permission_effect.setTextFormat(Qt.TextFormat.PlainText)
        self.permission_group = QButtonGroup(box)
        layout = QVBoxLayout(box)
        for button in (self.ask_radio, self.free_radio):
            self.permission_group.addButton(button)
            layout.addWidget(button)
            button.toggled.connect(self._on_permission_changed)
        layout.addWidget(self.permission_effect)
        box.setToolTip(
            "serverToolDefaults.permissionRequired; single tools can be marked otherwise on "
            "the MCP servers page after Connect."
        )
        return box

    def _show(self, config: McpServerConfig | None) -> None:
        config = config or McpServerConfig(command="server")
        self.type_combo.setCurrentIndex(max(0, self.type_combo.findData(config.type)))
        if self._original is not None:
            self.command_edit.setText(config.command or "")
            self.args_edit.setText(shlex.join(config.args))
            self.cwd_edit.setText(config.cwd or "")
            self.env_edit.setPlainText(_pairs_text(config.env, "="))
            self.url_edit.setText(config.url or "")
            self.headers_edit.setPlainText(_pairs_text(config.headers, ": "))
        default = config.server_tool_defaults.permission_required
        if self._original is not None:  # a new server's choice is the person's to make
            (self.free_radio if default is False else self.ask_radio).setChecked(True)
        self._on_type_changed()
        self._on_command_changed()
        self._on_permission_changed()

    def needs_permission(self) -> bool | None:
        """The permission choice: True (needs a person's), False (may be used), None (none)."""
        if self.ask_radio.isChecked():
            return True
        return False if self.free_radio.isChecked() else None

    def _on_permission_changed(self, *_: object) -> None:
        choice = self.needs_permission()
        policy = self._tool_permission
        if choice is None:
            effect = (
                "Choose one. With this agent's setting (toolPermission: "
                f"{policy}), it decides whether test runs and served calls can use them."
            )
        elif policy == "never":
            effect = "This agent uses every tool without asking (toolPermission: never)."
        elif policy == "always":
            effect = (
                "This agent asks before every tool (toolPermission: always): test runs and "
                "served calls get none of them, whichever you choose."
            )
        elif choice:
            effect = (
                "Test runs and served calls of this agent (toolPermission: tool) will get none "
                "of this server's tools, except those you mark after Connect; the run's trace "
                "says so."
            )
        else:
            effect = "Test runs and served calls of this agent will get this server's tools."
        self.permission_effect.setText(effect)

    def _on_command_changed(self, *_: object) -> None:
        from mcp_export.toolbox.command import CommandNotFoundError, find_command, search_places

        command = self.command_edit.text().strip()
        if not command:
            self.command_note.setText("")
            return
        try:
            path = parse_pairs(self.env_edit.toPlainText(), "=", "environment").get("PATH")
        except ValueError:
            path = None
        try:
            found = find_command(command, path=path)
        except CommandNotFoundError as exc:
            beside = search_places(path)[-1]
            # The whole list of places is long (every PATH folder): it is the tooltip.
            self.command_note.setText(
                f"⚠ Not found on PATH, nor beside the studio's Python ({beside}): install it, "
                "or write its full path."
            )
            self.command_note.setToolTip(str(exc))
            return
        self.command_note.setToolTip("")
        self.command_note.setText(f"Starts {found}" if found != command else "")

    def _on_type_changed(self) -> None:
        stdio = self.type_combo.currentData() == "stdio"
        self.transport_stack.setCurrentIndex(0 if stdio else 1)

    def _browse_cwd(self) -> None:
        folder = QFileDialog.getExistingDirectory(self, "Working folder", self.cwd_edit.text())
        if folder:
            self.cwd_edit.setText(folder)

    # -- result ----------------------------------------------------------------------------

    def build(
        self, store_secret: Callable[[str, str, str], str] | None = None
    ) -> tuple[str, McpServerConfig]:
        """The server as entered: ``(name, config)``.

        Args:
            store_secret: ``(service, entry, value) -> reference``; default: the system keyring.

        Raises:
            ValueError: something entered is not valid (the message says what to fix).
        """
        name = self.name_edit.text().strip()
        if not name:
            raise ValueError("give the server a name")
        if name in self._taken:
            raise ValueError(f"the agent already has a server named {name!r}")
        data: dict[str, Any] = self._original.to_data() if self._original else {}
        kind = str(self.type_combo.currentData())
        data["type"] = kind
        if kind == "stdio":
            for key in _HTTP_KEYS:
                data.pop(key, None)
            data["command"] = self.command_edit.text().strip()
            try:
                data["args"] = shlex.split(self.args_edit.text())
            except ValueError as exc:
                raise ValueError(f"arguments: {exc} (close the quote)") from exc
            data["env"] = parse_pairs(self.env_edit.toPlainText(), "=", "environment")
            cwd = self.cwd_edit.text().strip()
            if cwd:
                data["cwd"] = cwd
            else:
                data.pop("cwd", None)
            for key in ("args", "env"):
                if not data[key]:
                    del data[key]
        else:
            for key in _STDIO_KEYS:
                data.pop(key, None)
            data["url"] = self.url_edit.text().strip()
            headers = parse_pairs(self.headers_edit.toPlainText(), ":", "headers")
            if headers:
                data["headers"] = headers
        data = self._defaults(data)
        self._move_secrets(name, data, store_secret)
        try:
            return name, McpServerConfig.model_validate(data)
        except ValidationError as exc:
            raise ValueError(validation_message(exc)) from exc

    def _defaults(self, data: dict[str, Any]) -> dict[str, Any]:
        defaults = dict(data.get("serverToolDefaults") or {})
        required = self.needs_permission()
        if required is None:
            raise ValueError(
                "choose whether its tools need a person's permission (runs that cannot ask "
                "do not get those that do)"
            )
        # Unset already means "needs permission": write the key only when it says something.
        if required and "permissionRequired" not in defaults:
            return data
        defaults["permissionRequired"] = required
        return {**data, "serverToolDefaults": defaults}

    def _move_secrets(
        self,
        name: str,
        data: dict[str, Any],
        store_secret: Callable[[str, str, str], str] | None,
    ) -> None:
        if store_secret is None:
            from schema_types.secrets import store_secret_in_keyring

            store_secret = store_secret_in_keyring
        for section in ("env", "headers"):
            values: dict[str, str] = data.get(section) or {}
            for key, value in values.items():
                if looks_secret(key, value):
                    entry = f"{self._keyring_prefix}-{name}-{key}"
                    try:
                        values[key] = store_secret(KEYRING_SERVICE, entry, value)
                    except SecretError as exc:
                        raise ValueError(
                            f"{key} looks like a secret and the keyring could not store it "
                            f"({exc}); write env://NAME to read it from an environment variable"
                        ) from exc

    def accept(self) -> None:
        """Check what was entered; stay open and say what to fix when it is not valid."""
        try:
            self.result_value = self.build()
        except ValueError as exc:
            self.error_label.setText(f"⚠ {exc}")
            return
        super().accept()


def _lines_edit(placeholder: str) -> QPlainTextEdit:
    edit = QPlainTextEdit()
    edit.setPlaceholderText(placeholder)
    edit.setTabChangesFocus(True)
    edit.setFixedHeight(edit.fontMetrics().lineSpacing() * 4 + 12)
    return edit


def _buddy(text: str, widget: QWidget) -> QLabel:
    label = QLabel(text)
    label.setBuddy(widget)
    return label
