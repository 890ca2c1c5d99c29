"""Stopping a served HTTP process: SIGTERM lets the calls under way finish, Ctrl-C does not wait.

Each test runs a real ``metaagent serve --http`` process on a free loopback port, with a fake
OpenAI server as the agent's model that answers after a delay, and signals the process while a
call waits for that answer.
"""

from __future__ import annotations

import json
import signal
import subprocess
import time
from contextlib import AbstractAsyncContextManager
from pathlib import Path

import anyio
import anyio.abc
import httpx2
import mcp_types as types
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from tests.fakes._script import delay, text
from tests.fakes.cli import metaagent
from tests.fakes.http_serving import HttpServeProcess, serve_env, serve_http_process
from tests.fakes.mcp_clients import write_agent
from tests.fakes.openai_server import FakeOpenAIServer

pytestmark = pytest.mark.anyio


def _serve(agent: Path, home: Path, grace: str) -> AbstractAsyncContextManager[HttpServeProcess]:
    """A ``serve --http --shutdown-grace GRACE`` process on a free loopback port."""
    env = serve_env(METAAGENT_HOME=str(home))
    return serve_http_process(agent, "--shutdown-grace", grace, env=env)


async def _wait_for_model_call(model: FakeOpenAIServer) -> None:
    assert await anyio.to_thread.run_sync(lambda: model.wait_for_requests(1, 15.0))


async def _ready_status(http: httpx2.AsyncClient, served: HttpServeProcess) -> int:
    return (await http.get(served.base + "/readyz")).status_code


def _new_call(request_id: int) -> bytes:
    return json.dumps(
        {
            "jsonrpc": "2.0",
            "id": request_id,
            "method": "tools/call",
            "params": {
                "name": "book_flight",
                "arguments": {"destination": "Rome"},
                "_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28"},
            },
        }
    ).encode()


@pytest.mark.parametrize("mode", ["legacy", "auto"])
async def test_a_call_under_way_finishes_after_sigterm_while_new_calls_are_refused(
    tmp_path: Path, mode: str
) -> None:
    with FakeOpenAIServer(responder=lambda body: delay(2.5, text("booked"))) as model:
        agent = write_agent(tmp_path / "a.agent.yaml", base_url=model.base_url)
        async with (
            _serve(agent, tmp_path / "home", "20") as served,
            httpx2.AsyncClient(timeout=10) as http,
            Client(streamable_http_client(served.url), mode=mode) as client,
        ):
            assert await _ready_status(http, served) == 200
            # The client checks a result against the tool's output schema, listing the tools
            # first if it has not yet: that request must not race the server's stop.
            await client.list_tools()
            results: list[types.CallToolResult] = []
            async with anyio.create_task_group() as group:

                async def call() -> None:
                    results.append(await client.call_tool("book_flight", {"destination": "Oslo"}))

                group.start_soon(call)
                await _wait_for_model_call(model)
                signalled = time.monotonic()
                served.process.send_signal(signal.SIGTERM)
                await served.said(b"shutting down: waiting for 1 request(s) under way")
                not_ready = await http.get(served.base + "/readyz")
                refused = await http.post(
                    served.url,
                    content=_new_call(99),
                    headers={
                        "content-type": "application/json",
                        "accept": "application/json, text/event-stream",
                        "mcp-protocol-version": "2026-07-28",
                    },
                )
            with anyio.fail_after(15):
                code = await served.process.wait()
            stopped = time.monotonic() - signalled
    assert (not_ready.status_code, not_ready.text) == (503, "not ready: shutting down\n")
    assert refused.status_code == 503
    assert refused.headers["retry-after"] == "1"
    assert refused.json()["id"] == 99
    assert "shutting down" in refused.json()["error"]["message"]
    [result] = results
    assert not result.is_error, result
    assert isinstance(result.content[0], types.TextContent)
    assert result.content[0].text == "booked"
    assert code == 0, served.text
    assert stopped < 15
    assert b"Traceback" not in served.log, served.text


async def _signalled_during_a_call(
    tmp_path: Path, grace: str, signum: signal.Signals
) -> tuple[int, float, HttpServeProcess]:
    """Send ``signum`` to a server while a call waits for a model that answers too late.

    Returns:
        The exit status, the seconds from the signal to the exit, and the served process.
    """
    with FakeOpenAIServer(responder=lambda body: delay(60, text("too late"))) as model:
        agent = write_agent(tmp_path / "a.agent.yaml", base_url=model.base_url)
        async with (
            _serve(agent, tmp_path / "home", grace) as served,
            Client(streamable_http_client(served.url), mode="auto") as client,
            anyio.create_task_group() as group,
        ):

            async def call() -> None:
                # The answer never comes: the call ends with the process.
                with pytest.raises(Exception):  # noqa: B017
                    await client.call_tool("book_flight", {"destination": "Oslo"})

            group.start_soon(call)
            await _wait_for_model_call(model)
            signalled = time.monotonic()
            served.process.send_signal(signum)
            with anyio.fail_after(20):
                code = await served.process.wait()
            stopped = time.monotonic() - signalled
    return code, stopped, served


async def test_a_call_longer_than_the_grace_is_cut_and_the_process_exits(tmp_path: Path) -> None:
    code, stopped, served = await _signalled_during_a_call(tmp_path, "1", signal.SIGTERM)
    assert code == 0, served.text
    assert 1 <= stopped < 10
    assert b"still under way after 1 s are cancelled" in served.log


async def test_ctrl_c_stops_without_waiting_for_the_grace(tmp_path: Path) -> None:
    code, stopped, served = await _signalled_during_a_call(tmp_path, "60", signal.SIGINT)
    assert code == 0, served.text
    assert stopped < 10


def test_shutdown_grace_takes_a_number_of_seconds_on_either_transport(tmp_path: Path) -> None:
    agent = write_agent(tmp_path / "a.agent.yaml")
    # Over stdio it bounds how long the requests read before the end of stdin may take.
    stdio = metaagent("serve", str(agent), "--shutdown-grace", "0", stdin=subprocess.DEVNULL)
    assert stdio.returncode == 0, stdio.stderr
    for value, said in (("soon", "expected a number of seconds, got 'soon'"), ("-1", "0 to 3600")):
        bad = metaagent("serve", str(agent), "--http", "0", "--shutdown-grace", value)
        assert bad.returncode == 2
        assert said in bad.stderr
