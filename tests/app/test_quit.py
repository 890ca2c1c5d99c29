"""Quitting the studio ends every run at once and leaves no process behind.

A tab closed before its run began starts no tool server for it.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

from pytestqt.qtbot import QtBot

from app.chat import ChatTab
from app.document.agent_document import AgentDocument
from mcp_export.session.events import SessionFailed
from tests.fakes._script import Reply, RequestBody, text, tool_calls
from tests.fakes.mcp_clients import time_server, write_agent
from tests.fakes.openai_server import FakeOpenAIServer
from tests.fakes.processes import marked, new_mark, with_mark

TIME_CALL = ("call_1", "time__get_current_time", {"timezone": "UTC"})


def _tool_then_slow_answer(body: RequestBody) -> Reply:
    """Ask for the time first; then an answer that takes a minute to stream."""
    if body.rounds_since_user == 0:
        return tool_calls([TIME_CALL])
    return text("Booked. " * 300, chunks=300, chunk_delay=0.2)


def test_a_tab_closed_before_its_run_began_starts_no_tool_server(
    qtbot: QtBot, qasync_loop: asyncio.AbstractEventLoop, tmp_path: Path
) -> None:
    mark = new_mark()
    with FakeOpenAIServer(responder=_tool_then_slow_answer) as model:
        agent = write_agent(
            tmp_path / "desk.agent.yaml",
            base_url=model.base_url,
            mcp_servers={"time": with_mark(time_server(), mark)},
        )
        tab = ChatTab(AgentDocument.load(agent), title="Chat")
        qtbot.addWidget(tab)
        with qtbot.waitSignal(tab.finished, timeout=10_000) as finished:
            assert tab.submit("What time is it?")
            tab.close()  # before the run's task has taken a step
        future = asyncio.ensure_future(tab.aclose())
        qtbot.waitUntil(future.done, timeout=10_000)

    outcome = finished.args[0]
    assert isinstance(outcome, SessionFailed) and outcome.kind == "cancelled"
    assert model.bodies == [] and marked(mark) == set()
