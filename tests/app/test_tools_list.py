"""The Tools page: add, duplicate, rename, delete and reorder tools, all undoable."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QLineEdit

from app.document.agent_document import AgentDocument
from app.errors import reporter
from app.pages.tools_list import ToolsListWidget, unique_tool_name


def _widget(qtbot, path: Path | None = None) -> ToolsListWidget:
    document = AgentDocument.load(path) if path else AgentDocument()
    widget = ToolsListWidget(document)
    qtbot.addWidget(widget)
    widget.show()
    return widget


def _names(widget: ToolsListWidget) -> list[str]:
    return [t.name for t in widget.document.agent.tools]


def test_unique_names_are_mcp_safe() -> None:
    assert unique_tool_name("new_tool", set()) == "new_tool"
    assert unique_tool_name("new_tool", {"new_tool"}) == "new_tool_2"
    assert unique_tool_name("new_tool", {"new_tool", "new_tool_2"}) == "new_tool_3"
    assert unique_tool_name("book flight!", set()) == "book_flight_"


def test_add_names_each_new_tool_uniquely(qtbot) -> None:
    widget = _widget(qtbot)
    assert widget.empty_hint.isVisible()

    widget.add_action.trigger()
    widget.add_action.trigger()

    assert _names(widget) == ["new_tool", "new_tool_2"]
    assert widget.selected_row() == 1
    assert not widget.empty_hint.isVisible()
    widget.document.undo_stack.undo()
    assert _names(widget) == ["new_tool"]


def test_duplicate_inserts_a_copy_after_the_original(qtbot, example_path: Path) -> None:
    widget = _widget(qtbot, example_path)
    widget.select_row(1)
    source = widget.document.agent.tools[1]

    widget.duplicate_action.trigger()

    copy = widget.document.agent.tools[2]
    assert copy.name == f"{source.name}_copy"
    assert copy.prompt == source.prompt and copy.parameters == source.parameters
    assert copy is not source
    assert widget.selected_row() == 2


def test_invalid_rename_is_refused_with_a_message(qtbot, example_path: Path) -> None:
    widget = _widget(qtbot, example_path)
    before = _names(widget)

    assert not widget.rename_tool(0, "search flights")
    assert not widget.rename_tool(0, before[1])
    assert not widget.rename_tool(0, "")

    assert _names(widget) == before
    assert widget.document.undo_stack.count() == 0
    assert "not valid for MCP" in reporter().history[0].message
    assert "must be unique" in reporter().history[1].message
    assert widget.rename_tool(0, "flights.search")
    assert _names(widget)[0] == "flights.search"


def test_rename_in_place_with_the_keyboard(qtbot, example_path: Path) -> None:
    widget = _widget(qtbot, example_path)
    widget.view.setFocus()
    widget.select_row(0)

    widget.rename_action.trigger()
    editor = widget.view.indexWidget(widget.view.currentIndex())
    assert isinstance(editor, QLineEdit)
    editor.selectAll()
    qtbot.keyClicks(editor, "find_flights")
    qtbot.keyClick(editor, Qt.Key.Key_Return)  # the delegate commits on its next event turn

    qtbot.waitUntil(lambda: _names(widget)[0] == "find_flights", timeout=10_000)


def test_delete_is_undoable(qtbot, example_path: Path) -> None:
    widget = _widget(qtbot, example_path)
    before = list(widget.document.agent.tools)
    widget.select_row(1)

    widget.delete_action.trigger()
    assert _names(widget) == [before[0].name, *[t.name for t in before[2:]]]
    assert widget.selected_row() == 1

    widget.document.undo_stack.undo()
    assert widget.document.agent.tools == before
    assert widget.document.agent.tools[1] is before[1]


def test_reorder_moves_the_selection_with_the_tool(qtbot, example_path: Path) -> None:
    widget = _widget(qtbot, example_path)
    before = _names(widget)
    widget.select_row(0)
    assert not widget.up_action.isEnabled()

    widget.down_action.trigger()
    widget.down_action.trigger()
    assert _names(widget) == [before[1], before[2], before[0], before[3]]
    assert widget.selected_row() == 2
    widget.up_action.trigger()
    assert _names(widget)[1] == before[0]

    widget.document.undo_stack.setIndex(0)
    assert _names(widget) == before


def test_activating_a_tool_asks_for_its_tab(qtbot, example_path: Path) -> None:
    widget = _widget(qtbot, example_path)
    widget.select_row(2)

    with qtbot.waitSignal(widget.open_tool, timeout=10_000) as blocker:
        qtbot.keyClick(widget.view, Qt.Key.Key_Return)

    assert blocker.args == [widget.document.agent.tools[2]]
