"""The tool editor's Tests tab: a tool's test cases listed with their last results and edited.

Real widgets offscreen, typed into with key clicks; every edit goes through the agent document
(one undo step each, typing merged); last results come from the real history store, written by
a real run of the results matrix against a fake model server, or row by row.
"""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from PySide6.QtCore import QPoint, QPointF, Qt
from PySide6.QtGui import QWheelEvent
from PySide6.QtWidgets import QApplication, QLineEdit, QSpinBox, QWidget
from pytestqt.qtbot import QtBot

from app.document.agent_document import AgentDocument
from app.errors import reporter
from app.tool_editor.case_table import CaseTableModel, latest_results
from app.tool_editor.editor import ToolEditor
from app.tool_editor.tests_panel import EMPTY_TEXT, TestsPanel
from mcp_export.history.store import HistoryStore
from schema_types.files.agent_file import load_agent
from tests.app._tables import pick_row
from tests.app._windows import studio_window
from tests.fakes._script import Reply, RequestBody, text
from tests.fakes.mcp_clients import book_tool, write_agent
from tests.fakes.openai_server import FakeOpenAIServer

WAIT_MS = 10_000
RUN_MS = 30_000

CASES: list[dict[str, Any]] = [
    {
        "name": "oslo",
        "arguments": {"destination": "Oslo"},
        "expect": {"contains": ["AF123"], "maxTurns": 3, "futureKey": {"kept": True}},
        "note": "a key the studio does not know",
    },
    {"name": "rome", "arguments": {"destination": "Rome", "passengers": 2}},
]


def agent_file(tmp_path: Path, cases: list[dict[str, Any]] | None = None, **kwargs: Any) -> Path:
    return write_agent(
        tmp_path / "desk.agent.yaml",
        tools=[book_tool("first"), book_tool(tests=CASES if cases is None else cases)],
        **kwargs,
    )


def open_editor(
    qtbot: QtBot, document: AgentDocument, store: HistoryStore | None = None
) -> ToolEditor:
    editor = ToolEditor(
        document,
        document.agent.tools[1],
        history=(lambda: store) if store is not None else None,
    )
    qtbot.addWidget(editor)
    editor.resize(1200, 900)
    with qtbot.waitActive(editor, timeout=WAIT_MS):
        editor.show()
        editor.activateWindow()  # focus moves, and seals typing runs, only in the active window
    return editor


def show_tests(qtbot: QtBot, editor: ToolEditor) -> TestsPanel:
    editor.sections.setCurrentWidget(editor.tests)
    qtbot.waitUntil(lambda: editor.tests.isVisible(), timeout=WAIT_MS)
    return editor.tests


def click(qtbot: QtBot, widget: QWidget) -> None:
    qtbot.mouseClick(widget, Qt.MouseButton.LeftButton)


def type_into(qtbot: QtBot, widget: QWidget, keys: str) -> None:
    """Focus ``widget`` as a click would and type ``keys`` at its end (``\n``: Return)."""
    widget.setFocus(Qt.FocusReason.MouseFocusReason)
    qtbot.keyClick(widget, Qt.Key.Key_End, Qt.KeyboardModifier.ControlModifier)
    for number, line in enumerate(keys.split("\n")):
        if number:
            qtbot.keyClick(widget, Qt.Key.Key_Return)
        qtbot.keyClicks(widget, line)


def cases_of(document: AgentDocument) -> list[Any]:
    return list(document.agent.tools[1].tests)


def test_a_tool_without_cases_says_what_they_are_and_new_case_starts_from_the_samples(
    qtbot: QtBot, tmp_path: Path
) -> None:
    document = AgentDocument.load(agent_file(tmp_path, cases=[]))
    editor = open_editor(qtbot, document)
    assert editor.sections.tabText(editor.sections.indexOf(editor.tests)) == "Tests"
    panel = show_tests(qtbot, editor)
    assert panel.stack.currentIndex() == 0 and panel.empty_label.text() == EMPTY_TEXT
    assert "Save as test case" in panel.empty_label.text()
    assert not panel.run_all_button.isEnabled() and not panel.delete_button.isEnabled()

    qtbot.mouseClick(panel.new_button, Qt.MouseButton.LeftButton, pos=QPoint(12, 8))

    (case,) = cases_of(document)
    assert case.name == "Case 1"
    assert case.arguments == editor.template.sample_panel.arguments() != {}
    assert panel.stack.currentIndex() == 1 and panel.model.rowCount() == 1
    assert (
        panel.selected_case() == "Case 1"
        and editor.sections.tabText(editor.sections.indexOf(editor.tests)) == "Tests (1)"
    )
    assert panel.editor.name_edit.hasFocus() and panel.editor.name_edit.selectedText() == "Case 1"
    assert panel.editor.arguments.arguments() == case.arguments

    document.undo_stack.undo()
    assert cases_of(document) == [] and panel.stack.currentIndex() == 0
    assert editor.sections.tabText(editor.sections.indexOf(editor.tests)) == "Tests"
    document.undo_stack.redo()
    assert panel.selected_case() == "Case 1"


def test_editing_arguments_in_the_form_is_one_undo_step_per_field(
    qtbot: QtBot, tmp_path: Path
) -> None:
    document = AgentDocument.load(agent_file(tmp_path))
    panel = show_tests(qtbot, open_editor(qtbot, document))
    form = panel.editor.arguments.form
    assert panel.selected_case() == "oslo"
    assert form.field("destination").property("text") == "Oslo"
    steps = document.undo_stack.count()

    type_into(qtbot, form.field("destination"), " Gardermoen")
    type_into(qtbot, form.field("passengers"), "3")

    assert cases_of(document)[0].arguments == {"destination": "Oslo Gardermoen", "passengers": 3}
    assert document.undo_stack.count() == steps + 2
    document.undo_stack.undo()
    assert cases_of(document)[0].arguments == {"destination": "Oslo Gardermoen"}
    assert form.field("passengers").property("text") == ""
    document.undo_stack.undo()
    assert cases_of(document)[0].arguments == {"destination": "Oslo"}
    assert form.field("destination").property("text") == "Oslo"
    document.undo_stack.redo()
    document.undo_stack.redo()
    assert form.field("passengers").property("text") == "3"
    assert cases_of(document)[1].arguments == {"destination": "Rome", "passengers": 2}


def test_typing_an_expectation_is_one_step_and_undo_from_elsewhere_shows_in_the_field(
    qtbot: QtBot, tmp_path: Path
) -> None:
    document = AgentDocument.load(agent_file(tmp_path))
    panel = show_tests(qtbot, open_editor(qtbot, document))
    fields = panel.editor.fields
    contains, matches = fields["contains"].widget, fields["matches"].widget
    assert contains.property("plainText") == "AF123"
    steps = document.undo_stack.count()

    type_into(qtbot, contains, "\nOslo")
    type_into(qtbot, matches, "(?i)booked")
    turns = fields["max_turns"].widget
    assert isinstance(turns, QSpinBox) and turns.value() == 3
    turns.setFocus(Qt.FocusReason.MouseFocusReason)
    qtbot.keyClick(turns, Qt.Key.Key_Up)

    expect = cases_of(document)[0].expect
    assert (expect.contains, expect.matches, expect.max_turns) == (
        ["AF123", "Oslo"],
        "(?i)booked",
        4,
    )
    assert document.undo_stack.count() == steps + 3
    assert panel.model.index(0, 1).data() == (
        "contains “AF123” +1 · matches /(?i)booked/ · ≤ 4 turns"
    )
    # A long pattern shows its start in the Expects column, and whole in the cell's tool tip.
    type_into(qtbot, matches, r" (flight|ticket) to Oslo, seat \d+[A-F]")
    index = panel.model.index(0, 1)
    assert "matches /(?i)booked (flight|tick…/" in index.data()
    assert r"matches /(?i)booked (flight|ticket) to Oslo, seat \d+[A-F]/" in index.data(
        Qt.ItemDataRole.ToolTipRole
    )
    document.undo_stack.undo()
    document.undo_stack.undo()
    assert turns.value() == 3
    document.undo_stack.undo()
    assert matches.property("text") == "" and cases_of(document)[0].expect.matches is None
    document.undo_stack.undo()
    assert contains.property("plainText") == "AF123"
    document.undo_stack.redo()
    assert contains.property("plainText") == "AF123\nOslo"

    turns.setFocus(Qt.FocusReason.MouseFocusReason)
    qtbot.keyClick(turns, Qt.Key.Key_Home)
    for _ in range(3):
        qtbot.keyClick(turns, Qt.Key.Key_Down)
    assert turns.text() == "off" and cases_of(document)[0].expect.max_turns is None
    assert "maxTurns" not in cases_of(document)[0].expect.to_data()


def test_an_invalid_pattern_or_schema_stays_in_its_field_and_the_agent_keeps_the_last_valid(
    qtbot: QtBot, tmp_path: Path
) -> None:
    document = AgentDocument.load(agent_file(tmp_path))
    panel = show_tests(qtbot, open_editor(qtbot, document))
    matches, schema = panel.editor.fields["matches"], panel.editor.fields["json_schema"]

    type_into(qtbot, matches.widget, "(?i)window")
    type_into(qtbot, matches.widget, " (seat")

    assert matches.widget.property("text") == "(?i)window (seat"
    assert matches.problem.isVisible()
    assert matches.problem.text().startswith("Not saved: not a regular expression:")
    assert cases_of(document)[0].expect.matches == "(?i)window "  # the last valid one
    type_into(qtbot, matches.widget, ")")
    assert not matches.problem.isVisible()
    assert cases_of(document)[0].expect.matches == "(?i)window (seat)"

    type_into(qtbot, schema.widget, '{"type": "nope"')
    assert schema.problem.text().startswith("Not saved: line 1, column 16:")
    type_into(qtbot, schema.widget, "}")
    assert schema.problem.text().startswith("Not saved: not a valid JSON Schema:")
    assert cases_of(document)[0].expect.json_schema is None
    schema.widget.setFocus(Qt.FocusReason.MouseFocusReason)
    qtbot.keyClick(schema.widget, Qt.Key.Key_A, Qt.KeyboardModifier.ControlModifier)
    qtbot.keyClicks(schema.widget, '{"type": "object"}')
    assert not schema.problem.isVisible()
    assert cases_of(document)[0].expect.json_schema == {"type": "object"}

    calls = panel.editor.fields["tool_calls"]
    type_into(qtbot, calls.widget, 'time__now {"timezone": ')
    assert calls.problem.text().startswith("Not saved: line 1: after the tool name")
    type_into(qtbot, calls.widget, '"UTC"}')
    assert [c.model_dump() for c in cases_of(document)[0].expect.tool_calls] == [
        {"name": "time__now", "arguments": {"timezone": "UTC"}}
    ]
    assert reporter().history == []  # nothing was refused by the document


def test_renaming_duplicating_and_deleting_cases_each_undo_in_one_step(
    qtbot: QtBot, tmp_path: Path
) -> None:
    document = AgentDocument.load(agent_file(tmp_path))
    panel = show_tests(qtbot, open_editor(qtbot, document))
    name = panel.editor.name_edit

    name.setFocus(Qt.FocusReason.MouseFocusReason)
    name.selectAll()
    qtbot.keyClicks(name, "rome")
    assert panel.editor.name_problem.text() == "Another case of book_flight is called rome."
    qtbot.keyClick(name, Qt.Key.Key_Return)
    assert [c.name for c in cases_of(document)] == ["oslo", "rome"]
    qtbot.keyClicks(name, " by train")
    qtbot.keyClick(name, Qt.Key.Key_Return)
    assert [c.name for c in cases_of(document)] == ["rome by train", "rome"]
    assert panel.selected_case() == "rome by train"

    click(qtbot, panel.duplicate_button)
    assert [c.name for c in cases_of(document)] == ["rome by train", "rome", "rome by train copy"]
    assert panel.selected_case() == "rome by train copy"
    assert cases_of(document)[2].expect == cases_of(document)[0].expect

    panel.select_case("rome")
    click(qtbot, panel.delete_button)
    assert [c.name for c in cases_of(document)] == ["rome by train", "rome by train copy"]
    assert panel.selected_case() == "rome by train copy"  # the next one
    document.undo_stack.undo()
    assert [c.name for c in cases_of(document)] == ["rome by train", "rome", "rome by train copy"]
    document.undo_stack.undo()
    assert panel.selected_case() == "rome"  # the copy went: the case now in its row
    document.undo_stack.undo()
    assert [c.name for c in cases_of(document)] == ["oslo", "rome"]
    pick_row(panel.table, 0)
    assert panel.editor.name_edit.text() == "oslo" and panel.selected_case() == "oslo"


def test_the_saved_file_round_trips_with_the_keys_the_studio_does_not_know(
    qtbot: QtBot, tmp_path: Path
) -> None:
    path = agent_file(tmp_path, api_key=None)
    document = AgentDocument.load(path)
    panel = show_tests(qtbot, open_editor(qtbot, document))
    type_into(qtbot, panel.editor.fields["not_contains"].widget, "sorry\n  padded  ")
    check = panel.editor.fields["is_error"].widget
    qtbot.mouseClick(check, Qt.MouseButton.LeftButton, pos=QPoint(8, check.height() // 2))
    document.save()

    saved = load_agent(path).metadata.tools[1].tests
    assert [case.to_data() for case in saved] == [
        {
            "name": "oslo",
            "arguments": {"destination": "Oslo"},
            "expect": {
                "contains": ["AF123"],
                "maxTurns": 3,
                "futureKey": {"kept": True},
                "notContains": ["sorry", "  padded  "],
                "isError": True,
            },
            "note": "a key the studio does not know",
        },
        CASES[1],
    ]
    assert panel.editor.fields["not_contains"].widget.property("plainText") == ("sorry\n  padded  ")
    reopened = AgentDocument.load(path)
    again = show_tests(qtbot, open_editor(qtbot, reopened))
    assert again.editor.fields["not_contains"].widget.property("plainText") == (
        'sorry\n"  padded  "'
    )


def _row(store: HistoryStore, case: str, model: str, passed: bool, **row: Any) -> None:
    values: dict[str, Any] = {
        "matrix_id": "m1",
        "agent_path": None,
        "agent_name": "Travel Desk",
        "tool_name": "book_flight",
        "attempt": 1,
        "failures": [] if passed else ["contains[0]: 'AF123' is not in the answer"],
        "answer": "…",
        "is_error": False,
        "duration_ms": 12.0,
        "tokens_in": 1,
        "tokens_out": 1,
        "turns": 1,
        "verdict": None,
    }
    values.update(row)
    store.add_case_run(case_name=case, model=model, passed=passed, **values)


def test_the_last_result_per_model_comes_from_the_history_rows(
    qtbot: QtBot, tmp_path: Path
) -> None:
    path = agent_file(tmp_path)
    store = HistoryStore(tmp_path / "history.db")
    where = str(path)
    _row(store, "oslo", "openai:a", False, matrix_id="old", agent_path=where)
    _row(store, "oslo", "openai:a", True, matrix_id="new", agent_path=where)
    _row(store, "oslo", "vllm:b", False, matrix_id="new", agent_path=where)
    _row(store, "rome", "vllm:b", True, matrix_id="new", agent_path=where, attempt=1)
    _row(store, "rome", "vllm:b", False, matrix_id="new", agent_path=where, attempt=2)
    _row(store, "oslo", "openai:c", True, agent_path=where, tool_name="first")
    _row(store, "oslo", "openai:d", True, agent_path=str(tmp_path / "other.agent.yaml"))
    document = AgentDocument.load(path)
    panel = show_tests(qtbot, open_editor(qtbot, document, store))

    model = panel.model
    assert model.models() == ["openai:a", "vllm:b"]
    assert [model.headerData(c, Qt.Orientation.Horizontal, 0) for c in range(4)] == [
        "Case",
        "Expects",
        "openai:a",
        "vllm:b",
    ]
    cells = [[model.index(row, column).data() for column in (2, 3)] for row in (0, 1)]
    assert cells == [
        ["✓ passed · just now", "✗ failed · just now"],
        ["—", "✗ 1/2 · just now"],
    ]
    tip = model.index(0, 3).data(Qt.ItemDataRole.ToolTipRole)
    assert tip.startswith("Failed on vllm:b, ")
    assert tip.endswith("\ncontains[0]: 'AF123' is not in the answer")
    assert model.index(0, 2).data(Qt.ItemDataRole.ForegroundRole) != model.index(0, 3).data(
        Qt.ItemDataRole.ForegroundRole
    )
    store.close()


def test_results_older_than_a_day_say_when_and_no_run_says_so() -> None:
    model = CaseTableModel()
    model.now = datetime(2026, 6, 1, 12, tzinfo=UTC)
    assert model.columnCount() == 3
    assert model.headerData(2, Qt.Orientation.Horizontal, 0) == "Last run"
    from schema_types.cases import TestCase

    model.set_cases([TestCase(name="a")])
    assert model.index(0, 2).data() == "not run yet"
    assert model.index(0, 1).data() == "call succeeds"
    assert latest_results([], "t") == {}


def test_run_case_and_run_all_open_the_results_matrix_and_its_results_show_in_the_tab(
    qtbot: QtBot, qasync_loop: asyncio.AbstractEventLoop, tmp_path: Path
) -> None:
    from app.test_cases.matrix_tab import MatrixTab

    def respond(body: RequestBody) -> Reply:
        return text("Booked AF123." if "Oslo" in body.last_user_text else "Sold out.")

    with FakeOpenAIServer(responder=respond) as server:
        window = studio_window(qtbot)
        document = window.open_file(agent_file(tmp_path, base_url=server.base_url))
        assert document is not None
        editor = window.open_tool_tab(document, document.agent.tools[1])
        assert isinstance(editor, ToolEditor)
        panel = show_tests(qtbot, editor)
        assert panel.model.index(0, 2).data() == "not run yet"

        click(qtbot, panel.run_button)
        matrix = window.tabs.currentWidget()
        assert isinstance(matrix, MatrixTab) and matrix.selection == [("book_flight", "oslo")]
        qtbot.waitUntil(lambda: matrix.last_end is not None and not matrix.busy, timeout=RUN_MS)
        window.tabs.setCurrentWidget(editor)
        qtbot.waitUntil(lambda: panel.model.models() == ["openai:fake-model"], timeout=WAIT_MS)
        assert panel.model.index(0, 2).data() == "✓ passed · just now"
        assert panel.model.index(1, 2).data() == "—"

        click(qtbot, panel.run_all_button)
        every = window.tabs.currentWidget()
        assert isinstance(every, MatrixTab) and every is not matrix
        assert every.selection == [("book_flight", "oslo"), ("book_flight", "rome")]
        qtbot.waitUntil(lambda: every.last_end is not None and not every.busy, timeout=RUN_MS)
        window.tabs.setCurrentWidget(editor)
        qtbot.waitUntil(lambda: panel.model.index(1, 2).data() != "—", timeout=WAIT_MS)
        assert panel.model.index(1, 2).data() == "✓ passed · just now"
        window.close()


def test_undo_keys_in_the_form_act_on_the_agent_in_the_studio(qtbot: QtBot, tmp_path: Path) -> None:
    window = studio_window(qtbot)
    document = window.open_file(agent_file(tmp_path))
    assert document is not None
    editor = window.open_tool_tab(document, document.agent.tools[1])
    assert isinstance(editor, ToolEditor)
    panel = show_tests(qtbot, editor)
    field = panel.editor.arguments.form.field("destination")
    assert isinstance(field, QLineEdit)

    type_into(qtbot, field, "-Torp")
    assert cases_of(document)[0].arguments == {"destination": "Oslo-Torp"}
    qtbot.keyClick(field, Qt.Key.Key_Z, Qt.KeyboardModifier.ControlModifier)
    assert cases_of(document)[0].arguments == {"destination": "Oslo"}
    assert field.text() == "Oslo"
    qtbot.keyClick(
        field, Qt.Key.Key_Z, Qt.KeyboardModifier.ControlModifier | Qt.KeyboardModifier.ShiftModifier
    )
    assert field.text() == "Oslo-Torp"
    window.close()


def test_the_wheel_over_a_limit_not_being_edited_changes_nothing(
    qtbot: QtBot, tmp_path: Path
) -> None:
    document = AgentDocument.load(agent_file(tmp_path))
    panel = show_tests(qtbot, open_editor(qtbot, document))
    turns = panel.editor.fields["max_turns"].widget
    steps = document.undo_stack.count()

    def wheel() -> None:
        centre = QPointF(turns.rect().center())
        event = QWheelEvent(
            centre,
            QPointF(turns.mapToGlobal(turns.rect().center())),
            QPoint(0, 0),
            QPoint(0, 120),
            Qt.MouseButton.NoButton,
            Qt.KeyboardModifier.NoModifier,
            Qt.ScrollPhase.NoScrollPhase,
            False,
        )
        QApplication.sendEvent(turns, event)

    wheel()
    assert cases_of(document)[0].expect.max_turns == 3
    assert document.undo_stack.count() == steps
    turns.setFocus(Qt.FocusReason.MouseFocusReason)
    wheel()
    assert cases_of(document)[0].expect.max_turns == 4


def test_arguments_the_form_cannot_show_are_edited_as_json_and_kept(
    qtbot: QtBot, tmp_path: Path
) -> None:
    kept = {"name": "kept", "arguments": {"destination": "Oslo", "seat": "14A"}}
    document = AgentDocument.load(agent_file(tmp_path, cases=[kept]))
    panel = show_tests(qtbot, open_editor(qtbot, document))
    arguments = panel.editor.arguments

    assert arguments.unshown() == ["seat"]
    assert arguments.json_button.isChecked() and not arguments.json_button.isEnabled()
    assert arguments.pages.currentWidget() is arguments.json_edit
    assert "The form cannot show seat" in arguments.note.text()
    arguments.json_edit.setFocus(Qt.FocusReason.MouseFocusReason)
    qtbot.keyClick(arguments.json_edit, Qt.Key.Key_A, Qt.KeyboardModifier.ControlModifier)
    qtbot.keyClicks(arguments.json_edit, '{"destination": "Bergen", "seat": "14A"')
    assert arguments.note.text().startswith("Not saved: line 1, column")
    assert cases_of(document)[0].arguments == kept["arguments"]
    qtbot.keyClicks(arguments.json_edit, "}")
    assert cases_of(document)[0].arguments == {"destination": "Bergen", "seat": "14A"}


def test_a_case_may_keep_arguments_the_tool_refuses_and_says_so(
    qtbot: QtBot, tmp_path: Path
) -> None:
    document = AgentDocument.load(agent_file(tmp_path))
    panel = show_tests(qtbot, open_editor(qtbot, document))
    arguments = panel.editor.arguments
    destination = arguments.form.field("destination")
    destination.setFocus(Qt.FocusReason.MouseFocusReason)
    qtbot.keyClick(destination, Qt.Key.Key_A, Qt.KeyboardModifier.ControlModifier)
    qtbot.keyClick(destination, Qt.Key.Key_Delete)

    assert cases_of(document)[0].arguments == {}  # a case that expects an error may want this
    assert arguments.note.text() == (
        "A call with these arguments is refused (1 problem): fine when the case expects an error."
    )
    assert arguments.form.editor("destination").problem() != ""
