"""Something to show once the main window has painted and read the files it was given.

:func:`after_first_paint` runs a callback after the window's first paint and once its file
loader has read every file it was given (each one in, or failed), so what it shows (Getting
started on the first run) never delays the window's first paint nor an agent being read.
"""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import QEvent, QObject, QTimer
from PySide6.QtWidgets import QWidget

from app.document.file_loading import AgentFileLoader

__all__ = ["after_first_paint"]


class _FirstPaint(QObject):
    """Runs a callback once ``window`` has painted and ``loader`` has read its files."""

    def __init__(
        self, window: QWidget, loader: AgentFileLoader, callback: Callable[[], None]
    ) -> None:
        super().__init__(window)
        self._window = window
        self._loader = loader
        self._callback: Callable[[], None] | None = callback
        self._painted = False
        window.installEventFilter(self)
        window.update()

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:  # noqa: N802 (Qt override)
        if watched is self._window and event.type() == QEvent.Type.Paint and not self._painted:
            self._painted = True
            self._window.removeEventFilter(self)
            self._loader.loaded.connect(self._on_file_done)
            self._loader.failed.connect(self._on_file_done)
            QTimer.singleShot(0, self._check)
        return False

    def _on_file_done(self, *_what: object) -> None:
        QTimer.singleShot(0, self._check)  # after the window has shown what was read

    def _check(self) -> None:
        if self._callback is None or self._loader.is_loading():
            return
        callback, self._callback = self._callback, None
        self._loader.loaded.disconnect(self._on_file_done)
        self._loader.failed.disconnect(self._on_file_done)
        self.deleteLater()
        callback()


def after_first_paint(
    window: QWidget, loader: AgentFileLoader, callback: Callable[[], None]
) -> None:
    """Call ``callback`` once ``window`` has painted and ``loader`` has read the files it was
    given (each one in or failed).

    Args:
        window: the main window, shown or about to be.
        loader: the window's file loader.
        callback: what to show then.
    """
    _FirstPaint(window, loader, callback)
