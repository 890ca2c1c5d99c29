"""``metaagent serve --http --oauth-…`` as a person runs it: the flags, their errors, a real issuer.

The server runs as ``python -m mcp_export serve`` in a child process; the authorization server
is panva's oidc-provider (``tests.fakes.oauth_server``).
"""

from __future__ import annotations

import subprocess
from collections.abc import Iterator
from pathlib import Path

import httpx2
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client

from tests.fakes.http_serving import serve_env, serve_http_process
from tests.fakes.mcp_clients import serve_command, write_agent
from tests.fakes.oauth_server import (
    JWT_CLIENT,
    OPAQUE_CLIENT,
    RESOURCE_SERVER,
    SCOPE,
    AuthorizationServer,
)
from tests.fakes.ports import refused_origin

pytestmark = pytest.mark.anyio

SECRET_ENV = "METAAGENT_OAUTH_CLIENT_SECRET"


@pytest.fixture(scope="module")
def issuer() -> Iterator[AuthorizationServer]:
    with AuthorizationServer() as server:
        yield server


def _serve(
    agent: Path, *args: str, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        serve_command(str(agent), *args),
        capture_output=True,
        text=True,
        timeout=60,
        env=env or serve_env(),
        stdin=subprocess.DEVNULL,
        check=False,
    )


@pytest.mark.parametrize(
    ("args", "env", "expected"),
    [
        (
            ["--http", "0", "--token", "t0ken", "--oauth-issuer", "https://id.example"],
            {},
            "--token and --oauth-issuer exclude each other",
        ),
        (
            ["--http", "0", "--oauth-issuer", "https://id.example"],
            {"METAAGENT_TOKEN": "t0ken"},
            "unset the METAAGENT_TOKEN environment variable",
        ),
        (
            ["--http", "0", "--oauth-scope", SCOPE],
            {},
            "--oauth-scope only applies with --oauth-issuer",
        ),
        (["--oauth-issuer", "https://id.example"], {}, "--oauth-issuer only applies with --http"),
        (["--stateless"], {}, "--stateless only applies with --http"),
        (["--http", "0", "--oauth-issuer", "id.example"], {}, "expected an http(s) URL"),
        (
            ["--http", "0", "--oauth-issuer", "https://id.example", "--oauth-introspect"],
            {},
            "--oauth-introspect needs this server's client credentials",
        ),
        (
            ["--http", "0.0.0.0:0", "--oauth-issuer", "https://id.example"],
            {},
            "--oauth-resource is needed when serving on 0.0.0.0",
        ),
        (["--store", "x.sqlite3", "--no-history"], {}, "--store and --no-history exclude"),
        (
            ["--http", "0", "--oauth-timeout", "5"],
            {},
            "--oauth-timeout only applies with --oauth-issuer",
        ),
    ],
)
def test_wrong_flags_are_refused_with_one_clear_line(
    tmp_path: Path, args: list[str], env: dict[str, str], expected: str
) -> None:
    agent = write_agent(tmp_path / "a.agent.yaml")
    done = _serve(agent, *args, env=serve_env(**env))
    assert done.returncode == 2
    assert done.stderr.startswith("metaagent serve: ")
    assert expected in done.stderr
    assert done.stderr.count("\n") == 1
    assert "t0ken" not in done.stderr
    assert done.stdout == ""


def test_an_unreachable_issuer_is_refused_at_start_up(tmp_path: Path) -> None:
    agent = write_agent(tmp_path / "a.agent.yaml")
    with refused_origin() as nowhere:
        done = _serve(agent, "--http", "0", "--oauth-issuer", nowhere)
    assert done.returncode == 2
    assert done.stderr.startswith(f"metaagent serve: --oauth-issuer {nowhere}: cannot read")
    assert "check the URL and that the server is running" in done.stderr
    assert "Traceback" not in done.stderr


def _client(url: str, token: str) -> Client:
    headers = {"Authorization": f"Bearer {token}"}
    return Client(streamable_http_client(url, http_client=create_mcp_http_client(headers=headers)))


async def test_the_command_serves_a_token_of_the_issuer_and_refuses_a_missing_one(
    tmp_path: Path, issuer: AuthorizationServer
) -> None:
    agent = write_agent(tmp_path / "a.agent.yaml")
    args = ("--oauth-issuer", issuer.issuer, "--oauth-scope", SCOPE, "--log-level", "info")
    async with serve_http_process(agent, *args) as served:
        url = served.url
        token = issuer.token(JWT_CLIENT, resource=url)
        async with _client(url, token) as client:
            (tool,) = (await client.list_tools()).tools
        async with httpx2.AsyncClient(timeout=10) as http:
            refused = await http.post(url, json={})
            metadata = await http.get(
                url.replace("/mcp", "/.well-known/oauth-protected-resource/mcp")
            )
    assert tool.name == "book_flight"
    assert refused.status_code == 401
    assert "resource_metadata=" in refused.headers["www-authenticate"]
    assert metadata.json()["authorization_servers"] == [issuer.issuer]
    assert token not in served.text


async def test_the_command_introspects_with_the_secret_from_the_environment(
    tmp_path: Path, issuer: AuthorizationServer
) -> None:
    agent = write_agent(tmp_path / "a.agent.yaml")
    args = (
        "--oauth-issuer",
        issuer.issuer,
        "--oauth-introspect",
        "--oauth-client-id",
        RESOURCE_SERVER.client_id,
        "--log-level",
        "debug",
    )
    env = serve_env(**{SECRET_ENV: RESOURCE_SERVER.secret})
    async with serve_http_process(agent, *args, env=env) as served:
        url = served.url
        token = issuer.token(OPAQUE_CLIENT, resource=url)
        async with _client(url, token) as client:
            (tool,) = (await client.list_tools()).tools
        async with httpx2.AsyncClient(timeout=10) as http:
            refused = await http.post(url, json={}, headers={"Authorization": "Bearer nope"})
    log = served.text
    assert tool.name == "book_flight"
    assert refused.status_code == 401
    assert RESOURCE_SERVER.secret not in log
    assert token not in log
