"""The studio's main window: outline on the left, tabs on the right, status bar below.

Several agents can be open at once; each is one top-level row of the outline. The first tab
shows the settings page of the outline's current row (Agent, Model, MCP servers, Tools); tool
editors (and later chat tabs) open as further tabs. With nothing open the window shows the
welcome page. File handling (open, save with conflict detection, close prompts, recovery) is in
:class:`~app.window.files.FileActions`'s methods mixed in here, the menus and the toolbar in
:class:`~app.window.menus.MenuActions`'s, the runs in :class:`~app.window.runs.RunActions`'s.

Quit (Ctrl+Q) works from the window and from its dialogs (they close first); closing asks about
unsaved changes, then closes the run tabs, whose close-downs the history store outlives.
:meth:`MainWindow.quit_without_asking` closes without a question (the studio was told to end),
keeping unsaved agents as recovery copies.

Pages are built through :attr:`MainWindow.page_factories` (``"agent"``, ``"model"``,
``"servers"``, ``"tools"`` → ``Callable[[AgentDocument], QWidget]``), so other modules add or
replace pages without touching the window.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING

from PySide6.QtCore import QEvent, QObject, Qt, QTimer, Signal
from PySide6.QtGui import QCloseEvent, QKeyEvent, QKeySequence, QShowEvent, QUndoGroup
from PySide6.QtWidgets import (
    QApplication,
    QDialog,
    QLabel,
    QLineEdit,
    QMainWindow,
    QPlainTextEdit,
    QSplitter,
    QStackedWidget,
    QTabWidget,
    QTextEdit,
    QToolButton,
    QWidget,
)

from app.document.agent_document import AgentDocument, FieldPath, touches
from app.document.file_loading import AgentFileLoader
from app.document.qt_models import SECTIONS, OutlineNode
from app.document.recovery import AUTOSAVE_SECONDS, Autosaver, RecoveryStore
from app.errors import Report, reporter
from app.icons import app_icon, icon
from app.settings_store import SettingsStore
from app.window.files import FileActions
from app.window.menus import MenuActions
from app.window.outline import OutlineView
from app.window.runs import RunActions
from app.window.screen_fit import fit_to_screen
from app.window.view_menu import window_zoom
from schema_types.agent import ToolDefinition

if TYPE_CHECKING:
    from app.window.welcome import WelcomePage

__all__ = ["APP_NAME", "MainWindow", "PageFactory"]

APP_NAME = "Meta Agent Studio"
PageFactory = Callable[[AgentDocument], QWidget]


class MainWindow(FileActions, RunActions, MenuActions, QMainWindow):
    """The one studio window.

    Attributes:
        page_factories: builds the page for an outline section of a document.
        ask_save / ask_conflict / ask_recovery / ask_open_path / ask_save_path: the questions
            the window asks (see :mod:`app.window.files`); tests replace them.
    """

    closed = Signal()
    current_document_changed = Signal(object)
    document_opened = Signal(object)  # AgentDocument read from its file and shown

    def __init__(
        self,
        settings: SettingsStore | None = None,
        recovery: RecoveryStore | None = None,
        *,
        autosave_seconds: float | None = None,
    ) -> None:
        super().__init__()
        self.settings = settings or SettingsStore()
        self._zoom = window_zoom(self.settings)  # first: it walks the widgets that exist
        self.recovery = recovery or RecoveryStore(self.settings.home)
        if autosave_seconds is None:
            autosave_seconds = self.settings.autosave_seconds() or AUTOSAVE_SECONDS
        self.autosaver = Autosaver(self.recovery, interval_seconds=autosave_seconds, parent=self)
        self.undo_group = QUndoGroup(self)
        self._documents: list[AgentDocument] = []
        self._current: AgentDocument | None = None
        self._pages: dict[tuple[int, str], QWidget] = {}
        self._tool_tabs: list[QWidget] = []
        self._last_report: Report | None = None
        self._ask_on_close = True
        self._in_close_event = False
        self._closed_for_good = False
        self._closing_runs: asyncio.Task[None] | None = None  # held: asyncio holds tasks weakly
        self.page_factories: dict[str, PageFactory] = _default_page_factories(self)
        self.setWindowIcon(app_icon())
        self.setObjectName("mainWindow")

        self._welcome: WelcomePage | None = None  # built when first shown (not for a file start)
        self._opening: QLabel | None = None  # shown while the first agent is read
        self.file_loader = AgentFileLoader(self)
        self.file_loader.loaded.connect(self._on_file_loaded)
        self.file_loader.failed.connect(self._on_file_failed)
        self.outline = OutlineView()
        self.page_stack = QStackedWidget()
        self.page_stack.setObjectName("pageStack")
        self.tabs = QTabWidget()
        self.tabs.setObjectName("tabs")
        self.tabs.setDocumentMode(True)
        self.tabs.setTabsClosable(True)
        self.tabs.setMovable(True)
        self.tabs.addTab(self.page_stack, "")
        self.tabs.tabBar().setTabButton(0, self.tabs.tabBar().ButtonPosition.RightSide, None)
        self.splitter = QSplitter(Qt.Orientation.Horizontal)
        self.splitter.setObjectName("mainSplitter")
        self.splitter.addWidget(self.outline)
        self.splitter.addWidget(self.tabs)
        self.splitter.setStretchFactor(1, 1)
        self.central = QStackedWidget()
        self.central.addWidget(self.splitter)
        self.setCentralWidget(self.central)

        self._init_runs()
        self._build_menus()
        self._build_status_bar()
        self.outline.node_selected.connect(self._on_node_selected)
        self.outline.tool_activated.connect(self.open_tool_tab)
        self.tabs.currentChanged.connect(self._on_tab_changed)
        self.tabs.tabCloseRequested.connect(self._close_tab)
        reporter().reported.connect(self._on_report)
        self._restore_window_state()
        self._refresh()

    # -- welcome page and status bar -------------------------------------------------------

    @property
    def welcome(self) -> WelcomePage:
        """The page shown with no agent open; built the first time it is needed, so a start
        with a file does not read the examples for it."""
        if self._welcome is None:
            from app.window.welcome import WelcomePage

            page = WelcomePage()
            page.new_requested.connect(lambda: self.new_agent())
            page.open_requested.connect(self.open_dialog)
            page.file_requested.connect(self.open_file_soon)
            page.example_requested.connect(lambda path: self.new_agent(path))
            self.central.insertWidget(0, page)
            self._welcome = page
        return self._welcome

    def showEvent(self, event: QShowEvent) -> None:  # noqa: N802 (Qt override)
        """Shown with no agent open: the welcome page (built now, not at construction), or
        what is being opened."""
        if not self._documents and self._welcome is None:
            self._show_empty()
        super().showEvent(event)

    def _show_empty(self) -> None:
        """Nothing open: what is being read, else the welcome page."""
        if self.file_loader.is_loading():
            if self._opening is None:
                self._opening = QLabel()
                self._opening.setObjectName("openingPage")
                self._opening.setAlignment(Qt.AlignmentFlag.AlignCenter)
                self._opening.setEnabled(False)
                self.central.addWidget(self._opening)
            names = ", ".join(path.name for path in self.file_loader.loading())
            self._opening.setText(f"Opening {names}…")
            self.central.setCurrentWidget(self._opening)
        else:
            self._show_welcome()

    def _show_welcome(self) -> None:
        self.central.setCurrentWidget(self.welcome)
        self.welcome.set_recent_files(self.settings.recent_files())

    def _build_status_bar(self) -> None:
        status = self.statusBar()
        self.details_button = QToolButton()
        self.details_button.setText("Details…")
        self.details_button.setToolTip("Show the details of the last error")
        self.details_button.setAutoRaise(True)
        self.details_button.hide()
        self.details_button.clicked.connect(self._show_report_details)
        status.addPermanentWidget(self.details_button)

    def _on_report(self, report: Report) -> None:
        self._last_report = report
        prefix = {"info": "", "warning": "⚠ ", "error": "✖ "}[report.level]
        timeout = 0 if report.level == "error" else 10_000
        self.statusBar().showMessage(prefix + report.message, timeout)
        self.details_button.setVisible(bool(report.detail))

    def _show_report_details(self) -> None:
        if self._last_report is not None:
            from app.window.dialogs import show_report_details

            show_report_details(self, self._last_report)

    # -- documents -------------------------------------------------------------------------

    def documents(self) -> list[AgentDocument]:
        """The open documents, in outline order."""
        return list(self._documents)

    def current_document(self) -> AgentDocument | None:
        """The document the File and Edit menus act on."""
        return self._current

    def add_document(self, document: AgentDocument) -> AgentDocument:
        """Show ``document`` in the outline and make it current."""
        document.setParent(self)
        self._documents.append(document)
        self.undo_group.addStack(document.undo_stack)
        self.autosaver.track(document)
        document.dirty_changed.connect(lambda _dirty: self._refresh())
        document.path_changed.connect(self._refresh)
        document.changed_at.connect(self._on_changed_at)
        self.outline.add_document(document)
        self._set_current(document)
        self.check_tool_schemas_soon(document)
        return document

    def remove_document(self, document: AgentDocument) -> None:
        """Drop ``document`` and everything shown for it (no questions asked)."""
        for tab in [t for t in self._tool_tabs if getattr(t, "document", None) is document]:
            self._remove_tool_tab(tab)
        self._remove_run_tabs_of(document)
        for key in [k for k in self._pages if k[0] == id(document)]:
            page = self._pages.pop(key)
            self.page_stack.removeWidget(page)
            page.deleteLater()
        self.outline.remove_document(document)
        self.undo_group.removeStack(document.undo_stack)
        self.autosaver.forget(document)
        self._documents.remove(document)
        if self._current is document:
            self._current = None
            if self._documents:
                self.outline.select(self._documents[-1], "agent")
        document.deleteLater()
        self._refresh()

    def _set_current(self, document: AgentDocument | None) -> None:
        if document is self._current:
            return
        self._current = document
        self.undo_group.setActiveStack(document.undo_stack if document else None)  # type: ignore[arg-type]
        self._refresh()
        self.current_document_changed.emit(document)

    # -- pages and tabs --------------------------------------------------------------------

    def show_page(self, document: AgentDocument, kind: str) -> QWidget:
        """Show (building it once) ``document``'s page for ``kind`` in the first tab."""
        key = (id(document), kind)
        page = self._pages.get(key)
        if page is None:
            page = self.page_factories[kind](document)
            self._pages[key] = page
            self.page_stack.addWidget(page)
        self.page_stack.setCurrentWidget(page)
        self.outline.select(document, kind)
        self.tabs.setCurrentIndex(0)
        self._refresh_titles()
        return page

    def page(self, document: AgentDocument, kind: str) -> QWidget | None:
        """The page already built for ``document``'s ``kind``, if any."""
        return self._pages.get((id(document), kind))

    def _on_node_selected(self, node: OutlineNode) -> None:
        self._set_current(node.document)
        kind = "agent" if node.kind == "document" else "tools" if node.kind == "tool" else node.kind
        page = self.show_page(node.document, kind)
        select_tool = getattr(page, "select_tool", None)
        if node.tool is not None and callable(select_tool):
            select_tool(node.tool)

    def open_tool_tab(self, document: AgentDocument, tool: ToolDefinition) -> QWidget:
        """Open (or bring forward) the editor tab of ``tool``."""
        for tab in self._tool_tabs:
            if getattr(tab, "document", None) is document and getattr(tab, "tool", None) is tool:
                self.tabs.setCurrentWidget(tab)
                return tab
        # The editor's modules load on first use.
        from app.test_run.memory import SampleMemory
        from app.tool_editor.tab import create_tool_tab

        tab = create_tool_tab(
            document, tool, samples_memory=SampleMemory(self.settings), history=self.history_store
        )
        self.watch_text_fields(tab)
        self.find_actions.follow_focus()
        keep_pane_sizes = getattr(tab, "keep_pane_sizes", None)
        if callable(keep_pane_sizes):
            keep_pane_sizes(self.settings)
        text_fields_added = getattr(tab, "text_fields_added", None)
        if text_fields_added is not None:
            text_fields_added.connect(self.watch_text_fields)
        run_cases_requested = getattr(tab, "run_cases_requested", None)
        if run_cases_requested is not None:
            run_cases_requested.connect(
                lambda selection, d=document: self.open_matrix_tab(d, selection)
            )
        self._tool_tabs.append(tab)
        index = self.tabs.addTab(tab, icon("tool"), tool.name)
        self.tabs.setTabToolTip(index, f"{tool.name} — {document.display_name()}")
        title_changed = getattr(tab, "title_changed", None)
        if title_changed is not None:
            title_changed.connect(lambda title, t=tab: self._retitle_tab(t, title))
        test_requested = getattr(tab, "test_requested", None)
        if test_requested is not None:
            test_requested.connect(lambda tool, d=document: self.open_test_dialog(d, tool))
        tool_removed = getattr(tab, "tool_removed", None)
        if tool_removed is not None:
            tool_removed.connect(lambda t=tab: self._remove_tool_tab(t))
        self.tabs.setCurrentWidget(tab)
        return tab

    def tool_tabs(self) -> list[QWidget]:
        """The open tool tabs."""
        return list(self._tool_tabs)

    def _retitle_tab(self, tab: QWidget, title: str) -> None:
        index = self.tabs.indexOf(tab)
        if index >= 0:
            self.tabs.setTabText(index, title)

    def _remove_tool_tab(self, tab: QWidget) -> None:
        if tab in self._tool_tabs:
            self._tool_tabs.remove(tab)
            self.tabs.removeTab(self.tabs.indexOf(tab))
            tab.deleteLater()

    def _close_tab(self, index: int) -> None:
        widget = self.tabs.widget(index)
        if widget in self._tool_tabs:
            self._remove_tool_tab(widget)
        elif widget is not None:
            self.remove_run_tab(widget)

    def _close_current_tab(self) -> None:
        self._close_tab(self.tabs.currentIndex())

    def _on_tab_changed(self, index: int) -> None:
        document = getattr(self.tabs.widget(index), "document", None)
        if isinstance(document, AgentDocument) and index != 0:
            self._set_current(document)
        elif index == 0:
            node = self.outline.current_node()
            if node is not None:
                self._set_current(node.document)

    # -- titles ----------------------------------------------------------------------------

    def _refresh(self) -> None:
        has_documents = bool(self._documents)
        if has_documents:
            self.central.setCurrentWidget(self.splitter)
        elif self.isVisible() or self._welcome is not None:
            self._show_empty()
        document = self._current
        for action in (
            self.save_action,
            self.save_as_action,
            self.close_action,
            self.add_tool_action,
        ):
            action.setEnabled(document is not None)
        self._update_agent_actions(document is not None)
        self._refresh_titles()

    def _on_changed_at(self, path: FieldPath) -> None:
        if touches(path, ("metadata", "name")):  # in the window title and the page tab
            self._refresh_titles()

    def _refresh_titles(self) -> None:
        document = self._current
        if document is None:
            self.setWindowTitle(APP_NAME)
            self.setWindowModified(False)
        else:
            self.setWindowTitle(f"{document.display_name()}[*] — {APP_NAME}")
            self.setWindowModified(document.is_dirty())
        node = self.outline.current_node()
        if node is not None:
            kind = "tools" if node.kind == "tool" else node.kind
            label = next((label for k, label, _ in SECTIONS if k == kind), "Agent")
            self.tabs.setTabText(0, f"{node.document.agent.metadata.name} · {label}")
            self.tabs.setTabIcon(0, icon(next((i for k, _, i in SECTIONS if k == kind), "agent")))

    # -- window state ----------------------------------------------------------------------

    def _restore_window_state(self) -> None:
        geometry = self.settings.window_geometry()
        if geometry is None or not self.restoreGeometry(geometry):
            fit_to_screen(self, 1200, 780)
        else:  # saved on a larger screen, or one that is gone
            fit_to_screen(self, self.width(), self.height())

    def save_window_state(self) -> None:
        """Remember geometry and splitter sizes for the next start."""
        self.settings.set_window_geometry(self.saveGeometry())
        self.view.keep_sizes()

    # -- quitting --------------------------------------------------------------------------

    def quit(self) -> None:
        """File ▸ Quit: close the window's dialogs, then the window (which asks about unsaved
        changes first; while it asks, Quit waits for the answer)."""
        if self._in_close_event:
            return
        if self._close_dialogs():  # the close comes once their own event loops have ended
            QTimer.singleShot(0, self.close)
        else:
            self.close()

    def quit_without_asking(self) -> None:
        """Close without a question: the studio was told to end (SIGTERM, Ctrl+C in its
        terminal) and nobody may be there to answer. Unsaved agents keep their recovery copies,
        which the next start offers. A question on screen is cancelled first; the window closes
        once the close that asked it has returned."""
        if self._closed_for_good:
            return
        self._ask_on_close = False
        self._close_dialogs()
        self._close_when_not_asking()

    def _close_when_not_asking(self) -> None:
        if self._in_close_event:
            QTimer.singleShot(0, self._close_when_not_asking)
        else:
            self.close()

    def _close_dialogs(self) -> bool:
        """Reject the window's open dialogs; whether there were any."""
        dialogs = [
            widget
            for widget in QApplication.topLevelWidgets()
            if isinstance(widget, QDialog) and widget.isVisible() and self._owns(widget)
        ]
        for dialog in dialogs:
            dialog.reject()
        return bool(dialogs)

    def _owns(self, widget: QWidget) -> bool:
        parent = widget.parentWidget()
        while parent is not None and parent is not self:
            parent = parent.parentWidget()
        return parent is self

    def _offer_quit_in_dialog(self, _old: QWidget | None, now: QWidget | None) -> None:
        """Ctrl+Q quits from the window's dialogs too: the window's own shortcuts act only
        while it is the active window, and not at all while a modal dialog is open."""
        dialog = now.window() if now is not None else None
        if (
            isinstance(dialog, QDialog)
            and self.quit_action not in dialog.actions()
            and self._owns(dialog)
        ):
            dialog.addAction(self.quit_action)

    def closeEvent(self, event: QCloseEvent) -> None:  # noqa: N802 (Qt override)
        """Ask about unsaved changes of every agent; Cancel keeps the window open. Closed, the
        window stops its runs; it closes once only."""
        if self._closed_for_good:
            event.accept()
            return
        self._in_close_event = True
        try:
            for document in list(self._documents) if self._ask_on_close else []:
                if not self.confirm_close(document):
                    event.ignore()
                    return
        finally:
            self._in_close_event = False
        if not self._ask_on_close:
            self.autosaver.save_all()
        self.save_window_state()
        for document in list(self._documents):
            if self._ask_on_close or not document.is_dirty():
                self.autosaver.forget(document)
        self.autosaver.timer.stop()
        self._close_run_tabs()
        self.file_loader.shutdown()
        self.view.release_zoom()
        self._closed_for_good = True
        event.accept()
        self.closed.emit()

    def _close_run_tabs(self) -> None:
        """Close the run tabs; the history store they record into closes after their
        close-downs (each bounded: a run stopped, its tool servers ended)."""
        tabs = self.run_tabs()
        for tab in tabs:
            self.remove_run_tab(tab)
        try:
            asyncio.get_running_loop()
        except RuntimeError:  # no loop: nothing runs that could still record
            self.close_history_store()
            return
        close_downs = [aclose() for tab in tabs if callable(aclose := getattr(tab, "aclose", None))]
        self._closing_runs = asyncio.ensure_future(self._close_store_after(close_downs))

    async def _close_store_after(self, close_downs: list[Awaitable[object]]) -> None:
        try:
            if close_downs:
                await asyncio.wait([asyncio.ensure_future(c) for c in close_downs])
        finally:
            self.close_history_store()

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:  # noqa: N802 (Qt override)
        """Undo/redo keys in a text field act on the agent's undo stack, not the field's own.

        The field claims the key (ShortcutOverride) so it gets the key press, which then runs
        the window's undo or redo: the same path whether or not the window is active.
        """
        if isinstance(event, QKeyEvent) and event.type() in (
            QEvent.Type.ShortcutOverride,
            QEvent.Type.KeyPress,
        ):
            undo = event.matches(QKeySequence.StandardKey.Undo)
            redo = event.matches(QKeySequence.StandardKey.Redo) or (
                event.key() == Qt.Key.Key_Y
                and event.modifiers() == Qt.KeyboardModifier.ControlModifier
            )
            if undo or redo:
                event.accept()
                if event.type() == QEvent.Type.KeyPress:
                    (self.undo_action if undo else self.redo_action).trigger()
                return True
        return super().eventFilter(watched, event)

    def watch_text_fields(self, root: QWidget) -> None:
        """Route undo keys in ``root``'s text fields to the document's undo stack."""
        for field in root.findChildren(QWidget):
            if isinstance(field, QLineEdit | QPlainTextEdit | QTextEdit):
                field.installEventFilter(self)
                if isinstance(field, QPlainTextEdit | QTextEdit):
                    field.setUndoRedoEnabled(False)


def _default_page_factories(window: MainWindow) -> dict[str, PageFactory]:
    def agent_page(document: AgentDocument) -> QWidget:
        from app.pages.agent_page import AgentPage

        page = AgentPage(document)
        window.watch_text_fields(page)
        return page

    def tools_page(document: AgentDocument) -> QWidget:
        from app.pages.tools_list import ToolsListWidget

        page = ToolsListWidget(document)
        page.open_tool.connect(lambda tool: window.open_tool_tab(document, tool))
        page.test_tool.connect(lambda tool: window.open_test_dialog(document, tool))
        page.draft_tool.connect(lambda: window.new_tool_from_description(document))
        return page

    def model_page(document: AgentDocument) -> QWidget:
        from app.pages.model_page import ModelPage

        page = ModelPage(document)
        window.watch_text_fields(page)
        window.offer_endpoints(page.base_url_edit)
        return page

    def servers_page(document: AgentDocument) -> QWidget:
        from app.pages.servers_page import ServersPage

        page = ServersPage(document)
        window.watch_text_fields(page)
        return page

    return {
        "agent": agent_page,
        "model": model_page,
        "servers": servers_page,
        "tools": tools_page,
    }
