"""The live preview: the server's renderer, sample values, missing/unknown marks, updates."""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

from PySide6.QtCore import Qt
from PySide6.QtGui import QTextCharFormat
from PySide6.QtWidgets import QLineEdit
from pytestqt.qtbot import QtBot

from app.document.agent_document import AgentDocument
from app.document.tool_ref import ToolRef
from app.tool_editor.preview import TemplatePreview
from app.tool_editor.sample_values import SampleValuesModel
from app.tool_editor.template_pane import TemplatePane
from schema_types.agent import Agent, ToolDefinition
from schema_types.arguments import sample_arguments
from schema_types.template.engine import render, render_segments

PARAMETERS: dict[str, Any] = {
    "type": "object",
    "properties": {
        "destination": {"type": "string", "examples": ["Lisbon"]},
        "nights": {"type": "integer", "minimum": 1, "default": 3},
        "notes": {"type": "string", "description": "Anything else."},
        "trip": {
            "type": "object",
            "properties": {
                "budget": {"type": "number", "examples": [1200]},
                "cabin": {"type": "string", "enum": ["economy", "business"]},
            },
        },
    },
    "required": ["destination"],
}
PROMPT = "Book {nights} nights in {destination} ({trip.cabin}, max {trip.budget}). {notes}"


def make_pane(
    qtbot: QtBot, prompt: str = PROMPT
) -> tuple[TemplatePane, AgentDocument, ToolDefinition]:
    agent = Agent.model_validate(
        {
            "metadata": {
                "tools": [
                    {
                        "name": "book_trip",
                        "description": "Books a trip.",
                        "parameters": PARAMETERS,
                        "prompt": prompt,
                    }
                ]
            }
        }
    )
    document = AgentDocument(agent)
    tool = document.agent.metadata.tools[0]
    pane = TemplatePane(ToolRef.of(document, tool))
    qtbot.addWidget(pane)
    pane.resize(1000, 600)
    pane.show()
    return pane, document, tool


def format_at(preview: TemplatePreview, position: int) -> QTextCharFormat | None:
    block = preview.document().findBlock(position)
    inside = position - block.position()
    for found in block.layout().formats():
        if found.start <= inside < found.start + found.length:
            return QTextCharFormat(found.format)
    return None


def test_preview_fills_the_examples_defaults_and_enums(qtbot: QtBot) -> None:
    pane, _, _ = make_pane(qtbot)
    assert pane.preview.text() == "Book 3 nights in Lisbon (economy, max 1200). <notes>"
    assert pane.preview.toPlainText() == pane.preview.text()


def test_preview_is_what_the_server_would_send(qtbot: QtBot, example_path: Path) -> None:
    document = AgentDocument.load(example_path)
    for tool in document.agent.metadata.tools:
        pane = TemplatePane(ToolRef.of(document, tool))
        qtbot.addWidget(pane)
        arguments = sample_arguments(tool.parameters)
        served = render(
            tool.prompt,
            arguments,
            tool.parameters,
            tool_name=tool.name,
            tool_description=tool.description,
        )
        assert pane.preview.toPlainText() == served, tool.name
    first = document.agent.metadata.tools[0]
    assert pane.preview.text() != "" and first.prompt


def test_marks_values_missing_values_and_unknown_placeholders(qtbot: QtBot) -> None:
    pane, _, _ = make_pane(qtbot, "To {destination}: {notes} {nope}")
    assert pane.samples.set_sent("notes", False)
    preview = pane.preview
    assert preview.text() == "To Lisbon: {notes} {nope}"
    kinds = {preview.text()[s.start : s.end]: s.kind for s in preview.spans}
    assert kinds == {"Lisbon": "value", "{notes}": "missing", "{nope}": "error"}

    value = format_at(preview, preview.text().index("Lisbon"))
    missing = format_at(preview, preview.text().index("{notes}") + 1)
    error = format_at(preview, preview.text().index("{nope}") + 1)
    assert value is not None and value.background().style() != Qt.BrushStyle.NoBrush
    assert missing is not None and missing.fontItalic()
    assert missing.background().color() != value.background().color()
    assert error is not None
    assert error.underlineStyle() == QTextCharFormat.UnderlineStyle.WaveUnderline
    assert format_at(preview, 0) is None  # "To " is literal


def test_leaving_out_a_value_with_a_default_shows_the_default(qtbot: QtBot) -> None:
    pane, _, _ = make_pane(qtbot, "{nights} nights")
    pane.samples.set_value("nights", "9")
    assert pane.preview.text() == "9 nights"
    pane.samples.set_sent("nights", False)
    assert pane.preview.text() == "3 nights"  # the schema default, as a served call would


def test_typed_sample_values_override_and_reset_restores(qtbot: QtBot) -> None:
    pane, _, _ = make_pane(qtbot)
    samples = pane.samples
    assert samples.set_value("destination", "Porto")
    assert samples.set_value("trip.budget", "800.5")
    assert pane.preview.text() == "Book 3 nights in Porto (economy, max 800.5). <notes>"
    row = samples.paths().index("destination")
    assert samples.index(row, 1).data() == "Porto"
    assert samples.index(row, 1).data(Qt.ItemDataRole.ForegroundRole) is None  # typed: normal

    qtbot.mouseClick(pane.reset_samples, Qt.MouseButton.LeftButton)
    assert pane.preview.text() == "Book 3 nights in Lisbon (economy, max 1200). <notes>"
    assert samples.index(row, 1).data(Qt.ItemDataRole.ForegroundRole) is not None  # sample: grey


def test_a_typed_value_that_is_not_json_is_flagged_and_the_sample_used(qtbot: QtBot) -> None:
    pane, _, _ = make_pane(qtbot)
    samples = pane.samples
    samples.set_value("trip.budget", "lots")
    problem = samples.problem("trip.budget")
    assert problem is not None and problem.startswith("not a JSON number")
    assert "max 1200" in pane.preview.text()
    row = samples.paths().index("trip.budget")
    assert samples.index(row, 1).data() == "lots"  # what was typed stays visible
    assert samples.index(row, 1).data(Qt.ItemDataRole.ToolTipRole) == problem


def test_values_the_schema_would_refuse_are_named(qtbot: QtBot) -> None:
    pane, _, _ = make_pane(qtbot)
    pane.check_samples()
    assert pane.samples_problem.isHidden()
    with qtbot.waitSignal(pane.samples_checked, timeout=10_000):
        pane.samples.set_value("nights", "0")  # checked once the event loop is idle
    assert not pane.samples_problem.isHidden()
    assert "nights" in pane.samples_problem.text()
    assert "Book 0 nights" in pane.preview.text()  # shown anyway: it is a preview


def test_editing_in_the_table_updates_the_preview(qtbot: QtBot) -> None:
    pane, _, _ = make_pane(qtbot, "{destination}")
    view = pane.samples_view
    index = pane.samples.index(pane.samples.paths().index("destination"), 1)
    view.setCurrentIndex(index)
    view.edit(index)
    (editor,) = view.viewport().findChildren(QLineEdit)
    assert editor.selectedText() == "Lisbon"  # the sample, selected: typing replaces it
    qtbot.keyClicks(editor, "Faro")
    qtbot.keyClick(editor, Qt.Key.Key_Return)
    # The delegate commits on Enter through a queued call.
    qtbot.waitUntil(lambda: pane.preview.text() == "Faro", timeout=10_000)


def test_sample_rows_follow_the_schema_and_keep_what_was_typed(qtbot: QtBot) -> None:
    pane, document, tool = make_pane(qtbot)
    assert pane.samples.paths() == ["destination", "nights", "notes", "trip.budget", "trip.cabin"]
    pane.samples.set_value("destination", "Porto")
    properties = {**tool.parameters["properties"], "pets": {"type": "boolean"}}
    document.set_field(
        ("metadata", "tools", 0, "parameters"),
        {**tool.parameters, "properties": properties},
        text="Add pets",
    )
    assert pane.samples.paths()[-1] == "pets"
    assert "Porto" in pane.preview.text()


def test_the_preview_follows_prompt_edits_undo_and_redo(qtbot: QtBot) -> None:
    pane, document, _ = make_pane(qtbot, "Hi {destination}")
    editor = pane.editor
    editor.moveCursor(editor.textCursor().MoveOperation.End)
    qtbot.keyClicks(editor, " for {nights} nights")
    assert pane.preview.text() == "Hi Lisbon for 3 nights"
    document.undo_stack.undo()
    assert pane.preview.text() == "Hi Lisbon"
    document.undo_stack.redo()
    assert pane.preview.text() == "Hi Lisbon for 3 nights"


def test_tool_fields_follow_the_tools_name(qtbot: QtBot) -> None:
    pane, document, _ = make_pane(qtbot, "I am {tool.name}: {tool.description}")
    assert pane.preview.text() == "I am book_trip: Books a trip."
    document.set_field(("metadata", "tools", 0, "name"), "reserve", text="Rename")
    assert pane.preview.text() == "I am reserve: Books a trip."
    document.undo_stack.undo()
    assert pane.preview.text() == "I am book_trip: Books a trip."


def test_incremental_preview_updates_match_a_fresh_rendering(qtbot: QtBot) -> None:
    """Many random edits: the view's text and marks always equal a from-scratch rendering."""
    preview = TemplatePreview()
    qtbot.addWidget(preview)
    arguments = {"destination": "Lisbon", "trip": {"budget": 12}}
    rng = random.Random(7)
    pieces = ["{destination}", "{nights}", "{nope}", "{notes}", "\n", "text ", "{{", "é🚀", "{x"]
    template = ""
    for _ in range(150):
        position = rng.randint(0, len(template))
        if template and rng.random() < 0.3:
            template = template[:position] + template[position + rng.randint(1, 6) :]
        else:
            template = template[:position] + rng.choice(pieces) + template[position:]
        segments = render_segments(
            template,
            arguments,
            PARAMETERS,
            tool_name="t",
            tool_description="d",
            keep_missing=True,
        )
        preview.show_segments(segments)
        expected = "".join(segment.text for segment in segments)
        assert preview.text() == expected
        assert preview.toPlainText() == expected.replace("\u00a0", " ")
    fresh = TemplatePreview()
    qtbot.addWidget(fresh)
    fresh.show_segments(segments)
    assert fresh.spans == preview.spans
    document, other = preview.document(), fresh.document()
    for number in range(document.blockCount()):
        mine = [(f.start, f.length) for f in document.findBlockByNumber(number).layout().formats()]
        theirs = [(f.start, f.length) for f in other.findBlockByNumber(number).layout().formats()]
        assert mine == theirs


def test_sample_values_model_lists_leaves_and_builds_arguments() -> None:
    model = SampleValuesModel()
    assert model.set_parameters(PARAMETERS)
    assert not model.set_parameters(dict(PARAMETERS))  # same rows: no reset
    assert model.arguments() == sample_arguments(PARAMETERS)
    model.set_value("trip.cabin", "business")
    model.set_sent("trip.budget", False)
    assert model.arguments()["trip"] == {"cabin": "business"}
    assert model.rowCount() == 5 and model.columnCount() == 2
    assert model.headerData(1, Qt.Orientation.Horizontal) == "Sample value"
    assert model.index(0, 0).data(Qt.ItemDataRole.CheckStateRole) == Qt.CheckState.Checked
    model.set_value("trip.cabin", "")  # cleared: back to the sample
    assert model.arguments()["trip"] == {"cabin": "economy"}
