"""The ASGI gates in front of the SDK's streamable HTTP app: the message screen, the drain.

(The token checks' answers are in ``server.http_auth``.)

- ``MessageScreen``: every POSTed message passes the check stdio input passes
  (``server.screen``), and what it refuses gets HTTP 400 with a JSON-RPC error body; a body
  over the limit gets 413 with one, and (unless stateless) a request other than ``initialize``
  without a session is told to send ``initialize`` first. A request whose
  ``MCP-Protocol-Version`` header names a version this server does not speak gets 400 naming
  the versions it does; a stateless server answers ``GET`` (an event stream it would never
  write to) with 405;
- ``DrainGate`` with its ``Drain``: once shutdown starts, the readiness path answers 503 and new
  calls are refused with 503 (a balancer sends them elsewhere), while the calls under way and
  the messages they still need (a sampling answer, a cancel) go on; ``Drain`` tells when none
  is left.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Collection, MutableMapping
from typing import Any

import anyio
import mcp_types as types
import pydantic_core
from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS, MODERN_PROTOCOL_VERSIONS

from mcp_export.server.screen import Refusal, screen

__all__ = [
    "MAX_BODY_BYTES",
    "MCP_PATH",
    "WELL_KNOWN",
    "ASGIApp",
    "Drain",
    "DrainGate",
    "Message",
    "MessageScreen",
    "Receive",
    "Scope",
    "Send",
    "admitted",
    "error_body",
    "json_reply",
]

logger = logging.getLogger(__name__)

MCP_PATH = "/mcp"
WELL_KNOWN = "/.well-known/"
SHUTTING_DOWN = (
    "This server is shutting down and takes no new calls: send the call again (another "
    "instance behind the same address answers it)"
)
_NEW_WORK = frozenset({"initialize", "tools/call"})
_SPOKEN_VERSIONS = (*HANDSHAKE_PROTOCOL_VERSIONS, *MODERN_PROTOCOL_VERSIONS)
MAX_BODY_BYTES = 4 * 1024 * 1024
"""The largest POST body accepted (the SDK's default; stdio lines may be longer, as a server
reachable over a network holds each body in memory for whoever sends it)."""

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]


async def json_reply(send: Send, status: int, body: bytes, *extra: tuple[bytes, bytes]) -> None:
    """Answer with ``status`` and the JSON ``body`` (plus ``extra`` headers)."""
    headers = [
        (b"content-type", b"application/json"),
        (b"content-length", str(len(body)).encode()),
        *extra,
    ]
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})


def error_body(refusal: Refusal) -> bytes:
    """A JSON-RPC error response naming ``refusal``'s code, message and request id."""
    error = types.JSONRPCError(
        jsonrpc="2.0",
        id=refusal.request_id,
        error=types.ErrorData(code=refusal.code, message=refusal.message),
    )
    return error.model_dump_json(by_alias=True, exclude_unset=True).encode()


class _ClientGone(Exception):
    """The client disconnected before its whole body arrived: nothing to answer."""


def admitted(scope: Scope, required_scopes: Collection[str]) -> bool:
    """False only when an authentication middleware ran and the endpoint will refuse the
    request: no good token, or one without every scope in ``required_scopes``."""
    if "user" not in scope:
        return True  # no authentication here (none, or the shared token's gate before us)
    if not getattr(scope["user"], "is_authenticated", False):
        return False
    granted = getattr(scope.get("auth"), "scopes", ())
    return all(required in granted for required in required_scopes)


class MessageScreen:
    """ASGI middleware: POSTs to the MCP endpoint pass ``server.screen.screen`` first.

    Any request to the endpoint whose ``MCP-Protocol-Version`` header names a version this
    server does not speak is answered 400 with a JSON-RPC error naming the ones it does (the
    transport specification asks for 400; the SDK would talk about a ``_meta`` envelope). A
    stateless server answers ``GET`` 405: it opens no event stream (nothing would ever be
    written to it), which the transport specification allows.

    A refused message is answered 400 with the JSON-RPC error (its id when it has a readable
    one); a body larger than ``max_body`` 413, also with a JSON-RPC error; a 2025-11-25 request
    other than ``initialize`` without an ``Mcp-Session-Id`` 400, saying to send ``initialize``
    (unless ``stateless``); once ``drain`` has started, a new ``tools/call`` or ``initialize``
    503 with ``Retry-After``. Everything else reaches the SDK's app with its body unchanged. A
    request that an authentication middleware before this one found without good credentials,
    or without every scope in ``required_scopes``, passes unread: the endpoint refuses it (401
    or 403, explained by ``server.http_auth.AuthRefusals``), and a caller without a good token
    learns nothing of what the screen says.

    Args:
        app: the SDK's ASGI app.
        max_body: the largest body accepted, in bytes.
        stateless: the SDK serves every request without a session.
        required_scopes: the scopes the endpoint requires of an authenticated request.
        drain: once it has started, a new ``tools/call`` or ``initialize`` is refused with 503
            and ``Retry-After`` (``SHUTTING_DOWN``).
    """

    def __init__(
        self,
        app: ASGIApp,
        max_body: int = MAX_BODY_BYTES,
        *,
        stateless: bool = False,
        required_scopes: Collection[str] = (),
        drain: Drain | None = None,
    ) -> None:
        self._app = app
        self._max_body = max_body
        self._stateless = stateless
        self._scopes = frozenset(required_scopes)
        self._drain = drain

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if (
            scope["type"] != "http"
            or scope["path"] != MCP_PATH
            or not admitted(scope, self._scopes)
        ):
            await self._app(scope, receive, send)
            return
        headers = dict(scope.get("headers", ()))
        version = headers.get(b"mcp-protocol-version")
        if version is not None and version.decode("latin-1") not in _SPOKEN_VERSIONS:
            await self._refuse_version(send, version.decode("latin-1"))
            return
        if scope["method"] == "GET" and self._stateless:
            await self._refuse(
                send,
                405,
                Refusal(
                    types.INVALID_REQUEST,
                    "Method Not Allowed: this server is stateless and opens no event stream "
                    "for GET; send requests by POST, whose answers come in their responses",
                ),
                (b"allow", b"POST"),
            )
            return
        if scope["method"] != "POST":
            await self._app(scope, receive, send)
            return
        try:
            body = await self._read_body(headers, receive)
        except _ClientGone:
            return
        if body is None:
            await self._refuse(
                send,
                413,
                Refusal(
                    types.INVALID_REQUEST,
                    f"Invalid Request: the body is larger than this server's limit of "
                    f"{self._max_body} bytes; send less data in one message",
                ),
            )
            return
        refusal = screen(body)
        if refusal is None and self._draining() and _request_method(body) in _NEW_WORK:
            await self._refuse(
                send,
                503,
                Refusal(types.INTERNAL_ERROR, SHUTTING_DOWN, _request_id(body)),
                (b"retry-after", b"1"),
            )
            return
        if refusal is None and not self._stateless:
            refusal = _missing_session(body, headers)
        if refusal is not None:
            await self._refuse(send, 400, refusal)
            return
        replayed = False

        async def replay() -> Message:
            nonlocal replayed
            if not replayed:
                replayed = True
                return {"type": "http.request", "body": body, "more_body": False}
            return await receive()

        await self._app(scope, replay, send)

    def _draining(self) -> bool:
        return self._drain is not None and self._drain.started

    async def _read_body(self, headers: dict[bytes, bytes], receive: Receive) -> bytes | None:
        """The whole body; None when it is (or says it is) larger than the limit."""
        try:
            declared = int(headers.get(b"content-length", b"0"))
        except ValueError:
            declared = 0
        if declared > self._max_body:
            return None
        body = bytearray()
        while True:
            message = await receive()
            if message["type"] != "http.request":
                raise _ClientGone
            body += message.get("body", b"")
            if len(body) > self._max_body:
                return None
            if not message.get("more_body", False):
                break
        return bytes(body)

    async def _refuse(
        self, send: Send, status: int, refusal: Refusal, *extra: tuple[bytes, bytes]
    ) -> None:
        logger.warning("refused an HTTP message (%d): %s", status, refusal.message)
        await json_reply(send, status, error_body(refusal), *extra)

    async def _refuse_version(self, send: Send, requested: str) -> None:
        shown = requested if len(requested) <= 40 else requested[:40] + "…"
        error = types.JSONRPCError(
            jsonrpc="2.0",
            id=None,
            error=types.ErrorData(
                code=types.UNSUPPORTED_PROTOCOL_VERSION,
                message=(
                    f"Unsupported protocol version: the MCP-Protocol-Version header says "
                    f"{shown!r}, which this server does not speak; send one of "
                    f"{', '.join(_SPOKEN_VERSIONS)}"
                ),
                data={"supported": list(_SPOKEN_VERSIONS), "requested": shown},
            ),
        )
        logger.warning("refused an HTTP request for protocol version %r", shown)
        body = error.model_dump_json(by_alias=True, exclude_unset=True).encode()
        await json_reply(send, 400, body)


def _missing_session(body: bytes, headers: dict[bytes, bytes]) -> Refusal | None:
    """A 2025-11-25 request without a session that is not ``initialize``: say what to do.

    (The SDK says "Missing session ID" with no id and no way forward.)
    """
    if b"mcp-session-id" in headers:
        return None
    version = headers.get(b"mcp-protocol-version", b"").decode("latin-1")
    if version and version not in HANDSHAKE_PROTOCOL_VERSIONS:
        return None  # a later era: requests need no session
    message = pydantic_core.from_json(body)  # screened: a JSON object
    if "id" not in message or message.get("method", "initialize") == "initialize":
        return None  # a notification, a response, or initialize itself
    return Refusal(
        types.INVALID_REQUEST,
        "Bad Request: no session: send an initialize request first and then its answer's "
        "Mcp-Session-Id header with every request (protocol 2025-11-25), or use protocol "
        "2026-07-28, which needs no session",
        message["id"],
    )


def _request_method(body: bytes) -> str | None:
    """The method of a screened body's request (None for a notification or a response)."""
    message = pydantic_core.from_json(body)  # screened: a JSON object
    method = message.get("method")
    return method if "id" in message and isinstance(method, str) else None


def _request_id(body: bytes) -> str | int | None:
    request_id = pydantic_core.from_json(body).get("id")
    return request_id if isinstance(request_id, str | int) else None


class Drain:
    """The calls under way, and whether shutdown has started (then no new call is taken).

    ``start`` may be called from a signal handler through ``loop.call_soon_threadsafe``; the
    rest runs on the event loop.
    """

    def __init__(self) -> None:
        self.started = False
        self._in_flight = 0
        self._began = anyio.Event()
        self._changed = anyio.Event()

    @property
    def in_flight(self) -> int:
        """The POSTs to the MCP endpoint being answered now."""
        return self._in_flight

    def start(self) -> None:
        """Shutdown starts: readiness fails and new calls are refused from now on."""
        if not self.started:
            logger.warning(
                "shutting down: waiting for %d request(s) under way, taking no new calls",
                self._in_flight,
            )
        self.started = True
        self._began.set()

    async def wait_started(self) -> None:
        """Return once ``start`` has been called."""
        await self._began.wait()

    async def wait_idle(self) -> None:
        """Return once no POST to the MCP endpoint is being answered."""
        while self._in_flight:
            self._changed = anyio.Event()
            await self._changed.wait()

    def enter(self) -> None:
        """A POST to the MCP endpoint is being answered."""
        self._in_flight += 1

    def leave(self) -> None:
        """A POST to the MCP endpoint has been answered (or its client went away)."""
        self._in_flight -= 1
        self._changed.set()


class DrainGate:
    """ASGI middleware: counts the POSTs to the MCP endpoint in ``drain`` while they are
    answered, and once ``drain`` has started answers ``ready_path`` 503 ("not ready: shutting
    down"), so a balancer's readiness check fails at once.

    Args:
        app: the app behind the gate.
        drain: the shutdown state this gate keeps and reads.
        ready_path: the readiness route's path (None: none served).
    """

    def __init__(self, app: ASGIApp, drain: Drain, ready_path: str | None) -> None:
        self._app = app
        self._drain = drain
        self._ready_path = ready_path

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self._app(scope, receive, send)
            return
        path = scope.get("path")
        if path == self._ready_path and self._drain.started:
            body = b"not ready: shutting down\n"
            headers = [
                (b"content-type", b"text/plain; charset=utf-8"),
                (b"content-length", str(len(body)).encode()),
            ]
            await send({"type": "http.response.start", "status": 503, "headers": headers})
            await send({"type": "http.response.body", "body": body})
            return
        if path != MCP_PATH or scope["method"] != "POST":
            await self._app(scope, receive, send)
            return
        self._drain.enter()
        try:
            await self._app(scope, receive, send)
        finally:
            self._drain.leave()
