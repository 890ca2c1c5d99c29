"""The Test Tool dialog: form per schema, validation at the field, preview, memory, Run, Copy."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from PySide6.QtCore import Qt
from PySide6.QtGui import QFontDatabase, QGuiApplication
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QDialog,
    QGroupBox,
    QInputDialog,
    QLabel,
    QLineEdit,
    QPlainTextEdit,
    QScrollArea,
    QSplitter,
    QWidget,
)
from pytestqt.qtbot import QtBot

from app.document.agent_document import AgentDocument
from app.settings_store import SettingsStore
from app.test_run import TestRequest, TestToolDialog
from app.test_run.fields import FieldEditor
from app.test_run.form import ObjectEditor
from app.test_run.lists import ArrayEditor
from app.test_run.memory import SampleMemory
from app.test_run.pickers import DateEditor, DateTimeEditor, IntegerEditor, NumberEditor, StepBox
from app.tool_editor.sample_values import SampleOverrides
from schema_types.agent import Agent, ToolDefinition
from schema_types.arguments import validate_arguments
from schema_types.template.engine import render

VALID_FLIGHT_SEARCH: dict[str, Any] = {
    "origin": "LHR",
    "destination": "LIS",
    "departure_date": "2026-06-01",
    "passengers": [{"name": "Ada Lovelace", "age": 36}],
}

ODD_PARAMETERS: dict[str, Any] = {
    "type": "object",
    "properties": {
        "either": {"anyOf": [{"type": "string"}, {"type": "integer"}]},
        "grid": {"type": "array", "items": {"type": "array", "items": {"type": "integer"}}},
        "free": {"type": "object", "description": "Any keys."},
        "maybe": {"type": ["string", "null"]},
        "linked": {"$ref": "#/$defs/thing"},
        "at": {"type": "string", "format": "date-time"},
        "odd": {"type": "integer", "exclusiveMinimum": 0, "exclusiveMaximum": 10},
    },
    "required": ["free"],
    "$defs": {"thing": {"type": "string"}},
}


def settings(tmp_path: Path) -> SettingsStore:
    return SettingsStore(tmp_path / "settings")


def travel_desk(example_path: Path) -> AgentDocument:
    return AgentDocument.load(example_path)


def tool_named(document: AgentDocument, name: str) -> ToolDefinition:
    return next(tool for tool in document.agent.metadata.tools if tool.name == name)


def open_dialog(
    qtbot: QtBot,
    document: AgentDocument,
    tool: ToolDefinition,
    store: SettingsStore,
    *,
    reset: bool = True,
) -> TestToolDialog:
    """The dialog, shown and active; ``reset``: Reset clicked, so the form holds the schema's
    defaults only (it starts from the samples or the last run)."""
    dialog = TestToolDialog(document, tool, store)
    qtbot.addWidget(dialog)
    with qtbot.waitActive(dialog, timeout=10_000):
        dialog.show()
        dialog.activateWindow()  # Ctrl+Enter is a window shortcut: the window must be active
    if reset:
        qtbot.mouseClick(dialog.defaults_button, Qt.MouseButton.LeftButton)
    return dialog


def search_flights_dialog(qtbot: QtBot, example_path: Path, tmp_path: Path) -> TestToolDialog:
    """The dialog for the travel desk's ``search_flights``, with fresh settings."""
    document = travel_desk(example_path)
    return open_dialog(qtbot, document, tool_named(document, "search_flights"), settings(tmp_path))


def odd_tool_document() -> tuple[AgentDocument, ToolDefinition]:
    agent = Agent.model_validate(
        {
            "metadata": {
                "tools": [
                    {
                        "name": "odd",
                        "parameters": ODD_PARAMETERS,
                        "prompt": "Either {either}, free {free}, at {at}.",
                    }
                ]
            }
        }
    )
    document = AgentDocument(agent)
    return document, document.agent.metadata.tools[0]


def label_for(dialog: TestToolDialog, path: str) -> QLabel:
    field = dialog.form.field(path)
    labels = [label for label in dialog.findChildren(QLabel) if label.buddy() is field]
    assert len(labels) == 1, path
    return labels[0]


def problem_at(dialog: TestToolDialog, path: str) -> str:
    return dialog.form.editor(path).problem()


def test_every_parameter_gets_an_input_of_its_kind(
    qtbot: QtBot, example_path: Path, tmp_path: Path
) -> None:
    dialog = search_flights_dialog(qtbot, example_path, tmp_path)
    form = dialog.form
    assert isinstance(form.field("origin"), QLineEdit)
    assert isinstance(form.editor("departure_date"), DateEditor)
    assert isinstance(form.field("departure_date"), StepBox)
    assert isinstance(form.field("cabin"), QComboBox)
    assert isinstance(form.field("flexible_dates"), QCheckBox)
    assert isinstance(form.editor("passengers"), ArrayEditor)
    assert isinstance(form.field("passengers"), QGroupBox)
    assert isinstance(form.field("passengers[0]"), QGroupBox)  # each item its own sub-form
    assert isinstance(form.field("passengers[0].name"), QLineEdit)

    age = form.editor("passengers[0].age")
    assert isinstance(age, IntegerEditor) and isinstance(age.input, StepBox)
    assert age.low == 0 and age.high == 120  # where the arrow keys stop
    assert age.input.text() == "" and age.input.lineEdit().placeholderText() == "not set"
    cabin = form.field("cabin")
    assert isinstance(cabin, QComboBox)
    choices = [cabin.itemText(i) for i in range(1, cabin.count())]
    assert choices == ["economy", "premium_economy", "business", "first"]

    price = form.editor("max_price")
    assert isinstance(price, NumberEditor) and isinstance(price.input, StepBox)
    assert "max_price" not in dialog.arguments()
    qtbot.keyClicks(price.input, "0")  # exclusiveMinimum 0: zero is sent, and refused
    assert dialog.arguments()["max_price"] == 0
    assert problem_at(dialog, "max_price") == "0 must be greater than 0"
    qtbot.keyClicks(price.input, ".05")
    assert dialog.form.value()["max_price"] == 0.05
    assert problem_at(dialog, "max_price") == ""


def test_nested_objects_are_group_boxes_and_optional_ones_can_be_left_out(
    qtbot: QtBot, example_path: Path, tmp_path: Path
) -> None:
    document = travel_desk(example_path)
    dialog = open_dialog(qtbot, document, tool_named(document, "plan_trip"), settings(tmp_path))
    trip, budget = dialog.form.editor("trip"), dialog.form.editor("trip.budget")
    assert isinstance(trip, ObjectEditor) and isinstance(trip.input, QGroupBox)
    assert trip.status is None  # required: always sent
    assert isinstance(budget, ObjectEditor) and isinstance(budget.input, QGroupBox)
    assert budget.status is not None and budget.status.isVisible()
    nights = dialog.form.field("trip.nights")
    assert isinstance(nights, StepBox) and nights.text() == "3"  # a required object's defaults
    assert dialog.arguments()["trip"] == {"nights": 3}

    currency = dialog.form.field("trip.budget.currency")
    assert isinstance(currency, QComboBox) and currency.currentText() == "(not set)"
    currency.setCurrentIndex(currency.findText("EUR"))
    assert dialog.arguments()["trip"]["budget"] == {"currency": "EUR"}
    assert problem_at(dialog, "trip.budget.amount") == "required argument is missing"
    assert not budget.status.isVisible()


def test_schemas_the_form_cannot_show_are_typed_as_json(qtbot: QtBot, tmp_path: Path) -> None:
    document, tool = odd_tool_document()
    dialog = open_dialog(qtbot, document, tool, settings(tmp_path))
    for path in ("either", "grid", "free", "maybe", "linked"):
        assert isinstance(dialog.form.field(path), QPlainTextEdit), path
    assert isinstance(dialog.form.editor("at"), DateTimeEditor)
    odd = dialog.form.editor("odd")
    assert isinstance(odd, IntegerEditor) and odd.low == 1 and odd.high == 9

    free = dialog.form.field("free")
    assert isinstance(free, QPlainTextEdit)
    free.setPlainText('{"a": ')
    assert problem_at(dialog, "free").startswith("not valid JSON")
    assert not dialog.run_button.isEnabled()
    free.setPlainText('{"a": 1}')
    grid = dialog.form.field("grid")
    assert isinstance(grid, QPlainTextEdit)
    grid.setPlainText("[[1, 2], [3]]")
    dialog.form.editor("at").set_value("2026-01-31T09:00:00+02:00")
    assert dialog.arguments() == {
        "grid": [[1, 2], [3]],
        "free": {"a": 1},
        "at": "2026-01-31T09:00:00+02:00",
    }
    assert dialog.run_button.isEnabled()
    assert dialog.prompt() == 'Either , free {"a": 1}, at 2026-01-31T09:00:00+02:00.'


def test_required_fields_are_marked(qtbot: QtBot, example_path: Path, tmp_path: Path) -> None:
    dialog = search_flights_dialog(qtbot, example_path, tmp_path)
    origin = label_for(dialog, "origin")
    assert origin.text() == "origin *" and origin.font().bold()
    cabin = label_for(dialog, "cabin")
    assert cabin.text() == "cabin" and not cabin.font().bold()
    assert "IATA code" in origin.toolTip()
    passengers = dialog.form.field("passengers")
    assert isinstance(passengers, QGroupBox) and passengers.title() == "passengers *"
    name = dialog.form.field("passengers[0].name")
    assert isinstance(name, QLineEdit) and name.placeholderText() == "e.g. Ada Lovelace"


def test_defaults_are_prefilled_and_empty_optional_fields_are_absent(
    qtbot: QtBot, example_path: Path, tmp_path: Path
) -> None:
    dialog = search_flights_dialog(qtbot, example_path, tmp_path)
    cabin = dialog.form.field("cabin")
    assert isinstance(cabin, QComboBox) and cabin.currentText() == "economy"
    assert dialog.arguments() == {
        "passengers": [{"seat": "any"}],
        "cabin": "economy",
        "flexible_dates": False,
    }
    origin = dialog.form.field("origin")
    assert isinstance(origin, QLineEdit)
    qtbot.keyClicks(origin, "X")
    assert dialog.arguments()["origin"] == "X"
    origin.clear()
    assert "origin" not in dialog.arguments()  # absent, not ""
    cabin.setCurrentIndex(0)  # "(not set)": the template takes the default
    assert "cabin" not in dialog.arguments()
    assert "Cabin: economy;" in dialog.preview.text()


def test_missing_required_arguments_are_named_under_their_fields(
    qtbot: QtBot, example_path: Path, tmp_path: Path
) -> None:
    dialog = search_flights_dialog(qtbot, example_path, tmp_path)
    assert problem_at(dialog, "origin") == "required argument is missing"
    assert problem_at(dialog, "passengers[0].age") == "required argument is missing"
    assert problem_at(dialog, "cabin") == ""
    label = dialog.form.editor("origin").problem_label
    assert label.isVisible() and label.text() == "required argument is missing"
    assert "origin: required argument is missing" in dialog.problems()
    assert not dialog.run_button.isEnabled()


def test_a_bad_value_is_named_under_its_field_and_blocks_run(
    qtbot: QtBot, example_path: Path, tmp_path: Path
) -> None:
    dialog = search_flights_dialog(qtbot, example_path, tmp_path)
    dialog.set_arguments(VALID_FLIGHT_SEARCH)
    assert dialog.problems() == [] and dialog.run_button.isEnabled()
    origin = dialog.form.field("origin")
    assert isinstance(origin, QLineEdit)
    origin.clear()
    qtbot.keyClicks(origin, "lhr")
    assert problem_at(dialog, "origin") == '"lhr" does not match the pattern "^[A-Z]{3}$"'
    assert dialog.problems() == ['origin: "lhr" does not match the pattern "^[A-Z]{3}$"']
    assert not dialog.run_button.isEnabled()
    origin.clear()
    qtbot.keyClicks(origin, "LGW")
    assert problem_at(dialog, "origin") == ""
    assert not dialog.form.editor("origin").problem_label.isVisible()
    assert dialog.run_button.isEnabled()


def test_list_items_can_be_added_moved_and_removed(
    qtbot: QtBot, example_path: Path, tmp_path: Path
) -> None:
    dialog = search_flights_dialog(qtbot, example_path, tmp_path)
    dialog.set_arguments(VALID_FLIGHT_SEARCH)
    passengers = dialog.form.editor("passengers")
    assert isinstance(passengers, ArrayEditor)
    qtbot.mouseClick(passengers.add_button, Qt.MouseButton.LeftButton)
    assert dialog.focusWidget() is dialog.form.field("passengers[1].name")
    qtbot.keyClicks(dialog.form.field("passengers[1].name"), "Grace")
    # The second passenger has no age: the problem sits under that item's age.
    assert problem_at(dialog, "passengers[1].age") == "required argument is missing"
    assert problem_at(dialog, "passengers[0].age") == ""

    qtbot.mouseClick(passengers.rows[1].up, Qt.MouseButton.LeftButton)
    names = [p.get("name") for p in dialog.arguments()["passengers"]]
    assert names == ["Grace", "Ada Lovelace"]
    assert problem_at(dialog, "passengers[0].age") == "required argument is missing"
    first = dialog.form.field("passengers[0]")
    assert isinstance(first, QGroupBox) and first.title() == "Item 1"

    qtbot.mouseClick(passengers.rows[0].remove, Qt.MouseButton.LeftButton)
    assert dialog.arguments()["passengers"] == [{"name": "Ada Lovelace", "age": 36}]
    qtbot.mouseClick(passengers.rows[0].remove, Qt.MouseButton.LeftButton)
    assert problem_at(dialog, "passengers") == "expected at least 1 item, got 0"


def test_typing_into_a_number_that_is_not_set_replaces_the_words(
    qtbot: QtBot, example_path: Path, tmp_path: Path
) -> None:
    dialog = search_flights_dialog(qtbot, example_path, tmp_path)
    age = dialog.form.field("passengers[0].age")
    assert isinstance(age, StepBox) and age.text() == ""
    assert age.lineEdit().placeholderText() == "not set"
    qtbot.keyClicks(age, "42")
    assert age.text() == "42"
    assert dialog.arguments()["passengers"][0]["age"] == 42
    editor: FieldEditor = dialog.form.editor("passengers[0].age")
    assert editor.value() == 42


def test_preview_follows_each_keystroke_like_the_server(
    qtbot: QtBot, example_path: Path, tmp_path: Path
) -> None:
    document = travel_desk(example_path)
    tool = tool_named(document, "search_flights")
    dialog = open_dialog(qtbot, document, tool, settings(tmp_path))
    everything = {**VALID_FLIGHT_SEARCH, "return_date": "2026-06-08", "max_price": 900}
    dialog.set_arguments({**everything, "origin": ""})
    origin = dialog.form.field("origin")
    assert isinstance(origin, QLineEdit)
    assert dialog.preview.text().startswith("Find flights from  to LIS")  # as a call sends it
    typed = ""
    for key in "LHR":
        qtbot.keyClicks(origin, key)
        typed += key
        assert dialog.preview.text().startswith(f"Find flights from {typed} to LIS")
    served = render(
        tool.prompt,
        validate_arguments(tool.parameters, dialog.arguments()),  # defaults applied
        tool.parameters,
        tool_name=tool.name,
        tool_description=tool.description,
    )
    assert dialog.preview.toPlainText() == served == dialog.prompt()
    assert dialog.preview.isReadOnly()
    fixed = QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont)
    assert dialog.preview.font().family() == fixed.family()


def test_the_preview_shows_what_is_sent_and_placeholders_when_asked(
    qtbot: QtBot, example_path: Path, tmp_path: Path
) -> None:
    dialog = search_flights_dialog(qtbot, example_path, tmp_path)
    dialog.set_arguments({**VALID_FLIGHT_SEARCH, "destination": ""})
    text = dialog.preview.text()
    assert text.startswith("Find flights from LHR to  leaving on 2026-06-01.")
    assert text == dialog.prompt()  # exactly what a call sends
    assert "One way: no return flight." in text  # the section for a missing return date

    assert dialog.placeholders_button.isVisible()
    assert dialog.placeholders_button.defaultAction() is dialog.preview.placeholders_action
    qtbot.mouseClick(dialog.placeholders_button, Qt.MouseButton.LeftButton)
    assert dialog.preview.show_placeholders()
    text = dialog.preview.text()
    assert text.startswith("Find flights from LHR to {destination} leaving on 2026-06-01.")
    kinds = {text[s.start : s.end]: s.kind for s in dialog.preview.spans}
    assert kinds["{destination}"] == "missing"
    assert dialog.prompt().startswith("Find flights from LHR to  leaving")  # sent: unchanged

    qtbot.keyClicks(dialog.form.field("destination"), "OPO")
    assert dialog.preview.text().startswith("Find flights from LHR to OPO leaving")
    qtbot.mouseClick(dialog.placeholders_button, Qt.MouseButton.LeftButton)
    assert not dialog.preview.show_placeholders()
    assert dialog.preview.text() == dialog.prompt()


def test_values_last_used_are_remembered_per_tool(
    qtbot: QtBot, example_path: Path, tmp_path: Path
) -> None:
    document = travel_desk(example_path)
    store = settings(tmp_path)
    tool = tool_named(document, "search_flights")
    first = open_dialog(qtbot, document, tool, store)
    first.set_arguments({**VALID_FLIGHT_SEARCH, "cabin": "business"})
    used = first.arguments()
    with qtbot.waitSignal(first.run_requested, timeout=10_000):
        qtbot.mouseClick(first.run_button, Qt.MouseButton.LeftButton)

    again = open_dialog(qtbot, travel_desk(example_path), tool, store, reset=False)
    assert again.arguments() == used
    assert again.origin.text() == "Started from the last run's arguments."
    cabin = again.form.field("cabin")
    assert isinstance(cabin, QComboBox) and cabin.currentText() == "business"
    other = open_dialog(qtbot, document, tool_named(document, "local_time"), store, reset=False)
    assert other.arguments() == {"city": "Tokyo", "timezone": "Asia/Tokyo"}  # its samples
    assert (store.home / "test-arguments.ini").exists()


def test_copy_as_mcp_call_puts_the_tools_call_request_on_the_clipboard(
    qtbot: QtBot, example_path: Path, tmp_path: Path
) -> None:
    dialog = search_flights_dialog(qtbot, example_path, tmp_path)
    dialog.set_arguments(VALID_FLIGHT_SEARCH)
    qtbot.mouseClick(dialog.copy_button, Qt.MouseButton.LeftButton)
    text = QGuiApplication.clipboard().text()
    assert json.loads(text) == {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "tools/call",
        "params": {"name": "search_flights", "arguments": dialog.arguments()},
    }
    assert text.startswith('{\n  "jsonrpc": "2.0",')  # pretty-printed
    assert dialog.isVisible()  # copying does not close the dialog


def test_run_emits_the_request_and_accepts(
    qtbot: QtBot, example_path: Path, tmp_path: Path
) -> None:
    document = travel_desk(example_path)
    tool = tool_named(document, "search_flights")
    dialog = open_dialog(qtbot, document, tool, settings(tmp_path))
    dialog.set_arguments(VALID_FLIGHT_SEARCH)
    with qtbot.waitSignal(dialog.run_requested, timeout=10_000) as blocker:
        qtbot.keyClick(
            dialog.form.field("origin"), Qt.Key.Key_Return, Qt.KeyboardModifier.ControlModifier
        )
    (request,) = blocker.args
    assert isinstance(request, TestRequest)
    assert request.tool_name == "search_flights"
    assert request.arguments == VALID_FLIGHT_SEARCH  # as a caller sends them: no defaults
    assert request.prompt == dialog.prompt()
    assert "Cabin: economy; flexible dates: false." in request.prompt  # defaults applied
    assert 'Passengers: [{"name": "Ada Lovelace", "age": 36, "seat": "any"}]' in request.prompt
    assert dialog.result() == QDialog.DialogCode.Accepted


def test_run_does_nothing_while_invalid(qtbot: QtBot, example_path: Path, tmp_path: Path) -> None:
    dialog = search_flights_dialog(qtbot, example_path, tmp_path)
    requests: list[object] = []
    dialog.run_requested.connect(requests.append)
    qtbot.keyClick(
        dialog.form.field("origin"), Qt.Key.Key_Return, Qt.KeyboardModifier.ControlModifier
    )
    assert requests == [] and dialog.isVisible()


def test_dialog_layout_title_and_example_filling(
    qtbot: QtBot, example_path: Path, tmp_path: Path
) -> None:
    document = travel_desk(example_path)
    tool = tool_named(document, "book_flight")
    dialog = open_dialog(qtbot, document, tool, settings(tmp_path), reset=False)
    assert dialog.windowTitle() == "Test book_flight"
    # Roomy (1000x640), but never larger than the screen (the offscreen one is 800 wide).
    room = dialog.screen().availableGeometry()
    assert dialog.width() >= min(900, room.width() - 10) and dialog.height() >= 600
    assert room.contains(dialog.frameGeometry())
    splitter = dialog.findChild(QSplitter)
    assert splitter is not None and splitter.orientation() == Qt.Orientation.Horizontal
    left, right = splitter.widget(0), splitter.widget(1)
    assert left is not None and right is not None
    scroll = left.findChild(QScrollArea)
    assert isinstance(scroll, QScrollArea) and scroll.widget() is dialog.form
    assert right.isAncestorOf(dialog.preview)
    assert dialog.run_button.isDefault()

    qtbot.mouseClick(dialog.examples_button, Qt.MouseButton.LeftButton)
    assert dialog.problems() == []
    assert dialog.arguments()["traveller"]["email"] == "grace@example.com"
    assert "Book flight TP1351 on 2026-06-01 for Grace Hopper" in dialog.preview.text()
    assert dialog.arguments()["payment"] == {"method": "company_card", "cost_center": "CC-4711"}
    qtbot.mouseClick(dialog.defaults_button, Qt.MouseButton.LeftButton)
    assert dialog.arguments() == {"traveller": {}, "flight": {}}


def test_every_input_has_a_label_or_a_title(
    qtbot: QtBot, example_path: Path, tmp_path: Path
) -> None:
    document = travel_desk(example_path)
    for tool in document.agent.metadata.tools:
        dialog = open_dialog(qtbot, document, tool, settings(tmp_path))
        for editor in dialog.form.editors():
            field: QWidget = editor.input
            if editor is dialog.form.root:
                continue
            if isinstance(field, QGroupBox):
                assert field.title(), editor.path
            elif isinstance(editor.owner, ArrayEditor):
                row = editor.parentWidget()
                assert row is not None and row.findChild(QLabel) is not None, editor.path
            else:
                assert label_for(dialog, editor.path).text(), editor.path
        dialog.close()


def test_save_as_test_case_saves_exactly_the_arguments_run_sends(
    qtbot: QtBot, example_path: Path, tmp_path: Path
) -> None:
    document = travel_desk(example_path)
    dialog = open_dialog(
        qtbot, document, tool_named(document, "search_flights"), settings(tmp_path)
    )
    assert not dialog.save_case_button.isEnabled()  # invalid, like Run
    dialog.set_arguments({**VALID_FLIGHT_SEARCH, "destination": "LI"})
    qtbot.keyClicks(dialog.form.field("destination"), "S")  # typed: the one reading counts

    qtbot.mouseClick(dialog.save_case_button, Qt.MouseButton.LeftButton)
    ask = dialog.findChild(QInputDialog, "saveCaseName")
    assert isinstance(ask, QInputDialog)
    qtbot.waitUntil(ask.isVisible, timeout=10_000)
    name_edit = ask.findChild(QLineEdit)
    assert name_edit is not None
    name_edit.selectAll()
    qtbot.keyClicks(name_edit, "Lisbon for one")
    qtbot.keyClick(name_edit, Qt.Key.Key_Return)

    qtbot.waitUntil(lambda: dialog.status.text().startswith("Saved"), timeout=10_000)
    assert dialog.status.text() == "Saved test case “Lisbon for one” to search_flights."
    assert dialog.isVisible()  # saving does not close the test dialog
    (case,) = tool_named(document, "search_flights").tests
    assert case.name == "Lisbon for one"
    with qtbot.waitSignal(dialog.run_requested, timeout=10_000) as blocker:
        qtbot.mouseClick(dialog.run_button, Qt.MouseButton.LeftButton)
    assert case.arguments == blocker.args[0].arguments == VALID_FLIGHT_SEARCH
    assert case.expect.to_data() == {}

    document.undo_stack.undo()  # one undo step
    assert tool_named(document, "search_flights").tests == []


def test_a_tool_never_run_starts_from_its_sample_values_and_says_so(
    qtbot: QtBot, example_path: Path, tmp_path: Path
) -> None:
    document = travel_desk(example_path)
    store = settings(tmp_path)
    tool = tool_named(document, "local_time")
    # What the person typed in the tool editor's Sample values table counts, as there.
    SampleMemory(store).remember(document, "local_time", SampleOverrides({"city": "Lisbon"}))

    dialog = open_dialog(qtbot, document, tool, store, reset=False)

    city = dialog.form.field("city")
    assert isinstance(city, QLineEdit) and city.text() == "Lisbon"
    assert dialog.origin.isVisible()
    assert dialog.origin.text() == (
        "Started from the tool's sample values (its editor's Sample values)."
    )
    assert dialog.run_button.isEnabled() and dialog.problems() == []
    qtbot.mouseClick(dialog.defaults_button, Qt.MouseButton.LeftButton)
    assert city.text() == "" and dialog.origin.text() == "Reset to the schema's defaults."
