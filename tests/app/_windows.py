"""The studio window as tests use it: shown, and never asking a person anything at teardown."""

from __future__ import annotations

from pytestqt.qtbot import QtBot

from app.window.main_window import MainWindow


def studio_window(qtbot: QtBot, *, autosave_seconds: float | None = None) -> MainWindow:
    """A shown main window; closing it discards unsaved changes instead of opening a dialog."""
    window = (
        MainWindow() if autosave_seconds is None else MainWindow(autosave_seconds=autosave_seconds)
    )
    window.ask_save = lambda _doc: "discard"  # type: ignore[assignment,method-assign]
    qtbot.addWidget(window)
    window.show()
    return window
