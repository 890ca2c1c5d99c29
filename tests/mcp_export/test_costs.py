"""What calls cost, in every view of ``metaagent test``: the report, JUnit properties, JSON and
History, each adding up to the same figures; a model without a price, or a model server that
reports no token counts, says unknown everywhere (NULL in History), never 0; ``maxCost`` fails a
call that costs more, or whose cost is unknown; a price table that cannot be read stops the run
with exit code 2 and says what to fix.

``metaagent test`` runs as a real subprocess against ``FakeOpenAIServer`` (which reports usage),
with the test's own ``METAAGENT_HOME`` (its Preferences' ``prices.yaml`` and its history).
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import junitparser
import pytest
import yaml

from mcp_export.costs.cost import Cost, call_cost, format_usd
from mcp_export.costs.prices import PRICES_FILE
from mcp_export.history.conversations import ConversationFilter
from mcp_export.history.schema import agent_key
from mcp_export.history.store import HistoryStore
from schema_types.prices import ModelPrice
from tests.fakes._script import Reply, RequestBody, text, text_without_usage
from tests.fakes.cli import metaagent
from tests.fakes.mcp_clients import book_tool, write_agent
from tests.fakes.openai_server import FakeOpenAIServer

CALL = (20 * 2.0 + 5 * 8.0) / 1e6  # usage (20, 5) at $2 / $8 per million tokens
CHEAP = (20 * 1.0 + 5 * 3.0) / 1e6  # the agent file's price of vllm:cheap


def _home() -> Path:
    return Path(os.environ["METAAGENT_HOME"])


def _preferences(table: dict[str, Any]) -> None:
    _home().mkdir(parents=True, exist_ok=True)
    (_home() / PRICES_FILE).write_text(yaml.safe_dump(table), encoding="utf-8")


def _agent(tmp_path: Path, server: FakeOpenAIServer, cases: list[dict[str, Any]]) -> Path:
    path = write_agent(
        tmp_path / "desk.agent.yaml",
        base_url=server.base_url,
        tools=[book_tool(tests=cases)],
        settings={"prices": {"vllm:cheap": {"input": 1, "output": 3}}},
    )
    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    data["providers"]["vllm"] = {"VLLM_BASE_URL": server.base_url}
    path.write_text(yaml.safe_dump(data), encoding="utf-8")
    return path


def _booked(body: RequestBody) -> Reply:
    return text("Booked AF123.", usage=(20, 5))


def _history_costs() -> dict[str, list[tuple[float | None, bool]]]:
    costs: dict[str, list[tuple[float | None, bool]]] = {}
    with HistoryStore(_home() / "history.sqlite3") as store:
        for row in store.case_runs():
            costs.setdefault(row.model, []).append((row.cost_usd, row.cost_at_least))
    return costs


def test_costs_add_up_in_the_report_junit_json_and_history(tmp_path: Path) -> None:
    _preferences(
        {
            "openai:fake-model": {"input": 2.0, "output": 8.0},
            "vllm:cheap": {"input": 50, "output": 50},  # the agent file's entry wins
        }
    )
    junit, report = tmp_path / "junit.xml", tmp_path / "report.json"
    cases = [{"name": "oslo", "arguments": {"destination": "Oslo"}}]
    with FakeOpenAIServer(responder=_booked) as model:
        path = _agent(tmp_path, model, cases)
        done = metaagent(
            "test",
            str(path),
            *("--model", "openai:fake-model", "--model", "vllm:cheap"),
            *("--model", "vllm:unpriced", "--repeat", "3"),
            *("--junit", str(junit), "--json", str(report)),
        )

    assert (done.returncode, done.stderr) == (0, ""), done.stdout
    lines = done.stdout.splitlines()
    models = ("openai:fake-model", "vllm:cheap", "vllm:unpriced")
    by_model = {m: next(line for line in lines if f"  {m}  " in line) for m in models}
    assert by_model["openai:fake-model"].endswith(
        "75 tokens  $0.0000800 a call, $0.00800 per 100 calls"
    )
    assert by_model["vllm:cheap"].endswith("$0.0000350 a call, $0.00350 per 100 calls")
    assert by_model["vllm:unpriced"].endswith(
        "cost unknown: no price for vllm:unpriced (add it to the price table)"
    )
    # The whole run: the known part, a lower bound as one model's price is unknown.
    total = 3 * CALL + 3 * CHEAP
    assert lines[-1].endswith(
        f"; cost ≥ {format_usd(total)}, ≥ {format_usd(total / 9)} a call, "
        f"≥ {format_usd(total / 9 * 100)} per 100 calls"
    )

    data = json.loads(report.read_text(encoding="utf-8"))
    cells = {cell["model"]: cell for cell in data["cells"]}
    for model_name, each in (("openai:fake-model", CALL), ("vllm:cheap", CHEAP)):
        cell = cells[model_name]
        runs = [run["cost"]["usd"] for run in cell["runs"]]
        assert runs == pytest.approx([each] * 3)
        assert cell["cost"]["total"]["usd"] == pytest.approx(sum(runs))
        assert cell["cost"]["perCall"]["usd"] == pytest.approx(each)
        assert cell["cost"]["per100Calls"]["usd"] == pytest.approx(each * 100)
        assert not cell["cost"]["total"]["atLeast"]
    unpriced = cells["vllm:unpriced"]
    assert [run["cost"]["usd"] for run in unpriced["runs"]] == [None] * 3
    assert unpriced["cost"]["total"] == {
        "usd": None,
        "atLeast": False,
        "why": "no price for vllm:unpriced (add it to the price table)",
    }
    assert data["cost"]["total"]["usd"] == pytest.approx(total)
    assert data["cost"]["total"]["atLeast"] is True

    suites = {suite.name: suite for suite in junitparser.JUnitXml.fromfile(str(junit))}
    properties = {
        name: {p.name: p.value for p in suite.properties()} for name, suite in suites.items()
    }
    assert properties["openai:fake-model"] == {
        "cost": format_usd(3 * CALL),
        "costPerCall": "$0.0000800",
        "costPer100Calls": "$0.00800",
    }
    assert properties["vllm:unpriced"] == dict.fromkeys(
        ("cost", "costPerCall", "costPer100Calls"), "unknown"
    )
    case = next(iter(suites["vllm:cheap"]))
    case_properties = {p.get("name"): p.get("value") for p in case._elem.iter("property")}
    assert case_properties["cost"] == "$0.0000350"
    assert case_properties["fingerprint"] == cells["vllm:cheap"]["fingerprint"]

    history = _history_costs()
    with HistoryStore(_home() / "history.sqlite3") as store:
        page = store.conversations(ConversationFilter(agent_key(str(path)), case_runs=True))
    marks = sorted({(r.case.model, r.case.cost_text()) for r in page.rows if r.case})
    assert marks == [
        ("openai:fake-model", "cost $0.0000800 a call, $0.00800 per 100 calls"),
        ("vllm:cheap", "cost $0.0000350 a call, $0.00350 per 100 calls"),
        ("vllm:unpriced", "cost unknown"),
    ]
    assert [usd for usd, _ in history["openai:fake-model"]] == pytest.approx([CALL] * 3)
    assert [usd for usd, _ in history["vllm:cheap"]] == pytest.approx([CHEAP] * 3)
    assert history["vllm:unpriced"] == [(None, False)] * 3


def test_a_model_server_without_token_counts_costs_unknown_and_fails_max_cost(
    tmp_path: Path,
) -> None:
    _preferences({"openai:fake-model": {"input": 2.0, "output": 8.0}})
    report = tmp_path / "report.json"
    cases = [{"name": "cheap", "arguments": {"destination": "Oslo"}, "expect": {"maxCost": 1}}]
    with FakeOpenAIServer(responder=lambda body: text_without_usage("Booked AF123.")) as model:
        path = _agent(tmp_path, model, cases)
        done = metaagent("test", str(path), "--json", str(report))

    assert done.returncode == 1
    assert "cost unknown: the model server did not report the token counts" in done.stdout
    assert (
        "maxCost: the cost is unknown (the model server did not report the token counts), "
        "at most $1.00 expected" in done.stdout
    )
    run = json.loads(report.read_text(encoding="utf-8"))["cells"][0]["runs"][0]
    assert run["cost"]["usd"] is None
    assert _history_costs() == {"openai:fake-model": [(None, False)]}


def test_max_cost_fails_a_call_that_costs_more_and_passes_one_within(tmp_path: Path) -> None:
    _preferences({"openai:fake-model": {"input": 2.0, "output": 8.0}})
    cases = [
        {"name": "tight", "arguments": {"destination": "Oslo"}, "expect": {"maxCost": 0.00005}},
        {"name": "loose", "arguments": {"destination": "Oslo"}, "expect": {"maxCost": 0.0001}},
    ]
    with FakeOpenAIServer(responder=_booked) as model:
        path = _agent(tmp_path, model, cases)
        done = metaagent("test", str(path))

    assert done.returncode == 1
    assert "maxCost: cost $0.0000800, at most $0.0000500 expected" in done.stdout
    assert "PASS      book_flight / loose" in done.stdout
    assert "FAIL      book_flight / tight" in done.stdout


def test_an_unreadable_price_table_stops_the_run_saying_what_to_fix(tmp_path: Path) -> None:
    _preferences({"openai:fake-model": {"input": "a lot", "output": 8.0}})
    cases = [{"name": "oslo", "arguments": {"destination": "Oslo"}}]
    asked: list[RequestBody] = []

    def answer(body: RequestBody) -> Reply:
        asked.append(body)
        return _booked(body)

    with FakeOpenAIServer(responder=answer) as model:
        path = _agent(tmp_path, model, cases)
        done = metaagent("test", str(path))

    assert done.returncode == 2
    assert asked == []  # stopped before any call
    assert f"the price table {_home() / PRICES_FILE} has a bad entry for openai:fake-model" in (
        done.stderr
    )
    assert "input: Input should be a valid number" in done.stderr


def test_partial_token_counts_give_a_lower_bound_and_unknown_parts_stay_unknown() -> None:
    price = ModelPrice(input=2.0, output=8.0)
    exact = call_cost("m", price, 20, 5)
    partial = call_cost("m", price, 20, 5, partial=True)
    unknown = call_cost("m", price, None, 5)
    assert exact.usd == pytest.approx(CALL)
    assert exact.at_least is False
    assert partial.text() == "≥ $0.0000800"
    assert unknown.text() == "unknown"
    assert Cost.total([exact, unknown]).text() == "≥ $0.0000800"
    assert Cost.total([exact, exact]).text() == "$0.000160"
    assert Cost.total([unknown, unknown]).text() == "unknown"
    assert Cost.total([]).text() == "unknown"
    free = call_cost("local:x", ModelPrice(input=0, output=0), None, None)
    assert free.text() == "$0"  # a free model is known to cost nothing, tokens or not
