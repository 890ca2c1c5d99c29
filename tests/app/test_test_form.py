"""The test form never changes input silently: what is typed is what is sent, shown and copied."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from PySide6.QtCore import QDate, QPoint, QPointF, Qt
from PySide6.QtGui import QGuiApplication, QWheelEvent
from PySide6.QtWidgets import (
    QApplication,
    QComboBox,
    QGroupBox,
    QLineEdit,
    QTableView,
    QToolButton,
    QWidget,
)
from pytestqt.qtbot import QtBot

from app.document.agent_document import AgentDocument
from app.settings_store import SettingsStore
from app.test_run import ArgumentMemory, TestRequest, TestToolDialog
from app.test_run.form import ObjectEditor
from app.test_run.pickers import DateEditor, StepBox
from schema_types.agent import Agent, ToolDefinition
from schema_types.arguments import apply_defaults
from schema_types.template.engine import render

TRIP_PARAMETERS: dict[str, Any] = {
    "type": "object",
    "properties": {
        "city": {"type": "string"},
        "days": {"type": "integer", "minimum": 1, "maximum": 14},
        "people": {"type": "integer", "exclusiveMinimum": 0, "default": 2},
        "fare": {"type": "number", "minimum": 0, "multipleOf": 0.01},
        "rate": {"type": "number"},
        "start": {"type": "string", "format": "date"},
        "at": {"type": "string", "format": "date-time"},
        "budget": {
            "type": "object",
            "properties": {
                "amount": {"type": "number", "minimum": 0},
                "currency": {"type": "string", "enum": ["EUR", "USD"], "default": "EUR"},
                "firm": {"type": "boolean"},
            },
            "required": ["amount", "firm"],
        },
    },
    "required": ["city"],
    "additionalProperties": False,
}
TRIP_PROMPT = "Trip to {city} for {days} days with {people}; budget {budget}; fare {fare}."


def trip_tool(parameters: dict[str, Any] = TRIP_PARAMETERS) -> tuple[AgentDocument, ToolDefinition]:
    agent = Agent.model_validate(
        {
            "metadata": {
                "name": "Trips",
                "tools": [
                    {
                        "name": "plan",
                        "description": "Plans a trip.",
                        "parameters": parameters,
                        "prompt": TRIP_PROMPT,
                    }
                ],
            }
        }
    )
    document = AgentDocument(agent)
    return document, document.agent.metadata.tools[0]


def open_dialog(qtbot: QtBot, tmp_path: Path, name: str = "settings") -> TestToolDialog:
    document, tool = trip_tool()
    dialog = TestToolDialog(document, tool, SettingsStore(tmp_path / name))
    qtbot.addWidget(dialog)
    with qtbot.waitActive(dialog, timeout=10_000):
        dialog.show()
        dialog.activateWindow()
    qtbot.mouseClick(dialog.defaults_button, Qt.MouseButton.LeftButton)  # the defaults only
    return dialog


def box(dialog: TestToolDialog, path: str) -> StepBox:
    field = dialog.form.field(path)
    assert isinstance(field, StepBox), path
    return field


def retype(qtbot: QtBot, field: StepBox | QLineEdit, text: str) -> None:
    """Select what the field holds and type ``text`` over it, as a person would."""
    field.setFocus()
    qtbot.keyClick(field, Qt.Key.Key_A, Qt.KeyboardModifier.ControlModifier)
    qtbot.keyClick(field, Qt.Key.Key_Delete)
    qtbot.keyClicks(field, text)


def problem_at(dialog: TestToolDialog, path: str) -> str:
    return dialog.form.editor(path).problem()


def shown_json(dialog: TestToolDialog) -> Any:
    return json.loads(dialog.arguments_view.toPlainText())


def test_an_integer_above_the_maximum_is_kept_and_named_at_its_field(
    qtbot: QtBot, tmp_path: Path
) -> None:
    dialog = open_dialog(qtbot, tmp_path)
    qtbot.keyClicks(dialog.form.field("city"), "Lisbon")
    days = box(dialog, "days")
    qtbot.keyClicks(days, "99")
    assert days.text() == "99"
    assert dialog.arguments()["days"] == 99
    assert shown_json(dialog)["days"] == 99
    assert problem_at(dialog, "days") == "99 is greater than the maximum of 14"
    assert dialog.form.editor("days").problem_label.isVisible()
    assert not dialog.run_button.isEnabled()

    days.clearFocus()  # leaving the field does not correct it either
    assert days.text() == "99" and not dialog.run_button.isEnabled()
    days.setFocus()
    days.lineEdit().end(False)
    qtbot.keyClick(days, Qt.Key.Key_Backspace)
    assert days.text() == "9" and dialog.arguments()["days"] == 9
    assert problem_at(dialog, "days") == ""
    assert dialog.run_button.isEnabled()


def test_bounds_below_and_exclusive_are_checked_not_clamped(qtbot: QtBot, tmp_path: Path) -> None:
    dialog = open_dialog(qtbot, tmp_path)
    retype(qtbot, box(dialog, "days"), "0")
    assert dialog.arguments()["days"] == 0
    assert problem_at(dialog, "days") == "0 is less than the minimum of 1"
    retype(qtbot, box(dialog, "people"), "0")
    assert dialog.arguments()["people"] == 0
    assert problem_at(dialog, "people") == "0 must be greater than 0"
    retype(qtbot, box(dialog, "fare"), "-5")
    assert dialog.arguments()["fare"] == -5
    assert problem_at(dialog, "fare") == "-5 is less than the minimum of 0"
    retype(qtbot, box(dialog, "days"), "twelve")
    assert "days" not in dialog.arguments()
    assert problem_at(dialog, "days") == '"twelve" is not a number'
    assert not dialog.run_button.isEnabled()


def test_every_decimal_typed_is_kept(qtbot: QtBot, tmp_path: Path) -> None:
    dialog = open_dialog(qtbot, tmp_path)
    qtbot.keyClicks(dialog.form.field("city"), "Lisbon")
    rate = box(dialog, "rate")
    qtbot.keyClicks(rate, "1.2345")
    rate.clearFocus()
    assert rate.text() == "1.2345"
    assert dialog.arguments()["rate"] == 1.2345
    assert '"rate": 1.2345' in dialog.arguments_view.toPlainText()
    assert dialog.run_button.isEnabled()

    # A field of cents does not round either: the extra decimals are named as the problem.
    fare = box(dialog, "fare")
    qtbot.keyClicks(fare, "1.2345")
    assert fare.text() == "1.2345" and dialog.arguments()["fare"] == 1.2345
    assert problem_at(dialog, "fare") == "1.2345 is not a multiple of 0.01"
    assert not dialog.run_button.isEnabled()
    retype(qtbot, fare, "1200")
    assert dialog.arguments()["fare"] == 1200 and isinstance(dialog.arguments()["fare"], int)
    assert dialog.run_button.isEnabled()


def test_arrow_keys_step_within_the_bounds(qtbot: QtBot, tmp_path: Path) -> None:
    dialog = open_dialog(qtbot, tmp_path)
    days = box(dialog, "days")
    assert days.text() == "" and days.lineEdit().placeholderText() == "not set"
    assert "days" not in dialog.arguments()
    days.setFocus()
    qtbot.keyClick(days, Qt.Key.Key_Up)  # from "not set": the allowed value nearest 0
    assert days.text() == "1" and dialog.arguments()["days"] == 1
    qtbot.keyClick(days, Qt.Key.Key_Down)
    assert days.text() == "1"  # at the minimum
    retype(qtbot, days, "99")
    qtbot.keyClick(days, Qt.Key.Key_Up)
    assert days.text() == "99"  # already above the maximum
    qtbot.keyClick(days, Qt.Key.Key_Down)
    assert days.text() == "14" and problem_at(dialog, "days") == ""
    qtbot.keyClick(days, Qt.Key.Key_PageDown)  # ten steps
    assert days.text() == "4"

    people = box(dialog, "people")
    assert people.text() == "2"  # the default
    fare = box(dialog, "fare")
    fare.setFocus()
    qtbot.keyClick(fare, Qt.Key.Key_Up)  # from "not set": 0
    qtbot.keyClick(fare, Qt.Key.Key_Up)
    qtbot.keyClick(fare, Qt.Key.Key_Up)
    assert fare.text() == "0.02" and dialog.arguments()["fare"] == 0.02  # by multipleOf


def wheel_up(widget: QWidget) -> None:
    centre = QPointF(widget.rect().center())
    event = QWheelEvent(
        centre,
        QPointF(widget.mapToGlobal(widget.rect().center())),
        QPoint(0, 0),
        QPoint(0, 120),
        Qt.MouseButton.NoButton,
        Qt.KeyboardModifier.NoModifier,
        Qt.ScrollPhase.NoScrollPhase,
        False,
    )
    QApplication.sendEvent(widget, event)


def test_the_wheel_steps_only_the_number_being_edited(qtbot: QtBot, tmp_path: Path) -> None:
    dialog = open_dialog(qtbot, tmp_path)
    qtbot.keyClicks(dialog.form.field("city"), "Lisbon")
    days = box(dialog, "days")
    wheel_up(days)  # scrolling the form past it
    assert days.text() == "" and "days" not in dialog.arguments()
    days.setFocus()
    wheel_up(days)
    assert days.text() == "1"


def test_clearing_a_number_leaves_it_out(qtbot: QtBot, tmp_path: Path) -> None:
    dialog = open_dialog(qtbot, tmp_path)
    people = box(dialog, "people")
    assert dialog.arguments()["people"] == 2
    clear = next(
        button
        for button in dialog.form.editor("people").findChildren(QToolButton)
        if button.accessibleName() == "Clear"
    )
    qtbot.mouseClick(clear, Qt.MouseButton.LeftButton)
    assert people.text() == "" and "people" not in dialog.arguments()
    assert "with 2;" in dialog.preview.text()  # the server fills in the default


def test_dates_are_kept_as_typed(qtbot: QtBot, tmp_path: Path) -> None:
    dialog = open_dialog(qtbot, tmp_path)
    qtbot.keyClicks(dialog.form.field("city"), "Lisbon")
    start = box(dialog, "start")
    assert start.lineEdit().placeholderText() == "not set (YYYY-MM-DD)"
    qtbot.keyClicks(start, "2026-02-31")
    start.clearFocus()
    assert start.text() == "2026-02-31" and dialog.arguments()["start"] == "2026-02-31"
    assert problem_at(dialog, "start") == '"2026-02-31" is not a valid date'
    retype(qtbot, start, "1850-01-31")
    assert dialog.arguments()["start"] == "1850-01-31" and problem_at(dialog, "start") == ""

    # Up and Down step the part under the cursor; a month step stays a real date.
    start.lineEdit().setCursorPosition(6)
    qtbot.keyClick(start, Qt.Key.Key_Up)
    assert start.text() == "1850-02-28"
    start.lineEdit().setCursorPosition(0)
    qtbot.keyClick(start, Qt.Key.Key_Down)
    assert start.text() == "1849-02-28"

    at = box(dialog, "at")
    qtbot.keyClicks(at, "2026-01-31T09:00:00+02:00")
    assert dialog.arguments()["at"] == "2026-01-31T09:00:00+02:00"  # not moved to UTC
    at.lineEdit().setCursorPosition(12)
    qtbot.keyClick(at, Qt.Key.Key_Up)
    assert at.text() == "2026-01-31T10:00:00+02:00"
    assert dialog.run_button.isEnabled()


def test_a_day_picked_in_the_calendar_is_typed_into_the_date(qtbot: QtBot, tmp_path: Path) -> None:
    dialog = open_dialog(qtbot, tmp_path)
    editor = dialog.form.editor("start")
    assert isinstance(editor, DateEditor)
    editor.calendar.setSelectedDate(QDate(2026, 6, 1))
    days = editor.calendar.findChild(QTableView)
    assert days is not None
    qtbot.keyClick(days, Qt.Key.Key_Return)
    assert box(dialog, "start").text() == "2026-06-01"
    assert dialog.arguments()["start"] == "2026-06-01"


def test_values_put_into_the_form_come_back_unchanged(qtbot: QtBot, tmp_path: Path) -> None:
    dialog = open_dialog(qtbot, tmp_path)
    given = {
        "city": "Porto",
        "days": 99,
        "people": 1.0,
        "fare": 12.345,
        "rate": 1e-7,
        "start": "31/01/2026",
        "at": "2026-01-31T09:00:00.250+02:00",
        "budget": {"amount": "lots"},
    }
    dialog.set_arguments(given)
    assert dialog.arguments() == given
    assert json.dumps(dialog.arguments()) == json.dumps(given)  # 1.0 stays 1.0
    assert shown_json(dialog) == given
    assert box(dialog, "days").text() == "99"
    assert box(dialog, "people").text() == "1.0"
    assert box(dialog, "budget.amount").text() == '"lots"'
    assert problem_at(dialog, "budget.amount") == 'expected number, got string "lots"'


def test_given_values_the_form_cannot_show_are_named_not_dropped_silently(
    qtbot: QtBot, tmp_path: Path
) -> None:
    dialog = open_dialog(qtbot, tmp_path)
    assert not dialog.notice.isVisible()
    dialog.set_arguments(
        {"city": 5, "days": 3, "budget": {"amount": 1, "currency": "GBP", "firm": "yes"}}
    )
    city = dialog.form.field("city")
    assert isinstance(city, QLineEdit) and city.text() == "5"
    assert dialog.arguments() == {"city": 5, "days": 3, "budget": {"amount": 1}}
    assert problem_at(dialog, "city") == "expected string, got integer 5"
    assert dialog.notice.isVisible()
    assert dialog.notice.text() == (
        "Not sent: the form cannot show the given value of budget.currency, budget.firm."
    )
    retype(qtbot, city, "Lisbon")
    assert dialog.arguments()["city"] == "Lisbon"
    qtbot.mouseClick(dialog.defaults_button, Qt.MouseButton.LeftButton)
    assert not dialog.notice.isVisible()
    dialog.set_arguments({"city": "Lisbon", "people": 3})
    assert not dialog.notice.isVisible()


def test_ticking_nothing_an_optional_object_is_left_out_until_a_field_is_set(
    qtbot: QtBot, tmp_path: Path
) -> None:
    dialog = open_dialog(qtbot, tmp_path)
    qtbot.keyClicks(dialog.form.field("city"), "Lisbon")
    budget = dialog.form.editor("budget")
    assert isinstance(budget, ObjectEditor) and budget.status is not None
    group = dialog.form.field("budget")
    assert isinstance(group, QGroupBox) and not group.isCheckable()
    assert budget.status.isVisible()
    assert budget.status.text() == "Left out: set one of its fields to send it."
    currency = dialog.form.field("budget.currency")
    assert isinstance(currency, QComboBox) and currency.currentIndex() == 0  # not the default
    assert "budget" not in dialog.arguments() and "budget" not in shown_json(dialog)
    assert dialog.run_button.isEnabled()
    assert "budget ;" in dialog.preview.text()

    qtbot.keyClicks(box(dialog, "budget.amount"), "800")
    assert dialog.arguments()["budget"] == {"amount": 800}
    assert shown_json(dialog)["budget"] == {"amount": 800}
    assert not budget.status.isVisible()
    # Started, the object's required fields count: "firm" is required and not set.
    assert problem_at(dialog, "budget.firm") == "required argument is missing"
    assert not dialog.run_button.isEnabled()
    firm = dialog.form.field("budget.firm")
    firm.setFocus()
    qtbot.keyClick(firm, Qt.Key.Key_Space)  # "not set" → true
    assert dialog.arguments()["budget"] == {"amount": 800, "firm": True}
    assert dialog.run_button.isEnabled()
    # The server fills in the currency's default; the preview shows what it submits.
    assert 'budget {"amount": 800, "firm": true, "currency": "EUR"};' in dialog.preview.text()

    assert budget.clear_button is not None
    qtbot.mouseClick(budget.clear_button, Qt.MouseButton.LeftButton)
    assert "budget" not in dialog.arguments()
    assert budget.status.isVisible() and box(dialog, "budget.amount").text() == ""
    assert dialog.run_button.isEnabled()


def test_a_required_field_alone_starts_an_optional_object(qtbot: QtBot, tmp_path: Path) -> None:
    dialog = open_dialog(qtbot, tmp_path)
    qtbot.keyClicks(dialog.form.field("city"), "Lisbon")
    currency = dialog.form.field("budget.currency")
    assert isinstance(currency, QComboBox)
    currency.setCurrentIndex(currency.findText("USD"))
    assert dialog.arguments()["budget"] == {"currency": "USD"}
    assert problem_at(dialog, "budget.amount") == "required argument is missing"
    assert problem_at(dialog, "budget.firm") == "required argument is missing"
    assert not dialog.run_button.isEnabled()


def everything_agrees(qtbot: QtBot, dialog: TestToolDialog) -> dict[str, Any]:
    """Copy, the JSON view and the preview show one value (the preview: as the server renders
    it); returns that value."""
    tool = dialog.tool
    arguments = dialog.arguments()
    qtbot.mouseClick(dialog.copy_button, Qt.MouseButton.LeftButton)
    copied = json.loads(QGuiApplication.clipboard().text())
    assert copied["params"] == {"name": tool.name, "arguments": arguments}
    assert shown_json(dialog) == arguments
    served = render(
        tool.prompt,
        apply_defaults(tool.parameters, arguments),
        tool.parameters,
        tool_name=tool.name,
        tool_description=tool.description,
    )
    assert dialog.preview.text() == served == dialog.preview.toPlainText() == dialog.prompt()
    return arguments


def test_run_copy_the_json_view_memory_and_preview_are_one_value(
    qtbot: QtBot, tmp_path: Path
) -> None:
    states: list[tuple[str, dict[str, str]]] = [
        ("city only: days missing", {"city": "Lisbon"}),
        ("all set", {"city": "Porto", "days": "3", "fare": "99.5", "rate": "0.125"}),
        ("budget started", {"city": "Faro", "budget.amount": "150.75", "people": "4"}),
        ("invalid", {"city": "Braga", "days": "99"}),
    ]
    for index, (state, typed) in enumerate(states):
        dialog = open_dialog(qtbot, tmp_path, f"settings{index}")
        document, tool = dialog.document, dialog.tool
        for path, text in typed.items():
            field = dialog.form.field(path)
            assert isinstance(field, StepBox | QLineEdit), path
            retype(qtbot, field, text)
        if "budget.amount" in typed:
            firm = dialog.form.field("budget.firm")
            firm.setFocus()
            qtbot.keyClick(firm, Qt.Key.Key_Space)
        arguments = everything_agrees(qtbot, dialog)
        assert "{" + "days}" not in dialog.preview.text(), state
        remembered = ArgumentMemory(SettingsStore(tmp_path / f"settings{index}"))
        assert remembered.recall(document, tool.name) == arguments, state
        if state == "invalid":
            assert not dialog.run_button.isEnabled()
            continue
        assert dialog.problems() == [], state
        with qtbot.waitSignal(dialog.run_requested, timeout=10_000) as blocker:
            qtbot.mouseClick(dialog.run_button, Qt.MouseButton.LeftButton)
        (request,) = blocker.args
        assert isinstance(request, TestRequest)
        assert request.arguments == arguments == shown_json(dialog), state
        assert request.prompt == dialog.preview.text(), state
        assert remembered.recall(document, tool.name) == arguments, state


def test_placeholders_show_only_when_asked(qtbot: QtBot, tmp_path: Path) -> None:
    dialog = open_dialog(qtbot, tmp_path)
    qtbot.keyClicks(dialog.form.field("city"), "Lisbon")
    assert dialog.preview.text().startswith("Trip to Lisbon for  days with 2;")
    button = dialog.placeholders_button
    assert button.isVisible() and button.isCheckable() and not button.isChecked()
    assert button.defaultAction() is dialog.preview.placeholders_action
    qtbot.mouseClick(button, Qt.MouseButton.LeftButton)
    assert dialog.preview.text().startswith("Trip to Lisbon for {days} days with 2;")
    assert dialog.prompt().startswith("Trip to Lisbon for  days")  # what Run sends is unchanged
    qtbot.keyClicks(box(dialog, "days"), "5")
    assert dialog.preview.text().startswith("Trip to Lisbon for 5 days")
    qtbot.mouseClick(button, Qt.MouseButton.LeftButton)
    assert "{" not in dialog.preview.text()
