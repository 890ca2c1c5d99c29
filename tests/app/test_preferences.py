"""Edit ▸ Preferences: theme, autosave interval, model endpoints and the data folder, kept in the
studio settings and applied at once; and the defaults in a fresh home."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from PySide6.QtCore import Qt
from PySide6.QtGui import QPalette
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QApplication, QDialogButtonBox, QLabel, QLineEdit, QMenu
from pytestqt.qtbot import QtBot

from app.document.recovery import AUTOSAVE_SECONDS
from app.pages.model_page import ModelPage
from app.settings_store import Endpoint, SettingsStore, default_endpoints
from app.window.main_window import MainWindow
from app.window.preferences import PreferencesDialog
from app.window.theme import apply_theme
from tests.app._windows import studio_window
from tests.app.test_view_menu import activate, focus_in, menu_item

WAIT = 5000  # ms: a bound, not a sleep


@pytest.fixture(autouse=True)
def _system_theme_after() -> Iterator[None]:
    yield
    apply_theme("system")


def open_preferences(qtbot: QtBot, window: MainWindow) -> PreferencesDialog:
    edit_menu = next(
        a.menu() for a in window.menuBar().actions() if a.text().replace("&", "") == "Edit"
    )
    assert isinstance(edit_menu, QMenu)
    menu_item(edit_menu, "Preferences…").trigger()
    dialog = window.findChild(PreferencesDialog)
    assert isinstance(dialog, PreferencesDialog)
    qtbot.waitExposed(dialog)
    return dialog


def press(dialog: PreferencesDialog, which: QDialogButtonBox.StandardButton) -> None:
    QTest.mouseClick(dialog.buttons.button(which), Qt.MouseButton.LeftButton)


def type_into(field: QLineEdit, text: str) -> None:
    field.selectAll()
    QTest.keyClicks(field, text)


def test_preferences_show_what_is_in_effect_and_where_data_is_kept(
    qtbot: QtBot, metaagent_home: Path
) -> None:
    window = studio_window(qtbot)

    dialog = open_preferences(qtbot, window)

    assert dialog.theme_combo.currentText() == "System"
    assert dialog.autosave_spin.value() == AUTOSAVE_SECONDS
    assert dialog.endpoints() == default_endpoints()
    assert dialog.folder_edit.text() == str(metaagent_home)
    assert dialog.folder_edit.isReadOnly()
    assert dialog.open_folder_button.isEnabled()
    note = dialog.findChild(QLabel, "dataFolderNote")
    assert isinstance(note, QLabel) and "cannot be changed here" in note.text()
    press(dialog, QDialogButtonBox.StandardButton.Cancel)


def test_ok_keeps_the_preferences_and_applies_them_at_once(
    qtbot: QtBot, example_path: Path, metaagent_home: Path
) -> None:
    window = studio_window(qtbot, autosave_seconds=600)
    document = window.open_file(example_path)
    assert document is not None
    dialog = open_preferences(qtbot, window)

    type_into(dialog.autosave_spin.lineEdit(), "1")
    dialog.theme_combo.setCurrentIndex(dialog.theme_combo.findText("Dark"))
    QTest.mouseClick(dialog.add_endpoint_button, Qt.MouseButton.LeftButton)
    table = dialog.endpoints_table
    qtbot.waitUntil(lambda: focus_in(table), timeout=WAIT)
    url_editor = QApplication.focusWidget()
    assert isinstance(url_editor, QLineEdit)
    QTest.keyClicks(url_editor, "http://gpu-box:8000/v1")
    QTest.keyClick(url_editor, Qt.Key.Key_Return)  # the table commits on its next turn
    added = Endpoint("openai", "http://gpu-box:8000/v1")
    qtbot.waitUntil(lambda: added in dialog.endpoints(), timeout=WAIT)
    press(dialog, QDialogButtonBox.StandardButton.Ok)

    assert not dialog.isVisible()
    stored = SettingsStore()
    assert stored.autosave_seconds() == 1
    assert stored.theme() == "dark"
    assert added in stored.endpoints()
    assert window.autosaver.timer.interval() == 1000
    assert QApplication.palette().color(QPalette.ColorRole.Base).lightness() < 128
    # The new interval is the one in effect: an edit gets its recovery copy within seconds.
    document.set_field(("metadata", "description"), "Edited", text="Edit")
    copies = metaagent_home / "recovery"
    qtbot.waitUntil(lambda: any(copies.glob("*.json")), timeout=WAIT)


def test_apply_keeps_the_dialog_open_and_cancel_keeps_nothing(qtbot: QtBot) -> None:
    window = studio_window(qtbot)
    dialog = open_preferences(qtbot, window)
    type_into(dialog.autosave_spin.lineEdit(), "30")

    press(dialog, QDialogButtonBox.StandardButton.Apply)

    assert dialog.isVisible()
    assert window.autosaver.timer.interval() == 30_000
    type_into(dialog.autosave_spin.lineEdit(), "90")
    press(dialog, QDialogButtonBox.StandardButton.Cancel)
    assert window.autosaver.timer.interval() == 30_000
    assert SettingsStore().autosave_seconds() == 30


def test_the_next_window_autosaves_at_the_kept_interval(qtbot: QtBot) -> None:
    SettingsStore().set_autosave_seconds(42)

    window = MainWindow()
    qtbot.addWidget(window)

    assert window.autosaver.timer.interval() == 42_000
    assert window.preferences().autosave_seconds == 42


def test_the_model_page_suggests_the_kept_endpoints(qtbot: QtBot, example_path: Path) -> None:
    SettingsStore().set_endpoints([Endpoint("vllm", "http://gpu-box:8000/v1")])
    window = studio_window(qtbot)
    activate(qtbot, window)
    document = window.open_file(example_path)
    assert document is not None
    page = window.show_page(document, "model")
    assert isinstance(page, ModelPage)
    field = page.base_url_edit
    completer = field.completer()
    assert completer is not None
    field.setFocus()
    qtbot.waitUntil(field.hasFocus, timeout=WAIT)
    field.selectAll()

    QTest.keyClicks(field, "gpu")

    popup = completer.popup()
    assert popup is not None
    qtbot.waitUntil(popup.isVisible, timeout=WAIT)
    assert completer.currentCompletion() == "http://gpu-box:8000/v1"
    assert popup is not None
    QTest.keyClick(popup, Qt.Key.Key_Down)
    QTest.keyClick(popup, Qt.Key.Key_Return)
    QTest.keyClick(field, Qt.Key.Key_Tab)
    qtbot.waitUntil(lambda: "gpu-box" in str(document.agent.providers), timeout=WAIT)


def test_defaults_in_a_fresh_home_without_overrides(
    qtbot: QtBot, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("METAAGENT_HOME", raising=False)
    monkeypatch.delenv("XDG_DATA_HOME", raising=False)
    monkeypatch.setenv("HOME", str(tmp_path))

    window = MainWindow()
    qtbot.addWidget(window)
    window.show()

    folder = tmp_path / ".local" / "share" / "metaagent-studio"
    assert window.settings.home == folder
    assert window.preferences().theme == "system"
    assert window.autosaver.timer.interval() == AUTOSAVE_SECONDS * 1000
    assert window.preferences().endpoints == tuple(default_endpoints())
    assert window.toolbar.isVisible() and window.view.show_outline_action.isChecked()
    assert not window.settings.getting_started_shown()
    dialog = window.show_preferences()
    assert isinstance(dialog, PreferencesDialog)
    assert dialog.folder_edit.text() == str(folder)
    type_into(dialog.autosave_spin.lineEdit(), "12")
    press(dialog, QDialogButtonBox.StandardButton.Ok)
    assert "autosave_seconds=12" in (folder / "studio.ini").read_text(encoding="utf-8")
