"""The studio's matrix says what calls cost: each cell's tooltip per call and per 100 calls, each
model column's tooltip, and the run's total in the status line, from the price table of
Preferences (``prices.yaml``) and the agent file's ``settings.prices``; a model without a price
says unknown, never 0. Real runs to ``FakeOpenAIServer`` (usage reported), offscreen.
"""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

from PySide6.QtCore import Qt
from pytestqt.qtbot import QtBot

from app.test_cases.matrix_tab import MatrixTab
from app.tool_editor.case_table import expectations_summary
from mcp_export.costs.prices import PRICES_FILE
from schema_types.cases import Expectations
from tests.app._windows import studio_window
from tests.fakes._script import Reply, RequestBody, text
from tests.fakes.mcp_clients import book_tool, write_agent
from tests.fakes.openai_server import FakeOpenAIServer

RUN_MS = 30_000
GOOD, FREE, UNPRICED = "openai:fake-model", "vllm:free", "vllm:unpriced"


def _booked(body: RequestBody) -> Reply:
    return text("Booked AF123.", usage=(20, 5))


def test_the_matrix_shows_each_cells_cost_and_the_runs_total(
    qtbot: QtBot, qasync_loop: asyncio.AbstractEventLoop, tmp_path: Path
) -> None:
    home = Path(os.environ["METAAGENT_HOME"])
    home.mkdir(parents=True, exist_ok=True)
    (home / PRICES_FILE).write_text(
        "openai:fake-model: {input: 2.0, output: 8.0}\n", encoding="utf-8"
    )
    cases = [{"name": "oslo", "arguments": {"destination": "Oslo"}}]
    with FakeOpenAIServer(responder=_booked) as server:
        path = write_agent(
            tmp_path / "desk.agent.yaml",
            base_url=server.base_url,
            tools=[book_tool(tests=cases)],
            settings={"prices": {FREE: {"input": 0, "output": 0}}},
        )
        text_ = path.read_text(encoding="utf-8").replace(
            "providers:\n", f"providers:\n  vllm: {{VLLM_BASE_URL: '{server.base_url}'}}\n", 1
        )
        path.write_text(text_, encoding="utf-8")
        window = studio_window(qtbot)
        assert window.open_file(path) is not None
        document = window.current_document()
        assert document is not None
        tab = window.open_matrix_tab(document, None, [GOOD, FREE, UNPRICED])
        assert isinstance(tab, MatrixTab)
        qtbot.waitUntil(lambda: tab.last_end is not None and not tab.busy, timeout=RUN_MS)

    def tip(model: str) -> str:
        found = tab.model.index_of(("book_flight", "oslo", model)).data(Qt.ItemDataRole.ToolTipRole)
        assert isinstance(found, str)
        return found

    assert tip(GOOD).endswith("Cost: $0.0000800 a call, $0.00800 per 100 calls")
    assert tip(FREE).endswith("Cost: $0 a call, $0 per 100 calls")
    assert tip(UNPRICED).endswith(
        "Cost unknown: no price for vllm:unpriced (add it to the price table)"
    )
    column = tab.model.headerData(1, Qt.Orientation.Horizontal, Qt.ItemDataRole.ToolTipRole)
    assert column == (
        f"{GOOD}: 1 of 1 cases passed every run\nCost: $0.0000800 a call, $0.00800 per 100 calls"
    )
    assert tab.status.text().startswith("3 of 3 · 0 failed")
    assert "cost ≥ $0.0000800 (≥ $0.0000267 a call, ≥ $0.00267 per 100 calls)" in (
        tab.status.text()
    )
    window.close()


def test_the_tests_panel_names_a_max_cost() -> None:
    expect = Expectations(max_cost=0.002, max_turns=4)
    assert expectations_summary(expect) == "≤ 4 turns · ≤ $0.00200"
