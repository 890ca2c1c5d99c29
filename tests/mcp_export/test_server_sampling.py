"""The client's model through MCP sampling, in both protocol eras, and the no-model answer.

2025-11-25 (``legacy``): the server sends ``sampling/createMessage`` in the middle of the call.
2026-07-28 (``auto``): the call returns ``InputRequiredResult`` rounds that the official client
resolves with the same ``sampling_callback`` and retries with the sealed ``requestState``.
The callback plays a scripted model (``ScriptedSampling``).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import mcp_types as types
import pytest
from mcp import Client
from mcp.shared.exceptions import MCPError

from mcp_export.history.store import HistoryStore
from mcp_export.server.agent_server import AgentServer, load_served_agents
from tests.fakes.mcp_clients import (
    ProgressLog,
    ScriptedSampling,
    book_tool,
    sampled_text,
    time_server,
    write_agent,
)

pytestmark = pytest.mark.anyio

MODES = pytest.mark.parametrize("mode", ["legacy", "auto"])
WITH_TOOLS = types.SamplingCapability(tools=types.SamplingToolsCapability())
TIME_USE = ("use_1", "t__get_current_time", {"timezone": "UTC"})


@pytest.fixture(autouse=True)
def _no_openai_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)


def _text(result: types.CallToolResult) -> str:
    return "".join(b.text for b in result.content if isinstance(b, types.TextContent))


def _keyless_agent(path: Path, **options: Any) -> Path:
    options.setdefault("system_prompt", "You book trips.")
    return write_agent(path, api_key=None, **options)


def _client(served: AgentServer, mode: str, sampling: ScriptedSampling | None, **kw: Any) -> Client:
    return Client(served.server, mode=mode, sampling_callback=sampling, **kw)


@MODES
async def test_an_agent_without_credentials_uses_the_clients_model(
    tmp_path: Path, mode: str
) -> None:
    model = ScriptedSampling()
    path = _keyless_agent(tmp_path / "a.agent.yaml", settings={"maxOutputTokens": 321})
    async with (
        AgentServer(load_served_agents([path]), history=False) as served,
        _client(served, mode, model) as client,
    ):
        result = await client.call_tool("book_flight", {"destination": "Oslo"})
    assert not result.is_error, _text(result)
    assert _text(result) == "sampled: Book a flight to Oslo for 1 passenger(s)."
    (request,) = model.requests
    assert request.system_prompt == "You book trips."
    assert request.max_tokens == 321
    assert request.tools is None
    assert request.model_preferences is not None
    assert request.model_preferences.hints is not None
    assert request.model_preferences.hints[0].name == "fake-model"


@MODES
async def test_with_sampling_tools_the_whole_tool_loop_runs_through_the_clients_model(
    tmp_path: Path, mode: str
) -> None:
    model = ScriptedSampling.tool_round([TIME_USE])
    path = _keyless_agent(tmp_path / "a.agent.yaml", mcp_servers={"t": time_server()})
    progress = ProgressLog()
    async with (
        AgentServer(load_served_agents([path]), history=False) as served,
        _client(served, mode, model, sampling_capabilities=WITH_TOOLS) as client,
    ):
        result = await client.call_tool(
            "book_flight", {"destination": "Oslo"}, progress_callback=progress
        )
    assert not result.is_error, _text(result)
    first, second = model.requests
    assert first.tools is not None
    assert "t__get_current_time" in [t.name for t in first.tools]
    # The second request carries the whole exchange: question, tool use, tool result.
    assert [m.role for m in second.messages] == ["user", "assistant", "user"]
    data = result.structured_content
    assert data is not None
    (call,) = data["toolCalls"]
    assert call["name"] == "t__get_current_time"
    assert call["isError"] is False
    assert data["answer"].startswith("done: ")
    assert "UTC" in data["answer"]
    # Each event is reported once, also when the 2026-07-28 rounds replay the earlier turns.
    assert [m.split(" ")[0] for m in progress.messages] == [
        "model",
        "calling",
        "t__get_current_time",
        "model",
    ]


@MODES
async def test_without_sampling_tools_the_clients_model_gets_no_tools(
    tmp_path: Path, mode: str
) -> None:
    model = ScriptedSampling()
    path = _keyless_agent(tmp_path / "a.agent.yaml", mcp_servers={"t": time_server()})
    async with (
        AgentServer(load_served_agents([path]), history=False) as served,
        _client(served, mode, model) as client,
    ):
        result = await client.call_tool("book_flight", {"destination": "Oslo"})
    assert not result.is_error
    (request,) = model.requests
    assert request.tools is None


@MODES
async def test_model_sampling_forces_the_clients_model(tmp_path: Path, mode: str) -> None:
    model = ScriptedSampling()
    # A key is configured, but settings.model says: the client's model.
    path = write_agent(tmp_path / "a.agent.yaml", model="sampling", api_key="sk-unused")
    async with (
        AgentServer(load_served_agents([path]), history=False) as served,
        _client(served, mode, model) as client,
    ):
        result = await client.call_tool("book_flight", {"destination": "Oslo"})
    assert _text(result).startswith("sampled: ")


@MODES
async def test_no_model_and_no_sampling_says_exactly_what_to_set(tmp_path: Path, mode: str) -> None:
    path = _keyless_agent(tmp_path / "a.agent.yaml")
    async with (
        AgentServer(load_served_agents([path]), history=False) as served,
        _client(served, mode, None) as client,
    ):
        result = await client.call_tool("book_flight", {"destination": "Oslo"})
    assert result.is_error
    message = _text(result)
    assert "OPENAI_API_KEY is not set (env://OPENAI_API_KEY)" in message
    assert "call from a client that offers MCP sampling" in message
    assert "Method not found" not in message


@MODES
async def test_no_sampling_forbids_the_clients_model(tmp_path: Path, mode: str) -> None:
    model = ScriptedSampling()
    path = _keyless_agent(tmp_path / "a.agent.yaml")
    async with (
        AgentServer(load_served_agents([path]), history=False, sampling=False) as served,
        _client(served, mode, model) as client,
    ):
        result = await client.call_tool("book_flight", {"destination": "Oslo"})
    assert result.is_error
    assert "--no-sampling" in _text(result)
    assert model.requests == []


@MODES
async def test_a_client_that_refuses_to_sample_gets_an_error_result(
    tmp_path: Path, mode: str
) -> None:
    model = ScriptedSampling(
        lambda params: types.ErrorData(code=types.INVALID_REQUEST, message="user declined")
    )
    path = _keyless_agent(tmp_path / "a.agent.yaml")
    async with (
        AgentServer(load_served_agents([path]), history=False) as served,
        _client(served, mode, model) as client,
    ):
        if mode == "legacy":
            result = await client.call_tool("book_flight", {"destination": "Oslo"})
            assert result.is_error
            assert "user declined" in _text(result)
        else:
            # 2026-07-28: the client itself gives up the round trip when its callback refuses.
            with pytest.raises(MCPError, match="user declined"):
                await client.call_tool("book_flight", {"destination": "Oslo"})
        # Either way the server stays healthy.
        model.respond = lambda params: sampled_text("fine")
        again = await client.call_tool("book_flight", {"destination": "Oslo"})
    assert _text(again) == "fine"


async def test_a_forged_request_state_is_refused(tmp_path: Path) -> None:
    path = _keyless_agent(tmp_path / "a.agent.yaml")
    async with (
        AgentServer(load_served_agents([path]), history=False) as served,
        _client(served, "auto", ScriptedSampling()) as client,
    ):
        with pytest.raises(MCPError, match="Invalid or expired requestState"):
            await client.session.call_tool(
                "book_flight",
                {"destination": "Oslo"},
                request_state='{"v":1,"responses":[],"toolCalls":[],"started":0}',
                allow_input_required=True,
            )


async def test_the_first_round_returns_a_sealed_state_and_a_sampling_request(
    tmp_path: Path,
) -> None:
    path = _keyless_agent(tmp_path / "a.agent.yaml")
    async with (
        AgentServer(load_served_agents([path]), history=False) as served,
        _client(served, "auto", ScriptedSampling()) as client,
    ):
        first = await client.session.call_tool(
            "book_flight", {"destination": "Oslo"}, allow_input_required=True
        )
    assert isinstance(first, types.InputRequiredResult)
    assert first.request_state is not None
    assert "Oslo" not in first.request_state  # sealed: encrypted, not merely signed
    assert first.input_requests is not None
    (request,) = first.input_requests.values()
    assert isinstance(request, types.CreateMessageRequest)


@MODES
async def test_sampled_calls_are_recorded_in_the_history(tmp_path: Path, mode: str) -> None:
    model = ScriptedSampling.tool_round([TIME_USE])
    path = _keyless_agent(
        tmp_path / "a.agent.yaml",
        mcp_servers={"t": time_server()},
        tools=[book_tool(conversation=True)],
    )
    async with (
        AgentServer(load_served_agents([path])) as served,
        _client(served, mode, model, sampling_capabilities=WITH_TOOLS) as client,
    ):
        result = await client.call_tool("book_flight", {"destination": "Oslo"})
    assert result.structured_content is not None
    thread_id = result.structured_content["conversationId"]
    with HistoryStore() as store:
        (run,) = store.runs()
        roles = [m.role for m in store.messages(thread_id)]
    assert run.status == "complete" and run.thread_id == thread_id
    assert run.tool_calls == 1
    assert roles == ["user", "assistant", "tool", "assistant"]
