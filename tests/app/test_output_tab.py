"""The tool editor's Output section: text answers by default, an output schema built with the
parameter builder, each switch one undo step, the file written and restored byte for byte."""

from __future__ import annotations

import json
from pathlib import Path

import yaml
from PySide6.QtCore import Qt
from PySide6.QtGui import QGuiApplication
from PySide6.QtWidgets import QApplication, QLineEdit
from pytestqt.qtbot import QtBot

from app.document.agent_document import AgentDocument
from app.tool_editor.editor import ToolEditor
from app.tool_editor.output_tab import OutputTab
from tests.app._tool_widgets import show_active

AGENT = """\
metadata:
  name: Flights
  tools:
    - name: find_flights
      description: Finds flights.
      x-owner: travel desk
      parameters:
        type: object
        properties:
          to:
            type: string
      prompt: Find flights to {to}.
settings:
  model: openai:gpt-4.1-mini
"""

TYPED_AGENT = """\
metadata:
  name: Flights
  tools:
    - name: find_flights
      description: Finds flights.
      parameters:
        type: object
        properties:
          to:
            type: string
      prompt: Find flights to {to}.
      outputSchema:
        type: object
        properties:
          cheapest:
            type: number
            minimum: 50
            maximum: 10
        required:
          - cheapest
          - currency
"""


def _editor(qtbot: QtBot, tmp_path: Path, text: str = AGENT) -> tuple[ToolEditor, Path]:
    path = tmp_path / "flights.agent.yaml"
    path.write_text(text, encoding="utf-8")
    document = AgentDocument.load(path)
    editor = ToolEditor(document, document.agent.tools[0])
    show_active(qtbot, editor, 1100, 700)
    return editor, path


def _open_output(qtbot: QtBot, editor: ToolEditor) -> OutputTab:
    bar = editor.sections.tabBar()
    index = editor.sections.indexOf(editor.output)
    assert editor.sections.tabText(index) == "Output"
    qtbot.mouseClick(bar, Qt.MouseButton.LeftButton, pos=bar.tabRect(index).center())
    qtbot.waitUntil(editor.output.isVisible, timeout=5000)
    return editor.output


def _saved(editor: ToolEditor, path: Path) -> bytes:
    editor.document.save(path)
    return path.read_bytes()


def test_a_tool_answers_text_until_it_is_given_an_output_schema(
    qtbot: QtBot, tmp_path: Path
) -> None:
    editor, _path = _editor(qtbot, tmp_path)
    output = _open_output(qtbot, editor)

    assert output.none_label.isVisible() and output.add_button.isVisible()
    assert "No output schema: this tool answers text." in output.none_label.text()
    assert not output.builder.isVisible() and not output.remove_button.isVisible()
    assert editor.tool.output_schema is None


def test_adding_and_removing_the_output_schema_are_one_undo_step_each_and_restore_the_bytes(
    qtbot: QtBot, tmp_path: Path
) -> None:
    editor, path = _editor(qtbot, tmp_path)
    output = _open_output(qtbot, editor)
    stack = editor.document.undo_stack
    original = _saved(editor, path)

    qtbot.mouseClick(output.add_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(output.builder.isVisible, timeout=5000)
    assert output.builder.tree.accessibleName() == "Output"
    assert stack.count() == 1 and stack.undoText() == "Give find_flights an output schema"
    written = yaml.safe_load(_saved(editor, path))
    tool = written["metadata"]["tools"][0]
    assert tool["outputSchema"] == {"type": "object", "properties": {}}
    assert tool["x-owner"] == "travel desk"  # unknown keys kept

    stack.undo()
    qtbot.waitUntil(output.add_button.isVisible, timeout=5000)
    assert _saved(editor, path) == original

    stack.redo()
    qtbot.waitUntil(output.remove_button.isVisible, timeout=5000)
    with_schema = _saved(editor, path)
    qtbot.mouseClick(output.remove_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(output.add_button.isVisible, timeout=5000)
    assert stack.undoText() == "Remove the output schema of find_flights"
    assert _saved(editor, path) == original  # the key leaves the file, no "outputSchema: null"
    stack.undo()
    qtbot.waitUntil(output.builder.isVisible, timeout=5000)
    assert _saved(editor, path) == with_schema


def test_the_output_schema_is_built_with_the_parameter_builder_and_round_trips(
    qtbot: QtBot, tmp_path: Path
) -> None:
    editor, path = _editor(qtbot, tmp_path)
    output = _open_output(qtbot, editor)
    qtbot.mouseClick(output.add_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(output.builder.isVisible, timeout=5000)
    builder = output.builder
    stack = editor.document.undo_stack

    # Add a field with the tool bar and type its name, as a person does.
    assert builder.tree.hasFocus()  # Ctrl+T would add one too
    button = builder.toolbar.widgetForAction(builder.add_action)
    qtbot.mouseClick(button, Qt.MouseButton.LeftButton)
    editor_widget = QApplication.focusWidget()
    assert isinstance(editor_widget, QLineEdit) and editor_widget.text() == "new_property"
    qtbot.keyClicks(editor_widget, "cheapest")
    qtbot.keyClick(editor_widget, Qt.Key.Key_Return)
    qtbot.waitUntil(lambda: builder.model.paths() == [("properties", "cheapest")], timeout=5000)
    assert stack.undoText() == "Rename output field new_property to cheapest"
    index = builder.model.index_for_path(("properties", "cheapest"))
    assert index.data() == "cheapest"

    # The JSON view shows it, and text typed there is the same schema the other way.
    builder.side.setCurrentWidget(builder.json_view)
    shown = json.loads(builder.json_view.editor.toPlainText())
    assert list(shown["properties"]) == ["cheapest"]
    schema = {
        "type": "object",
        "properties": {"cheapest": {"type": "number"}, "currency": {"type": "string"}},
        "required": ["cheapest"],
    }
    QGuiApplication.clipboard().setText(json.dumps(schema))
    builder.json_view.editor.setFocus(Qt.FocusReason.OtherFocusReason)
    qtbot.waitUntil(builder.json_view.editor.hasFocus, timeout=5000)
    builder.json_view.editor.selectAll()
    qtbot.keyClick(builder.json_view.editor, Qt.Key.Key_V, Qt.KeyboardModifier.ControlModifier)
    qtbot.waitUntil(lambda: editor.tool.output_schema == schema, timeout=5000)
    assert stack.undoText() == "Edit the output schema as JSON"
    assert builder.model.paths() == [("properties", "cheapest"), ("properties", "currency")]
    assert editor.tool.parameters["properties"] == {"to": {"type": "string"}}  # untouched

    before = _saved(editor, path)
    tool = yaml.safe_load(before)["metadata"]["tools"][0]
    assert tool["outputSchema"] == schema and tool["x-owner"] == "travel desk"
    reopened = AgentDocument.load(path)
    assert reopened.agent.tools[0].output_schema == schema
    reopened.save(path)
    assert path.read_bytes() == before


def test_output_schema_problems_are_shown_where_they_are(qtbot: QtBot, tmp_path: Path) -> None:
    editor, _path = _editor(qtbot, tmp_path, TYPED_AGENT)
    output = _open_output(qtbot, editor)
    builder = output.builder
    assert builder.isVisible()  # a tool with an output schema opens on it

    # The tree marks the field whose bounds are the wrong way round, and says why.
    qtbot.waitUntil(lambda: builder.model.known_schema_problems() is not None, timeout=5000)
    index = builder.model.index_for_path(("properties", "cheapest"))
    tip = index.data(Qt.ItemDataRole.ToolTipRole)
    assert "minimum" in tip and "maximum" in tip

    # The JSON view lists every problem with its line and column.
    builder.side.setCurrentWidget(builder.json_view)
    view = builder.json_view
    qtbot.waitUntil(lambda: view.problems.isVisible(), timeout=5000)
    listed = [view.problems.item(row).text() for row in range(view.problems.count())]
    assert any(text.startswith("Line ") and "currency" in text for text in listed), listed
    assert any("minimum" in text for text in listed), listed
    assert "refuses this schema" in view.status.text()


def test_the_output_builder_speaks_of_output_fields(qtbot: QtBot, tmp_path: Path) -> None:
    editor, _path = _editor(qtbot, tmp_path, TYPED_AGENT)
    panel = _open_output(qtbot, editor).builder.panel

    assert panel.heading.text() == "No output field selected"
    assert panel.description_edit.placeholderText().startswith("What the model should answer")
    assert editor.parameters.panel.heading.text() == "No parameter selected"


def test_an_output_schema_that_is_not_an_object_opens_on_its_json_with_mcps_rule(
    qtbot: QtBot, tmp_path: Path
) -> None:
    text = TYPED_AGENT.replace(
        "      outputSchema:\n        type: object\n", "      outputSchema:\n        type: array\n"
    )
    editor, _path = _editor(qtbot, tmp_path, text)
    builder = _open_output(qtbot, editor).builder

    view = builder.json_view
    assert builder.side.currentWidget() is view
    qtbot.waitUntil(lambda: view.problems.isVisible(), timeout=5000)
    listed = [view.problems.item(row).text() for row in range(view.problems.count())]
    assert any("MCP requires a tool's outputSchema to be an object schema" in t for t in listed)
