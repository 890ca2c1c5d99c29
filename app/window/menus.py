"""The main window's menus and toolbar, and the Help and Preferences windows they open.

Mixed into :class:`~app.window.main_window.MainWindow` like :class:`~app.window.files.FileActions`:

- File: New agent (blank or from an example), Open, Open Recent, Save, Save As, Close, Quit;
- Edit: Undo and Redo on the current agent, Find… and Replace… in the focused editor
  (:mod:`app.window.edit_menu`), Preferences… (:mod:`app.window.preferences`);
- Agent: Add tool, New tool from a description… (:mod:`app.authoring.draft_dialog`), then the
  runs (:mod:`app.window.runs`);
- View: theme, zoom, toolbar and outline (:mod:`app.window.view_menu`);
- Help: Getting started, Keyboard shortcuts, About (:mod:`app.window.help_pages`,
  :mod:`app.window.shortcuts`).

The toolbar (:mod:`app.window.toolbar`) holds New, Open, Save, Add tool, Test, Export and Ready
to ship: the menus' own actions. Add tool adds a tool to the current agent on its Tools page,
with the new name open for typing, as the page's own Add does.

The Help menu's and Preferences' modules load when first asked for, as the welcome page's do: a
start that shows none of them does not import them.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QStringListModel, Qt
from PySide6.QtGui import QAction, QIcon, QKeySequence
from PySide6.QtWidgets import QApplication, QCompleter, QLineEdit, QMenu, QMenuBar, QWidget

from app.document.agent_document import AgentDocument
from app.icons import icon
from app.settings_store import SettingsStore
from app.window.edit_menu import PLAIN_LABEL_PROPERTY, FindActions
from app.window.first_paint import after_first_paint
from app.window.toolbar import MainToolbar
from app.window.view_menu import ViewControls, WindowZoom

if TYPE_CHECKING:
    from PySide6.QtGui import QUndoGroup
    from PySide6.QtWidgets import QSplitter, QToolBar

    from app.document.file_loading import AgentFileLoader
    from app.window.help_pages import Step
    from app.window.preferences import Preferences

__all__ = ["MenuActions"]


class MenuActions:
    """The menus, the toolbar and what only they open (provided to MainWindow)."""

    settings: SettingsStore
    undo_group: QUndoGroup
    splitter: QSplitter
    file_loader: AgentFileLoader
    _zoom: WindowZoom
    endpoint_urls: QStringListModel

    if TYPE_CHECKING:
        test_action: QAction
        export_action: QAction
        ship_action: QAction

        def current_document(self) -> AgentDocument | None: ...
        def show_page(self, document: AgentDocument, kind: str) -> QWidget: ...
        def new_agent(self, example: Path | None = None) -> AgentDocument | None: ...
        def open_dialog(self) -> None: ...
        def save(self, document: AgentDocument | None = None) -> bool: ...
        def save_as(self, document: AgentDocument | None = None) -> bool: ...
        def close_document(self, document: AgentDocument | None = None) -> bool: ...
        def quit(self) -> None: ...
        def _close_current_tab(self) -> None: ...
        def _fill_recent_menu(self) -> None: ...
        def _offer_quit_in_dialog(self, old: QWidget | None, now: QWidget | None) -> None: ...
        def _build_agent_menu(self, bar: QMenuBar) -> QMenu: ...

    def _action(
        self,
        text: str,
        slot: Callable[[], object],
        shortcut: object = None,
        *,
        icon_name: str = "",
        tip: str = "",
    ) -> QAction:
        window: Any = self
        action = QAction(icon(icon_name) if icon_name else QIcon(), text, window)
        if shortcut is not None:
            action.setShortcut(QKeySequence(shortcut))  # type: ignore[call-overload]
        if tip:
            action.setStatusTip(tip)
        action.triggered.connect(lambda _checked=False: slot())
        return action

    def _build_menus(self) -> None:
        window: Any = self
        self.endpoint_urls = QStringListModel(_urls(self.settings.endpoints()), window)
        bar: QMenuBar = window.menuBar()
        self._build_file_menu(bar)
        self._build_edit_menu(bar)
        agent_menu = self._build_agent_menu(bar)
        self.add_tool_action = self._action(
            "&Add tool",
            self.add_tool,
            icon_name="add",
            tip="Add a tool to the current agent and type its name",
        )
        self.draft_tool_action = self._action(
            "New tool from a &description…",
            self.new_tool_from_description,
            icon_name="add",
            tip="The authoring model drafts a tool from a sentence; nothing is added unless you "
            "accept it",
        )
        agent_menu.insertAction(agent_menu.actions()[0], self.add_tool_action)
        agent_menu.insertAction(agent_menu.actions()[1], self.draft_tool_action)
        agent_menu.insertSeparator(agent_menu.actions()[2])
        self.toolbar: QToolBar = MainToolbar(
            [
                (self.new_blank_action, "New"),
                (self.open_action, "Open"),
                (self.save_action, "Save"),
                None,
                (self.add_tool_action, "Add tool"),
                (self.test_action, "Test"),
                (self.export_action, "Export"),
                (self.ship_action, "Ready to ship"),
            ],
            window,
        )
        window.addToolBar(Qt.ToolBarArea.TopToolBarArea, self.toolbar)
        self.view = ViewControls(window, self.settings, self.splitter, self.toolbar, self._zoom)
        self.view_menu = self.view.menu
        bar.addMenu(self.view_menu)
        self._build_help_menu(bar)

    def _build_file_menu(self, bar: QMenuBar) -> None:
        window: Any = self
        file_menu = bar.addMenu("&File")
        self.new_menu = QMenu("&New agent", window)
        self.new_menu.setIcon(icon("new"))
        self.new_blank_action = self._action(
            "&Blank agent", lambda: self.new_agent(), QKeySequence.StandardKey.New, icon_name="new"
        )
        self.new_menu.addAction(self.new_blank_action)
        self.new_menu.addSeparator()
        self.new_menu.aboutToShow.connect(self._fill_new_menu)
        file_menu.addMenu(self.new_menu)
        self.open_action = self._action(
            "&Open…", self.open_dialog, QKeySequence.StandardKey.Open, icon_name="open"
        )
        file_menu.addAction(self.open_action)
        self.recent_menu = QMenu("Open &Recent", window)
        self.recent_menu.aboutToShow.connect(self._fill_recent_menu)
        file_menu.addMenu(self.recent_menu)
        file_menu.addSeparator()
        self.save_action = self._action(
            "&Save", lambda: self.save(), QKeySequence.StandardKey.Save, icon_name="save"
        )
        self.save_as_action = self._action("Save &As…", lambda: self.save_as(), "Ctrl+Shift+S")
        self.close_action = self._action(
            "&Close agent", lambda: self.close_document(), "Ctrl+Shift+W", icon_name="close"
        )
        # The platform's Close (Ctrl+W and Ctrl+F4 on Linux and Windows, Cmd+W on macOS) closes
        # what a person looks at, the tab, as in browsers and editors; the agent has its own key.
        self.close_tab_action = self._action("Close &tab", self._close_current_tab)
        close = QKeySequence.keyBindings(QKeySequence.StandardKey.Close)
        ctrl_w = QKeySequence("Ctrl+W")  # first: the key the menu item shows
        self.close_tab_action.setShortcuts([ctrl_w, *(k for k in close if k != ctrl_w)])
        for action in (
            self.save_action,
            self.save_as_action,
            self.close_action,
            self.close_tab_action,
        ):
            file_menu.addAction(action)
        file_menu.addSeparator()
        self.quit_action = self._action("&Quit", self.quit, "Ctrl+Q")
        file_menu.addAction(self.quit_action)
        application = QApplication.instance()
        if isinstance(application, QApplication):
            application.focusChanged.connect(self._offer_quit_in_dialog)

    def _build_edit_menu(self, bar: QMenuBar) -> None:
        window: Any = self
        edit_menu = bar.addMenu("&Edit")
        self.undo_action = self.undo_group.createUndoAction(window, "&Undo")
        self.undo_action.setProperty(PLAIN_LABEL_PROPERTY, "Undo")  # its text names the step
        self.undo_action.setShortcut(QKeySequence("Ctrl+Z"))
        self.undo_action.setIcon(icon("undo"))
        self.redo_action = self.undo_group.createRedoAction(window, "&Redo")
        self.redo_action.setProperty(PLAIN_LABEL_PROPERTY, "Redo")
        self.redo_action.setShortcuts([QKeySequence("Ctrl+Shift+Z"), QKeySequence("Ctrl+Y")])
        self.redo_action.setIcon(icon("redo"))
        edit_menu.addAction(self.undo_action)
        edit_menu.addAction(self.redo_action)
        edit_menu.addSeparator()
        self.find_actions = FindActions(window)
        edit_menu.addAction(self.find_actions.find_action)
        edit_menu.addAction(self.find_actions.replace_action)
        edit_menu.addSeparator()
        self.preferences_action = self._action(
            "&Preferences…",
            self.show_preferences,
            "Ctrl+,",
            tip="Theme, autosave, model endpoints and the data folder",
        )
        self.preferences_action.setMenuRole(QAction.MenuRole.PreferencesRole)
        edit_menu.addAction(self.preferences_action)

    def _build_help_menu(self, bar: QMenuBar) -> None:
        help_menu = bar.addMenu("&Help")
        self.getting_started_action = self._action(
            "&Getting started",
            self.show_getting_started,
            "F1",
            icon_name="help",
            tip="What a Tools agent is, and the steps to make one",
        )
        self.shortcuts_action = self._action(
            "&Keyboard shortcuts",
            self.show_shortcuts,
            "Ctrl+/",
            tip="Every key of the studio, searchable",
        )
        self.about_action = self._action("&About Meta Agent Studio", self.show_about)
        self.about_action.setMenuRole(QAction.MenuRole.AboutRole)
        help_menu.addAction(self.getting_started_action)
        help_menu.addAction(self.shortcuts_action)
        help_menu.addSeparator()
        help_menu.addAction(self.about_action)

    def _fill_new_menu(self) -> None:
        """The bundled examples under File ▸ New agent (read when the menu first opens)."""
        if len(self.new_menu.actions()) > 2:
            return
        from app.window.welcome import bundled_examples, example_title

        for path in bundled_examples():
            name, _description = example_title(path)
            self.new_menu.addAction(
                self._action(
                    f"From example: {name}", _bind(self.new_agent, path), icon_name="example"
                )
            )

    # -- what the menus do -----------------------------------------------------------------

    def add_tool(self) -> None:
        """Agent ▸ Add tool: a new tool in the current agent, its name open for typing on the
        agent's Tools page."""
        document = self.current_document()
        if document is None:
            return
        page = self.show_page(document, "tools")
        add = getattr(page, "add_action", None)
        if isinstance(add, QAction):
            add.trigger()

    def new_tool_from_description(self, document: AgentDocument | None = None) -> QWidget | None:
        """Agent ▸ New tool from a description…: the draft dialog for ``document`` (the current
        agent by default), without blocking; an added draft opens in its editor."""
        from app.authoring.draft_dialog import DraftToolDialog

        window: Any = self
        document = document or self.current_document()
        if document is None:
            return None
        dialog = DraftToolDialog(
            document,
            chosen_model=self.settings.authoring_model(),
            history=window.history_store(),
            parent=window,
        )
        dialog.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        dialog.tool_added.connect(lambda tool: window.open_tool_tab(document, tool))
        dialog.show()
        dialog.activateWindow()
        return dialog

    def show_about(self) -> QWidget:
        """Help ▸ About, without blocking."""
        from app.window.help_pages import show_about

        window: Any = self
        return show_about(window, QApplication.applicationDisplayName() or "Meta Agent Studio")

    def show_shortcuts(self) -> QWidget:
        """Help ▸ Keyboard shortcuts, without blocking."""
        from app.window.shortcuts import ShortcutsDialog, studio_shortcuts

        window: Any = self
        dialog = ShortcutsDialog(studio_shortcuts(window), window)
        dialog.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        dialog.show()
        dialog.activateWindow()  # its keys work at once (Esc closes it)
        return dialog

    def getting_started_steps(self) -> list[Step]:
        """The Getting started page's steps, with the actions that do them."""
        from app.window.help_pages import Step

        return [
            Step(
                "Create an agent",
                "a blank one, or a copy of an example to learn from.",
                "File ▸ New agent",
                self.new_blank_action,
            ),
            Step(
                "Choose its model",
                "pick <b>Model</b> in the outline: the provider, the model, its base URL and "
                "key; <i>Test connection</i> checks them.",
            ),
            Step(
                "Add MCP servers",
                "if the model needs tools of its own, on the <b>MCP servers</b> page (optional).",
            ),
            Step(
                "Add a tool",
                "name it, describe it, build its parameters and write its prompt template.",
                "Agent ▸ Add tool",
                self.add_tool_action,
            ),
            Step(
                "Test it",
                "fill in arguments and watch the model answer, its inner tool calls included; "
                "save a run as a test case to run again later.",
                "Agent ▸ Test tool…",
                self.test_action,
            ),
            Step(
                "Export it",
                "to Claude Desktop, Claude Code, VS Code or Cursor, and verify what the client "
                "sees.",
                "Agent ▸ Export to an MCP client…",
                self.export_action,
            ),
        ]

    def show_getting_started(self) -> QWidget:
        """Help ▸ Getting started (shown without blocking); notes that it has been shown."""
        from app.window.help_pages import GettingStartedDialog

        window: Any = self
        shown: list[GettingStartedDialog] = window.findChildren(GettingStartedDialog)
        for dialog in shown:
            if dialog.isVisible():
                dialog.raise_()
                dialog.activateWindow()
                return dialog
        dialog = GettingStartedDialog(self.getting_started_steps(), window)
        dialog.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        dialog.show()
        dialog.activateWindow()  # its keys work at once (Esc closes it)
        self.settings.set_getting_started_shown()
        return dialog

    def show_getting_started_on_first_run(self) -> None:
        """On the studio's first run, show Getting started once the window has painted and
        the files it opens are read."""
        if not self.settings.getting_started_shown():
            window: Any = self
            after_first_paint(window, self.file_loader, self._show_getting_started_now)

    def _show_getting_started_now(self) -> None:
        self.show_getting_started()

    # -- preferences -----------------------------------------------------------------------

    def preferences(self) -> Preferences:
        """The preferences in effect."""
        from app.window.preferences import Preferences

        window: Any = self
        return Preferences(
            self.view.theme(),
            window.autosaver.timer.interval() / 1000,
            tuple(self.settings.endpoints()),
            self.settings.authoring_model(),
        )

    def show_preferences(self) -> QWidget:
        """Edit ▸ Preferences, without blocking."""
        from app.window.preferences import PreferencesDialog
        from mcp_export.paths import data_dir

        window: Any = self
        dialog = PreferencesDialog(self.preferences(), data_dir(), window)
        dialog.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        dialog.applied.connect(self.apply_preferences)
        dialog.show()
        dialog.activateWindow()  # its keys work at once (Esc closes it)
        return dialog

    def apply_preferences(self, preferences: Preferences) -> None:
        """Keep ``preferences`` in the settings and apply them now."""
        window: Any = self
        self.view.set_theme(preferences.theme)
        self.settings.set_autosave_seconds(preferences.autosave_seconds)
        window.autosaver.timer.setInterval(round(preferences.autosave_seconds * 1000))
        self.settings.set_endpoints(list(preferences.endpoints))
        self.endpoint_urls.setStringList(_urls(preferences.endpoints))
        self.settings.set_authoring_model(preferences.authoring_model)

    def offer_endpoints(self, field: QLineEdit) -> QCompleter:
        """Suggest the preferences' endpoint URLs in the base URL ``field`` as it is typed."""
        completer = QCompleter(self.endpoint_urls, field)
        completer.setCaseSensitivity(Qt.CaseSensitivity.CaseInsensitive)
        completer.setFilterMode(Qt.MatchFlag.MatchContains)
        # A chosen suggestion is typing: Qt sets it as text without textEdited, which is what
        # the field's binding writes to the agent on.
        completer.activated.connect(field.textEdited.emit)
        field.setCompleter(completer)
        return completer


def _urls(endpoints: Any) -> list[str]:
    return list(dict.fromkeys(endpoint.base_url for endpoint in endpoints))


def _bind(function: Callable[[Path], object], path: Path) -> Callable[[], object]:
    return lambda: function(path)
