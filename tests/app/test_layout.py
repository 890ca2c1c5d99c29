"""The tool editor's room: usable at 1024×700, panes at the sizes the person gave them last.

At 1024×700, toolbar and outline shown, the richest tool of the example (book_flight: 10
parameter rows, two levels deep) shows its whole tree, the parameter tool bar shows every
button, and the property panel never needs a horizontal scroll bar, whatever the selected
parameter's type. Splitters moved in one window open at those sizes in the next.
"""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import QPoint, Qt
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QScrollArea, QSplitter, QToolButton, QTreeView
from pytestqt.qtbot import QtBot

from app.settings_store import SettingsStore
from app.tool_editor.editor import ToolEditor
from app.window.main_window import MainWindow
from tests.app._windows import studio_window

WAIT = 5000  # ms: a bound, not a sleep
BOOK_FLIGHT_ROWS = 10  # three objects and their 3 + 2 + 2 properties: the whole tree


def editor_at(qtbot: QtBot, example_path: Path, width: int, height: int) -> ToolEditor:
    window = studio_window(qtbot)
    window.resize(width, height)
    qtbot.waitUntil(lambda: window.size().width() == width, timeout=WAIT)
    document = window.open_file(example_path)
    assert document is not None
    tool = document.agent.metadata.tool("book_flight")
    assert tool is not None
    editor = window.open_tool_tab(document, tool)
    assert isinstance(editor, ToolEditor)
    editor.parameters.tree.expandAll()
    qtbot.waitExposed(editor)
    return editor


def whole_rows(tree: QTreeView) -> int:
    """How many rows show whole in the tree's viewport."""
    shown, index = 0, tree.indexAt(QPoint(1, 1))
    while index.isValid() and tree.visualRect(index).bottom() < tree.viewport().height():
        shown += 1
        index = tree.indexBelow(index)
    return shown


def fits(panel: QScrollArea) -> bool:
    """Whether the scroll area's content is no wider than its viewport."""
    content = panel.widget()
    return content is not None and content.width() <= panel.viewport().width()


def test_at_1024x700_the_tool_editor_shows_the_whole_tree_and_every_setting_fits(
    qtbot: QtBot, example_path: Path
) -> None:
    editor = editor_at(qtbot, example_path, 1024, 700)
    builder = editor.parameters
    toolbar = builder.toolbar

    qtbot.waitUntil(lambda: whole_rows(builder.tree) >= BOOK_FLIGHT_ROWS, timeout=WAIT)
    assert not builder.tree.horizontalScrollBar().isVisible()
    for action in toolbar.actions():
        widget = toolbar.widgetForAction(action)
        assert widget is None or widget.isVisible(), f"{action.text()} went to the overflow"
    more = toolbar.findChild(QToolButton, "moreParameterActions")
    assert more is not None and more.isVisible()
    assert builder.duplicate_action in more.menu().actions()
    for path in builder.model.paths():  # objects, strings with and without enum, a date
        builder.select(path)
        assert builder.panel.path() == path
        qtbot.waitUntil(lambda: fits(builder.panel), timeout=WAIT)
        assert not builder.panel.horizontalScrollBar().isVisible(), path
    assert (
        editor.template.editor.viewport().height()
        >= 5 * editor.template.editor.fontMetrics().lineSpacing()
    )


def test_number_and_list_settings_fit_at_1024x700(qtbot: QtBot, example_path: Path) -> None:
    editor = editor_at(qtbot, example_path, 1024, 700)
    builder = editor.parameters
    for kind in ("number", "array", "integer", "boolean"):
        path = builder.add_property()
        assert path is not None
        assert builder.model.set_type(path, kind)

    for path in builder.model.paths():
        builder.select(path)
        qtbot.waitUntil(lambda: fits(builder.panel), timeout=WAIT)
        assert not builder.panel.horizontalScrollBar().isVisible(), path


def drag(splitter: QSplitter, handle: int, by: int) -> None:
    """Drag a splitter's handle with the mouse, along the splitter, by ``by`` pixels."""
    widget = splitter.handle(handle)
    start = widget.rect().center()
    step = QPoint(by, 0) if splitter.orientation() == Qt.Orientation.Horizontal else QPoint(0, by)
    QTest.mousePress(widget, Qt.MouseButton.LeftButton, Qt.KeyboardModifier.NoModifier, start)
    QTest.mouseMove(widget, start + step)
    QTest.mouseRelease(
        widget, Qt.MouseButton.LeftButton, Qt.KeyboardModifier.NoModifier, start + step
    )


def test_pane_sizes_are_kept_for_the_next_window(qtbot: QtBot, example_path: Path) -> None:
    editor = editor_at(qtbot, example_path, 1024, 700)
    window = editor.window()
    assert isinstance(window, MainWindow)
    store = SettingsStore()
    before = [window.splitter.sizes(), editor.split.sizes(), editor.parameters.split.sizes()]

    drag(window.splitter, 1, 30)
    drag(editor.split, 1, -25)
    drag(editor.parameters.split, 1, 20)

    after = [window.splitter.sizes(), editor.split.sizes(), editor.parameters.split.sizes()]
    assert all(then != now for then, now in zip(before, after, strict=True)), (before, after)
    moved = {
        "main": window.splitter.sizes(),
        "toolEditor/definition": editor.split.sizes(),
        "toolEditor/parameters": editor.parameters.split.sizes(),
    }
    qtbot.waitUntil(
        lambda: all(store.splitter_sizes(name) == sizes for name, sizes in moved.items()),
        timeout=WAIT,
    )
    assert window.close()

    again = editor_at(qtbot, example_path, 1024, 700)
    again_window = again.window()
    assert isinstance(again_window, MainWindow)
    assert again_window.splitter.sizes() == moved["main"]
    assert again.split.sizes() == moved["toolEditor/definition"]
    assert again.parameters.split.sizes() == moved["toolEditor/parameters"]


def test_another_tool_opens_at_the_sizes_last_given(qtbot: QtBot, example_path: Path) -> None:
    editor = editor_at(qtbot, example_path, 1024, 700)
    window = editor.window()
    assert isinstance(window, MainWindow)
    drag(editor.split, 1, 40)
    sizes = editor.split.sizes()
    qtbot.waitUntil(
        lambda: SettingsStore().splitter_sizes("toolEditor/definition") == sizes, timeout=WAIT
    )
    document = window.current_document()
    assert document is not None

    other = window.open_tool_tab(document, document.agent.tools[0])
    assert isinstance(other, ToolEditor)
    qtbot.waitExposed(other)

    assert other.split.sizes() == sizes


def test_the_window_with_a_tool_editor_fits_800_wide(qtbot: QtBot, example_path: Path) -> None:
    editor = editor_at(qtbot, example_path, 800, 600)
    window = editor.window()

    assert window.minimumSizeHint().width() <= 800
    assert window.width() == 800
