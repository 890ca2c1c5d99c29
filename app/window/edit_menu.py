"""The Edit menu's Find and Replace: they open the find bar of the pane that has the focus.

The template editor and the parameters' JSON view each have a find bar
(:class:`~app.find_bar.FindBar`) whose keys (Ctrl+F, Ctrl+H, F3) belong to their pane. The menu
items reach the bar of the pane the focus is in (:func:`~app.find_bar.find_bar_for`) and are
enabled only there; Replace… only where the text can be edited. Find… carries Ctrl+F for the
window, which the pane's bar answers itself. Replace… shows Ctrl+H but does not claim it: in the
window Ctrl+H opens the History, and inside a pane the bar takes it first.
"""

from __future__ import annotations

import shiboken6
from PySide6.QtCore import QObject
from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import QApplication, QMenu, QMenuBar, QWidget

from app.find_bar import FindBar, find_bar_for
from app.window.shortcuts import EDITORS, SCOPE_PROPERTY

__all__ = ["REPLACE_KEYS", "FindActions"]

REPLACE_KEYS = "Ctrl+H"
"""Replace's keys inside a pane with a find bar (shown in the menu, answered by the bar)."""


class FindActions(QObject):
    """Find… and Replace… for the focused editor's find bar.

    Args:
        window: owns the actions.

    Attributes:
        find_action, replace_action: the Edit menu's items.
    """

    def __init__(self, window: QWidget) -> None:
        super().__init__(window)
        self._window = window
        self._focus: QWidget | None = None  # the last focus in the window outside its menus
        self.find_action = QAction("&Find…", window)
        self.find_action.setObjectName("find")
        self.find_action.setShortcut(QKeySequence("Ctrl+F"))
        self.find_action.setStatusTip("Find in the template or JSON editor that has the focus")
        self.find_action.triggered.connect(lambda: self._open(replace=False))
        shown = QKeySequence(REPLACE_KEYS).toString(QKeySequence.SequenceFormat.NativeText)
        self.replace_action = QAction(f"&Replace…\t{shown}", window)
        self.replace_action.setObjectName("replace")
        self.replace_action.setStatusTip(
            f"Find and replace in the template or JSON editor that has the focus ({shown} there)"
        )
        self.replace_action.setProperty(SCOPE_PROPERTY, EDITORS)
        self.replace_action.triggered.connect(lambda: self._open(replace=True))
        application = QApplication.instance()
        if isinstance(application, QApplication):
            application.focusChanged.connect(self._on_focus_changed)
        self._update(None)

    def bar(self) -> FindBar | None:
        """The find bar of the pane the focus is in (None: the focus is elsewhere)."""
        focus = self._focus
        if focus is None or not shiboken6.isValid(focus) or focus.window() is not self._window:
            return None
        return find_bar_for(focus)

    def _open(self, *, replace: bool) -> None:
        bar = self.bar()
        if bar is None:
            return
        if replace and not bar.editor.isReadOnly():
            bar.open_replace()
        else:
            bar.open_find()

    def _on_focus_changed(self, _old: QWidget | None, now: QWidget | None) -> None:
        if isinstance(now, QMenuBar | QMenu):  # the menus keep the focus they were opened from
            return
        self._update(now)

    def _update(self, focus: QWidget | None) -> None:
        self._focus = focus
        bar = self.bar()
        self.find_action.setEnabled(bar is not None)
        self.replace_action.setEnabled(bar is not None and not bar.editor.isReadOnly())
