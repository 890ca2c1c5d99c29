"""A chat tab whose run got none of a server's tools says so, why, and where to change it.

A new user adds ``mcp-server-time`` with the default "Tools need a person's permission" and runs
a test: the model is offered no tools, the protocol log has no ``tools/list`` (the server is not
even started) and the statistics say "Tool calls: 0". The tab shows why, with a button to the
MCP servers page. Real parts: the OpenAI provider against ``FakeOpenAIServer``, the real
``mcp-server-time`` named in the agent file.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from PySide6.QtCore import Qt
from pytestqt.qtbot import QtBot

from app.chat import ChatTab
from app.chat.transcript import NoticeBlock
from mcp_export.session.events import FinalAnswer
from tests.app.test_chat_tab import make_tab, model, run_turn, shot
from tests.fakes._script import text
from tests.fakes.mcp_clients import time_server, write_agent
from tests.fakes.openai_server import FakeOpenAIServer

__all__ = ["make_tab", "model"]  # the fixtures this file uses


def test_a_run_that_got_none_of_a_servers_tools_says_which_why_and_where(
    qtbot: QtBot, model: FakeOpenAIServer, make_tab: Callable[..., ChatTab], tmp_path: Path
) -> None:
    model.responder = lambda body: text("I cannot look up the time.")
    path = write_agent(
        tmp_path / "a.agent.yaml",
        base_url=model.base_url,
        mcp_servers={"time": time_server(permission_required=True)},
        tool_permission="tool",
    )
    tab = make_tab(path)
    assert isinstance(run_turn(qtbot, tab, "What time is it?"), FinalAnswer)
    assert "tools" not in model.bodies[0]  # the model was offered nothing

    notices = [b for b in tab.transcript.blocks() if isinstance(b, NoticeBlock)]
    assert len(notices) == 1
    (notice,) = notices
    assert notice.isVisible()
    assert notice.message.startswith("The tools of time are hidden")
    assert "they need a person's permission" in notice.message
    assert "Agent ▸ MCP servers ▸ time ▸ untick" in notice.message
    assert notice.button is not None and notice.button.text() == "Open MCP servers"
    with qtbot.waitSignal(tab.open_settings_requested, timeout=5000) as opened:
        qtbot.mouseClick(notice.button, Qt.MouseButton.LeftButton)
    assert opened.args == ["servers"]

    run_turn(qtbot, tab, "And now?")  # said once per tab, not once per message
    assert len([b for b in tab.transcript.blocks() if isinstance(b, NoticeBlock)]) == 1
    shot(tab, "chat-tools-hidden.png")
