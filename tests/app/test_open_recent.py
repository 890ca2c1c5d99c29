"""File ▸ Open Recent: the remembered files, newest first, kept in the studio's settings file;
one that has gone is greyed with "(missing)" and *Remove missing files* forgets it with a
message; a remembered file opens from the menu; two files of one name show their folders."""

from __future__ import annotations

import shutil
from pathlib import Path

from PySide6.QtGui import QAction

from app.errors import reporter
from app.settings_store import SettingsStore
from app.window.main_window import MainWindow
from tests.app._windows import studio_window


def _actions(window: MainWindow) -> list[QAction]:
    window.recent_menu.aboutToShow.emit()
    return [a for a in window.recent_menu.actions() if not a.isSeparator()]


def test_missing_files_are_greyed_and_removed_with_a_message(
    qtbot, example_path: Path, tmp_path: Path
) -> None:
    kept = tmp_path / "kept" / "trip.agent.yaml"
    gone = tmp_path / "gone" / "trip.agent.yaml"
    for path in (kept, gone):
        path.parent.mkdir()
        shutil.copy(example_path, path)
    window = studio_window(qtbot)
    for path in (kept, gone):
        assert window.open_file(path) is not None
    gone.unlink()

    shown = {a.text(): a.isEnabled() for a in _actions(window)}
    assert shown == {
        f"trip.agent.yaml — {gone.parent} (missing)": False,
        f"trip.agent.yaml — {kept.parent}": True,
        "Remove missing files (1)": True,
        "Clear recent files": True,
    }
    assert window.settings.recent_files() == [kept]  # the welcome page lists only what exists

    remove = next(a for a in _actions(window) if a.text().startswith("Remove missing"))
    remove.trigger()
    assert (
        reporter().history[-1].message == "Removed 1 missing file from Open Recent: trip.agent.yaml"
    )
    assert [a.text() for a in _actions(window)] == ["trip.agent.yaml", "Clear recent files"]
    # Kept in the settings file: a new store on the same home reads the same list.
    assert SettingsStore(window.settings.home).recent_entries() == [kept]


def test_a_recent_file_opens_from_the_menu(qtbot, example_path: Path) -> None:
    window = studio_window(qtbot)
    document = window.open_file(example_path)
    assert document is not None
    window.close_document(document)
    assert window.current_document() is None

    (entry,) = [a for a in _actions(window) if a.text() == example_path.name]
    entry.trigger()
    qtbot.waitUntil(lambda: window.current_document() is not None, timeout=10_000)
    opened = window.current_document()
    assert opened is not None and opened.path == example_path
