"""The main window's "Agent" menu: test a tool, run test cases, chat, history, export, and
*Ready to ship* (Ctrl+Shift+E: :mod:`app.ship_panel` in a run tab, each finding opening its tool).

Mixed into :class:`~app.window.main_window.MainWindow` like :class:`~app.window.files.FileActions`.
A
test run goes tool editor (Ctrl+Enter) or tools list → :class:`~app.test_run.dialog.TestToolDialog`
→ a new :class:`~app.chat.chat_tab.ChatTab` that submits the filled prompt at once; a chat tab's
"open settings" button shows the agent's model or MCP servers page; a history tab re-runs a past
test through the dialog again, pre-filled. These tabs (chat and history) are "run tabs": closable,
and closed with their agent. "Run test cases" (Ctrl+Shift+Enter) opens a matrix tab
(:class:`~app.test_cases.matrix_tab.MatrixTab`) that runs every case of the agent at once;
:meth:`RunActions.open_matrix_tab` opens one for chosen cases and models too. The history store
is opened once, on first use, and shared.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import QMenu, QMenuBar, QMessageBox, QTabWidget, QWidget

from app.document.agent_document import AgentDocument
from app.errors import reporter
from app.icons import icon
from schema_types.agent import ToolDefinition

if TYPE_CHECKING:
    from mcp_export.history.store import HistoryStore

__all__ = ["RunActions"]


class RunActions:
    """Test dialogs, chat tabs, history tabs and the export dialog of the current agent."""

    tabs: QTabWidget  # provided by MainWindow, like the methods below

    if TYPE_CHECKING:

        def current_document(self) -> AgentDocument | None: ...
        def show_page(self, document: AgentDocument, kind: str) -> QWidget: ...
        def save(self, document: AgentDocument | None = None) -> bool: ...

    _run_tabs: list[QWidget]
    _history_store: HistoryStore | None

    def _init_runs(self) -> None:
        self._run_tabs = []
        self._history_store = None

    def _build_agent_menu(self, bar: QMenuBar) -> QMenu:
        window: Any = self
        menu = bar.addMenu("&Agent")
        self.test_action = QAction(icon("tool"), "&Test tool…", window)
        self.test_action.setShortcut(QKeySequence("Ctrl+Return"))
        self.test_action.setToolTip("Fill in the arguments of the current tool and run it")
        self.test_action.triggered.connect(self._on_test_current_tool)
        self.cases_action = QAction(icon("tool"), "Run test &cases", window)
        self.cases_action.setShortcuts(
            [QKeySequence("Ctrl+Shift+Return"), QKeySequence("Ctrl+Shift+Enter")]
        )
        self.cases_action.setToolTip("Run every test case of the agent on its model")
        self.cases_action.triggered.connect(lambda: self._with_document(self.open_matrix_tab))
        self.attacks_action = QAction(icon("tool"), "Run &attacks", window)
        self.attacks_action.setToolTip(
            "The built-in attack pack on every tool, on the agent's model"
        )
        self.attacks_action.triggered.connect(lambda: self._with_document(self.open_attacks_tab))
        self.chat_action = QAction(icon("agent"), "&Chat with agent", window)
        self.chat_action.setShortcut(QKeySequence("Ctrl+Shift+C"))
        self.chat_action.triggered.connect(lambda: self._with_document(self.open_chat_tab))
        self.history_action = QAction("&History", window)
        # Off Ctrl+H: that is the platform's Replace (QKeySequence.StandardKey.Replace), which the
        # template and JSON editors answer.
        self.history_action.setShortcut(QKeySequence("Ctrl+Shift+H"))
        self.history_action.triggered.connect(lambda: self._with_document(self.open_history_tab))
        self.versions_action = QAction("&Versions of a tool", window)
        self.versions_action.setToolTip(
            "Each version of a tool its test runs recorded: pass rate, time, tokens, cost, diff"
        )
        self.versions_action.triggered.connect(lambda: self._with_document(self.open_versions_tab))
        self.export_action = QAction(icon("servers"), "&Export to an MCP client…", window)
        self.export_action.setShortcut(QKeySequence("Ctrl+E"))
        self.export_action.triggered.connect(lambda: self._with_document(self.open_export_dialog))
        self.ship_action = QAction(icon("servers"), "Ready to &ship…", window)
        self.ship_action.setShortcut(QKeySequence("Ctrl+Shift+E"))
        self.ship_action.setToolTip("What each MCP client will refuse or change of the tools")
        self.ship_action.triggered.connect(lambda: self._with_document(self.open_ship_tab))
        for action in (
            self.test_action,
            self.cases_action,
            self.attacks_action,
            self.chat_action,
            self.history_action,
            self.versions_action,
        ):
            menu.addAction(action)
        menu.addSeparator()
        menu.addAction(self.export_action)
        menu.addAction(self.ship_action)
        return menu

    def _update_agent_actions(self, has_document: bool) -> None:
        for action in (
            self.test_action,
            self.cases_action,
            self.attacks_action,
            self.chat_action,
            self.history_action,
            self.versions_action,
            self.export_action,
            self.ship_action,
        ):
            action.setEnabled(has_document)

    def _with_document(self, function: Callable[[AgentDocument], object]) -> None:
        document = self.current_document()
        if document is not None:
            function(document)

    # -- the store -------------------------------------------------------------------------

    def history_store(self) -> HistoryStore | None:
        """The shared history store (None, reported, when it cannot be opened)."""
        if self._history_store is None:
            from mcp_export.errors import HistoryError
            from mcp_export.history.store import HistoryStore

            try:
                self._history_store = HistoryStore()
            except HistoryError as exc:
                reporter().warning(f"History is off: {exc}")
                return None
        return self._history_store

    def close_history_store(self) -> None:
        """Close the store (the window is closing)."""
        store, self._history_store = self._history_store, None
        if store is not None:
            store.close()

    # -- tabs ------------------------------------------------------------------------------

    def run_tabs(self) -> list[QWidget]:
        """The open chat, test-case and history tabs."""
        return list(self._run_tabs)

    def _unique_title(self, title: str) -> str:
        """``title``, numbered when a tab has it already (two tests of a tool in one minute)."""
        taken = {self.tabs.tabText(index) for index in range(self.tabs.count())}
        number = 1
        unique = title
        while unique in taken:
            number += 1
            unique = f"{title} ({number})"
        return unique

    def _add_run_tab(self, tab: QWidget, title: str, icon_name: str, tip: str) -> None:
        self._run_tabs.append(tab)
        index = self.tabs.addTab(tab, icon(icon_name), title)
        self.tabs.setTabToolTip(index, tip)
        self.tabs.setCurrentWidget(tab)

    def remove_run_tab(self, tab: QWidget) -> None:
        """Close a chat or history tab (a running chat is stopped)."""
        if tab not in self._run_tabs:
            return
        self._run_tabs.remove(tab)
        self.tabs.removeTab(self.tabs.indexOf(tab))
        tab.close()
        tab.deleteLater()

    def _remove_run_tabs_of(self, document: AgentDocument) -> None:
        for tab in [t for t in self._run_tabs if getattr(t, "document", None) is document]:
            self.remove_run_tab(tab)

    # -- test runs -------------------------------------------------------------------------

    def _on_test_current_tool(self) -> None:
        widget = self.tabs.currentWidget()
        document = getattr(widget, "document", None) or self.current_document()
        tool = getattr(widget, "tool", None)
        if not isinstance(document, AgentDocument):
            return
        if not isinstance(tool, ToolDefinition):
            tool = document.agent.tools[0] if document.agent.tools else None
        if tool is None:
            reporter().warning("This agent has no tools to test yet: add one first.")
            return
        self.open_test_dialog(document, tool)

    def open_test_dialog(
        self,
        document: AgentDocument,
        tool: ToolDefinition,
        arguments: dict[str, Any] | None = None,
    ) -> QWidget:
        """Show the Test dialog for ``tool`` (pre-filled with ``arguments`` when given)."""
        from app.test_run.dialog import TestToolDialog

        window: Any = self
        dialog = TestToolDialog(document, tool, window.settings, window)
        if arguments is not None:
            dialog.set_arguments(arguments, source="Started from the call picked in the History.")
        dialog.run_requested.connect(
            lambda request: self.open_chat_tab(
                document,
                tool_name=request.tool_name,
                arguments=request.arguments,
                prompt=request.prompt,
            )
        )
        dialog.setModal(True)
        dialog.show()
        return dialog

    def open_chat_tab(
        self,
        document: AgentDocument,
        *,
        tool_name: str | None = None,
        arguments: dict[str, Any] | None = None,
        prompt: str | None = None,
    ) -> QWidget:
        """A new chat tab: a tool test (submits ``prompt`` at once) or a plain chat."""
        from app.chat.chat_tab import ChatTab

        name = document.agent.metadata.name
        title = f"{tool_name} · {time.strftime('%H:%M')}" if tool_name else f"Chat · {name}"
        title = self._unique_title(title)
        tab = ChatTab(
            document,
            title=title,
            tool_name=tool_name,
            arguments=arguments,
            history=self.history_store(),
        )
        tab.open_settings_requested.connect(lambda kind: self.show_page(document, kind))
        tip = f"Test run of {tool_name}" if tool_name else f"Chat with {name}"
        self._add_run_tab(tab, title, "tool" if tool_name else "agent", tip)
        if tool_name is not None and prompt is not None:
            tab.start_test(prompt)
        return tab

    # -- test cases ------------------------------------------------------------------------

    def open_matrix_tab(
        self,
        document: AgentDocument,
        selection: list[tuple[str, str]] | None = None,
        models: list[str] | None = None,
    ) -> QWidget | None:
        """Run test cases of ``document`` in a matrix tab, and show it.

        Args:
            document: the open agent (run as it is in the editor, unsaved edits included).
            selection: ``(tool, case)`` pairs to run; None: every case of the agent.
            models: the models to run on; None: those picked last time, else the agent's own.

        Returns:
            The tab: a new one, or the one already showing this selection (run again unless it
            is still running). None when there is no case to run; the status bar then says how
            to add one.
        """
        from app.test_cases.runner import NO_CASES_MESSAGE, chosen_cases

        agent = document.agent
        if not chosen_cases(agent, selection):
            name = agent.metadata.name or "This agent"
            if selection is None:
                reporter().warning(NO_CASES_MESSAGE.format(name=name))
            else:
                reporter().warning(f"{name} has none of those test cases any more.")
            return None
        from app.test_cases.matrix_tab import MatrixTab

        window: Any = self
        wanted = None if selection is None else list(selection)
        for tab in self._run_tabs:
            if isinstance(tab, MatrixTab) and tab.document is document and tab.selection == wanted:
                if models:
                    tab.picker.set_checked(models)
                self.tabs.setCurrentWidget(tab)
                if not tab.busy:
                    tab.run()
                return tab
        tab = MatrixTab(
            document,
            history=self.history_store(),
            selection=wanted,
            models=models,
            settings=window.settings,
        )
        title, tip = _matrix_title(agent.metadata.name, wanted)
        self._add_run_tab(tab, title, "tool", tip)
        tab.attacks_requested.connect(lambda picked: self.open_attacks_tab(document, picked))
        tab.run()
        return tab

    def open_attacks_tab(self, document: AgentDocument, models: Sequence[str] = ()) -> QWidget:
        """The attack pack on the agent's tools and ``models`` (none: the agent's own), in its
        own tab, started."""
        from app.test_cases.attacks_mode import AttacksView

        view = AttacksView(document, models)
        name = document.agent.metadata.name
        self._add_run_tab(
            view, self._unique_title(f"Attacks · {name}"), "tool", f"Attacks on {name}"
        )
        view.run()
        return view

    # -- history and export ----------------------------------------------------------------

    def _reshow_agent_tab(self, document: AgentDocument, object_name: str) -> QWidget | None:
        """The open tab named ``object_name`` of ``document``, refreshed and made current; None
        when there is none."""
        for tab in self._run_tabs:
            if getattr(tab, "document", None) is document and tab.objectName() == object_name:
                refresh = getattr(tab, "refresh", None)
                if callable(refresh):
                    refresh()
                self.tabs.setCurrentWidget(tab)
                return tab
        return None

    def open_history_tab(self, document: AgentDocument) -> QWidget | None:
        """The agent's history (chats, test runs and served calls), in a tab."""
        shown = self._reshow_agent_tab(document, "historyTab")
        if shown is not None:
            return shown
        store = self.history_store()
        if store is None:
            return None
        from app.history.view import HistoryView

        view = HistoryView(document.agent.metadata.name, document.path, store)
        view.setObjectName("historyTab")
        view.document = document  # type: ignore[attr-defined]  # closes with its agent

        def rerun(tool_name: str, arguments: dict[str, Any]) -> None:
            tool = document.agent.metadata.tool(tool_name)
            if tool is None:
                reporter().warning(f"The agent has no tool {tool_name} any more.")
                return
            self.open_test_dialog(document, tool, arguments)

        view.rerun_requested.connect(rerun)
        name = document.agent.metadata.name
        self._add_run_tab(view, f"History · {name}", "agent", f"History of {name}")
        return view

    def open_versions_tab(self, document: AgentDocument) -> QWidget | None:
        """The versions of the agent's tools (``app/versions``), in a tab."""
        shown = self._reshow_agent_tab(document, "versionsTab")
        if shown is not None:
            return shown
        store = self.history_store()
        if store is None:
            return None
        from app.versions.view import VersionsView

        view = VersionsView(document, store)
        name = document.agent.metadata.name
        self._add_run_tab(view, f"Versions · {name}", "agent", f"Versions of {name}'s tools")
        return view

    def open_export_dialog(self, document: AgentDocument) -> QWidget | None:
        """The export dialog; the agent is saved first (clients launch the file on disk)."""
        window: Any = self
        if document.path is None or document.is_dirty():
            answer = QMessageBox.question(
                window,
                "Export",
                "MCP clients start the agent from its file. Save it first?",
                QMessageBox.StandardButton.Save | QMessageBox.StandardButton.Cancel,
            )
            if answer != QMessageBox.StandardButton.Save or not self.save(document):
                return None
        assert document.path is not None
        from app.export_dialog import ExportDialog

        dialog = ExportDialog(document.path, window, document=document, save=self.save)
        dialog.show()
        return dialog

    def open_ship_tab(self, document: AgentDocument) -> QWidget:
        """The agent's *Ready to ship* panel (:mod:`app.ship_panel`), in a tab."""
        for tab in self._run_tabs:
            if getattr(tab, "document", None) is document and tab.objectName() == "shipPanel":
                self.tabs.setCurrentWidget(tab)
                return tab
        from app.ship_panel import ShipPanel, reveal_finding

        window: Any = self
        panel = ShipPanel(document)

        def go_to(finding: Any) -> None:
            tool = next((t for t in document.agent.tools if t.name == finding.tool), None)
            if tool is None:
                self.show_page(document, "tools")
                return
            reveal_finding(window.open_tool_tab(document, tool), finding)

        panel.finding_activated.connect(go_to)
        name = document.agent.metadata.name
        tip = f"What each MCP client will refuse or change of {name}'s tools"
        self._add_run_tab(panel, f"Ready to ship · {name}", "servers", tip)
        return panel


def _matrix_title(agent_name: str, selection: Sequence[tuple[str, str]] | None) -> tuple[str, str]:
    """A matrix tab's title and tool tip: the agent's cases, one tool's, or one case."""
    if selection is None:
        return f"Tests · {agent_name}", f"Test cases of {agent_name}"
    tools = {tool for tool, _ in selection}
    if len(selection) == 1:
        tool, case = selection[0]
        return f"Test · {case}", f"Test case {case} of {tool}"
    if len(tools) == 1:
        tool = next(iter(tools))
        return f"Tests · {tool}", f"{len(selection)} test cases of {tool}"
    return f"Tests · {agent_name}", f"{len(selection)} test cases of {agent_name}"
