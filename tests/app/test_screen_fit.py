"""No window or dialog of the studio opens larger than the screen; content scrolls instead.

The offscreen platform's screen is 800×800 here: narrower than the 1024×700 of a small laptop
(and the height is checked against 700 through each dialog's minimum size, which is what a
window manager cannot shrink it below). Each window is opened as the studio opens it, with a
fresh data directory (no geometry saved), and its frame (what a person sees of it) must lie
within the screen's available area.
"""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import QRect
from PySide6.QtWidgets import QDialog, QDialogButtonBox, QWidget
from pytestqt.qtbot import QtBot

from app.settings_store import SettingsStore
from app.window.main_window import MainWindow
from tests.app._windows import studio_window

WAIT = 5000  # ms: a bound, not a sleep
SMALL_LAPTOP = (1024, 700)


def area_of(widget: QWidget) -> QRect:
    return widget.screen().availableGeometry()


def assert_on_screen(qtbot: QtBot, widget: QWidget) -> None:
    qtbot.waitExposed(widget)
    area = area_of(widget)
    qtbot.waitUntil(lambda: area.contains(widget.frameGeometry()), timeout=WAIT)
    minimum = widget.minimumSizeHint()
    assert minimum.width() <= SMALL_LAPTOP[0] and minimum.height() <= SMALL_LAPTOP[1], minimum


def test_a_first_start_opens_the_main_window_within_the_screen(qtbot: QtBot) -> None:
    assert SettingsStore().window_geometry() is None  # a fresh data directory
    window = studio_window(qtbot)
    assert area_of(window).width() < 1200  # the size the window asks for does not fit here

    assert_on_screen(qtbot, window)
    assert window.statusBar().isVisible()
    assert area_of(window).contains(window.statusBar().geometry().translated(window.pos()))


def test_a_window_saved_on_a_larger_screen_comes_back_within_this_one(qtbot: QtBot) -> None:
    window = studio_window(qtbot)
    window.setGeometry(300, 200, 1600, 1000)
    qtbot.waitUntil(lambda: window.width() == 1600, timeout=WAIT)
    window.save_window_state()
    assert window.close()

    again = MainWindow()
    again.ask_save = lambda _doc: "discard"  # type: ignore[assignment,method-assign]
    qtbot.addWidget(again)
    again.show()
    assert_on_screen(qtbot, again)


def test_the_export_dialog_fits_the_screen_and_close_stays_in_reach(
    qtbot: QtBot, example_path: Path
) -> None:
    window = studio_window(qtbot)
    document = window.open_file(example_path)
    assert document is not None
    dialog = window.open_export_dialog(document)
    assert isinstance(dialog, QDialog)
    # What Verify adds below the report: the keyring row and the Try-a-call row.
    for row in (dialog.fix_box, dialog.call_row):  # type: ignore[attr-defined]
        row.setVisible(True)

    assert_on_screen(qtbot, dialog)
    close = dialog.findChild(QDialogButtonBox)
    assert close is not None and close.isVisible()
    top_left = close.mapTo(dialog, close.rect().topLeft())
    assert dialog.rect().contains(QRect(top_left, close.size()))
    dialog.reject()


def test_maximised_on_a_small_screen_the_export_report_stays_above_the_call_row(
    qtbot: QtBot, example_path: Path
) -> None:
    from app.document.agent_document import AgentDocument
    from app.export_dialog import ExportDialog

    document = AgentDocument.load(example_path)
    dialog = ExportDialog(example_path, document=document)
    qtbot.addWidget(dialog)
    dialog.set_client("claude-desktop")
    dialog.show()
    qtbot.waitExposed(dialog)
    for row in (dialog.fix_box, dialog.call_row):  # what a Verify that needs a key shows
        row.setVisible(True)
    # Maximised on a 1024x700 screen: its height less a title bar or a desktop's panel.
    dialog.resize(1024, 660)
    qtbot.waitUntil(lambda: dialog.height() == 660, timeout=WAIT)

    def span(widget: QWidget) -> tuple[int, int]:
        top = widget.mapTo(dialog, widget.rect().topLeft()).y()
        return top, top + widget.height()

    qtbot.waitUntil(lambda: span(dialog.report_view)[1] <= span(dialog.call_row)[0], timeout=WAIT)
    assert span(dialog.fix_box)[1] <= span(dialog.report_view)[0]
    assert dialog.report_view.height() >= dialog.report_view.minimumHeight()


def test_every_dialog_of_the_window_fits_the_screen(qtbot: QtBot, example_path: Path) -> None:
    from app.pages.server_dialog import ServerDialog
    from app.window.dialogs import TextDialog

    window = studio_window(qtbot)
    document = window.open_file(example_path)
    assert document is not None
    tool = document.agent.metadata.tool("book_flight")
    assert tool is not None
    dialogs = [
        window.show_preferences(),
        window.show_shortcuts(),
        window.show_getting_started(),
        window.open_test_dialog(document, tool),
        TextDialog("Details", "The server's stderr:", "line\n" * 400, window),
        ServerDialog(set(), parent=window),
    ]
    for dialog in dialogs:
        dialog.show()
        assert_on_screen(qtbot, dialog)
        dialog.close()
