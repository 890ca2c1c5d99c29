"""The main window's toolbar: the frequent actions, each with its icon and a short label.

The buttons are the menus' own actions (New, Open, Save, Add tool, Test, Export), so a button is
enabled exactly when its menu item is; each label is the action's short ``iconText`` and each
tool tip names the action's shortcut. View ▸ Show toolbar hides it.
"""

from __future__ import annotations

from collections.abc import Sequence

from PySide6.QtCore import QSize, Qt
from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import QToolBar, QWidget

__all__ = ["MainToolbar"]


class MainToolbar(QToolBar):
    """A fixed toolbar of ``actions`` (``None`` is a separator), text beside each icon.

    Args:
        actions: ``(action, short label)`` pairs, or None for a separator.
        parent: the main window.
    """

    def __init__(
        self, actions: Sequence[tuple[QAction, str] | None], parent: QWidget | None = None
    ) -> None:
        super().__init__("Main toolbar", parent)
        self.setObjectName("mainToolbar")
        self.setMovable(False)
        self.setFloatable(False)
        self.setIconSize(QSize(18, 18))
        self.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonTextBesideIcon)
        for entry in actions:
            if entry is None:
                self.addSeparator()
                continue
            action, label = entry
            action.setIconText(label)
            keys = action.shortcut().toString(QKeySequence.SequenceFormat.NativeText)
            tip = action.toolTip()
            if keys and keys not in tip:
                action.setToolTip(f"{tip} ({keys})")
            self.addAction(action)
