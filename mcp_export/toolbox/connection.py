"""One live connection to one MCP tool server of an agent, owned by its own task.

A connection made with the ``mcp`` client opens anyio cancel scopes and task groups that must be
closed by the task that opened them. So each start of a server (an *attempt*) gets an *owner task*
that enters ``async with Client(...)``, lists the tools, publishes the connected client, and waits
until it is asked to stop or the connection is lost; every other task sends its requests through
the published client (the SDK's dispatcher correlates concurrent requests, so sharing one client is
safe).

Starting is bounded by the server's *start-up limit*, enforced by the owner itself: a server that
has not answered ``initialize`` and ``tools/list`` by then is stopped and reported unavailable.
Callers only wait for the owner, each as long as it can afford (``client(wait=…)``); a caller that
stops waiting — its own deadline came, or it was cancelled — leaves the attempt running in the
background, so the next call may find the server up. A start that failed is tried again on the
first use after a back-off that doubles with each failure in a row (from the start-up limit, up to
ten minutes), so a broken server costs an occasional call a wait, not every call. A server that
was up and died is restarted on the next use at once.

The connection's messages in both directions pass its ``tap`` (``toolbox.message_log``), which
records them into ``protocol_log`` while one is set. A caller that waits for a start reports its
steps (``toolbox.steps``) to the listener of its context, if it has one.
"""

from __future__ import annotations

import asyncio
import logging
import math
import os
from collections.abc import AsyncIterator, Callable, Iterator, Mapping
from contextlib import AsyncExitStack, asynccontextmanager, contextmanager
from pathlib import Path
from typing import Any, Literal

import anyio
import mcp_types as types
from mcp import Client
from mcp.client.sse import sse_client
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client

from mcp_export.errors import ToolServerError
from mcp_export.protocol_log import ProtocolLog
from mcp_export.redact import remember_resolved
from mcp_export.toolbox.command import find_command
from mcp_export.toolbox.message_log import LoggedWriteStream, MessageTap
from mcp_export.toolbox.server_io import StderrTail, WatchedReadStream, describe_error
from mcp_export.toolbox.steps import ServerPhase, ServerStep, server_step_listener
from schema_types.agent import McpServerConfig
from schema_types.errors import SecretError
from schema_types.secrets import resolve_secret

__all__ = ["DEFAULT_STARTUP_TIMEOUT", "ProtocolMode", "ServerConnection"]

logger = logging.getLogger(__name__)

ProtocolMode = Literal["auto", "legacy"]

# Seconds a server may take to answer initialize and tools/list. Most answer within 1–2 s; a
# server fetched on first use (npx, uvx) can need longer, and then has its own setting.
DEFAULT_STARTUP_TIMEOUT = 10.0
# The longest a server that failed to start waits for its next try.
_MAX_BACKOFF_SECONDS = 600.0
# Bounds the stop of one server: the SDK's stdio shutdown takes at most ~6 s (stdin close, 2 s,
# SIGTERM, 2 s, SIGKILL, 2 s); past that the owner task is cancelled.
_STOP_TIMEOUT_SECONDS = 8.0


class _Attempt:
    """One start of the server and the connection it made, run by one owner task."""

    def __init__(self, deadline: float, previous: _Attempt | None) -> None:
        self.started = anyio.current_time()
        self.deadline = deadline  # the end of the start-up limit
        self.previous = previous  # a lost connection, still stopping
        # Created here, entered by the owner: aclose can cancel an owner that has not run yet.
        self.scope = anyio.CancelScope(deadline=deadline)
        self.settled = anyio.Event()  # up (client and tools published), or failed to start
        self.stopped = anyio.Event()  # the owner has left the connection
        self.wake = anyio.Event()  # the owner is asked to leave
        self.phase: ServerPhase = "initialize"  # what the server has not answered yet
        self.watchers: list[Callable[[ServerPhase], None]] = []  # callers waiting, told of phases
        self.client: Client | None = None
        self.tools: list[types.Tool] | None = None
        self.error: str | None = None  # why it did not come up, or why the connection ended
        self.lost = False
        # A caller's wait for this start ended before it did: it goes on in the background.
        self.background = False
        self.stderr: StderrTail | None = None
        self.task: asyncio.Task[None] | None = None

    @property
    def up(self) -> bool:
        return self.client is not None and self.tools is not None and not self.lost

    @property
    def starting(self) -> bool:
        return not self.settled.is_set() and anyio.current_time() < self.deadline

    def mark_lost(self) -> None:
        self.lost = True
        self.wake.set()

    def enter(self, phase: ServerPhase) -> None:
        self.phase = phase
        for watcher in list(self.watchers):
            watcher(phase)

    @contextmanager
    def watched(self, watcher: Callable[[ServerPhase], None] | None) -> Iterator[None]:
        """Tell ``watcher`` the phase now and at each change while the block runs."""
        if watcher is None:
            yield
            return
        watcher(self.phase)
        self.watchers.append(watcher)
        try:
            yield
        finally:
            self.watchers.remove(watcher)


def _resolve_values(values: Mapping[str, str]) -> dict[str, str]:
    """``env``/``headers`` values with ``env://`` and ``keyring://`` references resolved.

    Raises:
        ToolServerError: A reference does not resolve (the message names it).
    """
    try:
        resolved = {key: resolve_secret(value, key_name=key) for key, value in values.items()}
    except SecretError as exc:
        raise ToolServerError(str(exc)) from exc
    return remember_resolved(values, resolved)


class ServerConnection:
    """One MCP server of an agent: started lazily, shared, restarted after it died.

    Args:
        name: The server's name in the agent file (used in messages).
        config: How to reach it.
        base_dir: The agent file's directory; a relative ``cwd`` or command path is taken from it,
            and a stdio server without ``cwd`` runs there.
        startup_timeout: Seconds the server may take to answer ``initialize`` and ``tools/list``
            (default ``DEFAULT_STARTUP_TIMEOUT``); the server's own ``startupTimeoutSeconds`` in the
            agent file wins.
        mode: ``auto`` (discover the protocol era, fall back to the initialize handshake) or
            ``legacy`` (initialize handshake only).
    """

    def __init__(
        self,
        name: str,
        config: McpServerConfig,
        *,
        base_dir: Path | None = None,
        startup_timeout: float | None = None,
        mode: ProtocolMode = "auto",
    ) -> None:
        self.name = name
        self.config = config
        self.base_dir = base_dir
        # The server's own setting in the agent file wins over the caller's default.
        self.startup_timeout = config.startup_timeout_seconds or (
            DEFAULT_STARTUP_TIMEOUT if startup_timeout is None else startup_timeout
        )
        self.mode: ProtocolMode = mode
        self.last_error: str | None = None
        self.starts = 0
        self.connect_ms: float | None = None
        self._attempt: _Attempt | None = None
        self._live: set[_Attempt] = set()  # attempts whose owner has not stopped yet
        self._failures = 0  # starts in a row that failed
        self._retry_at = -math.inf
        self._closed = False
        self._tap = MessageTap(name)

    @property
    def protocol_log(self) -> ProtocolLog | None:
        """Where this server's messages are recorded (``mcp_export.protocol_log``); None, the
        default, records nothing. Takes effect at once, for a connection already up too."""
        return self._tap.log

    @protocol_log.setter
    def protocol_log(self, log: ProtocolLog | None) -> None:
        self._tap.log = log

    @property
    def alive(self) -> bool:
        """Whether the server is connected, its tools listed, and the connection not lost."""
        return self._attempt is not None and self._attempt.up

    @property
    def tools(self) -> list[types.Tool] | None:
        """The server's tools while it is up, else None."""
        return self._attempt.tools if self._attempt is not None and self._attempt.up else None

    def stderr_text(self) -> str:
        """The last stderr output of the current (or last) server process."""
        attempt = self._attempt
        return attempt.stderr.text() if attempt is not None and attempt.stderr is not None else ""

    @property
    def starting_in_background(self) -> bool:
        """Whether the server is still starting after a caller stopped waiting for it."""
        attempt = self._attempt
        return attempt is not None and attempt.background and attempt.starting

    @property
    def unavailable_reason(self) -> str | None:
        """Why the server cannot be used right now; None when it is up or was never started."""
        attempt = self._attempt
        if self._closed:
            return f"the MCP server '{self.name}' was shut down with its agent"
        if attempt is None or attempt.up:
            return None
        if attempt.starting:
            return self._still_starting(attempt)
        return self._failed(attempt)

    async def client(self, wait: float | None = None) -> Client:
        """The connected client, starting (or restarting) the server if needed.

        Args:
            wait: At most this many seconds to wait for a start in progress (None: until its
                start-up limit). When the wait ends first, the start goes on in the background
                (``starting_in_background``).

        Raises:
            ToolServerError: The server is unavailable: it could not start (the message holds the
                reason and the server's stderr tail), it is still starting after ``wait``, it
                failed recently and waits for its next try, or the toolbox was closed.
        """
        attempt = self._attempt_to_use()
        if attempt.starting:
            budget = attempt.deadline - anyio.current_time()
            if wait is not None:
                budget = min(budget, wait)
            with anyio.move_on_after(budget), attempt.watched(self._step_watcher()):
                await attempt.settled.wait()
            if not attempt.settled.is_set():
                # This caller's time ran out first (a cancelled caller does not count).
                attempt.background = True
        if attempt.up:
            assert attempt.client is not None
            return attempt.client
        if attempt.starting:
            raise ToolServerError(self._still_starting(attempt))
        raise ToolServerError(self._failed(attempt))

    def _step_watcher(self) -> Callable[[ServerPhase], None] | None:
        """What tells the listener of the caller's context (if any) this server's steps."""
        listener = server_step_listener()
        if listener is None:
            return None
        name, remote = self.name, self.config.type != "stdio"
        return lambda phase: listener(ServerStep(name, phase, remote))

    def _attempt_to_use(self) -> _Attempt:
        """The current attempt if it is up or starting, else a new one (unless backing off)."""
        if self._closed:
            raise ToolServerError(f"the MCP server '{self.name}' was shut down with its agent")
        attempt = self._attempt
        if attempt is None or attempt.up or attempt.starting:
            return attempt if attempt is not None else self._start(None)
        if attempt.client is not None:
            return self._start(attempt)  # it was up and died: restart it at once
        if anyio.current_time() < self._retry_at:
            raise ToolServerError(self._failed(attempt))
        return self._start(attempt)

    def _start(self, previous: _Attempt | None) -> _Attempt:
        if previous is not None and previous.stopped.is_set():
            previous = None
        attempt = _Attempt(anyio.current_time() + self.startup_timeout, previous)
        self._attempt = attempt
        self._live.add(attempt)
        self.starts += 1
        attempt.task = asyncio.create_task(self._own(attempt), name=f"MCP server {self.name}")
        return attempt

    def _still_starting(self, attempt: _Attempt) -> str:
        elapsed = anyio.current_time() - attempt.started
        return (
            f"the MCP server '{self.name}' is still starting: no answer to {attempt.phase} after "
            f"{elapsed:.1f} s (its start-up limit is {self.startup_timeout:g} s); its tools are "
            "offered once it is up"
        )

    def _failed(self, attempt: _Attempt) -> str:
        """Why ``attempt`` is over, and when the server is tried again; recorded the first time
        (its start-up limit may have passed while its owner still stops the server)."""
        if attempt.client is not None:  # it was up: the connection ended
            return attempt.error or (
                f"the MCP server '{self.name}' stopped (its connection ended); "
                "it is restarted on the next use"
            )
        if attempt.error is None:
            if attempt.phase == "initialize":
                what = f"did not answer initialize within {self.startup_timeout:g} s"
            else:
                what = f"answered initialize but not tools/list within {self.startup_timeout:g} s"
            self._record_failure(attempt, f"{what}, its start-up limit")
        assert attempt.error is not None
        wait = self._retry_at - anyio.current_time()
        if attempt is self._attempt and wait > 0:
            return f"{attempt.error}\nit is tried again on its first use after {wait:.1f} s"
        return attempt.error

    def _message(self, attempt: _Attempt, what: str) -> str:
        message = f"the MCP server '{self.name}' {what}"
        tail = attempt.stderr.text() if attempt.stderr is not None else ""
        if tail:
            message += f"\nits stderr ends with:\n{tail}"
        return message

    def _record_failure(self, attempt: _Attempt, what: str) -> None:
        """``attempt`` did not come up: say why once, and put off the next try."""
        if attempt.error is not None:
            return
        attempt.error = self._message(attempt, what)
        self.last_error = attempt.error
        self._failures += 1
        backoff = self.startup_timeout * 2 ** min(self._failures - 1, 20)
        self._retry_at = anyio.current_time() + min(backoff, _MAX_BACKOFF_SECONDS)
        attempt.settled.set()
        logger.warning("%s", attempt.error)

    async def failure_message(self, what: str, *, wait: float = _STOP_TIMEOUT_SECONDS) -> str:
        """``what`` about this server, followed by its stderr tail once the process is gone.

        Args:
            what: What happened, after "the MCP server 'NAME' ".
            wait: At most this many seconds (never more than a stop takes) to wait for the server
                to stop, so that its last words are in the tail.
        """
        attempt = self._attempt
        if attempt is None:
            return f"the MCP server '{self.name}' {what}"
        with anyio.move_on_after(max(0.0, min(wait, _STOP_TIMEOUT_SECONDS))):
            await attempt.stopped.wait()
        attempt.error = self._message(attempt, what)
        self.last_error = attempt.error
        return attempt.error

    async def wait_stopped(self) -> None:
        """Wait until the current server connection has ended (returns at once if none runs)."""
        if self._attempt is not None:
            await self._attempt.stopped.wait()

    def mark_lost(self) -> None:
        """Treat the connection as broken: the owner tears it down, the next use restarts it."""
        if self._attempt is not None:
            self._attempt.mark_lost()

    async def _own(self, attempt: _Attempt) -> None:
        """The owner task of ``attempt``: start, list, serve until asked to leave, stop."""
        previous, attempt.previous = attempt.previous, None
        failure: str | None = None  # why it did not come up, said once its stderr is all in
        try:
            # Cancelled through this scope (its deadline is the start-up limit; aclose cancels
            # it), not Task.cancel, so the SDK's shielded shutdown runs under anyio's rules.
            with attempt.scope:
                if previous is not None:  # the dead server's process goes first
                    await previous.stopped.wait()
                async with Client(self._transport(attempt), mode=self.mode) as client:
                    attempt.enter("tools/list")
                    tools = await self._list_all_tools(client)
                    attempt.scope.deadline = math.inf
                    # A caller may have declared the start timed out a moment ago.
                    if attempt.error is None and not attempt.scope.cancel_called:
                        self._publish(attempt, client, tools)
                        await attempt.wake.wait()
        except Exception as exc:
            reason = describe_error(exc)
            if attempt.client is not None:
                logger.warning("MCP server %s: connection ended: %s", self.name, reason)
            elif attempt.phase == "initialize":
                logger.debug("MCP server %s failed to start", self.name, exc_info=True)
                url = self.config.url
                failure = f"{'could not connect to ' + url if url else 'could not start'}: {reason}"
            else:
                failure = f"started but could not list its tools: {reason}"
        finally:
            attempt.lost = True
            with anyio.CancelScope(shield=True):
                if attempt.stderr is not None:
                    await attempt.stderr.settle()
            if attempt.client is None and not self._closed:
                if failure is not None:
                    self._record_failure(attempt, failure)
                self._failed(attempt)  # else the start-up limit ended it
            attempt.settled.set()
            attempt.stopped.set()
            self._live.discard(attempt)

    def _publish(self, attempt: _Attempt, client: Client, tools: list[types.Tool]) -> None:
        attempt.client, attempt.tools = client, tools
        self.connect_ms = (anyio.current_time() - attempt.started) * 1000
        self.last_error = None
        self._failures = 0
        attempt.settled.set()
        logger.info("MCP server %s connected in %.0f ms", self.name, self.connect_ms)

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

    def _transport(self, attempt: _Attempt) -> Any:
        """The transport context manager for this server's type."""
        config = self.config

        @asynccontextmanager
        async def watched(inner: Any) -> AsyncIterator[Any]:
            async with inner as (read_stream, write_stream):
                yield (
                    WatchedReadStream(read_stream, attempt.mark_lost, self._tap),
                    LoggedWriteStream(write_stream, self._tap),
                )

        if config.type == "stdio":
            return self._stdio_transport(attempt, watched)
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
    async def _stdio_transport(self, attempt: _Attempt, watched: Any) -> AsyncIterator[Any]:
        config = self.config
        assert config.command is not None
        env = {**os.environ, **_resolve_values(config.env)}
        cwd = self._working_directory()
        command = find_command(config.command, cwd=cwd, path=env.get("PATH"))
        params = StdioServerParameters(command=command, args=config.args, env=env, cwd=cwd)
        attempt.stderr = tail = StderrTail(self.name)
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

    async def aclose(self) -> None:
        """Stop the server for good (and any earlier connection still stopping); later uses fail
        with a clear error."""
        self._closed = True
        for attempt in list(self._live):
            attempt.wake.set()
            if not attempt.up:
                attempt.scope.cancel()  # stuck in the handshake: the SDK stops the process
        for attempt in list(self._live):
            with anyio.move_on_after(_STOP_TIMEOUT_SECONDS):
                await attempt.stopped.wait()
            if not attempt.stopped.is_set():
                logger.warning("MCP server %s did not stop in time; cancelling it", self.name)
                attempt.scope.cancel()
                with anyio.move_on_after(_STOP_TIMEOUT_SECONDS):
                    await attempt.stopped.wait()
