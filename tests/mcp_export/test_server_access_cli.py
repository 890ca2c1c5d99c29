"""``settings.access`` and ``metaagent serve``'s ``--rate-limit``, ``--calls-at-once`` and
``--tool-scope``: the spelling a person writes, served by the real command against the real
authorization server, refused with a reason when wrong, and shown by ``metaagent verify``."""

from __future__ import annotations

import re
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx2
import mcp_types as types
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client
from mcp.shared.exceptions import MCPError

from mcp_export.clients.verify import verify_export
from mcp_export.clients.verify_report import render_report
from mcp_export.server.limits import RATE_LIMITED
from tests.fakes._script import text
from tests.fakes.http_serving import serve_env, serve_http_process
from tests.fakes.mcp_clients import book_tool, serve_command, write_agent
from tests.fakes.oauth_server import JWT_CLIENT, SCOPE, AuthorizationServer
from tests.fakes.openai_server import FakeOpenAIServer

ACCESS = {"rateLimit": "1/min", "toolScopes": {"book_flight": "tools:book_flight"}}
TOOLS = [book_tool(), book_tool("check_weather", description="Says the weather.")]


@pytest.fixture(scope="module")
def issuer() -> Iterator[AuthorizationServer]:
    with AuthorizationServer() as server:
        yield server


def _agent(path: Path, access: dict[str, Any], base_url: str | None = None) -> Path:
    return write_agent(path, base_url=base_url, tools=TOOLS, settings={"access": access})


def _client(url: str, token: str) -> Client:
    headers = {"Authorization": f"Bearer {token}"}
    return Client(streamable_http_client(url, http_client=create_mcp_http_client(headers=headers)))


async def _weather(client: Client) -> str:
    result = await client.call_tool("check_weather", {"destination": "Oslo"})
    content = result.content[0]
    assert isinstance(content, types.TextContent)
    return content.text


def _serve(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        serve_command(*args),
        capture_output=True,
        text=True,
        timeout=60,
        env=serve_env(),
        stdin=subprocess.DEVNULL,
        check=False,
    )


@pytest.mark.anyio
async def test_the_agent_files_access_is_what_the_served_command_enforces(
    tmp_path: Path, issuer: AuthorizationServer
) -> None:
    with FakeOpenAIServer([text("Sunny."), text("Rain.")]) as model:
        agent = _agent(tmp_path / "a.agent.yaml", ACCESS, model.base_url)
        async with serve_http_process(
            agent, "--oauth-issuer", issuer.issuer, "--oauth-scope", SCOPE
        ) as served:
            token = issuer.token(JWT_CLIENT, resource=served.url)
            async with _client(served.url, token) as client:
                listed = [tool.name for tool in (await client.list_tools()).tools]
                first = await _weather(client)
                with pytest.raises(MCPError) as refused:
                    await _weather(client)
            async with httpx2.AsyncClient(timeout=10) as http:
                metrics = (await http.get(served.base + "/metrics")).text
    assert listed == ["check_weather"]
    assert first == "Sunny."
    assert refused.value.error.code == RATE_LIMITED
    assert "per 60 s" in refused.value.error.message
    assert re.search(r'^metaagent_caller_refusals_total\{reason="rate"\} 1\.0$', metrics, re.M)


@pytest.mark.anyio
async def test_the_command_line_overrides_the_agent_files_limit(
    tmp_path: Path, issuer: AuthorizationServer
) -> None:
    with FakeOpenAIServer([text("Sunny."), text("Rain.")]) as model:
        agent = _agent(tmp_path / "a.agent.yaml", ACCESS, model.base_url)
        async with serve_http_process(
            agent, "--oauth-issuer", issuer.issuer, "--rate-limit", "5/min"
        ) as served:
            token = issuer.token(JWT_CLIENT, resource=served.url)
            async with _client(served.url, token) as client:
                answers = [await _weather(client), await _weather(client)]
    assert answers == ["Sunny.", "Rain."]


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (["--rate-limit", "3/fortnight"], "expected CALLS/PERIOD such as 30/min"),
        (["--rate-limit", "0/min"], "allow at least 1 call per period"),
        (["--calls-at-once", "0"], "expected a whole number of calls, 1 or more"),
        (["--tool-scope", "book_flight"], "expected TOOL=SCOPE"),
        (["--tool-scope", "book_flight=tools:x", "--token", "t0ken"], "needs --oauth-issuer"),
    ],
)
def test_a_wrong_option_is_refused_with_what_to_write(
    tmp_path: Path, args: list[str], expected: str
) -> None:
    agent = _agent(tmp_path / "a.agent.yaml", {})
    done = _serve(str(agent), "--http", "0", *args)
    assert done.returncode == 2
    assert expected in done.stderr


def test_a_rate_limit_only_for_http_is_refused_over_stdio(tmp_path: Path) -> None:
    agent = _agent(tmp_path / "a.agent.yaml", {})
    done = _serve(str(agent), "--rate-limit", "5/min")
    assert done.returncode == 2
    assert "--rate-limit only applies with --http" in done.stderr


@pytest.mark.parametrize(
    ("access", "expected"),
    [
        ({"rateLimit": "often"}, "expected CALLS/PERIOD"),
        ({"toolScopes": {"book_hotel": "tools:x"}}, "names book_hotel, which the agent does not"),
        ({"callsAtOnce": 0}, "callsAtOnce"),
    ],
)
def test_a_wrong_access_setting_is_refused_at_start_up(
    tmp_path: Path, access: dict[str, Any], expected: str
) -> None:
    agent = _agent(tmp_path / "a.agent.yaml", access)
    done = _serve(str(agent), "--http", "0")
    assert done.returncode == 2
    assert expected in done.stderr


@pytest.mark.anyio
async def test_verify_shows_the_limits_and_the_tool_scopes(tmp_path: Path) -> None:
    access = ACCESS | {"callsAtOnce": 2}
    report = await verify_export(_agent(tmp_path / "a.agent.yaml", access), "json", timeout=30)
    (check,) = [c for c in report.checks if c.label == "access over HTTP"]
    assert check.ok
    assert check.detail == (
        "1 calls per 60 s, 2 at once per caller; book_flight needs tools:book_flight "
        "(scopes: OAuth callers only)"
    )
    assert "access over HTTP" in render_report(report)


@pytest.mark.anyio
async def test_verify_names_a_scope_for_a_tool_the_agent_does_not_define(tmp_path: Path) -> None:
    access = {"toolScopes": {"book_hotel": "tools:book_hotel"}}
    report = await verify_export(_agent(tmp_path / "a.agent.yaml", access), "json", timeout=30)
    (check,) = [c for c in report.checks if c.label == "access over HTTP"]
    assert not check.ok
    assert "names book_hotel, which the agent does not define" in check.detail
