"""Typed tools served: the model is made to answer in the tool's outputSchema, checked, repaired
once, and the caller receives the object.

The models are the real providers talking to the fake model servers (real HTTP on loopback);
inner tools come from the real ``mcp-server-time`` over stdio. The caller is the official
``mcp.Client`` in both protocol eras, which itself validates ``structuredContent`` against the
``outputSchema`` it listed (a result that did not fit would raise in ``call_tool``).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import mcp_types as types
import pytest
import yaml
from mcp import Client

from mcp_export.server.agent_server import AgentServer, load_served_agents
from mcp_export.server.typed_result import CONVERSATION_META, TRACE_META
from tests.fakes._script import Reply, RequestBody, text, tool_calls
from tests.fakes.anthropic_server import FakeAnthropicServer
from tests.fakes.mcp_clients import book_tool, time_server, write_agent
from tests.fakes.openai_server import FakeOpenAIServer

pytestmark = pytest.mark.anyio

MODES = pytest.mark.parametrize("mode", ["legacy", "auto"])

FLIGHTS: dict[str, Any] = {
    "type": "object",
    "properties": {
        "cheapest": {
            "type": "object",
            "properties": {
                "flight": {"type": "string"},
                "price": {"type": "number", "minimum": 0},
            },
            "required": ["flight", "price"],
        },
        "count": {"type": "integer", "minimum": 0},
    },
    "required": ["cheapest", "count"],
}
GOOD = {"cheapest": {"flight": "AF123", "price": 249.5}, "count": 3}
WRONG = {"cheapest": {"flight": "AF123", "price": -1}}
TIME_CALL = ("call_1", "t__get_current_time", {"timezone": "UTC"})


def _text(result: types.CallToolResult) -> str:
    return "".join(b.text for b in result.content if isinstance(b, types.TextContent))


def _served(path: Path) -> AgentServer:
    return AgentServer(load_served_agents([path]), history=False)


def _typed_agent(tmp_path: Path, base_url: str, **options: Any) -> Path:
    tool = book_tool(outputSchema=FLIGHTS, **options.pop("tool", {}))
    return write_agent(tmp_path / "a.agent.yaml", base_url=base_url, tools=[tool], **options)


def _kind_agent(tmp_path: Path, kind: str, base_url: str, **tool: Any) -> Path:
    """A typed agent on provider ``kind`` (``llamacpp``, ``anthropic``…) at ``base_url``."""
    url_key = {"anthropic": "ANTHROPIC_BASE_URL"}.get(kind, f"{kind.upper()}_BASE_URL")
    key_key = {"anthropic": "ANTHROPIC_API_KEY"}.get(kind, f"{kind.upper()}_API_KEY")
    data = {
        "metadata": {"name": "Typed", "tools": [book_tool(outputSchema=FLIGHTS, **tool)]},
        "settings": {"model": f"{kind}:fake-model"},
        "providers": {kind: {url_key: base_url, key_key: "sk-test"}},
    }
    path = tmp_path / "a.agent.yaml"
    path.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
    return path


@MODES
async def test_tools_list_declares_the_tools_own_output_schema(tmp_path: Path, mode: str) -> None:
    with FakeOpenAIServer([]) as model:
        path = _typed_agent(tmp_path, model.base_url)
        async with _served(path) as served, Client(served.server, mode=mode) as client:
            listed = await client.list_tools()
    (tool,) = listed.tools
    assert tool.output_schema == FLIGHTS


@MODES
async def test_a_typed_answer_is_the_object_its_json_and_the_trace_in_meta(
    tmp_path: Path, mode: str
) -> None:
    with FakeOpenAIServer([text(json.dumps(GOOD), chunks=4, usage=(40, 9))]) as model:
        path = _typed_agent(tmp_path, model.base_url)
        async with _served(path) as served, Client(served.server, mode=mode) as client:
            await client.list_tools()
            result = await client.call_tool("book_flight", {"destination": "Oslo"})
        body = model.bodies[0]
    assert not result.is_error, _text(result)
    assert result.structured_content == GOOD
    assert json.loads(_text(result)) == GOOD
    assert result.meta is not None
    trace = result.meta[TRACE_META]
    assert trace["usage"] == {"inputTokens": 40, "outputTokens": 9}
    assert trace["toolCalls"] == []
    assert trace["turns"] == 1
    assert trace["output"] == {"method": "response_format", "repaired": False}
    assert "answer" not in trace
    # OpenAI Structured Outputs, on the wire (platform.openai.com/docs/guides/structured-outputs).
    assert body["response_format"] == {
        "type": "json_schema",
        "json_schema": {"name": "book_flight", "schema": FLIGHTS},
    }


@MODES
async def test_a_wrong_answer_is_repaired_once_with_the_schema_messages(
    tmp_path: Path, mode: str
) -> None:
    replies = [text(json.dumps(WRONG)), text(json.dumps(GOOD))]
    with FakeOpenAIServer(replies) as model:
        path = _typed_agent(tmp_path, model.base_url)
        async with _served(path) as served, Client(served.server, mode=mode) as client:
            result = await client.call_tool("book_flight", {"destination": "Oslo"})
        bodies = model.bodies
    assert not result.is_error, _text(result)
    assert result.structured_content == GOOD
    assert result.meta is not None
    assert result.meta[TRACE_META]["output"]["repaired"] is True
    assert result.meta[TRACE_META]["turns"] == 2
    repair = bodies[1]["messages"][-1]
    assert repair["role"] == "user"
    assert "cheapest.price: -1 is less than the minimum of 0" in repair["content"]
    assert "count: required property is missing" in repair["content"]
    assert bodies[1]["messages"][-2] == {"role": "assistant", "content": json.dumps(WRONG)}
    assert bodies[1]["response_format"] == bodies[0]["response_format"]


@MODES
async def test_a_second_wrong_answer_fails_naming_the_json_paths(tmp_path: Path, mode: str) -> None:
    replies = [text(json.dumps(WRONG)), text("not json at all"), text(json.dumps(GOOD))]
    with FakeOpenAIServer(replies) as model:
        path = _typed_agent(tmp_path, model.base_url)
        async with _served(path) as served, Client(served.server, mode=mode) as client:
            first = await client.call_tool("book_flight", {"destination": "Oslo"})
        with FakeOpenAIServer([text(json.dumps(WRONG)), text(json.dumps(WRONG))]) as again:
            path = _typed_agent(tmp_path, again.base_url)
            async with _served(path) as served, Client(served.server, mode=mode) as client:
                second = await client.call_tool("book_flight", {"destination": "Oslo"})
        asked = len(model.bodies) + len(again.bodies)
    assert first.is_error
    assert "the answer is not JSON" in _text(first)
    assert second.is_error
    message = _text(second)
    assert "does not match the tool's outputSchema after one repair turn" in message
    assert "cheapest.price: -1 is less than the minimum of 0" in message
    assert "count: required property is missing" in message
    assert asked == 4  # two per call: the answer and the one repair, never a third


@MODES
async def test_inner_tools_run_before_the_typed_answer(tmp_path: Path, mode: str) -> None:
    def respond(body: RequestBody) -> Reply:
        if body.rounds_since_user == 0:
            return tool_calls([TIME_CALL])
        return text(json.dumps(GOOD))

    with FakeOpenAIServer(responder=respond) as model:
        path = _typed_agent(tmp_path, model.base_url, mcp_servers={"t": time_server()})
        async with _served(path) as served, Client(served.server, mode=mode) as client:
            result = await client.call_tool("book_flight", {"destination": "Oslo"})
        bodies = model.bodies
    assert not result.is_error, _text(result)
    assert result.structured_content == GOOD
    assert result.meta is not None
    (call,) = result.meta[TRACE_META]["toolCalls"]
    assert call["name"] == "t__get_current_time"
    # OpenAI takes the format with the tools on every turn: both requests carry both.
    assert all("response_format" in b and "tools" in b for b in bodies)


async def test_a_local_server_answers_tool_turns_free_then_a_format_turn(
    tmp_path: Path,
) -> None:
    """llama.cpp's server turns the schema into a grammar over the whole output, which leaves
    no room for a tool call: tool turns go without it, the answer comes in a format turn."""

    def respond(body: RequestBody) -> Reply:
        if "response_format" in body:
            return text(json.dumps(GOOD))
        if not any(m["role"] == "tool" for m in body["messages"]):
            return tool_calls([TIME_CALL])
        return text("The cheapest is AF123 at 249.5 EUR.")

    with FakeOpenAIServer(responder=respond) as model:
        path = _kind_agent(tmp_path, "llamacpp", model.base_url)
        data = yaml.safe_load(path.read_text())
        data["mcpServers"] = {"t": time_server()}
        path.write_text(yaml.safe_dump(data), encoding="utf-8")
        async with _served(path) as served, Client(served.server) as client:
            result = await client.call_tool("book_flight", {"destination": "Oslo"})
        bodies = model.bodies
    assert not result.is_error, _text(result)
    assert result.structured_content == GOOD
    assert ["response_format" in b for b in bodies] == [False, False, True]
    # The one form both llama.cpp servers read (llama-cpp-python ignores OpenAI's json_schema).
    assert bodies[2]["response_format"] == {"type": "json_object", "schema": FLIGHTS}
    assert bodies[2]["tool_choice"] == "none"


async def test_anthropic_answers_through_a_forced_final_tool(tmp_path: Path) -> None:
    replies = [
        tool_calls([("toolu_1", "final_answer", WRONG)]),
        tool_calls([("toolu_2", "final_answer", GOOD)]),
    ]
    with FakeAnthropicServer(replies) as model:
        path = _kind_agent(tmp_path, "anthropic", model.base_url)
        async with _served(path) as served, Client(served.server) as client:
            result = await client.call_tool("book_flight", {"destination": "Oslo"})
        bodies = model.bodies
    assert not result.is_error, _text(result)
    assert result.structured_content == GOOD
    # Anthropic tool use: the schema is a tool's input_schema, and a tool call is forced.
    final = [t for t in bodies[0]["tools"] if t["name"] == "final_answer"]
    assert final[0]["input_schema"] == FLIGHTS
    assert bodies[0]["tool_choice"] == {"type": "any"}
    # The repair is the final tool's error result, and the repair turn names the tool.
    last = bodies[1]["messages"][-1]["content"][0]
    assert last["type"] == "tool_result" and last["is_error"] is True
    assert bodies[1]["tool_choice"] == {"type": "tool", "name": "final_answer"}
    assert "response_format" not in bodies[0] and "output_config" not in bodies[0]


@MODES
async def test_a_typed_conversation_tool_keeps_its_id_in_meta(tmp_path: Path, mode: str) -> None:
    with FakeOpenAIServer([text(json.dumps(GOOD))]) as model:
        path = _typed_agent(tmp_path, model.base_url, tool={"conversation": True})
        agents = load_served_agents([path])
        served = AgentServer(agents, history=str(tmp_path / "h.db"))
        async with served, Client(served.server, mode=mode) as client:
            result = await client.call_tool("book_flight", {"destination": "Oslo"})
    assert not result.is_error, _text(result)
    assert result.structured_content == GOOD
    assert result.meta is not None
    conversation = result.meta[CONVERSATION_META]
    assert isinstance(conversation, str) and conversation
    assert result.meta[TRACE_META]["conversationId"] == conversation


async def test_anthropic_runs_inner_tools_before_the_final_tool(tmp_path: Path) -> None:
    def respond(body: RequestBody) -> Reply:
        if not body.tool_results:
            return tool_calls([("toolu_1", "t__get_current_time", {"timezone": "UTC"})])
        return tool_calls([("toolu_2", "final_answer", GOOD)])

    with FakeAnthropicServer(responder=respond) as model:
        path = _kind_agent(tmp_path, "anthropic", model.base_url)
        data = yaml.safe_load(path.read_text())
        data["mcpServers"] = {"t": time_server()}
        path.write_text(yaml.safe_dump(data), encoding="utf-8")
        async with _served(path) as served, Client(served.server) as client:
            result = await client.call_tool("book_flight", {"destination": "Oslo"})
        bodies = model.bodies
    assert not result.is_error, _text(result)
    assert result.structured_content == GOOD
    assert result.meta is not None
    (call,) = result.meta[TRACE_META]["toolCalls"]
    assert call["name"] == "t__get_current_time"
    offered = [t["name"] for t in bodies[0]["tools"]]
    assert "t__get_current_time" in offered and "final_answer" in offered
