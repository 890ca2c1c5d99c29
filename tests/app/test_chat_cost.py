"""The chat header says what the conversation cost: its model requests at the agent's model's
price (Preferences' ``prices.yaml``, the agent file's ``settings.prices`` over it) and what 100
answers like these would cost; unknown when the model has no price or a request reported no
tokens, never 0. Real chats with ``FakeOpenAIServer`` on loopback, offscreen.
"""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

from pytestqt.qtbot import QtBot

from app.chat import ChatTab
from app.document.agent_document import AgentDocument
from mcp_export.costs.prices import PRICES_FILE
from mcp_export.session.events import FinalAnswer
from tests.fakes._script import text, text_without_usage
from tests.fakes.mcp_clients import write_agent
from tests.fakes.openai_server import FakeOpenAIServer

RUN_MS = 30_000


def _chat(qtbot: QtBot, path: Path, server: FakeOpenAIServer, *messages: str) -> ChatTab:
    tab = ChatTab(AgentDocument.load(path), title="Chat")
    qtbot.addWidget(tab)
    tab.show()
    for message in messages:
        with qtbot.waitSignal(tab.finished, timeout=RUN_MS) as finished:
            assert tab.submit(message) is True
        assert isinstance(finished.args[0], FinalAnswer)
    return tab


def _close(qtbot: QtBot, tab: ChatTab) -> None:
    future = asyncio.ensure_future(tab.aclose())
    qtbot.waitUntil(future.done, timeout=RUN_MS)


def test_the_chat_header_adds_up_the_conversations_cost(
    qtbot: QtBot, qasync_loop: asyncio.AbstractEventLoop, tmp_path: Path
) -> None:
    home = Path(os.environ["METAAGENT_HOME"])
    home.mkdir(parents=True, exist_ok=True)
    (home / PRICES_FILE).write_text(
        "openai:fake-model: {input: 2.0, output: 8.0}\n", encoding="utf-8"
    )
    with FakeOpenAIServer() as server:
        server.enqueue(text("Hello.", usage=(20, 5)))
        server.enqueue(text("Again.", usage=(40, 10)))
        path = write_agent(tmp_path / "a.agent.yaml", base_url=server.base_url)
        tab = _chat(qtbot, path, server, "Hi", "Once more")
        # (20·2 + 5·8 + 40·2 + 10·8) / 1e6 = $0.00024 over 2 answers: $0.012 per 100.
        assert "Cost: $0.000240 · $0.0120 per 100 answers" in tab.stats.text()
        _close(qtbot, tab)


def test_an_unpriced_model_or_unreported_tokens_say_unknown(
    qtbot: QtBot, qasync_loop: asyncio.AbstractEventLoop, tmp_path: Path
) -> None:
    with FakeOpenAIServer() as server:
        server.enqueue(text("Hello.", usage=(20, 5)))
        path = write_agent(tmp_path / "a.agent.yaml", base_url=server.base_url)
        tab = _chat(qtbot, path, server, "Hi")
        assert "Cost: unknown" in tab.stats.text()
        label = tab.stats._labels["cost"]
        assert "no price for openai:fake-model" in label.toolTip()
        _close(qtbot, tab)

    with FakeOpenAIServer() as server:
        server.enqueue(text_without_usage("Hello."))
        path = write_agent(
            tmp_path / "b.agent.yaml",
            base_url=server.base_url,
            settings={"prices": {"openai:fake-model": {"input": 2, "output": 8}}},
        )
        tab = _chat(qtbot, path, server, "Hi")
        assert "Cost: unknown" in tab.stats.text()
        assert "did not report the token counts" in tab.stats._labels["cost"].toolTip()
        _close(qtbot, tab)
