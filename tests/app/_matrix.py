"""Running a matrix tab as a person does: pick the run mode, click *Run again*, wait for the end."""

from __future__ import annotations

from PySide6.QtCore import Qt
from pytestqt.qtbot import QtBot

from app.test_cases.matrix_tab import MatrixTab

RUN_MS = 30_000
"""The longest a matrix run of these tests may take."""


def run_in_mode(qtbot: QtBot, tab: MatrixTab, mode: str) -> None:
    """Set ``mode`` (``Live``, ``Record``, ``Replay``), click *Run again*, wait until it ends."""
    tab.run_modes.set_mode(mode)
    ends: list[object] = []
    tab.finished.connect(ends.append)
    qtbot.mouseClick(tab.run_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: bool(ends) and not tab.busy, timeout=RUN_MS)
    tab.finished.disconnect(ends.append)
