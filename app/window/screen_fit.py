"""Windows and dialogs no larger than the screen they open on.

Every top-level window of the studio takes its first size from :func:`fit_to_screen`: the size it
asks for, or less where the available area of its screen (the screen without task bars and
docks) is smaller. A window whose content needs more room puts that content in
:func:`scrolling`, so its minimum size stays small and the content scrolls instead of running off
the screen or being squeezed until its widgets overlap. :func:`keep_on_screen` does the same for
a geometry restored from an earlier start, which may come from a larger screen.
"""

from __future__ import annotations

from PySide6.QtCore import QEvent, QObject, QRect, QSize
from PySide6.QtGui import QGuiApplication
from PySide6.QtWidgets import QFrame, QScrollArea, QWidget

from app.layouts import scroll_area

__all__ = ["available_area", "fit_to_screen", "keep_on_screen", "scrolling"]


def available_area(widget: QWidget) -> QRect:
    """The available geometry of the screen ``widget`` shows (or will show) on.

    A window not shown yet opens on its parent's screen, else on the primary screen.
    """
    parent = widget.parentWidget()
    screen = (parent.window() if parent is not None else widget).screen()
    if screen is None:
        screen = QGuiApplication.primaryScreen()
    return screen.availableGeometry()


def _room(widget: QWidget) -> QSize:
    """How big ``widget``'s own area may be: the available area less its frame (title bar and
    borders, known once the window has been shown; 0 before)."""
    area = available_area(widget).size()
    frame = widget.frameGeometry().size() - widget.geometry().size()
    return QSize(
        max(1, area.width() - max(0, frame.width())), max(1, area.height() - max(0, frame.height()))
    )


class _FitOnShow(QObject):
    """Brings its window onto the screen once it has been shown: only then are its frame (title
    bar, borders) and the screen it opened on known."""

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:  # noqa: N802 (Qt override)
        if event.type() == QEvent.Type.Show and isinstance(watched, QWidget):
            watched.removeEventFilter(self)
            keep_on_screen(watched)
            self.deleteLater()
        return False


def fit_to_screen(widget: QWidget, width: int, height: int) -> None:
    """Resize ``widget`` to ``width``×``height``, or less where its screen has less room; once
    shown, its frame is kept within the screen too."""
    room = _room(widget)
    widget.resize(min(width, room.width()), min(height, room.height()))
    if not widget.isVisible():
        widget.installEventFilter(_FitOnShow(widget))


def keep_on_screen(widget: QWidget) -> None:
    """Shrink ``widget`` to its screen's available area and move it into that area (a geometry
    restored from a larger screen, or from a screen that is gone)."""
    room = _room(widget)
    size = widget.size().boundedTo(room)
    if size != widget.size():
        widget.resize(size)
    area = available_area(widget)
    geometry = widget.frameGeometry()
    x = min(max(geometry.x(), area.left()), area.left() + area.width() - geometry.width())
    y = min(max(geometry.y(), area.top()), area.top() + area.height() - geometry.height())
    if (x, y) != (geometry.x(), geometry.y()):
        widget.move(max(area.left(), x), max(area.top(), y))


def scrolling(content: QWidget) -> QScrollArea:
    """``content`` in a frameless scroll area that gives it all the room there is, and scroll
    bars only when there is less room than its minimum size."""
    area = scroll_area(content)
    area.setFrameShape(QFrame.Shape.NoFrame)
    return area
