"""One live connection to one MCP tool server of an agent, owned by its own task.

A connection made with the ``mcp`` client opens anyio cancel scopes and task groups that must be
closed by the task that opened them. So each server gets an *owner task* that enters
``async with Client(...)``, publishes the connected client, and waits until it is asked to stop or
the connection is lost; every other task sends its requests through the published client (the SDK's
dispatcher correlates concurrent requests, so sharing one client is safe).

The server is started lazily on first use, once (a lock per server keeps concurrent first uses from
starting it twice), and restarted on the next use after it died. A stdio server's stderr goes
through a pipe into a small ring buffer, so a failure can show what the server said before it went.
"""

from __future__ import annotations

import asyncio
import logging
import os
import threading
import time
from collections.abc import AsyncIterator, Callable, Mapping
from contextlib import AsyncExitStack, asynccontextmanager
from pathlib import Path
from types import TracebackType
from typing import Any, Literal, TextIO

import anyio
import mcp_types as types
from mcp import Client
from mcp.client.sse import sse_client
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client
from mcp.shared.exceptions import MCPError
from mcp_types import CONNECTION_CLOSED

from mcp_export._errors import ExportError, ToolServerError
from schema_types._agent import McpServerConfig
from schema_types._errors import SecretError
from schema_types._secrets import resolve_secret

__all__ = ["ProtocolMode", "ServerConnection", "StderrTail", "describe_error"]

logger = logging.getLogger(__name__)

ProtocolMode = Literal["auto", "legacy"]

# Enough for a traceback's last frames; a chatty server must not grow memory without bound.
STDERR_TAIL_BYTES = 4096
# How long to wait, after a server stopped, for the rest of its stderr to arrive.
_STDERR_SETTLE_SECONDS = 1.0
# Bounds the stop of one server: the SDK's stdio shutdown takes at most ~6 s (stdin close, 2 s,
# SIGTERM, 2 s, SIGKILL, 2 s); past that the owner task is cancelled.
_STOP_TIMEOUT_SECONDS = 8.0


class StderrTail:
    """Collects a child process's stderr through a pipe and keeps its last bytes.

    A daemon thread drains the pipe (portable, and independent of the event loop's support for
    pipes), so the server can never block on a full stderr pipe.
    """

    def __init__(self, name: str, limit: int = STDERR_TAIL_BYTES) -> None:
        read_fd, write_fd = os.pipe()
        self._limit = limit
        self._buffer = bytearray()
        self._lock = threading.Lock()
        self._eof = threading.Event()
        self._read_file = os.fdopen(read_fd, "rb", buffering=0)
        self.write_file: TextIO | None = os.fdopen(write_fd, "w")
        self._thread = threading.Thread(
            target=self._drain, name=f"stderr of MCP server {name}", daemon=True
        )
        self._thread.start()

    def _drain(self) -> None:
        try:
            while chunk := self._read_file.read(65536):
                with self._lock:
                    self._buffer += chunk
                    del self._buffer[: -self._limit]
        except OSError:
            pass
        finally:
            self._read_file.close()
            self._eof.set()

    def release_write_end(self) -> None:
        """Close this process's copy of the pipe's write end (the child keeps its own).

        Until then the reader would never see the end of the stream.
        """
        if self.write_file is not None:
            self.write_file.close()
            self.write_file = None

    async def settle(self) -> None:
        """Wait (bounded) until every writer closed the pipe, i.e. all output has arrived."""
        self.release_write_end()
        if not self._eof.is_set():
            await anyio.to_thread.run_sync(self._eof.wait, _STDERR_SETTLE_SECONDS)

    def text(self) -> str:
        """The last bytes the server wrote to stderr, decoded."""
        with self._lock:
            data = bytes(self._buffer)
        return data.decode("utf-8", errors="replace").strip()


def describe_error(exc: BaseException) -> str:
    """A one-line reason for an exception, looking inside exception groups."""
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        # The first leaf is the cause; the others are usually the teardown it triggered.
        exc = exc.exceptions[0]
    if isinstance(exc, ExportError):
        return str(exc)
    if isinstance(exc, FileNotFoundError):
        return f"command not found: {exc.filename or exc}"
    if isinstance(exc, MCPError):
        if exc.error.code == CONNECTION_CLOSED:
            return "the server closed the connection (it exited, or its output ended)"
        return exc.error.message
    text = str(exc).strip()
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


class _WatchedReadStream:
    """A read stream that reports when it ends: the server exited or the connection broke."""

    def __init__(self, inner: Any, on_end: Callable[[], None]) -> None:
        self._inner = inner
        self._on_end = on_end

    def __getattr__(self, name: str) -> Any:
        # ``last_context`` and any other duck-typed attribute the dispatcher reads.
        return getattr(self._inner, name)

    async def receive(self) -> Any:
        try:
            return await self._inner.receive()
        except (anyio.EndOfStream, anyio.ClosedResourceError, anyio.BrokenResourceError):
            self._on_end()
            raise

    async def aclose(self) -> None:
        await self._inner.aclose()

    def __aiter__(self) -> _WatchedReadStream:
        return self

    async def __anext__(self) -> Any:
        try:
            return await self.receive()
        except anyio.EndOfStream:
            raise StopAsyncIteration from None

    async def __aenter__(self) -> _WatchedReadStream:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc_val: BaseException | None,
        exc_tb: TracebackType | None,
    ) -> None:
        await self.aclose()


def _resolve_values(values: Mapping[str, str]) -> dict[str, str]:
    """``env``/``headers`` values with ``env://`` and ``keyring://`` references resolved.

    Raises:
        ToolServerError: A reference does not resolve (the message names it).
    """
    try:
        return {key: resolve_secret(value, key_name=key) for key, value in values.items()}
    except SecretError as exc:
        raise ToolServerError(str(exc)) from exc


class ServerConnection:
    """One MCP server of an agent: started lazily, shared, restarted after it died.

    Args:
        name: The server's name in the agent file (used in messages).
        config: How to reach it.
        base_dir: The agent file's directory; a relative ``cwd`` or command path is taken from it,
            and a stdio server without ``cwd`` runs there.
        connect_timeout: Seconds allowed for start plus handshake.
        mode: ``auto`` (discover the protocol era, fall back to the initialize handshake) or
            ``legacy`` (initialize handshake only).
    """

    def __init__(
        self,
        name: str,
        config: McpServerConfig,
        *,
        base_dir: Path | None = None,
        connect_timeout: float = 30.0,
        mode: ProtocolMode = "auto",
    ) -> None:
        self.name = name
        self.config = config
        self.base_dir = base_dir
        self.connect_timeout = connect_timeout
        self.mode: ProtocolMode = mode
        self.last_error: str | None = None
        self.starts = 0
        self.connect_ms: float | None = None
        self.tools: list[types.Tool] | None = None
        self._lock = anyio.Lock()
        self._client: Client | None = None
        self._task: asyncio.Task[None] | None = None
        self._scope: anyio.CancelScope | None = None
        self._wake: anyio.Event | None = None
        self._ready: anyio.Event | None = None
        self._stopped: anyio.Event | None = None
        self._start_error: BaseException | None = None
        self._lost = False
        self._closed = False
        self._stderr: StderrTail | None = None

    @property
    def alive(self) -> bool:
        """Whether the server is connected, its tools listed, and the connection not lost."""
        return self._client is not None and self.tools is not None and not self._lost

    def stderr_text(self) -> str:
        """The last stderr output of the current (or last) server process."""
        return self._stderr.text() if self._stderr is not None else ""

    async def client(self) -> Client:
        """The connected client, starting (or restarting) the server if needed.

        Raises:
            ToolServerError: The server could not be started (the message holds the reason and
                the server's stderr tail), or the toolbox was closed.
        """
        if self.alive:
            assert self._client is not None
            return self._client
        async with self._lock:
            if self._closed:
                raise ToolServerError(f"the MCP server '{self.name}' was shut down with its agent")
            if self.alive:
                assert self._client is not None
                return self._client
            if self._task is not None:
                await self._stop_owner()
            return await self._start()

    async def _start(self) -> Client:
        self._lost = False
        self._start_error = None
        self._client = None
        self.tools = None
        self._wake, self._ready, self._stopped = anyio.Event(), anyio.Event(), anyio.Event()
        self.starts += 1
        started = time.perf_counter()
        self._task = asyncio.create_task(self._own(), name=f"MCP server {self.name}")
        try:
            with anyio.fail_after(self.connect_timeout):
                await self._ready.wait()
        except TimeoutError:
            await self._stop_owner()
            reason = f"no answer within {self.connect_timeout:g} s"
            raise self._failure(f"could not start: {reason}") from None
        except BaseException:
            # The caller was cancelled mid-start: do not leave a half-started server behind.
            with anyio.CancelScope(shield=True):
                await self._stop_owner()
            raise
        if self._client is None:
            error = self._start_error
            with anyio.CancelScope(shield=True):
                await self._stop_owner()
            reason = describe_error(error) if error is not None else "it stopped while starting"
            raise self._failure(f"could not start: {reason}") from error
        self.connect_ms = (time.perf_counter() - started) * 1000
        client = self._client
        try:
            with anyio.fail_after(self.connect_timeout):
                self.tools = await self._list_all_tools(client)
        except BaseException as exc:
            # Published only with its tool list: a cancelled listing must not leave it half-up.
            with anyio.CancelScope(shield=True):
                await self._stop_owner()
            if not isinstance(exc, Exception):
                raise
            timed_out = isinstance(exc, TimeoutError)
            reason = "tools/list timed out" if timed_out else describe_error(exc)
            raise self._failure(f"started but could not list its tools: {reason}") from exc
        self.last_error = None
        logger.info("MCP server %s connected in %.0f ms", self.name, self.connect_ms)
        return client

    @staticmethod
    async def _list_all_tools(client: Client) -> list[types.Tool]:
        tools: list[types.Tool] = []
        cursor: str | None = None
        for _ in range(100):  # a paginator that never ends must not hang the start
            page = await client.list_tools(cursor=cursor)
            tools.extend(page.tools)
            cursor = page.next_cursor
            if cursor is None:
                break
        return tools

    def _failure(self, what: str) -> ToolServerError:
        message = f"the MCP server '{self.name}' {what}"
        tail = self.stderr_text()
        if tail:
            message += f"\nits stderr ends with:\n{tail}"
        self.last_error = message
        return ToolServerError(message)

    async def failure_message(self, what: str) -> str:
        """``what`` about this server, followed by its stderr tail once the process is gone."""
        with anyio.CancelScope(shield=True), anyio.move_on_after(_STOP_TIMEOUT_SECONDS):
            if self._stopped is not None:
                await self._stopped.wait()
        return str(self._failure(what))

    async def wait_stopped(self) -> None:
        """Wait until the current server connection has ended (returns at once if none runs)."""
        if self._task is not None and self._stopped is not None:
            await self._stopped.wait()

    def mark_lost(self) -> None:
        """Treat the connection as broken: the owner tears it down, the next use restarts it."""
        self._lost = True
        if self._wake is not None:
            self._wake.set()

    async def _own(self) -> None:
        assert self._wake is not None and self._ready is not None and self._stopped is not None
        wake, ready, stopped = self._wake, self._ready, self._stopped
        this = asyncio.current_task()
        try:
            # Cancelled through this scope (not Task.cancel) so the SDK's shielded shutdown of
            # the server process runs under anyio's rules.
            with anyio.CancelScope() as self._scope:
                async with Client(self._transport(), mode=self.mode) as client:
                    self._client = client
                    ready.set()
                    await wake.wait()
        except BaseException as exc:
            self._start_error = exc
            if ready.is_set():
                reason = describe_error(exc)
                logger.warning("MCP server %s: connection ended: %s", self.name, reason)
            else:
                logger.debug("MCP server %s failed to start", self.name, exc_info=True)
            if isinstance(exc, asyncio.CancelledError):
                raise
        finally:
            if self._task is this:  # a stale owner must not clear its successor's state
                self._lost = True
                self._client = None
            if self._stderr is not None:
                with anyio.CancelScope(shield=True):
                    await self._stderr.settle()
            ready.set()
            stopped.set()

    def _transport(self) -> Any:
        """The transport context manager for this server's type."""
        config = self.config

        def on_end() -> None:
            self.mark_lost()

        @asynccontextmanager
        async def watched(inner: Any) -> AsyncIterator[Any]:
            async with inner as (read_stream, write_stream):
                yield _WatchedReadStream(read_stream, on_end), write_stream

        if config.type == "stdio":
            return self._stdio_transport(watched)
        assert config.url is not None  # checked by McpServerConfig
        headers = _resolve_values(config.headers)
        if config.type == "sse":
            return watched(sse_client(config.url, headers=headers))
        return watched(self._http_transport(config.url, headers))

    @asynccontextmanager
    async def _http_transport(self, url: str, headers: dict[str, str]) -> AsyncIterator[Any]:
        async with (
            create_mcp_http_client(headers=headers) as http,
            streamable_http_client(url, http_client=http) as streams,
        ):
            yield streams

    @asynccontextmanager
    async def _stdio_transport(self, watched: Any) -> AsyncIterator[Any]:
        config = self.config
        assert config.command is not None
        env = {**os.environ, **_resolve_values(config.env)}
        cwd = self._working_directory()
        command = config.command
        if os.sep in command and not os.path.isabs(command) and cwd is not None:
            command = str(cwd / command)
        params = StdioServerParameters(command=command, args=config.args, env=env, cwd=cwd)
        self._stderr = tail = StderrTail(self.name)
        assert tail.write_file is not None
        async with AsyncExitStack() as stack:
            try:
                streams = await stack.enter_async_context(
                    watched(stdio_client(params, errlog=tail.write_file))
                )
            finally:
                tail.release_write_end()
            yield streams

    def _working_directory(self) -> Path | None:
        cwd = Path(self.config.cwd).expanduser() if self.config.cwd else None
        if self.base_dir is None:
            return cwd
        return self.base_dir / cwd if cwd is not None else self.base_dir

    async def _stop_owner(self) -> None:
        """Make the owner task leave its connection and wait (bounded) until it has.

        A connected owner is woken and closes the connection itself; one still starting (stuck
        in the handshake) is cancelled. Either way the SDK stops the server process.
        """
        task = self._task
        if task is None:
            return
        if self._wake is not None:
            self._wake.set()
        if self._client is None and self._scope is not None:
            self._scope.cancel()
        if not task.done():
            with anyio.move_on_after(_STOP_TIMEOUT_SECONDS):
                await asyncio.wait({task})
        if not task.done() and self._scope is not None:
            logger.warning("MCP server %s did not stop in time; cancelling it", self.name)
            self._scope.cancel()
            with anyio.move_on_after(_STOP_TIMEOUT_SECONDS):
                await asyncio.wait({task})
        if task.done() and not task.cancelled():
            task.exception()  # retrieved here: the owner has logged it
        self._task = None
        self._scope = None
        self._client = None

    async def aclose(self) -> None:
        """Stop the server for good; later uses fail with a clear error."""
        async with self._lock:
            self._closed = True
            await self._stop_owner()
