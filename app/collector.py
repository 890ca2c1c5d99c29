"""Python's cyclic garbage collection, run on the GUI thread only.

Automatic collection runs in whichever thread happens to allocate when a threshold is crossed:
the thread that reads a large agent file, the history writer, an executor's thread. When that
collection frees a cycle holding Qt objects (a closed window, its widgets, a timer), their C++
destructors run off the GUI thread while the GUI thread may be delivering an event to them, and
the process crashes. The studio turns automatic collection off and runs the same generational
collections from a timer on the GUI thread, whenever the thresholds Python would use are
crossed, with CPython's own brake on full collections: the oldest generation is collected only
once the objects promoted into it since its last collection are a quarter of those it held then.
Without that brake every tenth middle collection was a full one, and once the runtime is loaded
(~120 000 long-lived objects) each costs ~80 ms of the GUI thread.
"""

from __future__ import annotations

import gc

from PySide6.QtCore import QCoreApplication, QObject, QTimer

__all__ = ["CHECK_MS", "GuiThreadCollector", "collect_on_gui_thread", "settle_after_import"]

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
        self.long_lived_total = len(gc.get_objects(generation=2))
        self.long_lived_pending = 0
        self._timer.start()

    def collect_if_due(self) -> int:
        """Run the collections Python would have run by now; returns the objects freed."""
        threshold = gc.get_threshold()
        count = gc.get_count()
        for generation in (2, 1, 0):  # the oldest one due also collects the younger ones
            if not threshold[generation] or count[generation] <= threshold[generation]:
                continue
            if generation == 2 and self.long_lived_pending < self.long_lived_total // 4:
                continue  # as CPython: too few new long-lived objects to be worth a full pass
            return self._collect(generation)
        return 0

    def settle(self) -> None:
        """Count everything alive now as long-lived, after a large import (the runtime's ~70 000
        objects): a middle collection moves the import's survivors into the oldest generation
        and they become its base, instead of "new" objects that would make the next full
        collection due at once (~80 ms of the GUI thread while a run streams in)."""
        gc.collect(1)
        self.long_lived_total = len(gc.get_objects(generation=2))
        self.long_lived_pending = 0

    def _collect(self, generation: int) -> int:
        if generation == 2:
            freed = gc.collect(2)
            self.long_lived_total = max(0, self.long_lived_total + self.long_lived_pending - freed)
            self.long_lived_pending = 0
            return freed
        if generation == 0:
            return gc.collect(0)
        young = len(gc.get_objects(generation=0)) + len(gc.get_objects(generation=1))
        freed = gc.collect(1)
        self.long_lived_pending += max(0, young - freed)  # the survivors are long-lived now
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


def settle_after_import() -> None:
    """Tell the application's collector that a large import just finished (see ``settle``);
    nothing happens without a running application or collector."""
    app = QCoreApplication.instance()
    found = app.findChild(GuiThreadCollector, "guiThreadCollector") if app is not None else None
    if isinstance(found, GuiThreadCollector):
        found.settle()
