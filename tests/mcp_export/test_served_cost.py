"""What a served call cost, in History and in its result's ``_meta``: each store location of
``store_location`` (an SQLite file, a real PostgreSQL), a real ``AgentServer`` in-process with
the official ``mcp.Client``, the real OpenAI provider against ``FakeOpenAIServer`` reporting
usage (or not), the price table of Preferences (``prices.yaml``) and of the agent file.

A priced model's call costs its tokens at the price; no price: unknown, never 0; a request that
did not report its tokens makes the cost a lower bound, and the conversation's tokens ``≥ N``.
The run rows, the conversation and the versions query add up to the same sums.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import mcp_types as types
import pytest
from mcp import Client

from mcp_export.history.schema import agent_key
from mcp_export.history.store import HistoryStore, open_store
from mcp_export.server.agent_server import AgentServer, load_served_agents
from mcp_export.server.result import RUN_META
from mcp_export.versions.query import tool_versions
from tests.fakes._script import text, text_without_usage, tool_call_without_usage
from tests.fakes.mcp_clients import book_tool, time_server, write_agent
from tests.fakes.openai_server import FakeOpenAIServer

pytestmark = pytest.mark.anyio
pytest_plugins = ["tests.fakes.postgres"]

PRICES = {"openai:fake-model": {"input": 0.4, "output": 1.6}}
COST = (1000 * 0.4 + 200 * 1.6) / 1_000_000  # 1000 tokens in, 200 out
CLIENT = types.Implementation(name="test-client", version="9.9")


def _cost_meta(result: types.CallToolResult) -> dict[str, Any]:
    assert result.meta is not None
    cost: dict[str, Any] = result.meta[RUN_META]["cost"]
    return cost


async def _call(path: Path, location: str, *destinations: str) -> list[types.CallToolResult]:
    results: list[types.CallToolResult] = []
    async with (
        AgentServer(load_served_agents([path]), history=location) as served,
        Client(served.server, client_info=CLIENT) as client,
    ):
        conversation: str | None = None
        for destination in destinations:
            arguments: dict[str, Any] = {"destination": destination}
            if conversation is not None:
                arguments["conversation_id"] = conversation
            result = await client.call_tool("book_flight", arguments)
            assert not result.is_error, result.content
            if result.structured_content is not None:
                conversation = result.structured_content.get("conversationId")
            results.append(result)
    return results


async def test_a_served_call_on_a_priced_model_records_its_cost(
    tmp_path: Path, store_location: str
) -> None:
    with FakeOpenAIServer([text("Booked.", usage=(1000, 200))]) as model:
        path = write_agent(
            tmp_path / "a.agent.yaml", base_url=model.base_url, settings={"prices": PRICES}
        )
        (result,) = await _call(path, store_location, "Oslo")
    with open_store(store_location) as store:
        (run,) = store.runs(tool_name="book_flight")
        thread = store.thread(run.thread_id or "")
    assert run.cost_usd == pytest.approx(COST) and not run.cost_at_least
    assert _cost_meta(result) == {"usd": pytest.approx(COST), "atLeast": False}
    assert thread is not None
    assert thread.cost.text() == "cost $0.000720 a call, $0.0720 per 100 calls"


async def test_the_price_table_of_preferences_prices_a_served_call(
    tmp_path: Path, metaagent_home: Path
) -> None:
    (metaagent_home / "prices.yaml").write_text(
        "openai:fake-model: {input: 0.4, output: 1.6}\n", encoding="utf-8"
    )
    with FakeOpenAIServer([text("Booked.", usage=(1000, 200))]) as model:
        path = write_agent(tmp_path / "a.agent.yaml", base_url=model.base_url)
        await _call(path, str(tmp_path / "h.sqlite3"), "Oslo")
    with HistoryStore(tmp_path / "h.sqlite3") as store:
        (run,) = store.runs(tool_name="book_flight")
    assert run.cost_usd == pytest.approx(COST)


async def test_a_model_without_a_price_costs_unknown_never_0(
    tmp_path: Path, store_location: str
) -> None:
    with FakeOpenAIServer([text("Booked.", usage=(1000, 200))]) as model:
        path = write_agent(tmp_path / "a.agent.yaml", base_url=model.base_url)
        (result,) = await _call(path, store_location, "Oslo")
    with open_store(store_location) as store:
        (run,) = store.runs(tool_name="book_flight")
        thread = store.thread(run.thread_id or "")
    assert (run.cost_usd, run.cost_at_least) == (None, False)
    meta = _cost_meta(result)
    assert meta["usd"] is None and "no price for openai:fake-model" in meta["why"]
    assert thread is not None and thread.cost.text() == "cost unknown"


async def test_a_request_without_usage_makes_the_cost_and_the_tokens_lower_bounds(
    tmp_path: Path, store_location: str
) -> None:
    script = [
        tool_call_without_usage("c1", "t__get_current_time", {"timezone": "UTC"}),
        text("Booked at noon.", usage=(1000, 200)),
    ]
    with FakeOpenAIServer(script) as model:
        path = write_agent(
            tmp_path / "a.agent.yaml",
            base_url=model.base_url,
            mcp_servers={"t": time_server()},
            settings={"prices": PRICES},
        )
        (result,) = await _call(path, store_location, "Oslo")
    with open_store(store_location) as store:
        (run,) = store.runs(tool_name="book_flight")
        thread = store.thread(run.thread_id or "")
    assert run.cost_usd == pytest.approx(COST) and run.cost_at_least
    assert (run.tokens_in, run.tokens_out) == (None, None)  # a lower bound is not a count
    meta = _cost_meta(result)
    assert (meta["usd"], meta["atLeast"]) == (pytest.approx(COST), True)
    assert thread is not None
    assert thread.cost.text() == "cost ≥ $0.000720 a call, ≥ $0.0720 per 100 calls"
    assert (thread.tokens_in, thread.tokens_out, thread.tokens_unreported) == (1000, 200, 1)


async def test_a_conversation_without_any_reported_usage_has_unknown_tokens(
    tmp_path: Path, store_location: str
) -> None:
    with FakeOpenAIServer([text_without_usage("Booked.")]) as model:
        path = write_agent(
            tmp_path / "a.agent.yaml", base_url=model.base_url, settings={"prices": PRICES}
        )
        await _call(path, store_location, "Oslo")
    with open_store(store_location) as store:
        (run,) = store.runs(tool_name="book_flight")
        thread = store.thread(run.thread_id or "")
    assert run.cost_usd is None
    assert thread is not None
    assert (thread.tokens_in, thread.tokens_out, thread.tokens_unreported) == (None, None, 1)
    assert thread.cost.text() == "cost unknown"


async def test_costs_add_up_in_the_runs_the_conversation_and_the_versions(
    tmp_path: Path, store_location: str
) -> None:
    script = [
        text("Booked.", usage=(1000, 200)),
        text("Changed.", usage=(3000, 100)),
        text_without_usage("Cancelled."),
    ]
    with FakeOpenAIServer(script) as model:
        path = write_agent(
            tmp_path / "a.agent.yaml",
            base_url=model.base_url,
            tools=[book_tool(conversation=True)],
            settings={"prices": PRICES},
        )
        await _call(path, store_location, "Oslo", "Rome", "Paris")
    with open_store(store_location) as store:
        runs = store.runs(tool_name="book_flight")
        fingerprint = runs[0].fingerprint
        store.add_case_run(
            matrix_id="m",
            agent_path=agent_key(str(path)),
            agent_name="Travel Desk",
            tool_name="book_flight",
            case_name="oslo",
            model="openai:fake-model",
            attempt=1,
            passed=True,
            failures=[],
            answer="Booked.",
            is_error=False,
            duration_ms=10.0,
            tokens_in=10,
            tokens_out=5,
            turns=1,
            verdict=None,
            cost_usd=0.5,
            fingerprint=fingerprint,
        )
        store.flush()
        thread = store.thread(runs[0].thread_id or "")
        (version,) = tool_versions(store, path, "book_flight")
    known = [r.cost_usd for r in runs if r.cost_usd is not None]
    assert len(runs) == 3 and len(known) == 2
    assert thread is not None and thread.calls == 3
    assert thread.cost.total.usd == pytest.approx(sum(known))
    assert thread.cost.total.at_least  # the third call's cost is unknown
    assert thread.cost.text().startswith(f"cost ≥ ${sum(known):.5f} in 3 calls: ")
    assert version.served_calls == 3 and version.runs == 1
    assert version.cells("")[3] == "1 + 3 served" and version.as_json()["servedCalls"] == 3
    assert version.cost.total.usd == pytest.approx(0.5 + sum(known))
    assert version.cost.total.at_least
    assert version.cost.per_call.usd == pytest.approx((0.5 + sum(known)) / 4)


async def test_an_unreadable_price_table_of_preferences_leaves_the_agent_files_prices(
    tmp_path: Path, metaagent_home: Path, caplog: pytest.LogCaptureFixture
) -> None:
    (metaagent_home / "prices.yaml").write_text("openai:other: [not, a, price]\n", encoding="utf-8")
    with FakeOpenAIServer([text("Booked.", usage=(1000, 200))]) as model:
        path = write_agent(
            tmp_path / "a.agent.yaml", base_url=model.base_url, settings={"prices": PRICES}
        )
        (result,) = await _call(path, str(tmp_path / "h.sqlite3"), "Oslo")
    with HistoryStore(tmp_path / "h.sqlite3") as store:
        (run,) = store.runs(tool_name="book_flight")
    assert run.cost_usd == pytest.approx(COST)
    assert _cost_meta(result)["usd"] == pytest.approx(COST)
    assert "has a bad entry for openai:other" in caplog.text
