"""The export dialog's install box: merge the entry into the chosen client's config file.

The config file starts at the client's default place and can be chosen; the merge
(``mcp_export.clients.install``) keeps every other server and a backup of the previous file.
Clients whose files we never edit (Claude Code, plain JSON) get a hint instead of the fields.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QCheckBox,
    QFileDialog,
    QGroupBox,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from app.export_report import BAD, GOOD

if TYPE_CHECKING:
    from mcp_export.clients.entry import ClientId, ExportEntry
    from mcp_export.clients.install import InstallResult

__all__ = ["InstallBox"]


class InstallBox(QGroupBox):
    """The config file, *Replace…*, *Install…* and what the last install did."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__("Install into the client's config", parent)
        self.config_edit = QLineEdit()
        self.config_edit.setAccessibleName("Config file")
        self.browse_button = QPushButton("Browse…")
        self.force_check = QCheckBox("Replace a different server of the same name")
        self.install_button = QPushButton("Install…")
        self.hint = QLabel()
        self.hint.setWordWrap(True)
        self.result_label = QLabel()
        self.result_label.setWordWrap(True)
        self.result_label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        # Hidden as one piece for clients whose files we never edit (Claude Code, plain JSON).
        self.fields = QWidget()
        path_row = QHBoxLayout()
        path_row.addWidget(QLabel("Config file:"))
        path_row.addWidget(self.config_edit, 1)
        path_row.addWidget(self.browse_button)
        action_row = QHBoxLayout()
        action_row.addWidget(self.force_check, 1)
        action_row.addWidget(self.install_button)
        fields_layout = QVBoxLayout(self.fields)
        fields_layout.setContentsMargins(0, 0, 0, 0)
        fields_layout.addLayout(path_row)
        fields_layout.addLayout(action_row)
        layout = QVBoxLayout(self)
        layout.addWidget(self.hint)
        layout.addWidget(self.fields)
        layout.addWidget(self.result_label)
        self.browse_button.clicked.connect(self._on_browse)

    def set_client(self, client: ClientId) -> None:
        """Show the fields (or the hint) for ``client``, its config file at the default place."""
        from mcp_export.clients.entry import CLIENTS, default_config_path

        info = CLIENTS[client]
        has_file = info.servers_key is not None
        self.fields.setVisible(has_file)
        if client == "claude-code":
            hint = (
                "Claude Code manages its own config: run the `claude mcp add-json` command above "
                "in a terminal (Copy puts it on the clipboard), or `metaagent export --client "
                "claude-code --install`. Nothing is written here."
            )
        elif not has_file:
            hint = "Plain JSON has no config file: paste the snippet into your client's config."
        else:
            hint = f"Merged into {info.label}'s config; every other server in it is kept."
        self.hint.setText(hint)
        default = default_config_path(client)
        self.config_edit.setText(str(default) if default is not None else "")
        self.set_result("", None)

    def config_path(self) -> Path | None:
        """The config file named in the box, or None when it is empty."""
        text = self.config_edit.text().strip()
        return Path(text).expanduser() if text else None

    def install(self, entry: ExportEntry, confirm: Callable[[Path], bool]) -> InstallResult | None:
        """Merge ``entry`` into the named config file once ``confirm(path)`` agrees.

        Returns:
            What ``install`` did, or None when nothing was attempted (declined, no file named)
            or it failed (the box shows why).
        """
        from mcp_export.clients.install import InstallError, install

        path = self.config_path()
        if path is None:
            self.set_result("Choose the config file to install into.", False)
            return None
        if not confirm(path):
            self.set_result("Not installed: nothing was changed.", None)
            return None
        try:
            result = install(entry, path, force=self.force_check.isChecked())
        except InstallError as exc:
            self.set_result(str(exc), False)
            return None
        lines = [result.message]
        if result.changed:
            lines = [f"Written: {result.path}"]
            if result.backup is not None:
                lines.append(f"Backup of the previous file: {result.backup}")
            if result.message.endswith("the backup still has them"):
                lines.append("Its comments could not be kept; the backup still has them.")
        self.set_result("\n".join(lines), True)
        return result

    def set_result(self, text: str, ok: bool | None) -> None:
        """Show ``text`` below the fields: green when ``ok``, red when not, plain for None."""
        self.result_label.setText(text)
        color = "" if ok is None else (GOOD if ok else BAD)
        self.result_label.setStyleSheet(f"color: {color};" if color else "")
        self.result_label.setVisible(bool(text))

    def _on_browse(self) -> None:
        chosen, _ = QFileDialog.getSaveFileName(
            self,
            "Client config file",
            self.config_edit.text(),
            "JSON files (*.json);;All files (*)",
            options=QFileDialog.Option.DontConfirmOverwrite,
        )
        if chosen:
            self.config_edit.setText(chosen)
