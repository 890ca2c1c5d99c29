"""The chat tab's status line says what a run waits for, and Stop ends the run at any step.

Real parts: the OpenAI provider against ``FakeOpenAIServer`` or a port that refuses, and
``tests.fakes.slow_mcp``, a stdio tool server slow to answer ``initialize`` and ``tools/list``.
Every wait is bounded.
"""

from __future__ import annotations

import asyncio
import re
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import Qt
from pytestqt.qtbot import QtBot

from app.chat import ChatTab
from app.document.agent_document import AgentDocument
from mcp_export.session.events import FinalAnswer, SessionFailed
from tests.fakes._script import Reply, RequestBody, hang, status, text, tool_calls
from tests.fakes.mcp_clients import write_agent
from tests.fakes.openai_server import FakeOpenAIServer
from tests.fakes.ports import refused_origin

REPO = Path(__file__).resolve().parents[2]
RUN_MS = 30_000
STOP_MS = 5_000  # from Stop to the run's end, whatever it was waiting for
ASKING = "Asking the model (openai:fake-model)…"


def slow_server(initialize: float = 0.0, listing: float = 0.0) -> dict[str, Any]:
    return {
        "type": "stdio",
        "command": sys.executable,
        "args": [
            *("-m", "tests.fakes.slow_mcp"),
            *("--initialize-delay", str(initialize), "--list-delay", str(listing)),
        ],
        "cwd": str(REPO),
        "serverToolDefaults": {"permissionRequired": False},
    }


def echo_then_answer(body: RequestBody) -> Reply:
    if body.rounds_since_user == 0:
        return tool_calls([("call_1", "slow__echo", {"text": "Oslo"})])
    return text("Booked.")


@pytest.fixture
def make_tab(
    qtbot: QtBot, qasync_loop: asyncio.AbstractEventLoop, tmp_path: Path
) -> Iterator[Callable[..., ChatTab]]:
    """Builds shown tool-test tabs of an agent file; closes each one after the test."""
    made: list[ChatTab] = []

    def make(base_url: str, **servers: dict[str, Any]) -> ChatTab:
        path = write_agent(tmp_path / "a.agent.yaml", base_url=base_url, mcp_servers=servers)
        tab = ChatTab(
            AgentDocument.load(path),
            title="book_flight",
            tool_name="book_flight",
            arguments={"destination": "Oslo"},
        )
        qtbot.addWidget(tab)
        tab.show()
        made.append(tab)
        return tab

    yield make
    for tab in made:
        future = asyncio.ensure_future(tab.aclose())
        qtbot.waitUntil(future.done, timeout=RUN_MS)


def wait_for_status(qtbot: QtBot, tab: ChatTab, matches: Callable[[str], bool]) -> str:
    qtbot.waitUntil(lambda: matches(tab.status.text()), timeout=RUN_MS)
    return tab.status.text()


def test_a_tool_test_against_a_slow_server_says_starting_then_listing(
    qtbot: QtBot, make_tab: Callable[..., ChatTab]
) -> None:
    with FakeOpenAIServer(responder=echo_then_answer) as model:
        tab = make_tab(model.base_url, slow=slow_server(initialize=1.0, listing=1.0))
        with qtbot.waitSignal(tab.finished, timeout=RUN_MS) as finished:
            assert tab.start_test("Book a flight to Oslo.")
            wait_for_status(qtbot, tab, lambda s: s == "Starting slow…")
            wait_for_status(qtbot, tab, lambda s: s == "Listing tools of slow…")
    assert isinstance(finished.args[0], FinalAnswer)
    assert tab.status.text().startswith("Answered · ")
    assert tab.status.styleSheet() != ""  # the answer's colour, not a step's plain text
    assert len(model.model_requests) == 2


def test_a_dead_model_port_shows_each_retry_with_its_number(
    qtbot: QtBot, make_tab: Callable[..., ChatTab]
) -> None:
    retry = r"Model request failed \(connection refused\), retry {} of 2 in [0-9.]+ s…"
    with refused_origin() as origin:
        tab = make_tab(f"{origin}/v1")
        with qtbot.waitSignal(tab.finished, timeout=RUN_MS) as finished:
            assert tab.start_test("Book a flight to Oslo.")
            wait_for_status(qtbot, tab, lambda s: re.fullmatch(retry.format(1), s) is not None)
            wait_for_status(qtbot, tab, lambda s: re.fullmatch(retry.format(2), s) is not None)
    outcome = finished.args[0]
    assert isinstance(outcome, SessionFailed) and outcome.kind == "provider"
    assert "gave up after 3 attempts" in outcome.message
    assert tab.status.text() == "Failed (provider)"


@pytest.mark.parametrize(
    "step", ["starting", "listing", "asking", "retrying"], ids=lambda step: str(step)
)
def test_stop_ends_the_run_within_seconds_at_every_step(
    qtbot: QtBot, make_tab: Callable[..., ChatTab], step: str
) -> None:
    replies = {"retrying": [status(503, retry_after=30)], "asking": [hang()]}
    expected: dict[str, Callable[[str], bool]] = {
        "starting": lambda s: s == "Starting slow…",
        "listing": lambda s: s == "Listing tools of slow…",
        "asking": lambda s: s == ASKING,
        "retrying": lambda s: s.startswith("Model request failed (status 503), retry 1 of 2 in 30"),
    }
    with FakeOpenAIServer(replies.get(step, [])) as model:
        servers = {}
        if step in ("starting", "listing"):
            delays = (60.0, 0.0) if step == "starting" else (0.0, 60.0)
            servers["slow"] = slow_server(*delays)
        tab = make_tab(model.base_url, **servers)
        assert tab.start_test("Book a flight to Oslo.")
        wait_for_status(qtbot, tab, expected[step])
        started = time.monotonic()
        with qtbot.waitSignal(tab.finished, timeout=STOP_MS) as finished:
            qtbot.mouseClick(tab.stop_button, Qt.MouseButton.LeftButton)
            assert tab.status.text() == "Stopping…"
        stopped_in = time.monotonic() - started
    outcome = finished.args[0]
    assert isinstance(outcome, SessionFailed) and outcome.kind == "cancelled", outcome
    assert tab.status.text() == "Stopped"
    assert stopped_in < STOP_MS / 1000
    assert not tab.busy and tab.send_button.isEnabled()
