"""The Edit menu's Find and Replace: they open the find bar of the pane that has the focus.

The template editor and the parameters' JSON view each have a find bar
(:class:`~app.find_bar.FindBar`) whose keys (Ctrl+F, Ctrl+H, F3) belong to their pane. The menu
items reach the bar of the pane the focus is in (:func:`~app.find_bar.find_bar_for`) and are
enabled only there; Replace… only where the text can be edited. Find… carries Ctrl+F for the
window, which the pane's bar answers itself. Replace… shows Ctrl+H (the platform's Replace) but
does not claim it: the pane's bar answers it, and elsewhere it does nothing.

Those panes live in tool editors, so the items follow the focus once the window has opened one
(:meth:`FindActions.follow_focus`); until then they are off, and the studio's start does not
load the find bar's modules.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

import shiboken6
from PySide6.QtCore import QObject
from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import QApplication, QMenu, QMenuBar, QWidget

if TYPE_CHECKING:
    from app.find_bar import FindBar

__all__ = ["EDITORS", "PLAIN_LABEL_PROPERTY", "REPLACE_KEYS", "SCOPE_PROPERTY", "FindActions"]

REPLACE_KEYS = "Ctrl+H"
"""Replace's keys inside a pane with a find bar (shown in the menu, answered by the bar)."""
EDITORS = "Template and JSON editors"
"""Where the find bar answers its keys."""
SCOPE_PROPERTY = "shortcutScope"
"""An action's property naming the pane that answers the keys its text shows (after a tab)."""
PLAIN_LABEL_PROPERTY = "plainLabel"
"""An action's property: its name in the shortcuts list when its text changes (Undo's names
the step it would undo)."""


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
        self._bar_for: Callable[[QWidget | None], FindBar | None] | None = None
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
        self._update(None)

    def follow_focus(self) -> None:
        """Follow the focus from now on (the window has opened a pane with a find bar)."""
        if self._bar_for is not None:
            return
        from app.find_bar import find_bar_for  # loaded already by the pane that has one

        self._bar_for = find_bar_for
        application = QApplication.instance()
        if isinstance(application, QApplication):
            application.focusChanged.connect(self._on_focus_changed)
            self._update(application.focusWidget())

    def bar(self) -> FindBar | None:
        """The find bar of the pane the focus is in (None: the focus is elsewhere)."""
        focus = self._focus
        if self._bar_for is None or focus is None or not shiboken6.isValid(focus):
            return None
        return self._bar_for(focus) if focus.window() is self._window else None

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
