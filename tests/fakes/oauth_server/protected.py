"""The served MCP server as an OAuth protected resource, for tests: in this process or as ``serve``.

- ``protected_in_process``: the agent served over streamable HTTP by this process (uvicorn on a
  free loopback port) with the OAuth settings given; yields the ``/mcp`` URL.
- ``protected_process``: ``python -m mcp_export serve AGENT --http 127.0.0.1:0 ARGS…`` in a child
  process, as a person runs it; yields the ``/mcp`` URL it logs and its stderr so far.

Both stop the server when the block ends, and bound every wait::

    async with protected_process(agent, "--oauth-issuer", issuer.issuer, env=env) as (url, log):
        ...
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import AsyncIterator, Mapping
from contextlib import asynccontextmanager
from pathlib import Path

import anyio

from mcp_export.server.agent_server import AgentServer, load_served_agents
from mcp_export.server.http import HttpAddress, serve_http
from mcp_export.server.oauth import CLIENT_SECRET_ENV, OAuthSettings
from tests.fakes.mcp_clients import REPO, serve_command

__all__ = ["protected_in_process", "protected_process", "serve_env"]


def serve_env(**extra: str) -> dict[str, str]:
    """This process's environment without a served token or an OAuth secret, plus ``extra``."""
    dropped = ("METAAGENT_TOKEN", CLIENT_SECRET_ENV)
    return {k: v for k, v in os.environ.items() if k not in dropped} | extra


@asynccontextmanager
async def protected_in_process(path: Path, oauth: OAuthSettings) -> AsyncIterator[str]:
    """Serve the agent file at ``path`` over HTTP as a protected resource; yields its URL.

    Raises:
        OAuthError: (in an exception group) the server refused to start with ``oauth``.
    """
    ready = anyio.Event()
    url: list[str] = []

    def on_ready(endpoint: str) -> None:
        url.append(endpoint)
        ready.set()

    async with (
        AgentServer(load_served_agents([path]), history=False) as served,
        anyio.create_task_group() as group,
    ):
        group.start_soon(
            lambda: serve_http(
                served.server,
                HttpAddress("127.0.0.1", 0),
                token=None,
                oauth=oauth,
                on_ready=on_ready,
            )
        )
        with anyio.fail_after(20):
            await ready.wait()
        try:
            yield url[0]
        finally:
            group.cancel_scope.cancel()


@asynccontextmanager
async def protected_process(
    agent: Path, *args: str, env: Mapping[str, str]
) -> AsyncIterator[tuple[str, bytearray]]:
    """``serve AGENT --http 127.0.0.1:0 ARGS``; yields its URL and its stderr (read until it ends).

    Raises:
        AssertionError: the server logged no URL within 30 s (the log is in the message).
    """
    command = serve_command(str(agent), "--http", "127.0.0.1:0", *args)
    seen = bytearray()
    started = anyio.Event()
    async with (
        await anyio.open_process(
            command, env=dict(env), cwd=REPO, stdin=subprocess.DEVNULL
        ) as process,
        anyio.create_task_group() as group,
    ):

        async def read() -> None:
            assert process.stderr is not None
            async for chunk in process.stderr:
                seen.extend(chunk)
                if b"/mcp\n" in seen:
                    started.set()
            started.set()

        group.start_soon(read)
        with anyio.fail_after(30):
            await started.wait()
        log = seen.decode()
        assert "serving MCP over streamable HTTP at " in log, log
        url = log.split("streamable HTTP at ", 1)[1].split()[0]
        try:
            yield url, seen
        finally:
            process.terminate()
            with anyio.fail_after(15):
                await process.wait()
