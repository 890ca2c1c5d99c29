"""Saving a request typed in a chat as a caller case: the chat tab's button and menus, the dialog.

The chat is real: the chat tab's OpenAI provider against ``FakeOpenAIServer`` on loopback. The
person types requests into the chat's input and presses Enter, clicks "Save as caller case…",
chooses in the dialog with clicks and keys, and clicks Save; the open agent then holds the case
(one undo step) and the saved file has it.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import QPoint, Qt
from PySide6.QtWidgets import QDialogButtonBox, QLabel
from pytestqt.qtbot import QtBot

from app.chat import ChatTab
from app.document.agent_document import AgentDocument
from app.errors import reporter
from app.save_caller_case_dialog import SaveCallerCaseDialog
from schema_types.files.agent_file import load_agent
from tests.app.test_caller_case_editor import choose
from tests.app.test_chat_tab import RUN_MS, wait_for
from tests.app.test_save_case import _double_click
from tests.fakes._script import Reply, RequestBody, text
from tests.fakes.mcp_clients import book_tool, write_agent
from tests.fakes.openai_server import FakeOpenAIServer

FIRST = "Book me, my wife and our 7-year-old to Lisbon on 1 June."
SECOND = "Actually make it Porto, window seats please."


@pytest.fixture
def model() -> Iterator[FakeOpenAIServer]:
    def respond(body: RequestBody) -> Reply:
        return text(f"Booked TP1351 for: {body.last_user_text}")

    with FakeOpenAIServer(responder=respond) as server:
        yield server


@pytest.fixture
def make_tab(
    qtbot: QtBot, qasync_loop: asyncio.AbstractEventLoop
) -> Iterator[Callable[..., ChatTab]]:
    made: list[ChatTab] = []

    def make(document: AgentDocument, **options: Any) -> ChatTab:
        options.setdefault("title", "Chat")
        tab = ChatTab(document, **options)
        qtbot.addWidget(tab)
        tab.resize(900, 640)
        tab.show()
        made.append(tab)
        return tab

    yield make
    for tab in made:
        wait_for(qtbot, tab.aclose())


def agent(tmp_path: Path, base_url: str) -> AgentDocument:
    hotel = book_tool("book_hotel", description="Books a hotel room.")
    path = write_agent(
        tmp_path / "desk.agent.yaml", tools=[book_tool(), hotel], base_url=base_url, api_key=None
    )
    return AgentDocument.load(path)


def type_request(qtbot: QtBot, tab: ChatTab, request: str) -> None:
    tab.input.setFocus(Qt.FocusReason.MouseFocusReason)
    with qtbot.waitSignal(tab.finished, timeout=RUN_MS):
        qtbot.keyClicks(tab.input, request)
        qtbot.keyClick(tab.input, Qt.Key.Key_Return)


def open_dialog(qtbot: QtBot, tab: ChatTab) -> SaveCallerCaseDialog:
    qtbot.mouseClick(tab.save_caller_button, Qt.MouseButton.LeftButton)
    dialog = tab.findChild(SaveCallerCaseDialog)
    assert isinstance(dialog, SaveCallerCaseDialog)
    assert dialog.isVisible() and dialog.isModal()
    return dialog


def test_a_request_typed_in_a_chat_becomes_a_caller_case_and_undo_takes_it_back(
    qtbot: QtBot,
    model: FakeOpenAIServer,
    make_tab: Callable[..., ChatTab],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    document = agent(tmp_path, model.base_url)
    tab = make_tab(document)
    assert tab.save_caller_button.isVisible() and not tab.save_caller_button.isEnabled()
    assert tab.save_caller_button.text() == "Save as caller case…"

    type_request(qtbot, tab, FIRST)
    type_request(qtbot, tab, SECOND)
    assert tab.requests == [FIRST, SECOND]
    assert tab.save_caller_button.isEnabled()
    _double_click(qtbot, _answer_view_of_last(tab), "TP1351")
    steps = document.undo_stack.count()

    dialog = open_dialog(qtbot, tab)
    assert dialog.request_edit.toPlainText() == SECOND  # the newest first
    assert dialog.request_choice.isVisible()
    assert dialog.contains_edit.text() == "TP1351"  # what was selected in the answer
    assert dialog.tool_name == "book_flight"
    assert dialog.name_edit.text() == "Actually make it Porto, window seats…"
    choose(qtbot, dialog.request_choice, "Book me")
    assert dialog.request_edit.toPlainText() == FIRST
    assert dialog.name_edit.text() == "Book me, my wife and our 7-year-old to…"
    choose(qtbot, dialog.tool_choice, "book_hotel")
    assert dialog.picks.currentText() == "book_hotel (this tool)"
    choose(qtbot, dialog.picks, "book_flight")

    save = dialog.buttons.button(QDialogButtonBox.StandardButton.Save)
    dialog.fills.setFocus(Qt.FocusReason.MouseFocusReason)
    qtbot.keyClicks(dialog.fills, '{"destination": "Lisbon"')
    assert not save.isEnabled()
    assert dialog.note.text().startswith("Caller fills: line 1, column")
    qtbot.keyClicks(dialog.fills, ', "seat": "window"}')
    assert save.isEnabled()
    assert dialog.note.text() == (
        "seat is not a parameter of book_flight: a caller that follows its schema never fills it."
    )
    dialog.fills.selectAll()
    qtbot.keyClicks(dialog.fills, '{"destination": "Lisbon"}')
    assert dialog.note.text() == ""
    with qtbot.waitSignal(dialog.finished, timeout=10_000):
        qtbot.mouseClick(save, Qt.MouseButton.LeftButton)

    (case,) = document.agent.tools[1].tests
    assert case.to_data() == {
        "name": "Book me, my wife and our 7-year-old to…",
        "ask": FIRST,
        "expect": {
            "picks": "book_flight",
            "arguments": {"destination": "Lisbon"},
            "contains": ["TP1351"],
        },
    }
    assert document.undo_stack.count() == steps + 1
    assert reporter().history[-1].message == (
        "Saved caller case “Book me, my wife and our 7-year-old to…” to book_hotel"
    )
    document.undo_stack.undo()
    assert document.agent.tools[1].tests == []
    document.undo_stack.redo()
    document.save()
    assert document.path is not None
    (saved,) = load_agent(document.path).metadata.tools[1].tests
    assert saved.ask == FIRST and saved.expect.picks == "book_flight"


def _answer_view_of_last(tab: ChatTab) -> Any:
    from app.chat.transcript import AssistantBlock

    blocks = [b for b in tab.transcript.blocks() if isinstance(b, AssistantBlock)]
    return blocks[-1].labels[-1]


def test_a_tool_tests_filled_prompt_is_no_request_and_a_blank_request_cannot_be_saved(
    qtbot: QtBot,
    model: FakeOpenAIServer,
    make_tab: Callable[..., ChatTab],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    document = agent(tmp_path, model.base_url)
    tab = make_tab(document, tool_name="book_hotel", arguments={"destination": "Oslo"})
    assert not tab.save_caller_button.isVisible()  # the test's header row is full: menus offer it
    with qtbot.waitSignal(tab.finished, timeout=RUN_MS):
        assert tab.start_test("Book a flight to Oslo for 1 passenger(s).")
    assert tab.requests == [] and not tab.save_caller_action.isEnabled()
    assert tab.save_as_caller_case() is None

    type_request(qtbot, tab, "And a room near the station?")
    assert tab.save_caller_action.isEnabled()
    menu = _answer_view_of_last(tab).context_menu(QPoint(4, 4))
    (entry,) = [a for a in menu.actions() if a.text() == "Save as caller case…"]
    entry.trigger()
    dialog = tab.findChild(SaveCallerCaseDialog)
    assert isinstance(dialog, SaveCallerCaseDialog)
    assert not dialog.request_choice.isVisible()  # one request: nothing to choose
    assert dialog.tool_name == "book_hotel"  # the tool under test
    save = dialog.buttons.button(QDialogButtonBox.StandardButton.Save)
    dialog.request_edit.setFocus(Qt.FocusReason.MouseFocusReason)
    qtbot.keyClick(dialog.request_edit, Qt.Key.Key_A, Qt.KeyboardModifier.ControlModifier)
    qtbot.keyClick(dialog.request_edit, Qt.Key.Key_Delete)
    assert not save.isEnabled()
    assert dialog.note.text() == "Type the request: the caller model gets nothing else."
    qtbot.keyClicks(dialog.request_edit, "A room in Oslo")
    assert dialog.name_edit.text() == "A room in Oslo"
    with qtbot.waitSignal(dialog.finished, timeout=10_000):
        qtbot.mouseClick(save, Qt.MouseButton.LeftButton)
    (case,) = document.agent.tools[1].tests
    assert case.to_data() == {"name": "A room in Oslo", "ask": "A room in Oslo"}


def test_from_a_plain_chat_the_case_goes_to_the_tool_the_request_speaks_of(
    qtbot: QtBot, tmp_path: Path
) -> None:
    document = agent(tmp_path, "http://127.0.0.1:9")
    dialog = SaveCallerCaseDialog(document, ["I need a hotel room in Oslo, please"])
    qtbot.addWidget(dialog)
    intro = [
        label.text() for label in dialog.findChildren(QLabel) if "caller model" in label.text()
    ]
    assert intro and intro[0].startswith("A caller model (the client's model:")
    assert dialog.tool_name == "book_hotel"  # "hotel" and "room" are in its description
    assert dialog.picks.currentText() == "book_hotel (this tool)"
    words = SaveCallerCaseDialog(document, ["Hello there"])
    qtbot.addWidget(words)
    assert words.tool_name == "book_flight"  # no word in common: the agent's first tool
