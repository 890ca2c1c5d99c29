"""The served MCP server over streamable HTTP, for tests: in this process or as ``metaagent serve``.

- ``served_over_http``: the agent file served by this process (uvicorn on a free loopback port)
  with the settings given; yields the ``/mcp`` URL.
- ``serve_http_process``: ``python -m mcp_export serve AGENT --http 127.0.0.1:0 ARGS…`` in a
  child process, as a person runs it; yields an ``HttpServeProcess``: the URL it announced, its
  stderr as it grows, and the process itself (for the tests that signal it).

Both stop the server when the block ends, and bound every wait::

    async with served_over_http(path, token=TOKEN) as url:
        ...
    async with serve_http_process(agent, "--stateless", env=serve_env()) as served:
        await served.said(b"answers again")
        served.process.send_signal(signal.SIGTERM)
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import AsyncIterator, Mapping, Sequence
from contextlib import asynccontextmanager, suppress
from dataclasses import dataclass, field
from pathlib import Path

import anyio
import anyio.abc
from starlette.routing import BaseRoute

from mcp_export.server.agent_server import AgentServer, load_served_agents
from mcp_export.server.http import HttpAddress, serve_http
from mcp_export.server.limits import Limits
from mcp_export.server.oauth import CLIENT_SECRET_ENV, OAuthSettings
from mcp_export.server.ops import ServerMetrics, ops_routes
from mcp_export.server.scopes import ToolScopes
from tests.fakes.mcp_clients import REPO, serve_command

__all__ = [
    "ANNOUNCED",
    "HttpServeProcess",
    "serve_env",
    "serve_http_process",
    "served_over_http",
]

ANNOUNCED = b"serving MCP over streamable HTTP at "
"""What ``serve --http`` writes to stderr before the URL it listens at."""


def serve_env(**extra: str) -> dict[str, str]:
    """This process's environment without a served token or an OAuth secret, plus ``extra``."""
    dropped = ("METAAGENT_TOKEN", CLIENT_SECRET_ENV)
    return {k: v for k, v in os.environ.items() if k not in dropped} | extra


@asynccontextmanager
async def served_over_http(
    path: Path,
    *,
    token: str | None = None,
    oauth: OAuthSettings | None = None,
    stateless: bool = False,
    extra_routes: Sequence[BaseRoute] = (),
    history: bool = False,
    limits: Limits | None = None,
    tool_scopes: ToolScopes | None = None,
    metrics: bool = False,
) -> AsyncIterator[str]:
    """Serve the agent file at ``path`` over HTTP on a free loopback port; yields its URL.

    Args:
        path: the agent file.
        token: the bearer token clients must send.
        oauth: check OAuth access tokens from this authorization server instead.
        stateless: serve every request on its own, without sessions.
        extra_routes: more routes, served without a token.
        history: keep the calls' history (in ``METAAGENT_HOME``).
        limits: each caller's limits (``server.limits``).
        tool_scopes: the scope each restricted tool needs (``server.scopes``).
        metrics: keep the server's metrics and serve ``/metrics`` (with ``extra_routes``).

    Raises:
        OAuthError: (in an exception group) the server refused to start with ``oauth``.
        TimeoutError: the server did not listen within 20 s.
    """
    ready = anyio.Event()
    url: list[str] = []

    def on_ready(endpoint: str) -> None:
        url.append(endpoint)
        ready.set()

    async with (
        AgentServer(load_served_agents([path]), history=history, tool_scopes=tool_scopes) as served,
        anyio.create_task_group() as group,
    ):
        routes = list(extra_routes)
        if metrics:
            served.metrics = ServerMetrics(served.catalogue)
            routes += ops_routes(served.metrics)
        group.start_soon(
            lambda: serve_http(
                served.server,
                HttpAddress("127.0.0.1", 0),
                token=token,
                oauth=oauth,
                on_ready=on_ready,
                stateless=stateless,
                extra_routes=routes,
                limits=limits,
                on_refused=served.metrics.refused if served.metrics else None,
            )
        )
        with anyio.fail_after(20):
            await ready.wait()
        try:
            yield url[0]
        finally:
            group.cancel_scope.cancel()


@dataclass
class HttpServeProcess:
    """A running ``serve --http`` child: its process, its announced URL and its stderr."""

    process: anyio.abc.Process
    url: str = ""
    log: bytearray = field(default_factory=bytearray)
    """Everything the process wrote to stderr so far (read until it ends)."""
    _grew: anyio.Event = field(default_factory=anyio.Event)

    @property
    def base(self) -> str:
        """The URL without its ``/mcp`` path: where ``/readyz`` and ``/metrics`` are."""
        return self.url.removesuffix("/mcp")

    @property
    def text(self) -> str:
        """The log so far, decoded."""
        return self.log.decode(errors="replace")

    async def said(self, words: bytes) -> None:
        """Wait until the process has logged ``words``.

        Raises:
            TimeoutError: not within 10 s.
        """
        with anyio.fail_after(10):
            while words not in self.log:
                await self._grew.wait()

    def _heard(self, chunk: bytes) -> None:
        self.log += chunk
        grew, self._grew = self._grew, anyio.Event()
        grew.set()


def _announced_url(log: bytearray) -> str | None:
    """The URL of the first complete announcement line in ``log``, or None."""
    if ANNOUNCED not in log:
        return None
    rest = log.split(ANNOUNCED, 1)[1]
    return rest.split()[0].decode() if b"\n" in rest else None


async def _stop(process: anyio.abc.Process) -> None:
    """SIGTERM, then SIGKILL if the process outlives 15 s; waits for it (bounded)."""
    if process.returncode is None:
        with suppress(ProcessLookupError):
            process.terminate()
        with anyio.move_on_after(15):
            await process.wait()
    if process.returncode is None:
        with suppress(ProcessLookupError):
            process.kill()
        with anyio.move_on_after(10):
            await process.wait()


@asynccontextmanager
async def serve_http_process(
    agent: Path, *args: str, env: Mapping[str, str] | None = None, within: float = 30.0
) -> AsyncIterator[HttpServeProcess]:
    """``serve AGENT --http 127.0.0.1:0 ARGS``; yields it once it announced its URL.

    Its stderr is read all along (the pipe never fills) until the process ends; the block's end
    stops a process still running (SIGTERM, then SIGKILL).

    Args:
        agent: the agent file to serve.
        args: more ``serve`` arguments.
        env: the child's environment (default: ``serve_env()``).
        within: the seconds the process may take to announce its URL.

    Raises:
        AssertionError: no URL announced within ``within`` seconds (the log is in the message).
    """
    command = serve_command(str(agent), "--http", "127.0.0.1:0", *args)
    environment = dict(env) if env is not None else serve_env()
    async with (
        await anyio.open_process(
            command, env=environment, cwd=REPO, stdin=subprocess.DEVNULL
        ) as process,
        anyio.create_task_group() as group,
    ):
        served = HttpServeProcess(process)
        ended = anyio.Event()

        async def read() -> None:
            assert process.stderr is not None
            try:
                async for chunk in process.stderr:
                    served._heard(chunk)
            finally:
                ended.set()
                served._heard(b"")

        group.start_soon(read)
        try:
            with anyio.move_on_after(within):
                while _announced_url(served.log) is None and not ended.is_set():
                    await served._grew.wait()
            url = _announced_url(served.log)
            assert url is not None, f"no URL announced within {within:g} s:\n{served.text}"
            served.url = url
            yield served
        finally:
            await _stop(process)
            with anyio.move_on_after(10):
                await ended.wait()
            group.cancel_scope.cancel()
