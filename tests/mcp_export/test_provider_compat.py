"""The OpenAI-compatible provider against what real servers send: the wire transcripts.

Every case of ``tests/fixtures/wire`` (recorded from llama-cpp-python and llama.cpp's
llama-server, documented for Ollama, vLLM, LM Studio, LiteLLM, OpenRouter and Azure OpenAI) is
replayed by ``ReplayServer``, which
answers each request the way that server did and checks the request against the server's rules.
The provider is the real one, built from an agent by ``provider_for_agent``, with the server's
provider kind. Each server's ``loops`` run a whole ``ChatSession`` with the real
``mcp-server-time`` over stdio, to an answer that used the tool.
"""

from __future__ import annotations

import json
import shutil
import sys
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio
import pytest

from mcp_export.errors import ExportError, ProviderError
from mcp_export.providers.base import (
    ChatMessage,
    Completion,
    ModelRequest,
    Provider,
    ProviderNotice,
    TextDelta,
    ToolCallRequest,
    ToolSchema,
)
from mcp_export.providers.factory import provider_for_agent
from mcp_export.session.chat import ChatSession, run_to_result
from mcp_export.toolbox.agent_toolbox import AgentToolbox
from schema_types.agent import Agent
from tests.fakes.wire_replay import (
    FIXTURES,
    Fixture,
    ReplayServer,
    all_fixtures,
    load_fixture,
    server_rules,
)

pytestmark = pytest.mark.anyio

REPO = Path(__file__).resolve().parents[2]
ALL = all_fixtures()
DRIVEN = [f for f in ALL if f.expect is not None]
SERVERS = sorted(p.name for p in FIXTURES.iterdir() if p.is_dir())
LOOPS = [(server, loop) for server in SERVERS for loop in server_rules(server).get("loops", [])]
PASSED_AS_IS = ("temperature", "top_p", "seed", "stop")


def time_server() -> dict[str, Any]:
    """``mcp-server-time`` (the fixtures' tools are its tools), UTC as its local zone."""
    local = Path(sys.executable).parent / "mcp-server-time"
    found = str(local) if local.exists() else shutil.which("mcp-server-time")
    base: dict[str, Any] = (
        {"command": found, "args": ["--local-timezone", "UTC"]}
        if found
        else {
            "command": sys.executable,
            "args": ["-m", "mcp_server_time", "--local-timezone", "UTC"],
        }
    )
    return base | {"serverToolDefaults": {"permissionRequired": False}}


# --- building the provider and the request --------------------------------------------------


def provider_values(
    server: str,
    replay: ReplayServer,
    *,
    stream: bool = True,
    overrides: Mapping[str, str] | None = None,
) -> dict[str, str]:
    """``providers.<kind>`` of an agent that talks to the replay of ``server`` (``{base_url}``
    and ``{origin}`` are the replay's), with the fixture's overrides."""
    settings = {**server_rules(server)["provider"], **(overrides or {})}
    values = {
        name: value.format(base_url=replay.base_url, origin=replay.origin)
        for name, value in settings.items()
    }
    if not stream:
        values["stream"] = "false"
    return values


def agent_for(
    server: str,
    replay: ReplayServer,
    model: str,
    *,
    stream: bool = True,
    overrides: Mapping[str, str] | None = None,
    settings: Mapping[str, Any] | None = None,
    system: str | None = None,
    mcp_servers: Mapping[str, Any] | None = None,
) -> Agent:
    kind = server_rules(server)["kind"]
    data: dict[str, Any] = {
        "metadata": {"name": f"{server} compatibility"},
        "settings": {"model": f"{kind}:{model}", "toolPermission": "tool", **(settings or {})},
        "providers": {kind: provider_values(server, replay, stream=stream, overrides=overrides)},
    }
    if system is not None:
        data["systemPrompt"] = system
    if mcp_servers is not None:
        data["mcpServers"] = dict(mcp_servers)
    return Agent.model_validate(data)


def messages_of(body: Mapping[str, Any]) -> tuple[ChatMessage, ...]:
    """The recorded request's messages as the session keeps them."""
    out: list[ChatMessage] = []
    for message in body["messages"]:
        role = message["role"]
        if role == "assistant" and message.get("tool_calls"):
            calls = tuple(
                ToolCallRequest(
                    call["id"],
                    call["function"]["name"],
                    json.loads(call["function"]["arguments"]),
                )
                for call in message["tool_calls"]
            )
            out.append(ChatMessage("assistant", message.get("content") or "", tool_calls=calls))
        elif role == "tool":
            out.append(
                ChatMessage("tool", message["content"], tool_call_id=message["tool_call_id"])
            )
        else:
            out.append(ChatMessage(role, message["content"]))
    return tuple(out)


def tools_of(body: Mapping[str, Any]) -> tuple[ToolSchema, ...]:
    return tuple(
        ToolSchema(
            tool["function"]["name"],
            tool["function"].get("description", ""),
            tool["function"].get("parameters") or {},
        )
        for tool in body.get("tools") or []
    )


def parameters_of(body: Mapping[str, Any], drive: Mapping[str, Any]) -> dict[str, Any]:
    """The model parameters of the recorded request, with the fixture's ``drive`` overrides
    (a null removes one)."""
    parameters: dict[str, Any] = {k: body[k] for k in PASSED_AS_IS if k in body}
    for key in ("max_tokens", "max_completion_tokens"):
        if key in body:
            parameters["max_tokens"] = body[key]
    choice = body.get("tool_choice")
    if isinstance(choice, dict):
        parameters["tool_choice"] = choice["function"]["name"]
    elif isinstance(choice, str):
        parameters["tool_choice"] = choice
    for key, value in (drive.get("parameters") or {}).items():
        if value is None:
            parameters.pop(key, None)
        else:
            parameters[key] = value
    return parameters


def request_of(fixture: Fixture, model: str) -> ModelRequest:
    body = fixture.exchanges[0].body
    return ModelRequest(
        model, messages_of(body), tools_of(body), parameters_of(body, fixture.drive)
    )


@dataclass
class Outcome:
    deltas: list[str] = field(default_factory=lambda: list[str]())
    notices: list[str] = field(default_factory=lambda: list[str]())
    completion: Completion | None = None
    error: ExportError | None = None


async def drive(provider: Provider, request: ModelRequest) -> Outcome:
    outcome = Outcome()
    with anyio.fail_after(30):
        try:
            async for event in provider.stream(request):
                if isinstance(event, TextDelta):
                    outcome.deltas.append(event.text)
                elif isinstance(event, ProviderNotice):
                    outcome.notices.append(event.text)
                elif isinstance(event, Completion):
                    outcome.completion = event
        except ExportError as exc:
            outcome.error = exc
    return outcome


def expectation(fixture: Fixture) -> dict[str, Any]:
    """The fixture's ``expect``, with the reading of the case it names in ``from``."""
    expect = dict(fixture.expect or {})
    source = expect.pop("from", None)
    if source is not None:
        other = load_fixture(fixture.path.with_name(f"{source}.json"))
        expect = {**(other.expect or {}), **expect}
    return expect


def assert_wire_ok(replay: ReplayServer, fixture_id: str) -> None:
    assert not replay.misses, (
        f"{fixture_id}: the provider sent a request no recording of {replay.name} answers "
        f"(what the server would do with it is unknown):\n{replay.report()}"
    )
    assert not replay.violations, (
        f"{fixture_id}: requests break what {replay.name} accepts:\n{replay.report()}"
    )


# --- the fixtures themselves ----------------------------------------------------------------


@pytest.mark.parametrize("fixture", ALL, ids=[f.id for f in ALL])
def test_every_fixture_says_where_it_came_from_and_holds_no_key(fixture: Fixture) -> None:
    source = fixture.source
    assert source.get("kind") in ("recorded", "documented")
    assert source.get("date")
    if source["kind"] == "recorded":
        for key in ("server", "model", "command", "recorder"):
            assert source.get(key), f"{fixture.id}: a recording names its {key}"
    else:
        assert source.get("built_from"), f"{fixture.id}: a documented fixture cites its sources"
        assert source.get("inferred"), f"{fixture.id}: a documented fixture says what it infers"
    for exchange in fixture.exchanges:
        headers = {k.lower(): v for k, v in exchange.request.get("headers", {}).items()}
        assert headers.get("authorization") in (None, "Bearer <redacted>")
        assert headers.get("api-key") in (None, "<redacted>")
        assert isinstance(exchange.response["status"], int)
        assert exchange.response["headers"].get("framing") in ("chunked", "content-length")


def test_every_server_has_the_cases_the_issue_asks_for() -> None:
    for server in SERVERS:
        cases = {f.case for f in ALL if f.server == server}
        kinds = {
            "plain answer": any(c.startswith("plain_answer") for c in cases),
            "tool call": any(c.startswith("tool_call") for c in cases),
            "error": any(
                c.startswith(("error", "follow_up_content_null", "context_overflow")) for c in cases
            ),
        }
        assert all(kinds.values()), f"{server} lacks {[k for k, ok in kinds.items() if not ok]}"
        meta = server_rules(server)
        assert meta["checked"] in ("recorded", "documented")
        if meta["checked"] == "documented":  # the recorded model never made two calls (README)
            assert "parallel_tool_calls_streamed" in cases, server


# --- the provider against each case -----------------------------------------------------------


@pytest.mark.parametrize("fixture", DRIVEN, ids=[f.id for f in DRIVEN])
async def test_the_provider_reads_what_the_server_sent(fixture: Fixture) -> None:
    expect = expectation(fixture)
    body = fixture.exchanges[0].body
    model = str(fixture.drive.get("model", body.get("model")))
    stream = bool(fixture.drive.get("stream", body.get("stream") is True))
    with ReplayServer.for_server(fixture.server) as replay:
        agent = agent_for(
            fixture.server, replay, model, stream=stream, overrides=fixture.drive.get("provider")
        )
        provider, model_name = provider_for_agent(agent)
        try:
            outcome = await drive(provider, request_of(fixture, model_name))
        finally:
            await provider.aclose()
        assert_wire_ok(replay, fixture.id)
        if "requests" in expect:
            sent = [
                {"stream": s.features["stream"], "tool_choice": s.features["tool_choice"]}
                for s in replay.chat_requests
            ]
            assert sent == expect["requests"], f"{fixture.id}:\n{replay.report()}"
        if "error" in expect:
            assert outcome.error is not None, (
                f"{fixture.id}: expected a failure, got {outcome.completion!r}"
            )
            assert isinstance(outcome.error, ProviderError)
            for text in expect["error"].get("contains", []):
                wanted = text.format(host_port=replay.host_port)
                assert wanted in str(outcome.error), (
                    f"{fixture.id}: {wanted!r} not in the message: {outcome.error}"
                )
            return
        assert outcome.error is None, f"{fixture.id}: {outcome.error!r}\n{replay.report()}"
        completion = outcome.completion
        assert completion is not None
        message = completion.message
        assert message.content == expect["text"]
        assert "".join(outcome.deltas) == expect["text"]
        got_calls = [
            (c.name, c.arguments if c.arguments_error is None else None) for c in message.tool_calls
        ]
        wanted_calls = [(c["name"], c.get("arguments")) for c in expect["tool_calls"]]
        assert got_calls == wanted_calls
        for call, wanted in zip(message.tool_calls, expect["tool_calls"], strict=True):
            assert (call.arguments_error is not None) == bool(wanted.get("arguments_error"))
            assert call.id
        if "stop_reason" in expect:
            assert completion.stop_reason == expect["stop_reason"]
        usage = expect["usage"]
        wanted_usage = (None, None) if usage is None else tuple(usage)
        assert (completion.usage.input_tokens, completion.usage.output_tokens) == wanted_usage
        if expect.get("notice"):
            assert outcome.notices, f"{fixture.id}: no notice says how the endpoint is used"


# --- whole tool loops ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("server", "loop"), LOOPS, ids=[f"{server}/{loop['name']}" for server, loop in LOOPS]
)
async def test_a_tool_loop_reaches_an_answer_that_used_the_tool(
    server: str, loop: dict[str, Any]
) -> None:
    expect = loop["expect"]
    with ReplayServer.for_server(server) as replay:
        agent = agent_for(
            server,
            replay,
            loop["model"],
            settings=loop.get("settings"),
            system=loop["system"],
            mcp_servers={"time": time_server()},
        )
        provider, model = provider_for_agent(agent)
        toolbox = AgentToolbox(agent, base_dir=REPO)
        try:
            session = ChatSession(agent, provider=provider, model=model, toolbox=toolbox)
            with anyio.fail_after(90):
                result = await run_to_result(session, loop["user"])
        finally:
            with anyio.fail_after(20):
                await toolbox.aclose()
                await provider.aclose()
        trace = replay.report()
        assert_wire_ok(replay, f"{server}/{loop['name']}")
        assert result.error is None, f"{server}: {result.error}\n{trace}"
        assert result.tool_calls, f"{server}: the answer used no tool\n{trace}"
        first = result.tool_calls[0]
        assert first.name == expect["first_tool"]
        assert not first.is_error, f"{server}: {first.result}"
        assert '"timezone"' in first.result  # mcp-server-time's own answer
        if "tools_called" in expect:
            assert len(result.tool_calls) == expect["tools_called"]
        if "answer" in expect:
            assert result.answer == expect["answer"]
        assert result.answer.strip()
