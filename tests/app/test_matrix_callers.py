"""Caller cases in the studio's results matrix: caller models as columns, each cell's failed step
and rates, both transcripts.

The run goes through the real runtime (``run_matrix`` with caller models: the caller model's
request over the OpenAI provider, then the served call of the agent's own MCP server) to a
``FakeOpenAIServer`` over loopback that answers as a caller model (choosing among the tools it is
offered) and as the agent's model; history is the real SQLite store. The person picks a caller
model by typing it, sets the repeats with the keyboard, clicks Run again, cells and Open
transcript; the test reads the table, the rates line, the details and the transcript as shown.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QApplication
from pytestqt.qtbot import QtBot

from app.test_cases.caller_cells import STEP_WORDS
from app.test_cases.matrix_model import CALLER_PREFIX
from app.test_cases.matrix_tab import MatrixTab
from app.test_cases.transcript import TranscriptDialog
from mcp_export.history.conversations import ConversationFilter
from mcp_export.history.schema import agent_key
from mcp_export.testing.callers import STEPS
from tests.app._windows import studio_window
from tests.fakes._script import Reply, RequestBody, text, tool_calls
from tests.fakes.mcp_clients import book_tool, write_agent
from tests.fakes.openai_server import FakeOpenAIServer

RUN_MS = 60_000
SERVED = "openai:fake-model"
STRICT = "openai:strict-caller"
LAZY = "openai:lazy-caller"
HOTEL = {
    "name": "book_hotel",
    "description": "Books a hotel room in a city.",
    "parameters": {"type": "object", "properties": {"city": {"type": "string"}}},
    "prompt": "Book a hotel in {city}.",
}
CASES: list[dict[str, Any]] = [
    {"name": "plain", "arguments": {"destination": "Rome"}, "expect": {"contains": ["Booked"]}},
    {
        "name": "lisbon",
        "ask": "Fly me to Lisbon",
        "expect": {"arguments": {"destination": "Lisbon"}, "contains": ["Booked"]},
    },
    {"name": "hotel", "ask": "I need a room for tonight"},
    {"name": "vague", "ask": "Book something somewhere"},
    {"name": "oslo", "ask": "Fly me to Oslo", "expect": {"arguments": {"destination": "Bergen"}}},
    {"name": "answer", "ask": "Fly me to Paris", "expect": {"contains": ["Ritz"]}},
    {"name": "weather", "ask": "What is the weather like?", "expect": {"picks": "none"}},
]


def respond(body: RequestBody) -> Reply:
    """The agent's model answers a served call; a caller model picks by the request's words (the
    lazy one calls nothing)."""
    if not body.offered or body.rounds_since_user > 0:
        return text(f"Booked: {body.last_user_text}", usage=(20, 5))
    if body.get("model") == "lazy-caller":
        return text("I would rather not.", usage=(50, 4))
    ask = body.last_user_text
    call: tuple[str, str, dict[str, Any]]
    if "room" in ask:
        call = ("call_1", "book_hotel", {"city": "Lisbon"})
    elif "somewhere" in ask:
        call = ("call_1", "book_flight", {"passengers": 2})  # no destination: invalid
    elif "weather" in ask:
        return text("Sunny.", usage=(50, 2))
    else:
        city = ask.rsplit(" ", 1)[-1]
        call = ("call_1", "book_flight", {"destination": city})
    return tool_calls([call], usage=(300, 12))


def test_caller_models_are_columns_with_the_failed_step_rates_and_both_transcripts(
    qtbot: QtBot, qasync_loop: asyncio.AbstractEventLoop, tmp_path: Path
) -> None:
    with FakeOpenAIServer(responder=respond) as server:
        path = write_agent(
            tmp_path / "desk.agent.yaml",
            base_url=server.base_url,
            tools=[book_tool(tests=CASES), HOTEL],
            settings={"callers": {"decoys": ["calendar"]}},
        )
        window = studio_window(qtbot)
        document = window.open_file(path)
        assert document is not None
        tab = window.open_matrix_tab(document, None, [SERVED])
        assert isinstance(tab, MatrixTab)
        qtbot.waitUntil(lambda: tab.last_end is not None and not tab.busy, timeout=RUN_MS)
        assert tab.caller_row.isVisible()  # the agent has caller cases
        assert tab.caller_picker.models() == [SERVED]  # the agent's own model by default

        # The person adds two caller models, unchecks the default and runs each case twice.
        field = tab.caller_picker.field
        for model in (STRICT, LAZY):
            field.setFocus(Qt.FocusReason.MouseFocusReason)
            qtbot.keyClicks(field, model)
            qtbot.keyClick(field, Qt.Key.Key_Return)
        first = tab.caller_picker.list.item(0)
        assert first is not None and first.text() == SERVED
        first.setCheckState(Qt.CheckState.Unchecked)
        assert tab.caller_picker.models() == [STRICT, LAZY]
        tab.repeat.setFocus(Qt.FocusReason.MouseFocusReason)
        qtbot.keyClick(tab.repeat, Qt.Key.Key_Up)
        assert tab.repeat.value() == 2
        tab.last_end = None
        qtbot.mouseClick(tab.run_button, Qt.MouseButton.LeftButton)
        qtbot.waitUntil(lambda: tab.last_end is not None and not tab.busy, timeout=RUN_MS)

    end: Any = tab.last_end  # set by the run the click started
    assert end is not None and end.state == "done", end.message
    table = tab.model
    headers = [
        table.headerData(c, Qt.Orientation.Horizontal, Qt.ItemDataRole.DisplayRole)
        for c in range(table.columnCount())
    ]
    assert headers == ["Case", SERVED, f"{CALLER_PREFIX}{STRICT}", f"{CALLER_PREFIX}{LAZY}"]
    # 1 ordinary case × 1 model + 6 caller cases × 2 caller models, twice each.
    assert tab.status.text().startswith("26 of 26 ·")

    def shown(case: str, column: str) -> str:
        index = table.index_of(("book_flight", case, column))
        assert index.isValid(), (case, column)
        return str(index.data())

    assert shown("plain", SERVED).startswith("✔ 2/2\n")
    assert not table.index_of(("book_flight", "plain", STRICT)).isValid()
    assert shown("lisbon", STRICT) == "✔ 2/2\npicked 2/2 · args 2/2 · answer 2/2"
    assert shown("hotel", STRICT) == (
        "✘ 0/2 · other tool: book_hotel\npicked 0/2 · args 0/2 · answer 0/2"
    )
    assert shown("vague", STRICT).startswith("✘ 0/2 · invalid arguments\npicked 2/2 · args 0/2")
    assert shown("oslo", STRICT).startswith("✘ 0/2 · arguments not as expected\npicked 2/2")
    assert shown("answer", STRICT) == (
        "✘ 0/2 · answer: contains[0]\npicked 2/2 · args 2/2 · answer 0/2"
    )
    assert shown("weather", STRICT) == "✔ 2/2\npicked 2/2 · args 2/2 · answer 2/2"
    assert shown("lisbon", LAZY) == "✘ 0/2 · no call\npicked 0/2 · args 0/2 · answer 0/2"
    assert shown("weather", LAZY).startswith("✔ 2/2")
    # A cell no case runs in cannot be selected.
    blank = table.index(table.cases().index(("book_flight", "plain")), 2)
    assert blank.data() is None and not blank.flags() & Qt.ItemFlag.ItemIsSelectable

    # Each caller model's rates, over its 12 runs, in words under the status.
    assert tab.rates.isVisible()
    rates = tab.rates.text().splitlines()
    assert rates[0] == (
        f"{STRICT} (caller): picked right 10/12 · wrong tool 2 (book_hotel ×2) · arguments "
        "valid 6/12 · as expected 6/12 · answer passed 4/12"
    )
    assert rates[1].startswith(f"{LAZY} (caller): picked right 2/12 · no call 10 ·")
    tip = table.headerData(2, Qt.Orientation.Horizontal, Qt.ItemDataRole.ToolTipRole)
    assert f"served by {SERVED}" in tip and "picked right 10/12" in tip

    # A failed caller cell's details say what the caller did; its transcript shows both sides.
    tab.select_cells([("book_flight", "hotel", STRICT)])
    details = tab.details.browser.toPlainText()
    assert "Caller case: failed at other tool" in details
    assert f"caller {STRICT} · served by {SERVED}" in details
    assert "→ it called book_hotel" in details and '"city": "Lisbon"' in details
    assert "Answer" not in details  # not served: no answer of ours
    assert tab.details.transcript_button.isEnabled()
    qtbot.mouseClick(tab.details.transcript_button, Qt.MouseButton.LeftButton)
    dialog = tab.findChild(TranscriptDialog)
    assert isinstance(dialog, TranscriptDialog) and dialog.isVisible()
    transcript = dialog.browser.toPlainText()
    assert "1 · The caller model openai:strict-caller" in transcript
    assert "I need a room for tonight" in transcript
    offered = transcript.split("The tool list it was offered with the request (", 1)[1].split(
        " tools", 1
    )[0]
    assert int(offered) > 2  # ours and the calendar decoys
    assert transcript.index("• book_flight") < transcript.index("• book_hotel")
    assert "Books a hotel room in a city." in transcript
    assert "2 · Our served call" in transcript
    assert "Not served: the caller's reply failed at other tool." in transcript
    dialog.close()

    # Invalid arguments are named with the schema's own messages.
    tab.select_cells([("book_flight", "vague", STRICT)])
    details = tab.details.browser.toPlainText()
    assert "failed at invalid arguments" in details
    assert "arguments: book_flight was called with invalid arguments:" in details
    assert "destination" in details.split("was called with invalid arguments:", 1)[1]

    # A served caller run: the caller's side, then our served call from the history.
    tab.select_cells([("book_flight", "answer", STRICT)])
    assert "Our served call" in tab.details.browser.toPlainText()
    qtbot.mouseClick(tab.details.transcript_button, Qt.MouseButton.LeftButton)
    dialogs = [d for d in tab.findChildren(TranscriptDialog) if d.isVisible()]
    assert len(dialogs) == 1
    both = dialogs[0].browser.toPlainText()
    assert both.index("Fly me to Paris") < both.index("2 · Our served call")
    assert "Booked: Book a flight to Paris" in both.split("2 · Our served call", 1)[1]
    dialogs[0].close()
    QApplication.processEvents()
    assert set(STEP_WORDS) == set(STEPS)  # every step the runtime names has words here

    # History lists every caller run: those that made no served call as the caller's turn,
    # with the caller model and the step.
    assert tab.history is not None
    scope = ConversationFilter(agent_key(str(path)), case_runs=True)
    marks = [r.case for r in tab.history.conversations(scope, limit=200).rows if r.case]
    callers = [mark for mark in marks if mark.caller and mark.model in (STRICT, LAZY)]
    assert len(callers) == 24  # the second run: 6 caller cases × 2 caller models × 2 repeats
    assert {(m.case_name, m.model, m.step) for m in callers if not m.served} == {
        ("hotel", STRICT, "wrong tool"),
        ("vague", STRICT, "invalid arguments"),
        ("oslo", STRICT, "unexpected arguments"),
        ("weather", STRICT, None),
        *((case, LAZY, "no call") for case in ("lisbon", "hotel", "vague", "oslo", "answer")),
        ("weather", LAZY, None),
    }
    assert sum(not m.served for m in callers) == 20

    # The caller models picked come back in the agent's next matrix tab.
    window.remove_run_tab(tab)
    again = window.open_matrix_tab(document, [("book_flight", "weather")], [SERVED])
    assert isinstance(again, MatrixTab) and again is not tab
    assert again.caller_picker.models() == [STRICT, LAZY]
    assert again.caller_picker.all_models() == [SERVED, STRICT, LAZY]
    again.stop()
    qtbot.waitUntil(lambda: not again.busy, timeout=RUN_MS)
    window.close()


def test_a_description_edit_shows_the_pick_rate_before_and_after_on_the_next_run(
    qtbot: QtBot, qasync_loop: asyncio.AbstractEventLoop, tmp_path: Path
) -> None:
    from app.tool_editor.editor import ToolEditor
    from tests.app.test_tests_panel import type_into

    def picky(body: RequestBody) -> Reply:
        """A caller that calls book_flight only when its description speaks of trips."""
        if not body.offered or body.rounds_since_user > 0:
            return text(f"Booked: {body.last_user_text}")
        ours = next(tool for tool in body.offered if tool.name == "book_flight")
        if "trip" in ours.description:
            return tool_calls([("call_1", "book_flight", {"destination": "Lisbon"})])
        return text("I cannot help with that.")

    case = {"name": "trip", "ask": "Plan my trip to Lisbon"}
    with FakeOpenAIServer(responder=picky) as server:
        path = write_agent(
            tmp_path / "desk.agent.yaml",
            base_url=server.base_url,
            tools=[book_tool(tests=[case])],
            settings={"callers": {"decoys": []}},
        )
        window = studio_window(qtbot)
        document = window.open_file(path)
        assert document is not None
        tab = window.open_matrix_tab(document, None, [SERVED])
        assert isinstance(tab, MatrixTab)
        qtbot.waitUntil(lambda: tab.last_end is not None and not tab.busy, timeout=RUN_MS)
        assert str(tab.model.index_of(("book_flight", "trip", SERVED)).data()).startswith(
            "✘ 0/1 · no call"
        )
        assert "description changed" not in tab.rates.text()

        editor = window.open_tool_tab(document, document.agent.tools[0])
        assert isinstance(editor, ToolEditor)
        type_into(qtbot, editor.fields.description_edit, " Use it for any trip.")
        assert "trip" in document.agent.tools[0].description
        window.tabs.setCurrentWidget(tab)
        tab.last_end = None
        qtbot.mouseClick(tab.run_button, Qt.MouseButton.LeftButton)
        qtbot.waitUntil(lambda: tab.last_end is not None and not tab.busy, timeout=RUN_MS)

    assert str(tab.model.index_of(("book_flight", "trip", SERVED)).data()).startswith("✔ 1/1")
    assert tab.rates.text().splitlines()[-1] == (
        f"book_flight's description changed since the last run: trip on {SERVED} picked it "
        "0/1 then, 1/1 now"
    )
    window.close()


def test_the_agent_files_caller_models_are_the_ones_picked_at_first(
    qtbot: QtBot, qasync_loop: asyncio.AbstractEventLoop, tmp_path: Path
) -> None:
    with FakeOpenAIServer(responder=respond) as server:
        path = write_agent(
            tmp_path / "desk.agent.yaml",
            base_url=server.base_url,
            tools=[book_tool(tests=[CASES[1]])],
            settings={"callers": {"decoys": [], "models": [STRICT, LAZY]}},
        )
        window = studio_window(qtbot)
        document = window.open_file(path)
        assert document is not None
        tab = window.open_matrix_tab(document, None, [SERVED])
        assert isinstance(tab, MatrixTab)
        assert tab.caller_picker.models() == [STRICT, LAZY]
        qtbot.waitUntil(lambda: tab.last_end is not None and not tab.busy, timeout=RUN_MS)
    assert tab.model.caller_models == [STRICT, LAZY]
    assert str(tab.model.index_of(("book_flight", "lisbon", LAZY)).data()).startswith(
        "✘ 0/1 · no call"
    )
    window.close()
