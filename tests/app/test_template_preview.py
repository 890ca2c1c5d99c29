"""The live preview: what a call sends, where each part came from, sample values, updates."""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import QEvent, QPoint, Qt
from PySide6.QtGui import QColor, QHelpEvent, QPalette, QTextCharFormat
from PySide6.QtWidgets import QApplication, QLineEdit, QToolTip
from pytestqt.qtbot import QtBot

from app.document.agent_document import AgentDocument
from app.document.tool_ref import ToolRef
from app.tool_editor.highlighter import HighlightStyle, style_colours
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


def hover(preview: TemplatePreview, text: str) -> str:
    """The tooltip shown when the mouse rests on the middle of ``text`` in the preview."""
    position = preview.text().index(text) + len(text) // 2
    cursor = preview.textCursor()
    cursor.setPosition(position)
    rect = preview.cursorRect(cursor)
    point = QPoint(rect.x() + 2, rect.center().y())
    QToolTip.hideText()
    event = QHelpEvent(QEvent.Type.ToolTip, point, preview.viewport().mapToGlobal(point))
    QApplication.sendEvent(preview.viewport(), event)
    return QToolTip.text() if QToolTip.isVisible() else ""


def test_a_left_out_value_shows_as_sent_and_placeholders_on_request(qtbot: QtBot) -> None:
    pane, _, _ = make_pane(qtbot, "To {destination}: {notes} {nope}")
    assert pane.samples.set_sent("notes", False)
    preview = pane.preview
    assert preview.text() == "To Lisbon:  {nope}"  # what a call sends: nothing for notes
    assert not preview.show_placeholders()

    with qtbot.waitSignal(preview.placeholders_toggled, timeout=10_000) as toggled:
        qtbot.mouseClick(pane.placeholders_button, Qt.MouseButton.LeftButton)
    assert toggled.args == [True] and preview.show_placeholders()
    assert pane.placeholders_button.isChecked()
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
    assert "no value, no default and no fallback" in hover(preview, "{notes}")

    qtbot.mouseClick(pane.placeholders_button, Qt.MouseButton.LeftButton)
    assert preview.text() == "To Lisbon:  {nope}"


def test_sections_fallbacks_and_defaults_are_marked_and_explained(qtbot: QtBot) -> None:
    prompt = (
        "Book {nights} nights{?notes} (notes: {notes}){/notes}"
        " for {trip.cabin|any cabin}{!destination}, anywhere{/destination}."
    )
    pane, _, tool = make_pane(qtbot, prompt)
    samples, preview = pane.samples, pane.preview
    samples.set_sent("nights", False)
    samples.set_sent("trip.cabin", False)
    samples.set_value("notes", "quiet room")
    expected = "Book 3 nights (notes: quiet room) for any cabin."
    assert preview.text() == expected
    served = render(
        prompt, samples.arguments(), PARAMETERS, tool_name=tool.name, tool_description=""
    )
    assert served == expected  # exactly what a call with these values sends
    marks = {preview.text()[s.start : s.end]: (s.kind, s.section) for s in preview.spans}
    assert marks == {
        "3": ("default", False),
        " (notes: ": ("literal", True),
        "quiet room": ("value", True),
        ")": ("literal", True),
        "any cabin": ("fallback", False),
    }
    assert "from the schema default" in hover(preview, "3")
    assert "fallback text" in hover(preview, "any cabin")
    assert hover(preview, "(notes:") == "Inside {?notes}…{/notes}"
    assert hover(preview, "quiet room") == "{notes}: the value\nInside {?notes}…{/notes}"

    default = format_at(preview, expected.index("3"))
    fallback = format_at(preview, expected.index("any cabin"))
    section = format_at(preview, expected.index("(notes:"))
    assert default is not None and fallback is not None and section is not None
    dotted = QTextCharFormat.UnderlineStyle.DotLine
    assert default.underlineStyle() == dotted and fallback.underlineStyle() == dotted
    assert fallback.fontItalic()
    assert section.background().style() != Qt.BrushStyle.NoBrush
    assert section.background().color().alpha() < 60  # a faint tint: the text stays readable
    assert format_at(preview, expected.index(" for")) is None

    samples.set_sent("destination", False)
    assert preview.text().endswith("for any cabin, anywhere.")


def test_marks_follow_a_dark_palette(qtbot: QtBot) -> None:
    pane, _, _ = make_pane(qtbot, "{?notes}Notes: {notes}{/notes}")
    preview = pane.preview
    light = format_at(preview, 0)
    assert light is not None
    dark = QPalette()
    dark.setColor(QPalette.ColorRole.Base, QColor("#1e1e1e"))
    dark.setColor(QPalette.ColorRole.Text, QColor("#e0e0e0"))
    preview.setPalette(dark)
    on_dark = format_at(preview, 0)
    assert on_dark is not None
    assert on_dark.background().color() != light.background().color()
    assert on_dark.background().color().alpha() < 60


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

    qtbot.mouseClick(pane.sample_panel.reset_button, Qt.MouseButton.LeftButton)
    assert pane.preview.text() == "Book 3 nights in Lisbon (economy, max 1200). <notes>"
    assert samples.index(row, 1).data(Qt.ItemDataRole.ForegroundRole) is not None  # sample: grey


def test_a_typed_value_that_is_not_json_is_an_error_at_its_row(qtbot: QtBot) -> None:
    pane, _, _ = make_pane(qtbot)
    samples, preview = pane.samples, pane.preview
    samples.set_value("trip.budget", "lots")
    problem = samples.problem("trip.budget")
    assert problem == "lots is not a JSON number (Expecting value at column 1)"
    row = samples.paths().index("trip.budget")
    value = samples.index(row, 1)
    assert value.data() == "lots"  # what was typed stays visible
    assert (
        value.data(Qt.ItemDataRole.ForegroundRole)
        == style_colours(pane.palette())[HighlightStyle.UNKNOWN]
    )
    assert value.data(Qt.ItemDataRole.BackgroundRole) is not None
    assert problem in value.data(Qt.ItemDataRole.ToolTipRole)
    assert not pane.sample_panel.problem_label.isHidden()  # said at once, under the table
    assert "trip.budget: lots is not a JSON number" in pane.sample_panel.problem_label.text()
    assert pane.preview_note.text().startswith("A call with these sample values is refused")

    # The preview does not pretend the sample is used: it shows what was typed, flagged.
    assert "max 1200" not in preview.text() and "max lots" in preview.text()
    (flagged,) = [s for s in preview.spans if s.problem]
    assert preview.text()[flagged.start : flagged.end] == "lots"
    assert "refused: trip.budget: lots is not a JSON number" in hover(preview, "lots")
    mark = format_at(preview, flagged.start)
    assert mark is not None
    assert mark.underlineStyle() == QTextCharFormat.UnderlineStyle.WaveUnderline

    samples.set_value("trip.budget", "950")
    assert samples.problem("trip.budget") is None
    assert "max 950" in preview.text() and not any(s.problem for s in preview.spans)
    assert pane.sample_panel.problem_label.isHidden()


def test_a_whole_object_placeholder_is_flagged_for_a_bad_leaf(qtbot: QtBot) -> None:
    pane, _, _ = make_pane(qtbot, "Trip: {trip}")
    pane.samples.set_value("trip.budget", "{oops")
    (flagged,) = [s for s in pane.preview.spans if s.problem]
    assert flagged.problem.startswith("trip.budget: {oops is not a JSON number")


@pytest.mark.parametrize(
    ("path", "typed", "message"),
    [
        ("nights", "1.5", "nights: expected integer, got number 1.5"),
        ("nights", "0", "nights: 0 is less than the minimum of 1"),
        ("trip.cabin", "first", 'trip.cabin: "first" is not one of'),
    ],
)
def test_values_the_schema_would_refuse_are_named_at_their_row(
    qtbot: QtBot, path: str, typed: str, message: str
) -> None:
    pane, _, _ = make_pane(qtbot)
    pane.sample_panel.check()
    assert pane.sample_panel.problem_label.isHidden()
    with qtbot.waitSignal(pane.sample_panel.checked, timeout=10_000):
        pane.samples.set_value(path, typed)  # checked once the event loop is idle
    assert not pane.sample_panel.problem_label.isHidden()
    assert message in pane.sample_panel.problem_label.text()
    problem = pane.samples.problem(path)
    assert problem is not None and f"{path}: {problem}".startswith(message)
    row = pane.samples.paths().index(path)
    assert pane.samples.index(row, 1).data(Qt.ItemDataRole.BackgroundRole) is not None
    assert typed in pane.preview.text()  # shown where it goes, and flagged
    assert any(s.problem for s in pane.preview.spans)


def test_a_required_value_left_out_is_named_at_its_row(qtbot: QtBot) -> None:
    pane, _, _ = make_pane(qtbot, "To {destination|anywhere}")
    with qtbot.waitSignal(pane.sample_panel.checked, timeout=10_000):
        pane.samples.set_sent("destination", False)
    assert pane.samples.problem("destination") == "required argument is missing"
    assert "destination: required argument is missing" in pane.sample_panel.problem_label.text()
    assert pane.preview.text() == "To anywhere"


def test_editing_in_the_table_updates_the_preview(qtbot: QtBot) -> None:
    pane, _, _ = make_pane(qtbot, "{destination}")
    view = pane.sample_panel.view
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
    pieces = [
        "{destination}",
        "{nights}",
        "{nope}",
        "{notes}",
        "{notes|none}",
        "{?notes}",
        "{!destination}",
        "{/notes}",
        "{/destination}",
        "\n",
        "text ",
        "{{",
        "é🚀",
        "{x",
    ]
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
            keep_missing=rng.random() < 0.5,
        )
        preview.show_segments(segments, template=template)
        expected = "".join(segment.text for segment in segments)
        assert preview.text() == expected
        assert preview.toPlainText() == expected.replace("\u00a0", " ")
    fresh = TemplatePreview()
    qtbot.addWidget(fresh)
    fresh.show_segments(segments, template=template)
    assert fresh.spans == preview.spans
    document, other = preview.document(), fresh.document()
    for number in range(document.blockCount()):
        mine = document.findBlockByNumber(number).layout().formats()
        theirs = other.findBlockByNumber(number).layout().formats()
        assert [(f.start, f.length, QTextCharFormat(f.format)) for f in mine] == [
            (f.start, f.length, QTextCharFormat(f.format)) for f in theirs
        ]


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
