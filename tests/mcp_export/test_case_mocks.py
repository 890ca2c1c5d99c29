"""A case's mocked tools and injected faults (``mock:``) reach the model as real ones do.

Each fault is put beside the same fault of a real tool server: the real ``mcp-server-time``
refusing a timezone, the repository's test tool server answering late, a server whose command
does not exist. The model is the real OpenAI provider against ``FakeOpenAIServer``; what it was
sent is read from the requests that server received.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from mcp_export.testing.run import MatrixResult, run_matrix, select_cases
from schema_types.files.agent_file import load_agent
from tests.fakes._script import tool_round_then_text
from tests.fakes.mcp_clients import book_tool, time_server, write_agent
from tests.fakes.openai_server import FakeOpenAIServer
from tests.mcp_export.tool_servers import REPO, fake_server

pytestmark = pytest.mark.anyio

MARS = ("call_1", "t__get_current_time", {"timezone": "Mars/Olympus"})
LISBON = ("call_1", "t__get_current_time", {"timezone": "Europe/Lisbon"})


async def _run(
    tmp_path: Path,
    call: tuple[str, str, dict[str, Any]],
    case: dict[str, Any],
    servers: dict[str, Any],
    **settings: Any,
) -> tuple[MatrixResult, list[dict[str, Any]]]:
    with FakeOpenAIServer(responder=tool_round_then_text([call])) as model:
        path = write_agent(
            tmp_path / f"{case['name']}.agent.yaml",
            base_url=model.base_url,
            tools=[book_tool(tests=[case])],
            mcp_servers=servers,
            settings=settings,
        )
        agent = load_agent(path)
        matrix = await run_matrix(agent, path, select_cases(agent))
        return matrix, model.bodies


def _tool_message(bodies: list[dict[str, Any]]) -> dict[str, Any]:
    found: dict[str, Any] = bodies[-1]["messages"][-1]
    assert found["role"] == "tool"
    return found


def _offered(body: dict[str, Any]) -> list[str]:
    return sorted(t["function"]["name"] for t in body.get("tools", ()))


async def test_a_mocked_error_reaches_the_model_as_a_real_servers_error(tmp_path: Path) -> None:
    real_case = {"name": "real", "arguments": {"destination": "Mars"}}
    _, real = await _run(tmp_path, MARS, real_case, {"t": time_server()})
    said = _tool_message(real)["content"]
    assert "Mars/Olympus" in said  # the real server refused the timezone

    # The provider marks an error result for the model ("Error: "); the server's own text follows.
    sent = said.removeprefix("Error: ")
    mocked_case = real_case | {"name": "mocked", "mock": {"t__get_current_time": {"error": sent}}}
    # A timezone the real server knows: only the mock makes this call fail.
    matrix, mocked = await _run(tmp_path, LISBON, mocked_case, {"t": time_server()})

    assert _tool_message(mocked) == _tool_message(real)
    assert matrix.results[0].outcome.text == f"done: {said}"
    assert matrix.results[0].passed


async def test_a_fixed_result_is_what_the_model_gets(tmp_path: Path) -> None:
    case = {
        "name": "fixed",
        "arguments": {"destination": "Mars"},
        "mock": {"t__get_current_time": {"result": {"timezone": "Mars/Olympus", "hour": 25}}},
        "expect": {"contains": ['"hour": 25']},
    }
    matrix, bodies = await _run(tmp_path, MARS, case, {"t": time_server()})

    assert _tool_message(bodies)["content"] == '{"timezone": "Mars/Olympus", "hour": 25}'
    assert matrix.results[0].passed, matrix.results[0].failures


async def test_a_delay_past_the_limit_ends_as_a_slow_real_tool_does(tmp_path: Path) -> None:
    slow = ("call_1", "s__slow_echo", {"text": "hi", "ms": 20000})
    servers = {"s": fake_server(cwd=str(REPO), serverToolDefaults={"permissionRequired": False})}
    real_case = {"name": "real", "arguments": {"destination": "Oslo"}}
    real, _ = await _run(tmp_path, slow, real_case, servers, timeoutSeconds=5)

    mocked_case = real_case | {"name": "mocked", "mock": {"s__slow_echo": {"delayMs": 20000}}}
    quick = ("call_1", "s__slow_echo", {"text": "hi", "ms": 1})  # only the mock makes it late
    mocked, _ = await _run(tmp_path, quick, mocked_case, servers, timeoutSeconds=5)

    real_text, mocked_text = real.results[0].outcome.text, mocked.results[0].outcome.text
    assert real.results[0].outcome.is_error and mocked.results[0].outcome.is_error
    assert mocked_text == real_text, (real_text, mocked_text)
    assert mocked.results[0].outcome.duration_ms < 8000


async def test_a_server_mocked_down_is_not_offered_and_cannot_be_called(tmp_path: Path) -> None:
    gone = {
        "t": {
            "type": "stdio",
            "command": str(tmp_path / "no-such-server"),
            "serverToolDefaults": {"permissionRequired": False},
        }
    }
    real_case = {"name": "real", "arguments": {"destination": "Mars"}}
    _, real_bodies = await _run(tmp_path, MARS, real_case, gone)
    case = {"name": "mocked", "arguments": {"destination": "Mars"}, "mock": {"t": {"down": True}}}
    _, mocked_bodies = await _run(tmp_path, MARS, case, {"t": time_server()})

    assert _offered(mocked_bodies[0]) == _offered(real_bodies[0]) == []
    prefix = (
        "Error: tool t__get_current_time cannot be called: the MCP server 't' could not start: "
    )
    assert _tool_message(real_bodies)["content"].startswith(prefix)
    assert _tool_message(mocked_bodies)["content"] == (
        f"{prefix}the case mocks it as down (mock: t: {{down: true}})"
    )


async def test_a_mock_of_an_unknown_server_fails_the_case_saying_so(tmp_path: Path) -> None:
    case = {"name": "typo", "arguments": {"destination": "Mars"}, "mock": {"tt__x": {"down": True}}}
    matrix, bodies = await _run(tmp_path, MARS, case, {"t": time_server()})

    assert bodies == []
    [failure] = matrix.results[0].failures
    assert str(failure) == (
        "mock: 'tt__x' names no tool server of the agent nor one of its tools "
        "(server__tool; the servers: t)"
    )
