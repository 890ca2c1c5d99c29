"""A shared HTTP server says no per caller: limits per OAuth principal (or token holder) answered
429 with ``Retry-After``, and scopes per tool, against the real authorization server
(``tests.fakes.oauth_server``) and counted in ``/metrics``."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import anyio
import httpx2
import mcp_types as types
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client
from mcp.shared.exceptions import MCPError

from mcp_export.server.limits import RATE_LIMITED, Limits
from mcp_export.server.oauth import OAuthSettings
from mcp_export.server.scopes import ToolScopes
from tests.fakes._script import text
from tests.fakes.http_serving import served_over_http
from tests.fakes.mcp_clients import book_tool, write_agent
from tests.fakes.oauth_server import JWT_CLIENT, SCOPE, SECOND_CLIENT, AuthorizationServer
from tests.fakes.openai_server import FakeOpenAIServer

pytestmark = pytest.mark.anyio

TOKEN = "limits-test-token-0123456789"
CALL = {
    "jsonrpc": "2.0",
    "id": 7,
    "method": "tools/call",
    "params": {"name": "book_flight", "arguments": {"destination": "Oslo"}},
}
HEADERS = {
    "Content-Type": "application/json",
    "Accept": "application/json, text/event-stream",
    "MCP-Protocol-Version": "2025-11-25",
}


@pytest.fixture(scope="module")
def issuer() -> Iterator[AuthorizationServer]:
    with AuthorizationServer() as server:
        yield server


def _oauth(issuer: AuthorizationServer) -> OAuthSettings:
    return OAuthSettings(issuer=issuer.issuer, scopes=(SCOPE,))


def _client(url: str, token: str, mode: str = "auto") -> Client:
    headers = {"Authorization": f"Bearer {token}"}
    transport = streamable_http_client(url, http_client=create_mcp_http_client(headers=headers))
    return Client(transport, mode=mode)


async def _raw_call(url: str, token: str) -> httpx2.Response:
    async with httpx2.AsyncClient(timeout=10) as http:
        return await http.post(
            url, json=CALL, headers=HEADERS | {"Authorization": f"Bearer {token}"}
        )


async def _book(client: Client) -> str:
    result = await client.call_tool("book_flight", {"destination": "Oslo"})
    content = result.content[0]
    assert isinstance(content, types.TextContent)
    return content.text


async def _refusals(url: str) -> dict[str, float]:
    async with httpx2.AsyncClient(timeout=10) as http:
        exposition = (await http.get(url.removesuffix("/mcp") + "/metrics")).text
    found = re.findall(
        r'^metaagent_caller_refusals_total\{reason="(\w+)"\} (\S+)$', exposition, re.M
    )
    return {reason: float(value) for reason, value in found}


async def test_a_caller_over_its_rate_gets_429_with_retry_after_and_recovers_after_it(
    tmp_path: Path, issuer: AuthorizationServer
) -> None:
    with FakeOpenAIServer([text(f"Booked {n}.") for n in range(6)]) as model:
        path = write_agent(tmp_path / "a.agent.yaml", base_url=model.base_url)
        limits = Limits(calls=2, period=3.0)
        async with served_over_http(
            path, oauth=_oauth(issuer), limits=limits, metrics=True, stateless=True
        ) as url:
            token = issuer.token(JWT_CLIENT, resource=url)
            async with _client(url, token) as client:
                first = [await _book(client), await _book(client)]
                refused = await _raw_call(url, token)
                with pytest.raises(MCPError) as heard:
                    await _book(client)
                counted = await _refusals(url)
                await anyio.sleep(float(refused.headers["retry-after"]) + 0.1)
                again = await _book(client)
    assert first == ["Booked 0.", "Booked 1."]
    assert refused.status_code == 429
    assert 1 <= int(refused.headers["retry-after"]) <= 3
    body = refused.json()
    assert body["id"] == 7
    assert body["error"]["code"] == RATE_LIMITED
    assert "at most 2 tool call(s) of one caller per 3 s" in body["error"]["message"]
    assert body["error"]["data"] == {
        "limit": "rate",
        "retryAfter": int(refused.headers["retry-after"]),
    }
    assert heard.value.error.code == RATE_LIMITED
    assert "Too many calls" in heard.value.error.message
    assert counted["rate"] == 2
    assert again == "Booked 2."


async def test_two_callers_limits_are_separate(tmp_path: Path, issuer: AuthorizationServer) -> None:
    with FakeOpenAIServer([text(f"Booked {n}.") for n in range(4)]) as model:
        path = write_agent(tmp_path / "a.agent.yaml", base_url=model.base_url)
        async with served_over_http(
            path, oauth=_oauth(issuer), limits=Limits(calls=1, period=60.0), stateless=True
        ) as url:
            one = issuer.token(JWT_CLIENT, resource=url)
            two = issuer.token(SECOND_CLIENT, resource=url)
            async with _client(url, one) as first, _client(url, two) as second:
                answers = [await _book(first), await _book(second)]
                refused = [(await _raw_call(url, one)).status_code]
                refused.append((await _raw_call(url, two)).status_code)
    assert answers == ["Booked 0.", "Booked 1."]
    assert refused == [429, 429]


async def test_calls_at_once_are_limited_per_caller(
    tmp_path: Path, issuer: AuthorizationServer
) -> None:
    slow = text("Slow booking.", chunks=4, chunk_delay=0.5)
    with FakeOpenAIServer([slow, text("Other caller.")]) as model:
        path = write_agent(tmp_path / "a.agent.yaml", base_url=model.base_url)
        async with served_over_http(
            path, oauth=_oauth(issuer), limits=Limits(at_once=1), metrics=True, stateless=True
        ) as url:
            one = issuer.token(JWT_CLIENT, resource=url)
            two = issuer.token(SECOND_CLIENT, resource=url)
            answers: list[str] = []

            async def slow_call(client: Client) -> None:
                answers.append(await _book(client))

            async with (
                _client(url, one) as first,
                _client(url, two) as second,
                anyio.create_task_group() as group,
            ):
                group.start_soon(slow_call, first)
                running = await anyio.to_thread.run_sync(model.wait_for_in_flight, 1, 10.0)
                refused = await _raw_call(url, one)
                answers.append(await _book(second))
            counted = await _refusals(url)
    assert running
    assert refused.status_code == 429
    assert refused.headers["retry-after"] == "1"
    assert refused.json()["error"]["data"]["limit"] == "at_once"
    assert sorted(answers) == ["Other caller.", "Slow booking."]
    assert counted["at_once"] == 1


async def test_the_shared_token_holder_is_one_caller_with_limits(tmp_path: Path) -> None:
    with FakeOpenAIServer([text("Booked.")]) as model:
        path = write_agent(tmp_path / "a.agent.yaml", base_url=model.base_url)
        async with (
            served_over_http(
                path, token=TOKEN, limits=Limits(calls=1, period=60), stateless=True
            ) as url,
            _client(url, TOKEN) as client,
        ):
            answer = await _book(client)
            refused = await _raw_call(url, TOKEN)
    assert answer == "Booked."
    assert refused.status_code == 429
    assert int(refused.headers["retry-after"]) >= 59


@pytest.mark.parametrize("mode", ["legacy", "auto"])
async def test_a_caller_without_a_tools_scope_neither_lists_nor_calls_it(
    tmp_path: Path, issuer: AuthorizationServer, mode: str
) -> None:
    tools = [book_tool(), book_tool("check_weather", description="Says the weather.")]
    scopes = ToolScopes({"book_flight": "tools:book_flight"})
    with FakeOpenAIServer([text("Sunny."), text("Booked with the scope.")]) as model:
        path = write_agent(tmp_path / "a.agent.yaml", base_url=model.base_url, tools=tools)
        async with served_over_http(
            path, oauth=_oauth(issuer), tool_scopes=scopes, metrics=True
        ) as url:
            plain = issuer.token(JWT_CLIENT, resource=url, scope=SCOPE)
            scoped = issuer.token(JWT_CLIENT, resource=url, scope=f"{SCOPE} tools:book_flight")
            async with _client(url, plain, mode) as client:
                listed_plain = [t.name for t in (await client.list_tools()).tools]
                weather = await client.call_tool("check_weather", {"destination": "Oslo"})
                with pytest.raises(MCPError) as refused:
                    await _book(client)
            async with _client(url, scoped, mode) as client:
                listed_scoped = [t.name for t in (await client.list_tools()).tools]
                booked = await _book(client)
            counted = await _refusals(url)
    assert listed_plain == ["check_weather"]
    assert not weather.is_error
    assert refused.value.error.message == "Unknown tool: book_flight"
    assert listed_scoped == ["book_flight", "check_weather"]
    assert booked == "Booked with the scope."
    assert counted["scope"] == 1
