"""Streamable HTTP: both protocol eras over real HTTP, the bearer token, and exposure rules.

The server runs in this process (uvicorn on a loopback socket bound to port 0) except for the
command-line tests, which launch ``python -m mcp_export serve --http`` for real.
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import anyio
import httpx2
import mcp_types as types
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client
from mcp.shared.exceptions import MCPError
from starlette.requests import Request
from starlette.responses import PlainTextResponse
from starlette.routing import Route

from mcp_export.server.http import (
    HttpAddress,
    HttpAddressError,
    check_exposure,
    parse_http_address,
    resource_url,
)
from mcp_export.server.oauth import OAuthSettings
from tests.fakes._script import count_user_turns, text
from tests.fakes.http_serving import serve_env, serve_http_process, served_over_http
from tests.fakes.mcp_clients import book_tool, serve_command, write_agent
from tests.fakes.openai_server import FakeOpenAIServer

pytestmark = pytest.mark.anyio

MODES = pytest.mark.parametrize("mode", ["legacy", "auto"])
TOKEN = "s3cret-token-for-tests"


def _client(url: str, mode: str, token: str | None) -> Client:
    headers = {"Authorization": f"Bearer {token}"} if token else None
    transport = streamable_http_client(url, http_client=create_mcp_http_client(headers=headers))
    return Client(transport, mode=mode)


@MODES
async def test_http_serves_list_and_call_in_both_eras(tmp_path: Path, mode: str) -> None:
    with FakeOpenAIServer([text("Booked over HTTP.")]) as model:
        path = write_agent(tmp_path / "a.agent.yaml", base_url=model.base_url)
        async with served_over_http(path) as url:
            assert url.startswith("http://127.0.0.1:") and url.endswith("/mcp")
            async with _client(url, mode, None) as client:
                (tool,) = (await client.list_tools()).tools
                result = await client.call_tool("book_flight", {"destination": "Oslo"})
    assert tool.name == "book_flight"
    assert isinstance(result.content[0], types.TextContent)
    assert result.content[0].text == "Booked over HTTP."


@MODES
async def test_http_with_a_token_serves_clients_that_send_it(tmp_path: Path, mode: str) -> None:
    path = write_agent(tmp_path / "a.agent.yaml")
    async with served_over_http(path, token=TOKEN) as url, _client(url, mode, TOKEN) as client:
        (tool,) = (await client.list_tools()).tools
    assert tool.name == "book_flight"


@pytest.mark.parametrize("sent", [None, "Bearer wrong", "Basic czNjcmV0", f"bearer {TOKEN}x"])
async def test_http_with_a_token_refuses_requests_without_it(
    tmp_path: Path, sent: str | None
) -> None:
    path = write_agent(tmp_path / "a.agent.yaml")
    headers = {"Authorization": sent} if sent else {}
    headers |= {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}
    body = {"jsonrpc": "2.0", "id": 1, "method": "ping"}
    async with served_over_http(path, token=TOKEN) as url, httpx2.AsyncClient() as http:
        response = await http.post(url, json=body, headers=headers)
    assert response.status_code == 401
    assert response.headers["www-authenticate"].startswith("Bearer")


async def _ping(url: str, authorization: str | None) -> httpx2.Response:
    headers = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}
    if authorization:
        headers["Authorization"] = authorization
    async with httpx2.AsyncClient(timeout=10) as http:
        return await http.post(
            url, json={"jsonrpc": "2.0", "id": 1, "method": "ping"}, headers=headers
        )


async def test_the_bearer_scheme_of_the_token_is_matched_in_any_case(tmp_path: Path) -> None:
    path = write_agent(tmp_path / "a.agent.yaml")
    async with served_over_http(path, token=TOKEN) as url:
        answers = [await _ping(url, f"{s} {TOKEN}") for s in ("bearer", "BEARER", "Bearer ")]
    # Past the token: told to start a session (2025-11-25), not refused.
    assert [a.status_code for a in answers] == [400, 400, 400]
    assert all("initialize" in a.json()["error"]["message"] for a in answers)


WELL_KNOWN = [
    "/.well-known/oauth-protected-resource",
    "/.well-known/oauth-protected-resource/mcp",
    "/.well-known/oauth-authorization-server",
    "/.well-known/openid-configuration",
]


@pytest.mark.parametrize("token", [None, TOKEN])
async def test_without_oauth_the_oauth_documents_are_not_found(
    tmp_path: Path, token: str | None
) -> None:
    path = write_agent(tmp_path / "a.agent.yaml")
    async with served_over_http(path, token=token) as url, httpx2.AsyncClient(timeout=10) as http:
        origin = url.removesuffix("/mcp")
        answers = [await http.get(origin + document) for document in WELL_KNOWN]
    assert [a.status_code for a in answers] == [404] * len(WELL_KNOWN)


async def test_extra_routes_are_served_without_the_token(tmp_path: Path) -> None:
    async def healthz(request: Request) -> PlainTextResponse:
        return PlainTextResponse("ok")

    path = write_agent(tmp_path / "a.agent.yaml")
    routes = [Route("/healthz", healthz)]
    async with (
        served_over_http(path, token=TOKEN, extra_routes=routes) as url,
        httpx2.AsyncClient(timeout=10) as http,
    ):
        health = await http.get(url.replace("/mcp", "/healthz"))
        refused = await _ping(url, None)
    assert (health.status_code, health.text) == (200, "ok")
    assert refused.status_code == 401


@MODES
async def test_stateless_http_serves_calls_and_continues_conversations(
    tmp_path: Path, mode: str
) -> None:
    with FakeOpenAIServer(responder=count_user_turns) as model:
        path = write_agent(
            tmp_path / "a.agent.yaml",
            base_url=model.base_url,
            tools=[book_tool(conversation=True)],
        )
        async with (
            served_over_http(path, stateless=True, history=True) as url,
            _client(url, mode, None) as client,
        ):
            (tool,) = (await client.list_tools()).tools
            first = await client.call_tool("book_flight", {"destination": "Oslo"})
            assert first.structured_content is not None
            conversation = first.structured_content["conversationId"]
            second = await client.call_tool(
                "book_flight", {"destination": "Rome", "conversation_id": conversation}
            )
            sessionless = await _ping(url, None)
    assert tool.name == "book_flight"
    assert isinstance(second.content[0], types.TextContent)
    assert second.content[0].text == "turn 2: Book a flight to Rome for 1 passenger(s)."
    assert second.structured_content is not None
    assert second.structured_content["conversationId"] == conversation
    # Without sessions, a request needs no initialize first.
    assert sessionless.status_code == 200


@MODES
@pytest.mark.parametrize(
    ("sent", "told"),
    [
        (
            None,
            "Unauthorized: this server needs its bearer token: send it as Authorization: Bearer",
        ),
        ("wrong", "Unauthorized: the bearer token sent is not this server's token; send the one"),
    ],
)
async def test_an_mcp_client_without_the_token_is_told_what_to_send(
    tmp_path: Path, mode: str, sent: str | None, told: str
) -> None:
    path = write_agent(tmp_path / "a.agent.yaml")
    async with served_over_http(path, token=TOKEN) as url:
        with pytest.raises(BaseExceptionGroup) as caught, anyio.fail_after(10):
            async with _client(url, mode, sent) as client:
                await client.list_tools()
        answered = await _ping(url, f"Bearer {sent}" if sent else None)
    assert caught.group_contains(MCPError, match=re.escape(told))
    assert caught.group_contains(MCPError, match="--token or the METAAGENT_TOKEN")
    assert answered.status_code == 401
    challenge = answered.headers["www-authenticate"]
    # RFC 6750 section 3.1: no error code when no credentials were sent.
    assert ("error=" in challenge) is (sent is not None)
    assert challenge.startswith('Bearer realm="metaagent"')


@pytest.mark.parametrize(
    ("text_", "host", "port"),
    [
        ("8000", "127.0.0.1", 8000),
        ("0", "127.0.0.1", 0),
        ("localhost:9", "localhost", 9),
        ("0.0.0.0:8000", "0.0.0.0", 8000),
        ("[::1]:8080", "::1", 8080),
    ],
)
def test_http_addresses_parse_with_loopback_as_the_default_host(
    text_: str, host: str, port: int
) -> None:
    assert parse_http_address(text_) == HttpAddress(host, port)


@pytest.mark.parametrize("bad", ["", "abc", ":80", "host:", "1.2.3.4:70000", "[::1]8080"])
def test_malformed_http_addresses_are_refused(bad: str) -> None:
    with pytest.raises(HttpAddressError, match="--http"):
        parse_http_address(bad)


def test_oauth_protects_a_non_loopback_address_given_the_url_clients_reach() -> None:
    oauth = OAuthSettings(issuer="https://id.example.com/realms/team")
    check_exposure(HttpAddress("0.0.0.0", 8000), None, oauth=oauth)
    with pytest.raises(HttpAddressError, match="--oauth-resource is needed"):
        resource_url(HttpAddress("0.0.0.0", 8000), 8000, oauth)
    assert resource_url(HttpAddress("127.0.0.1", 0), 8123, oauth) == "http://127.0.0.1:8123/mcp"
    public = OAuthSettings(issuer=oauth.issuer, resource="https://mcp.example.com/mcp")
    assert resource_url(HttpAddress("0.0.0.0", 8000), 8000, public) == public.resource


def test_a_non_loopback_address_needs_a_token() -> None:
    with pytest.raises(HttpAddressError, match="other machines"):
        check_exposure(HttpAddress("0.0.0.0", 8000), None)
    with pytest.raises(HttpAddressError):
        check_exposure(HttpAddress("my-host.example", 8000), "")
    check_exposure(HttpAddress("0.0.0.0", 8000), TOKEN)
    check_exposure(HttpAddress("127.0.0.1", 8000), None)
    check_exposure(HttpAddress("::1", 8000), None)


def test_the_command_refuses_a_non_loopback_address_without_a_token(tmp_path: Path) -> None:
    path = write_agent(tmp_path / "a.agent.yaml")
    done = subprocess.run(
        serve_command(str(path), "--http", "0.0.0.0:0"),
        capture_output=True,
        text=True,
        timeout=60,
        env=serve_env(),
        stdin=subprocess.DEVNULL,
    )
    assert done.returncode == 2
    assert "refusing to serve on 0.0.0.0" in done.stderr
    assert "--token" in done.stderr and "METAAGENT_TOKEN" in done.stderr
    assert done.stdout == ""


async def test_the_command_serves_http_with_the_token_from_the_environment(
    tmp_path: Path,
) -> None:
    path = write_agent(tmp_path / "a.agent.yaml")
    async with serve_http_process(path, env=serve_env(METAAGENT_TOKEN=TOKEN)) as served:
        async with _client(served.url, "auto", TOKEN) as client:
            (tool,) = (await client.list_tools()).tools
        async with httpx2.AsyncClient() as http:
            refused = await http.post(served.url, json={})
    assert tool.name == "book_flight"
    assert refused.status_code == 401


@pytest.mark.parametrize("stateless", [False, True])
async def test_a_protocol_version_not_spoken_is_told_the_versions_that_are(
    tmp_path: Path, stateless: bool
) -> None:
    path = write_agent(tmp_path / "a.agent.yaml")
    headers = {
        "Content-Type": "application/json",
        "Accept": "application/json, text/event-stream",
        "MCP-Protocol-Version": "1999-01-01",
    }
    body = {"jsonrpc": "2.0", "id": 7, "method": "tools/list"}
    async with (
        served_over_http(path, stateless=stateless) as url,
        httpx2.AsyncClient(timeout=10) as http,
    ):
        refused = await http.post(url, json=body, headers=headers)
    error = refused.json()["error"]
    assert refused.status_code == 400
    assert error["code"] == types.UNSUPPORTED_PROTOCOL_VERSION
    assert error["message"].startswith(
        "Unsupported protocol version: the MCP-Protocol-Version header says '1999-01-01', "
        "which this server does not speak; send one of "
    )
    assert "2025-11-25" in error["message"] and "2026-07-28" in error["message"]
    assert error["data"]["requested"] == "1999-01-01"


async def test_a_stateless_server_opens_no_event_stream_for_get(tmp_path: Path) -> None:
    path = write_agent(tmp_path / "a.agent.yaml")
    async with (
        served_over_http(path, stateless=True) as url,
        httpx2.AsyncClient(timeout=10) as http,
    ):
        with anyio.fail_after(10):
            async with http.stream("GET", url, headers={"Accept": "text/event-stream"}) as got:
                status, allow = got.status_code, got.headers.get("allow")
                body = await got.aread()
    assert (status, allow) == (405, "POST")
    assert b"stateless and opens no event stream for GET" in body
