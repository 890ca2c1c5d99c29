"""The chat tab against the real OpenAI provider and a local scripted model server.

The model is ``FakeOpenAIServer`` (real HTTP on loopback); inner tools come from the real
``mcp-server-time`` over stdio. Every wait is bounded (``waitSignal`` / ``waitUntil``). The
caller's view is compared with what the served server returns for the same call, through the
official ``mcp.Client`` connected in-process (run on its own loop in a worker thread, since the
test's thread runs the qasync loop).

Set ``CHAT_TAB_SHOTS=/some/dir`` to save ``chat-tab.png`` and ``caller-view.png`` there.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Callable, Coroutine, Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import Qt, QTimer
from PySide6.QtGui import QPalette
from PySide6.QtWidgets import QLabel
from pytestqt.qtbot import QtBot

from app.chat import ChatTab
from app.chat.transcript import AssistantBlock, NoteLine, NoticeBlock, UserBlock
from app.document.agent_document import AgentDocument
from mcp_export.history.store import HistoryStore
from mcp_export.session.events import FinalAnswer, SessionFailed
from tests.fakes._script import Reply, RequestBody, text, text_without_usage, tool_calls
from tests.fakes.mcp_clients import time_server, write_agent
from tests.fakes.noticing_provider import NOTICE, noticing
from tests.fakes.openai_server import FakeOpenAIServer
from tests.fakes.processes import marked, new_mark, with_mark

RUN_MS = 30_000  # a first tool call starts mcp-server-time (about a second; more on a busy box)
TIME_CALL = ("call_1", "t__get_current_time", {"timezone": "UTC"})
PROMPT = "Book a flight to Oslo for 1 passenger(s)."


def _tool_then_answer(answer: str = "Booked AF123 to Oslo.") -> Callable[[RequestBody], Reply]:
    """Call the time tool on a fresh question, then answer; fixed usage so runs compare equal."""

    def respond(body: RequestBody) -> Reply:
        if body.rounds_since_user == 0:
            return tool_calls([TIME_CALL], usage=(30, 5))
        return text(answer, chunks=3, usage=(50, 4))

    return respond


@pytest.fixture
def model() -> Iterator[FakeOpenAIServer]:
    with FakeOpenAIServer() as server:
        yield server


@pytest.fixture
def make_tab(
    qtbot: QtBot, qasync_loop: asyncio.AbstractEventLoop
) -> Iterator[Callable[..., ChatTab]]:
    """Builds shown chat tabs; closes each one (provider, tool servers) after the test."""
    made: list[ChatTab] = []

    def make(path: Path, **options: Any) -> ChatTab:
        options.setdefault("title", "Chat")
        tab = ChatTab(AgentDocument.load(path), **options)
        qtbot.addWidget(tab)
        tab.resize(820, 640)
        tab.show()
        made.append(tab)
        return tab

    yield make
    for tab in made:
        wait_for(qtbot, tab.aclose())


def wait_for(qtbot: QtBot, coroutine: Coroutine[Any, Any, Any], timeout: int = RUN_MS) -> Any:
    future = asyncio.ensure_future(coroutine)
    qtbot.waitUntil(future.done, timeout=timeout)
    return future.result()


def run_turn(qtbot: QtBot, tab: ChatTab, message: str, *, test: bool = False) -> Any:
    with qtbot.waitSignal(tab.finished, timeout=RUN_MS) as finished:
        assert (tab.start_test(message) if test else tab.submit(message)) is True
    return finished.args[0] if finished.args else None


def shot(tab: ChatTab, name: str) -> None:
    folder = os.environ.get("CHAT_TAB_SHOTS")
    if folder:
        from PySide6.QtWidgets import QApplication

        for _ in range(3):  # let the posted layout requests settle (a card that just opened)
            QApplication.processEvents()
        tab.grab().save(str(Path(folder) / name))


def test_streamed_text_appears_in_the_transcript_as_markdown(
    qtbot: QtBot, model: FakeOpenAIServer, make_tab: Callable[..., ChatTab], tmp_path: Path
) -> None:
    answer = "Hello **world**: this answer was *streamed* in pieces."
    model.enqueue(text(answer, chunks=6, usage=(12, 9)))
    tab = make_tab(write_agent(tmp_path / "a.agent.yaml", base_url=model.base_url))
    with qtbot.waitSignal(tab.busy_changed, timeout=RUN_MS, check_params_cb=lambda b: b):
        assert tab.submit("Say hello")
    outcome = run_turn_wait(qtbot, tab)
    assert isinstance(outcome, FinalAnswer)
    blocks = tab.transcript.blocks()
    assert isinstance(blocks[0], UserBlock) and blocks[0].text == "Say hello"
    assert isinstance(blocks[1], AssistantBlock)
    assert blocks[1].text == answer
    assert blocks[1].shown_length == len(answer)
    assert blocks[1].shown_markdown() == answer
    # Rendered as Markdown: the emphasis markers are formatting, not characters on screen.
    shown = "".join(view.toPlainText() for view in blocks[1].labels)
    assert "Hello world: this answer was streamed in pieces." in shown
    assert tab.stats.turns == 1
    assert (tab.stats.tokens_in, tab.stats.tokens_out) == (12, 9)
    assert tab.stats.model == "fake-model"
    assert "Model: fake-model" in tab.stats.text()
    assert "Tokens in the conversation: 12 in / 9 out" in tab.stats.text()
    assert tab.status.text().startswith("Answered · Time this answer: ")
    assert tab.status.text().endswith(" · Tokens this answer: 12 in / 9 out")
    assert not tab.busy and tab.send_button.isEnabled() and not tab.stop_button.isEnabled()


def run_turn_wait(qtbot: QtBot, tab: ChatTab) -> Any:
    with qtbot.waitSignal(tab.finished, timeout=RUN_MS) as finished:
        pass
    return finished.args[0] if finished.args else None


def test_a_tool_call_shows_as_a_card_with_arguments_result_and_duration(
    qtbot: QtBot, model: FakeOpenAIServer, make_tab: Callable[..., ChatTab], tmp_path: Path
) -> None:
    model.responder = _tool_then_answer("It is **late** in UTC; booked AF123.")
    path = write_agent(
        tmp_path / "a.agent.yaml", base_url=model.base_url, mcp_servers={"t": time_server()}
    )
    tab = make_tab(
        path, title="book_flight", tool_name="book_flight", arguments={"destination": "Oslo"}
    )
    outcome = run_turn(qtbot, tab, PROMPT, test=True)
    assert isinstance(outcome, FinalAnswer), outcome
    (card,) = tab.transcript.tool_cards()
    assert card.name == "t__get_current_time"
    assert card.arguments == {"timezone": "UTC"}
    assert card.state == "ok"
    assert '"timezone": "UTC"' in card.arguments_box.toPlainText()
    assert "UTC" in card.result and card.result_box.toPlainText() == card.result
    assert card.duration_ms is not None and card.duration_ms > 0
    assert card.status.text().endswith(("ms", " s"))
    assert not card.expanded and not card.body.isVisible()
    card.set_expanded(True)
    assert card.body.isVisible()
    assert tab.stats.turns == 2 and tab.stats.tool_calls == 1
    assert (tab.stats.tokens_in, tab.stats.tokens_out) == (80, 9)
    assert "Tool calls: 1" in tab.stats.text()
    # The answer after the tool round is its own block, below the card.
    kinds = [type(b).__name__ for b in tab.transcript.blocks()]
    assert kinds == ["UserBlock", "ToolCard", "AssistantBlock"]
    shot(tab, "chat-tab.png")


def test_a_call_refused_by_permission_is_shown_as_refused(
    qtbot: QtBot, model: FakeOpenAIServer, make_tab: Callable[..., ChatTab], tmp_path: Path
) -> None:
    model.responder = _tool_then_answer("I could not check the time.")
    path = write_agent(
        tmp_path / "a.agent.yaml",
        base_url=model.base_url,
        mcp_servers={"t": time_server(permission_required=True)},
        tool_permission="tool",
    )
    tab = make_tab(path)
    assert isinstance(run_turn(qtbot, tab, "What time is it?"), FinalAnswer)
    (card,) = tab.transcript.tool_cards()
    assert card.state == "refused"
    assert card.status.text() == "refused: needs permission"
    assert "needs permission" in card.result
    card.set_expanded(True)
    shot(tab, "chat-refused.png")


def test_stop_mid_stream_ends_as_stopped_and_the_window_keeps_running(
    qtbot: QtBot, model: FakeOpenAIServer, make_tab: Callable[..., ChatTab], tmp_path: Path
) -> None:
    model.enqueue(text("word " * 400, chunks=400, chunk_delay=0.02))  # 8 s if not stopped
    tab = make_tab(write_agent(tmp_path / "a.agent.yaml", base_url=model.base_url))
    ticks: list[int] = []
    ticker = QTimer()
    ticker.timeout.connect(lambda: ticks.append(1))
    ticker.start(10)
    assert tab.submit("Talk for a long time")
    qtbot.waitUntil(
        lambda: any(
            isinstance(b, AssistantBlock) and b.shown_length > 0 for b in tab.transcript.blocks()
        ),
        timeout=RUN_MS,
    )
    before = len(ticks)
    qtbot.waitUntil(lambda: len(ticks) >= before + 5, timeout=2000)  # Qt timers keep firing
    with qtbot.waitSignal(tab.finished, timeout=10_000) as finished:
        tab.stop()
    ticker.stop()
    outcome = finished.args[0]
    assert isinstance(outcome, SessionFailed) and outcome.kind == "cancelled"
    assert tab.status.text() == "Stopped"
    notice = tab.transcript.blocks()[-1]
    assert isinstance(notice, NoticeBlock) and notice.button is None
    assert "Stopped" in notice.message
    streamed = tab.transcript.assistant_text()
    assert 0 < len(streamed) < len("word " * 400)
    assert model.wait_for_disconnect(1, timeout=5)  # the HTTP stream was really closed
    assert not tab.busy and tab.send_button.isEnabled()


def test_a_follow_up_continues_the_same_conversation(
    qtbot: QtBot, model: FakeOpenAIServer, make_tab: Callable[..., ChatTab], tmp_path: Path
) -> None:
    model.enqueue(text("Oslo is lovely in June."), text("Take the morning flight."))
    tab = make_tab(write_agent(tmp_path / "a.agent.yaml", base_url=model.base_url))
    assert isinstance(run_turn(qtbot, tab, "Where should I go?"), FinalAnswer)
    session = tab.runner.session
    tab.input.setPlainText("And when?")
    with qtbot.waitSignal(tab.finished, timeout=RUN_MS):
        qtbot.keyClick(tab.input, Qt.Key.Key_Return)
    assert tab.runner.session is session
    second = [(m["role"], m["content"]) for m in model.bodies[1]["messages"]]
    assert second == [
        ("user", "Where should I go?"),
        ("assistant", "Oslo is lovely in June."),
        ("user", "And when?"),
    ]
    assert tab.transcript.assistant_text() == "Oslo is lovely in June.\n\nTake the morning flight."
    assert tab.stats.turns == 2
    assert tab.input.toPlainText() == ""


def test_a_closed_tab_has_stopped_its_tool_servers_when_aclose_returns(
    qtbot: QtBot, model: FakeOpenAIServer, make_tab: Callable[..., ChatTab], tmp_path: Path
) -> None:
    mark = new_mark()
    model.responder = _tool_then_answer()
    servers = {"t": with_mark(time_server(), mark)}
    tab = make_tab(
        write_agent(tmp_path / "a.agent.yaml", base_url=model.base_url, mcp_servers=servers)
    )
    assert isinstance(run_turn(qtbot, tab, "What time is it?"), FinalAnswer)
    assert len(marked(mark)) == 1
    tab.close()  # as closing the tab in the window does: the tab starts its own close-down
    wait_for(qtbot, tab.aclose())  # and whoever waits for it waits for that one
    assert marked(mark) == set()
    assert not tab.submit("Still there?")


def _served_result(path: Path, arguments: dict[str, Any], mode: str) -> dict[str, Any]:
    """What ``metaagent serve`` returns for ``book_flight(arguments)``, as wire JSON."""
    from mcp import Client

    from mcp_export.server.agent_server import AgentServer, load_served_agents

    async def call() -> dict[str, Any]:
        served = AgentServer(load_served_agents([path]), history=False)
        async with served, Client(served.server, mode=mode) as client:
            result = await client.call_tool("book_flight", arguments)
        data: dict[str, Any] = result.model_dump(by_alias=True, exclude_none=True, mode="json")
        return data

    # The worker thread never collects garbage (the session's GUI-thread collector, as in the
    # studio), so it cannot delete the test's Qt objects there.
    with ThreadPoolExecutor(1) as pool:
        return pool.submit(asyncio.run, call()).result(timeout=RUN_MS / 1000)


def _without_timings(data: dict[str, Any]) -> dict[str, Any]:
    # The SDK's own envelope (serverInfo in the 2026-07-28 era) is not the tool's answer.
    data.pop("_meta", None)
    structured = data.get("structuredContent")
    if isinstance(structured, dict):
        structured.pop("durationMs", None)
        for call in structured.get("toolCalls", []):
            call.pop("durationMs", None)
    return data


@pytest.mark.parametrize("case", ["answer", "turn-limit"])
def test_the_callers_view_is_what_the_served_server_returns(
    qtbot: QtBot,
    model: FakeOpenAIServer,
    make_tab: Callable[..., ChatTab],
    tmp_path: Path,
    case: str,
) -> None:
    import json

    model.responder = _tool_then_answer()
    settings = {"maxChatTurns": 1} if case == "turn-limit" else None
    path = write_agent(
        tmp_path / "a.agent.yaml",
        base_url=model.base_url,
        mcp_servers={"t": time_server()},
        system_prompt="You book trips.",
        settings=settings,
    )
    arguments = {"destination": "Oslo", "passengers": 1}
    tab = make_tab(path, title="book_flight", tool_name="book_flight", arguments=arguments)
    assert tab.caller_toggle.isVisible()
    run_turn(qtbot, tab, PROMPT, test=True)
    studio = tab.runner.caller_view
    assert studio is not None
    shown = _without_timings(json.loads(tab.caller_view.toPlainText()))
    for mode in ("legacy", "auto"):
        assert shown == _without_timings(_served_result(path, arguments, mode)), mode
    assert studio["isError"] is (case == "turn-limit")
    # The tab's model requests were the served call's: same system prompt, prompt and tools.
    tab_body, served_body = model.bodies[0], model.bodies[-1 if case == "turn-limit" else -2]
    assert shown["content"][0]["type"] == "text"
    assert tab_body["messages"] == served_body["messages"]
    assert tab_body["tools"] == served_body["tools"]
    tab.caller_toggle.setChecked(True)
    assert tab.pages.currentIndex() == 1 and tab.caller_view.isVisible()
    if case == "answer":
        shot(tab, "caller-view.png")


def test_a_missing_api_key_shows_what_to_do_and_a_button_to_the_model_settings(
    qtbot: QtBot,
    model: FakeOpenAIServer,
    make_tab: Callable[..., ChatTab],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    path = write_agent(tmp_path / "a.agent.yaml", base_url=model.base_url, api_key=None)
    tab = make_tab(path)
    outcome = run_turn(qtbot, tab, "Hello?")
    assert isinstance(outcome, SessionFailed) and outcome.kind == "configuration"
    notice = tab.transcript.blocks()[-1]
    assert isinstance(notice, NoticeBlock)
    assert "OPENAI_API_KEY" in notice.message
    assert notice.hint_label is not None and notice.hint_label.text().startswith("What to do: ")
    assert notice.button is not None and notice.button.text() == "Open model settings"
    with qtbot.waitSignal(tab.open_settings_requested, timeout=10_000) as opened:
        qtbot.mouseClick(notice.button, Qt.MouseButton.LeftButton)
    assert opened.args == ["model"]
    shot(tab, "chat-error.png")
    assert tab.status.text() == "Failed (configuration)"
    assert model.model_requests == []


def test_history_records_the_tool_test_and_the_chat(
    qtbot: QtBot, model: FakeOpenAIServer, make_tab: Callable[..., ChatTab], tmp_path: Path
) -> None:
    model.enqueue(text("Booked."), text("Hi there."))
    path = write_agent(tmp_path / "a.agent.yaml", base_url=model.base_url)
    with HistoryStore(tmp_path / "history.db") as store:
        test = make_tab(
            path, tool_name="book_flight", arguments={"destination": "Oslo"}, history=store
        )
        run_turn(qtbot, test, PROMPT, test=True)
        chat = make_tab(path, history=store)
        run_turn(qtbot, chat, "Hello")
        (run,) = store.runs()
        assert run.tool_name == "book_flight" and run.status == "complete"
        assert run.arguments == {"destination": "Oslo"} and run.filled_prompt == PROMPT
        assert run.answer == "Booked." and run.agent_path == str(path.resolve())
        (tested,) = store.threads(kind="tool-test")
        assert tested.id == run.thread_id
        roles = [(m.role, m.content) for m in store.messages(tested.id)]
        assert roles == [("user", PROMPT), ("assistant", "Booked.")]
        (chatted,) = store.threads(kind="chat")
        assert [m.content for m in store.messages(chatted.id)] == ["Hello", "Hi there."]


def test_several_tabs_stream_at_the_same_time(
    qtbot: QtBot, model: FakeOpenAIServer, make_tab: Callable[..., ChatTab], tmp_path: Path
) -> None:
    model.responder = lambda body: text(f"re: {body.last_user_text}", chunks=20, chunk_delay=0.01)
    path = write_agent(tmp_path / "a.agent.yaml", base_url=model.base_url)
    tabs = [make_tab(path, title=f"Chat {i}") for i in range(3)]
    for i, tab in enumerate(tabs):
        assert tab.submit(f"message {i}")
    assert all(tab.busy for tab in tabs)
    qtbot.waitUntil(lambda: not any(tab.busy for tab in tabs), timeout=RUN_MS)
    for i, tab in enumerate(tabs):
        assert tab.transcript.assistant_text() == f"re: message {i}"


def test_a_long_answer_freezes_complete_paragraphs_but_never_splits_a_code_fence(
    qtbot: QtBot,
) -> None:
    from app.chat.transcript import FREEZE_AT, paragraph_end

    assert paragraph_end("one\n\ntwo", 0) == len("one\n\n")
    fenced = "```\ncode\n\nmore\n```\n\nafter"
    assert paragraph_end(fenced, 0) == len("```\ncode\n\nmore\n```\n\n")
    assert paragraph_end("no paragraph yet", 0) == 0
    block = AssistantBlock()
    qtbot.addWidget(block)
    paragraph = "word " * 60 + "\n\n"
    text_in = paragraph * (3 * FREEZE_AT // len(paragraph) + 1) + "```\nx\n\ny\n```\n\ntail"
    for start in range(0, len(text_in), 40):
        block.append(text_in[start : start + 40])
        block.flush()
    assert len(block.labels) > 2  # frozen paragraphs, then the live tail
    assert block.shown_markdown() == text_in == block.text
    assert "```" not in block.labels[-1].markdown or block.labels[-1].markdown.count("```") == 2


def test_token_counts_the_model_server_never_reported_show_as_dashes_not_zero(
    qtbot: QtBot, model: FakeOpenAIServer, make_tab: Callable[..., ChatTab], tmp_path: Path
) -> None:
    model.enqueue(text_without_usage("Hello there."))
    tab = make_tab(write_agent(tmp_path / "a.agent.yaml", base_url=model.base_url))
    outcome = run_turn(qtbot, tab, "Say hello")
    assert isinstance(outcome, FinalAnswer)
    assert (tab.stats.tokens_in, tab.stats.tokens_out) == (None, None)
    assert "Tokens in the conversation: — in / — out" in tab.stats.text()
    assert tab.status.text().endswith("Tokens this answer: — in / — out")
    tokens = tab.stats.findChild(QLabel, "stats_tokens")
    assert tokens is not None
    assert "1 of 1 model requests came without token counts" in tokens.toolTip()
    shot(tab, "stats-unknown-tokens.png")
    # A later turn that reports counts adds them; the unreported turn stays unreported.
    model.enqueue(text("Again.", usage=(12, 9)))
    run_turn(qtbot, tab, "Again")
    assert (tab.stats.tokens_in, tab.stats.tokens_out) == (12, 9)
    assert "Tokens in the conversation: ≥ 12 in / 9 out" in tab.stats.text()  # a lower bound
    assert tab.status.text().endswith("Tokens this answer: 12 in / 9 out")  # all reported
    assert "1 of 2 model requests came without token counts" in tokens.toolTip()


@pytest.mark.parametrize("after_text", [False, True], ids=["before-answer", "mid-answer"])
def test_a_notice_is_one_muted_line_in_the_trace_and_not_part_of_the_answer(
    qtbot: QtBot,
    model: FakeOpenAIServer,
    make_tab: Callable[..., ChatTab],
    tmp_path: Path,
    after_text: bool,
) -> None:
    model.responder = lambda body: text(f"re: {body.last_user_text} now", chunks=4)
    path = write_agent(tmp_path / "a.agent.yaml", base_url=model.base_url)
    tab = make_tab(path, provider_factory=noticing(after_text=after_text))
    run_turn(qtbot, tab, "first")
    outcome = run_turn(qtbot, tab, "second")
    assert isinstance(outcome, FinalAnswer) and outcome.text == "re: second now"
    assert len(model.bodies) == 2  # each request passed the notice; the tab shows it once
    assert tab.transcript.notes() == [NOTICE]
    (line,) = [b for b in tab.transcript.blocks() if isinstance(b, NoteLine)]
    assert line.text() == f"Note: {NOTICE}"
    assert line.foregroundRole() == QPalette.ColorRole.PlaceholderText  # muted, not the answer's
    assert line.isVisible()
    assert tab.transcript.assistant_text() == "re: first now\n\nre: second now"
    assert [type(b).__name__ for b in tab.transcript.blocks()] == (
        ["UserBlock", "AssistantBlock", "NoteLine", "UserBlock", "AssistantBlock"]
        if after_text
        else ["UserBlock", "NoteLine", "AssistantBlock", "UserBlock", "AssistantBlock"]
    )
    if not after_text:
        shot(tab, "chat-notice.png")


def test_a_tool_test_shows_a_notice_in_its_trace_and_the_callers_view_is_the_answer(
    qtbot: QtBot, model: FakeOpenAIServer, make_tab: Callable[..., ChatTab], tmp_path: Path
) -> None:
    import json

    model.responder = _tool_then_answer()
    path = write_agent(
        tmp_path / "a.agent.yaml", base_url=model.base_url, mcp_servers={"t": time_server()}
    )
    tab = make_tab(
        path,
        title="book_flight",
        tool_name="book_flight",
        arguments={"destination": "Oslo"},
        provider_factory=noticing(),
    )
    outcome = run_turn(qtbot, tab, PROMPT, test=True)
    assert isinstance(outcome, FinalAnswer) and outcome.text == "Booked AF123 to Oslo."
    assert tab.transcript.notes() == [NOTICE]
    blocks = tab.transcript.blocks()
    assert isinstance(blocks[1], NoteLine)  # before the first card: where it came
    assert len(tab.transcript.tool_cards()) == 1
    shown = json.loads(tab.caller_view.toPlainText())
    assert shown["content"][0]["text"] == "Booked AF123 to Oslo."
    assert NOTICE not in tab.caller_view.toPlainText()


def test_a_server_that_refuses_streamed_tool_use_is_noted_in_the_test_run_trace(
    qtbot: QtBot, make_tab: Callable[..., ChatTab], tmp_path: Path
) -> None:
    with FakeOpenAIServer(responder=_tool_then_answer(), refuse_streamed_tool_choice=True) as model:
        path = write_agent(
            tmp_path / "a.agent.yaml", base_url=model.base_url, mcp_servers={"t": time_server()}
        )
        tab = make_tab(
            path, title="book_flight", tool_name="book_flight", arguments={"destination": "Oslo"}
        )
        outcome = run_turn(qtbot, tab, PROMPT, test=True)
        follow_up = run_turn(qtbot, tab, "And the seat?")
    host = model.base_url.removeprefix("http://").removesuffix("/v1")
    assert isinstance(outcome, FinalAnswer) and isinstance(follow_up, FinalAnswer)
    assert tab.transcript.notes() == [
        f"{host} refuses streamed tool use; tool turns go without streaming"
    ]
    assert "refuses" not in tab.transcript.assistant_text()
    assert len(tab.transcript.tool_cards()) == 2


def test_an_empty_answer_of_a_tool_test_shows_the_failure_a_served_call_returns(
    qtbot: QtBot, model: FakeOpenAIServer, make_tab: Callable[..., ChatTab], tmp_path: Path
) -> None:
    import json

    model.responder = lambda body: text("")
    path = write_agent(tmp_path / "a.agent.yaml", base_url=model.base_url)
    arguments = {"destination": "Oslo", "passengers": 1}
    with HistoryStore(tmp_path / "history.db") as store:
        tab = make_tab(
            path, title="book_flight", tool_name="book_flight", arguments=arguments, history=store
        )
        outcome = run_turn(qtbot, tab, PROMPT, test=True)
        (run,) = store.runs()
    assert isinstance(outcome, SessionFailed) and outcome.kind == "provider"
    notice = tab.transcript.blocks()[-1]
    assert isinstance(notice, NoticeBlock)
    assert notice.message == "the model answered with an empty message"
    assert notice.hint_label is not None
    assert notice.hint_label.text() == (
        "What to do: try again, or make the prompt ask for a written answer"
    )
    assert tab.status.text() == "Failed (provider)"
    assert tab.transcript.assistant_text() == ""
    assert (run.status, run.error) == ("error", "the model answered with an empty message")
    shown = _without_timings(json.loads(tab.caller_view.toPlainText()))
    assert shown["isError"] is True
    assert shown["content"][0]["text"] == (
        "book_flight failed: the model answered with an empty message\n"
        "What to do: try again, or make the prompt ask for a written answer"
    )
    for mode in ("legacy", "auto"):
        assert shown == _without_timings(_served_result(path, arguments, mode)), mode
