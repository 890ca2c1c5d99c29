"""Python's cyclic garbage collection, run on the GUI thread only.

Automatic collection runs in whichever thread happens to allocate when a threshold is crossed:
the thread that reads a large agent file, the history writer, an executor's thread. When that
collection frees a cycle holding Qt objects (a closed window, its widgets, a timer), their C++
destructors run off the GUI thread while the GUI thread may be delivering an event to them, and
the process crashes. The studio turns automatic collection off and runs the same generational
collections from a timer on the GUI thread, whenever the thresholds Python would use are
crossed.
"""

from __future__ import annotations

import gc

from PySide6.QtCore import QCoreApplication, QObject, QTimer

__all__ = ["CHECK_MS", "GuiThreadCollector", "collect_on_gui_thread"]

CHECK_MS = 500  # how often the allocation counts are looked at


class GuiThreadCollector(QObject):
    """Collects garbage from the GUI thread when Python's thresholds say a collection is due.

    Automatic collection stays off while this object lives; :meth:`stop` turns it back on.
    """

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("guiThreadCollector")
        self._timer = QTimer(self)
        self._timer.setInterval(CHECK_MS)
        self._timer.timeout.connect(self.collect_if_due)
        self._was_enabled = gc.isenabled()
        gc.disable()
        self._timer.start()

    def collect_if_due(self) -> int:
        """Run the collections Python would have run by now; returns the objects freed."""
        threshold = gc.get_threshold()
        count = gc.get_count()
        freed = 0
        for generation in (2, 1, 0):  # the oldest one due also collects the younger ones
            if threshold[generation] and count[generation] > threshold[generation]:
                freed = gc.collect(generation)
                break
        return freed

    def stop(self) -> None:
        """Stop collecting from the timer and give collection back to Python."""
        self._timer.stop()
        if self._was_enabled:
            gc.enable()


def collect_on_gui_thread(app: QCoreApplication) -> GuiThreadCollector:
    """The collector of ``app`` (created on first use, living as long as ``app``)."""
    found = app.findChild(GuiThreadCollector, "guiThreadCollector")
    if isinstance(found, GuiThreadCollector):
        return found
    return GuiThreadCollector(app)
