"""Record and replay in process (``run_matrix(mode=...)``): a case with a mocked fault and a judge
is recorded against ``FakeOpenAIServer`` and the real ``mcp-server-time``, then replayed after the
model server has stopped: the same answer, the same verdict, the mocked call answered by the mock.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from mcp_export.testing.judge import JUDGE_SYSTEM_PROMPT
from mcp_export.testing.replay.fixture import fixture_path
from mcp_export.testing.replay.tape import Mode
from mcp_export.testing.run import MatrixResult, run_matrix, select_cases
from schema_types.files.agent_file import load_agent
from tests.fakes._script import Reply, RequestBody, text, tool_calls
from tests.fakes.mcp_clients import book_tool, time_server, write_agent
from tests.fakes.openai_server import FakeOpenAIServer

pytestmark = pytest.mark.anyio

CASE: dict[str, Any] = {
    "name": "calendar fails",
    "arguments": {"destination": "Lisbon"},
    "mock": {"t__convert_time": {"error": "Error: calendar locked"}},
    "expect": {"contains": ["calendar locked"], "judge": "Says the calendar failed."},
}
CALLS = [
    ("call_1", "t__get_current_time", {"timezone": "Europe/Lisbon"}),
    (
        "call_2",
        "t__convert_time",
        {"source_timezone": "UTC", "time": "12:00", "target_timezone": "Europe/Lisbon"},
    ),
]


def _respond(body: RequestBody) -> Reply:
    if body["messages"][0]["content"] == JUDGE_SYSTEM_PROMPT:
        return text('{"pass": true, "reason": "It says the calendar failed."}')
    if body.rounds_since_user == 0:
        return tool_calls(CALLS)
    return text("Sorry: " + " | ".join(r.content for r in body.tool_results))


async def _run(path: Path, mode: Mode) -> MatrixResult:
    agent = load_agent(path)
    return await run_matrix(agent, path, select_cases(agent), mode=mode)


async def test_a_mocked_and_judged_case_replays_as_recorded(tmp_path: Path) -> None:
    with FakeOpenAIServer(responder=_respond) as model:
        path = write_agent(
            tmp_path / "desk.agent.yaml",
            base_url=model.base_url,
            tools=[book_tool(tests=[CASE])],
            mcp_servers={"t": time_server()},
        )
        recorded = await _run(path, "record")
        sent = len(model.bodies)

    replayed = await _run(path, "replay")

    [before], [after] = recorded.results, replayed.results
    assert before.passed, before.failures
    assert after.passed, after.failures
    assert after.outcome.text == before.outcome.text
    assert "calendar locked" in after.outcome.text and "Europe/Lisbon" in after.outcome.text
    assert after.verdict == before.verdict
    assert sent == 3  # two model requests and the judge's
    fixture = json.loads(
        fixture_path(path, "book_flight", CASE["name"], "openai:fake-model").read_text("utf-8")
    )
    # The mock answers its call in the replay too: only the real server's call is recorded.
    assert [c["name"] for c in fixture["toolCalls"]] == ["t__get_current_time"]
    assert (len(fixture["exchanges"]), len(fixture["judge"])) == (2, 1)


async def test_a_changed_mock_shows_as_a_different_request(tmp_path: Path) -> None:
    with FakeOpenAIServer(responder=_respond) as model:
        path = write_agent(
            tmp_path / "desk.agent.yaml",
            base_url=model.base_url,
            tools=[book_tool(tests=[CASE])],
            mcp_servers={"t": time_server()},
        )
        await _run(path, "record")
    changed = CASE | {"mock": {"t__convert_time": {"error": "Error: calendar on fire"}}}
    write_agent(
        path,
        base_url=model.base_url,
        tools=[book_tool(tests=[changed])],
        mcp_servers={"t": {"command": str(tmp_path / "no-such-server")}},  # never started
    )

    [result] = (await _run(path, "replay")).results

    assert not result.passed
    assert str(result.failures[0]) == (
        "replay: model request 2 differs from the recording at messages[3].content at character "
        "16: recorded 'Error: calendar locked', now 'Error: calendar on fire'; re-record with "
        "metaagent test --record"
    )
