"""The tool editor tab: its parts wired together (tree, panel, renames, badge, reload)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QListWidget
from pytestqt.qtbot import QtBot

from app.document.agent_document import AgentDocument
from app.tool_editor.editor import ToolEditor
from app.tool_editor.schema_import import import_parameters
from app.window.main_window import MainWindow
from schema_types.agent import Agent

PARAMETERS: dict[str, Any] = {
    "type": "object",
    "properties": {
        "trip": {
            "type": "object",
            "properties": {"city": {"type": "string"}, "nights": {"type": "integer"}},
            "required": ["city"],
        },
        "cabin": {"type": "string", "enum": ["economy", "business"], "default": "economy"},
        "travellers": {"type": "array", "items": {"type": "string"}},
    },
    "required": ["trip"],
}


def listed(widget: QListWidget) -> list[str]:
    """The rows of a list widget, as shown."""
    return [widget.item(row).text() for row in range(widget.count())]


def make_editor(qtbot: QtBot, prompt: str = "Go to {trip.city} in {cabin}.") -> ToolEditor:
    agent = Agent.model_validate(
        {
            "metadata": {
                "name": "Trips",
                "tools": [
                    {"name": "first", "description": "Comes first.", "prompt": "x"},
                    {
                        "name": "book",
                        "description": "Books.",
                        "parameters": PARAMETERS,
                        "prompt": prompt,
                    },
                ],
            }
        }
    )
    document = AgentDocument(agent)
    editor = ToolEditor(document, agent.tools[1])
    qtbot.addWidget(editor)
    editor.resize(1200, 800)
    editor.show()
    return editor


def test_selecting_a_parameter_shows_it_in_the_panel(qtbot: QtBot) -> None:
    editor = make_editor(qtbot)
    builder = editor.parameters
    assert builder.model.paths()[:1] == [("properties", "trip")]

    builder.select(("properties", "cabin"))

    assert builder.selected_path() == ("properties", "cabin")
    assert builder.panel.path() == ("properties", "cabin")
    assert builder.panel.kind() == "string"
    assert builder.delete_action.isEnabled() and builder.duplicate_action.isEnabled()
    assert builder.up_action.isEnabled() and builder.down_action.isEnabled()


def test_toolbar_actions_edit_the_tool_and_undo(qtbot: QtBot) -> None:
    editor = make_editor(qtbot)
    builder, document, _tool = editor.parameters, editor.document, editor.tool
    builder.select(("properties", "trip"))

    added = builder.add_child()
    assert added == ("properties", "trip", "properties", "new_property")
    assert list(editor.tool.parameters["properties"]["trip"]["properties"]) == [
        "city",
        "nights",
        "new_property",
    ]
    builder.select(("properties", "cabin"))
    builder.move_by(-1)
    assert list(editor.tool.parameters["properties"]) == ["cabin", "trip", "travellers"]
    copy = builder.duplicate()
    assert copy == ("properties", "cabin_copy")
    assert builder.delete()
    assert "cabin_copy" not in editor.tool.parameters["properties"]

    for _ in range(4):
        document.undo_stack.undo()
    assert editor.tool.parameters == PARAMETERS


def test_renaming_a_parameter_offers_to_update_the_template(qtbot: QtBot) -> None:
    editor = make_editor(qtbot)
    model = editor.parameters.model
    index = model.index_for_path(("properties", "trip", "properties", "city"))

    assert model.setData(index, "town", Qt.ItemDataRole.EditRole)

    assert editor.template.rename_bar.isVisibleTo(editor)
    editor.template.rename_apply.click()
    assert editor.tool.prompt == "Go to {trip.town} in {cabin}."
    assert not editor.template.rename_bar.isVisibleTo(editor)
    editor.document.undo_stack.undo()
    assert editor.tool.prompt == "Go to {trip.city} in {cabin}."


def test_renaming_a_parameter_updates_its_sections_and_fallbacks_too(qtbot: QtBot) -> None:
    prompt = "Go to {trip.city}{?trip.nights} for {trip.nights|a few} nights{/trip.nights}."
    editor = make_editor(qtbot, prompt)
    model = editor.parameters.model
    index = model.index_for_path(("properties", "trip", "properties", "nights"))

    assert model.setData(index, "stay", Qt.ItemDataRole.EditRole)

    assert "still uses {trip.nights} in 3 places" in editor.template.rename_label.text()
    editor.template.rename_apply.click()
    assert editor.tool.prompt == (
        "Go to {trip.city}{?trip.stay} for {trip.stay|a few} nights{/trip.stay}."
    )
    assert editor.template.error_count() == 0
    editor.document.undo_stack.undo()
    assert editor.tool.prompt == prompt


def test_template_errors_show_as_a_badge_in_the_title(qtbot: QtBot) -> None:
    editor = make_editor(qtbot)
    titles: list[str] = []
    editor.title_changed.connect(titles.append)
    assert editor.title() == "book"

    editor.document.set_field(
        ("metadata", "tools", 1, "prompt"), "Go to {nowhere}.", text="Edit prompt"
    )

    assert editor.title() == "book (1 ⚠)"
    editor.document.undo_stack.undo()
    assert editor.title() == "book"
    assert titles == ["book (1 ⚠)", "book"]


def test_renaming_the_tool_retitles_the_tab(qtbot: QtBot) -> None:
    editor = make_editor(qtbot)
    titles: list[str] = []
    editor.title_changed.connect(titles.append)

    editor.fields.name_edit.selectAll()
    qtbot.keyClicks(editor.fields.name_edit, "reserve")
    qtbot.keyClick(editor.fields.name_edit, Qt.Key.Key_Return)

    assert editor.document.agent.tools[1].name == "reserve"
    assert titles[-1] == "reserve"


def test_importing_replaces_the_parameters_in_one_step(qtbot: QtBot) -> None:
    editor = make_editor(qtbot)
    found = import_parameters('{"city": "Lisbon", "nights": 3, "tags": ["sea"]}')

    assert editor.parameters.apply_import(found)

    properties = editor.tool.parameters["properties"]
    assert {name: node["type"] for name, node in properties.items()} == {
        "city": "string",
        "nights": "integer",
        "tags": "array",
    }
    editor.document.undo_stack.undo()
    assert editor.tool.parameters == PARAMETERS


def test_the_test_button_asks_for_a_test_run(qtbot: QtBot) -> None:
    editor = make_editor(qtbot)

    with qtbot.waitSignal(editor.test_requested, timeout=10_000) as signal:
        editor.test_button.click()

    assert signal.args == [editor.tool]


def test_a_reload_follows_the_tool_by_name_or_closes_the_tab(
    qtbot: QtBot, example_path: Path
) -> None:
    document = AgentDocument.load(example_path)
    tool = document.agent.tools[1]
    editor = ToolEditor(document, tool)
    qtbot.addWidget(editor)
    removed: list[bool] = []
    editor.tool_removed.connect(lambda: removed.append(True))

    document.reload()

    assert editor.tool is not tool and editor.tool.name == tool.name
    assert editor.tool is document.agent.tools[1]
    assert editor.template.editor.text() == editor.tool.prompt
    assert editor.parameters.model.parameters() == editor.tool.parameters

    text = example_path.read_text().replace(f"name: {tool.name}\n", "name: renamed_away\n")
    example_path.write_text(text)
    document.reload()
    document.reload()
    assert removed == [True]


def test_the_main_window_opens_the_full_editor(qtbot: QtBot, example_path: Path) -> None:
    window = MainWindow()
    window.ask_save = lambda _doc: "discard"  # type: ignore[assignment,method-assign]
    qtbot.addWidget(window)
    document = window.open_file(example_path)
    assert document is not None
    tab = window.open_tool_tab(document, document.agent.tools[0])
    assert isinstance(tab, ToolEditor)
    assert window.tabs.tabText(window.tabs.indexOf(tab)) == document.agent.tools[0].name


def test_parameters_the_tree_cannot_show_open_on_the_json_and_its_problems(qtbot: QtBot) -> None:
    broken = {"type": "object", "properties": 3}
    agent = Agent.model_validate({"metadata": {"tools": [{"name": "t", "parameters": broken}]}})
    editor = ToolEditor(AgentDocument(agent), agent.tools[0])
    qtbot.addWidget(editor)
    editor.resize(1200, 800)
    editor.show()
    builder = editor.parameters

    assert builder.model.paths() == [] and builder.model.root_error is not None
    assert builder.side.currentWidget() is builder.json_view
    qtbot.waitUntil(lambda: builder.json_view.problems.isVisible(), timeout=10_000)
    assert listed(builder.json_view.problems) == [
        "Line 3, column 17: properties: expected object, got integer 3"
    ]
