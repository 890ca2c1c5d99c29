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


def test_full_collections_wait_for_a_quarter_more_long_lived_objects_as_in_cpython(qtbot) -> None:
    from app.collector import GuiThreadCollector

    gc.collect()
    settled = [[index] for index in range(200_000)]  # long-lived: a loaded runtime's worth
    gc.collect()
    collector = GuiThreadCollector()
    full: list[int] = []

    def record(phase: str, info: dict[str, int]) -> None:
        if phase == "start" and info["generation"] == 2:
            full.append(1)

    def churn(survivors: list[object], rounds: int) -> None:
        for round_ in range(rounds):
            for _ in range(2_000):  # short-lived cycles: each round passes gen 0's threshold
                cycle: list[object] = []
                cycle.append(cycle)
            survivors.extend([round_] for _ in range(per_round))
            collector.collect_if_due()

    gc.callbacks.append(record)
    try:
        kept: list[object] = []
        per_round = 10  # a few survivors: far under a quarter of 200 000
        churn(kept, 400)
        few = len(full)
        per_round = (collector.long_lived_total // 4) // 100 + 500  # past a quarter in 100 rounds
        churn(kept, 100)
    finally:
        gc.callbacks.remove(record)
        collector.stop()
        collector.deleteLater()
    assert few == 0
    assert len(full) >= 1
    assert collector.long_lived_pending < collector.long_lived_total // 4
    assert len(settled) == 200_000


def test_after_a_large_import_settling_keeps_its_objects_from_forcing_a_full_pass(qtbot) -> None:
    from app.collector import GuiThreadCollector

    collector = GuiThreadCollector()
    full: list[int] = []

    def record(phase: str, info: dict[str, int]) -> None:
        if phase == "start" and info["generation"] == 2:
            full.append(1)

    def churn(rounds: int) -> None:
        for _ in range(rounds):
            for _ in range(2_000):
                cycle: list[object] = []
                cycle.append(cycle)
            collector.collect_if_due()

    gc.callbacks.append(record)
    try:
        imported = [[index] for index in range(collector.long_lived_total // 4 + 50_000)]
        collector.settle()  # what the studio does once the runtime's import is done
        settled_total = collector.long_lived_total
        churn(400)
    finally:
        gc.callbacks.remove(record)
        collector.stop()
        collector.deleteLater()
    assert full == []
    assert settled_total >= len(imported)
