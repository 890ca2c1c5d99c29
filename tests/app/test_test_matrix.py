"""The studio's run of test cases: the matrix tab, its runner, its details, diff and transcript.

Every run goes through the real runtime (``run_matrix``: served calls of the agent's own MCP
server) to ``FakeOpenAIServer`` endpoints over loopback; history is the real SQLite store in the
test's ``METAAGENT_HOME``. Every wait is bounded.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import yaml
from PySide6.QtWidgets import QApplication, QMenu
from pytestqt.qtbot import QtBot

from app.document.test_cases import replace_test_case
from app.errors import reporter
from app.test_cases.diff import changed_words, diff_answers
from app.test_cases.matrix_model import shown_result, summarize
from app.test_cases.matrix_tab import MatrixTab
from app.test_cases.runner import STOP_LIMIT_S
from app.test_cases.transcript import TranscriptDialog
from app.window.main_window import MainWindow
from mcp_export.testing.expect import CallOutcome, Failure
from mcp_export.testing.judge import JUDGE_SYSTEM_PROMPT
from mcp_export.testing.run import CaseResult
from schema_types.cases import TestCase
from tests.app._windows import studio_window
from tests.fakes._script import Reply, RequestBody, delay, hang, text
from tests.fakes.mcp_clients import book_tool, write_agent
from tests.fakes.openai_server import FakeOpenAIServer

RUN_MS = 30_000
GOOD, CHEAP = "openai:fake-model", "vllm:cheap"
CASES: list[dict[str, Any]] = [
    {"name": "oslo", "arguments": {"destination": "Oslo"}, "expect": {"contains": ["AF123"]}},
    {"name": "rome", "arguments": {"destination": "Rome"}, "expect": {"contains": ["AZ1"]}},
]


def _answers(replies: dict[str, str], *, wait: float = 0.0) -> Callable[[RequestBody], Reply]:
    """Answer each city's request with ``replies[city]`` (read at request time)."""

    def respond(body: RequestBody) -> Reply:
        said = next((v for k, v in replies.items() if k in body.last_user_text), "?")
        reply = text(said, usage=(20, 5))
        return delay(wait, reply) if wait else reply

    return respond


def _agent(
    tmp_path: Path, good: FakeOpenAIServer, cheap: FakeOpenAIServer | None = None, **tool: Any
) -> Path:
    path = write_agent(
        tmp_path / "desk.agent.yaml",
        base_url=good.base_url,
        tools=[book_tool(tests=CASES, **tool)],
    )
    if cheap is not None:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
        data["providers"]["vllm"] = {"VLLM_BASE_URL": cheap.base_url, "VLLM_API_KEY": "sk-x"}
        path.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
    return path


def _window(qtbot: QtBot, path: Path) -> MainWindow:
    window = studio_window(qtbot)
    assert window.open_file(path) is not None
    return window


def _matrix(
    window: MainWindow,
    models: list[str] | None = None,
    selection: list[tuple[str, str]] | None = None,
) -> MatrixTab:
    document = window.current_document()
    assert document is not None
    tab = window.open_matrix_tab(document, selection, models)
    assert isinstance(tab, MatrixTab)
    return tab


def _wait_end(qtbot: QtBot, tab: MatrixTab) -> None:
    qtbot.waitUntil(lambda: tab.last_end is not None and not tab.busy, timeout=RUN_MS)


def test_a_run_over_two_endpoints_streams_into_the_matrix_and_names_the_failed_expectation(
    qtbot: QtBot, qasync_loop: asyncio.AbstractEventLoop, tmp_path: Path
) -> None:
    with (
        FakeOpenAIServer(responder=_answers({"Oslo": "Booked AF123.", "Rome": "AZ1 it is."})) as a,
        FakeOpenAIServer(
            responder=_answers({"Oslo": "Sorry, sold out.", "Rome": "AZ1."}, wait=1.0)
        ) as b,
    ):
        window = _window(qtbot, _agent(tmp_path, a, b))
        tab = _matrix(window, models=[GOOD, CHEAP])
        assert window.tabs.currentWidget() is tab
        assert tab.model.models == [GOOD, CHEAP]
        assert tab.model.cases() == [("book_flight", "oslo"), ("book_flight", "rome")]

        # The quick endpoint's cells fill in while the slow one's are still running.
        qtbot.waitUntil(
            lambda: tab.model.summary(("book_flight", "oslo", GOOD)).runs == 1, timeout=RUN_MS
        )
        assert tab.model.summary(("book_flight", "oslo", CHEAP)).runs == 0
        assert tab.busy and tab.status.text().startswith(("1 of 4", "2 of 4"))
        _wait_end(qtbot, tab)

    assert tab.last_end is not None and tab.last_end.state == "done"
    cells = {
        (case, model): tab.model.summary(("book_flight", case, model))
        for case in ("oslo", "rome")
        for model in (GOOD, CHEAP)
    }
    assert {key: s.failed for key, s in cells.items()} == {
        ("oslo", GOOD): False,
        ("rome", GOOD): False,
        ("oslo", CHEAP): True,
        ("rome", CHEAP): False,
    }
    failed = tab.model.index_of(("book_flight", "oslo", CHEAP))
    shown = failed.data()
    assert shown.startswith("✘ 0/1 · contains[0]\n")
    assert shown.endswith(" · 25 tokens")
    assert tab.model.index_of(("book_flight", "oslo", GOOD)).data().startswith("✔ 1/1\n")
    assert tab.status.text().startswith("4 of 4 · 1 failed")
    window.close()


def test_a_second_run_puts_the_regression_first_and_marks_it(
    qtbot: QtBot, qasync_loop: asyncio.AbstractEventLoop, tmp_path: Path
) -> None:
    replies = {"Oslo": "Booked AF123.", "Rome": "AZ1 it is."}
    with FakeOpenAIServer(responder=_answers(replies)) as model:
        window = _window(qtbot, _agent(tmp_path, model))
        tab = _matrix(window)
        _wait_end(qtbot, tab)
        assert tab.last_end is not None and tab.last_end.changes == {
            ("book_flight", "oslo", GOOD): "new",
            ("book_flight", "rome", GOOD): "new",
        }
        assert tab.model.cases() == [("book_flight", "oslo"), ("book_flight", "rome")]

        replies["Rome"] = "Sorry, nothing to Rome."
        tab.last_end = None
        tab.run_button.click()
        _wait_end(qtbot, tab)

    assert tab.model.cases() == [("book_flight", "rome"), ("book_flight", "oslo")]
    rome = ("book_flight", "rome", GOOD)
    assert tab.model.change(rome) == "regressed"
    assert tab.model.index(0, 1).data().startswith("✘ 0/1 ▼ regressed · contains[0]")
    assert tab.model.change(("book_flight", "oslo", GOOD)) == "same"
    assert "1 regressed" in tab.status.text()
    window.close()


def test_two_selected_cells_show_a_diff_of_their_answers(
    qtbot: QtBot, qasync_loop: asyncio.AbstractEventLoop, tmp_path: Path
) -> None:
    with (
        FakeOpenAIServer(responder=_answers({"Oslo": "Booked AF123 to Oslo, window seat."})) as a,
        FakeOpenAIServer(responder=_answers({"Oslo": "Booked KL9 to Oslo, aisle seat."})) as b,
    ):
        window = _window(qtbot, _agent(tmp_path, a, b))
        tab = _matrix(window, models=[GOOD, CHEAP], selection=[("book_flight", "oslo")])
        _wait_end(qtbot, tab)

    tab.select_cells([("book_flight", "oslo", GOOD), ("book_flight", "oslo", CHEAP)])
    assert tab.side.currentWidget() is tab.diff
    assert tab.diff.left_view.toPlainText().strip() == "Booked AF123 to Oslo, window seat."
    assert tab.diff.right_view.toPlainText().strip() == "Booked KL9 to Oslo, aisle seat."
    removed = [p.text for p in tab.diff.left_pieces if p.kind == "removed"]
    added = [p.text for p in tab.diff.right_pieces if p.kind == "added"]
    assert (removed, added) == (["AF123", "window"], ["KL9", "aisle"])
    assert "background-color" in tab.diff.left_view.toHtml()
    assert tab.diff.summary.text().startswith("4 words differ")

    tab.select_cells([("book_flight", "oslo", CHEAP)])
    assert tab.side.currentWidget() is tab.details
    details = tab.details.browser.toPlainText()
    assert tab.details.title.text().startswith("<b>book_flight / oslo</b> · ")
    assert "FAIL</b> on <b>vllm:cheap</b>" in tab.details.title.text()
    assert 'contains[0]: "AF123" is not in the answer' in details
    assert "Booked KL9 to Oslo, aisle seat." in details
    window.close()


def test_a_cells_transcript_opens_with_the_calls_messages(
    qtbot: QtBot, qasync_loop: asyncio.AbstractEventLoop, tmp_path: Path
) -> None:
    with FakeOpenAIServer(responder=_answers({"Oslo": "Booked AF123."})) as model:
        window = _window(qtbot, _agent(tmp_path, model))
        tab = _matrix(window, selection=[("book_flight", "oslo")])
        _wait_end(qtbot, tab)

    tab.select_cells([("book_flight", "oslo", GOOD)])
    assert tab.details.transcript_button.isEnabled()
    tab.details.transcript_button.click()
    dialog = next(
        w
        for w in QApplication.topLevelWidgets()
        if isinstance(w, TranscriptDialog) and w.isVisible()
    )
    transcript = dialog.browser.toPlainText()
    assert "Book a flight to Oslo for 1 passenger(s)." in transcript
    assert "Booked AF123." in transcript
    assert "book_flight / oslo · attempt 1" in transcript
    dialog.close()
    window.close()


def test_stop_cancels_a_run_on_a_hanging_model_and_the_tab_says_so(
    qtbot: QtBot, qasync_loop: asyncio.AbstractEventLoop, tmp_path: Path
) -> None:
    with FakeOpenAIServer(responder=lambda _body: hang()) as model:
        window = _window(qtbot, _agent(tmp_path, model))
        tab = _matrix(window)
        qtbot.waitUntil(lambda: len(model.model_requests) == 2, timeout=RUN_MS)
        asked = time.monotonic()
        tab.stop_button.click()
        assert tab.status.text().startswith("Stopping")
        _wait_end(qtbot, tab)
        took = time.monotonic() - asked

    assert took < STOP_LIMIT_S / 2
    assert tab.last_end is not None and tab.last_end.state == "stopped"
    assert tab.status.text() == "Stopped after 0 of 2 · a stopped run is not recorded"
    assert tab.run_button.isEnabled() and not tab.stop_button.isEnabled()
    window.close()


def test_a_model_that_cannot_run_is_named_with_its_reason(
    qtbot: QtBot, qasync_loop: asyncio.AbstractEventLoop, tmp_path: Path
) -> None:
    with FakeOpenAIServer(responder=_answers({"Oslo": "AF123", "Rome": "AZ1"})) as model:
        window = _window(qtbot, _agent(tmp_path, model))
        tab = _matrix(window, models=[GOOD, "nowhere:x"])
        _wait_end(qtbot, tab)

    assert tab.notes.isVisible()
    assert tab.notes.text().startswith("nowhere:x: every call failed: book_flight cannot run:")
    assert tab.model.summary(("book_flight", "oslo", "nowhere:x")).first_failure == "isError"
    window.close()


def test_an_agent_without_cases_says_how_to_add_them(
    qtbot: QtBot, qasync_loop: asyncio.AbstractEventLoop, tmp_path: Path
) -> None:
    path = write_agent(tmp_path / "plain.agent.yaml", tools=[book_tool()])
    window = _window(qtbot, path)
    document = window.current_document()
    assert document is not None

    assert window.open_matrix_tab(document) is None
    window.cases_action.trigger()

    assert window.run_tabs() == []
    messages = [r.message for r in reporter().history if r.level == "warning"]
    assert len(messages) == 2
    assert "Travel Desk has no test cases yet" in messages[0]
    assert "Save as test case" in messages[0] and "Tests panel" in messages[0]
    assert "no test cases" in window.statusBar().currentMessage()
    window.close()


def test_the_agent_menu_action_runs_every_case_in_a_tab(
    qtbot: QtBot, qasync_loop: asyncio.AbstractEventLoop, tmp_path: Path
) -> None:
    with FakeOpenAIServer(responder=_answers({"Oslo": "AF123", "Rome": "AZ1"})) as model:
        window = _window(qtbot, _agent(tmp_path, model))
        action = window.cases_action
        assert action.isEnabled() and action.shortcut().toString() == "Ctrl+Shift+Return"
        menu = next(a.menu() for a in window.menuBar().actions() if a.text() == "&Agent")
        assert isinstance(menu, QMenu) and action in menu.actions()
        action.trigger()
        tabs = window.run_tabs()
        assert len(tabs) == 1 and isinstance(tabs[0], MatrixTab)
        tab = tabs[0]
        assert window.tabs.tabText(window.tabs.indexOf(tab)) == "Tests · Travel Desk"
        _wait_end(qtbot, tab)

        action.trigger()  # the same tab, run again
        assert window.run_tabs() == [tab]
        assert tab.busy
        _wait_end(qtbot, tab)

    assert tab.status.text().startswith("2 of 2 · 0 failed")
    window.close()


def test_repeats_give_a_pass_rate_and_the_judges_verdict_shows_with_its_reason(
    qtbot: QtBot, qasync_loop: asyncio.AbstractEventLoop, tmp_path: Path
) -> None:
    verdicts = iter(['{"pass": true, "reason": "Names AF123."}'] * 2)

    def respond(body: RequestBody) -> Reply:
        if body["messages"][0]["content"] == JUDGE_SYSTEM_PROMPT:
            return text(next(verdicts, '{"pass": false, "reason": "No flight is named."}'))
        return text("Booked AF123.", usage=(20, 5))

    judged = [
        {"name": "judged", "arguments": {"destination": "Oslo"}, "expect": {"judge": "A flight."}}
    ]
    with FakeOpenAIServer(responder=respond) as model:
        path = write_agent(
            tmp_path / "desk.agent.yaml", base_url=model.base_url, tools=[book_tool(tests=judged)]
        )
        window = _window(qtbot, path)
        tab = _matrix(window)
        _wait_end(qtbot, tab)
        tab.repeat.setValue(2)
        tab.concurrency.setValue(1)
        tab.last_end = None
        tab.run_button.click()
        _wait_end(qtbot, tab)

    cell = ("book_flight", "judged", GOOD)
    assert tab.model.index_of(cell).data().startswith("✘ 1/2 ▼ regressed · judge\n")
    tab.select_cells([cell])
    assert tab.details.attempt.isVisible()
    assert [tab.details.attempt.itemText(i) for i in range(2)] == ["Attempt 1 ✔", "Attempt 2 ✘"]
    shown = tab.details.shown()
    assert shown is not None and shown.attempt == 2
    details = tab.details.browser.toPlainText()
    assert "judge: No flight is named." in details
    assert "Judge: fail — No flight is named." in details
    tab.details.attempt.setCurrentIndex(0)
    assert "Judge: pass — Names AF123." in tab.details.browser.toPlainText()
    assert "1/2 runs passed" in tab.details.title.text()
    window.close()


def test_a_cell_sums_its_runs_and_unknown_tokens_stay_unknown() -> None:
    def result(attempt: int, passed: bool, tokens: int | None) -> CaseResult:
        failures = () if passed else (Failure("contains[0]", "missing"),)
        outcome = CallOutcome("answer", False, 100.0 * attempt, (), 1, tokens, tokens)
        return CaseResult("t", "c", "m", attempt, passed, failures, outcome)

    runs = [result(2, False, 5), result(1, True, 3), result(3, True, 4)]
    summary = summarize(runs, 3)
    assert (summary.runs, summary.passed, summary.first_failure) == (3, 2, "contains[0]")
    assert (summary.slowest_ms, summary.tokens) == (300.0, 24)
    assert summary.text() == "✘ 2/3 · contains[0]\n300 ms · 24 tokens"
    assert shown_result(runs) is runs[0]
    unknown = summarize([result(1, True, None)], 2)
    assert unknown.text() == "✔ 1/1 of 2\n100 ms · — tokens"


def test_a_word_diff_gives_both_answers_back_and_marks_a_changed_phrase_as_one() -> None:
    left, right = diff_answers("Booked AF123 to Rome, window seat.", "Sorry, nothing to Rome.")
    assert "".join(p.text for p in left) == "Booked AF123 to Rome, window seat."
    assert "".join(p.text for p in right) == "Sorry, nothing to Rome."
    assert [(p.kind, p.text) for p in left] == [
        ("removed", "Booked AF123"),
        ("same", " to Rome"),
        ("removed", ", window seat"),
        ("same", "."),
    ]
    assert [(p.kind, p.text) for p in right] == [("added", "Sorry, nothing"), ("same", " to Rome.")]
    assert changed_words(left) == 4
    long_left = "\n".join(f"line {n}" for n in range(7000))
    long_right = long_left.replace("line 5000\n", "line five thousand\n")
    removed = [p.text for p in diff_answers(long_left, long_right)[0] if p.kind == "removed"]
    assert removed == ["line 5000\n"]  # compared line by line past MAX_WORDS


def test_an_unsaved_agent_runs_its_cases_as_they_are_in_the_editor(
    qtbot: QtBot, qasync_loop: asyncio.AbstractEventLoop, tmp_path: Path
) -> None:
    with FakeOpenAIServer(responder=_answers({"Oslo": "Booked AF123."})) as model:
        window = studio_window(qtbot)
        document = window.new_agent(_agent(tmp_path, model))  # a copy, not tied to the file
        assert document is not None and document.path is None
        edited = TestCase.model_validate(
            {"name": "oslo", "arguments": {"destination": "Oslo"}, "expect": {"contains": ["KL9"]}}
        )
        assert replace_test_case(document, "book_flight", "oslo", edited)  # not saved
        tab = window.open_matrix_tab(document, [("book_flight", "oslo")])
        assert isinstance(tab, MatrixTab)
        _wait_end(qtbot, tab)

    end = tab.last_end
    assert end is not None and end.matrix is not None and end.changes is not None
    assert end.matrix.agent_path == str(Path.cwd().resolve() / "Travel-Desk.unsaved.agent.yaml")
    assert tab.model.summary(("book_flight", "oslo", GOOD)).first_failure == "contains[0]"
    window.close()
