"""The matrix's models: remembered per agent file, and offered from the endpoints' own lists.

Real windows offscreen, real ``studio.ini`` in the test's ``METAAGENT_HOME``, the model lists from
``FakeOpenAIServer`` endpoints over loopback (``GET /v1/models``). Every wait is bounded.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

import yaml
from PySide6.QtCore import Qt
from pytestqt.qtbot import QtBot

from app.settings_store import Endpoint, SettingsStore
from app.test_cases.matrix_tab import MatrixTab
from app.test_cases.model_offers import endpoints_to_ask
from schema_types.agent import Agent
from tests.app._windows import studio_window
from tests.fakes._script import text
from tests.fakes.mcp_clients import book_tool, write_agent
from tests.fakes.openai_server import FakeOpenAIServer

RUN_MS = 30_000
CASES = [{"name": "oslo", "arguments": {"destination": "Oslo"}, "expect": {"contains": ["AF"]}}]


def _agent(tmp_path: Path, openai_url: str, vllm_url: str) -> Path:
    path = write_agent(
        tmp_path / "desk.agent.yaml", base_url=openai_url, tools=[book_tool(tests=CASES)]
    )
    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    data["providers"]["vllm"] = {"VLLM_BASE_URL": vllm_url, "VLLM_API_KEY": "sk-x"}
    path.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
    return path


def _shown(tab: MatrixTab) -> list[tuple[str, bool]]:
    """The picker's names as a person sees them: text, and whether its box is ticked."""
    items = (tab.picker.list.item(row) for row in range(tab.picker.list.count()))
    return [(item.text(), item.checkState() == Qt.CheckState.Checked) for item in items]


def _open(qtbot: QtBot, path: Path) -> MatrixTab:
    window = studio_window(qtbot)
    document = window.open_file(path)
    assert document is not None
    tab = window.open_matrix_tab(document)
    assert isinstance(tab, MatrixTab)
    qtbot.waitUntil(lambda: tab.last_end is not None and not tab.busy, timeout=RUN_MS)
    return tab


def test_the_picked_models_come_back_when_the_agent_is_opened_again(
    qtbot: QtBot, qasync_loop: asyncio.AbstractEventLoop, tmp_path: Path
) -> None:
    reply = text("Booked AF1.", usage=(5, 2))
    with FakeOpenAIServer(responder=lambda _b: reply) as a, FakeOpenAIServer() as b:
        path = _agent(tmp_path, a.base_url, b.base_url)
        first = _open(qtbot, path)
        assert _shown(first) == [("openai:fake-model", True)]
        first.picker.field.setEditText("vllm:cheap")
        qtbot.mouseClick(first.picker.add_button, Qt.MouseButton.LeftButton)
        first.picker.field.setEditText("vllm:big")
        qtbot.mouseClick(first.picker.add_button, Qt.MouseButton.LeftButton)
        first.picker.list.item(2).setCheckState(Qt.CheckState.Unchecked)  # vllm:big: not now
        first.window().close()

        again = _open(qtbot, path)

    assert _shown(again) == [("openai:fake-model", True), ("vllm:cheap", True), ("vllm:big", False)]
    assert again.model.models == ["openai:fake-model", "vllm:cheap"]
    again.window().close()


def test_list_models_offers_what_each_endpoint_lists(
    qtbot: QtBot, qasync_loop: asyncio.AbstractEventLoop, tmp_path: Path
) -> None:
    SettingsStore().set_endpoints([])  # no local defaults: only the agent's two endpoints
    with (
        FakeOpenAIServer(models=("zeta-large", "alpha-mini"), api_key="sk-test") as a,
        FakeOpenAIServer(models=("llama3",)) as b,
    ):
        path = _agent(tmp_path, a.base_url, b.base_url)
        tab = _open(qtbot, path)
        assert "openai:alpha-mini" not in tab.picker.offers()

        qtbot.mouseClick(tab.picker.list_button, Qt.MouseButton.LeftButton)
        qtbot.waitUntil(lambda: not tab.tasks.is_running("list"), timeout=RUN_MS)

    offers = tab.picker.offers()
    assert [name for name in offers if name.endswith(("-mini", "-large", "llama3"))] == [
        "openai:alpha-mini",
        "openai:zeta-large",
        "vllm:llama3",
    ]
    note = tab.picker.list_note.text()
    assert note.startswith("3 models listed by openai (") and "vllm (" in note
    assert tab.picker.list_note.isVisible()
    # A listed model is picked like a typed one.
    tab.picker.field.setCurrentIndex(offers.index("vllm:llama3"))
    qtbot.mouseClick(tab.picker.add_button, Qt.MouseButton.LeftButton)
    assert ("vllm:llama3", True) in _shown(tab)
    tab.window().close()


def test_an_endpoint_that_does_not_answer_is_named_and_the_others_still_listed(
    qtbot: QtBot, qasync_loop: asyncio.AbstractEventLoop, tmp_path: Path
) -> None:
    SettingsStore().set_endpoints([])
    with FakeOpenAIServer(models=("alpha-mini",), api_key="sk-test") as a:
        dead = FakeOpenAIServer()
        with dead:
            dead_url = dead.base_url
        path = _agent(tmp_path, a.base_url, dead_url)
        tab = _open(qtbot, path)
        qtbot.mouseClick(tab.picker.list_button, Qt.MouseButton.LeftButton)
        qtbot.waitUntil(lambda: not tab.tasks.is_running("list"), timeout=RUN_MS)

    assert "openai:alpha-mini" in tab.picker.offers()
    lines = tab.picker.list_note.text().splitlines()
    assert lines[0].startswith("1 model listed by openai (")
    assert lines[1].startswith("Not listed: vllm: ")
    tab.window().close()


def test_preferences_endpoints_count_where_a_run_would_reach_them() -> None:
    agent = Agent.model_validate(
        {
            "metadata": {"name": "a"},
            "settings": {"model": "openai:gpt-4.1-mini"},
            "providers": {"vllm": {"VLLM_BASE_URL": "http://gpu:8000/v1"}},
        }
    )
    preferred = [
        ("ollama", "http://localhost:11434/v1/"),  # ollama's own: a run on ollama:… goes there
        ("lmstudio", "http://elsewhere:1234/v1"),  # not where lmstudio:… would go
        ("vllm", "http://localhost:8000/v1"),  # the agent's own vllm URL wins
    ]
    assert endpoints_to_ask(agent, preferred) == ["openai", "vllm", "ollama"]
    assert Endpoint("ollama", "http://localhost:11434/v1") in SettingsStore().endpoints()
