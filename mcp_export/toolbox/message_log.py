"""How a tool server's connection writes its JSON-RPC messages into a protocol log.

Every connection has a ``MessageTap`` whose ``log`` is None until a log is attached to the
toolbox. The connection's read stream (``server_io.WatchedReadStream``) hands the tap each message
it receives, and ``LoggedWriteStream`` each message the client sends, so the log holds the whole
conversation in order: ``server/discover``, ``initialize``, ``tools/list``, every
``tools/call`` and its result, notifications, errors. A message is recorded as it goes over the
wire (the SDK's transports write ``model_dump_json(by_alias=True, exclude_unset=True)``),
pretty-printed when it fits in an entry; what arrived but was not a JSON-RPC message is an
``error`` entry with the reason. See ``mcp_export.protocol_log``.
"""

from __future__ import annotations

import json
from typing import Any

from anyio.abc import AsyncResource
from mcp.shared.message import SessionMessage
from mcp_types import (
    JSONRPCError,
    JSONRPCNotification,
    JSONRPCRequest,
    JSONRPCResponse,
    RequestId,
)

from mcp_export.protocol_log import Direction, Kind, ProtocolLog

__all__ = ["LoggedWriteStream", "MessageTap"]

# Requests whose answer never came are forgotten past this many (a server that never answers).
_MAX_PENDING = 1000


class MessageTap:
    """Records the messages of one tool server's connection into ``log`` (when it is set).

    Args:
        channel: the server's name in the agent file.
    """

    def __init__(self, channel: str) -> None:
        self.channel = channel
        self.log: ProtocolLog | None = None
        self._methods: dict[tuple[Direction, RequestId], str] = {}

    def sent(self, item: object) -> None:
        """A message the client sends (a ``SessionMessage``)."""
        log = self.log
        if log is not None:
            self._record(log, "sent", item)

    def received(self, item: object) -> None:
        """What the read stream gives the client (a ``SessionMessage``, or the exception of a
        line that was not a JSON-RPC message)."""
        log = self.log
        if log is not None:
            self._record(log, "received", item)

    def _record(self, log: ProtocolLog, direction: Direction, item: object) -> None:
        if not isinstance(item, SessionMessage):
            reason = f"{type(item).__name__}: {item}"
            log.record(self.channel, direction, "error", reason, summary=f"not JSON-RPC: {reason}")
            return
        message = item.message
        wire = message.model_dump_json(by_alias=True, exclude_unset=True)
        text = _pretty(wire) if len(wire) <= log.max_entry_bytes else wire
        kind, summary = self._describe(direction, message)
        log.record(self.channel, direction, kind, text, summary=summary)

    def _describe(self, direction: Direction, message: Any) -> tuple[Kind, str]:
        """The kind of ``message`` and its one-line summary (a response names its request)."""
        if isinstance(message, JSONRPCRequest):
            if len(self._methods) >= _MAX_PENDING:
                self._methods.clear()
            self._methods[(direction, message.id)] = message.method
            return "request", f"{message.method} (id {message.id})"
        if isinstance(message, JSONRPCNotification):
            return "notification", message.method
        asked: Direction = "received" if direction == "sent" else "sent"
        if isinstance(message, JSONRPCResponse):
            method = self._methods.pop((asked, message.id), "result")
            return "response", f"{method} result (id {message.id})"
        if isinstance(message, JSONRPCError):
            method = "" if message.id is None else self._methods.pop((asked, message.id), "")
            named = f"{method} " if method else ""
            error = message.error
            return "error", f"{named}error {error.code}: {error.message} (id {message.id})"
        return "error", type(message).__name__


class LoggedWriteStream(AsyncResource):
    """The client's write stream, handing each message to a ``MessageTap`` as it is sent."""

    def __init__(self, inner: Any, tap: MessageTap) -> None:
        self._inner = inner
        self._tap = tap

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)

    async def send(self, item: Any, /) -> None:
        if self._tap.log is not None:
            self._tap.sent(item)
        await self._inner.send(item)

    async def aclose(self) -> None:
        await self._inner.aclose()


def _pretty(wire: str) -> str:
    try:
        return json.dumps(json.loads(wire), indent=2, ensure_ascii=False)
    except ValueError:
        return wire
