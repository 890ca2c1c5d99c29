"""The export dialog: serve a saved agent from an MCP client (Claude Desktop, VS Code, Cursor…).

Everything here is the CLI's own code (``metaagent export`` / ``verify``) behind widgets:
``build_entry`` and ``snippet`` make what is shown and copied, ``install`` merges it into the
client's config file with a backup, and ``verify_export`` launches the entry exactly as the client
would (the one installed in the config file named in the dialog, with only the environment that
client passes) and lists its tools. *Try a call* then calls the chosen tool through a freshly
launched server (``call_after_verify``: its first test case's arguments, else sample values) and
shows the answer, or the error the client would show. A value the person must fill in by hand is
named with its file and key; when the dialog is given the open document, the agent's API key field
is offered beside it (``export_keyring``), so the key can go to the keyring instead and the config
needs no value. Verify and calls run on the asyncio loop qasync puts under Qt, so the dialog keeps
answering while the server starts; closing the dialog cancels them. The install box is
``export_install``'s, the report's rendering ``export_report``'s. Everything but Close scrolls, so
the dialog fits a small screen.
"""

from __future__ import annotations

import html
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QSize, Qt, QTimer, Signal
from PySide6.QtGui import QFontDatabase, QGuiApplication
from PySide6.QtWidgets import (
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QFormLayout,
    QGroupBox,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QMessageBox,
    QPlainTextEdit,
    QPushButton,
    QTextBrowser,
    QVBoxLayout,
    QWidget,
)

from app.errors import reporter
from app.export_install import InstallBox
from app.export_keyring import KeyringOffer
from app.export_report import BAD, CALL_ANCHOR, GOOD, PROBLEM_ANCHOR, report_html, report_summary
from app.pages.keyring_field import KeyringField
from app.pages.page_tasks import PageTasks
from app.window.screen_fit import fit_to_screen, scrolling

if TYPE_CHECKING:
    from app.document.agent_document import AgentDocument
    from mcp_export.clients.entry import ClientId, ExportEntry
    from mcp_export.clients.install import InstallResult
    from mcp_export.clients.verify_call import CallOutcome
    from mcp_export.clients.verify_report import VerifyReport
    from schema_types.agent import Agent

__all__ = ["ExportDialog"]

_VERIFY, _CALL = "verify", "call"
# Generous: the first start of a server imports the MCP SDK and a provider SDK.
_CONNECT_LIMIT_S = 45.0
_CALL_LIMIT_S = 120.0


class ExportDialog(QDialog):
    """Pick a client, see and copy its config snippet, install it, and verify the server.

    Args:
        agent_path: the saved agent file to serve.
        parent: the parent widget.
        document: the open document of that file; with it, a missing model key can be stored
            in the keyring from here (the agent's API key field) and the agent saved.
        save: how to save ``document`` (the window's save, which guards against a file changed
            by someone else); default: ``document.save()``. Returns whether it saved.

    Signals:
        verify_finished(report): a Verify run ended with this ``VerifyReport``.
        call_finished(outcome): a *Try a call* ended with this ``CallOutcome`` (also in the
            report, whose checks it joined).
    """

    verify_finished = Signal(object)
    call_finished = Signal(object)

    def __init__(
        self,
        agent_path: Path,
        parent: QWidget | None = None,
        *,
        document: AgentDocument | None = None,
        save: Callable[[AgentDocument], bool] | None = None,
    ) -> None:
        super().__init__(parent)
        from mcp_export.clients.entry import CLIENTS, build_entry
        from schema_types.errors import SchemaError
        from schema_types.files.agent_file import load_agent

        self.agent_path = agent_path
        self.document = document
        self._save = save
        self.entry: ExportEntry | None = None
        self.last_report: VerifyReport | None = None
        self.last_call: CallOutcome | None = None
        self.tasks = PageTasks(self)
        self.agent: Agent | None = None
        load_error = ""
        try:
            self.agent = load_agent(agent_path)
        except (SchemaError, OSError) as exc:
            load_error = str(exc)
        self.setWindowTitle("Export as MCP server")
        self._build()
        for client, info in CLIENTS.items():
            self.client_combo.addItem(info.label, client)
        self.client_combo.currentIndexChanged.connect(self._on_client_changed)
        if self.agent is None:
            self._show_load_error(load_error)
        else:
            # The default name (a slug of the agent's name) is shown, so the person can edit it.
            self.name_edit.setText(build_entry(agent_path, self.agent, self.client()).name)
            self._on_client_changed()
        self.name_edit.textChanged.connect(self._on_entry_changed)

    # -- layout -----------------------------------------------------------------------------

    def _build(self) -> None:
        name = self.agent.metadata.name if self.agent is not None else self.agent_path.name
        heading = QLabel(
            f"<b>Export {html.escape(name)} as an MCP server</b><br>"
            f"<span style='color:gray'>{html.escape(str(self.agent_path))}</span>"
        )
        heading.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.client_combo = QComboBox()
        self.name_edit = QLineEdit()
        self.name_edit.setToolTip("The server's name in the client's config")
        choose = QFormLayout()
        choose.addRow("Client:", self.client_combo)
        choose.addRow("Server name:", self.name_edit)
        self._build_launch(choose)
        self.notes_label = QLabel()
        self.notes_label.setWordWrap(True)
        self.notes_label.setTextFormat(Qt.TextFormat.RichText)
        self.notes_label.setAccessibleName("Notes about the client")
        self.notes_label.setStyleSheet(
            "QLabel { background: palette(alternate-base); padding: 6px; border-radius: 4px; }"
        )

        mono = QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont)
        self.snippet_edit = _SnippetView()
        self.snippet_edit.setReadOnly(True)
        self.snippet_edit.setFont(mono)
        self.snippet_edit.setAccessibleName("Snippet")
        self.snippet_edit.setMinimumHeight(70)
        self.copy_button = QPushButton("Copy")
        self.copy_button.setToolTip("Copy the snippet to the clipboard")
        snippet_head = QHBoxLayout()
        snippet_head.addWidget(QLabel("Snippet:"), 1)
        snippet_head.addWidget(self.copy_button)

        self.install_box = InstallBox()
        # The names tests and the window know the box's parts by.
        self.config_edit = self.install_box.config_edit
        self.force_check = self.install_box.force_check
        self.install_button = self.install_box.install_button
        self.install_result = self.install_box.result_label

        verify_box = QGroupBox("Verify: launch the server as the client would")
        self.verify_button = QPushButton("Verify")
        self.verify_status = QLabel("Not verified yet.")
        self.verify_status.setWordWrap(True)
        self.report_view = _ReportView()
        self.report_view.setAccessibleName("Verify report")
        self.report_view.setMinimumHeight(110)
        verify_row = QHBoxLayout()
        verify_row.addWidget(self.verify_button)
        verify_row.addWidget(self.verify_status, 1)
        verify_layout = QVBoxLayout(verify_box)
        verify_layout.addLayout(verify_row)
        verify_layout.addWidget(self._build_fix())
        verify_layout.addWidget(self.report_view, 1)
        verify_layout.addWidget(self._build_call_row())

        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
        buttons.rejected.connect(self.reject)

        # Everything but Close scrolls: on a small screen the dialog stays within it, Close
        # stays in reach, and the report keeps its room instead of running under the call row.
        content = QWidget()
        content_layout = QVBoxLayout(content)
        content_layout.setContentsMargins(0, 0, 0, 0)
        content_layout.addWidget(heading)
        content_layout.addLayout(choose)
        content_layout.addWidget(self.notes_label)
        content_layout.addLayout(snippet_head)
        content_layout.addWidget(self.snippet_edit, 1)
        content_layout.addWidget(self.install_box)
        content_layout.addWidget(verify_box, 2)  # after a Verify its report matters most
        self.scroll_area = scrolling(content)
        layout = QVBoxLayout(self)
        layout.addWidget(self.scroll_area, 1)
        layout.addWidget(buttons)
        fit_to_screen(self, 820, 780)

        self.copy_button.clicked.connect(self.copy_snippet)
        self.install_button.clicked.connect(self.install_entry)
        self.verify_button.clicked.connect(self.start_verify)
        self.call_button.clicked.connect(self.start_call)
        self.call_tool_combo.currentIndexChanged.connect(self._on_call_tool_changed)
        self.tasks.busy_changed.connect(self._on_busy_changed)

    def _build_launch(self, form: QFormLayout) -> None:
        """What starts the server (this machine's Python or a portable command) and how the
        entry names the agent file (as the author writes it; absolute by default)."""
        from mcp_export.clients.launchers import LAUNCHER_LABELS

        self.launcher_combo = QComboBox()
        for launcher, label in LAUNCHER_LABELS.items():
            self.launcher_combo.addItem(label, launcher)
        self.launcher_combo.setToolTip(
            "This machine's Python works here only; uvx, pipx run or your own command "
            "(for example metaagent) work on a colleague's machine too"
        )
        self.command_edit = QLineEdit()
        self.command_edit.setPlaceholderText("the command that runs metaagent, e.g. metaagent")
        self.command_edit.setEnabled(False)
        self.path_edit = QLineEdit(str(self.agent_path))
        self.path_edit.setToolTip(
            "The agent file as the entry names it: kept exactly as written here (a relative "
            "path is resolved where the client starts the server)"
        )
        form.addRow("Starts with:", self.launcher_combo)
        form.addRow("Command:", self.command_edit)
        form.addRow("Agent file:", self.path_edit)
        self.launcher_combo.currentIndexChanged.connect(self._on_launcher_changed)
        self.command_edit.textChanged.connect(self._on_entry_changed)
        self.path_edit.textChanged.connect(self._on_entry_changed)

    def _on_launcher_changed(self, *_: Any) -> None:
        self.command_edit.setEnabled(self.launcher_combo.currentData() == "command")
        self._on_entry_changed()

    def _build_call_row(self) -> QWidget:
        """Try a call: the tool, where its arguments come from, and the button."""
        self.call_tool_combo = QComboBox()
        self.call_tool_combo.setAccessibleName("Tool to call")
        self.call_tool_combo.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToContents)
        self.call_source = QLabel()
        self.call_source.setWordWrap(True)
        self.call_button = QPushButton("Try a call")
        self.call_button.setToolTip(
            "Launch the server as the client would and call the chosen tool once, with its "
            "first test case's arguments or sample values"
        )
        self.call_row = QWidget()
        row = QHBoxLayout(self.call_row)
        row.setContentsMargins(0, 0, 0, 0)
        row.addWidget(QLabel("Call"))
        row.addWidget(self.call_tool_combo)
        row.addWidget(self.call_source, 1)
        row.addWidget(self.call_button)
        self.call_row.setVisible(False)  # until a Verify has listed the tools
        return self.call_row

    def _build_fix(self) -> QWidget:
        """The keyring way for a model key the client's config leaves empty (with a document)."""
        self.keyring_offer: KeyringOffer | None = None
        self.keyring_field: KeyringField | None = None
        if self.document is None:
            self.fix_box = QWidget()
        else:
            self.keyring_offer = offer = KeyringOffer(self.document)
            self.keyring_field = offer.field
            offer.save_requested.connect(self.save_and_verify)
            offer.problem_shown.connect(self._on_keyring_problem)
            self.fix_box = offer
        self.fix_box.setVisible(False)
        return self.fix_box

    # -- public API ---------------------------------------------------------------------------

    def client(self) -> ClientId:
        """The chosen client's id."""
        value: ClientId = self.client_combo.currentData()
        return value

    def set_client(self, client: ClientId) -> None:
        """Choose a client by id (``claude-desktop``, ``claude-code``, ``vscode``, ``cursor``…)."""
        self.client_combo.setCurrentIndex(self.client_combo.findData(client))

    def snippet_text(self) -> str:
        """The snippet shown for the chosen client and name."""
        return self.snippet_edit.toPlainText()

    def copy_snippet(self) -> None:
        """Put the snippet on the clipboard."""
        clipboard = QGuiApplication.clipboard()
        clipboard.setText(self.snippet_text())
        self.install_box.set_result("Copied to the clipboard.", None)

    def ask_confirm(self, path: Path) -> bool:
        """Ask before ``path`` changes; tests replace this method to answer.

        Returns:
            Whether to go on.
        """
        name = self.entry.name if self.entry is not None else "the server"
        change = (
            "This file will change; a copy of it is kept next to it as a backup."
            if path.exists()
            else "This file does not exist yet and will be created."
        )
        answer = QMessageBox.question(
            self,
            "Install into the client's config",
            f"Install '{name}' into\n{path}?\n\n{change}",
        )
        return answer == QMessageBox.StandardButton.Yes

    def install_entry(self) -> InstallResult | None:
        """Merge the entry into the config file named in the dialog, after a confirmation.

        Returns:
            What ``install`` did, or None when nothing was attempted (declined, no file to
            install into) or it failed (the dialog shows why).
        """
        from mcp_export.clients.entry import CLIENTS

        entry = self.entry
        if entry is None or CLIENTS[entry.client].servers_key is None:
            return None
        return self.install_box.install(entry, self.ask_confirm)

    def start_verify(self) -> None:
        """Launch the exported server in the background; :attr:`verify_finished` tells the end."""
        if self.entry is None or self.tasks.is_running(_CALL):
            return
        self.report_view.clear()
        self.last_report = None
        self.last_call = None
        self.call_row.setVisible(False)
        self.fix_box.setVisible(False)
        self.verify_status.setStyleSheet("")
        self.verify_status.setText(f"Starting the server as {self.entry.info.label} would…")
        self.tasks.start(
            _VERIFY,
            self._verify(self.client(), self.entry.name, self._verify_config()),
            what="Verifying the export",
        )

    def is_verifying(self) -> bool:
        """Whether a Verify run is going on."""
        return self.tasks.is_running(_VERIFY)

    def call_tool(self) -> str | None:
        """The tool *Try a call* calls."""
        value: str | None = self.call_tool_combo.currentData()
        return value

    def set_call_tool(self, tool: str) -> None:
        """Choose the tool *Try a call* calls (one the last Verify listed)."""
        self.call_tool_combo.setCurrentIndex(self.call_tool_combo.findData(tool))

    def start_call(self) -> None:
        """Call the chosen tool through a freshly launched server; :attr:`call_finished` tells the
        end."""
        report = self.last_report
        if report is None or report.launch is None or self.agent is None or self.is_verifying():
            return
        self.last_call = None
        self.verify_status.setStyleSheet("")
        self.verify_status.setText(f"Calling {self.call_tool()} as {report.launch.label} would…")
        self.tasks.start(_CALL, self._call(report, self.call_tool()), what="Trying a call")

    def is_calling(self) -> bool:
        """Whether a *Try a call* is going on."""
        return self.tasks.is_running(_CALL)

    def save_and_verify(self) -> bool:
        """Save the document (its key now in the keyring) and verify again.

        Returns:
            Whether it was saved (a failure is reported where the save reports it).
        """
        from schema_types.errors import SchemaError

        document = self.document
        if document is None:
            return False
        if self._save is not None:
            saved = self._save(document)
        else:
            try:
                document.save()
            except (OSError, SchemaError, ValueError) as exc:
                reporter().error(f"Could not save {document.display_name()}", detail=str(exc))
                saved = False
            else:
                saved = True
        if not saved:
            return False
        self.agent = document.agent
        self._on_entry_changed()
        self.start_verify()
        return True

    def done(self, result: int) -> None:
        """Close the dialog; a Verify or call still running is cancelled (its servers end)."""
        self.tasks.cancel_all()
        super().done(result)

    # -- reactions ----------------------------------------------------------------------------

    def _on_client_changed(self, *_: Any) -> None:
        self.install_box.set_client(self.client())
        self._on_entry_changed()

    def _forget_report(self) -> None:
        # A report describes one client's entry: after a change it would describe another.
        if self.is_verifying() or self.is_calling():
            return
        self.last_report = None
        self.last_call = None
        self.report_view.clear()
        self.call_row.setVisible(False)
        self.fix_box.setVisible(False)
        self.verify_status.setStyleSheet("")
        self.verify_status.setText("Not verified yet.")

    def _verify_config(self) -> Path | None:
        """The config file to read the installed entry from: the one named in the dialog."""
        from mcp_export.clients.entry import CLIENTS

        if CLIENTS[self.client()].servers_key is None:
            return None
        return self.install_box.config_path()

    def _on_entry_changed(self, *_: Any) -> None:
        from mcp_export.clients.entry import CLIENTS, build_entry
        from mcp_export.clients.launchers import Launch

        if self.agent is None:
            return
        info = CLIENTS[self.client()]
        named = self.path_edit.text().strip() or str(self.agent_path)
        try:
            launch = Launch(self.launcher_combo.currentData(), self.command_edit.text(), "as-given")
            self.entry = build_entry(
                named, self.agent, self.client(), name=self.name_edit.text(), launch=launch
            )
        except ValueError as exc:
            self.entry = None
            self.snippet_edit.setPlainText("")
            self.notes_label.setText(f"<span style='color:{BAD}'>{html.escape(str(exc))}</span>")
        else:
            self.snippet_edit.setPlainText(self.entry.snippet)
            notes = [info.notes, *self.entry.notes]
            sampling = "offers MCP sampling" if info.sampling else "no MCP sampling"
            self.notes_label.setText(
                f"<b>{html.escape(info.label)}</b> ({sampling})<ul style='margin:0'>"
                + "".join(f"<li>{html.escape(note)}</li>" for note in notes)
                + "</ul>"
            )
        self._forget_report()
        ready = self.entry is not None
        self.copy_button.setEnabled(ready)
        self.install_button.setEnabled(ready)
        self.verify_button.setEnabled(ready and not self.is_verifying() and not self.is_calling())

    def _on_busy_changed(self, key: str, busy: bool) -> None:
        if key not in (_VERIFY, _CALL):
            return
        working = self.is_verifying() or self.is_calling()
        self.verify_button.setEnabled(not working and self.entry is not None)
        self.call_button.setEnabled(not working)
        if key == _VERIFY:
            self.verify_button.setText("Verifying…" if busy else "Verify")
        else:
            self.call_button.setText("Calling…" if busy else "Try a call")
        # Told only once the run is over, so a listener finds the dialog ready for the next one.
        if busy:
            return
        if key == _VERIFY and self.last_report is not None:
            self.verify_finished.emit(self.last_report)
        elif key == _CALL and self.last_call is not None:
            self.call_finished.emit(self.last_call)

    def _on_keyring_problem(self) -> None:
        offer = self.keyring_offer
        if offer is not None:  # once its new height is laid out, scrolled into view
            area = self.scroll_area
            QTimer.singleShot(0, area, lambda: area.ensureWidgetVisible(offer.problem))

    def _on_call_tool_changed(self, *_: Any) -> None:
        from mcp_export.clients.verify_call import plan_call

        report, tool = self.last_report, self.call_tool()
        if report is None or self.agent is None or tool is None:
            self.call_source.setText("")
            return
        plan = plan_call(self.agent, tool, [listed.name for listed in report.tools])
        self.call_source.setText(f"with {plan.source}" if plan is not None else "")

    async def _verify(self, client: ClientId, name: str, config: Path | None) -> None:
        from mcp_export.clients.verify import verify_export

        report = await verify_export(
            self.agent_path, client, name=name, timeout=_CONNECT_LIMIT_S, config_path=config
        )
        self.last_report = report
        self._show_report(report)
        if not report.ok:
            self.report_view.scrollToAnchor(PROBLEM_ANCHOR)  # what to fix, not the report's top
        self._offer_call(report)
        self._offer_keyring(report)

    async def _call(self, report: VerifyReport, tool: str | None) -> None:
        from mcp_export.clients.verify import call_after_verify

        assert self.agent is not None
        outcome = await call_after_verify(report, self.agent, tool, timeout=_CALL_LIMIT_S)
        self.last_call = outcome
        self._show_report(report)
        self.report_view.scrollToAnchor(CALL_ANCHOR)  # the answer, not the report's top

    def _show_report(self, report: VerifyReport) -> None:
        self.verify_status.setText(report_summary(report))
        color = GOOD if report.ok else BAD
        self.verify_status.setStyleSheet(f"color: {color}; font-weight: bold;")
        self.report_view.setHtml(report_html(report))

    def _offer_call(self, report: VerifyReport) -> None:
        from mcp_export.clients.verify_call import plan_call

        listed = [tool.name for tool in report.tools]
        self.call_tool_combo.blockSignals(True)
        self.call_tool_combo.clear()
        for name in listed:
            self.call_tool_combo.addItem(name, name)
        first = plan_call(self.agent, None, listed) if self.agent is not None else None
        if first is not None:
            self.call_tool_combo.setCurrentIndex(self.call_tool_combo.findData(first.tool))
        self.call_tool_combo.blockSignals(False)
        self._on_call_tool_changed()
        self.call_row.setVisible(bool(listed) and report.launch is not None)

    def _offer_keyring(self, report: VerifyReport) -> None:
        from mcp_export.clients.entry import CLIENTS

        fill = next((fill for fill in report.fills if fill.provider is not None), None)
        if fill is None or self.keyring_offer is None:
            self.fix_box.setVisible(False)
            return
        self.keyring_offer.offer(fill, CLIENTS[report.client])
        self.fix_box.setVisible(True)

    def _show_load_error(self, message: str) -> None:
        self.notes_label.setText(
            f"<span style='color:{BAD}'>The agent file cannot be loaded: "
            f"{html.escape(message)}</span>"
        )
        for widget in (self.copy_button, self.install_button, self.verify_button):
            widget.setEnabled(False)


# A scroll area gives its content at least the height the content would like at its width, so
# the text views ask for no more than their minimum: the content scrolls only when its minimum
# does not fit, and the views take the room left over (the layout's stretch).


class _SnippetView(QPlainTextEdit):
    def sizeHint(self) -> QSize:  # noqa: N802 (Qt override)
        return QSize(super().sizeHint().width(), self.minimumHeight())


class _ReportView(QTextBrowser):
    def sizeHint(self) -> QSize:  # noqa: N802 (Qt override)
        return QSize(super().sizeHint().width(), self.minimumHeight())
