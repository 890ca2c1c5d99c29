"""The studio's run of test cases under hostile answers: a check that backtracks runs off the GUI
thread and stops at its deadline, and a case that cannot be checked leaves the others' results.

Real runs through the real runtime to ``FakeOpenAIServer`` over loopback; every wait is bounded.
"""

from __future__ import annotations

import asyncio
import time
from pathlib import Path
from typing import Any

from PySide6.QtCore import QTimer
from pytestqt.qtbot import QtBot

from app.test_cases.matrix_tab import MatrixTab
from tests.app._windows import studio_window
from tests.fakes._script import Reply, RequestBody, text
from tests.fakes.mcp_clients import book_tool, write_agent
from tests.fakes.openai_server import FakeOpenAIServer

RUN_MS = 30_000
MODEL = "openai:fake-model"
CASES: list[dict[str, Any]] = [
    {"name": "backtracks", "arguments": {"destination": "Lima"}, "expect": {"matches": "(a|aa)+$"}},
    {
        "name": "deep",
        "arguments": {"destination": "Deep"},
        "expect": {"jsonSchema": {"type": "array"}},
    },
    {"name": "oslo", "arguments": {"destination": "Oslo"}, "expect": {"contains": ["AF123"]}},
]
ANSWERS = {"Lima": "a" * 40 + "!", "Deep": "[" * 1000 + "]" * 1000, "Oslo": "Booked AF123."}


def _respond(body: RequestBody) -> Reply:
    return text(next(v for k, v in ANSWERS.items() if k in body.last_user_text))


def test_hostile_answers_fail_their_cases_while_the_window_keeps_answering(
    qtbot: QtBot, qasync_loop: asyncio.AbstractEventLoop, tmp_path: Path
) -> None:
    gaps: list[float] = []
    last = [time.monotonic()]

    def tick() -> None:
        now = time.monotonic()
        gaps.append(now - last[0])
        last[0] = now

    with FakeOpenAIServer(responder=_respond) as model:
        path = write_agent(
            tmp_path / "desk.agent.yaml", base_url=model.base_url, tools=[book_tool(tests=CASES)]
        )
        window = studio_window(qtbot)
        assert window.open_file(path) is not None
        document = window.current_document()
        assert document is not None
        tab = window.open_matrix_tab(document, None, [MODEL])
        assert isinstance(tab, MatrixTab)
        timer = QTimer()
        timer.timeout.connect(tick)
        timer.start(20)
        last[0] = time.monotonic()
        qtbot.waitUntil(lambda: tab.last_end is not None and not tab.busy, timeout=RUN_MS)
        timer.stop()

    end = tab.last_end
    assert end is not None and end.state == "done"
    by_case = {r.case: r for r in end.results}
    assert sorted(by_case) == ["backtracks", "deep", "oslo"]
    [matches] = by_case["backtracks"].failures
    assert matches.expectation == "matches"
    assert "took longer than 2 s" in matches.message
    [deep] = by_case["deep"].failures
    assert deep.message.startswith("the answer is JSON nested too deeply to check")
    assert by_case["oslo"].passed
    assert max(gaps) < 1.0, f"the GUI thread stood still for {max(gaps):.1f} s"
    window.close()
