"""Zoom: text editors and transcripts grow and shrink by keys, the step is kept, buttons stay."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from PySide6.QtCore import Qt
from PySide6.QtGui import QFontDatabase, QKeySequence
from PySide6.QtWidgets import QApplication, QPlainTextEdit, QPushButton, QVBoxLayout, QWidget
from pytestqt.qtbot import QtBot

from app.chat.transcript import MarkdownView
from app.settings_store import SettingsStore
from app.zoom import FACTORS, MAX_STEP, MIN_STEP, ZoomController, application_zoom, zoom_actions
from tests.app._tool_widgets import show_active

WAIT = 5000  # ms: a bound, not a sleep


@pytest.fixture
def home(tmp_path: Path) -> Path:
    return tmp_path / "home"


@pytest.fixture
def zoom(home: Path) -> Iterator[ZoomController]:
    controller = ZoomController(SettingsStore(home))
    yield controller
    controller.reset()  # no application-wide filter left for later tests


def window_with_editor(qtbot: QtBot, zoom: ZoomController) -> tuple[QWidget, QPlainTextEdit]:
    """A window with an editor in the fixed font, a button and the zoom actions."""
    window = QWidget()
    editor = QPlainTextEdit()
    editor.setFont(QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont))
    button = QPushButton("Run")
    button.setObjectName("run")
    layout = QVBoxLayout(window)
    layout.addWidget(editor)
    layout.addWidget(button)
    window.addActions(zoom_actions(window, zoom))
    show_active(qtbot, window, 400, 300)
    editor.setFocus(Qt.FocusReason.OtherFocusReason)
    qtbot.waitUntil(editor.hasFocus, timeout=WAIT)
    return window, editor


def press(qtbot: QtBot, widget: QWidget, keys: str) -> None:
    qtbot.keySequence(widget, QKeySequence(keys))


def test_keys_zoom_an_editor_in_out_and_back_and_leave_a_button_alone(
    qtbot: QtBot, zoom: ZoomController
) -> None:
    window, editor = window_with_editor(qtbot, zoom)
    button = window.findChild(QPushButton, "run")
    assert button is not None
    base = editor.font().pointSizeF()
    button_font = button.font()
    family = editor.font().family()

    press(qtbot, editor, "Ctrl+=")
    assert editor.font().pointSizeF() == pytest.approx(base * 1.1)
    assert editor.font().family() == family
    press(qtbot, editor, "Ctrl++")
    assert editor.font().pointSizeF() == pytest.approx(base * 1.25)
    assert button.font() == button_font

    press(qtbot, editor, "Ctrl+-")
    press(qtbot, editor, "Ctrl+-")
    press(qtbot, editor, "Ctrl+-")
    assert zoom.step() == -1
    assert editor.font().pointSizeF() == pytest.approx(base * 0.9)

    press(qtbot, editor, "Ctrl+0")
    assert zoom.step() == 0
    assert editor.font().pointSizeF() == pytest.approx(base)
    assert button.font() == button_font


def test_a_transcript_made_after_the_zoom_shows_it(qtbot: QtBot, zoom: ZoomController) -> None:
    zoom.zoom_in()
    zoom.zoom_in()

    transcript = MarkdownView()
    transcript.set_markdown("The **answer**.")
    show_active(qtbot, transcript, 300, 200)

    expected = QApplication.font(transcript).pointSizeF() * zoom.factor()
    assert zoom.factor() == 1.25
    assert transcript.font().pointSizeF() == pytest.approx(expected)


def test_a_font_its_owner_sets_later_is_zoomed_too(qtbot: QtBot, zoom: ZoomController) -> None:
    _window, editor = window_with_editor(qtbot, zoom)
    zoom.zoom_in()

    font = editor.font()
    font.setPointSizeF(20)
    editor.setFont(font)

    assert editor.font().pointSizeF() == pytest.approx(22)
    zoom.reset()
    assert editor.font().pointSizeF() == pytest.approx(20)


def test_the_step_is_kept_for_the_next_start_and_held_within_limits(
    qtbot: QtBot, home: Path
) -> None:
    zoom = ZoomController(SettingsStore(home))
    try:
        _window, editor = window_with_editor(qtbot, zoom)
        base = editor.font().pointSizeF()
        actions = {a.objectName(): a for a in zoom_actions(editor, zoom)}
        for _ in range(30):
            zoom.zoom_in()
        assert zoom.step() == MAX_STEP
        assert not actions["zoomIn"].isEnabled()
        assert editor.font().pointSizeF() == pytest.approx(base * FACTORS[-1])
        zoom.set_step(-100)
        assert zoom.step() == MIN_STEP
        assert not actions["zoomOut"].isEnabled()
        zoom.set_step(2)
    finally:
        with qtbot.waitSignal(zoom.destroyed, timeout=WAIT):
            zoom.deleteLater()  # as the studio ends: the step stays where it was

    again = ZoomController(SettingsStore(home))
    try:
        assert again.step() == 2
        assert editor.font().pointSizeF() == pytest.approx(base * 1.25)
    finally:
        again.reset()


def test_the_application_zoom_keeps_its_step_in_the_default_data_folder(
    qtbot: QtBot, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("METAAGENT_HOME", raising=False)
    monkeypatch.delenv("XDG_DATA_HOME", raising=False)
    monkeypatch.setenv("HOME", str(tmp_path))
    zoom = application_zoom()
    assert application_zoom() is zoom
    zoom.zoom_out()
    with qtbot.waitSignal(zoom.destroyed, timeout=WAIT):
        zoom.deleteLater()  # the studio ends

    again = application_zoom()
    try:
        assert again.step() == -1
        assert (tmp_path / ".local" / "share").is_dir()
        assert SettingsStore().home.is_relative_to(tmp_path)
    finally:
        again.reset()
        with qtbot.waitSignal(again.destroyed, timeout=WAIT):
            again.deleteLater()
