"""A/B of a template: both sides run on the same cases and models, interleaved, through the real
served path to ``FakeOpenAIServer``; the figures come from those runs and the cells that differ
come first.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from mcp_export.costs.prices import price_table
from mcp_export.versions.ab import run_ab, with_template
from schema_types.files.agent_file import load_agent
from tests.fakes._script import Reply, RequestBody, text
from tests.fakes.mcp_clients import book_tool, write_agent
from tests.fakes.openai_server import FakeOpenAIServer

pytestmark = pytest.mark.anyio

MODEL = "openai:fake-model"
CASES = [
    {"name": "oslo", "arguments": {"destination": "Oslo"}, "expect": {"contains": ["AF123"]}},
    {"name": "rome", "arguments": {"destination": "Rome"}, "expect": {"contains": ["Booked"]}},
]


def _by_template(body: RequestBody) -> Reply:
    """The variant's wording ("trip") gets the flight number; the current one does not."""
    if "trip" in json.dumps(body):
        return text("Booked AF123.", usage=(30, 6))
    return text("Booked.", usage=(20, 5))


async def test_ab_runs_both_sides_interleaved_and_puts_the_differing_cells_first(
    tmp_path: Path,
) -> None:
    with FakeOpenAIServer(responder=_by_template) as server:
        path = write_agent(
            tmp_path / "desk.agent.yaml",
            base_url=server.base_url,
            tools=[book_tool(tests=CASES)],
            settings={"prices": {MODEL: {"input": 1.0, "output": 2.0}}},
        )
        agent = load_agent(path)
        variant = with_template(agent, "book_flight", "Book a trip to {destination}.")
        order: list[tuple[int, str]] = []
        result = await run_ab(
            agent,
            variant,
            path,
            [("book_flight", "oslo"), ("book_flight", "rome")],
            [MODEL],
            price_table(agent, {}),
            rounds=2,
            on_round=lambda round_, side: order.append((round_, side)),
        )
        prompts = ["trip" in json.dumps(r.body) for r in server.model_requests]
    assert order == [(1, "A"), (1, "B"), (2, "A"), (2, "B")]
    assert prompts == [False, False, True, True, False, False, True, True]
    a, b = result.figures[MODEL, "A"], result.figures[MODEL, "B"]
    assert (a.runs, a.passed, b.runs, b.passed) == (4, 2, 4, 4)
    assert a.pass_rate == "2/4 (50%)" and b.pass_rate == "4/4 (100%)"
    assert (a.input_tokens, a.output_tokens, b.input_tokens, b.output_tokens) == (80, 20, 120, 24)
    assert a.cost.usd == pytest.approx((80 * 1.0 + 20 * 2.0) / 1e6)
    assert b.cost.usd == pytest.approx((120 * 1.0 + 24 * 2.0) / 1e6)
    assert a.median_ms is not None and b.median_ms is not None
    assert a.version and b.version and a.version != b.version
    first = result.cells[0]
    assert (first.case, first.a, first.b, first.differs) == ("oslo", (0, 2), (2, 2), True)
    assert not result.cells[1].differs
