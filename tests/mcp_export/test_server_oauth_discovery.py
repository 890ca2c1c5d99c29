"""A real MCP client finds its own way through OAuth to the protected server's tools.

The client is the official SDK's ``ClientCredentialsOAuthProvider`` given only the server URL, its
client credentials and the issuer they belong to. It follows the MCP authorization flow: a 401
naming the protected resource metadata, that metadata naming the authorization server, the
server's RFC 8414 metadata, a client-credentials token request bound to the resource (RFC 8707),
and the request again with the token. The authorization server is panva's oidc-provider
(``tests.fakes.oauth_server``); the MCP server is ``serve`` in a child process or in this one.
Every hop the client makes is recorded from its HTTP client's response hook.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import parse_qsl

import anyio
import httpx2
import jwt
import mcp_types as types
import pytest
from mcp import Client
from mcp.client.auth import OAuthTokenError
from mcp.client.auth.extensions.client_credentials import ClientCredentialsOAuthProvider
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client
from mcp.shared.auth import OAuthClientInformationFull, OAuthToken
from mcp.shared.exceptions import MCPError

from mcp_export.server.oauth import OAuthSettings
from tests.fakes._script import text
from tests.fakes.http_serving import serve_http_process, served_over_http
from tests.fakes.mcp_clients import write_agent
from tests.fakes.oauth_server import (
    JWT_CLIENT,
    OPAQUE_CLIENT,
    OTHER_ONLY_CLIENT,
    RESOURCE_SERVER,
    SCOPE,
    SHORT_CLIENT,
    AuthorizationServer,
)
from tests.fakes.oauth_server import (
    Client as Credentials,
)
from tests.fakes.openai_server import FakeOpenAIServer
from tests.fakes.raised import innermost

pytestmark = pytest.mark.anyio

MODES = pytest.mark.parametrize("mode", ["legacy", "auto"])
UNGRANTABLE = "mcp:admin"
"""A scope the authorization server does not know: it leaves it out of the tokens it issues."""


@pytest.fixture(scope="module")
def issuer() -> Iterator[AuthorizationServer]:
    with AuthorizationServer() as server:
        yield server


@dataclass(frozen=True)
class Hop:
    """One request the client made and the status it got."""

    method: str
    url: str
    status: int
    challenge: str
    form: dict[str, str]
    """The form fields of a token request (the client's secret travels in its header instead)."""


@dataclass
class Wire:
    """The client's side of the exchange, hop by hop, and the tokens it keeps (``TokenStorage``)."""

    hops: list[Hop] = field(default_factory=list)
    tokens: OAuthToken | None = None
    client_info: OAuthClientInformationFull | None = None

    async def on_response(self, response: httpx2.Response) -> None:
        request = response.request
        form: dict[str, str] = {}
        if request.headers.get("content-type", "").startswith("application/x-www-form-urlencoded"):
            form = dict(parse_qsl(request.content.decode()))
        challenge = response.headers.get("www-authenticate", "")
        self.hops.append(
            Hop(request.method, str(request.url), response.status_code, challenge, form)
        )

    def to(self, url: str) -> list[Hop]:
        return [hop for hop in self.hops if hop.url == url]

    async def get_tokens(self) -> OAuthToken | None:
        return self.tokens

    async def set_tokens(self, tokens: OAuthToken) -> None:
        self.tokens = tokens

    async def get_client_info(self) -> OAuthClientInformationFull | None:
        return self.client_info

    async def set_client_info(self, client_info: OAuthClientInformationFull) -> None:
        self.client_info = client_info

    @property
    def access_token(self) -> str:
        assert self.tokens is not None
        return self.tokens.access_token


def _client(
    url: str,
    mode: str,
    credentials: Credentials,
    issuer: AuthorizationServer,
    wire: Wire,
    *,
    scope: str | None = None,
) -> Client:
    """The SDK client with nothing but the URL, the credentials and their issuer."""
    auth = ClientCredentialsOAuthProvider(
        url,
        wire,
        credentials.client_id,
        credentials.secret,
        scope=scope,
        issuer=issuer.issuer,
    )
    http = create_mcp_http_client(auth=auth)
    http.event_hooks = {"request": [], "response": [wire.on_response]}
    return Client(streamable_http_client(url, http_client=http), mode=mode)


def _settings(
    issuer: AuthorizationServer, *scopes: str, introspect: bool = False, leeway: float = 5.0
) -> OAuthSettings:
    if not introspect:
        return OAuthSettings(issuer=issuer.issuer, scopes=scopes, leeway=leeway)
    return OAuthSettings(
        issuer=issuer.issuer,
        scopes=scopes,
        introspect=True,
        client_id=RESOURCE_SERVER.client_id,
        client_secret=RESOURCE_SERVER.secret,
        leeway=leeway,
    )


@MODES
async def test_a_client_with_only_the_url_and_its_credentials_finds_its_way_to_the_tools(
    tmp_path: Path, issuer: AuthorizationServer, mode: str
) -> None:
    wire = Wire()
    with FakeOpenAIServer([text("Booked through discovery.")]) as model:
        agent = write_agent(tmp_path / "a.agent.yaml", base_url=model.base_url)
        args = ("--oauth-issuer", issuer.issuer, "--oauth-scope", SCOPE)
        async with (
            serve_http_process(agent, *args) as served,
            _client(served.url, mode, JWT_CLIENT, issuer, wire, scope=SCOPE) as client,
        ):
            (tool,) = (await client.list_tools()).tools
            result = await client.call_tool("book_flight", {"destination": "Oslo"})
    url = served.url
    metadata_url = url.replace("/mcp", "/.well-known/oauth-protected-resource/mcp")
    refused, metadata, issuer_metadata, token, retried = wire.hops[:5]
    assert (refused.method, refused.url, refused.status) == ("POST", url, 401)
    assert f'resource_metadata="{metadata_url}"' in refused.challenge
    assert (metadata.method, metadata.url, metadata.status) == ("GET", metadata_url, 200)
    assert (issuer_metadata.url, issuer_metadata.status) == (
        f"{issuer.issuer}/.well-known/oauth-authorization-server",
        200,
    )
    assert (token.method, token.url, token.status) == ("POST", f"{issuer.issuer}/token", 200)
    assert token.form == {"grant_type": "client_credentials", "resource": url, "scope": SCOPE}
    assert (retried.url, retried.status) == (url, 200)
    assert len(wire.to(f"{issuer.issuer}/token")) == 1
    assert [hop.status for hop in wire.hops[5:] if hop.status >= 400] == []
    claims = jwt.decode(wire.access_token, options={"verify_signature": False})
    assert claims["aud"] == url
    assert SCOPE in claims["scope"].split()
    assert tool.name == "book_flight"
    assert isinstance(result.content[0], types.TextContent)
    assert result.content[0].text == "Booked through discovery."
    assert wire.access_token not in served.text


async def test_the_scope_the_server_requires_is_the_scope_the_client_asks_for(
    tmp_path: Path, issuer: AuthorizationServer
) -> None:
    wire = Wire()
    path = write_agent(tmp_path / "a.agent.yaml")
    async with (
        served_over_http(path, oauth=_settings(issuer, SCOPE)) as url,
        _client(url, "auto", JWT_CLIENT, issuer, wire, scope="mcp:other") as client,
    ):
        (tool,) = (await client.list_tools()).tools
    (token,) = wire.to(f"{issuer.issuer}/token")
    assert token.form["scope"] == SCOPE
    assert tool.name == "book_flight"


@MODES
async def test_a_server_requiring_no_scope_is_reached_without_asking_for_one(
    tmp_path: Path, issuer: AuthorizationServer, mode: str
) -> None:
    wire = Wire()
    path = write_agent(tmp_path / "a.agent.yaml")
    async with served_over_http(path, oauth=_settings(issuer)) as url:
        async with _client(url, mode, JWT_CLIENT, issuer, wire) as client:
            (tool,) = (await client.list_tools()).tools
        async with httpx2.AsyncClient(timeout=10) as http:
            metadata_url = url.replace("/mcp", "/.well-known/oauth-protected-resource/mcp")
            metadata = (await http.get(metadata_url)).json()
    (token,) = wire.to(f"{issuer.issuer}/token")
    assert "scope" not in token.form
    assert metadata["scopes_supported"] == []
    assert tool.name == "book_flight"


@MODES
async def test_a_scope_the_issuer_never_grants_fails_the_client_after_one_step_up(
    tmp_path: Path, issuer: AuthorizationServer, mode: str
) -> None:
    wire = Wire()
    path = write_agent(tmp_path / "a.agent.yaml")
    async with served_over_http(path, oauth=_settings(issuer, UNGRANTABLE)) as url:
        started = time.monotonic()
        with anyio.fail_after(30), pytest.raises(BaseException) as raised:
            async with _client(url, mode, JWT_CLIENT, issuer, wire) as client:
                await client.list_tools()
        elapsed = time.monotonic() - started
        async with httpx2.AsyncClient(timeout=10) as http:
            metadata_url = url.replace("/mcp", "/.well-known/oauth-protected-resource/mcp")
            still_serving = await http.get(metadata_url)
    error = innermost(raised.value, MCPError)
    tokens = wire.to(f"{issuer.issuer}/token")
    forbidden = [hop for hop in wire.to(url) if hop.status == 403]
    assert 1 <= len(tokens) <= 2
    assert {hop.form["scope"] for hop in tokens} == {UNGRANTABLE}
    assert 1 <= len(forbidden) <= 3
    assert 'error="insufficient_scope"' in forbidden[-1].challenge
    assert f"Required scope: {UNGRANTABLE}" in forbidden[-1].challenge
    assert elapsed < 10
    assert still_serving.status_code == 200
    assert f"requires the OAuth scope {UNGRANTABLE}" in error.error.message
    assert "ask the authorization server for a token with it" in error.error.message


async def test_a_client_not_allowed_the_scope_hears_the_issuers_refusal(
    tmp_path: Path, issuer: AuthorizationServer
) -> None:
    wire = Wire()
    path = write_agent(tmp_path / "a.agent.yaml")
    async with served_over_http(path, oauth=_settings(issuer, SCOPE)) as url:
        with anyio.fail_after(30), pytest.raises(BaseException) as raised:
            async with _client(url, "auto", OTHER_ONLY_CLIENT, issuer, wire) as client:
                await client.list_tools()
    error = innermost(raised.value, OAuthTokenError)
    assert "Token exchange failed (400)" in str(error)
    assert "invalid_scope" in str(error)
    assert OTHER_ONLY_CLIENT.secret not in str(error)
    assert len(wire.to(f"{issuer.issuer}/token")) == 1


@MODES
async def test_an_expired_token_is_replaced_by_a_new_one_without_the_caller_noticing(
    tmp_path: Path, issuer: AuthorizationServer, mode: str
) -> None:
    wire = Wire()
    path = write_agent(tmp_path / "a.agent.yaml")
    async with (
        served_over_http(path, oauth=_settings(issuer, SCOPE, leeway=0.0)) as url,
        _client(url, mode, SHORT_CLIENT, issuer, wire) as client,
    ):
        await client.list_tools()
        first = wire.access_token
        # On a busy machine the first 1 s token may already have been replaced while the
        # client connected: count the token requests from here on.
        fetched = len(wire.to(f"{issuer.issuer}/token"))
        expires = jwt.decode(first, options={"verify_signature": False})["exp"]
        # A token's life is measured in wall-clock time: nothing to wait on but the clock.
        await anyio.sleep(max(0.0, expires + 0.2 - time.time()))
        (tool,) = (await client.list_tools()).tools
    assert tool.name == "book_flight"
    assert len(wire.to(f"{issuer.issuer}/token")) - fetched == 1
    assert wire.access_token != first


async def test_an_opaque_token_found_by_discovery_is_checked_by_introspection(
    tmp_path: Path, issuer: AuthorizationServer
) -> None:
    wire = Wire()
    path = write_agent(tmp_path / "a.agent.yaml")
    async with (
        served_over_http(path, oauth=_settings(issuer, SCOPE, introspect=True)) as url,
        _client(url, "auto", OPAQUE_CLIENT, issuer, wire) as client,
    ):
        (tool,) = (await client.list_tools()).tools
    assert wire.access_token.count(".") != 2
    assert tool.name == "book_flight"


async def test_an_issuer_given_with_a_trailing_slash_is_published_as_it_names_itself(
    tmp_path: Path, issuer: AuthorizationServer
) -> None:
    wire = Wire()
    path = write_agent(tmp_path / "a.agent.yaml")
    settings = OAuthSettings(issuer=f"{issuer.issuer}/", scopes=(SCOPE,))
    async with (
        served_over_http(path, oauth=settings) as url,
        _client(url, "auto", JWT_CLIENT, issuer, wire) as client,
    ):
        (tool,) = (await client.list_tools()).tools
        async with httpx2.AsyncClient(timeout=10) as http:
            metadata_url = url.replace("/mcp", "/.well-known/oauth-protected-resource/mcp")
            metadata = (await http.get(metadata_url)).json()
    assert metadata["authorization_servers"] == [issuer.issuer]
    assert tool.name == "book_flight"
