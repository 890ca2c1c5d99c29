"""History with a matrix run of test cases and one interactive call, as a person sees it: real
widgets offscreen over a real history database filled by a real matrix run (``run_matrix`` on
two models, each served by the real ``AgentServer`` to the official MCP client, the real OpenAI
provider against ``FakeOpenAIServer``) recorded by ``record_matrix``, and a served call made by
hand that a follow-up continued.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import anyio
import mcp_types as types
import pytest
import yaml
from mcp import Client
from PySide6.QtCore import Qt
from pytestqt.qtbot import QtBot

from app.history.model import CASE, COLUMNS
from app.history.view import HistoryView
from mcp_export.history.store import HistoryStore
from mcp_export.server.agent_server import AgentServer, load_served_agents
from mcp_export.testing.record import record_matrix
from mcp_export.testing.run import run_matrix, select_cases
from schema_types.files.agent_file import load_agent
from tests.fakes._script import Reply, RequestBody, text
from tests.fakes.mcp_clients import book_tool, write_agent
from tests.fakes.openai_server import FakeOpenAIServer

MODELS = ["openai:fake-model", "vllm:other"]
CASES = [f"city-{n}" for n in range(4)]


def _answer(body: RequestBody) -> Reply:
    return text(f"Booked {body.last_user_text[-12:]}.")


async def _record(agent: Path, store: HistoryStore) -> None:
    loaded = load_agent(agent)
    client_info = types.Implementation(name="Claude Desktop", version="1")
    async with (
        AgentServer(load_served_agents([agent]), history=store) as served,
        Client(served.server, mode="legacy", client_info=client_info) as client,
    ):
        await client.call_tool("book_flight", {"destination": "Paris"})
    matrix = await run_matrix(loaded, agent, select_cases(loaded), models=MODELS, history=store)
    record_matrix(matrix, store)


@pytest.fixture(scope="module")
def recorded(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """(history database, agent file): a call by hand, then 4 cases × 2 models."""
    folder = tmp_path_factory.mktemp("cases")
    database = folder / "history.sqlite3"
    with FakeOpenAIServer(responder=_answer) as model:
        cases = [
            {"name": name, "arguments": {"destination": name}, "expect": {"contains": ["Booked"]}}
            for name in CASES
        ]
        agent = write_agent(
            folder / "travel.agent.yaml", base_url=model.base_url, tools=[book_tool(tests=cases)]
        )
        data = yaml.safe_load(agent.read_text(encoding="utf-8"))
        data["providers"]["vllm"] = {"VLLM_BASE_URL": model.base_url}
        agent.write_text(yaml.safe_dump(data), encoding="utf-8")
        with HistoryStore(database) as store:
            anyio.run(_record, agent, store)
            (by_hand,) = [t for t in store.threads() if "Paris" in t.title]
            # The person asked on in the same conversation (as a tool test's follow-up does).
            store.add_message(by_hand.id, "user", "And what about Tokyo?")
            store.add_message(by_hand.id, "assistant", "Tokyo is booked too.")
    return database, agent


@pytest.fixture
def view(qtbot: QtBot, recorded: tuple[Path, Path]) -> Iterator[HistoryView]:
    with HistoryStore(recorded[0]) as store:
        widget = HistoryView("Travel Desk", recorded[1], store)
        qtbot.addWidget(widget)
        widget.resize(1024, 700)
        widget.show()
        qtbot.waitExposed(widget)
        yield widget


def _cells(view: HistoryView, column: str) -> list[str]:
    model = view.table.model()
    index = COLUMNS.index(column)
    return [str(model.index(row, index).data()) for row in range(model.rowCount())]


def test_case_runs_say_their_case_and_model_in_a_column_seen_at_1024_px(
    view: HistoryView,
) -> None:
    kinds = _cells(view, "Kind")
    assert kinds.count("case run") == len(CASES) * len(MODELS)
    assert kinds.count("served call") == 1
    shown = {cell for cell in _cells(view, CASE) if cell}
    assert shown == {f"{case} · {model}" for case in CASES for model in MODELS}
    header = view.table.horizontalHeader()
    column = COLUMNS.index(CASE)
    right = header.sectionViewportPosition(column) + header.sectionSize(column)
    assert header.sectionViewportPosition(column) >= 0 and right <= view.table.viewport().width()
    assert view.table.model().headerData(column, Qt.Orientation.Horizontal) == CASE


def test_without_case_runs_the_call_by_hand_comes_first_and_alone(view: HistoryView) -> None:
    view.set_case_runs_filter("without")
    assert _cells(view, "Kind") == ["served call"]
    assert "Paris" in _cells(view, "Title")[0]
    view.set_case_runs_filter("only")
    assert set(_cells(view, "Kind")) == {"case run"}
    assert len(_cells(view, "Kind")) == len(CASES) * len(MODELS)


def test_the_filter_finds_a_follow_up_and_clears_the_transcript_it_hides(
    view: HistoryView,
) -> None:
    view.set_case_runs_filter("only")
    view.open_entry(0)
    opened = view.transcript.toPlainText()
    assert "case run" in opened and "test case city-" in opened
    view.set_case_runs_filter("all")
    assert view.transcript.toPlainText() == opened  # still listed: still shown
    view.search.setText("tokyo")
    assert _cells(view, "Kind") == ["served call"]
    assert "Paris" in _cells(view, "Title")[0]
    assert "hidden by the filters" in view.transcript.toPlainText()
    assert "test case city-" not in view.transcript.toPlainText()
    view.open_entry(0)
    assert "And what about Tokyo?" in view.transcript.toPlainText()
