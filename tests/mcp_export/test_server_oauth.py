"""The served HTTP server as an OAuth 2.1 protected resource, against a real authorization server.

The authorization server is panva's oidc-provider in a Node child process
(``tests.fakes.oauth_server``); the MCP server runs in this process (uvicorn on a free loopback
port), and the tokens it checks are the ones the authorization server issues for its URL.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import anyio
import httpx2
import jwt
import mcp_types as types
import pytest
from cryptography.hazmat.primitives.asymmetric import rsa
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client
from mcp.shared.exceptions import MCPError

from mcp_export.server.oauth import OAuthError, OAuthSettings
from tests.fakes._script import text
from tests.fakes.http_serving import served_over_http
from tests.fakes.mcp_clients import write_agent
from tests.fakes.oauth_server import (
    JWT_CLIENT,
    OPAQUE_CLIENT,
    RESOURCE_SERVER,
    SCOPE,
    SHORT_CLIENT,
    AuthorizationServer,
)
from tests.fakes.openai_server import FakeOpenAIServer
from tests.fakes.ports import refused_origin
from tests.fakes.raised import innermost

pytestmark = pytest.mark.anyio

MODES = pytest.mark.parametrize("mode", ["legacy", "auto"])
PING = {"jsonrpc": "2.0", "id": 1, "method": "ping"}
POST_HEADERS = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}


@pytest.fixture(scope="module")
def issuer() -> Iterator[AuthorizationServer]:
    with AuthorizationServer() as server:
        yield server


def _client(url: str, mode: str, token: str) -> Client:
    headers = {"Authorization": f"Bearer {token}"}
    transport = streamable_http_client(url, http_client=create_mcp_http_client(headers=headers))
    return Client(transport, mode=mode)


async def _ping(url: str, authorization: str | None) -> httpx2.Response:
    headers = POST_HEADERS | ({"Authorization": authorization} if authorization else {})
    async with httpx2.AsyncClient(timeout=10) as http:
        return await http.post(url, json=PING, headers=headers)


def _jwt_settings(
    issuer: AuthorizationServer,
    *,
    leeway: float = 5.0,
    introspect: bool = False,
    client_id: str | None = None,
    client_secret: str | None = None,
) -> OAuthSettings:
    return OAuthSettings(
        issuer=issuer.issuer,
        scopes=(SCOPE,),
        leeway=leeway,
        introspect=introspect,
        client_id=client_id,
        client_secret=client_secret,
    )


@MODES
async def test_a_token_the_issuer_grants_for_this_server_lists_and_calls_tools(
    tmp_path: Path, issuer: AuthorizationServer, mode: str
) -> None:
    with FakeOpenAIServer([text("Booked with OAuth.")]) as model:
        path = write_agent(tmp_path / "a.agent.yaml", base_url=model.base_url)
        async with served_over_http(path, oauth=_jwt_settings(issuer)) as url:
            token = issuer.token(JWT_CLIENT, resource=url)
            async with _client(url, mode, token) as client:
                (tool,) = (await client.list_tools()).tools
                result = await client.call_tool("book_flight", {"destination": "Oslo"})
    assert tool.name == "book_flight"
    assert isinstance(result.content[0], types.TextContent)
    assert result.content[0].text == "Booked with OAuth."


async def test_without_a_token_the_answer_points_to_the_resource_metadata(
    tmp_path: Path, issuer: AuthorizationServer
) -> None:
    path = write_agent(tmp_path / "a.agent.yaml")
    async with served_over_http(path, oauth=_jwt_settings(issuer)) as url:
        refused = await _ping(url, None)
        challenge = refused.headers["www-authenticate"]
        metadata_url = challenge.split('resource_metadata="', 1)[1].split('"', 1)[0]
        async with httpx2.AsyncClient(timeout=10) as http:
            metadata = (await http.get(metadata_url)).json()
    assert refused.status_code == 401
    assert challenge.startswith("Bearer ")
    assert metadata_url == url.replace("/mcp", "/.well-known/oauth-protected-resource/mcp")
    assert metadata["resource"] == url
    assert metadata["authorization_servers"] == [issuer.issuer]
    assert metadata["scopes_supported"] == [SCOPE]


async def test_a_token_for_another_audience_is_refused(
    tmp_path: Path, issuer: AuthorizationServer
) -> None:
    path = write_agent(tmp_path / "a.agent.yaml")
    async with served_over_http(path, oauth=_jwt_settings(issuer)) as url:
        theirs = issuer.token(JWT_CLIENT, resource="https://another-server.example/mcp")
        refused = await _ping(url, f"Bearer {theirs}")
    assert refused.status_code == 401
    assert 'error="invalid_token"' in refused.headers["www-authenticate"]


async def test_an_expired_token_is_refused_once_the_leeway_is_over(
    tmp_path: Path, issuer: AuthorizationServer
) -> None:
    path = write_agent(tmp_path / "a.agent.yaml")
    async with served_over_http(path, oauth=_jwt_settings(issuer, leeway=3.0)) as url:
        token = issuer.token(SHORT_CLIENT, resource=url)  # valid for 1 s, plus the leeway
        accepted = await _ping(url, f"Bearer {token}")
        expires = jwt.decode(token, options={"verify_signature": False})["exp"]
        # A token's life is measured in wall-clock time: nothing to wait on but the clock.
        await anyio.sleep(max(0.0, expires + 3 + 1 - time.time()))
        refused = await _ping(url, f"Bearer {token}")
    assert accepted.status_code != 401
    assert refused.status_code == 401


async def test_a_token_signed_by_another_key_is_refused(
    tmp_path: Path, issuer: AuthorizationServer
) -> None:
    path = write_agent(tmp_path / "a.agent.yaml")
    async with served_over_http(path, oauth=_jwt_settings(issuer)) as url:
        genuine = issuer.token(JWT_CLIENT, resource=url)
        header = jwt.get_unverified_header(genuine)
        claims = jwt.decode(genuine, options={"verify_signature": False})
        forger = rsa.generate_private_key(public_exponent=65537, key_size=2048)
        forged = jwt.encode(claims, forger, algorithm="RS256", headers={"kid": header["kid"]})
        unknown_key = jwt.encode(claims, forger, algorithm="RS256", headers={"kid": "not-theirs"})
        unsigned = jwt.encode(claims, "", algorithm="none")
        shared = jwt.encode(claims, "a-secret-anyone-could-know!!!!!!", algorithm="HS256")
        answers = [await _ping(url, f"Bearer {t}") for t in (forged, unknown_key, unsigned, shared)]
        still_good = await _ping(url, f"Bearer {genuine}")
    assert [a.status_code for a in answers] == [401, 401, 401, 401]
    assert still_good.status_code != 401


async def test_a_token_without_the_required_scope_is_forbidden(
    tmp_path: Path, issuer: AuthorizationServer
) -> None:
    path = write_agent(tmp_path / "a.agent.yaml")
    async with served_over_http(path, oauth=_jwt_settings(issuer)) as url:
        token = issuer.token(JWT_CLIENT, resource=url, scope="mcp:other")
        forbidden = await _ping(url, f"Bearer {token}")
    assert forbidden.status_code == 403
    assert 'error="insufficient_scope"' in forbidden.headers["www-authenticate"]


async def test_the_bearer_scheme_is_matched_in_any_case(
    tmp_path: Path, issuer: AuthorizationServer
) -> None:
    path = write_agent(tmp_path / "a.agent.yaml")
    async with served_over_http(path, oauth=_jwt_settings(issuer)) as url:
        token = issuer.token(JWT_CLIENT, resource=url)
        answers = [await _ping(url, f"{scheme} {token}") for scheme in ("bearer", "BEARER")]
    assert [a.status_code for a in answers] == [400, 400]  # past the token check: no session


def _introspecting(issuer: AuthorizationServer) -> OAuthSettings:
    return _jwt_settings(
        issuer,
        introspect=True,
        client_id=RESOURCE_SERVER.client_id,
        client_secret=RESOURCE_SERVER.secret,
    )


@MODES
async def test_an_opaque_token_is_checked_by_introspection(
    tmp_path: Path, issuer: AuthorizationServer, mode: str
) -> None:
    path = write_agent(tmp_path / "a.agent.yaml")
    async with served_over_http(path, oauth=_introspecting(issuer)) as url:
        token = issuer.token(OPAQUE_CLIENT, resource=url)
        assert token.count(".") != 2  # opaque, not a JWT
        async with _client(url, mode, token) as client:
            (tool,) = (await client.list_tools()).tools
        made_up = await _ping(url, "Bearer made-up-token-the-issuer-never-issued")
        elsewhere = issuer.token(OPAQUE_CLIENT, resource="https://another-server.example/mcp")
        for_another = await _ping(url, f"Bearer {elsewhere}")
    assert tool.name == "book_flight"
    assert made_up.status_code == 401
    assert for_another.status_code == 401


async def test_an_unreachable_issuer_stops_the_start_with_a_clear_error(tmp_path: Path) -> None:
    path = write_agent(tmp_path / "a.agent.yaml")
    with (
        refused_origin() as nowhere,
        pytest.raises(BaseExceptionGroup) as raised,
        anyio.fail_after(20),
    ):
        async with served_over_http(path, oauth=OAuthSettings(issuer=nowhere)):
            pass
    message = str(_only_oauth_error(raised.value))
    assert message.startswith(f"--oauth-issuer {nowhere}: cannot read the authorization server")
    assert "/.well-known/oauth-authorization-server" in message


async def test_introspection_without_client_credentials_is_refused_at_start(
    tmp_path: Path, issuer: AuthorizationServer
) -> None:
    path = write_agent(tmp_path / "a.agent.yaml")
    with pytest.raises(BaseExceptionGroup) as raised, anyio.fail_after(20):
        async with served_over_http(path, oauth=_jwt_settings(issuer, introspect=True)):
            pass
    assert "--oauth-client-id" in str(_only_oauth_error(raised.value))


def _only_oauth_error(group: BaseExceptionGroup[BaseException]) -> OAuthError:
    matched, _ = group.split(OAuthError)
    assert matched is not None
    (error,) = matched.exceptions
    while isinstance(error, BaseExceptionGroup):
        (error,) = error.exceptions
    assert isinstance(error, OAuthError)
    return error


@MODES
async def test_a_client_without_a_token_is_told_where_to_get_one(
    tmp_path: Path, issuer: AuthorizationServer, mode: str
) -> None:
    path = write_agent(tmp_path / "a.agent.yaml")
    async with served_over_http(path, oauth=_jwt_settings(issuer)) as url:
        transport = streamable_http_client(url, http_client=create_mcp_http_client())
        with anyio.fail_after(20), pytest.raises(BaseException) as raised:
            async with Client(transport, mode=mode) as client:
                await client.list_tools()
        refused = await _ping(url, None)
    metadata_url = url.replace("/mcp", "/.well-known/oauth-protected-resource/mcp")
    assert innermost(raised.value, MCPError).error.message == (
        f"Unauthorized: this server needs an OAuth access token issued by {issuer.issuer} for "
        f"{url}, sent as Authorization: Bearer <token>; how to get one: {metadata_url}"
    )
    # RFC 6750 section 3.1: no error code when the request carried no credentials.
    assert refused.status_code == 401
    assert refused.headers["www-authenticate"] == f'Bearer resource_metadata="{metadata_url}"'
    assert refused.json()["error"]["message"].startswith("Unauthorized: this server needs")


@MODES
async def test_a_client_whose_token_is_refused_is_told_why(
    tmp_path: Path, issuer: AuthorizationServer, mode: str
) -> None:
    path = write_agent(tmp_path / "a.agent.yaml")
    async with served_over_http(path, oauth=_jwt_settings(issuer)) as url:
        theirs = issuer.token(JWT_CLIENT, resource="https://another-server.example/mcp")
        with anyio.fail_after(20), pytest.raises(BaseException) as raised:
            async with _client(url, mode, theirs) as client:
                await client.list_tools()
        refused = await _ping(url, f"Bearer {theirs}")
    reason = "it was issued for another resource (its audience is not this server)"
    assert innermost(raised.value, MCPError).error.message == (
        f"Unauthorized: the access token was refused: {reason}; get a new one from "
        f"{issuer.issuer} for {url}"
    )
    challenge = refused.headers["www-authenticate"]
    assert refused.status_code == 401
    assert challenge.startswith(
        f'Bearer error="invalid_token", error_description="{reason}", resource_metadata="'
    )


async def test_each_refused_token_is_told_its_own_reason(
    tmp_path: Path, issuer: AuthorizationServer
) -> None:
    path = write_agent(tmp_path / "a.agent.yaml")
    async with served_over_http(path, oauth=_jwt_settings(issuer, leeway=0.0)) as url:
        genuine = issuer.token(JWT_CLIENT, resource=url)
        claims = jwt.decode(genuine, options={"verify_signature": False})
        forger = rsa.generate_private_key(public_exponent=65537, key_size=2048)
        unknown_key = jwt.encode(claims, forger, algorithm="RS256", headers={"kid": "not-theirs"})
        shared = jwt.encode(claims, "a-secret-anyone-could-know!!!!!!", algorithm="HS256")
        answers = [
            await _ping(url, f"Bearer {t}") for t in ("not-a-jwt", unknown_key, shared, genuine)
        ]
    messages = [a.json()["error"]["message"] if a.status_code == 401 else "" for a in answers]
    assert "the access token was refused: it is not a JWT;" in messages[0]
    assert "it is signed by a key the authorization server does not publish" in messages[1]
    assert "it is signed with algorithm 'HS256', which is not accepted" in messages[2]
    assert messages[3] == ""  # the genuine token passes, on the same connection pool
