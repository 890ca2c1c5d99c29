"""The Versions tab reads History off the GUI thread: it is shown at once saying that it reads,
its rows follow (the figures of each version, newest first, the editor's marked), a read made
for a tool no longer chosen is dropped, and a history that cannot be read is said so in the tab.
The case runs are written into the real SQLite history the studio opens."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pytestqt.qtbot import QtBot

from app.versions.view import COLUMNS, SAME_AS_EDITOR, VersionsView
from mcp_export.history.schema import agent_key
from mcp_export.history.store import HistoryStore
from mcp_export.versions.fingerprint import tool_version
from schema_types.files.agent_file import load_agent
from tests.app._tables import pick_row
from tests.app._windows import studio_window
from tests.fakes.mcp_clients import book_tool, write_agent


def _add(
    store: HistoryStore, path: Path, tool: str, fingerprint: str, ms: float, **row: Any
) -> None:
    values: dict[str, Any] = {
        "model": "openai:x",
        "passed": True,
        "tokens_in": 20,
        "tokens_out": 5,
        "cost_usd": 0.0001,
        "version": {"tool": {"prompt": f"{tool} {fingerprint[:4]}"}, "model": "openai:x"},
    } | row
    store.add_case_run(
        matrix_id="m",
        agent_path=agent_key(str(path)),
        agent_name="Travel Desk",
        tool_name=tool,
        case_name="oslo",
        attempt=1,
        failures=[],
        answer="Booked.",
        is_error=False,
        duration_ms=ms,
        turns=1,
        verdict=None,
        cost_at_least=False,
        fingerprint=fingerprint,
        **values,
    )


def _rows(view: VersionsView) -> list[list[str]]:
    table = view.table
    return [
        [table.item(r, c).text() for c in range(table.columnCount())]  # type: ignore[union-attr]
        for r in range(table.rowCount())
    ]


def _agent(tmp_path: Path) -> tuple[Path, str]:
    path = write_agent(
        tmp_path / "desk.agent.yaml",
        tools=[book_tool(), book_tool("find_hotel", prompt="Find a hotel in {destination}.")],
    )
    agent = load_agent(path)
    tool = agent.metadata.tool("book_flight")
    assert tool is not None
    return path.resolve(), tool_version(agent, tool).fingerprint


def test_the_tab_shows_at_once_that_it_reads_and_then_each_versions_figures(
    qtbot: QtBot, tmp_path: Path
) -> None:
    path, current = _agent(tmp_path)
    older = "c" * 64
    with HistoryStore() as store:
        for ms, passed in ((100.0, True), (300.0, False), (200.0, True)):
            _add(store, path, "book_flight", older, ms, passed=passed)
        _add(store, path, "book_flight", current, 40.0, cost_usd=None)
        _add(store, path, "book_flight", current, 60.0)
    window = studio_window(qtbot)
    document = window.open_file(path)
    assert document is not None
    view = window.open_versions_tab(document)
    assert isinstance(view, VersionsView)
    assert view.reading
    assert view.note.text() == "Reading the versions of book_flight from History…"
    with qtbot.waitSignal(view.read_done, timeout=5_000):
        pass
    rows = _rows(view)
    assert [row[:2] for row in rows] == [["*", current[:12]], ["", older[:12]]]  # newest first
    assert [row[3:6] for row in rows] == [
        ["2/2 (100%)", "50 ms", "25"],
        ["2/3 (67%)", "200 ms", "25"],
    ]
    assert [row[6] for row in rows] == ["≥ $0.0000500", "$0.000100"]  # one cost unknown
    assert view.note.text().startswith("2 version(s) of book_flight, newest first")
    window.close()


def test_a_read_for_a_tool_no_longer_chosen_is_dropped(qtbot: QtBot, tmp_path: Path) -> None:
    path, _current = _agent(tmp_path)
    with HistoryStore() as store:
        for n in range(300):
            _add(store, path, "book_flight", f"{n % 30:064x}", float(n))
        _add(store, path, "find_hotel", "d" * 64, 5.0)
    window = studio_window(qtbot)
    document = window.open_file(path)
    assert document is not None
    view = window.open_versions_tab(document)
    assert isinstance(view, VersionsView)
    view.tool_combo.setCurrentText("find_hotel")  # while book_flight's read runs
    assert view.table.rowCount() == 0  # book_flight's rows are not left under find_hotel
    qtbot.waitUntil(lambda: not view.reading, timeout=5_000)
    qtbot.wait(200)  # book_flight's read, had it been kept, would have landed by now
    assert [row[1] for row in _rows(view)] == ["d" * 12]
    assert view.note.text().startswith("1 version(s) of find_hotel")
    window.close()


def test_a_history_that_cannot_be_read_is_said_in_the_tab(qtbot: QtBot, tmp_path: Path) -> None:
    path, _current = _agent(tmp_path)
    window = studio_window(qtbot)
    document = window.open_file(path)
    assert document is not None
    view = window.open_versions_tab(document)
    assert isinstance(view, VersionsView)
    qtbot.waitUntil(lambda: not view.reading, timeout=5_000)
    assert view.note.text().startswith("No run of book_flight is recorded yet")
    window.close_history_store()  # as when the window closes while the tab reads
    with qtbot.waitSignal(view.read_done, timeout=5_000):
        view.refresh()
    assert view.note.text().startswith("History cannot be read: ")
    assert view.table.rowCount() == 0
    window.close()


def test_at_1024_wide_the_model_gives_way_so_the_figures_and_last_run_fit(
    qtbot: QtBot, tmp_path: Path
) -> None:
    path, current = _agent(tmp_path)
    model = "openai:a-fine-tuned-model-with-a-very-long-name-2026-11-01"
    with HistoryStore() as store:
        _add(store, path, "book_flight", current, 40.0, model=model)
    window = studio_window(qtbot)
    document = window.open_file(path)
    assert document is not None
    view = window.open_versions_tab(document)
    assert isinstance(view, VersionsView)
    qtbot.waitUntil(lambda: not view.reading, timeout=5_000)
    table, header = view.table, view.table.horizontalHeader()
    last = len(COLUMNS) - 1
    model_column = COLUMNS.index("Model")
    whole = table.fontMetrics().horizontalAdvance(model)

    def last_run_shown() -> bool:
        end = header.sectionViewportPosition(last) + header.sectionSize(last)
        return header.sectionViewportPosition(0) == 0 and end <= table.viewport().width()

    window.resize(1024, 700)
    qtbot.waitUntil(last_run_shown, timeout=2_000)
    assert header.sectionSize(model_column) < whole  # elided; whole in the tool tip
    assert table.item(0, model_column).toolTip() == model  # type: ignore[union-attr]
    assert table.item(0, 1).toolTip() == current  # type: ignore[union-attr]
    window.resize(1900, 1000)
    qtbot.waitUntil(lambda: header.sectionSize(model_column) >= whole, timeout=2_000)
    assert last_run_shown()
    window.close()


def test_an_edit_moves_the_editors_mark_and_undo_brings_it_back(
    qtbot: QtBot, tmp_path: Path
) -> None:
    path, current = _agent(tmp_path)
    agent = load_agent(path)
    tool = agent.metadata.tool("book_flight")
    assert tool is not None
    with HistoryStore() as store:
        decisive = tool_version(agent, tool).decisive
        _add(store, path, "book_flight", current, 40.0, version=decisive)
        _add(store, path, "book_flight", "c" * 64, 50.0)
    window = studio_window(qtbot)
    document = window.open_file(path)
    assert document is not None
    view = window.open_versions_tab(document)
    assert isinstance(view, VersionsView)
    qtbot.waitUntil(lambda: not view.reading, timeout=5_000)
    marks = lambda: [row[0] for row in _rows(view)]  # noqa: E731
    assert marks() == ["", "*"]  # the older run is "c…", the newest the editor's
    pick_row(view.table, 1)
    assert view.diff.toPlainText() == SAME_AS_EDITOR
    document.set_field(
        ("metadata", "tools", 0, "prompt"), "Book {destination} now.", text="Edit the template"
    )
    qtbot.waitUntil(lambda: marks() == ["", ""], timeout=5_000)
    assert "+template: Book {destination} now." in view.diff.toPlainText().splitlines()
    edited = view.current()
    assert edited is not None
    assert view.note.text().endswith(f"* is the editor's version ({edited.short})")
    document.undo_stack.undo()
    qtbot.waitUntil(lambda: marks() == ["", "*"], timeout=5_000)
    assert view.diff.toPlainText() == SAME_AS_EDITOR
    window.close()
