"""What the toolbox reads from a tool server besides its answers: stderr, the end of its output,
and a one-line reason for whatever went wrong.

A stdio server's stderr goes through a pipe into a small ring buffer (``StderrTail``), so a failure
can show what the server said before it went. ``WatchedReadStream`` tells the connection the
moment the server's output ends, and hands what it reads to the connection's protocol log tap.
``describe_error`` turns an SDK, OS or validation error into the one line a person (or the model)
reads.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable
from typing import Any, TextIO

import anyio
import httpx2
from anyio.abc import AsyncResource
from mcp.shared.exceptions import MCPError
from mcp_types import CONNECTION_CLOSED
from pydantic import ValidationError

from mcp_export.errors import ExportError
from mcp_export.toolbox.message_log import MessageTap

__all__ = ["STDERR_TAIL_BYTES", "StderrTail", "WatchedReadStream", "describe_error"]

# Enough for a traceback's last frames; a chatty server must not grow memory without bound.
STDERR_TAIL_BYTES = 4096
# How long to wait, after a server stopped, for the rest of its stderr to arrive.
_STDERR_SETTLE_SECONDS = 1.0


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
    if isinstance(exc, httpx2.ConnectError | httpx2.ConnectTimeout):
        return f"nothing answers there ({type(exc).__name__}: {exc})"
    if isinstance(exc, ValidationError):
        # The SDK checks every answer against the protocol's schema; pydantic's own text is
        # several lines with a URL per error.
        first = exc.errors()[0]
        where = ".".join(str(part) for part in first["loc"])
        more = f" (and {exc.error_count() - 1} more)" if exc.error_count() > 1 else ""
        return f"its answer does not follow the MCP schema: {where}: {first['msg']}{more}"
    text = str(exc).strip()
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


class WatchedReadStream(AsyncResource):
    """A read stream that reports when it ends (the server exited or the connection broke) and
    hands each message to ``tap`` while a protocol log is attached to it."""

    def __init__(self, inner: Any, on_end: Callable[[], None], tap: MessageTap) -> None:
        self._inner = inner
        self._on_end = on_end
        self._tap = tap

    def __getattr__(self, name: str) -> Any:
        # ``last_context`` and any other duck-typed attribute the dispatcher reads.
        return getattr(self._inner, name)

    async def receive(self) -> Any:
        try:
            item = await self._inner.receive()
        except (anyio.EndOfStream, anyio.ClosedResourceError, anyio.BrokenResourceError):
            self._on_end()
            raise
        if self._tap.log is not None:
            self._tap.received(item)
        return item

    async def aclose(self) -> None:
        await self._inner.aclose()

    def __aiter__(self) -> WatchedReadStream:
        return self

    async def __anext__(self) -> Any:
        try:
            return await self.receive()
        except anyio.EndOfStream:
            raise StopAsyncIteration from None
