"""Garbage is collected on the GUI thread, never by a worker that happens to allocate."""

from __future__ import annotations

import gc
import threading
from collections.abc import Iterator

import pytest
from PySide6.QtCore import QObject
from PySide6.QtWidgets import QApplication

from app.collector import collect_on_gui_thread


@pytest.fixture
def collections() -> Iterator[list[int]]:
    """The thread of every collection that starts while the test runs."""
    seen: list[int] = []

    def record(phase: str, _info: dict[str, int]) -> None:
        if phase == "start":
            seen.append(threading.get_ident())

    gc.callbacks.append(record)
    yield seen
    gc.callbacks.remove(record)


def _cycle_of_qt_objects() -> None:
    holder = QObject()
    holder.setProperty("self", holder)  # not a Python cycle; the list below is
    ring: list[object] = [holder]
    ring.append(ring)


def test_a_worker_that_allocates_never_collects(qtbot, collections: list[int]) -> None:
    app = QApplication.instance()
    assert app is not None
    collector = collect_on_gui_thread(app)
    assert collect_on_gui_thread(app) is collector and not gc.isenabled()

    def allocate() -> None:
        for _ in range(200_000):  # far past every generation's threshold
            cycle: list[object] = []
            cycle.append(cycle)

    worker = threading.Thread(target=allocate)
    worker.start()
    worker.join(timeout=60)
    assert not worker.is_alive()
    assert worker.ident not in collections

    _cycle_of_qt_objects()
    qtbot.waitUntil(lambda: threading.main_thread().ident in collections, timeout=5000)
    assert set(collections) == {threading.main_thread().ident}
