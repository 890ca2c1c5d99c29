"""stdio for the served agent: the SDK's transport, fed by a reader that survives bad input.

The SDK's ``stdio_server`` reads stdin with an unbounded ``readline`` and drops a line that is not
a JSON-RPC message without a word (logged at debug level). That leaves two weaknesses for a server
a client may feed anything: one endless line grows memory without bound, and a client whose
malformed request is dropped waits for an answer that never comes.

``robust_stdio_server`` keeps the SDK's stdout writer (and the claim that points fd 1 at stderr
while serving, so stray output of this process or its children never reaches the wire) and reads
stdin with ``StdinLines``, which:

- reads stdin in chunks and splits lines itself, discarding a line longer than
  ``MAX_LINE_BYTES`` (the rest of it is skipped up to the next newline, never held in memory);
- checks each line with ``server.screen.screen`` before the SDK sees it and answers what it
  must refuse, as JSON-RPC 2.0 says: ``-32700 Parse error`` (id null) for a line that is not
  JSON or too long, ``-32600 Invalid Request`` (with the request's id when it has a readable
  one) for JSON that is not an MCP message, nested too deeply, or a request whose id is not a
  string or an integer. A malformed notification or response is not answered, and blank lines
  are ignored. Every refusal is logged on stderr.

Valid messages reach the SDK as the screen parsed them (the SDK's own model), so every later
request is served as usual, and a big message is parsed once: the SDK's reader would parse each
line again, and its model over the bytes checks every value of an argument (a second for an array
of a million strings, while the event loop serves nothing else).

End of input: the SDK ends the connection as soon as stdin ends, cancelling the requests still
being served, so ``printf 'INIT\\nINITIALIZED\\nPING\\n' | metaagent serve a.yaml`` answered only
the initialize. ``StdinLines`` keeps count of the requests it passed on and ``AnswerWatch`` (around
the transport's write stream) of the answers written; at the end of input the line iterator ends
only once every request read has its answer (one the client cancelled needs none), or after
``grace`` seconds, when the SDK answers what is left with ``Connection closed``.

Without threads: when stdin and stdout are pipes (as an MCP client starts a server) both are served
by the event loop itself. The SDK's transport reads in a worker thread and hands every message it
writes to a worker thread twice (write, flush); under many concurrent calls those hand-overs and the
interpreter-lock switches they cause take a share of the loop's time (docs/reference/benchmarks.md).
``StdinLines`` reads a pipe through ``connect_read_pipe`` (pausing it while 4 MiB wait unread, so a
flood is held back by the pipe as before) and falls back to a thread for anything else (a file,
``/dev/null``, a closed stdin, Windows); ``WireOut`` writes through ``connect_write_pipe``, waiting
only while the pipe is full. End of input, whatever stdin is, ends the server. ``WireOut`` also
makes the same claim the SDK makes: the wire keeps a private duplicate of fd 1, and fd 1 itself
points at stderr while serving.
"""

from __future__ import annotations

import asyncio
import io
import logging
import os
import selectors
import stat
import sys
from collections import deque
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager, suppress
from typing import Any, BinaryIO, cast

import anyio
import anyio.to_thread
import mcp_types as types
from mcp.server.stdio import stdio_server
from mcp.shared.message import SessionMessage

from mcp_export.server.screen import screen_message

__all__ = ["MAX_LINE_BYTES", "AnswerWatch", "StdinLines", "WireOut", "robust_stdio_server"]

logger = logging.getLogger(__name__)

MAX_LINE_BYTES = 64 * 1024 * 1024
"""The longest message line accepted (images in tool results can make honest lines long)."""

_CHUNK = 256 * 1024
_PREVIEW = 80
_HELD = 4 * 1024 * 1024
"""Unread stdin bytes at which the pipe is paused (the client then waits on a full pipe)."""
_DRAIN_AT_EXIT = 5.0


def _is_pipe(fd: int, *, writing: bool = False) -> bool:
    """Whether the event loop can serve ``fd``: a pipe, a socket (read side only), or a character
    device its selector can wait on (a terminal; not ``/dev/null``, which epoll refuses); never
    on Windows.

    A socket is not served for writing: the loop's write transport takes a readable socket for
    one its peer closed, and a socket as stdout is usually stdin too (inetd style), readable
    whenever a request arrives.
    """
    if sys.platform == "win32":  # pragma: no cover - the proactor loop's pipes differ
        return False
    try:
        mode = os.fstat(fd).st_mode
    except OSError:
        return False
    if stat.S_ISFIFO(mode) or (stat.S_ISSOCK(mode) and not writing):
        return True
    if not stat.S_ISCHR(mode):
        return False
    # The loop registers the descriptor in a later callback, where a refusal escapes every
    # handler and leaves the reader waiting forever: ask a selector of the same kind first.
    try:
        with selectors.DefaultSelector() as probe:
            probe.register(fd, selectors.EVENT_READ)
    except (OSError, ValueError):
        return False
    return True


class _PipeIn(asyncio.Protocol):
    """Chunks of a read pipe as the loop receives them."""

    def __init__(self) -> None:
        self._chunks: deque[bytes] = deque()
        self._held = 0
        self._ready = asyncio.Event()
        self._ended = False
        self._transport: asyncio.ReadTransport | None = None
        self._paused = False

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self._transport = cast(asyncio.ReadTransport, transport)

    def data_received(self, data: bytes) -> None:
        self._chunks.append(data)
        self._held += len(data)
        if self._held > _HELD and not self._paused and self._transport is not None:
            self._transport.pause_reading()
            self._paused = True
        self._ready.set()

    def eof_received(self) -> bool:
        self._ended = True
        self._ready.set()
        return False

    def connection_lost(self, exc: Exception | None) -> None:
        self._ended = True
        self._ready.set()

    async def read(self) -> bytes:
        """The next chunk; empty at the end of input."""
        while not self._chunks:
            if self._ended:
                return b""
            self._ready.clear()
            await self._ready.wait()
        chunk = self._chunks.popleft()
        self._held -= len(chunk)
        if self._paused and self._held <= _HELD // 2 and self._transport is not None:
            self._transport.resume_reading()
            self._paused = False
        return chunk

    def close(self) -> None:
        if self._transport is not None:
            self._transport.close()


class WireOut(asyncio.Protocol):
    """The wire's stdout for the SDK's writer task: ``write`` and ``flush`` without threads.

    Made by ``WireOut.claim`` (see the module doc); ``flush`` waits only while the pipe is full,
    and raises ``BrokenPipeError`` once the client has closed it.
    """

    def __init__(self) -> None:
        self._transport: asyncio.WriteTransport | None = None
        self._writable = asyncio.Event()
        self._writable.set()
        self.closed = asyncio.Event()
        """Set once the pipe is closed (after what was buffered is written) or broken."""
        self._lost: BaseException | None = None

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self._transport = cast(asyncio.WriteTransport, transport)

    def pause_writing(self) -> None:
        self._writable.clear()

    def resume_writing(self) -> None:
        self._writable.set()

    def connection_lost(self, exc: Exception | None) -> None:
        self._lost = exc or BrokenPipeError("the client closed stdout")
        self._writable.set()
        self.closed.set()

    async def write(self, text: str) -> int:
        if self._lost is not None or self._transport is None:
            raise BrokenPipeError("the client closed stdout") from self._lost
        self._transport.write(text.encode("utf-8"))
        return len(text)

    async def flush(self) -> None:
        await self._writable.wait()
        if self._lost is not None:
            raise BrokenPipeError("the client closed stdout") from self._lost

    @classmethod
    @asynccontextmanager
    async def claim(cls) -> AsyncIterator[WireOut | None]:
        """Serve fd 1 through the loop while fd 1 itself points at stderr; None when the loop
        cannot serve fd 1 (the SDK's own writer then serves it, with the same claim)."""
        if not _is_pipe(1, writing=True):
            yield None
            return
        sys.stdout.flush()
        wire = os.dup(1)  # not inherited by children (os.dup's default)
        try:
            os.dup2(2, 1)  # stray output of this process and its children misses the wire
        except OSError:
            os.close(wire)
            yield None
            return
        loop = asyncio.get_running_loop()
        pipe = os.fdopen(os.dup(wire), "wb", buffering=0)
        try:
            transport, out = await loop.connect_write_pipe(cls, pipe)
        except (OSError, ValueError):
            pipe.close()
            os.dup2(wire, 1)
            os.close(wire)
            yield None
            return
        try:
            yield out
        finally:
            transport.close()  # after what is still buffered is written
            with anyio.move_on_after(_DRAIN_AT_EXIT, shield=True):
                await out.closed.wait()
            with suppress(OSError):
                os.dup2(wire, 1)
                os.set_blocking(1, True)
            os.close(wire)


def _preview(data: bytes) -> str:
    text = data[:_PREVIEW].decode("utf-8", errors="replace")
    return text + ("…" if len(data) > _PREVIEW else "")


def _error(request_id: types.RequestId | None, code: int, message: str) -> SessionMessage:
    return SessionMessage(
        types.JSONRPCError(
            jsonrpc="2.0", id=request_id, error=types.ErrorData(code=code, message=message)
        )
    )


class StdinLines:
    """The valid messages of a binary stream, one a line (see the module doc).

    Args:
        stream: where messages arrive (``sys.stdin.buffer``).
        max_line: the longest line accepted, in bytes.
        grace: at the end of input, how long the requests already read may take to be answered
            (``answered`` tells of each answer) before ``messages`` ends.
    """

    def __init__(
        self, stream: BinaryIO, *, max_line: int = MAX_LINE_BYTES, grace: float = 0.0
    ) -> None:
        self._stream = stream
        self._max_line = max_line
        self._grace = grace
        self._unanswered: dict[types.RequestId, int] = {}
        self._settled = asyncio.Event()
        self._settled.set()
        self._buffer = bytearray()
        self._skipping = False  # inside an over-long line: drop bytes up to the next newline
        self._eof = False
        self._replies: list[SessionMessage] = []
        self._reply_stream: Any = None
        self._attached = anyio.Event()
        self._pipe: _PipeIn | None = None
        self._pipe_tried = False
        self._fd: int | None = None
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
        if self._pipe is not None:
            self._pipe.close()
            self._pipe = None
            with suppress(OSError):  # the loop made it non-blocking; give it back as it was
                os.set_blocking(cast(int, self._fd), True)
        if stream is not None:
            await stream.aclose()

    def answered(self, request_id: types.RequestId) -> None:
        """A request read from this stream has its answer (or needs none any more)."""
        left = self._unanswered.get(request_id, 0) - 1
        if left > 0:
            self._unanswered[request_id] = left
        else:
            self._unanswered.pop(request_id, None)
        if not self._unanswered:
            self._settled.set()

    def _note(self, message: types.JSONRPCMessage) -> None:
        """Count a request passed on; a cancellation releases the request it cancels."""
        if isinstance(message, types.JSONRPCRequest):
            self._unanswered[message.id] = self._unanswered.get(message.id, 0) + 1
            self._settled.clear()
        elif (
            isinstance(message, types.JSONRPCNotification)
            and message.method == "notifications/cancelled"
            and isinstance(message.params, dict)
        ):
            cancelled = message.params.get("requestId")
            if isinstance(cancelled, str | int) and not isinstance(cancelled, bool):
                self.answered(cancelled)

    async def _settle(self) -> None:
        """At the end of input: wait (at most the grace) for every request read to be answered."""
        if self._settled.is_set():
            return
        with anyio.move_on_after(self._grace):
            await self._settled.wait()
        if self._unanswered:
            logger.warning(
                "stdin ended; %d request(s) still unanswered after %g s are cut off",
                sum(self._unanswered.values()),
                self._grace,
            )

    async def messages(self) -> AsyncIterator[types.JSONRPCMessage]:
        """The valid messages, in order, until the end of input (and of the grace after it)."""
        while True:
            line = await self._next_raw_line()
            if line is None:
                await self._settle()
                await self.aclose()
                return
            message = await self._check(line)
            if message is not None:
                yield message

    async def _read(self) -> bytes:
        if not self._pipe_tried:
            self._pipe_tried = True
            self._pipe = await self._open_pipe()
        if self._pipe is not None:
            return await self._pipe.read()
        read1 = getattr(self._stream, "read1", None) or self._stream.read
        data: bytes = await anyio.to_thread.run_sync(read1, _CHUNK, abandon_on_cancel=True)
        return data

    async def _open_pipe(self) -> _PipeIn | None:
        """Read the stream through the event loop when it is a pipe (see the module doc)."""
        try:
            fd = self._stream.fileno()
        except (AttributeError, OSError, ValueError):
            return None
        if not _is_pipe(fd):
            return None
        pipe = os.fdopen(os.dup(fd), "rb", buffering=0)  # the transport closes its own copy
        try:
            _, reader = await asyncio.get_running_loop().connect_read_pipe(_PipeIn, pipe)
        except (OSError, ValueError):
            pipe.close()
            return None
        self._fd = fd
        return reader

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

    async def _check(self, raw: bytes) -> types.JSONRPCMessage | None:
        """The line's message when it is valid, else None (after answering it)."""
        raw = raw.rstrip(b"\r")
        if not raw.strip():
            return None
        message, refusal = screen_message(raw)
        if message is not None:
            self._note(message)
            return message
        assert refusal is not None
        if refusal.answer:
            await self._refuse(
                refusal.request_id, refusal.code, refusal.message, f"{_preview(raw)!r}"
            )
        else:  # JSON-RPC answers no notification and no response, even a malformed one
            logger.warning("ignored input on stdin (%s): %r", refusal.message, _preview(raw))
            self.refused += 1
        return None

    async def _refuse(
        self, request_id: types.RequestId | None, code: int, message: str, what: str
    ) -> None:
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


class AnswerWatch:
    """The transport's write stream, telling ``StdinLines`` of each answer that passes."""

    def __init__(self, stream: Any, lines: StdinLines) -> None:
        self._stream = stream
        self._lines = lines

    async def send(self, item: SessionMessage) -> None:
        await self._stream.send(item)
        message = item.message
        if isinstance(message, types.JSONRPCResponse | types.JSONRPCError) and (
            message.id is not None
        ):
            self._lines.answered(message.id)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._stream, name)

    async def __aenter__(self) -> AnswerWatch:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self._stream.aclose()


@asynccontextmanager
async def robust_stdio_server(*, grace: float = 0.0) -> AsyncIterator[tuple[Any, Any]]:
    """The SDK's stdio transport over this process's stdin/stdout, with ``StdinLines`` as stdin.

    Args:
        grace: at the end of input, how long the requests already read may take to be answered.

    Yields the (read stream, write stream) pair ``Server.run`` takes.
    """
    # Python leaves sys.stdin None when fd 0 was closed at start-up: input that has ended.
    lines = StdinLines(sys.stdin.buffer if sys.stdin is not None else io.BytesIO(), grace=grace)
    unparsed = _NoLines()
    send, receive = anyio.create_memory_object_stream[SessionMessage | Exception](0)
    async with (
        WireOut.claim() as out,
        stdio_server(stdin=cast(Any, unparsed), stdout=cast(Any, out)) as (unused, write_stream),
    ):
        await unused.aclose()
        lines.attach(write_stream)
        try:
            async with anyio.create_task_group() as relay:
                relay.start_soon(_relay, lines, send)
                try:
                    yield receive, AnswerWatch(write_stream, lines)
                finally:
                    relay.cancel_scope.cancel()
        finally:
            unparsed.end()
            await lines.aclose()


async def _relay(lines: StdinLines, send: Any) -> None:
    """Hand the messages of ``lines`` to the server, until either side ends."""
    async with send:
        async for message in lines.messages():
            try:
                await send.send(SessionMessage(message))
            except (anyio.BrokenResourceError, anyio.ClosedResourceError):
                return


class _NoLines:
    """Stdin for the SDK's transport, whose reader would parse each line again: it gets none,
    and ends when ``end`` is called."""

    def __init__(self) -> None:
        self._ended = anyio.Event()

    def end(self) -> None:
        self._ended.set()

    def __aiter__(self) -> _NoLines:
        return self

    async def __anext__(self) -> str:
        await self._ended.wait()
        raise StopAsyncIteration
