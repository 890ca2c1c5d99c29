"""The main window's Agent menu: test a tool end to end, chat, history, export.

The model is the local scripted ``FakeOpenAIServer`` (real HTTP on loopback, the real OpenAI
provider); every wait is bounded.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path

import pytest
from PySide6.QtWidgets import QApplication, QLineEdit
from pytestqt.qtbot import QtBot

from app.chat import ChatTab
from app.export_dialog import ExportDialog
from app.history.view import HistoryView
from app.pages.tools_list import ToolsListWidget
from app.test_run import TestToolDialog
from app.tool_editor.editor import ToolEditor
from app.window.main_window import MainWindow
from mcp_export.session.events import FinalAnswer
from tests.app._windows import studio_window
from tests.fakes._script import text
from tests.fakes.mcp_clients import write_agent
from tests.fakes.openai_server import FakeOpenAIServer

RUN_MS = 30_000
TOOL = {
    "name": "greet",
    "description": "Greets someone.",
    "parameters": {
        "type": "object",
        "properties": {"who": {"type": "string", "description": "Whom to greet."}},
        "required": ["who"],
    },
    "prompt": "Say hello to {who}.",
}


@pytest.fixture
def model() -> Iterator[FakeOpenAIServer]:
    with FakeOpenAIServer() as server:
        yield server


def _window(qtbot: QtBot, path: Path) -> MainWindow:
    window = studio_window(qtbot)
    assert window.open_file(path) is not None
    return window


def _close_run_tabs(qtbot: QtBot, window: MainWindow) -> None:
    for tab in window.run_tabs():
        if isinstance(tab, ChatTab):
            future = asyncio.ensure_future(tab.aclose())
            qtbot.waitUntil(future.done, timeout=RUN_MS)
    window.close()


def test_test_run_from_the_tool_editor_opens_a_chat_tab_with_the_answer(
    qtbot: QtBot, qasync_loop: asyncio.AbstractEventLoop, tmp_path: Path, model: FakeOpenAIServer
) -> None:
    model.enqueue(text("Hello, Ada!", chunks=3, usage=(12, 3)))
    path = write_agent(tmp_path / "greeter.agent.yaml", tools=[TOOL], base_url=model.base_url)
    window = _window(qtbot, path)
    document = window.current_document()
    assert document is not None
    editor = window.open_tool_tab(document, document.agent.tools[0])
    assert isinstance(editor, ToolEditor)

    window.test_action.trigger()  # Ctrl+Enter
    dialog = QApplication.activeModalWidget() or next(
        w for w in QApplication.topLevelWidgets() if isinstance(w, TestToolDialog) and w.isVisible()
    )
    assert isinstance(dialog, TestToolDialog)
    # A tool never run starts from its sample values, and says so.
    assert dialog.origin.text().startswith("Started from the tool's sample values")
    who = dialog.form.field("who")
    assert isinstance(who, QLineEdit) and who.text() == "<who>"
    who.clear()
    assert not dialog.run_button.isEnabled()  # "who" is required
    qtbot.keyClicks(who, "Ada")
    assert dialog.prompt() == "Say hello to Ada."
    assert dialog.run_button.isEnabled()
    dialog.run_button.click()

    tabs = window.run_tabs()
    assert len(tabs) == 1 and isinstance(tabs[0], ChatTab)
    tab = tabs[0]
    assert window.tabs.currentWidget() is tab
    assert window.tabs.tabText(window.tabs.indexOf(tab)).startswith("greet · ")
    qtbot.waitUntil(lambda: isinstance(tab.outcome, FinalAnswer), timeout=RUN_MS)
    assert model.bodies[0]["messages"][-1] == {"role": "user", "content": "Say hello to Ada."}
    assert tab.runner.caller_view is not None
    assert tab.runner.caller_view["structuredContent"]["answer"] == "Hello, Ada!"

    history = window.open_history_tab(document)
    assert isinstance(history, HistoryView)
    qtbot.waitUntil(lambda: len(history.visible_entries()) == 1, timeout=RUN_MS)
    assert history.visible_entries()[0].tool == "greet"
    _close_run_tabs(qtbot, window)


def test_a_chat_error_button_opens_the_model_page(
    qtbot: QtBot, qasync_loop: asyncio.AbstractEventLoop, tmp_path: Path
) -> None:
    path = write_agent(
        tmp_path / "nokey.agent.yaml", tools=[TOOL], api_key=None, base_url="http://127.0.0.1:9/v1"
    )
    window = _window(qtbot, path)
    document = window.current_document()
    assert document is not None

    window.chat_action.trigger()
    tab = window.run_tabs()[0]
    assert isinstance(tab, ChatTab)
    tab.open_settings_requested.emit("model")

    assert window.tabs.currentIndex() == 0
    assert window.page_stack.currentWidget() is window.page(document, "model")
    window.tabs.setCurrentWidget(tab)
    window.tabs.tabCloseRequested.emit(window.tabs.indexOf(tab))
    assert window.run_tabs() == []
    window.close()


def test_rerun_from_history_opens_the_dialog_with_the_same_arguments(
    qtbot: QtBot, tmp_path: Path
) -> None:
    path = write_agent(tmp_path / "greeter.agent.yaml", tools=[TOOL])
    window = _window(qtbot, path)
    document = window.current_document()
    assert document is not None
    window.history_action.trigger()
    view = window.run_tabs()[0]
    assert isinstance(view, HistoryView)

    view.rerun_requested.emit("greet", {"who": "Grace"})

    dialog = next(
        w for w in QApplication.topLevelWidgets() if isinstance(w, TestToolDialog) and w.isVisible()
    )
    assert dialog.arguments() == {"who": "Grace"}
    assert dialog.prompt() == "Say hello to Grace."
    dialog.reject()
    window.close()


def test_export_opens_for_the_saved_agent(qtbot: QtBot, tmp_path: Path) -> None:
    path = write_agent(tmp_path / "greeter.agent.yaml", tools=[TOOL])
    window = _window(qtbot, path)

    window.export_action.trigger()

    dialog = next(
        w for w in QApplication.topLevelWidgets() if isinstance(w, ExportDialog) and w.isVisible()
    )
    assert str(path.resolve()) in dialog.snippet_text()
    dialog.reject()
    window.close()


def test_agent_actions_are_off_without_an_agent(qtbot: QtBot) -> None:
    window = MainWindow()
    qtbot.addWidget(window)
    assert not window.test_action.isEnabled() and not window.export_action.isEnabled()
    assert window.test_action.shortcut().toString() == "Ctrl+Return"


def test_the_tools_list_context_menu_tests_a_tool(qtbot: QtBot, tmp_path: Path) -> None:
    path = write_agent(tmp_path / "greeter.agent.yaml", tools=[TOOL])
    window = _window(qtbot, path)
    document = window.current_document()
    assert document is not None
    page = window.show_page(document, "tools")
    assert isinstance(page, ToolsListWidget)
    assert page.test_action in page.view.actions()

    page.select_row(0)
    page.test_action.trigger()

    dialog = next(
        w for w in QApplication.topLevelWidgets() if isinstance(w, TestToolDialog) and w.isVisible()
    )
    assert dialog.windowTitle() == "Test greet"
    dialog.reject()
    window.close()


def test_two_tests_of_a_tool_in_one_minute_get_tabs_told_apart(
    qtbot: QtBot, qasync_loop: asyncio.AbstractEventLoop, tmp_path: Path, model: FakeOpenAIServer
) -> None:
    path = write_agent(tmp_path / "greeter.agent.yaml", tools=[TOOL], base_url=model.base_url)
    window = _window(qtbot, path)
    document = window.current_document()
    assert document is not None

    first = window.open_chat_tab(document, tool_name="greet", arguments={"who": "Ada"})
    second = window.open_chat_tab(document, tool_name="greet", arguments={"who": "Bo"})

    titles = [window.tabs.tabText(window.tabs.indexOf(tab)) for tab in (first, second)]
    assert titles[0].startswith("greet · ") and titles[1] == f"{titles[0]} (2)"
    _close_run_tabs(qtbot, window)
