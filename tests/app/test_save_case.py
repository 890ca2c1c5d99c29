"""Saving a finished tool test of a chat tab as a test case of its tool, and the dialog itself.

The run is real: the chat tab's OpenAI provider against ``FakeOpenAIServer`` on loopback. The
person's path is followed with real widgets: a word double-clicked (or a phrase selected) in the
answer, the tab's "Save as test case…" button, the dialog's Save button; then the open agent holds
the case, the status bar line says so, undo takes it back and the saved file has it.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import QPoint, Qt
from PySide6.QtGui import QTextCursor
from PySide6.QtWidgets import QDialogButtonBox
from pytestqt.qtbot import QtBot

from app.chat import ChatTab
from app.chat.transcript import AssistantBlock, MarkdownView, markdown_source
from app.document.agent_document import AgentDocument
from app.document.test_cases import add_test_case, new_case
from app.errors import reporter
from app.save_case_dialog import SaveCaseDialog, default_case_name
from mcp_export.session.events import FinalAnswer, SessionFailed
from schema_types.files.agent_file import load_agent
from tests.app.test_chat_tab import RUN_MS, run_turn, wait_for
from tests.fakes._script import text
from tests.fakes.mcp_clients import write_agent
from tests.fakes.openai_server import FakeOpenAIServer

ANSWER = "It is **late** in UTC; booked AF123 to Oslo."
PROMPT = "Book a flight to Oslo for 2 passenger(s)."
ARGUMENTS = {"destination": "Oslo", "passengers": 2}
SAVE_CASE = "Save as test case…"


@pytest.fixture
def model() -> Iterator[FakeOpenAIServer]:
    with FakeOpenAIServer() as server:
        yield server


@pytest.fixture
def make_tab(
    qtbot: QtBot, qasync_loop: asyncio.AbstractEventLoop
) -> Iterator[Callable[..., ChatTab]]:
    made: list[ChatTab] = []

    def make(path: Path, **options: Any) -> ChatTab:
        options.setdefault("title", "book_flight")
        tab = ChatTab(AgentDocument.load(path), **options)
        qtbot.addWidget(tab)
        tab.resize(820, 640)
        tab.show()
        made.append(tab)
        return tab

    yield make
    for tab in made:
        wait_for(qtbot, tab.aclose())


def _answer_view(tab: ChatTab) -> MarkdownView:
    (block,) = [b for b in tab.transcript.blocks() if isinstance(b, AssistantBlock)]
    return block.labels[-1]


def _select(view: MarkdownView, shown: str) -> None:
    start = view.toPlainText().index(shown)
    cursor = view.textCursor()
    cursor.setPosition(start)
    cursor.setPosition(start + len(shown), QTextCursor.MoveMode.KeepAnchor)
    view.setTextCursor(cursor)


def _double_click(qtbot: QtBot, view: MarkdownView, word: str) -> None:
    cursor = view.textCursor()
    cursor.setPosition(view.toPlainText().index(word) + 1)
    point = view.cursorRect(cursor).center()
    qtbot.mouseDClick(view.viewport(), Qt.MouseButton.LeftButton, pos=point)


def _open_dialog(qtbot: QtBot, owner: Any, button: Any) -> SaveCaseDialog:
    qtbot.mouseClick(button, Qt.MouseButton.LeftButton)
    dialog = owner.findChild(SaveCaseDialog)
    assert isinstance(dialog, SaveCaseDialog)
    assert dialog.isVisible() and dialog.isModal()
    return dialog


def _click_save(qtbot: QtBot, dialog: SaveCaseDialog) -> None:
    save = dialog.buttons.button(QDialogButtonBox.StandardButton.Save)
    with qtbot.waitSignal(dialog.finished, timeout=10_000):
        qtbot.mouseClick(save, Qt.MouseButton.LeftButton)


def test_a_finished_tool_test_saves_the_selected_answer_text_as_a_case_undo_takes_it_back(
    qtbot: QtBot,
    model: FakeOpenAIServer,
    make_tab: Callable[..., ChatTab],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")  # the studio saves no literal key
    model.enqueue(text(ANSWER, chunks=3))
    path = write_agent(tmp_path / "a.agent.yaml", base_url=model.base_url, api_key=None)
    tab = make_tab(path, tool_name="book_flight", arguments=ARGUMENTS)
    assert tab.save_case_button.isVisible() and not tab.save_case_button.isEnabled()
    with qtbot.waitSignal(tab.finished, timeout=RUN_MS) as finished:
        assert tab.start_test(PROMPT)
        assert not tab.save_case_button.isEnabled()  # not while the call runs
    assert isinstance(finished.args[0], FinalAnswer)
    assert tab.save_case_button.isEnabled() and tab.save_case_action.isEnabled()
    view = _answer_view(tab)
    _double_click(qtbot, view, "AF123")
    assert view.textCursor().selectedText() == "AF123"

    dialog = _open_dialog(qtbot, tab, tab.save_case_button)
    assert dialog.windowTitle() == "Save as test case · book_flight"
    assert dialog.name_edit.text() == "Oslo, passengers 2"
    assert dialog.arguments_view.isReadOnly()
    assert '"passengers": 2' in dialog.arguments_view.toPlainText()
    assert dialog.contains_edit.toPlainText() == "AF123"
    assert dialog.contains_note.text() == "✓ This run's answer has it."
    assert dialog.answer_view.toPlainText() == ANSWER  # as the caller got it, Markdown and all
    assert dialog.expect_error is None  # the run succeeded
    _click_save(qtbot, dialog)

    document = tab.document
    tool = document.agent.metadata.tool("book_flight")
    assert tool is not None
    assert [(c.name, c.arguments, c.expect.contains) for c in tool.tests] == [
        ("Oslo, passengers 2", ARGUMENTS, ["AF123"])
    ]
    assert reporter().history[-1].message == "Saved test case “Oslo, passengers 2” to book_flight"
    saved = tmp_path / "saved.agent.yaml"
    document.save(saved)
    on_disk = load_agent(saved).metadata.tool("book_flight")
    assert on_disk is not None
    assert [(c.name, c.arguments, c.expect.contains) for c in on_disk.tests] == [
        ("Oslo, passengers 2", ARGUMENTS, ["AF123"])
    ]
    document.undo_stack.undo()
    tool = document.agent.metadata.tool("book_flight")
    assert tool is not None and tool.tests == []


def test_a_selection_across_formatting_is_saved_as_the_answer_has_it(
    qtbot: QtBot, model: FakeOpenAIServer, make_tab: Callable[..., ChatTab], tmp_path: Path
) -> None:
    model.enqueue(text(ANSWER, chunks=3))
    path = write_agent(tmp_path / "a.agent.yaml", base_url=model.base_url)
    tab = make_tab(path, tool_name="book_flight", arguments=ARGUMENTS)
    assert isinstance(run_turn(qtbot, tab, PROMPT, test=True), FinalAnswer)
    view = _answer_view(tab)
    _select(view, "late in UTC")  # rendered: the ** are formatting on screen
    menu = view.context_menu(QPoint(2, 2))
    (save,) = [action for action in menu.actions() if action.text() == SAVE_CASE]
    assert save.isEnabled() and save in tab.actions()
    save.trigger()
    dialog = tab.findChild(SaveCaseDialog)
    assert isinstance(dialog, SaveCaseDialog)
    assert dialog.contains_edit.toPlainText() == "**late** in UTC"
    assert dialog.contains_note.text() == "✓ This run's answer has it."
    dialog.contains_edit.setPlainText("late in UTC")
    assert dialog.contains_note.text().startswith("⚠ Not in this run's answer")
    # Selecting in the answer the dialog shows fills the field: the other natural path.
    cursor = dialog.answer_view.textCursor()
    cursor.setPosition(ANSWER.index("booked"))
    cursor.setPosition(
        ANSWER.index("booked") + len("booked AF123"), QTextCursor.MoveMode.KeepAnchor
    )
    dialog.answer_view.setTextCursor(cursor)
    assert dialog.contains_edit.toPlainText() == "booked AF123"
    dialog.reject()


def test_a_failed_tool_test_can_expect_an_error(
    qtbot: QtBot, model: FakeOpenAIServer, make_tab: Callable[..., ChatTab], tmp_path: Path
) -> None:
    model.responder = lambda body: text("")
    path = write_agent(tmp_path / "a.agent.yaml", base_url=model.base_url)
    tab = make_tab(path, tool_name="book_flight", arguments={"destination": "Oslo"})
    assert isinstance(run_turn(qtbot, tab, PROMPT, test=True), SessionFailed)
    dialog = _open_dialog(qtbot, tab, tab.save_case_button)
    assert dialog.expect_error is not None and not dialog.expect_error.isChecked()
    assert dialog.contains_note.text() == "This run failed: the case expects the call to succeed."
    assert "the model answered with an empty message" in dialog.answer_view.toPlainText()
    dialog.expect_error.setChecked(True)
    assert dialog.contains_note.text() == "Without it, the case passes whenever the call fails."
    _click_save(qtbot, dialog)
    tool = tab.document.agent.metadata.tool("book_flight")
    assert tool is not None
    (case,) = tool.tests
    assert (case.name, case.expect.is_error, case.expect.contains) == ("Oslo", True, [])


def test_a_plain_chat_offers_no_save_as_test_case(
    qtbot: QtBot, model: FakeOpenAIServer, make_tab: Callable[..., ChatTab], tmp_path: Path
) -> None:
    model.enqueue(text(ANSWER))
    tab = make_tab(write_agent(tmp_path / "a.agent.yaml", base_url=model.base_url), title="Chat")
    assert isinstance(run_turn(qtbot, tab, "Hello"), FinalAnswer)
    assert tab.save_case_button.isHidden()
    assert tab.save_case_action not in tab.actions()
    view = _answer_view(tab)
    _select(view, "AF123")
    assert SAVE_CASE not in [action.text() for action in view.context_menu(QPoint()).actions()]
    assert tab.save_as_test_case() is None
    assert tab.findChild(SaveCaseDialog) is None


def test_a_tool_removed_since_the_run_is_named_and_nothing_is_saved(
    qtbot: QtBot, model: FakeOpenAIServer, make_tab: Callable[..., ChatTab], tmp_path: Path
) -> None:
    model.enqueue(text(ANSWER))
    path = write_agent(tmp_path / "a.agent.yaml", base_url=model.base_url)
    tab = make_tab(path, tool_name="book_flight", arguments=ARGUMENTS)
    assert isinstance(run_turn(qtbot, tab, PROMPT, test=True), FinalAnswer)
    assert tab.document.remove_item(("metadata", "tools", 0), text="Delete tool")
    qtbot.mouseClick(tab.save_case_button, Qt.MouseButton.LeftButton)
    assert tab.findChild(SaveCaseDialog) is None
    report = reporter().history[-1]
    assert report.level == "warning"
    assert report.message.startswith("Travel Desk has no tool book_flight any more")


def test_the_dialog_names_a_taken_name_and_the_saved_case_gets_a_number(
    qtbot: QtBot, tmp_path: Path
) -> None:
    document = AgentDocument.load(write_agent(tmp_path / "a.agent.yaml"))
    assert default_case_name(document, "book_flight", {"x": [1], "y": {}}) == "Case 1"
    nested = {"traveller": {"name": "Ada", "age": 36}, "to": "LIS"}
    assert default_case_name(document, "book_flight", nested) == "Ada, age 36, LIS"
    long = default_case_name(document, "book_flight", {"destination": "Oslo " * 20})
    assert len(long) == 40 and long.endswith("…")
    add_test_case(document, "book_flight", new_case("Oslo", {"destination": "Oslo"}))
    dialog = SaveCaseDialog(document, "book_flight", {"destination": "Oslo"}, answer="Booked.")
    qtbot.addWidget(dialog)
    dialog.show()
    assert dialog.name_edit.text() == "Oslo 2"  # the default is a free name
    assert dialog.name_note.isHidden()
    dialog.name_edit.setText("Oslo")
    assert dialog.name_note.isVisible()
    assert dialog.name_note.text() == "“Oslo” is taken: it saves as “Oslo 2”"
    assert dialog.contains_note.text() == "Without it, the case passes whenever the call succeeds."
    with qtbot.waitSignal(dialog.saved, timeout=10_000) as saved:
        dialog.buttons.button(QDialogButtonBox.StandardButton.Save).click()
    assert saved.args == ["Oslo 2"]
    assert reporter().history[-1].message == (
        "Saved test case “Oslo 2” to book_flight (“Oslo” was taken)"
    )
    tool = document.agent.metadata.tool("book_flight")
    assert tool is not None and [c.name for c in tool.tests] == ["Oslo", "Oslo 2"]
    assert tool.tests[1].expect.contains == []


def test_markdown_source_finds_the_marked_up_text_of_a_rendered_selection() -> None:
    markdown = "Take **AF123** at `09:00`, via [Amsterdam](https://example.org).\n\n1. one\n2. two"
    assert markdown_source(markdown, "AF123") == "AF123"
    assert markdown_source(markdown, "AF123 at 09:00") == "**AF123** at `09:00`"
    assert markdown_source(markdown, "via Amsterdam") == "via [Amsterdam](https://example.org)"
    assert markdown_source(markdown, "one\ntwo") == "one\n2. two"
    assert markdown_source(markdown, "not there") == "not there"
