"""The installed Qt bindings keep Python's constants alive through signals and event processing.

PySide6 6.12.0 under Python 3.11 dropped a reference to ``True`` on every signal emitted from
Python and to ``None`` on every ``processEvents``: a session long enough to emit a few tens of
thousands of signals aborted the interpreter ("deallocating True or False"). pyproject pins
below it; this catches a version with the same fault.
"""

from __future__ import annotations

import sys

from PySide6.QtCore import QObject, Signal
from PySide6.QtWidgets import QApplication


class _Emitter(QObject):
    text = Signal(str)
    bare = Signal()
    flag = Signal(bool)


def test_emitting_and_processing_events_leave_true_false_and_none_counted(
    qapp: QApplication,
) -> None:
    emitter = _Emitter()
    seen: list[object] = []
    emitter.text.connect(seen.append)
    emitter.bare.connect(lambda: seen.append(None))
    emitter.flag.connect(seen.append)
    constants = (True, False, None)
    before = [sys.getrefcount(value) for value in constants]
    for _ in range(2_000):
        emitter.text.emit("x")
        emitter.bare.emit()
        emitter.flag.emit(True)
        qapp.processEvents()
    seen.clear()
    after = [sys.getrefcount(value) for value in constants]

    assert [a - b for a, b in zip(after, before, strict=True)] == [0, 0, 0]
