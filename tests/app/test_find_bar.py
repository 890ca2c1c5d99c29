"""Find and replace in the template editor and the parameters' JSON view, driven by keys."""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import Qt
from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import QLineEdit, QVBoxLayout, QWidget
from pytestqt.qtbot import QtBot

from app.document.agent_document import AgentDocument
from app.document.tool_ref import ToolRef
from app.find_bar import FindBar, find_bar_for
from app.tool_editor.schema_json_view import SchemaJsonView
from app.tool_editor.template_pane import TemplatePane
from schema_types.agent import Agent
from tests.app._tool_widgets import one_tool_model, show_active

WAIT = 5000  # ms: a bound, not a sleep

PARAMETERS: dict[str, Any] = {
    "type": "object",
    "properties": {
        "destination": {"type": "string", "examples": ["Lisbon"]},
        "nights": {"type": "integer", "default": 3},
    },
    "required": ["destination"],
}
PROMPT = "Plan a trip to {destination}.\nThe trip lasts {nights} nights; trips, Trip!\n"


def make_document(prompt: str = PROMPT) -> AgentDocument:
    agent = Agent.model_validate(
        {
            "metadata": {
                "name": "Trips",
                "tools": [
                    {"name": "plan", "parameters": PARAMETERS, "prompt": prompt},
                ],
            }
        }
    )
    return AgentDocument(agent)


def make_pane(qtbot: QtBot, prompt: str = PROMPT) -> tuple[TemplatePane, AgentDocument]:
    document = make_document(prompt)
    pane = TemplatePane(ToolRef(document, 0))
    show_active(qtbot, pane, 1000, 600)
    focus(qtbot, pane.editor)
    return pane, document


def focus(qtbot: QtBot, widget: QWidget) -> None:
    widget.setFocus(Qt.FocusReason.OtherFocusReason)
    qtbot.waitUntil(widget.hasFocus, timeout=WAIT)


def press(qtbot: QtBot, widget: QWidget, keys: str) -> None:
    """Press ``keys`` ("Ctrl+F", "Shift+Return") on ``widget`` as a person would."""
    qtbot.keySequence(widget, QKeySequence(keys))


def search(qtbot: QtBot, bar: FindBar, text: str) -> None:
    bar.search_field.selectAll()
    qtbot.keyClicks(bar.search_field, text)


def prompt_of(document: AgentDocument) -> str:
    return document.agent.metadata.tools[0].prompt


# -- finding ---------------------------------------------------------------------------------


def test_ctrl_f_opens_the_bar_on_the_search_field_and_counts_the_matches(qtbot: QtBot) -> None:
    pane, _document = make_pane(qtbot)
    bar = pane.find_bar
    assert not bar.isVisible()

    press(qtbot, pane.editor, "Ctrl+F")

    assert bar.isVisible()
    assert bar.search_field.hasFocus()
    assert not bar.replace_field.isVisible()
    search(qtbot, bar, "trip")
    assert bar.count_label.text() == "1 of 4"  # trip, trip, trips, Trip
    assert pane.editor.textCursor().selectedText() == "trip"
    assert pane.editor.textCursor().selectionStart() == PROMPT.index("trip")


def test_enter_f3_and_their_shift_move_through_the_matches_round_the_end(qtbot: QtBot) -> None:
    pane, _document = make_pane(qtbot)
    bar = pane.find_bar
    press(qtbot, pane.editor, "Ctrl+F")
    search(qtbot, bar, "trip")

    press(qtbot, bar.search_field, "Return")
    assert bar.count_label.text() == "2 of 4"
    press(qtbot, bar.search_field, "Shift+Return")
    assert bar.count_label.text() == "1 of 4"
    press(qtbot, bar.search_field, "Shift+Return")
    assert bar.count_label.text() == "4 of 4"
    assert pane.editor.textCursor().selectedText() == "Trip"
    press(qtbot, bar.search_field, "F3")
    assert bar.count_label.text() == "1 of 4"

    focus(qtbot, pane.editor)
    press(qtbot, pane.editor, "F3")
    assert bar.count_label.text() == "2 of 4"
    press(qtbot, pane.editor, "Shift+F3")
    assert bar.count_label.text() == "1 of 4"


def test_every_match_is_highlighted_and_the_current_one_apart(qtbot: QtBot) -> None:
    pane, _document = make_pane(qtbot)
    bar = pane.find_bar
    press(qtbot, pane.editor, "Ctrl+F")
    search(qtbot, bar, "trip")

    found = pane.editor.extraSelections()
    assert [s.cursor.selectedText() for s in found] == ["trip", "trip", "trip", "Trip"]
    colours = [s.format.background().color().name() for s in found]
    assert colours[0] != colours[1] and colours[1] == colours[2] == colours[3]

    press(qtbot, bar.search_field, "Escape")
    assert not bar.isVisible()
    assert pane.editor.hasFocus()
    assert pane.editor.extraSelections() == []


def test_match_case_and_whole_word_narrow_the_matches(qtbot: QtBot) -> None:
    pane, _document = make_pane(qtbot)
    bar = pane.find_bar
    press(qtbot, pane.editor, "Ctrl+F")
    search(qtbot, bar, "trip")

    qtbot.mouseClick(bar.case_button, Qt.MouseButton.LeftButton)
    assert bar.count_label.text() == "1 of 3"
    qtbot.mouseClick(bar.word_button, Qt.MouseButton.LeftButton)
    assert bar.count_label.text() == "1 of 2"
    qtbot.mouseClick(bar.case_button, Qt.MouseButton.LeftButton)
    assert bar.count_label.text() == "1 of 3"  # trip, trip, Trip; not trips

    search(qtbot, bar, "nowhere")
    assert bar.count_label.text() == "No results"


def test_a_regular_expression_finds_its_matches_and_an_invalid_one_says_why(
    qtbot: QtBot,
) -> None:
    pane, _document = make_pane(qtbot)
    bar = pane.find_bar
    press(qtbot, pane.editor, "Ctrl+F")
    qtbot.mouseClick(bar.regex_button, Qt.MouseButton.LeftButton)

    search(qtbot, bar, r"\{(\w+)")
    assert not bar.error_label.isVisible()
    assert bar.count_label.text() == "1 of 2"
    assert pane.editor.textCursor().selectedText() == "{destination"

    search(qtbot, bar, r"\{(\w+")
    assert bar.error_label.isVisible()
    assert "missing ), unterminated subpattern" in bar.error_label.text()
    assert bar.count_label.text() == ""
    assert pane.editor.extraSelections() == []

    qtbot.keyClick(bar.search_field, Qt.Key.Key_ParenRight)
    assert not bar.error_label.isVisible()
    assert bar.count_label.text() == "1 of 2"


def test_the_selected_text_becomes_the_search(qtbot: QtBot) -> None:
    pane, _document = make_pane(qtbot)
    cursor = pane.editor.textCursor()
    start = PROMPT.index("nights;")
    cursor.setPosition(start)
    cursor.setPosition(start + len("nights"), cursor.MoveMode.KeepAnchor)
    pane.editor.setTextCursor(cursor)

    press(qtbot, pane.editor, "Ctrl+F")

    assert pane.find_bar.search_field.text() == "nights"
    assert pane.find_bar.count_label.text() == "2 of 2"  # {nights} first, then this one


def test_typing_in_the_editor_recounts_the_matches(qtbot: QtBot) -> None:
    pane, _document = make_pane(qtbot)
    bar = pane.find_bar
    press(qtbot, pane.editor, "Ctrl+F")
    search(qtbot, bar, "trip")
    focus(qtbot, pane.editor)
    pane.editor.moveCursor(pane.editor.textCursor().MoveOperation.End)

    qtbot.keyClicks(pane.editor, "trip")

    assert bar.count_label.text() == "5 matches"


# -- replacing in the template ---------------------------------------------------------------


def test_ctrl_h_opens_replace_and_replace_all_is_one_undo_step_the_preview_shows(
    qtbot: QtBot,
) -> None:
    pane, document = make_pane(qtbot)
    bar = pane.find_bar
    pane.editor.moveCursor(pane.editor.textCursor().MoveOperation.End)
    qtbot.keyClicks(pane.editor, "Go")  # a typing run before the replacement
    typed = prompt_of(document)
    steps = document.undo_stack.count()

    press(qtbot, pane.editor, "Ctrl+H")
    assert bar.replace_field.isVisible()
    search(qtbot, bar, "trip")
    qtbot.keyClicks(bar.replace_field, "journey")
    qtbot.mouseClick(bar.replace_all_button, Qt.MouseButton.LeftButton)

    expected = typed.replace("trip", "journey").replace("Trip", "journey")
    assert prompt_of(document) == expected
    assert pane.editor.text() == expected
    assert bar.count_label.text() == "Replaced 4"
    assert "Plan a journey to Lisbon." in pane.preview.text()
    assert document.undo_stack.count() == steps + 1
    assert document.undo_stack.undoText().startswith("Replace all “trip” with “journey”")

    document.undo_stack.undo()
    assert prompt_of(document) == typed
    assert pane.editor.text() == typed
    assert "Plan a trip to Lisbon." in pane.preview.text()
    document.undo_stack.redo()
    assert pane.editor.text() == expected


def test_replace_changes_the_selected_match_and_moves_to_the_next(qtbot: QtBot) -> None:
    pane, document = make_pane(qtbot)
    bar = pane.find_bar
    steps = document.undo_stack.count()
    press(qtbot, pane.editor, "Ctrl+H")
    search(qtbot, bar, "trip")
    qtbot.keyClicks(bar.replace_field, "tour")

    press(qtbot, bar.replace_field, "Return")

    assert prompt_of(document).startswith("Plan a tour to {destination}.\nThe trip lasts")
    assert bar.count_label.text() == "1 of 3"
    assert pane.editor.textCursor().selectionStart() == PROMPT.index("trip lasts")
    qtbot.mouseClick(bar.replace_button, Qt.MouseButton.LeftButton)
    assert "The tour lasts" in prompt_of(document)
    assert document.undo_stack.count() == steps + 2
    assert "The tour lasts" in pane.preview.text()


def test_a_regular_expression_replacement_uses_its_groups_and_a_bad_one_is_refused(
    qtbot: QtBot,
) -> None:
    pane, document = make_pane(qtbot)
    bar = pane.find_bar
    press(qtbot, pane.editor, "Ctrl+H")
    qtbot.mouseClick(bar.regex_button, Qt.MouseButton.LeftButton)
    search(qtbot, bar, r"\{(\w+)\}")

    qtbot.keyClicks(bar.replace_field, r"{\2}")
    assert "invalid group reference 2" in bar.error_label.text()
    qtbot.mouseClick(bar.replace_all_button, Qt.MouseButton.LeftButton)
    assert prompt_of(document) == PROMPT

    bar.replace_field.clear()
    qtbot.keyClicks(bar.replace_field, r"<\1>")
    assert not bar.error_label.isVisible()
    qtbot.mouseClick(bar.replace_all_button, Qt.MouseButton.LeftButton)
    assert prompt_of(document).startswith("Plan a trip to <destination>.\nThe trip lasts <nights>")


def test_a_read_only_template_offers_find_without_replace(qtbot: QtBot) -> None:
    pane, document = make_pane(qtbot)
    document.remove_item(("metadata", "tools", 0), text="Delete tool")
    assert pane.editor.isReadOnly()
    focus(qtbot, pane.editor)

    press(qtbot, pane.editor, "Ctrl+H")

    assert pane.find_bar.isVisible()
    assert not pane.find_bar.replace_field.isVisible()


# -- keys in their pane ----------------------------------------------------------------------


def test_the_keys_belong_to_the_pane_and_beat_a_window_shortcut_there(qtbot: QtBot) -> None:
    window = QWidget()
    layout = QVBoxLayout(window)
    first = TemplatePane(ToolRef(make_document(), 0))
    second = TemplatePane(ToolRef(make_document(), 0))
    outside = QLineEdit()
    for widget in (first, second, outside):
        layout.addWidget(widget)
    history = QAction("History", window)
    history.setShortcut(QKeySequence("Ctrl+H"))
    window.addAction(history)
    show_active(qtbot, window, 1000, 900)

    focus(qtbot, second.editor)
    with qtbot.assertNotEmitted(history.triggered):
        press(qtbot, second.editor, "Ctrl+H")
    assert second.find_bar.isVisible() and second.find_bar.replace_field.isVisible()
    assert not first.find_bar.isVisible()
    assert find_bar_for(second.find_bar.search_field) is second.find_bar
    assert find_bar_for(second.preview) is second.find_bar
    assert find_bar_for(outside) is None

    focus(qtbot, outside)
    with qtbot.waitSignal(history.triggered, timeout=WAIT):
        press(qtbot, outside, "Ctrl+H")
    assert not first.find_bar.isVisible()


# -- the JSON view ---------------------------------------------------------------------------


def json_view(qtbot: QtBot) -> tuple[SchemaJsonView, AgentDocument]:
    model, document = one_tool_model(PARAMETERS)
    view = SchemaJsonView(model)
    show_active(qtbot, view, 500, 600)
    focus(qtbot, view.editor)
    return view, document


def test_the_json_view_finds_in_its_text(qtbot: QtBot) -> None:
    view, _document = json_view(qtbot)
    bar = view.find_bar

    press(qtbot, view.editor, "Ctrl+F")
    search(qtbot, bar, '"type"')

    assert bar.count_label.text() == "1 of 3"
    press(qtbot, bar.search_field, "Return")
    assert bar.count_label.text() == "2 of 3"
    assert view.editor.textCursor().selectedText() == '"type"'


def test_a_json_replace_all_is_applied_as_one_undo_step(qtbot: QtBot) -> None:
    view, document = json_view(qtbot)
    bar = view.find_bar
    steps = document.undo_stack.count()

    press(qtbot, view.editor, "Ctrl+H")
    search(qtbot, bar, "destination")
    qtbot.keyClicks(bar.replace_field, "city")
    qtbot.mouseClick(bar.replace_all_button, Qt.MouseButton.LeftButton)

    parameters = document.agent.metadata.tools[0].parameters
    assert list(parameters["properties"]) == ["city", "nights"]
    assert parameters["required"] == ["city"]
    assert document.undo_stack.count() == steps + 1
    document.undo_stack.undo()
    assert "destination" in document.agent.metadata.tools[0].parameters["properties"]


def test_f3_with_the_bar_closed_opens_it_on_the_last_search_of_the_text_as_it_is_now(
    qtbot: QtBot,
) -> None:
    pane, _document = make_pane(qtbot)
    bar = pane.find_bar
    press(qtbot, pane.editor, "Ctrl+F")
    search(qtbot, bar, "trip")
    press(qtbot, bar.search_field, "Escape")
    pane.editor.selectAll()
    qtbot.keyClicks(pane.editor, "One trip.")

    press(qtbot, pane.editor, "F3")

    assert bar.isVisible()
    assert bar.count_label.text() == "1 of 1"
    assert pane.editor.textCursor().selectionStart() == len("One ")
