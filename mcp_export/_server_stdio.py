"""stdio for the served agent: the SDK's transport, fed by a reader that survives bad input.

The SDK's ``stdio_server`` reads stdin with an unbounded ``readline`` and drops a line that is not
a JSON-RPC message without a word (logged at debug level). That leaves two weaknesses for a server
a client may feed anything: one endless line grows memory without bound, and a client whose
malformed request is dropped waits for an answer that never comes.

``robust_stdio_server`` keeps the SDK's transport (its stdout writer and the claim that points fd 1
at stderr while serving, so stray output of this process or its children never reaches the
wire) and gives it ``StdinLines`` as stdin, which:

- reads stdin in chunks and splits lines itself, discarding a line longer than
  ``MAX_LINE_BYTES`` (the rest of it is skipped up to the next newline, never held in memory);
- checks each line before the SDK sees it and answers what it must refuse, as JSON-RPC 2.0 says:
  ``-32700 Parse error`` (id null) for a line that is not JSON or too long, ``-32600 Invalid
  Request`` (with the request's id when it has one) for JSON that is not an MCP message. Blank
  lines are ignored. Every refusal is logged on stderr.

Valid lines reach the SDK unchanged, so every later request is served as usual.
"""

from __future__ import annotations

import json
import logging
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any, BinaryIO, cast

import anyio
import anyio.to_thread
import mcp_types as types
from mcp.server.stdio import stdio_server
from mcp.shared.message import SessionMessage
from pydantic import ValidationError

__all__ = ["MAX_LINE_BYTES", "StdinLines", "robust_stdio_server"]

logger = logging.getLogger(__name__)

MAX_LINE_BYTES = 64 * 1024 * 1024
"""The longest message line accepted (images in tool results can make honest lines long)."""

_CHUNK = 256 * 1024
_PREVIEW = 80


def _preview(data: bytes) -> str:
    text = data[:_PREVIEW].decode("utf-8", errors="replace")
    return text + ("…" if len(data) > _PREVIEW else "")


def _error(request_id: Any, code: int, message: str) -> SessionMessage:
    return SessionMessage(
        types.JSONRPCError(
            jsonrpc="2.0", id=request_id, error=types.ErrorData(code=code, message=message)
        )
    )


class StdinLines:
    """An async iterator of the valid message lines of a binary stream (see the module doc).

    Args:
        stream: where messages arrive (``sys.stdin.buffer``).
        max_line: the longest line accepted, in bytes.
    """

    def __init__(self, stream: BinaryIO, *, max_line: int = MAX_LINE_BYTES) -> None:
        self._stream = stream
        self._max_line = max_line
        self._buffer = bytearray()
        self._skipping = False  # inside an over-long line: drop bytes up to the next newline
        self._eof = False
        self._replies: list[SessionMessage] = []
        self._reply_stream: Any = None
        self._attached = anyio.Event()
        self.refused = 0
        """How many lines were refused so far."""

    def attach(self, write_stream: Any) -> None:
        """Where refusals are answered: the transport's write stream (a clone is kept)."""
        self._reply_stream = write_stream.clone()
        self._attached.set()

    async def aclose(self) -> None:
        """Stop answering refusals (lets the transport's writer finish)."""
        stream, self._reply_stream = self._reply_stream, None
        self._attached.set()
        if stream is not None:
            await stream.aclose()

    def __aiter__(self) -> StdinLines:
        return self

    async def __anext__(self) -> str:
        while True:
            line = await self._next_raw_line()
            if line is None:
                await self.aclose()
                raise StopAsyncIteration
            accepted = await self._check(line)
            if accepted is not None:
                return accepted

    async def _read(self) -> bytes:
        read1 = getattr(self._stream, "read1", None) or self._stream.read
        data: bytes = await anyio.to_thread.run_sync(read1, _CHUNK, abandon_on_cancel=True)
        return data

    async def _next_raw_line(self) -> bytes | None:
        """The next complete line without its newline; None at end of input."""
        while True:
            end = self._buffer.find(b"\n")
            if end >= 0:
                line = bytes(self._buffer[:end])
                del self._buffer[: end + 1]
                if self._skipping:
                    self._skipping = False
                    continue
                return line
            if self._eof:
                if self._buffer and not self._skipping:
                    line = bytes(self._buffer)
                    self._buffer.clear()
                    return line
                return None
            if len(self._buffer) > self._max_line and not self._skipping:
                await self._refuse(
                    None,
                    types.PARSE_ERROR,
                    f"Parse error: message line longer than {self._max_line} bytes",
                    f"a line longer than {self._max_line} bytes "
                    f"(starting {_preview(bytes(self._buffer[:_PREVIEW]))!r})",
                )
                self._skipping = True
            if self._skipping:
                self._buffer.clear()
            chunk = await self._read()
            if not chunk:
                self._eof = True
            self._buffer += chunk

    async def _check(self, raw: bytes) -> str | None:
        """The line as text when it is a valid message, else None (after answering it)."""
        raw = raw.rstrip(b"\r")
        if not raw.strip():
            return None
        try:
            text = raw.decode("utf-8")
            types.jsonrpc_message_adapter.validate_json(text, by_name=False)
        except (UnicodeDecodeError, ValidationError, ValueError):
            pass
        else:
            return text
        try:
            data = json.loads(raw)
        except ValueError:
            await self._refuse(
                None, types.PARSE_ERROR, "Parse error: not valid JSON", f"{_preview(raw)!r}"
            )
            return None
        request_id: Any = None
        if isinstance(data, dict):
            data = cast(dict[str, Any], data)
            if "method" not in data and ("result" in data or "error" in data):
                logger.warning("ignored a malformed response on stdin: %r", _preview(raw))
                self.refused += 1
                return None
            candidate = data.get("id")
            if isinstance(candidate, str | int) and not isinstance(candidate, bool):
                request_id = candidate
            elif "id" not in data:
                logger.warning("ignored a malformed notification on stdin: %r", _preview(raw))
                self.refused += 1
                return None
        await self._refuse(
            request_id,
            types.INVALID_REQUEST,
            "Invalid Request: not a valid MCP JSON-RPC message",
            f"{_preview(raw)!r}",
        )
        return None

    async def _refuse(self, request_id: Any, code: int, message: str, what: str) -> None:
        self.refused += 1
        logger.warning("refused input on stdin (%s): %s", message, what)
        await self._attached.wait()
        stream = self._reply_stream
        if stream is None:
            return
        try:
            await stream.send(_error(request_id, code, message))
        except (anyio.ClosedResourceError, anyio.BrokenResourceError):
            logger.debug("could not answer a refused line: the transport is closing")


@asynccontextmanager
async def robust_stdio_server() -> AsyncIterator[tuple[Any, Any]]:
    """The SDK's stdio transport over this process's stdin/stdout, with ``StdinLines`` as stdin.

    Yields the (read stream, write stream) pair ``Server.run`` takes.
    """
    lines = StdinLines(sys.stdin.buffer)
    async with stdio_server(stdin=cast(Any, lines)) as (read_stream, write_stream):
        lines.attach(write_stream)
        try:
            yield read_stream, write_stream
        finally:
            await lines.aclose()
