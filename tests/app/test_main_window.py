"""The main window: documents, pages, undo keys, save and close prompts, disk conflicts, errors,
and the Edit menu's Find and Replace."""

from __future__ import annotations

import asyncio
from pathlib import Path

import qasync
from PySide6.QtCore import QObject, Qt, QTimer
from PySide6.QtGui import QAction
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QApplication, QMenu, QMessageBox, QPushButton

from app.errors import install_excepthook, reporter
from app.pages.agent_page import AgentPage
from app.pages.tools_list import ToolsListWidget
from app.tool_editor.editor import ToolEditor
from app.window.dialogs import disk_diff
from app.window.main_window import MainWindow
from schema_types.files.agent_file import load_agent
from tests.app._windows import studio_window


def _agent_page(window: MainWindow) -> AgentPage:
    document = window.current_document()
    assert document is not None
    page = window.show_page(document, "agent")
    assert isinstance(page, AgentPage)
    return page


def test_bare_start_shows_the_welcome_page(qtbot) -> None:
    window = studio_window(qtbot)

    assert window.central.currentWidget() is window.welcome
    assert window.welcome.examples_list.count() >= 2
    shown = [
        window.welcome.examples_list.item(i).text()
        for i in range(window.welcome.examples_list.count())
    ]
    # Each example shows its name and the first sentence of its (multi-line) description.
    assert "Travel Desk\nPlans and books business trips." in shown
    assert not window.save_action.isEnabled()
    assert window.windowTitle() == "Meta Agent Studio"


def test_a_start_with_a_file_builds_the_welcome_page_only_when_it_is_needed(
    qtbot, example_path: Path
) -> None:
    window = MainWindow()
    window.ask_save = lambda _doc: "discard"  # type: ignore[assignment,method-assign]
    qtbot.addWidget(window)
    document = window.open_file(example_path)
    window.show()

    assert window.central.currentWidget() is window.splitter
    assert window._welcome is None  # the examples were not read for it
    assert window.close_document(document)
    assert window.central.currentWidget() is window.welcome
    assert window.welcome.recent_list.count() == 1  # the file just closed


def test_file_new_lists_the_examples_and_opens_a_copy(qtbot) -> None:
    window = studio_window(qtbot)

    window.new_menu.aboutToShow.emit()
    window.new_menu.aboutToShow.emit()  # filled once
    texts = [a.text() for a in window.new_menu.actions()]
    assert texts.count("From example: Travel Desk") == 1
    next(a for a in window.new_menu.actions() if a.text() == "From example: Travel Desk").trigger()

    document = window.current_document()
    assert document is not None and document.path is None
    assert document.agent.metadata.name == "Travel Desk"


def test_opening_a_file_shows_it_and_remembers_it(qtbot, example_path: Path) -> None:
    window = studio_window(qtbot)

    document = window.open_file(example_path)

    assert document is not None and window.current_document() is document
    assert window.central.currentWidget() is window.splitter
    assert window.windowTitle() == "travel-desk.agent.yaml[*] — Meta Agent Studio"
    assert window.tabs.tabText(0) == "Travel Desk · Agent"
    assert window.open_file(example_path) is document  # already open: brought forward
    assert window.settings.recent_files() == [example_path]
    window.recent_menu.aboutToShow.emit()
    assert next(a.text() for a in window.recent_menu.actions()) == "travel-desk.agent.yaml"


def test_typing_edits_the_model_and_ctrl_z_undoes_it(qtbot, example_path: Path) -> None:
    window = studio_window(qtbot)
    document = window.open_file(example_path)
    assert document is not None
    page = _agent_page(window)

    page.name_edit.selectAll()
    qtbot.keyClicks(page.name_edit, "Trips")
    assert document.agent.metadata.name == "Trips"
    assert document.undo_stack.count() == 1  # typing merged
    assert window.isWindowModified()

    page.name_edit.setFocus()
    qtbot.keyClick(page.name_edit, Qt.Key.Key_Z, Qt.KeyboardModifier.ControlModifier)
    assert document.agent.metadata.name == "Travel Desk"
    assert page.name_edit.text() == "Travel Desk"
    assert not window.isWindowModified()
    window.redo_action.trigger()
    assert page.name_edit.text() == "Trips"

    page.mode_combo.setCurrentIndex(page.mode_combo.findData("autonomous"))
    page.mode_combo.activated.emit(page.mode_combo.currentIndex())
    page.prompt_edit.setPlainText("Plan trips.")
    assert document.agent.metadata.mode == "autonomous"
    assert document.agent.system_prompt == "Plan trips."
    window.undo_action.trigger()
    window.undo_action.trigger()
    assert str(document.agent.metadata.mode) == "tools"


def test_save_and_reload_gives_the_same_agent(qtbot, example_path: Path) -> None:
    window = studio_window(qtbot)
    document = window.open_file(example_path)
    assert document is not None
    page = _agent_page(window)
    page.version_edit.selectAll()
    qtbot.keyClicks(page.version_edit, "2.0.0")

    window.save_action.trigger()

    assert not document.is_dirty() and not window.isWindowModified()
    assert load_agent(example_path).to_data() == document.agent.to_data()
    assert load_agent(example_path).metadata.version == "2.0.0"


def test_save_as_for_a_new_agent(qtbot, tmp_path: Path) -> None:
    window = studio_window(qtbot)
    document = window.new_agent()
    assert document is not None
    target = tmp_path / "fresh.agent.yaml"
    window.ask_save_path = lambda _doc: target  # type: ignore[assignment,method-assign]

    assert window.save()

    assert document.path == target
    assert window.windowTitle().startswith("fresh.agent.yaml")


def test_close_with_unsaved_changes_asks_first(qtbot, example_path: Path) -> None:
    window = studio_window(qtbot)
    document = window.open_file(example_path)
    assert document is not None
    document.set_field(("metadata", "name"), "Changed", text="Edit name")
    answers = ["cancel", "save"]
    asked: list[str] = []

    def ask(doc: object) -> str:
        asked.append(doc.display_name())  # type: ignore[attr-defined]
        return answers.pop(0)

    window.ask_save = ask  # type: ignore[assignment]

    assert not window.close()
    assert window.isVisible() and window.documents() == [document]
    assert window.close()
    assert asked == ["travel-desk.agent.yaml"] * 2
    assert load_agent(example_path).metadata.name == "Changed"


def test_close_agent_with_the_real_dialog_discarding(qtbot, example_path: Path) -> None:
    window = studio_window(qtbot)
    document = window.open_file(example_path)
    assert document is not None
    document.set_field(("metadata", "name"), "Changed", text="Edit name")
    seen: list[str] = []

    def answer() -> None:
        box = QApplication.activeModalWidget()
        assert isinstance(box, QMessageBox)
        seen.append(box.text())
        box.button(QMessageBox.StandardButton.Discard).click()

    del window.ask_save  # the real question, not the test's default answer
    QTimer.singleShot(0, answer)
    window.close_action.trigger()

    assert seen == ["Save the changes to travel-desk.agent.yaml?"]
    assert window.documents() == []
    assert window.central.currentWidget() is window.welcome
    assert load_agent(example_path).metadata.name == "Travel Desk"


def test_a_file_changed_on_disk_is_not_overwritten_silently(qtbot, example_path: Path) -> None:
    window = studio_window(qtbot)
    document = window.open_file(example_path)
    assert document is not None
    document.set_field(("metadata", "name"), "Mine", text="Edit name")
    theirs = example_path.read_text().replace("name: Travel Desk", "name: Theirs")
    example_path.write_text(theirs)
    answers = ["cancel", "reload"]
    window.ask_conflict = lambda _doc: answers.pop(0)  # type: ignore[assignment,method-assign,return-value]

    assert not window.save()
    assert example_path.read_text() == theirs
    assert not window.save()  # reload instead
    assert document.agent.metadata.name == "Theirs" and not document.is_dirty()

    document.set_field(("metadata", "name"), "Mine", text="Edit name")
    example_path.write_text(theirs + "\n# again\n")
    window.ask_conflict = lambda _doc: "overwrite"  # type: ignore[assignment,method-assign]
    assert window.save()
    assert load_agent(example_path).metadata.name == "Mine"


def test_several_agents_each_keep_their_own_undo(qtbot, example_path: Path) -> None:
    window = studio_window(qtbot)
    travel = window.open_file(example_path)
    blank = window.new_agent()
    assert travel is not None and blank is not None
    assert window.outline.outline.rowCount() == 2

    blank.set_field(("metadata", "name"), "Second", text="Edit name")
    travel.set_field(("metadata", "name"), "First", text="Edit name")
    window.outline.select(travel, "model")
    window.undo_action.trigger()

    assert travel.agent.metadata.name == "Travel Desk"
    assert blank.agent.metadata.name == "Second"
    assert window.current_document() is travel


def test_pages_and_tool_tabs_open_from_the_outline(qtbot, example_path: Path) -> None:
    window = studio_window(qtbot)
    document = window.open_file(example_path)
    assert document is not None
    tool = document.agent.tools[1]

    window.outline.select(document, "tool", tool)
    page = window.page_stack.currentWidget()
    assert isinstance(page, ToolsListWidget)
    assert page.selected_row() == 1
    with qtbot.waitSignal(page.open_tool, timeout=10_000):
        page.open_action.trigger()
    tab = window.tabs.currentWidget()
    assert window.tool_tabs() == [tab] and getattr(tab, "tool", None) is tool

    document.set_field(("metadata", "tools", 1, "name"), "reserve", text="Rename")
    assert window.tabs.tabText(window.tabs.indexOf(tab)) == "reserve"
    document.remove_item(("metadata", "tools", 1), text="Delete")
    assert window.tool_tabs() == []
    for kind in ("model", "servers"):
        assert window.show_page(document, kind) is window.page_stack.currentWidget()


def test_window_geometry_and_splitter_are_restored(qtbot, example_path: Path) -> None:
    first = studio_window(qtbot)
    first.open_file(example_path)
    first.resize(700, 500)  # inside the offscreen screen (800x600): restoring clamps to it
    first.splitter.setSizes([333, 667])
    expected = first.splitter.sizes()
    assert first.close()

    second = studio_window(qtbot)
    second.open_file(example_path)

    assert second.size().width() == 700
    assert second.splitter.sizes() == expected


def test_reported_errors_show_in_the_status_bar(qtbot) -> None:
    window = studio_window(qtbot)

    reporter().error("Could not save x.agent.yaml", detail="Traceback …")

    assert "Could not save x.agent.yaml" in window.statusBar().currentMessage()
    assert window.details_button.isVisibleTo(window)
    assert window.open_file(Path("/nonexistent/agent.yaml")) is None
    assert "Could not open agent.yaml" in window.statusBar().currentMessage()


def test_errors_in_async_slots_reach_the_reporter(qtbot, qasync_loop) -> None:
    window = studio_window(qtbot)

    class Failing(QObject):
        @qasync.asyncSlot()  # type: ignore[untyped-decorator]
        async def run(self) -> None:
            await asyncio.sleep(0)
            raise RuntimeError("the model server went away")

    failing = Failing()
    button = QPushButton()
    qtbot.addWidget(button)
    button.clicked.connect(failing.run)
    with qtbot.capture_exceptions() as captured:
        install_excepthook(qasync_loop)
        button.click()
        qtbot.waitUntil(lambda: bool(reporter().history), timeout=10_000)

    assert "the model server went away" in reporter().history[-1].message
    assert "RuntimeError" in reporter().history[-1].detail
    assert "the model server went away" in window.statusBar().currentMessage()
    assert len(captured) == 1


def test_compare_with_disk_shows_only_the_lines_a_save_changes(qtbot, example_path: Path) -> None:
    window = studio_window(qtbot)
    document = window.open_file(example_path)
    assert document is not None
    assert "# " in example_path.read_text()  # the example keeps comments a whole dump would drop
    document.set_field(("metadata", "name"), "Mine", text="Edit name")

    changed = [
        line
        for line in disk_diff(document).splitlines()
        if line[:1] in "+-" and not line.startswith(("+++", "---"))
    ]

    assert changed == ["-  name: Travel Desk", "+  name: Mine"]
    assert window.save()
    assert changed[1][1:] in example_path.read_text().splitlines()


def _edit_menu_item(window: MainWindow, text: str) -> QAction:
    menu = next(a.menu() for a in window.menuBar().actions() if a.text() == "&Edit")
    assert isinstance(menu, QMenu)
    return next(a for a in menu.actions() if a.text().split("\t")[0].replace("&", "") == text)


def test_edit_find_and_replace_reach_the_focused_editors_find_bar(
    qtbot, example_path: Path
) -> None:
    window = studio_window(qtbot)
    window.activateWindow()
    qtbot.waitUntil(lambda: QApplication.activeWindow() is window, timeout=5000)
    document = window.open_file(example_path)
    assert document is not None
    editor = window.open_tool_tab(document, document.agent.tools[0])
    assert isinstance(editor, ToolEditor)
    find, replace = _edit_menu_item(window, "Find…"), _edit_menu_item(window, "Replace…")
    assert replace.text().endswith("\tCtrl+H") and replace.shortcut().isEmpty()
    window.outline.setFocus()
    qtbot.waitUntil(window.outline.hasFocus, timeout=5000)
    assert not find.isEnabled() and not replace.isEnabled()

    template = editor.template.editor
    QTest.mouseClick(template.viewport(), Qt.MouseButton.LeftButton)
    qtbot.waitUntil(template.hasFocus, timeout=5000)
    assert find.isEnabled() and replace.isEnabled()
    bar = editor.template.find_bar
    replace.trigger()
    assert bar.isVisible() and bar.replacing() and bar.search_field.hasFocus()
    bar.dismiss()
    qtbot.waitUntil(template.hasFocus, timeout=5000)
    QTest.keyClick(template, Qt.Key.Key_F, Qt.KeyboardModifier.ControlModifier)
    assert bar.isVisible() and not bar.replacing()

    json_view = editor.parameters.json_view
    editor.parameters.side.setCurrentWidget(json_view)
    json_view.editor.setFocus()
    qtbot.waitUntil(json_view.editor.hasFocus, timeout=5000)
    find.trigger()
    assert json_view.find_bar.isVisible() and json_view.find_bar.search_field.hasFocus()
