"""Caller cases' runs in History: the row names the caller model and the step, and the opened
run shows the caller's side (its request, the whole tool list, its reply) before our served call.

Real widgets offscreen over a real history database filled by a real matrix run with a caller
model (``run_matrix`` with ``CallerOptions``: the caller's request over the OpenAI provider, the
served call of the real ``AgentServer``, against ``FakeOpenAIServer``) recorded by
``record_matrix``.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import anyio
import pytest
from pytestqt.qtbot import QtBot

from app.history.model import CASE, COLUMNS
from app.history.view import HistoryView
from mcp_export.history.store import HistoryStore
from mcp_export.testing.callers import CallerOptions
from mcp_export.testing.record import record_matrix
from mcp_export.testing.run import run_matrix, select_cases
from schema_types.files.agent_file import load_agent
from tests.app.test_matrix_callers import HOTEL, SERVED, STRICT, respond
from tests.fakes.mcp_clients import book_tool, write_agent
from tests.fakes.openai_server import FakeOpenAIServer

CASES = [
    {"name": "lisbon", "ask": "Fly me to Lisbon", "expect": {"contains": ["Booked"]}},
    {"name": "paris", "ask": "Fly me to Paris", "expect": {"contains": ["Ritz"]}},
    {"name": "hotel", "ask": "I need a room for tonight"},
]


async def _record(agent: Path, store: HistoryStore) -> None:
    loaded = load_agent(agent)
    matrix = await run_matrix(
        loaded,
        agent,
        select_cases(loaded),
        models=[SERVED],
        history=store,
        callers=CallerOptions(models=(STRICT,)),
    )
    record_matrix(matrix, store)


@pytest.fixture
def view(qtbot: QtBot, tmp_path: Path) -> Iterator[HistoryView]:
    database = tmp_path / "history.sqlite3"
    with FakeOpenAIServer(responder=respond) as model:
        agent = write_agent(
            tmp_path / "travel.agent.yaml",
            base_url=model.base_url,
            tools=[book_tool(tests=CASES), HOTEL],
            settings={"callers": {"decoys": []}},
        )
        with HistoryStore(database) as store:
            anyio.run(_record, agent, store)
    with HistoryStore(database) as store:
        widget = HistoryView("Travel Desk", agent, store)
        qtbot.addWidget(widget)
        widget.resize(1024, 700)
        widget.show()
        qtbot.waitExposed(widget)
        yield widget


def _cells(view: HistoryView, column: str) -> list[str]:
    model = view.table.model()
    index = COLUMNS.index(column)
    return [str(model.index(row, index).data()) for row in range(model.rowCount())]


def test_a_caller_case_run_shows_its_caller_model_and_step_and_opens_both_transcripts(
    view: HistoryView,
) -> None:
    # The runs whose call was served are conversations; the one that picked another tool
    # made no call of ours: its conversation is the caller's turn.
    assert sorted(_cells(view, CASE)) == [
        f"hotel · caller {STRICT} · other tool",
        f"lisbon · caller {STRICT} · passed",
        f"paris · caller {STRICT} · answer",
    ]
    row = _cells(view, CASE).index(f"paris · caller {STRICT} · answer")
    view.open_entry(row)
    shown = view.transcript.toPlainText()
    assert f"caller case paris · caller model {STRICT} · served by {SERVED} · failed at answer" in (
        shown
    )
    caller, served = shown.split("2 · Our served call", 1)
    assert f"1 · The caller model {STRICT}" in caller
    assert "Fly me to Paris" in caller
    assert (
        "The tool list it was offered with the request (2 tools, ours first, then the decoys)"
        in caller
    )
    assert "• book_flight" in caller and "• book_hotel" in caller
    assert "→ book_flight" in caller and '"destination": "Paris"' in caller
    assert "Book a flight to Paris" in served  # the filled prompt of our served call
    assert "Booked: Book a flight to Paris" in served


def test_every_caller_run_of_a_matrix_run_shows_the_tool_list_kept_once_for_it(
    view: HistoryView,
) -> None:
    for label in (f"lisbon · caller {STRICT} · passed", f"paris · caller {STRICT} · answer"):
        view.open_entry(_cells(view, CASE).index(label))
        caller = view.transcript.toPlainText().split("2 · Our served call", 1)[0]
        assert "The tool list it was offered with the request (2 tools" in caller, label
        assert "• book_flight" in caller and "Books a hotel room in a city." in caller, label


def test_a_caller_run_that_made_no_served_call_opens_the_callers_turn_and_why(
    view: HistoryView,
) -> None:
    row = _cells(view, CASE).index(f"hotel · caller {STRICT} · other tool")
    assert _cells(view, "Tool")[row] == "book_flight"
    view.open_entry(row)
    shown = view.transcript.toPlainText()

    assert f"caller case hotel · caller model {STRICT} · not served · failed at other tool" in (
        shown
    )
    caller, served = shown.split("2 · Our served call", 1)
    assert f"1 · The caller model {STRICT}" in caller
    assert "I need a room for tonight" in caller
    assert "→ book_hotel" in caller and '"city": "Lisbon"' in caller
    assert "The tool list it was offered with the request (2 tools" in caller
    assert served.strip().startswith("Not served: the caller's reply failed at other tool.")
    assert "Assistant" not in served and "User" not in served  # its turn is told once, above
    assert "300 in / 12 out" in served  # the caller's tokens are the conversation's
    assert not view.rerun_button.isEnabled()  # no run of ours to run again
