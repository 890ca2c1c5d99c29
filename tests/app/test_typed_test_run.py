"""A test run of a tool with an output schema, in a chat tab against the real OpenAI provider and a
local scripted model server: the object as a tree, the repair turn, the schema messages when it
fails, and the caller's view with the object as ``structuredContent``."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable, Coroutine, Iterator
from pathlib import Path
from typing import Any

import pytest
from pytestqt.qtbot import QtBot

from app.chat import ChatTab
from app.chat.transcript import AssistantBlock, NoticeBlock
from app.document.agent_document import AgentDocument
from app.test_run.typed_answer import OutputCheckBlock
from mcp_export.session.events import FinalAnswer, SessionFailed
from tests.fakes._script import Reply, RequestBody, text
from tests.fakes.mcp_clients import write_agent
from tests.fakes.openai_server import FakeOpenAIServer

RUN_MS = 30_000
SCHEMA = {
    "type": "object",
    "properties": {
        "flight": {"type": "string"},
        "price": {"type": "number", "minimum": 0},
    },
    "required": ["flight", "price"],
}
TOOL = {
    "name": "book",
    "description": "Books a flight.",
    "parameters": {"type": "object", "properties": {"to": {"type": "string"}}},
    "prompt": "Book a flight to {to}.",
    "outputSchema": SCHEMA,
}
RIGHT = {"flight": "AF123", "price": 214.5}
WRONG = {"flight": "AF123", "price": "cheap"}


def _answers(*answers: dict[str, Any]) -> Callable[[RequestBody], Reply]:
    """Answer each request with the next object, as JSON text (the last one repeats)."""
    sent: list[RequestBody] = []

    def respond(body: RequestBody) -> Reply:
        sent.append(body)
        return text(json.dumps(answers[min(len(sent), len(answers)) - 1]), usage=(40, 9))

    return respond


@pytest.fixture
def make_tab(
    qtbot: QtBot, qasync_loop: asyncio.AbstractEventLoop, tmp_path: Path
) -> Iterator[Callable[[FakeOpenAIServer], ChatTab]]:
    made: list[ChatTab] = []

    def make(model: FakeOpenAIServer) -> ChatTab:
        path = write_agent(tmp_path / "a.agent.yaml", tools=[TOOL], base_url=model.base_url)
        tab = ChatTab(
            AgentDocument.load(path), title="book", tool_name="book", arguments={"to": "Oslo"}
        )
        qtbot.addWidget(tab)
        tab.resize(820, 640)
        tab.show()
        made.append(tab)
        return tab

    yield make
    for tab in made:
        _wait_for(qtbot, tab.aclose())


def _wait_for(qtbot: QtBot, coroutine: Coroutine[Any, Any, Any]) -> Any:
    future = asyncio.ensure_future(coroutine)
    qtbot.waitUntil(future.done, timeout=RUN_MS)
    return future.result()


def _run(qtbot: QtBot, tab: ChatTab) -> Any:
    with qtbot.waitSignal(tab.finished, timeout=RUN_MS) as finished:
        assert tab.start_test("Book a flight to Oslo.") is True
    return finished.args[0]


def _checks(tab: ChatTab) -> list[OutputCheckBlock]:
    return [b for b in tab.transcript.blocks() if isinstance(b, OutputCheckBlock)]


def test_a_typed_answer_shows_as_a_tree_and_reaches_the_caller_as_structured_content(
    qtbot: QtBot, make_tab: Callable[[FakeOpenAIServer], ChatTab]
) -> None:
    with FakeOpenAIServer(responder=_answers(RIGHT)) as model:
        tab = make_tab(model)
        outcome = _run(qtbot, tab)
        sent = model.model_requests[0].body

    assert isinstance(outcome, FinalAnswer)
    assert sent["response_format"]["json_schema"]["schema"] == SCHEMA  # made to answer in it
    answers = [b for b in tab.transcript.blocks() if isinstance(b, AssistantBlock)]
    assert [json.loads(b.text) for b in answers] == [RIGHT]  # shown once, then checked
    [block] = _checks(tab)
    assert block.isVisible()
    assert block.heading.text() == "✓ The answer fits the output schema"
    assert block.tree is not None
    assert block.tree.row_texts() == [
        ("(answer)", "2 fields", "object", 0),
        ("flight", "AF123", "string", 1),
        ("price", "214.5", "number", 1),
    ]
    assert tab.runner.caller_view is not None
    assert tab.runner.caller_view["structuredContent"] == RIGHT
    assert json.loads(tab.caller_view.toPlainText())["structuredContent"] == RIGHT


def test_a_wrong_answer_is_shown_with_its_messages_then_the_repair_turn(
    qtbot: QtBot, make_tab: Callable[[FakeOpenAIServer], ChatTab]
) -> None:
    with FakeOpenAIServer(responder=_answers(WRONG, RIGHT)) as model:
        tab = make_tab(model)
        outcome = _run(qtbot, tab)
        repair = model.model_requests[1].body

    assert isinstance(outcome, FinalAnswer)
    first, second = _checks(tab)
    assert first.heading.text() == "✗ The answer does not fit the output schema"
    [line] = first.problem_lines()
    assert line.startswith("price: ")
    assert first.tree is not None and list(first.tree.marked()) == ["price"]
    assert any("price" in str(m.get("content")) for m in repair["messages"][-1:])
    assert second.heading.text().startswith("✓ Repair turn: the model was sent the messages")
    assert second.tree is not None and ("price", "214.5", "number", 1) in second.tree.row_texts()


def test_an_answer_still_wrong_after_the_repair_fails_with_the_schema_messages(
    qtbot: QtBot, make_tab: Callable[[FakeOpenAIServer], ChatTab]
) -> None:
    with FakeOpenAIServer(responder=_answers(WRONG, {"flight": 7})) as model:
        tab = make_tab(model)
        outcome = _run(qtbot, tab)

    assert isinstance(outcome, SessionFailed)
    first, second = _checks(tab)
    assert first.heading.text() == "✗ The answer does not fit the output schema"
    assert second.heading.text().endswith("it still does not fit the schema")
    lines = second.problem_lines()
    assert any(line.startswith("flight: ") for line in lines), lines
    assert any("price" in line for line in lines), lines
    notices = [b for b in tab.transcript.blocks() if isinstance(b, NoticeBlock)]
    assert notices and "price" in notices[-1].message
    assert tab.runner.caller_view is not None and tab.runner.caller_view["isError"] is True
