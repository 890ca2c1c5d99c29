"""A run's trace and token totals, as every consumer shows them: never a silent undercount, and
kept when the run fails after its tools ran.

- A total over model requests of which one did not report its count (a stream without a usage
  chunk) is a lower bound, said so: ``≥ N`` in the test report, ``inputTokensPartial`` in the
  trace (``_meta``), null where a figure is read as exact (``structuredContent``, History).
- A run that fails after its inner tools ran (the model answered with an empty message) keeps
  its tool calls, turns and tokens: in the served result's ``_meta``, in ``metaagent test
  --json``, and in History's ``runs.tool_calls``.

Real parts: the OpenAI provider against ``FakeOpenAIServer``, the reference ``mcp-server-time``
over stdio, the served MCP server through the official client, real SQLite history, and
``metaagent test`` / ``metaagent call`` as subprocesses.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import mcp_types as types
import pytest
from mcp import Client

from mcp_export.history.store import HistoryStore
from mcp_export.providers.base import Usage
from mcp_export.server.agent_server import AgentServer, load_served_agents
from mcp_export.server.result import RUN_META
from mcp_export.session.result import usage_text
from tests.fakes._script import Reply, text, tool_call_without_usage, tool_calls
from tests.fakes.cli import metaagent
from tests.fakes.mcp_clients import book_tool, time_server, write_agent
from tests.fakes.openai_server import FakeOpenAIServer

pytestmark = pytest.mark.anyio

TIME = "t__get_current_time"
CALL = ("call_1", TIME, {"timezone": "UTC"})
CASE = {"name": "oslo", "arguments": {"destination": "Oslo"}, "expect": {}}


def _agent(tmp_path: Path, server: FakeOpenAIServer) -> Path:
    return write_agent(
        tmp_path / "desk.agent.yaml",
        base_url=server.base_url,
        tools=[book_tool(tests=[CASE])],
        mcp_servers={"t": time_server()},
    )


def _unknown_first_turn() -> list[Reply]:
    """A tool turn streamed without usage, then an answer that reports 40 in, 7 out."""
    return [tool_call_without_usage(*CALL), text("Booked AF123 at noon.", usage=(40, 7))]


def _empty_after_a_tool() -> list[Reply]:
    """A tool turn (12 in, 3 out), then an empty answer (30 in, 0 out)."""
    return [tool_calls([CALL], usage=(12, 3)), text("", usage=(30, 0))]


async def _served_call(path: Path, history: Any = False) -> types.CallToolResult:
    async with (
        AgentServer(load_served_agents([path]), history=history) as served,
        Client(served.server) as client,
    ):
        return await client.call_tool("book_flight", {"destination": "Oslo"})


def test_a_total_with_an_unknown_part_is_a_lower_bound_and_says_so() -> None:
    total = Usage.total([Usage(None, None), Usage(40, 7)])
    assert total == Usage(40, 7, input_partial=True, output_partial=True)
    assert (total.exact_input, total.exact_output) == (None, None)
    assert usage_text(total) == (
        "≥ 40 tokens in, ≥ 7 out (a model request did not report its count)"
    )
    assert Usage.total([Usage(None, None), Usage(None, None)]) == Usage()
    assert Usage.total([Usage(30, 5), Usage(40, 7)]) == Usage(70, 12)
    assert usage_text(Usage(70, 12)) == "70 tokens in, 12 out"


async def test_a_served_call_never_reports_an_undercount_as_its_total(tmp_path: Path) -> None:
    database = tmp_path / "history.sqlite3"
    with FakeOpenAIServer(_unknown_first_turn()) as model:
        result = await _served_call(_agent(tmp_path, model), history=str(database))

    assert not result.is_error
    assert result.structured_content is not None
    # Read as exact totals by clients: unknown, not the 40 and 7 of the second request alone.
    assert result.structured_content["usage"] == {"inputTokens": None, "outputTokens": None}
    trace = (result.meta or {})[RUN_META]
    assert trace["usage"] == {
        "inputTokens": 40,
        "inputTokensPartial": True,
        "outputTokens": 7,
        "outputTokensPartial": True,
    }
    assert trace["turns"] == 2
    with HistoryStore(str(database)) as store:
        [run] = store.runs(tool_name="book_flight")
    assert (run.tokens_in, run.tokens_out, run.tool_calls) == (None, None, 1)


def test_the_test_report_shows_a_lower_bound_as_one(tmp_path: Path) -> None:
    report = tmp_path / "report.json"
    with FakeOpenAIServer(_unknown_first_turn()) as model:
        done = metaagent("test", str(_agent(tmp_path, model)), "--json", str(report))

    assert done.returncode == 0, done.stdout + done.stderr
    line = done.stdout.splitlines()[1]
    assert line.startswith("PASS      book_flight / oslo  openai:fake-model  1/1  ")
    assert "  ≥ 47 tokens  " in line, line  # then the cost
    [run] = json.loads(report.read_text(encoding="utf-8"))["cells"][0]["runs"]
    assert (run["inputTokens"], run["outputTokens"], run["tokensPartial"]) == (40, 7, True)


async def test_a_served_call_that_fails_after_its_tools_ran_keeps_its_trace(
    tmp_path: Path,
) -> None:
    database = tmp_path / "history.sqlite3"
    with FakeOpenAIServer(_empty_after_a_tool()) as model:
        result = await _served_call(_agent(tmp_path, model), history=str(database))

    assert result.is_error
    trace = (result.meta or {})[RUN_META]
    assert [call["name"] for call in trace["toolCalls"]] == [TIME]
    assert trace["toolCalls"][0]["arguments"] == {"timezone": "UTC"}
    assert trace["turns"] == 2
    assert trace["usage"] == {
        "inputTokens": 42,
        "inputTokensPartial": False,
        "outputTokens": 3,
        "outputTokensPartial": False,
    }
    with HistoryStore(str(database)) as store:
        [run] = store.runs(tool_name="book_flight")
        messages = store.messages(run.thread_id or "")
    assert (run.status, run.error) == ("error", "the model answered with an empty message")
    held = sum(len(m.tool_calls or []) for m in messages if m.role == "assistant")
    assert held == 1
    assert run.tool_calls == held


def test_metaagent_test_json_shows_the_trace_of_a_failed_run(tmp_path: Path) -> None:
    report = tmp_path / "report.json"
    with FakeOpenAIServer(_empty_after_a_tool()) as model:
        done = metaagent("test", str(_agent(tmp_path, model)), "--json", str(report))

    assert done.returncode == 1
    [run] = json.loads(report.read_text(encoding="utf-8"))["cells"][0]["runs"]
    assert run["isError"] is True
    assert run["toolCalls"] == [TIME]
    assert (run["turns"], run["inputTokens"], run["outputTokens"]) == (2, 42, 3)


def test_metaagent_call_records_the_tool_calls_of_a_failed_run(tmp_path: Path) -> None:
    with FakeOpenAIServer(_empty_after_a_tool()) as model:
        path = _agent(tmp_path, model)
        done = metaagent("call", str(path), "book_flight", "--arg", "destination=Oslo")

    assert done.returncode == 1, done.stderr
    with HistoryStore(Path(os.environ["METAAGENT_HOME"]) / "history.sqlite3") as store:
        [run] = store.runs(tool_name="book_flight")
    assert (run.status, run.tool_calls) == ("error", 1)
