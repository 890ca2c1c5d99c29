"""The history view and its models, over a real history database filled by real served calls.

The served calls run the real ``AgentServer`` with the official ``mcp.Client`` in-process, the
real OpenAI provider against ``FakeOpenAIServer`` and the reference time server as the agent's
own tool, so the rows are exactly what ``metaagent serve`` writes. A chat and a pending test run
are written through the store's public methods. A run saved as a test case goes into an open
agent attached to the view as the main window attaches it. Paging, the figures against the chat
tab, and the layout are in ``test_history_paging.py`` and ``test_history_figures.py``.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import anyio
import mcp_types as types
import pytest
from mcp import Client
from PySide6.QtCore import QModelIndex, Qt
from PySide6.QtGui import QAction, QTextCursor
from PySide6.QtWidgets import QDialogButtonBox
from pytestqt.qtbot import QtBot

from app.document.agent_document import AgentDocument
from app.errors import reporter
from app.history.model import COLUMNS, HistoryEntry, HistoryTableModel
from app.history.view import HistoryView, transcript_html
from app.save_case_dialog import SaveCaseDialog
from mcp_export.history.figures import CONVERSATION_TIME, CONVERSATION_TOKENS, format_duration
from mcp_export.history.store import HistoryStore
from mcp_export.server.agent_server import AgentServer, load_served_agents
from schema_types.files.agent_file import load_agent
from tests.fakes._script import status, text, text_without_usage, tool_calls
from tests.fakes.mcp_clients import book_tool, time_server, write_agent
from tests.fakes.openai_server import FakeOpenAIServer

CLIENT = types.Implementation(name="test-client", version="9.9")
TIME_CALL = ("call_1", "time__get_current_time", {"timezone": "UTC"})


async def _serve_calls(agent: Path, store: HistoryStore) -> None:
    async with (
        AgentServer(load_served_agents([agent]), history=store) as served,
        Client(served.server, mode="legacy", client_info=CLIENT) as client,
    ):
        await client.call_tool("book_flight", {"destination": "Oslo", "passengers": 2})
        await client.call_tool("book_flight", {"destination": "Rome"})
        await client.call_tool("find_hotel", {"destination": "Bergen"})


@pytest.fixture(scope="module")
def recorded(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """(history database, agent file): three served calls, a chat and a pending test run."""
    folder = tmp_path_factory.mktemp("history")
    database = folder / "history.sqlite3"
    replies = [
        tool_calls([TIME_CALL]),
        text("Booked Oslo for two."),
        status(400, message="model refused"),
        text("Hotel Bergen booked.", usage=(30, 5)),
    ]
    with FakeOpenAIServer(replies) as model:
        agent = write_agent(
            folder / "travel.agent.yaml",
            base_url=model.base_url,
            tools=[
                book_tool(),
                book_tool("find_hotel", prompt="Find a hotel in {destination}."),
            ],
            mcp_servers={"time": time_server()},
            tool_permission="tool",
        )
        with HistoryStore(database) as store:
            anyio.run(_serve_calls, agent, store)
            chat = store.create_thread(
                agent_path=str(agent), agent_name="Travel Desk", title="Hello", kind="chat"
            )
            store.add_message(chat, "user", "Hello there")
            store.add_message(chat, "assistant", "Hi! How can I help?", tokens_in=7, tokens_out=6)
            test = store.create_thread(
                agent_path=str(agent), agent_name="Travel Desk", title="test", kind="tool-test"
            )
            store.start_run(
                thread_id=test,
                tool_name="find_hotel",
                arguments={"destination": "Paris"},
                filled_prompt="Find a hotel in Paris.",
                caller="Meta Agent Studio",
            )
            other = store.create_thread(
                agent_path=str(folder / "other.agent.yaml"),
                agent_name="Other",
                title="not ours",
                kind="chat",
            )
            store.add_message(other, "user", "elsewhere")
    return database, agent


@pytest.fixture
def store(recorded: tuple[Path, Path]) -> Iterator[HistoryStore]:
    with HistoryStore(recorded[0]) as opened:
        yield opened


@pytest.fixture
def view(qtbot: QtBot, store: HistoryStore, recorded: tuple[Path, Path]) -> HistoryView:
    widget = HistoryView("Travel Desk", recorded[1], store)
    qtbot.addWidget(widget)
    widget.resize(1200, 600)
    widget.show()
    return widget


def load_history(store: HistoryStore, name: str, path: Path | None) -> list[HistoryEntry]:
    """Every row the model of the agent's history reads (the filters let all through)."""
    model = HistoryTableModel(store, name, path)
    model.reload()
    while model.canFetchMore(QModelIndex()) or model.searching:
        model.fetchMore(QModelIndex())
    return model.entries()


def _find(view: HistoryView, tool: str, status: str) -> int:
    for row, entry in enumerate(view.visible_entries()):
        if entry.tool == tool and entry.status == status:
            return row
    raise AssertionError(f"no {status} row of {tool}")


# -- the models, without widgets ------------------------------------------------------------------


def test_load_history_lists_the_agents_runs_and_chats_only(
    qapp: object, store: HistoryStore, recorded: tuple[Path, Path]
) -> None:
    entries = load_history(store, "Travel Desk", recorded[1])
    summary = sorted((e.kind, e.tool, e.status) for e in entries)
    assert summary == [
        ("chat", "", "complete"),
        ("served call", "book_flight", "complete"),
        ("served call", "book_flight", "error"),
        ("served call", "find_hotel", "complete"),
        ("test", "find_hotel", "pending"),
    ]
    hotel = next(e for e in entries if e.tool == "find_hotel" and e.kind == "served call")
    assert (hotel.tokens_in, hotel.tokens_out) == (30, 5)
    assert hotel.duration_ms is not None and hotel.duration_ms > 0
    assert hotel.caller == "test-client 9.9"
    chat = next(e for e in entries if e.kind == "chat")
    assert (chat.tokens_in, chat.tokens_out) == (7, 6)
    assert [e.started for e in entries] == sorted((e.started for e in entries), reverse=True)


def test_an_unsaved_agent_finds_its_threads_by_name(qapp: object, tmp_path: Path) -> None:
    with HistoryStore(tmp_path / "h.sqlite3") as store:
        thread = store.create_thread(agent_path=None, agent_name="Draft", title="hi", kind="chat")
        store.add_message(thread, "user", "hi")
        store.create_thread(agent_path=None, agent_name="Another", title="no", kind="chat")
        entries = load_history(store, "Draft", None)
    assert [(e.title, e.thread_id) for e in entries] == [("hi", thread)]


def test_table_model_shows_columns_and_filters_in_the_store(
    qapp: object, store: HistoryStore, recorded: tuple[Path, Path]
) -> None:
    model = HistoryTableModel(store, "Travel Desk", recorded[1])
    model.reload()
    assert model.columnCount() == len(COLUMNS)
    assert model.headerData(COLUMNS.index("Tool"), Qt.Orientation.Horizontal) == "Tool"
    assert model.tools() == ["book_flight", "find_hotel"]
    assert model.rowCount() == 5

    model.set_filters(tool="find_hotel")
    assert {e.tool for e in model.entries()} == {"find_hotel"}
    assert model.rowCount() == 2
    model.set_filters(tool="find_hotel", status="pending")
    assert [e.kind for e in model.entries()] == ["test"]
    model.set_filters(text="ROME")
    assert [e.run.arguments for e in model.entries() if e.run is not None] == [
        {"destination": "Rome", "passengers": 1}
    ]
    model.set_filters(text="served CALL")
    assert {e.kind for e in model.entries()} == {"served call"}
    model.set_filters()
    error_row = next(r for r in range(model.rowCount()) if model.entry(r).status == "error")
    assert model.index(error_row, COLUMNS.index("Status")).data() == "error"
    assert model.index(error_row, 0).data(Qt.ItemDataRole.ForegroundRole) is not None


def test_the_transcript_of_a_run_whose_thread_is_gone_shows_its_error(
    qapp: object, tmp_path: Path
) -> None:
    with HistoryStore(tmp_path / "h.sqlite3") as store:
        thread = store.create_thread(agent_path="a", agent_name="A", title="t", kind="call")
        run = store.start_run(
            thread_id=thread,
            tool_name="book_flight",
            arguments={"destination": "Oslo"},
            filled_prompt="Book Oslo.",
            caller="metaagent call",
        )
        store.finish_run(run, error="the model is unreachable")
        (entry,) = load_history(store, "A", Path("a"))
        store.delete_thread(thread)
        (detached,) = store.runs()
    assert entry.kind == "CLI call"
    shown = transcript_html(replace(entry, thread_id=None, run=detached), [])
    assert '"destination": "Oslo"' in shown
    assert "the model is unreachable" in shown


def test_unknown_token_counts_show_as_a_dash_and_a_total_missing_one_is_a_lower_bound(
    qapp: object, tmp_path: Path
) -> None:
    with FakeOpenAIServer([text_without_usage("Booked.")]) as model:
        agent = write_agent(tmp_path / "a.agent.yaml", base_url=model.base_url)

        async def call(history: HistoryStore) -> None:
            async with (
                AgentServer(load_served_agents([agent]), history=history) as served,
                Client(served.server, mode="legacy", client_info=CLIENT) as client,
            ):
                await client.call_tool("book_flight", {"destination": "Oslo"})

        with HistoryStore(tmp_path / "h.sqlite3") as store:
            anyio.run(call, store)
            chat = store.create_thread(
                agent_path=str(agent), agent_name="Travel Desk", title="Mixed", kind="chat"
            )
            store.add_message(chat, "user", "Hello")
            store.add_message(chat, "assistant", "Hi.", tokens_in=7, tokens_out=3)
            store.add_message(chat, "user", "Again")
            store.add_message(chat, "assistant", "Hi again.")  # a turn that reported nothing
            entries = load_history(store, "Travel Desk", agent)
            served = next(e for e in entries if e.kind == "served call")
            mixed = next(e for e in entries if e.kind == "chat")
            shown = transcript_html(served, store.messages(served.thread_id or ""))
            table = HistoryTableModel(store, "Travel Desk", agent)
            table.reload()
    assert (served.tokens_in, served.tokens_out) == (None, None)
    assert (mixed.tokens_in, mixed.tokens_out) == (7, 3)
    cells = {
        table.entry(row).kind: table.index(row, COLUMNS.index(CONVERSATION_TOKENS)).data()
        for row in range(2)
    }
    assert cells == {"served call": "— in / — out", "chat": "≥ 7 in / 3 out"}
    served_row = next(row for row in range(2) if table.entry(row).kind == "served call")
    tip = table.index(served_row, 0).data(Qt.ItemDataRole.ToolTipRole)
    assert "Tokens —: the model server did not report them" in tip
    assert "Tokens in the conversation: — in / — out" in shown
    assert "Tokens this answer: — in / — out" in shown
    assert " 0 in" not in shown and " 0 out" not in shown


def test_durations_read_as_a_person_says_them() -> None:
    assert format_duration(None) == ""
    assert format_duration(850) == "850 ms"
    assert format_duration(2340) == "2.3 s"
    assert format_duration(245_000) == "4 min 05 s"


# -- the view -----------------------------------------------------------------------------------


def test_the_view_lists_runs_and_filters_by_tool_and_status(view: HistoryView) -> None:
    assert view.stack.currentWidget() is view.table
    assert view.table.model().rowCount() == 5
    tools = [view.tool_combo.itemText(i) for i in range(view.tool_combo.count())]
    assert tools == ["All tools", "book_flight", "find_hotel"]

    view.set_tool_filter("book_flight")
    assert {e.tool for e in view.visible_entries()} == {"book_flight"}
    view.set_status_filter("error")
    (failed,) = view.visible_entries()
    assert failed.run is not None and failed.run.arguments["destination"] == "Rome"
    view.set_tool_filter("find_hotel")
    assert view.visible_entries() == []
    assert view.stack.currentWidget() is view.empty_label
    assert "Nothing matches" in view.empty_label.text()
    view.set_tool_filter("")
    view.set_status_filter("")
    view.search.setText("bergen")
    assert [e.tool for e in view.visible_entries()] == ["find_hotel"]


def test_enter_opens_the_transcript_with_messages_and_tool_calls(
    view: HistoryView, qtbot: QtBot
) -> None:
    row = _find(view, "book_flight", "complete")
    view.select_row(row)
    view.table.setFocus()
    qtbot.keyClick(view.table, Qt.Key.Key_Return)
    qtbot.waitUntil(lambda: view.opened_entry() is not None, timeout=10_000)
    shown = view.transcript.toPlainText()
    assert "Book a flight to Oslo for 2 passenger(s)." in shown  # the user message
    assert "calls time__get_current_time" in shown
    assert '"timezone": "UTC"' in shown
    assert "Tool result · time__get_current_time" in shown
    assert "Booked Oslo for two." in shown
    assert view.transcript.isReadOnly()


def test_a_failed_call_shows_its_error_in_the_transcript(view: HistoryView) -> None:
    view.open_entry(_find(view, "book_flight", "error"))
    shown = view.transcript.toPlainText()
    assert "Error:" in shown
    assert "model refused" in shown


def test_rerun_emits_the_stored_arguments_and_is_off_for_chats(
    view: HistoryView, qtbot: QtBot
) -> None:
    chat_row = next(i for i, e in enumerate(view.visible_entries()) if e.kind == "chat")
    view.select_row(chat_row)
    assert not view.rerun_button.isEnabled()
    view.select_row(_find(view, "book_flight", "complete"))
    assert view.rerun_button.isEnabled()
    with qtbot.waitSignal(view.rerun_requested, timeout=10_000) as signal:
        qtbot.mouseClick(view.rerun_button, Qt.MouseButton.LeftButton)
    assert signal.args == ["book_flight", {"destination": "Oslo", "passengers": 2}]


def test_refresh_shows_a_run_finished_meanwhile_in_the_open_transcript(
    qtbot: QtBot, tmp_path: Path
) -> None:
    agent = tmp_path / "t.agent.yaml"
    with HistoryStore(tmp_path / "h.sqlite3") as store:
        thread = store.create_thread(
            agent_path=str(agent), agent_name="T", title="find", kind="tool-test"
        )
        store.add_message(thread, "user", "Find a hotel in Paris.")
        run = store.start_run(
            thread_id=thread,
            tool_name="find_hotel",
            arguments={"destination": "Paris"},
            filled_prompt="Find a hotel in Paris.",
            caller="Meta Agent Studio",
        )
        view = HistoryView("T", agent, store)
        qtbot.addWidget(view)
        view.open_entry(0)
        assert view.visible_entries()[0].status == "pending"
        assert view.table.model().index(0, COLUMNS.index(CONVERSATION_TIME)).data() == ""
        store.add_message(thread, "assistant", "Hotel Paris booked.")
        store.finish_run(run, answer="Hotel Paris booked.", duration_ms=1200)
        qtbot.mouseClick(view.refresh_button, Qt.MouseButton.LeftButton)
        assert [e.status for e in view.visible_entries()] == ["complete"]
        (entry,) = view.visible_entries()
        assert entry.duration_ms is not None
        shown = view.table.model().index(0, COLUMNS.index(CONVERSATION_TIME)).data()
        assert shown == format_duration(entry.duration_ms) != ""
        assert "Hotel Paris booked." in view.transcript.toPlainText()


def test_no_history_shows_the_empty_state(qtbot: QtBot, tmp_path: Path) -> None:
    with HistoryStore(tmp_path / "empty.sqlite3") as store:
        view = HistoryView("Travel Desk", tmp_path / "t.agent.yaml", store)
        qtbot.addWidget(view)
        assert view.stack.currentWidget() is view.empty_label
        assert "No history for Travel Desk yet" in view.empty_label.text()
        assert not view.rerun_button.isEnabled()


# -- saving a run as a test case ------------------------------------------------------------------


def _attach(view: HistoryView, path: Path) -> AgentDocument:
    """The open agent of the view, attached as the main window attaches it."""
    document = AgentDocument.load(path)
    view.document = document  # type: ignore[attr-defined]
    return document


def _save_dialog(view: HistoryView) -> SaveCaseDialog:
    dialog = view.findChild(SaveCaseDialog)
    assert isinstance(dialog, SaveCaseDialog) and dialog.isVisible()
    return dialog


def test_a_run_shown_in_history_saves_as_a_test_case_with_the_selected_answer_text(
    qtbot: QtBot, tmp_path: Path
) -> None:
    agent = write_agent(tmp_path / "t.agent.yaml", api_key=None)
    with HistoryStore(tmp_path / "h.sqlite3") as store:
        thread = store.create_thread(
            agent_path=str(agent), agent_name="Travel Desk", title="book", kind="tool-test"
        )
        store.add_message(thread, "user", "Book a flight to Lisbon for 3 passenger(s).")
        store.add_message(thread, "assistant", "Booked TP1351 to Lisbon.")
        run = store.start_run(
            thread_id=thread,
            tool_name="book_flight",
            arguments={"destination": "Lisbon", "passengers": 3},
            filled_prompt="Book a flight to Lisbon for 3 passenger(s).",
            caller="Meta Agent Studio",
        )
        store.finish_run(run, answer="Booked TP1351 to Lisbon.", duration_ms=900)
        view = HistoryView("Travel Desk", agent, store)
        qtbot.addWidget(view)
        view.show()
        assert not view.save_case_button.isEnabled()  # nothing shown yet
        document = _attach(view, agent)
        view.open_entry(0)
        assert view.save_case_button.isEnabled()
        shown = view.transcript.toPlainText()
        cursor = view.transcript.textCursor()
        start = shown.rindex("TP1351")  # in the answer, not the prompt
        cursor.setPosition(start)
        cursor.setPosition(start + len("TP1351"), QTextCursor.MoveMode.KeepAnchor)
        view.transcript.setTextCursor(cursor)
        qtbot.mouseClick(view.save_case_button, Qt.MouseButton.LeftButton)
        dialog = _save_dialog(view)
        assert dialog.name_edit.text() == "Lisbon, passengers 3"
        assert dialog.contains_edit.toPlainText() == "TP1351"
        assert dialog.contains_note.text() == "✓ This run's answer has it."
        assert dialog.answer_view.toPlainText() == "Booked TP1351 to Lisbon."
        with qtbot.waitSignal(dialog.finished, timeout=10_000):
            qtbot.mouseClick(
                dialog.buttons.button(QDialogButtonBox.StandardButton.Save),
                Qt.MouseButton.LeftButton,
            )
    assert reporter().history[-1].message == "Saved test case “Lisbon, passengers 3” to book_flight"
    saved = tmp_path / "saved.agent.yaml"
    document.save(saved)
    tool = load_agent(saved).metadata.tool("book_flight")
    assert tool is not None
    assert [(c.name, c.arguments, c.expect.contains) for c in tool.tests] == [
        ("Lisbon, passengers 3", {"destination": "Lisbon", "passengers": 3}, ["TP1351"])
    ]
    document.undo_stack.undo()
    assert document.agent.tools[0].tests == []


def test_the_row_menu_saves_a_served_call_and_offers_nothing_for_a_chat(
    view: HistoryView, qtbot: QtBot, recorded: tuple[Path, Path]
) -> None:
    def save_action(row: int) -> QAction:
        (action,) = [a for a in view.row_menu(row).actions() if a.text() == "Save as test case…"]
        return action

    chat_row = next(i for i, e in enumerate(view.visible_entries()) if e.kind == "chat")
    served_row = _find(view, "book_flight", "error")
    assert not save_action(served_row).isEnabled()  # no open agent to save into
    document = _attach(view, recorded[1])
    assert not save_action(chat_row).isEnabled()
    save_action(served_row).trigger()
    dialog = _save_dialog(view)
    assert dialog.name_edit.text() == "Rome, passengers 1"
    assert dialog.contains_edit.toPlainText() == ""  # nothing was selected
    assert dialog.expect_error is not None  # the call failed
    assert "model refused" in dialog.answer_view.toPlainText()
    dialog.expect_error.setChecked(True)
    with qtbot.waitSignal(dialog.finished, timeout=10_000):
        dialog.buttons.button(QDialogButtonBox.StandardButton.Save).click()
    tool = document.agent.metadata.tool("book_flight")
    assert tool is not None
    assert [(c.arguments, c.expect.is_error) for c in tool.tests] == [
        ({"destination": "Rome", "passengers": 1}, True)
    ]


def test_a_run_of_a_tool_the_agent_no_longer_has_says_so(
    view: HistoryView, recorded: tuple[Path, Path]
) -> None:
    document = _attach(view, recorded[1])
    assert document.remove_item(("metadata", "tools", 1), text="Delete find_hotel")
    view.open_entry(_find(view, "find_hotel", "complete"))
    assert view.save_case_button.isEnabled()
    assert view.save_as_test_case(view.opened_entry()) is None
    assert view.findChild(SaveCaseDialog) is None
    report = reporter().history[-1]
    assert (report.level, report.message) == (
        "warning",
        "Travel Desk has no tool find_hotel any more: the test case was not saved. Run the tool "
        "as it is now and save that run.",
    )
