"""Agent ▸ New tool from a description…: a scripted authoring model (``FakeOpenAIServer``) drafts
a tool; the test reads what a person sees in the dialog, adds it as one undo step or discards it,
and checks that the agent file's bytes never change until the author saves."""

from __future__ import annotations

import asyncio
import json
import time
from pathlib import Path

import pytest
from PySide6.QtCore import Qt
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QMenu, QTableWidgetItem
from pytestqt.qtbot import QtBot

from app.authoring.draft_dialog import DraftToolDialog
from app.pages.tools_list import ToolsListWidget
from app.window.main_window import MainWindow
from mcp_export.history.store import HistoryStore
from tests.app._windows import studio_window
from tests.app.test_view_menu import menu_item
from tests.fakes.drafting import BAD_DRAFT, GOOD_DRAFT, SENTENCE, draft_reply
from tests.fakes.openai_server import FakeOpenAIServer

WAIT = 10_000  # ms: a bound, not a sleep

AGENT = """\
# kept as it is
metadata:
  name: Weather Desk
  description: Answers questions about the weather.
  tools:
    - name: forecast
      description: The forecast for a city.
      parameters:
        type: object
        properties:
          city: {{type: string}}
        required: [city]
      prompt: The forecast for {{city}}.
settings:
  model: openai:fake-model
providers:
  openai:
    OPENAI_API_KEY: env://DRAFT_TEST_KEY
    OPENAI_BASE_URL: {base_url}
"""


def _text(item: QTableWidgetItem | None) -> str:
    assert item is not None
    return item.text()


@pytest.fixture(autouse=True)
def _key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DRAFT_TEST_KEY", "sk-draft-studio-0123456789abcdef")


def _open(qtbot: QtBot, tmp_path: Path, base_url: str) -> tuple[MainWindow, Path]:
    path = tmp_path / "weather.agent.yaml"
    path.write_text(AGENT.format(base_url=base_url), encoding="utf-8")
    window = studio_window(qtbot)
    assert window.open_file(path) is not None
    return window, path


def _dialog_from_menu(qtbot: QtBot, window: MainWindow) -> DraftToolDialog:
    agent_menu = next(
        a.menu() for a in window.menuBar().actions() if a.text().replace("&", "") == "Agent"
    )
    assert isinstance(agent_menu, QMenu)
    menu_item(agent_menu, "New tool from a description…").trigger()
    dialog = window.findChild(DraftToolDialog)
    assert isinstance(dialog, DraftToolDialog)
    qtbot.waitExposed(dialog)
    return dialog


def _draft(qtbot: QtBot, dialog: DraftToolDialog) -> None:
    QTest.keyClicks(dialog.sentence_edit, SENTENCE)
    QTest.mouseClick(dialog.draft_button, Qt.MouseButton.LeftButton)
    # The outcome shows before its task has ended; the buttons follow when it has.
    qtbot.waitUntil(lambda: dialog.outcome is not None and not dialog.busy, timeout=WAIT)


def test_a_drafted_tool_is_shown_then_added_as_one_undo_step(
    qtbot: QtBot, tmp_path: Path, qasync_loop: asyncio.AbstractEventLoop
) -> None:
    with FakeOpenAIServer([draft_reply(GOOD_DRAFT)]) as server:
        window, path = _open(qtbot, tmp_path, server.base_url)
        before = path.read_bytes()
        document = window.current_document()
        assert document is not None
        dialog = _dialog_from_menu(qtbot, window)
        assert dialog.model_label.text().startswith("Authoring model: openai:fake-model")
        assert not dialog.add_button.isEnabled()
        _draft(qtbot, dialog)

    preview = dialog.preview
    assert "passes validation" in dialog.status_label.text()
    assert dialog.add_button.isEnabled()
    assert preview.name_label.text() == "convert_temperature"
    assert preview.answers_label.text() == "data (an output schema)"
    table = preview.parameters_table
    rows = {
        _text(table.item(r, 0)): [_text(table.item(r, c)) for c in range(table.columnCount())]
        for r in range(table.rowCount())
    }
    assert rows["to"][1:5] == ["string", "yes", "", '"celsius", "fahrenheit"']
    assert rows["value"][1] == "number (≥ -459.67)" and rows["value"][5] == "21.5"
    assert rows["precision"][2] == ""
    assert "{?precision}" in preview.template_view.toPlainText()
    assert json.loads(preview.output_view.toPlainText())["required"] == ["value", "unit"]
    cases = preview.cases_table
    kinds = {_text(cases.item(r, 0)): _text(cases.item(r, 1)) for r in range(cases.rowCount())}
    assert kinds == {
        "body temperature": "typical",
        "lowest value, no precision": "edge",
        "unit missing": "must fail",
        "in words": "caller",
    }
    # The request and its answer, in the dialog's Protocol log tab (it refreshes on a timer).
    qtbot.waitUntil(lambda: dialog.log_view.model.rowCount() >= 2, timeout=WAIT)

    steps = document.undo_stack.count()
    QTest.mouseClick(dialog.add_button, Qt.MouseButton.LeftButton)
    assert [t.name for t in document.agent.tools] == ["forecast", "convert_temperature"]
    assert document.undo_stack.count() == steps + 1
    assert document.agent.tools[1].tests[2].expect.is_error is True
    assert path.read_bytes() == before  # nothing written until the author saves
    document.undo_stack.undo()
    assert [t.name for t in document.agent.tools] == ["forecast"]


def test_discard_leaves_the_agent_untouched(
    qtbot: QtBot, tmp_path: Path, qasync_loop: asyncio.AbstractEventLoop
) -> None:
    with FakeOpenAIServer([draft_reply(GOOD_DRAFT)]) as server:
        window, path = _open(qtbot, tmp_path, server.base_url)
        before = path.read_bytes()
        document = window.current_document()
        assert document is not None
        page = window.show_page(document, "tools")
        assert isinstance(page, ToolsListWidget)
        page.draft_action.trigger()  # the Tools page's own button
        dialog = window.findChild(DraftToolDialog)
        assert isinstance(dialog, DraftToolDialog)
        steps = document.undo_stack.count()
        _draft(qtbot, dialog)
    assert dialog.add_button.isEnabled()
    QTest.mouseClick(dialog.discard_button, Qt.MouseButton.LeftButton)
    assert [t.name for t in document.agent.tools] == ["forecast"]
    assert document.undo_stack.count() == steps
    assert not document.is_dirty()
    assert path.read_bytes() == before


def test_an_invalid_draft_twice_is_refused_with_the_messages(
    qtbot: QtBot, tmp_path: Path, qasync_loop: asyncio.AbstractEventLoop
) -> None:
    with FakeOpenAIServer([draft_reply(BAD_DRAFT), draft_reply(BAD_DRAFT)]) as server:
        window, _ = _open(qtbot, tmp_path, server.base_url)
        dialog = _dialog_from_menu(qtbot, window)
        _draft(qtbot, dialog)
    status = dialog.status_label.text()
    assert status.startswith("The authoring model (openai:fake-model) drafted a tool that does not")
    assert "does not pass validation, even after one repair turn; nothing was added" in status
    assert "prompt: line 1, column 28: unknown placeholder {unit}" in status
    assert "tests: no case must fail" in status
    assert not dialog.add_button.isEnabled()
    assert dialog.preview.name_label.text() == ""
    document = window.current_document()
    assert document is not None and [t.name for t in document.agent.tools] == ["forecast"]


def test_the_preferences_model_is_asked_and_the_exchange_is_in_history(
    qtbot: QtBot, tmp_path: Path, qasync_loop: asyncio.AbstractEventLoop
) -> None:
    with FakeOpenAIServer([draft_reply(BAD_DRAFT), draft_reply(GOOD_DRAFT)]) as server:
        window, _ = _open(qtbot, tmp_path, server.base_url)
        window.settings.set_authoring_model("openai:author-model")
        dialog = _dialog_from_menu(qtbot, window)
        assert "openai:author-model (chosen in Preferences)" in dialog.model_label.text()
        _draft(qtbot, dialog)
        sent = [body["model"] for body in server.bodies]
    assert sent == ["author-model", "author-model"]
    assert "after one repair turn" in dialog.status_label.text()
    store = window.history_store()
    assert isinstance(store, HistoryStore)
    threads = store.threads(kind="authoring")
    assert [t.title for t in threads] == [f"draft a tool: {SENTENCE}"]
    roles = [m.role for m in store.messages(threads[0].id)]
    assert roles == ["user", "assistant", "user", "assistant"]
    logged = "\n".join(e.text for e in dialog.protocol_log.entries())
    assert "sk-draft-studio" not in logged and "author-model" in logged


def test_preferences_keep_the_authoring_model_and_empty_means_the_agents_own(
    qtbot: QtBot, tmp_path: Path
) -> None:
    from PySide6.QtWidgets import QDialogButtonBox

    from app.window.preferences import PreferencesDialog
    from tests.app.test_preferences import open_preferences, press, type_into

    window = studio_window(qtbot)
    dialog = open_preferences(qtbot, window)
    assert dialog.authoring_edit.text() == ""
    assert dialog.authoring_edit.placeholderText() == "the agent's own model"
    type_into(dialog.authoring_edit, "  anthropic:claude-sonnet-4-5 ")
    press(dialog, QDialogButtonBox.StandardButton.Ok)
    assert window.settings.authoring_model() == "anthropic:claude-sonnet-4-5"
    qtbot.waitUntil(lambda: window.findChild(PreferencesDialog) is None, timeout=WAIT)
    again = open_preferences(qtbot, window)
    assert again.authoring_edit.text() == "anthropic:claude-sonnet-4-5"
    again.authoring_edit.clear()
    press(again, QDialogButtonBox.StandardButton.Ok)
    assert window.settings.authoring_model() == ""


def test_discard_while_the_model_is_asked_stops_it_and_adds_nothing(
    qtbot: QtBot, tmp_path: Path, qasync_loop: asyncio.AbstractEventLoop
) -> None:
    from tests.fakes._script import delay

    with FakeOpenAIServer([delay(30, draft_reply(GOOD_DRAFT))]) as server:
        window, path = _open(qtbot, tmp_path, server.base_url)
        before = path.read_bytes()
        dialog = _dialog_from_menu(qtbot, window)
        QTest.keyClicks(dialog.sentence_edit, SENTENCE)
        QTest.mouseClick(dialog.draft_button, Qt.MouseButton.LeftButton)
        assert dialog.busy and not dialog.draft_button.isEnabled()
        assert "Asking openai:fake-model for a draft…" in dialog.status_label.text()
        qtbot.waitUntil(lambda: len(server.model_requests) == 1, timeout=WAIT)
        started = time.monotonic()
        QTest.mouseClick(dialog.discard_button, Qt.MouseButton.LeftButton)
        qtbot.waitUntil(lambda: not dialog.busy, timeout=WAIT)
        assert time.monotonic() - started < 5  # not the 30 s the model would take
    document = window.current_document()
    assert document is not None and [t.name for t in document.agent.tools] == ["forecast"]
    assert path.read_bytes() == before
