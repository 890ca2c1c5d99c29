"""The served server's surface: identity, tools/list, annotations, several agents, name clashes,
the capabilities it declares on each transport, and several instances sharing a state key.

Every protocol test runs with the official ``mcp.Client`` in both eras: ``legacy`` (2025-11-25,
initialize handshake) and ``auto`` (2026-07-28), connected in-process to the real server object.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anyio
import mcp_types as types
import pytest
from mcp import Client
from mcp.client._transport import Transport
from mcp.client.stdio import StdioServerParameters
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError

from mcp_export.errors import ConfigurationError
from mcp_export.server.agent_server import AgentServer, load_served_agents
from mcp_export.server.request_state import STATE_KEY_VARIABLE
from mcp_export.server.tools import OUTPUT_SCHEMA, ToolNameClash, derive_annotations
from mcp_export.toolbox.agent_toolbox import ToolSpec
from schema_types.agent import Agent
from tests.fakes._script import text
from tests.fakes.http_serving import served_over_http
from tests.fakes.mcp_clients import (
    ScriptedSampling,
    book_tool,
    sampled_text,
    serve_params,
    time_server,
    write_agent,
)
from tests.fakes.openai_server import FakeOpenAIServer

pytestmark = pytest.mark.anyio

MODES = pytest.mark.parametrize("mode", ["legacy", "auto"])


def _dump(tool: Any) -> dict[str, Any]:
    data: dict[str, Any] = tool.model_dump(by_alias=True, exclude_none=True, mode="json")
    return data


@MODES
async def test_server_info_and_instructions_come_from_the_agent(tmp_path: Path, mode: str) -> None:
    path = write_agent(tmp_path / "a.agent.yaml", name="Travel Desk", version="2.3.4")
    async with (
        AgentServer(load_served_agents([path])) as served,
        Client(served.server, mode=mode) as client,
    ):
        assert client.server_info is not None
        assert client.server_info.name == "Travel Desk"
        assert client.server_info.version == "2.3.4"
        if mode == "legacy":
            assert client.session.instructions == "Plans and books trips."


@MODES
async def test_tools_list_serves_the_schema_exactly_as_authored(tmp_path: Path, mode: str) -> None:
    parameters = {
        "type": "object",
        "title": "Booking",
        "properties": {
            "destination": {"type": "string", "minLength": 2, "x-custom": {"keep": True}},
            "when": {"type": "string", "format": "date", "examples": ["2026-03-01"]},
            "passengers": {
                "type": "array",
                "items": {
                    "type": "object",
                    "properties": {"age": {"type": "integer", "minimum": 0}},
                    "required": ["age"],
                },
            },
        },
        "required": ["destination"],
        "additionalProperties": False,
    }
    tool = book_tool(parameters=parameters, title="Book a flight")
    path = write_agent(tmp_path / "a.agent.yaml", tools=[tool])
    async with (
        AgentServer(load_served_agents([path])) as served,
        Client(served.server, mode=mode) as client,
    ):
        listed = (await client.list_tools()).tools
    assert len(listed) == 1
    data = _dump(listed[0])
    assert data["name"] == "book_flight"
    assert data["title"] == "Book a flight"
    assert data["description"] == "Books a flight for a traveller."
    assert data["inputSchema"] == parameters
    assert data["outputSchema"] == OUTPUT_SCHEMA


@MODES
async def test_a_tool_without_title_gets_one_from_its_name(tmp_path: Path, mode: str) -> None:
    path = write_agent(tmp_path / "a.agent.yaml", tools=[book_tool("find_cheap_hotels")])
    async with (
        AgentServer(load_served_agents([path])) as served,
        Client(served.server, mode=mode) as client,
    ):
        (tool,) = (await client.list_tools()).tools
    assert tool.title == "Find cheap hotels"


@MODES
async def test_authored_annotations_are_served_as_written(tmp_path: Path, mode: str) -> None:
    annotations = {"readOnlyHint": False, "destructiveHint": True, "openWorldHint": True}
    tool = book_tool(annotations=annotations)
    path = write_agent(tmp_path / "a.agent.yaml", tools=[tool], mcp_servers={"t": time_server()})
    async with (
        AgentServer(load_served_agents([path])) as served,
        Client(served.server, mode=mode) as client,
    ):
        (listed,) = (await client.list_tools()).tools
    assert _dump(listed)["annotations"] == annotations


@MODES
async def test_an_agent_without_usable_inner_tools_is_read_only(tmp_path: Path, mode: str) -> None:
    # toolPermission: always hides every inner tool: a call only talks to the model.
    path = write_agent(
        tmp_path / "a.agent.yaml", mcp_servers={"t": time_server()}, tool_permission="always"
    )
    async with (
        AgentServer(load_served_agents([path])) as served,
        Client(served.server, mode=mode) as client,
    ):
        (listed,) = (await client.list_tools()).tools
    assert _dump(listed)["annotations"] == {
        "readOnlyHint": True,
        "destructiveHint": False,
        "openWorldHint": False,
    }


@MODES
async def test_a_conversation_tool_gets_an_optional_conversation_id(
    tmp_path: Path, mode: str
) -> None:
    tool = book_tool(conversation=True)
    path = write_agent(tmp_path / "a.agent.yaml", tools=[tool])
    async with (
        AgentServer(load_served_agents([path])) as served,
        Client(served.server, mode=mode) as client,
    ):
        (listed,) = (await client.list_tools()).tools
    schema = listed.input_schema
    assert schema["properties"]["conversation_id"]["type"] == "string"
    assert schema["required"] == ["destination"]  # still optional
    assert "conversationId" in (listed.output_schema or {})["properties"]
    # The authored parameters are untouched.
    assert "conversation_id" not in tool["parameters"]["properties"]


def _type_arrays(schema: Any, path: str = "") -> list[str]:
    """Where a schema uses a ``type`` array (``["integer", "null"]``)."""
    found: list[str] = []
    if isinstance(schema, dict):
        if isinstance(schema.get("type"), list):
            found.append(path or "/")
        for key, value in schema.items():
            found += _type_arrays(value, f"{path}/{key}")
    elif isinstance(schema, list):
        for index, value in enumerate(schema):
            found += _type_arrays(value, f"{path}/{index}")
    return found


@MODES
async def test_the_output_schema_says_a_count_or_unknown_in_the_form_strict_clients_accept(
    tmp_path: Path, mode: str
) -> None:
    # The MCP Inspector's --strict warns on every type array (clients mapping schemas onto a
    # single-type dialect may drop it) and suggests anyOf of the single types, which says the
    # same; the SDK client still checks structuredContent against it (test_server_call).
    tools = [book_tool("plain"), book_tool("chat", conversation=True)]
    path = write_agent(tmp_path / "a.agent.yaml", tools=tools)
    async with (
        AgentServer(load_served_agents([path])) as served,
        Client(served.server, mode=mode) as client,
    ):
        listed = (await client.list_tools()).tools
    for tool in listed:
        schema = _dump(tool)["outputSchema"]
        assert _type_arrays(schema) == []
        assert schema["properties"]["usage"]["properties"]["inputTokens"] == {
            "anyOf": [{"type": "integer"}, {"type": "null"}]
        }


@MODES
async def test_plain_and_conversation_tools_keep_their_own_schemas_on_every_listing(
    tmp_path: Path, mode: str
) -> None:
    # Listed entries share what they can (the output schemas, a plain tool's parameters): no
    # listing may change what another tool, or the loaded agent, holds.
    tools = [book_tool("plain"), book_tool("chat", conversation=True), book_tool("other")]
    path = write_agent(tmp_path / "a.agent.yaml", tools=tools)
    agents = load_served_agents([path])
    async with AgentServer(agents) as served, Client(served.server, mode=mode) as client:
        listings = [(await client.list_tools()).tools for _ in range(2)]
    for listed in listings:
        plain, chat, other = (_dump(tool) for tool in listed)
        assert plain["outputSchema"] == other["outputSchema"] == OUTPUT_SCHEMA
        assert "conversationId" in chat["outputSchema"]["properties"]
        assert plain["inputSchema"] == tools[0]["parameters"]
        assert "conversation_id" in chat["inputSchema"]["properties"]
    assert [t.parameters for t in agents[0].agent.tools] == [t["parameters"] for t in tools]


async def test_a_conversation_tool_with_its_own_conversation_id_is_refused(
    tmp_path: Path,
) -> None:
    parameters = {"type": "object", "properties": {"conversation_id": {"type": "string"}}}
    tool = book_tool(conversation=True, parameters=parameters, prompt="hi")
    path = write_agent(tmp_path / "a.agent.yaml", tools=[tool])
    with pytest.raises(Exception, match="rename that parameter"):
        AgentServer(load_served_agents([path]))


@MODES
async def test_several_agents_make_one_server_with_all_tools(tmp_path: Path, mode: str) -> None:
    first = write_agent(tmp_path / "a.agent.yaml", name="Travel Desk", tools=[book_tool("a")])
    second = write_agent(
        tmp_path / "b.agent.yaml",
        name="Weather",
        description="Forecasts.",
        tools=[book_tool("b"), book_tool("c")],
    )
    async with (
        AgentServer(load_served_agents([first, second])) as served,
        Client(served.server, mode=mode) as client,
    ):
        names = [t.name for t in (await client.list_tools()).tools]
        assert client.server_info is not None
        assert client.server_info.name == "Travel Desk + Weather"
    assert names == ["a", "b", "c"]


async def test_a_tool_name_defined_by_two_agents_is_a_startup_error_naming_both(
    tmp_path: Path,
) -> None:
    first = write_agent(tmp_path / "a.agent.yaml", name="One")
    second = write_agent(tmp_path / "b.agent.yaml", name="Two")
    with pytest.raises(ToolNameClash) as caught:
        AgentServer(load_served_agents([first, second]))
    message = str(caught.value)
    assert str(first) in message and str(second) in message
    assert "book_flight" in message and "--prefix" in message


@MODES
async def test_prefix_names_every_tool_after_its_agent(tmp_path: Path, mode: str) -> None:
    first = write_agent(tmp_path / "a.agent.yaml", name="Travel Desk")
    second = write_agent(tmp_path / "b.agent.yaml", name="Hotel Desk!")
    async with (
        AgentServer(load_served_agents([first, second]), prefix=True) as served,
        Client(served.server, mode=mode) as client,
    ):
        names = [t.name for t in (await client.list_tools()).tools]
    assert names == ["travel-desk__book_flight", "hotel-desk__book_flight"]


def _spec(name: str, **annotations: Any) -> ToolSpec:
    return ToolSpec(
        name=f"s__{name}",
        server="s",
        tool=name,
        description="",
        input_schema={"type": "object"},
        annotations=annotations or None,
        permission_required=False,
    )


def _agent(**servers: Any) -> Agent:
    return Agent.model_validate({"settings": {"toolPermission": "never"}, "mcpServers": servers})


def test_derived_annotations_are_only_as_safe_as_the_least_safe_inner_tool() -> None:
    stdio = {"command": "x"}
    agent = _agent(s=stdio)
    read_only = _spec("a", readOnlyHint=True, openWorldHint=False)
    writer = _spec("b", readOnlyHint=False, destructiveHint=False, openWorldHint=False)
    silent = _spec("c")
    assert derive_annotations(agent, [read_only]) == {
        "readOnlyHint": True,
        "destructiveHint": False,
        "openWorldHint": False,
    }
    assert derive_annotations(agent, [read_only, writer]) == {
        "readOnlyHint": False,
        "destructiveHint": False,
        "openWorldHint": False,
    }
    # A tool that says nothing counts as the specification's defaults: destructive, open-world.
    assert derive_annotations(agent, [read_only, silent]) == {
        "readOnlyHint": False,
        "destructiveHint": True,
        "openWorldHint": True,
    }
    # Not started yet: nothing is claimed for stdio tools …
    assert derive_annotations(agent, None) == {}
    # … but an HTTP server is open-world from the file alone.
    remote = _agent(s=stdio, web={"type": "streamable-http", "url": "https://example.com/mcp"})
    assert derive_annotations(remote, None) == {"openWorldHint": True}
    assert derive_annotations(remote, [read_only])["openWorldHint"] is True


@MODES
async def test_annotations_follow_the_inner_tools_once_a_call_has_started_them(
    tmp_path: Path, mode: str
) -> None:
    with FakeOpenAIServer([text("booked")]) as model:
        path = write_agent(
            tmp_path / "a.agent.yaml", base_url=model.base_url, mcp_servers={"t": time_server()}
        )
        async with (
            AgentServer(load_served_agents([path]), history=False) as served,
            Client(served.server, mode=mode) as client,
        ):
            (before,) = (await client.list_tools()).tools
            result = await client.call_tool("book_flight", {"destination": "Oslo"})
            assert not result.is_error
            (after,) = (await client.list_tools()).tools
    assert _dump(before).get("annotations") is None
    # mcp-server-time's tools are read-only and closed-world.
    assert _dump(after)["annotations"] == {
        "readOnlyHint": True,
        "destructiveHint": False,
        "openWorldHint": False,
    }


class _Notices:
    """The server's notifications a client received."""

    def __init__(self) -> None:
        self.methods: list[str] = []
        self.tools_changed = anyio.Event()

    async def __call__(self, message: Any) -> None:
        method = getattr(message, "method", None)
        if isinstance(method, str):
            self.methods.append(method)
            if method == "notifications/tools/list_changed":
                self.tools_changed.set()


async def _declared_and_sent(
    server: StdioServerParameters | Transport, mode: str
) -> tuple[bool, bool]:
    """Whether the server declares tools.listChanged, and whether it announced the change a
    first call makes (the agent's inner tools become known)."""
    notices = _Notices()
    with anyio.fail_after(60):
        async with Client(server, mode=mode, message_handler=notices) as client:
            tools = client.server_capabilities.tools
            declared = bool(tools is not None and tools.list_changed)
            result = await client.call_tool("book_flight", {"destination": "Oslo"})
            assert not result.is_error
            # The notice may travel on another stream than the call's answer: it gets a while.
            with anyio.move_on_after(3):
                await notices.tools_changed.wait()
    return declared, notices.tools_changed.is_set()


def _agent_with_inner_tools(tmp_path: Path, model: FakeOpenAIServer) -> Path:
    """An agent whose inner tools (a time server's) become known at its first call."""
    return write_agent(
        tmp_path / "a.agent.yaml", base_url=model.base_url, mcp_servers={"t": time_server()}
    )


@MODES
async def test_tool_list_changes_are_announced_exactly_when_declared_over_stdio(
    tmp_path: Path, mode: str
) -> None:
    with FakeOpenAIServer([text("booked")]) as model:
        params = serve_params(str(_agent_with_inner_tools(tmp_path, model)), "--no-history")
        declared, sent = await _declared_and_sent(params, mode)
    assert (declared, sent) == ((True, True) if mode == "legacy" else (False, False))


@MODES
async def test_tool_list_changes_are_announced_exactly_when_declared_over_http(
    tmp_path: Path, mode: str
) -> None:
    with FakeOpenAIServer([text("booked")]) as model:
        async with served_over_http(_agent_with_inner_tools(tmp_path, model)) as url:
            declared, sent = await _declared_and_sent(streamable_http_client(url), mode)
    assert (declared, sent) == ((True, True) if mode == "legacy" else (False, False))


SHARED_KEY = "k" * 20 + "shared-state-key-for-tests"
OTHER_KEY = "o" * 20 + "another-state-key-for-tests"


async def _first_round(path: Path) -> tuple[types.InputRequiredResult, types.InputResponses]:
    """A sampling round trip's first answer from one server, and the client's model's reply."""
    async with (
        AgentServer(load_served_agents([path]), history=False) as served,
        Client(served.server, mode="auto", sampling_callback=ScriptedSampling()) as client,
    ):
        first = await client.session.call_tool(
            "book_flight", {"destination": "Oslo"}, allow_input_required=True
        )
    assert isinstance(first, types.InputRequiredResult) and first.input_requests
    return first, {key: sampled_text("Booked on another instance.") for key in first.input_requests}


async def _retry_elsewhere(
    path: Path, first: types.InputRequiredResult, replies: types.InputResponses
) -> types.CallToolResult | MCPError:
    """The retry of that round trip, sent to another server (as a load balancer may): its
    result, or the error it was refused with."""
    async with (
        AgentServer(load_served_agents([path]), history=False) as other,
        Client(other.server, mode="auto", sampling_callback=ScriptedSampling()) as client,
    ):
        try:
            return await client.session.call_tool(
                "book_flight",
                {"destination": "Oslo"},
                input_responses=replies,
                request_state=first.request_state,
            )
        except MCPError as exc:
            return exc


def _keyless(tmp_path: Path) -> Path:
    return write_agent(tmp_path / "a.agent.yaml", api_key=None, system_prompt="You book trips.")


async def test_instances_sharing_the_state_key_continue_each_others_round_trips(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.setenv(STATE_KEY_VARIABLE, SHARED_KEY)
    path = _keyless(tmp_path)
    first, replies = await _first_round(path)
    result = await _retry_elsewhere(path, first, replies)
    assert isinstance(result, types.CallToolResult) and not result.is_error
    assert result.content[0].text == "Booked on another instance."  # type: ignore[union-attr]


async def test_a_key_being_replaced_still_opens_the_states_sealed_under_the_old_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    path = _keyless(tmp_path)
    monkeypatch.setenv(STATE_KEY_VARIABLE, OTHER_KEY)
    first, replies = await _first_round(path)
    monkeypatch.setenv(STATE_KEY_VARIABLE, f"{SHARED_KEY} {OTHER_KEY}")
    result = await _retry_elsewhere(path, first, replies)
    assert isinstance(result, types.CallToolResult) and not result.is_error


@pytest.mark.parametrize("second_key", [OTHER_KEY, None], ids=["other key", "no key"])
async def test_an_instance_with_another_key_refuses_the_state_and_says_why(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
    second_key: str | None,
) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.setenv(STATE_KEY_VARIABLE, SHARED_KEY)
    path = _keyless(tmp_path)
    first, replies = await _first_round(path)
    if second_key is None:
        monkeypatch.delenv(STATE_KEY_VARIABLE)  # a key of its own, made at start-up
    else:
        monkeypatch.setenv(STATE_KEY_VARIABLE, second_key)
    refused = await _retry_elsewhere(path, first, replies)
    assert isinstance(refused, MCPError)
    assert refused.error.code == types.INVALID_PARAMS
    message = refused.error.message
    assert message.startswith("Invalid or expired requestState")
    assert f"every instance behind one address needs the same {STATE_KEY_VARIABLE}" in message
    assert "without requestState to start over" in message
    for key in (SHARED_KEY, OTHER_KEY):
        assert key not in message and key not in caplog.text


@pytest.mark.parametrize(
    ("value", "complaint"),
    [
        ("short-secret", "key 1 has 12 characters; a key needs at least 32"),
        (f"{SHARED_KEY} tiny", "key 2 has 4 characters"),
        (f"{SHARED_KEY} {SHARED_KEY}", "the same key is given twice"),
    ],
)
def test_an_unusable_state_key_stops_the_server_at_start_up_without_showing_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, value: str, complaint: str
) -> None:
    monkeypatch.setenv(STATE_KEY_VARIABLE, value)
    with pytest.raises(ConfigurationError) as refused:
        AgentServer(load_served_agents([write_agent(tmp_path / "a.agent.yaml")]), history=False)
    assert complaint in str(refused.value)
    assert "secrets.token_hex(32)" in str(refused.value) or "twice" in complaint
    assert "short-secret" not in str(refused.value) and SHARED_KEY not in str(refused.value)
