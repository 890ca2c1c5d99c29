"""Tools served as MCP prompts (``settings.toolsAsPrompts``), in both protocol eras.

The protocol tests use the official ``mcp.Client`` in-process with the real server object; the
transport tests launch ``metaagent serve`` over stdio and run the server over real HTTP.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anyio
import mcp_types as types
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError

from mcp_export.server.agent_server import AgentServer, load_served_agents
from mcp_export.server.http import HttpAddress
from mcp_export.server.prompts import ROLE_META
from tests.fakes._script import text
from tests.fakes.mcp_clients import book_tool, serve_params, write_agent
from tests.fakes.openai_server import FakeOpenAIServer

pytestmark = pytest.mark.anyio

MODES = pytest.mark.parametrize("mode", ["legacy", "auto"])
ON = {"toolsAsPrompts": True}
SYSTEM = "You book trips for Meta Travel. Answer in one sentence."

TYPED_PARAMETERS: dict[str, Any] = {
    "type": "object",
    "properties": {
        "destination": {"type": "string", "description": "Where to fly."},
        "passengers": {"type": "integer", "minimum": 1, "default": 1},
        "flexible": {"type": "boolean"},
        "stops": {"type": "array", "items": {"type": "string"}},
        "budget": {"type": "object", "properties": {"max": {"type": "number"}}},
        "cabin": {"enum": ["economy", "business"]},
        "code": {"$ref": "#/$defs/code"},
    },
    "required": ["destination"],
    "$defs": {"code": {"type": "string", "pattern": "^[A-Z]{3}$"}},
}
TYPED_PROMPT = (
    "Fly to {destination} for {passengers}; flexible: {flexible}; stops: {stops}; "
    "budget: {budget.max}; cabin: {cabin}; code: {code}"
)


def _typed_tool(**overrides: Any) -> dict[str, Any]:
    return book_tool(parameters=TYPED_PARAMETERS, prompt=TYPED_PROMPT, **overrides)


def _texts(result: types.GetPromptResult) -> list[str]:
    return [m.content.text for m in result.messages if isinstance(m.content, types.TextContent)]


def _call_text(result: types.CallToolResult) -> str:
    return "".join(b.text for b in result.content if isinstance(b, types.TextContent))


@MODES
async def test_each_tool_is_listed_as_a_prompt_with_its_parameters_as_text_arguments(
    tmp_path: Path, mode: str
) -> None:
    path = write_agent(
        tmp_path / "a.agent.yaml",
        tools=[_typed_tool(title="Book a flight"), book_tool("chat", conversation=True)],
        settings=ON,
    )
    async with (
        AgentServer(load_served_agents([path]), history=False) as served,
        Client(served.server, mode=mode) as client,
    ):
        assert client.server_capabilities.prompts is not None
        prompts = (await client.list_prompts()).prompts
    assert [(p.name, p.title, p.description) for p in prompts] == [
        ("book_flight", "Book a flight", "Books a flight for a traveller."),
        ("chat", "Chat", "Books a flight for a traveller."),
    ]
    arguments = {a.name: a for a in prompts[0].arguments or []}
    assert list(arguments) == list(TYPED_PARAMETERS["properties"])
    assert arguments["destination"].required is True
    assert arguments["destination"].description == "Where to fly."
    assert arguments["passengers"].required is False
    assert arguments["passengers"].description == "Write it as an integer such as 1; default 1"
    assert arguments["stops"].description == 'Write it as a JSON array such as ["<stops>"]'
    assert arguments["budget"].description == 'Write it as a JSON object such as {"max": 1.5}'
    assert arguments["cabin"].description == "One of economy, business"
    assert arguments["code"].description is None  # a string (through $ref): typed as it is
    # conversation_id continues a call's conversation: a prompt has none.
    assert [a.name for a in prompts[1].arguments or []] == ["destination", "passengers"]


@MODES
async def test_the_prompt_is_exactly_what_a_served_call_sends_the_model(
    tmp_path: Path, mode: str
) -> None:
    with FakeOpenAIServer([text("Booked.")]) as model:
        path = write_agent(
            tmp_path / "a.agent.yaml",
            base_url=model.base_url,
            tools=[_typed_tool()],
            system_prompt=SYSTEM,
            settings=ON,
        )
        typed = {
            "destination": "Oslo",
            "passengers": 2,
            "flexible": True,
            "stops": ["CPH", "ARN"],
            "budget": {"max": 450.5},
            "cabin": "business",
            "code": "OSL",
        }
        as_text = {
            "destination": "Oslo",
            "passengers": "2",
            "flexible": "true",
            "stops": '["CPH", "ARN"]',
            "budget": '{"max": 450.5}',
            "cabin": "business",
            "code": "OSL",
        }
        async with (
            AgentServer(load_served_agents([path]), history=False) as served,
            Client(served.server, mode=mode) as client,
        ):
            called = await client.call_tool("book_flight", typed)
            prompt = await client.get_prompt("book_flight", as_text)
        (sent,) = model.bodies
    assert not called.is_error
    assert [(m["role"], m["content"]) for m in sent["messages"]] == [
        ("system", SYSTEM),
        ("user", _texts(prompt)[1]),
    ]
    assert [m.role for m in prompt.messages] == ["user", "user"]
    assert _texts(prompt)[0] == SYSTEM
    assert prompt.messages[0].content.meta == {ROLE_META: "system"}
    assert prompt.messages[1].content.meta is None
    assert _texts(prompt)[1] == (
        'Fly to Oslo for 2; flexible: true; stops: ["CPH", "ARN"]; budget: 450.5; '
        "cabin: business; code: OSL"
    )
    assert prompt.description == "Books a flight for a traveller."


@MODES
async def test_defaults_fill_the_prompt_and_no_system_prompt_means_one_message(
    tmp_path: Path, mode: str
) -> None:
    path = write_agent(tmp_path / "a.agent.yaml", settings=ON)
    async with (
        AgentServer(load_served_agents([path]), history=False) as served,
        Client(served.server, mode=mode) as client,
    ):
        prompt = await client.get_prompt("book_flight", {"destination": "Oslo"})
    assert _texts(prompt) == ["Book a flight to Oslo for 1 passenger(s)."]


@MODES
async def test_bad_arguments_get_the_message_a_tool_call_gets(tmp_path: Path, mode: str) -> None:
    path = write_agent(tmp_path / "a.agent.yaml", tools=[_typed_tool()], settings=ON)
    async with (
        AgentServer(load_served_agents([path]), history=False) as served,
        Client(served.server, mode=mode) as client,
    ):
        called = await client.call_tool("book_flight", {"passengers": 0, "code": "oslo"})
        with pytest.raises(MCPError) as refused:
            await client.get_prompt("book_flight", {"passengers": "0", "code": "oslo"})
    assert called.is_error
    assert refused.value.error.code == types.INVALID_PARAMS
    assert refused.value.error.message == _call_text(called)
    assert refused.value.error.message.splitlines() == [
        "Invalid arguments for book_flight:",
        'code: "oslo" does not match the pattern "^[A-Z]{3}$"',
        "destination: required argument is missing",
        "passengers: 0 is less than the minimum of 1",
    ]


@MODES
async def test_a_value_that_is_not_json_says_what_to_send(tmp_path: Path, mode: str) -> None:
    path = write_agent(tmp_path / "a.agent.yaml", tools=[_typed_tool()], settings=ON)
    async with (
        AgentServer(load_served_agents([path]), history=False) as served,
        Client(served.server, mode=mode) as client,
    ):
        with pytest.raises(MCPError) as refused:
            await client.get_prompt(
                "book_flight",
                {"destination": "Oslo", "passengers": "two", "stops": "CPH, ARN", "flexible": "1"},
            )
    assert refused.value.error.code == types.INVALID_PARAMS
    assert refused.value.error.message.splitlines() == [
        "Invalid arguments for book_flight:",
        "flexible: expected boolean, got integer 1",
        'passengers: expected an integer such as 1, got the text "two" (prompt arguments '
        "arrive as text: write this value as JSON)",
        'stops: expected a JSON array such as ["<stops>"], got the text "CPH, ARN" (prompt '
        "arguments arrive as text: write this value as JSON)",
    ]


async def test_a_conversation_id_given_to_a_prompt_is_refused_with_why(tmp_path: Path) -> None:
    path = write_agent(tmp_path / "a.agent.yaml", tools=[book_tool(conversation=True)], settings=ON)
    async with (
        AgentServer(load_served_agents([path]), history=False) as served,
        Client(served.server) as client,
    ):
        with pytest.raises(MCPError, match="conversation_id: a prompt has no conversation"):
            await client.get_prompt("book_flight", {"destination": "Oslo", "conversation_id": "x"})


@MODES
async def test_an_unknown_prompt_is_refused_by_name(tmp_path: Path, mode: str) -> None:
    path = write_agent(tmp_path / "a.agent.yaml", settings=ON)
    async with (
        AgentServer(load_served_agents([path]), history=False) as served,
        Client(served.server, mode=mode) as client,
    ):
        with pytest.raises(MCPError, match="Unknown prompt: nope"):
            await client.get_prompt("nope", {})


@MODES
async def test_an_agent_without_the_setting_offers_no_prompts(tmp_path: Path, mode: str) -> None:
    path = write_agent(tmp_path / "a.agent.yaml")
    async with (
        AgentServer(load_served_agents([path]), history=False) as served,
        Client(served.server, mode=mode) as client,
    ):
        assert client.server_capabilities.prompts is None
        with pytest.raises(MCPError) as refused:
            await client.list_prompts()
    assert refused.value.error.code == types.METHOD_NOT_FOUND


@MODES
async def test_only_agents_with_the_setting_list_prompts_under_prefixed_names(
    tmp_path: Path, mode: str
) -> None:
    on = write_agent(tmp_path / "on.agent.yaml", name="Travel Desk", settings=ON)
    off = write_agent(tmp_path / "off.agent.yaml", name="Hotel Desk")
    async with (
        AgentServer(load_served_agents([on, off]), prefix=True, history=False) as served,
        Client(served.server, mode=mode) as client,
    ):
        prompts = (await client.list_prompts()).prompts
        with pytest.raises(MCPError, match="Unknown prompt"):
            await client.get_prompt("hotel-desk__book_flight", {"destination": "Oslo"})
        got = await client.get_prompt("travel-desk__book_flight", {"destination": "Oslo"})
    assert [p.name for p in prompts] == ["travel-desk__book_flight"]
    assert _texts(got) == ["Book a flight to Oslo for 1 passenger(s)."]


@MODES
async def test_the_command_serves_prompts_over_stdio(tmp_path: Path, mode: str) -> None:
    path = write_agent(tmp_path / "a.agent.yaml", system_prompt=SYSTEM, settings=ON)
    with anyio.fail_after(60):
        async with Client(serve_params(str(path), "--no-history"), mode=mode) as client:
            (prompt,) = (await client.list_prompts()).prompts
            got = await client.get_prompt("book_flight", {"destination": "Oslo"})
    assert prompt.name == "book_flight"
    assert _texts(got) == [SYSTEM, "Book a flight to Oslo for 1 passenger(s)."]


async def _serve_http(served: AgentServer, group: Any) -> str:
    ready = anyio.Event()
    url: list[str] = []

    def on_ready(endpoint: str) -> None:
        url.append(endpoint)
        ready.set()

    group.start_soon(
        lambda: served.run_http(HttpAddress("127.0.0.1", 0), token=None, on_ready=on_ready)
    )
    with anyio.fail_after(10):
        await ready.wait()
    return url[0]


@MODES
async def test_prompts_are_served_over_http(tmp_path: Path, mode: str) -> None:
    path = write_agent(tmp_path / "a.agent.yaml", system_prompt=SYSTEM, settings=ON)
    async with (
        AgentServer(load_served_agents([path]), history=False) as served,
        anyio.create_task_group() as group,
    ):
        url = await _serve_http(served, group)
        with anyio.fail_after(30):
            async with Client(streamable_http_client(url), mode=mode) as client:
                (prompt,) = (await client.list_prompts()).prompts
                got = await client.get_prompt("book_flight", {"destination": "Oslo"})
        group.cancel_scope.cancel()
    assert prompt.name == "book_flight"
    assert _texts(got) == [SYSTEM, "Book a flight to Oslo for 1 passenger(s)."]
