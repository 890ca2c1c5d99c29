"""The outline and tools-list item models, without any widget."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import QModelIndex, QPersistentModelIndex, Qt
from PySide6.QtGui import QIcon
from PySide6.QtTest import QAbstractItemModelTester

from app.document.agent_document import AgentDocument
from app.document.qt_models import KIND_ROLE, OutlineModel, ToolsListModel
from app.document.schema_health import CHECK_DELAY_MS, tool_schema_health
from app.errors import reporter
from app.icons import icon

DISPLAY = Qt.ItemDataRole.DisplayRole
DECORATION = Qt.ItemDataRole.DecorationRole
TOOLTIP = Qt.ItemDataRole.ToolTipRole
CABIN_DEFAULT = ("metadata", "tools", 0, "parameters", "properties", "cabin", "default")


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


def _icon_name(value: object) -> str:
    assert isinstance(value, QIcon)
    return next(n for n in ("warning", "tool") if value.cacheKey() == icon(n).cacheKey())


def test_tools_whose_parameters_need_fixing_are_marked_until_fixed(
    qtbot, example_path: Path
) -> None:
    # An agent whose first tool's default is not one of its own enum values: it opens (the
    # studio is where it gets fixed) and both views mark that tool, and only that tool.
    text = example_path.read_text(encoding="utf-8")
    document = AgentDocument.load(example_path)
    document.set_field(CABIN_DEFAULT, "steerage", text="Edit default")
    document.undo_stack.setClean()
    outline, tools_list = OutlineModel(), ToolsListModel(document)
    testers = (_tester(outline), _tester(tools_list))
    outline.add_document(document)
    first = outline.index_for(document, "tool", document.agent.tools[0])
    second = outline.index_for(document, "tool", document.agent.tools[1])
    health = tool_schema_health(document)
    assert not health.checked  # nothing is checked inside the change or the model set-up
    assert tool_schema_health(document) is health  # one per document, shared by every view

    with qtbot.waitSignals([outline.dataChanged, tools_list.dataChanged], timeout=10_000):
        pass  # the check runs from the event loop and the views hear of its outcome
    assert health.checked
    assert [t.name for t in health.unsound_tools()] == [document.agent.tools[0].name]
    assert _icon_name(outline.data(first, DECORATION)) == "warning"
    assert _icon_name(tools_list.data(tools_list.index(0, 0), DECORATION)) == "warning"
    assert _icon_name(outline.data(second, DECORATION)) == "tool"
    tip = outline.data(first, TOOLTIP)
    assert tip.startswith("⚠ The parameters need fixing before the agent can be served — ")
    assert 'properties.cabin.default: "steerage" is not one of "economy"' in tip
    assert tip.endswith(document.agent.tools[0].description)
    assert tools_list.data(tools_list.index(0, 0), TOOLTIP) == tip
    assert outline.data(second, TOOLTIP) == document.agent.tools[1].description
    assert not health.check_now()  # nothing changed since: same outcome, no signal

    # Fixed by an edit: the mark goes; undone: it is back. An edit elsewhere changes nothing.
    with qtbot.waitSignal(health.changed, timeout=10_000):
        document.set_field(CABIN_DEFAULT, "business", text="Edit default")
    assert health.unsound_tools() == []
    assert _icon_name(outline.data(first, DECORATION)) == "tool"
    assert outline.data(first, TOOLTIP) == document.agent.tools[0].description
    with qtbot.waitSignal(health.changed, timeout=10_000):
        document.undo_stack.undo()
    assert _icon_name(tools_list.data(tools_list.index(0, 0), DECORATION)) == "warning"
    document.set_field(("metadata", "tools", 1, "description"), "Books.", text="Edit")
    assert not health.check_now()
    assert example_path.read_text(encoding="utf-8") == text  # marking never writes the file
    del testers


def test_an_edit_inside_a_tool_updates_only_its_row(qapp, example_path: Path) -> None:
    document = AgentDocument.load(example_path)
    outline, tools_list = OutlineModel(), ToolsListModel(document)
    testers = [_tester(outline), _tester(tools_list)]
    outline.add_document(document)
    tools_index = outline.index_for(document, "tools")
    kept = outline.index(1, 0, tools_index)
    persistent = QPersistentModelIndex(kept)
    changed: list[tuple[str, int, int]] = []
    moved: list[str] = []
    outline.dataChanged.connect(
        lambda first, last, *_: changed.append(
            (str(outline.data(first.parent(), KIND_ROLE)), first.row(), last.row())
        )
    )
    tools_list.dataChanged.connect(
        lambda first, last, *_: changed.append(("list", first.row(), last.row()))
    )
    for model in (outline, tools_list):
        model.rowsRemoved.connect(lambda *_: moved.append("removed"))
        model.rowsInserted.connect(lambda *_: moved.append("inserted"))

    document.set_field(("metadata", "tools", 1, "prompt"), "New prompt", text="Edit")

    assert moved == []  # the row stays: views keep their selection and expansion
    assert ("tools", 1, 1) in changed and ("list", 1, 1) in changed
    assert ("document", 1, 1) not in changed  # the Model section did not change
    assert persistent.row() == 1
    assert tools_list.tool(1) is document.agent.tools[1]
    assert outline.node(persistent).tool is document.agent.tools[1]  # type: ignore[union-attr]
    del testers


def test_a_model_setting_updates_the_model_row_and_no_tool_row(qapp, example_path: Path) -> None:
    document = AgentDocument.load(example_path)
    outline = OutlineModel()
    tester = _tester(outline)
    outline.add_document(document)
    rows: list[str] = []
    outline.dataChanged.connect(lambda first, *_: rows.append(str(outline.data(first, KIND_ROLE))))

    document.set_field(("settings", "model"), "openai:gpt-4.1", text="Edit model")

    assert "model" in rows and "tool" not in rows
    model_row = outline.index_for(document, "model")
    assert outline.data(model_row, DISPLAY) == "Model — openai:gpt-4.1"
    del tester


def test_a_tool_keeps_its_mark_while_its_prompt_is_edited(qtbot, example_path: Path) -> None:
    document = AgentDocument.load(example_path)
    document.set_field(CABIN_DEFAULT, "steerage", text="Break the schema")
    health = tool_schema_health(document)
    health.check_now()
    assert health.problems(document.agent.tools[0])

    passes: list[None] = []
    health.pass_finished.connect(lambda: passes.append(None))
    document.set_field(("metadata", "tools", 0, "prompt"), "Typed", text="Type")

    assert health.problems(document.agent.tools[0])  # a new object, the same tool
    # A pass would start CHECK_DELAY_MS after the edit: wait a few times that long.
    with qtbot.waitSignal(
        health.pass_finished, timeout=CHECK_DELAY_MS * 5, raising=False
    ) as waited:
        pass
    assert not waited.signal_triggered and passes == []  # a prompt cannot change the outcome
