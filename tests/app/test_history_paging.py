"""History over a history too long to read at once: pages as the table scrolls, filters that find
what the first page did not have, and a layout that reads (the title beside the figures, wrapped
transcripts).

Real SQLite files written through the store's own methods, a real ``HistoryView`` offscreen;
every wait is bounded.
"""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import QModelIndex, Qt
from pytestqt.qtbot import QtBot

from app.history.model import COLUMNS
from app.history.view import HistoryView
from mcp_export.history.figures import CONVERSATION_TIME, CONVERSATION_TOKENS
from mcp_export.history.store import HistoryStore

WAIT_MS = 10_000


def _served_calls(store: HistoryStore, agent: Path, count: int) -> list[str]:
    """``count`` served calls of the agent, oldest first; the oldest is about Zürich."""
    made = []
    for n in range(count):
        city = "Zürich" if n == 0 else "Oslo"
        thread, run = store.start_call(
            thread_id=None,
            agent_path=str(agent),
            agent_name="Travel Desk",
            title=f"book_flight: call {n}",
            kind="served",
            tool_name="book_flight",
            arguments={"destination": city},
            filled_prompt=f"Book a flight to {city}.",
            caller="client",
        )
        store.finish_run(run, answer="Booked.", duration_ms=5.0)
        made.append(thread)
    return made


def _view(qtbot: QtBot, store: HistoryStore, agent: Path) -> HistoryView:
    view = HistoryView("Travel Desk", agent, store)
    qtbot.addWidget(view)
    view.resize(1280, 720)
    view.show()
    qtbot.waitExposed(view)
    return view


def test_scrolling_to_the_end_reads_the_next_page(qtbot: QtBot, tmp_path: Path) -> None:
    agent = tmp_path / "t.agent.yaml"
    with HistoryStore(tmp_path / "h.sqlite3") as store:
        made = _served_calls(store, agent, 250)
        view = _view(qtbot, store, agent)
        assert len(view.visible_entries()) == 100
        assert view.model.canFetchMore(QModelIndex())
        view.table.scrollToBottom()
        qtbot.waitUntil(lambda: len(view.visible_entries()) == 200, timeout=WAIT_MS)
        view.table.scrollToBottom()
        qtbot.waitUntil(lambda: len(view.visible_entries()) == 250, timeout=WAIT_MS)
        assert not view.model.canFetchMore(QModelIndex())
        assert [e.thread_id for e in view.visible_entries()] == made[::-1]


def test_a_filter_finds_a_row_that_was_not_in_the_first_page(qtbot: QtBot, tmp_path: Path) -> None:
    agent = tmp_path / "t.agent.yaml"
    with HistoryStore(tmp_path / "h.sqlite3") as store:
        made = _served_calls(store, agent, 4500)  # more than one slice of a search
        view = _view(qtbot, store, agent)
        assert made[0] not in {e.thread_id for e in view.visible_entries()}
        qtbot.keyClicks(view.search, "ZÜRICH")
        qtbot.waitUntil(
            lambda: [e.thread_id for e in view.visible_entries()] == [made[0]], timeout=WAIT_MS
        )
        qtbot.waitUntil(lambda: not view.model.searching, timeout=WAIT_MS)
        assert view.stack.currentWidget() is view.table
        qtbot.keyClicks(view.search, "x")
        qtbot.waitUntil(lambda: not view.model.searching, timeout=WAIT_MS)
        assert view.visible_entries() == []
        assert view.stack.currentWidget() is view.empty_label
        assert "Nothing matches the filters" in view.empty_label.text()
        view.search.clear()
        qtbot.waitUntil(lambda: len(view.visible_entries()) == 100, timeout=WAIT_MS)


def test_the_title_is_readable_beside_the_figures(qtbot: QtBot, tmp_path: Path) -> None:
    agent = tmp_path / "t.agent.yaml"
    with HistoryStore(tmp_path / "h.sqlite3") as store:
        _served_calls(store, agent, 3)
        view = _view(qtbot, store, agent)
        header = view.table.horizontalHeader()
        model = view.table.model()
        labels = [
            model.headerData(c, Qt.Orientation.Horizontal, Qt.ItemDataRole.ToolTipRole)
            for c in range(len(COLUMNS))
        ]
        assert labels == list(COLUMNS)
        assert CONVERSATION_TIME in labels and CONVERSATION_TOKENS in labels
        shown = model.headerData(labels.index(CONVERSATION_TIME), Qt.Orientation.Horizontal)
        assert shown.split() == CONVERSATION_TIME.split()  # on two lines, the same words
        title = COLUMNS.index("Title")
        left = header.sectionViewportPosition(title)
        assert left >= 0 and left + header.sectionSize(title) <= view.table.viewport().width()
        metrics = view.table.fontMetrics()
        assert header.sectionSize(title) >= metrics.averageCharWidth() * 30
        time_column = COLUMNS.index(CONVERSATION_TIME)
        assert header.sectionViewportPosition(time_column) < view.table.viewport().width()


def test_a_long_line_in_a_transcript_wraps_at_the_pane_width(qtbot: QtBot, tmp_path: Path) -> None:
    agent = tmp_path / "t.agent.yaml"
    line = "Please plan the whole trip: " + " ".join(f"stop{n}" for n in range(300))
    with HistoryStore(tmp_path / "h.sqlite3") as store:
        thread = store.create_thread(
            agent_path=str(agent), agent_name="Travel Desk", title="Plan", kind="chat"
        )
        store.add_message(thread, "user", line)
        store.add_message(thread, "assistant", "Planned: " + "-" * 400)  # no space to break at
        view = _view(qtbot, store, agent)
        view.open_entry(0)
        transcript = view.transcript
        qtbot.waitUntil(lambda: "stop299" in transcript.toPlainText(), timeout=WAIT_MS)
        document = transcript.document()
        block = document.findBlock(transcript.toPlainText().index("stop150"))
        assert block.layout().lineCount() > 3
        assert transcript.horizontalScrollBar().maximum() == 0
        assert document.size().width() <= transcript.viewport().width() + 1


def test_a_column_header_sorts_every_page_by_that_figure(qtbot: QtBot, tmp_path: Path) -> None:
    agent = tmp_path / "t.agent.yaml"
    with HistoryStore(tmp_path / "h.sqlite3") as store:
        for n in range(150):
            thread = store.create_thread(
                agent_path=str(agent), agent_name="Travel Desk", title=f"chat {n}", kind="chat"
            )
            store.add_message(thread, "user", "Hello")
            tokens = (n * 7) % 150  # every count once, not in the order written
            store.add_message(thread, "assistant", "Hi.", tokens_in=tokens, tokens_out=1)
        view = _view(qtbot, store, agent)
        column = COLUMNS.index(CONVERSATION_TOKENS)
        view.table.horizontalHeader().setSortIndicator(column, Qt.SortOrder.DescendingOrder)
        assert [e.tokens_in for e in view.visible_entries()] == list(range(149, 49, -1))
        view.table.scrollToBottom()
        qtbot.waitUntil(lambda: len(view.visible_entries()) == 150, timeout=WAIT_MS)
        assert [e.tokens_in for e in view.visible_entries()] == list(range(149, -1, -1))
        shown = view.table.model().index(0, column).data()
        assert shown == "149 in / 1 out"
