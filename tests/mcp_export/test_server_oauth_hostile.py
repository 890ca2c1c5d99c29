"""A slow, silent or boundless authorization server cannot stall or swell the protected server.

The authorization server is ``tests.fakes.hostile_issuer`` (a real HTTP server on loopback that
trickles, hangs or sends a huge body on purpose); the MCP server runs in this process, or as
``metaagent serve`` in a child process.
"""

from __future__ import annotations

import subprocess
import time
from pathlib import Path

import anyio
import httpx2
import pytest

from mcp_export.server.oauth import MAX_DOCUMENT_BYTES, OAuthError, OAuthSettings
from tests.fakes.hostile_issuer import HostileIssuer
from tests.fakes.http_serving import serve_env, served_over_http
from tests.fakes.mcp_clients import serve_command, write_agent

pytestmark = pytest.mark.anyio

PING = {"jsonrpc": "2.0", "id": 1, "method": "ping"}
POST_HEADERS = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}
RFC8414 = "/.well-known/oauth-authorization-server"
OPENID = "/.well-known/openid-configuration"


async def _ping(url: str, token: str) -> httpx2.Response:
    headers = POST_HEADERS | {"Authorization": f"Bearer {token}"}
    async with httpx2.AsyncClient(timeout=30) as http:
        return await http.post(url, json=PING, headers=headers)


async def _start_error(path: Path, settings: OAuthSettings) -> tuple[OAuthError, float]:
    """The error that stops the start with ``settings``, and the seconds it took."""
    started = time.monotonic()
    with pytest.raises(BaseExceptionGroup) as raised, anyio.fail_after(30):
        async with served_over_http(path, oauth=settings):
            pass
    matched, _ = raised.value.split(OAuthError)
    assert matched is not None, raised.value
    (error,) = matched.exceptions
    while isinstance(error, BaseExceptionGroup):
        (error,) = error.exceptions
    assert isinstance(error, OAuthError)
    return error, time.monotonic() - started


async def test_metadata_trickled_a_byte_at_a_time_stops_the_start_at_the_deadline(
    tmp_path: Path,
) -> None:
    path = write_agent(tmp_path / "a.agent.yaml")
    with HostileIssuer(metadata="trickle", trickle_every=0.3) as issuer:
        error, took = await _start_error(path, OAuthSettings(issuer=issuer.url, timeout=1.5))
    assert f"{issuer.url}{RFC8414}: no whole answer within 1.5 s" in str(error)
    assert f"{issuer.url}{OPENID}: no whole answer within 1.5 s" in str(error)
    assert took < 10  # two requests of 1.5 s each, and the server's start


async def test_an_issuer_that_never_answers_is_reported_with_a_reason(tmp_path: Path) -> None:
    path = write_agent(tmp_path / "a.agent.yaml")
    with HostileIssuer(metadata="hang") as issuer:
        error, took = await _start_error(path, OAuthSettings(issuer=issuer.url, timeout=1))
    message = str(error)
    assert message.startswith(f"--oauth-issuer {issuer.url}: cannot read the authorization")
    assert f"{RFC8414}: no whole answer within 1 s; " in message
    assert f"{OPENID}: no whole answer within 1 s)" in message
    assert took < 10


async def test_huge_metadata_is_refused_as_it_arrives(tmp_path: Path) -> None:
    path = write_agent(tmp_path / "a.agent.yaml")
    with HostileIssuer(metadata="huge", huge_bytes=64 * 1024 * 1024) as issuer:
        error, _ = await _start_error(path, OAuthSettings(issuer=issuer.url))
        sent = issuer.sent
    assert f"{RFC8414}: the answer is larger than {MAX_DOCUMENT_BYTES} bytes" in str(error)
    assert f"{OPENID}: the answer is larger than {MAX_DOCUMENT_BYTES} bytes" in str(error)
    # The server stopped reading after the limit: what got out is the limit and socket buffers.
    assert sent < 16 * 1024 * 1024


async def test_a_key_set_that_never_arrives_stops_the_start_with_its_url(tmp_path: Path) -> None:
    path = write_agent(tmp_path / "a.agent.yaml")
    with HostileIssuer(jwks="trickle") as issuer:
        error, took = await _start_error(path, OAuthSettings(issuer=issuer.url, timeout=1))
    assert str(error) == (
        f"cannot read the authorization server's keys at {issuer.url}/jwks: "
        "no whole answer within 1 s"
    )
    assert took < 10


async def test_a_known_key_is_not_held_up_by_a_slow_fetch_for_an_unknown_one(
    tmp_path: Path,
) -> None:
    path = write_agent(tmp_path / "a.agent.yaml")
    with HostileIssuer() as issuer:
        issuer.add_key("known")
        settings = OAuthSettings(issuer=issuer.url, timeout=3)
        async with served_over_http(path, oauth=settings, stateless=True) as url:
            issuer.jwks = "trickle"
            issuer.add_key("rotated")  # published, but the key set now trickles
            unknown: list[httpx2.Response] = []
            unknown_took: list[float] = []

            async def unknown_call() -> None:
                started = time.monotonic()
                unknown.append(await _ping(url, issuer.token("rotated", resource=url)))
                unknown_took.append(time.monotonic() - started)

            async with anyio.create_task_group() as group:
                group.start_soon(unknown_call)
                # Once the fetch for "rotated" has begun:
                assert await anyio.to_thread.run_sync(issuer.wait_for_requests, "/jwks", 2, 10)
                started = time.monotonic()
                known = await _ping(url, issuer.token("known", resource=url))
                known_took = time.monotonic() - started
                still_fetching = not unknown
    assert known.status_code == 200
    assert known_took < 1.5
    assert still_fetching
    (refused,) = unknown
    assert refused.status_code == 401
    assert "signed by a key the authorization server does not publish" in refused.text
    assert unknown_took[0] < 8  # the fetch's deadline (3 s), not the trickle's end


async def test_introspection_that_never_answers_refuses_the_token_at_the_deadline(
    tmp_path: Path,
) -> None:
    path = write_agent(tmp_path / "a.agent.yaml")
    with HostileIssuer(introspection="hang") as issuer:
        settings = OAuthSettings(
            issuer=issuer.url,
            introspect=True,
            client_id="resource-server",
            client_secret="test-fixture-secret",
            timeout=1,
        )
        async with served_over_http(path, oauth=settings) as url:
            started = time.monotonic()
            refused = await _ping(url, "an-opaque-token")
            took = time.monotonic() - started
    assert refused.status_code == 401
    assert "could not be asked about it; try again" in refused.json()["error"]["message"]
    assert took < 5


def test_serve_tells_of_a_trickling_issuer_within_its_timeout(tmp_path: Path) -> None:
    agent = write_agent(tmp_path / "a.agent.yaml")
    with HostileIssuer(metadata="trickle", trickle_every=0.3) as issuer:
        started = time.monotonic()
        done = subprocess.run(
            serve_command(
                str(agent), "--http", "0", "--oauth-issuer", issuer.url, "--oauth-timeout", "1"
            ),
            capture_output=True,
            text=True,
            timeout=60,
            env=serve_env(),
            stdin=subprocess.DEVNULL,
            check=False,
        )
        took = time.monotonic() - started
    assert done.returncode == 2
    assert f"{issuer.url}{RFC8414}: no whole answer within 1 s" in done.stderr
    assert took < 30  # the interpreter's start, then two requests of 1 s
