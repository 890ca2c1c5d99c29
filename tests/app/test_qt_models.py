"""The outline and tools-list item models, without any widget."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import QModelIndex, Qt
from PySide6.QtTest import QAbstractItemModelTester

from app.document import AgentDocument
from app.errors import reporter
from app.qt_models import KIND_ROLE, OutlineModel, ToolsListModel

DISPLAY = Qt.ItemDataRole.DisplayRole


def _tester(model) -> QAbstractItemModelTester:
    return QAbstractItemModelTester(model, QAbstractItemModelTester.FailureReportingMode.Fatal)


def _names(model: ToolsListModel) -> list[str]:
    return [model.data(model.index(row, 0)) for row in range(model.rowCount())]


def test_outline_shows_one_top_level_row_per_agent(qapp, example_path: Path) -> None:
    model = OutlineModel()
    tester = _tester(model)
    travel = AgentDocument.load(example_path)
    blank = AgentDocument()

    model.add_document(travel)
    model.add_document(blank)

    assert model.rowCount() == 2
    root = model.index(0, 0)
    assert model.data(root, DISPLAY) == "Travel Desk — travel-desk.agent.yaml"
    sections = [model.index(row, 0, root) for row in range(model.rowCount(root))]
    assert [model.data(i, KIND_ROLE) for i in sections] == ["agent", "model", "servers", "tools"]
    assert model.data(sections[2], DISPLAY) == "MCP servers (1)"
    tools = sections[3]
    assert model.data(tools, DISPLAY) == f"Tools ({len(travel.agent.tools)})"
    assert [model.data(model.index(r, 0, tools)) for r in range(model.rowCount(tools))] == [
        t.name for t in travel.agent.tools
    ]
    assert model.data(model.index(1, 0), DISPLAY) == "Untitled agent"
    assert model.index_for(travel, "tool", travel.agent.tools[2]).row() == 2
    del tester


def test_outline_marks_unsaved_agents_and_follows_tool_edits(qapp, example_path: Path) -> None:
    model = OutlineModel()
    tester = _tester(model)
    document = AgentDocument.load(example_path)
    model.add_document(document)
    tools = model.index_for(document, "tools")
    inserted: list[tuple[int, int]] = []
    moved: list[int] = []
    model.rowsInserted.connect(lambda _p, a, b: inserted.append((a, b)))
    model.rowsMoved.connect(lambda *args: moved.append(args[1]))

    document.insert_item(("metadata", "tools", 1), {"name": "added"}, text="Add")
    document.move_item(("metadata", "tools", 0), 3, text="Move")
    document.set_field(("metadata", "tools", 0, "name"), "renamed", text="Rename")

    assert inserted == [(1, 1)]
    assert moved == [0]
    names = [model.data(model.index(r, 0, tools)) for r in range(model.rowCount(tools))]
    assert names == [t.name for t in document.agent.tools]
    assert names[0] == "renamed"
    assert model.data(model.index(0, 0), DISPLAY).endswith(" *")

    document.undo_stack.setIndex(0)
    names = [model.data(model.index(r, 0, tools)) for r in range(model.rowCount(tools))]
    assert names == [t.name for t in document.agent.tools]
    assert not model.data(model.index(0, 0), DISPLAY).endswith("*")
    model.remove_document(document)
    assert model.rowCount() == 0
    del tester


def test_tools_list_renames_through_the_document(qapp, example_path: Path) -> None:
    document = AgentDocument.load(example_path)
    model = ToolsListModel(document)
    tester = _tester(model)

    assert model.setData(model.index(0, 0), "find_flights")
    assert document.agent.tools[0].name == "find_flights"
    assert not model.setData(model.index(0, 0), "find flights!")
    assert not model.setData(model.index(0, 0), document.agent.tools[1].name)

    assert document.agent.tools[0].name == "find_flights"
    assert "not valid for MCP" in reporter().history[-2].message
    assert "must be unique" in reporter().history[-1].message
    document.undo_stack.undo()
    assert _names(model)[0] == "search_flights"
    del tester


def test_tools_list_moves_rows_like_qt_expects(qapp, example_path: Path) -> None:
    document = AgentDocument.load(example_path)
    model = ToolsListModel(document)
    tester = _tester(model)
    original = _names(model)

    # Qt's destination is "insert before", in the numbering before the move.
    assert model.moveRows(QModelIndex(), 0, 1, QModelIndex(), 3)
    assert _names(model) == [original[1], original[2], original[0], original[3]]
    assert model.moveRows(QModelIndex(), 3, 1, QModelIndex(), 0)
    assert _names(model)[0] == original[3]

    document.undo_stack.undo()
    document.undo_stack.undo()
    assert _names(model) == original
    del tester


def test_tools_list_drop_moves_the_dragged_row(qapp, example_path: Path) -> None:
    document = AgentDocument.load(example_path)
    model = ToolsListModel(document)
    original = _names(model)
    data = model.mimeData([model.index(2, 0)])

    assert model.dropMimeData(data, Qt.DropAction.MoveAction, 0, 0, QModelIndex())
    assert _names(model) == [original[2], original[0], original[1], original[3]]

    other = ToolsListModel(AgentDocument.load(example_path))
    assert not other.dropMimeData(data, Qt.DropAction.MoveAction, 0, 0, QModelIndex())
    assert document.undo_stack.count() == 1
