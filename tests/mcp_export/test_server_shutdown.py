"""Stopping a served HTTP process: SIGTERM lets the calls under way finish, Ctrl-C does not wait.

Each test runs a real ``metaagent serve --http`` process on a free loopback port, with a fake
OpenAI server as the agent's model that answers after a delay, and signals the process while a
call waits for that answer.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
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
from tests.fakes.mcp_clients import serve_command, write_agent
from tests.fakes.openai_server import FakeOpenAIServer

pytestmark = pytest.mark.anyio

ANNOUNCED = b"serving MCP over streamable HTTP at "


@dataclass
class _Served:
    process: anyio.abc.Process
    url: str
    log: bytearray = field(default_factory=bytearray)
    grew: anyio.Event = field(default_factory=anyio.Event)

    @property
    def base(self) -> str:
        return self.url.removesuffix("/mcp")

    async def said(self, words: bytes) -> None:
        """Wait (10 s at most) until the process has logged ``words``."""
        with anyio.fail_after(10):
            while words not in self.log:
                await self.grew.wait()


@asynccontextmanager
async def _serve(agent: Path, home: Path, *args: str) -> AsyncIterator[_Served]:
    """A ``serve --http`` process on a free loopback port; its stderr is kept in ``log``."""
    command = serve_command(str(agent), "--http", "127.0.0.1:0", *args)
    env = {k: v for k, v in os.environ.items() if k != "METAAGENT_TOKEN"}
    env["METAAGENT_HOME"] = str(home)
    async with await anyio.open_process(command, env=env, stdin=subprocess.DEVNULL) as process:
        assert process.stderr is not None
        log = bytearray()
        try:
            with anyio.fail_after(30):
                async for chunk in process.stderr:
                    log += chunk
                    if ANNOUNCED in log and b"/mcp" in log.split(ANNOUNCED, 1)[1]:
                        break
            assert ANNOUNCED in log, log.decode(errors="replace")
            url = log.split(ANNOUNCED, 1)[1].split()[0].decode()
            served = _Served(process, url, log)
            async with anyio.create_task_group() as group:

                async def keep_log() -> None:
                    assert process.stderr is not None
                    async for more in process.stderr:
                        served.log += more
                        served.grew.set()
                        served.grew = anyio.Event()

                group.start_soon(keep_log)
                yield served
                group.cancel_scope.cancel()
        finally:
            if process.returncode is None:
                process.kill()
                with anyio.move_on_after(10):
                    await process.wait()


async def _wait_for_model_call(model: FakeOpenAIServer) -> None:
    assert await anyio.to_thread.run_sync(lambda: model.wait_for_requests(1, 15.0))


async def _ready_status(http: httpx2.AsyncClient, served: _Served) -> int:
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
            _serve(agent, tmp_path / "home", "--shutdown-grace", "20") as served,
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
    assert code == 0, served.log.decode(errors="replace")
    assert stopped < 15
    assert b"Traceback" not in served.log, served.log.decode(errors="replace")


async def test_a_call_longer_than_the_grace_is_cut_and_the_process_exits(tmp_path: Path) -> None:
    with FakeOpenAIServer(responder=lambda body: delay(60, text("too late"))) as model:
        agent = write_agent(tmp_path / "a.agent.yaml", base_url=model.base_url)
        async with (
            _serve(agent, tmp_path / "home", "--shutdown-grace", "1") as served,
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
            served.process.send_signal(signal.SIGTERM)
            with anyio.fail_after(20):
                code = await served.process.wait()
            stopped = time.monotonic() - signalled
    assert code == 0, served.log.decode(errors="replace")
    assert 1 <= stopped < 10
    assert b"still under way after 1 s are cancelled" in served.log


async def test_ctrl_c_stops_without_waiting_for_the_grace(tmp_path: Path) -> None:
    with FakeOpenAIServer(responder=lambda body: delay(60, text("too late"))) as model:
        agent = write_agent(tmp_path / "a.agent.yaml", base_url=model.base_url)
        async with (
            _serve(agent, tmp_path / "home", "--shutdown-grace", "60") as served,
            Client(streamable_http_client(served.url), mode="auto") as client,
            anyio.create_task_group() as group,
        ):

            async def call() -> None:
                with pytest.raises(Exception):  # noqa: B017
                    await client.call_tool("book_flight", {"destination": "Oslo"})

            group.start_soon(call)
            await _wait_for_model_call(model)
            signalled = time.monotonic()
            served.process.send_signal(signal.SIGINT)
            with anyio.fail_after(20):
                code = await served.process.wait()
            stopped = time.monotonic() - signalled
    assert code == 0, served.log.decode(errors="replace")
    assert stopped < 10


def test_shutdown_grace_needs_http_and_a_number_of_seconds(tmp_path: Path) -> None:
    agent = write_agent(tmp_path / "a.agent.yaml")
    stdio = metaagent("serve", str(agent), "--shutdown-grace", "0", stdin=subprocess.DEVNULL)
    assert stdio.returncode == 2
    assert "--shutdown-grace only applies with --http" in stdio.stderr
    for value, said in (("soon", "expected a number of seconds, got 'soon'"), ("-1", "0 to 3600")):
        bad = metaagent("serve", str(agent), "--http", "0", "--shutdown-grace", value)
        assert bad.returncode == 2
        assert said in bad.stderr
