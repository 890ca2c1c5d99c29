"""Caller cases in the tool editor's Tests tab: made with New caller case, edited like the others.

Real widgets offscreen, clicked and typed into; every edit goes through the agent document (one
undo step each, typing merged) and the saved file is read back.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QComboBox, QInputDialog, QPlainTextEdit, QPushButton
from pytestqt.qtbot import QtBot

from app.document.agent_document import AgentDocument
from app.errors import reporter
from schema_types.files.agent_file import load_agent
from tests.app._tables import pick_row
from tests.app.test_tests_panel import click, open_editor, show_tests, type_into
from tests.fakes.mcp_clients import book_tool, write_agent

CALLER: dict[str, Any] = {
    "name": "family trip",
    "ask": "Book me, my wife and our 7-year-old to Lisbon on 1 June.",
    "expect": {"arguments": {"destination": "Lisbon"}, "contains": ["booked"]},
}
ORDINARY: dict[str, Any] = {"name": "oslo", "arguments": {"destination": "Oslo"}}


def agent_file(tmp_path: Path, cases: list[dict[str, Any]]) -> Path:
    hotel = {
        "name": "book_hotel",
        "description": "Books a hotel room.",
        "parameters": {"type": "object", "properties": {"city": {"type": "string"}}},
        "prompt": "Book a hotel in {city}.",
    }
    return write_agent(
        tmp_path / "desk.agent.yaml",
        tools=[hotel, book_tool(tests=cases)],
        api_key=None,
    )


def cases_of(document: AgentDocument) -> list[Any]:
    return list(document.agent.tools[1].tests)


def choose(qtbot: QtBot, combo: QComboBox, text: str) -> None:
    """Open ``combo``'s list and click the entry that starts with ``text``, as a person would."""
    entries = [combo.itemText(i) for i in range(combo.count())]
    row = next((i for i, entry in enumerate(entries) if entry.startswith(text)), None)
    assert row is not None, f"no entry {text!r} in {entries}"
    combo.showPopup()
    view = combo.view()
    qtbot.waitUntil(view.isVisible, timeout=5_000)
    where = view.visualRect(view.model().index(row, 0)).center()
    qtbot.mouseClick(view.viewport(), Qt.MouseButton.LeftButton, pos=where)
    qtbot.waitUntil(lambda: not view.isVisible(), timeout=5_000)
    assert combo.currentText() == entries[row]


def test_new_caller_case_asks_for_a_request_and_typing_it_is_one_undo_step(
    qtbot: QtBot, tmp_path: Path
) -> None:
    document = AgentDocument.load(agent_file(tmp_path, [ORDINARY]))
    panel = show_tests(qtbot, open_editor(qtbot, document))
    editor = panel.editor
    assert panel.new_caller_button.isVisible() and panel.new_caller_button.isEnabled()
    assert editor.arguments.isVisible() and not editor.ask.isVisible()
    assert not editor.caller.picks.isVisible()  # an ordinary case has no caller rows
    steps = document.undo_stack.count()

    click(qtbot, panel.new_caller_button)
    ask = panel.findChild(QInputDialog)
    assert isinstance(ask, QInputDialog) and ask.isVisible()
    assert "calls book_flight" in ask.labelText()
    (add,) = [b for b in ask.findChildren(QPushButton) if b.text() == "Add case"]
    assert not add.isEnabled()  # a blank request cannot be added
    (box,) = ask.findChildren(QPlainTextEdit)
    qtbot.keyClicks(box, "   ")
    assert not add.isEnabled()
    qtbot.keyClicks(box, "Fly me to Oslo")
    assert add.isEnabled()
    qtbot.mouseClick(add, Qt.MouseButton.LeftButton)

    case = cases_of(document)[1]
    assert (case.name, case.ask, case.arguments) == ("Fly me to Oslo", "Fly me to Oslo", {})
    assert panel.selected_case() == "Fly me to Oslo"
    assert editor.ask.isVisible() and not editor.arguments.isVisible()
    assert editor.ask.edit.hasFocus() and not editor.ask.problem.isVisible()
    assert editor.caller.picks.isVisible()
    assert editor.caller.picks.currentText() == "book_flight (this tool)"
    assert document.undo_stack.count() == steps + 1

    type_into(qtbot, editor.ask.edit, " tomorrow")
    assert cases_of(document)[1].ask == "Fly me to Oslo tomorrow"
    assert document.undo_stack.count() == steps + 2  # the typing merged into one step
    row = panel.model.row_of("Fly me to Oslo")
    assert row is not None
    assert panel.model.index(row, 1).data() == "“Fly me to Oslo tomorrow” → picks book_flight"

    # Clearing the request is refused: the agent keeps the last one.
    editor.ask.edit.setFocus(Qt.FocusReason.MouseFocusReason)
    qtbot.keyClick(editor.ask.edit, Qt.Key.Key_A, Qt.KeyboardModifier.ControlModifier)
    qtbot.keyClick(editor.ask.edit, Qt.Key.Key_Delete)
    assert editor.ask.problem.isVisible()
    assert editor.ask.problem.text().startswith("Not saved: a caller case needs a request")
    assert cases_of(document)[1].ask == "Fly me to Oslo tomorrow"

    document.undo_stack.undo()
    assert cases_of(document)[1].ask == "Fly me to Oslo"
    assert editor.ask.edit.toPlainText() == "Fly me to Oslo"
    assert not editor.ask.problem.isVisible()
    document.undo_stack.undo()
    assert [c.name for c in cases_of(document)] == ["oslo"]
    assert editor.arguments.isVisible() and not editor.ask.isVisible()
    document.undo_stack.redo()
    document.undo_stack.redo()
    pick_row(panel.table, 1)
    assert editor.ask.edit.toPlainText() == "Fly me to Oslo tomorrow"
    assert reporter().history == []


def test_the_caller_picks_and_fills_are_expectations_with_undo_and_the_reasons_shown(
    qtbot: QtBot, tmp_path: Path
) -> None:
    path = agent_file(tmp_path, [CALLER, ORDINARY])
    document = AgentDocument.load(path)
    panel = show_tests(qtbot, open_editor(qtbot, document))
    editor = panel.editor
    picks, fills = editor.caller.picks, editor.caller.fills
    assert editor.ask.edit.toPlainText() == CALLER["ask"]
    assert fills.toPlainText() == '{"destination": "Lisbon"}'
    assert [picks.itemText(i) for i in range(picks.count())] == [
        "book_flight (this tool)",
        "book_hotel",
        "none: none of this agent's tools",
    ]
    assert panel.model.index(0, 1).data() == (
        "“Book me, my wife and our 7-year…” → picks book_flight · fills destination · "
        "contains “booked”"
    )
    steps = document.undo_stack.count()

    choose(qtbot, picks, "none")
    assert cases_of(document)[0].expect.picks == "none"
    assert editor.caller.note.isVisible()
    assert editor.caller.note.text().startswith("The caller must call none of this agent's")
    choose(qtbot, picks, "book_hotel")
    assert cases_of(document)[0].expect.picks == "book_hotel"
    assert editor.caller.note.text() == (
        "destination is not a parameter of book_hotel: a caller that follows its schema never "
        "fills it."
    )
    assert document.undo_stack.count() == steps + 2  # each choice a step of its own
    document.undo_stack.undo()
    assert picks.currentText().startswith("none") and cases_of(document)[0].expect.picks == "none"
    document.undo_stack.undo()
    assert picks.currentText() == "book_flight (this tool)"
    assert "picks" not in cases_of(document)[0].expect.to_data()
    assert not editor.caller.note.isVisible()

    type_into(qtbot, fills, "}")
    fills_field = editor.fields["arguments"]
    assert fills_field.problem.isVisible()
    assert fills_field.problem.text().startswith("Not saved: line 1, column")
    fills.setFocus(Qt.FocusReason.MouseFocusReason)
    qtbot.keyClick(fills, Qt.Key.Key_A, Qt.KeyboardModifier.ControlModifier)
    qtbot.keyClicks(fills, '["LIS"]')
    assert fills_field.problem.text() == (
        'Not saved: the arguments the caller must fill are a JSON object: {"key": value}'
    )
    qtbot.keyClick(fills, Qt.Key.Key_A, Qt.KeyboardModifier.ControlModifier)
    qtbot.keyClicks(fills, '{"destination": "LIS", "passengers": 3}')
    assert not fills_field.problem.isVisible()
    assert cases_of(document)[0].expect.arguments == {"destination": "LIS", "passengers": 3}
    qtbot.keyClick(fills, Qt.Key.Key_A, Qt.KeyboardModifier.ControlModifier)
    qtbot.keyClick(fills, Qt.Key.Key_Delete)
    assert "arguments" not in cases_of(document)[0].expect.to_data()  # empty: any arguments

    # The ordinary case beside it shows its arguments and no caller rows.
    pick_row(panel.table, 1)
    assert panel.selected_case() == "oslo"
    assert editor.arguments.isVisible() and not editor.ask.isVisible()
    assert not picks.isVisible() and not fills.isVisible()
    pick_row(panel.table, 0)
    assert editor.ask.isVisible() and picks.isVisible()

    document.save()
    saved = load_agent(path).metadata.tools[1].tests[0].to_data()
    assert saved == {
        "name": "family trip",
        "ask": CALLER["ask"],
        "expect": {"contains": ["booked"]},
    }


def test_a_picks_name_the_agent_does_not_have_is_kept_and_marked(
    qtbot: QtBot, tmp_path: Path
) -> None:
    gone = {"name": "gone", "ask": "Cancel my trip.", "expect": {"picks": "cancel_trip"}}
    document = AgentDocument.load(agent_file(tmp_path, [gone]))
    panel = show_tests(qtbot, open_editor(qtbot, document))
    picks = panel.editor.caller.picks
    assert picks.currentText() == "cancel_trip (not a tool of this agent)"
    assert panel.model.index(0, 1).data() == "“Cancel my trip.” → picks cancel_trip"
    type_into(qtbot, panel.editor.ask.edit, " Now.")
    assert cases_of(document)[0].expect.picks == "cancel_trip"  # not lost by another edit
