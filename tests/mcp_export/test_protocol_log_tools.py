"""The JSON-RPC messages of the agent's tool servers in a protocol log: the toolbox against the
real ``mcp-server-time`` over stdio, and what a message's summary says."""

from __future__ import annotations

import json

import mcp_types as types
import pytest
from mcp.shared.message import SessionMessage

from mcp_export.protocol_log import ProtocolLog, attach
from mcp_export.toolbox.agent_toolbox import AgentToolbox
from mcp_export.toolbox.message_log import MessageTap
from tests.mcp_export.tool_servers import make_agent, time_server

pytestmark = pytest.mark.anyio


async def test_toolbox_records_handshake_listing_and_call_in_order() -> None:
    log = ProtocolLog()
    agent = make_agent("never", {"time": time_server()})
    async with AgentToolbox(agent, protocol_mode="legacy") as toolbox:
        toolbox.protocol_log = log
        outcome = await toolbox.call("time__get_current_time", {"timezone": "Europe/Oslo"})
        assert not outcome.is_error, outcome.text
    entries = log.entries()
    assert {entry.channel for entry in entries} == {"time"}
    summaries = [(e.direction, e.kind, e.summary) for e in entries]
    assert summaries[:7] == [
        ("sent", "request", "initialize (id 1)"),
        ("received", "response", "initialize result (id 1)"),
        ("sent", "notification", "notifications/initialized"),
        ("sent", "request", "tools/list (id 2)"),
        ("received", "response", "tools/list result (id 2)"),
        ("sent", "request", "tools/call (id 3)"),
        ("received", "response", "tools/call result (id 3)"),
    ]
    call = json.loads(entries[5].text)
    assert call["params"]["name"] == "get_current_time"
    assert call["params"]["arguments"] == {"timezone": "Europe/Oslo"}
    result = json.loads(entries[6].text)
    assert result["id"] == 3 and "Europe/Oslo" in result["result"]["content"][0]["text"]
    assert "get_current_time" in entries[4].text


async def test_a_log_attached_to_a_running_toolbox_records_from_then_on() -> None:
    log = ProtocolLog()
    async with AgentToolbox(make_agent("never", {"time": time_server()})) as toolbox:
        await toolbox.allowed_tools()
        attach(log, toolbox)
        await toolbox.call("time__get_current_time", {"timezone": "UTC"})
        attach(None, toolbox)
        await toolbox.call("time__get_current_time", {"timezone": "UTC"})
    assert [e.summary for e in log.entries()] == ["tools/call (id 3)", "tools/call result (id 3)"]


def test_a_json_rpc_error_names_the_request_it_answers() -> None:
    log = ProtocolLog()
    tap = MessageTap("time")
    tap.log = log
    request = types.JSONRPCRequest(jsonrpc="2.0", id=7, method="tools/call", params={})
    error = types.ErrorData(code=-32602, message="unknown tool")
    tap.sent(SessionMessage(request))
    tap.received(SessionMessage(types.JSONRPCError(jsonrpc="2.0", id=7, error=error)))
    tap.received(ValueError("not JSON"))
    sent, answered, garbage = log.entries()
    assert sent.summary == "tools/call (id 7)"
    assert (answered.kind, answered.summary) == (
        "error",
        "tools/call error -32602: unknown tool (id 7)",
    )
    assert json.loads(answered.text)["error"]["message"] == "unknown tool"
    assert (garbage.kind, garbage.summary) == (
        "error",
        "not JSON-RPC: ValueError: not JSON",
    )


async def test_nothing_is_recorded_without_a_log() -> None:
    log = ProtocolLog()
    async with AgentToolbox(make_agent("never", {"time": time_server()})) as toolbox:
        assert toolbox.protocol_log is None
        assert toolbox.connection("time").protocol_log is None
        await toolbox.call("time__get_current_time", {"timezone": "UTC"})
        attach(log, toolbox)
        assert toolbox.connection("time").protocol_log is log
        attach(None, toolbox)
        await toolbox.call("time__get_current_time", {"timezone": "UTC"})
    assert len(log) == 0
