"""Sample values a call would be refused for: flagged at their row, listed, shown in the preview."""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QLineEdit
from pytestqt.qtbot import QtBot

from app.document.agent_document import AgentDocument
from app.document.tool_ref import ToolRef
from app.tool_editor.highlighter import HighlightStyle, style_colours
from app.tool_editor.sample_values import SampleOverrides, SampleValuesModel
from app.tool_editor.template_pane import TemplatePane
from schema_types.agent import Agent

PARAMETERS: dict[str, Any] = {
    "type": "object",
    "properties": {
        "days": {"type": "integer", "minimum": 1, "maximum": 30, "examples": [4]},
        "city": {"type": "string", "examples": ["Lisbon"]},
        "tags": {"type": "array", "items": {"type": "string"}},
        "trip": {
            "type": "object",
            "properties": {"budget": {"type": "number"}, "cabin": {"type": "string"}},
            "required": ["cabin"],
        },
    },
    "required": ["days", "city"],
}


def make_pane(qtbot: QtBot, prompt: str) -> TemplatePane:
    agent = Agent.model_validate(
        {"metadata": {"tools": [{"name": "t", "parameters": PARAMETERS, "prompt": prompt}]}}
    )
    document = AgentDocument(agent)
    pane = TemplatePane(ToolRef.of(document, document.agent.metadata.tools[0]))
    qtbot.addWidget(pane)
    pane.resize(1000, 600)
    pane.show()
    return pane


def test_typing_text_for_an_integer_is_an_error_shown_at_the_value(qtbot: QtBot) -> None:
    pane = make_pane(qtbot, "Stay {days} days in {city}.")
    panel, samples = pane.sample_panel, pane.samples
    assert pane.preview.text() == "Stay 4 days in Lisbon."
    index = samples.index(samples.paths().index("days"), 1)
    panel.view.setCurrentIndex(index)
    panel.view.edit(index)
    (field,) = panel.view.viewport().findChildren(QLineEdit)
    qtbot.keyClicks(field, "abc")
    qtbot.keyClick(field, Qt.Key.Key_Return)
    qtbot.waitUntil(lambda: index.data() == "abc", timeout=10_000)

    error = style_colours(pane.palette())[HighlightStyle.UNKNOWN]
    assert index.data(Qt.ItemDataRole.ForegroundRole) == error
    background = index.data(Qt.ItemDataRole.BackgroundRole)
    assert background is not None and background.rgb() == error.rgb()
    label = panel.problem_label
    assert label.isVisible()
    assert "• days: abc is not a JSON integer (Expecting value at column 1)" in label.text()
    assert error.name() in label.styleSheet()
    # Not the old value as if nothing happened: what was typed, flagged, and a note that says so.
    assert pane.preview.text() == "Stay abc days in Lisbon."
    (flagged,) = [span for span in pane.preview.spans if span.problem]
    assert pane.preview.text()[flagged.start : flagged.end] == "abc"
    assert pane.preview_note.text().startswith("A call with these sample values is refused")


def test_values_the_schema_refuses_are_flagged_at_their_row(qtbot: QtBot) -> None:
    pane = make_pane(qtbot, "Stay {days} days.")
    panel = pane.sample_panel
    with qtbot.waitSignal(panel.checked, timeout=10_000):
        pane.samples.set_value("days", "99")
    assert pane.samples.problem("days") == "99 is greater than the maximum of 30"
    assert "• days: 99 is greater than the maximum of 30" in panel.problem_label.text()
    with qtbot.waitSignal(panel.checked, timeout=10_000):
        pane.samples.set_value("days", "1.5")
    assert pane.samples.problem("days") == "expected integer, got number 1.5"
    with qtbot.waitSignal(panel.checked, timeout=10_000):
        pane.samples.set_value("days", "")  # back to the sample
    assert pane.samples.problem("days") is None
    assert panel.problem_label.isHidden()
    assert pane.preview_note.styleSheet() == ""
    assert not any(span.problem for span in pane.preview.spans)


def test_schema_problems_go_to_the_row_of_their_path() -> None:
    model = SampleValuesModel()
    model.set_parameters(PARAMETERS)
    model.set_schema_problems(
        [
            ("", "arguments must be a JSON object"),
            ("tags[1]", "expected string, got integer 3"),
            ("trip.cabin", "required argument is missing"),
            ("trip", "too many properties"),
        ]
    )
    assert model.problems() == {
        "tags": "tags[1]: expected string, got integer 3",
        "trip.cabin": "required argument is missing",
    }
    assert model.problem_lines() == [
        "tags[1]: expected string, got integer 3",
        "trip.cabin: required argument is missing",
        "arguments must be a JSON object",
        "trip: too many properties",
    ]
    row = model.paths().index("trip.cabin")
    assert "A call is refused" in model.index(row, 0).data(Qt.ItemDataRole.ToolTipRole)
    model.set_value("trip.cabin", "economy")  # a new value: the schema's word on the old is gone
    assert model.problem("trip.cabin") is None


def test_a_parse_problem_comes_before_the_schemas_word_on_the_same_value() -> None:
    model = SampleValuesModel()
    model.set_parameters(PARAMETERS)
    model.set_value("days", "abc")
    assert model.arguments()["days"] == "abc"  # used as typed, so the preview shows it
    model.set_schema_problems([("days", 'expected integer, got string "abc"')])
    assert model.problem_lines() == [
        "days: abc is not a JSON integer (Expecting value at column 1)"
    ]


def test_overrides_are_what_the_person_changed_and_restore_them() -> None:
    model = SampleValuesModel()
    model.set_parameters(PARAMETERS)
    assert model.overrides().is_empty()
    model.set_value("city", "Porto")
    model.set_sent("trip.budget", False)
    overrides = model.overrides()
    assert overrides == SampleOverrides({"city": "Porto"}, frozenset({"trip.budget"}))
    assert SampleOverrides.from_json(overrides.to_json()) == overrides

    other = SampleValuesModel()
    other.set_parameters(PARAMETERS)
    changes: list[bool] = []
    other.values_changed.connect(lambda: changes.append(True))
    other.restore(overrides)
    assert other.overrides() == overrides and changes == [True]
    assert other.arguments() == model.arguments()
    other.restore(overrides)  # nothing new: no change signalled
    assert changes == [True]


def test_overrides_read_from_json_skip_what_they_cannot_use() -> None:
    assert SampleOverrides.from_json(None) is None
    assert SampleOverrides.from_json([1]) is None
    read = SampleOverrides.from_json({"typed": {"a": "1", "b": 2, 3: "x"}, "left_out": ["c", 4]})
    assert read == SampleOverrides({"a": "1"}, frozenset({"c"}))
