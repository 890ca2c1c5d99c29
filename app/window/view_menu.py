"""The main window's View menu: theme, zoom, and which parts of the window show.

:class:`ViewControls` owns the menu's actions and what they change:

- Theme ▸ System / Light / Dark: applied at once (:func:`~app.window.theme.apply_theme`) and
  kept in the studio settings, which the next start applies before the window shows;
- Zoom in / Zoom out / Actual size for editors and transcripts (:mod:`app.zoom`: the
  application's zoom, made on the window's settings unless there is one already);
- Show toolbar and Show outline, kept in the settings.

The outline also collapses when its splitter handle is dragged to the window's edge; that unticks
Show outline, and ticking it again brings the outline back at the width it had. The sizes of the
main splitter are kept a moment after the person moves it (while the outline shows), so the next
window opens with them.
"""

from __future__ import annotations

from PySide6.QtCore import QCoreApplication, QObject, QTimer
from PySide6.QtGui import QAction, QActionGroup
from PySide6.QtWidgets import QMenu, QSplitter, QToolBar, QWidget

from app.settings_store import THEMES, SettingsStore, Theme
from app.window.theme import THEME_LABELS, apply_theme
from app.zoom import ZoomController, application_zoom, zoom_actions

__all__ = [
    "DEFAULT_OUTLINE_WIDTH",
    "KEEP_SIZES_MS",
    "MAIN_SPLITTER",
    "ViewControls",
    "WindowZoom",
    "window_zoom",
]

MAIN_SPLITTER = "main"
"""The main splitter's name in the settings."""
DEFAULT_OUTLINE_WIDTH = 280
KEEP_SIZES_MS = 300
"""How long the splitter rests before its sizes are kept (a drag moves it many times)."""


WindowZoom = tuple[ZoomController, bool]
"""The application's zoom, and whether the window made it."""


def window_zoom(settings: SettingsStore) -> WindowZoom:
    """The application's zoom, made on ``settings`` when there is none yet.

    Call it before the window makes its widgets: making the zoom walks every widget there is.
    """
    app = QCoreApplication.instance()
    made_here = app is not None and app.findChild(ZoomController) is None
    return application_zoom(settings), made_here


class ViewControls(QObject):
    """The View menu of a main window, and the state its actions show.

    Args:
        window: owns the actions (their shortcuts work anywhere in it).
        settings: where the choices are kept.
        splitter: the main splitter; its first widget is the outline.
        toolbar: the window's toolbar.
        zoom: the application's zoom (:func:`window_zoom`).

    Attributes:
        menu: the View menu.
        theme_actions: one checkable action per theme.
        zoom_actions: Zoom in, Zoom out, Actual size.
        show_toolbar_action, show_outline_action: checkable.
    """

    def __init__(
        self,
        window: QWidget,
        settings: SettingsStore,
        splitter: QSplitter,
        toolbar: QToolBar,
        zoom: WindowZoom,
    ) -> None:
        super().__init__(window)
        self._settings = settings
        self._splitter = splitter
        outline = splitter.widget(0)
        assert outline is not None  # the window put the outline there
        self._outline: QWidget = outline
        self._toolbar = toolbar
        self._outline_width = DEFAULT_OUTLINE_WIDTH
        self.zoom, self._own_zoom = zoom
        self.menu = QMenu("&View", window)

        theme_menu = self.menu.addMenu("&Theme")
        group = QActionGroup(self)
        self.theme_actions: dict[Theme, QAction] = {}
        for theme in THEMES:
            action = QAction(THEME_LABELS[theme], window)
            action.setObjectName(f"theme_{theme}")
            action.setCheckable(True)
            action.setStatusTip(f"Show the studio in the {THEME_LABELS[theme].lower()} theme")
            action.triggered.connect(lambda _checked=False, t=theme: self.set_theme(t))
            group.addAction(action)
            theme_menu.addAction(action)
            self.theme_actions[theme] = action
        self.theme_actions[settings.theme()].setChecked(True)
        self.menu.addSeparator()

        self.zoom_actions = zoom_actions(window, self.zoom)
        self.menu.addActions(self.zoom_actions)
        self.menu.addSeparator()

        self.show_toolbar_action = toolbar.toggleViewAction()
        self.show_toolbar_action.setText("Show &toolbar")
        self.show_toolbar_action.setStatusTip("Show the toolbar of frequent actions")
        self.show_outline_action = QAction("Show &outline", window)
        self.show_outline_action.setObjectName("showOutline")
        self.show_outline_action.setCheckable(True)
        self.show_outline_action.setStatusTip("Show the open agents' outline on the left")
        self.menu.addAction(self.show_toolbar_action)
        self.menu.addAction(self.show_outline_action)

        toolbar.setVisible(settings.shows("toolbar"))
        self.show_toolbar_action.setChecked(settings.shows("toolbar"))  # no Hide event before show
        self.show_toolbar_action.toggled.connect(lambda shown: settings.set_shows("toolbar", shown))
        splitter.setCollapsible(0, True)
        splitter.setCollapsible(1, False)
        saved = settings.splitter_sizes(MAIN_SPLITTER)
        if saved and len(saved) == 2 and saved[0] > 0:
            splitter.setSizes(saved)
            self._outline_width = saved[0]
        else:
            splitter.setSizes([DEFAULT_OUTLINE_WIDTH, 920])
        self._show_outline(settings.shows("outline"))
        self.show_outline_action.setChecked(settings.shows("outline"))
        self.show_outline_action.toggled.connect(self._on_show_outline_toggled)
        self._keep_timer = QTimer(self)
        self._keep_timer.setSingleShot(True)
        self._keep_timer.setInterval(KEEP_SIZES_MS)  # a drag moves it many times
        self._keep_timer.timeout.connect(self.keep_sizes)
        splitter.splitterMoved.connect(self._on_splitter_moved)

    # -- theme -----------------------------------------------------------------------------

    def theme(self) -> Theme:
        """The theme shown."""
        return next((t for t, a in self.theme_actions.items() if a.isChecked()), "system")

    def set_theme(self, theme: Theme) -> None:
        """Show the studio in ``theme`` now and from the next start on."""
        self.theme_actions[theme].setChecked(True)
        if theme != self._settings.theme():
            self._settings.set_theme(theme)
        apply_theme(theme)

    # -- outline ---------------------------------------------------------------------------

    def outline_shown(self) -> bool:
        """Whether the outline takes part of the window (shown and not collapsed)."""
        return not self._outline.isHidden() and self._splitter.sizes()[0] > 0

    def _on_show_outline_toggled(self, shown: bool) -> None:
        self._show_outline(shown)
        self._settings.set_shows("outline", shown)

    def _show_outline(self, shown: bool) -> None:
        if not shown:
            self._outline.hide()
            return
        self._outline.show()
        sizes = self._splitter.sizes()
        if sizes[0] == 0:  # collapsed by its handle: back at the width it had
            total = sum(sizes)
            width = min(self._outline_width, max(total // 2, 1))
            self._splitter.setSizes([width, max(total - width, 1)])

    def _on_splitter_moved(self, _position: int, _index: int) -> None:
        sizes = self._splitter.sizes()
        if sizes[0] == 0:
            self.show_outline_action.setChecked(False)  # collapsed: hidden, Show outline unticked
            return
        self._outline_width = sizes[0]
        self._keep_timer.start()

    def release_zoom(self) -> None:
        """The window is closing for good: the zoom it made on its settings goes with it, so a
        later window zooms from its own settings."""
        if self._own_zoom:
            self._own_zoom = False
            self.zoom.setParent(self)  # no longer the application's; deleted with the window

    def keep_sizes(self) -> None:
        """Keep the main splitter's sizes while the outline shows (the window is closing)."""
        if self.outline_shown():
            self._settings.set_splitter_sizes(MAIN_SPLITTER, self._splitter.sizes())
