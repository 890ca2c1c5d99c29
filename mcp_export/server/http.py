"""Streamable HTTP for the served agent: address parsing, the bearer-token gate, and uvicorn.

The SDK builds the ASGI app (``Server.streamable_http_app``: the MCP endpoint at ``/mcp``, both
protocol eras, DNS-rebinding protection on loopback hosts); this module puts two gates in front of
it and runs it with uvicorn on a socket bound here, so the real port is known (and logged) before
the first request, also for ``PORT`` 0:

- ``BearerTokenGate``: the token check (when there is a token);
- ``MessageScreen``: every POSTed message passes the check stdio input passes
  (``server.screen``), and what it refuses gets HTTP 400 with a JSON-RPC error body; a body
  over ``MAX_BODY_BYTES`` gets 413 with one, and a request other than ``initialize`` without a
  session is told to send ``initialize`` first.

Safety rule: a server reachable from other machines runs the agent's model and tools for whoever
connects, so binding to a non-loopback address without a token is refused at start-up
(``HttpAddressError``).
"""

from __future__ import annotations

import hmac
import ipaddress
import logging
import socket
from collections.abc import Awaitable, Callable, MutableMapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import anyio
import anyio.abc
import mcp_types as types
import pydantic_core
import uvicorn
from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS

from mcp_export.errors import ConfigurationError
from mcp_export.server.screen import Refusal, screen

if TYPE_CHECKING:
    from mcp.server.lowlevel.server import Server

__all__ = [
    "MAX_BODY_BYTES",
    "MCP_PATH",
    "TOKEN_ENV",
    "BearerTokenGate",
    "HttpAddress",
    "HttpAddressError",
    "MessageScreen",
    "bind_socket",
    "check_exposure",
    "parse_http_address",
    "serve_http",
]

logger = logging.getLogger(__name__)

MCP_PATH = "/mcp"
TOKEN_ENV = "METAAGENT_TOKEN"
DEFAULT_HOST = "127.0.0.1"
MAX_BODY_BYTES = 4 * 1024 * 1024
"""The largest POST body accepted (the SDK's default; stdio lines may be longer, as a server
reachable over a network holds each body in memory for whoever sends it)."""

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]


class HttpAddressError(ConfigurationError):
    """The ``--http`` address is malformed, or exposed without a token."""


@dataclass(frozen=True)
class HttpAddress:
    """Where to listen. ``port`` 0 picks a free port."""

    host: str
    port: int

    @property
    def loopback(self) -> bool:
        """Whether only this machine can connect."""
        if self.host == "localhost":
            return True
        try:
            return ipaddress.ip_address(self.host).is_loopback
        except ValueError:
            return False  # a host name: it may resolve to anything

    def url(self, port: int | None = None) -> str:
        """The MCP endpoint's URL (with ``port`` once the real port is known)."""
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"http://{host}:{self.port if port is None else port}{MCP_PATH}"


def parse_http_address(text: str) -> HttpAddress:
    """Parse ``[HOST:]PORT`` (``8000``, ``0.0.0.0:8000``, ``[::1]:8000``); HOST: 127.0.0.1.

    Raises:
        HttpAddressError: not of that form, or the port is out of range.
    """
    value = text.strip()
    host, port_text = DEFAULT_HOST, value
    if value.startswith("["):
        end = value.find("]")
        if end < 0 or value[end + 1 : end + 2] != ":":
            raise HttpAddressError(
                f"--http {text!r}: write an IPv6 host in brackets followed by a port: [::1]:8000"
            )
        host, port_text = value[1:end], value[end + 2 :]
    elif ":" in value:
        host, _, port_text = value.rpartition(":")
    if not host:
        raise HttpAddressError(f"--http {text!r}: the host before ':' is empty")
    try:
        port = int(port_text)
    except ValueError:
        raise HttpAddressError(
            f"--http {text!r}: expected [HOST:]PORT, such as 8000 or 127.0.0.1:8000"
        ) from None
    if not 0 <= port <= 65535:
        raise HttpAddressError(f"--http {text!r}: the port must be between 0 and 65535")
    return HttpAddress(host, port)


def check_exposure(address: HttpAddress, token: str | None) -> None:
    """Refuse to serve a non-loopback address without a bearer token.

    Raises:
        HttpAddressError: explaining the risk and the two ways out.
    """
    if token or address.loopback:
        return
    raise HttpAddressError(
        f"refusing to serve on {address.host}: that address can be reached from other machines, "
        "and anyone who connects could run this agent's model and tools. Set a bearer token "
        f"(--token, or the {TOKEN_ENV} environment variable) that clients must send, or serve on "
        "127.0.0.1"
    )


class BearerTokenGate:
    """ASGI middleware: HTTP requests must carry ``Authorization: Bearer <token>``, else 401.

    The comparison is constant-time. Lifespan events pass through untouched.
    """

    def __init__(self, app: ASGIApp, token: str) -> None:
        self._app = app
        self._expected = f"Bearer {token}".encode()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self._app(scope, receive, send)
            return
        given = b""
        for key, value in scope.get("headers", ()):
            if key == b"authorization":
                given = value
                break
        if hmac.compare_digest(given, self._expected):
            await self._app(scope, receive, send)
            return
        reason = "missing" if not given else "wrong"
        logger.warning("refused an HTTP request with a %s bearer token", reason)
        body = (
            b'{"error": "unauthorized", "message": "send the server\'s token as '
            b'Authorization: Bearer <token>"}'
        )
        await _json_reply(send, 401, body, (b"www-authenticate", b'Bearer realm="metaagent"'))


async def _json_reply(send: Send, status: int, body: bytes, *extra: tuple[bytes, bytes]) -> None:
    headers = [
        (b"content-type", b"application/json"),
        (b"content-length", str(len(body)).encode()),
        *extra,
    ]
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})


def _error_body(refusal: Refusal) -> bytes:
    error = types.JSONRPCError(
        jsonrpc="2.0",
        id=refusal.request_id,
        error=types.ErrorData(code=refusal.code, message=refusal.message),
    )
    return error.model_dump_json(by_alias=True, exclude_unset=True).encode()


class _ClientGone(Exception):
    """The client disconnected before its whole body arrived: nothing to answer."""


class MessageScreen:
    """ASGI middleware: POSTs to the MCP endpoint pass ``server.screen.screen`` first.

    A refused message is answered 400 with the JSON-RPC error (its id when it has a readable
    one); a body larger than ``max_body`` 413, also with a JSON-RPC error; a 2025-11-25 request
    other than ``initialize`` without an ``Mcp-Session-Id`` 400, saying to send ``initialize``.
    Everything else reaches the SDK's app with its body unchanged.

    Args:
        app: the SDK's ASGI app.
        max_body: the largest body accepted, in bytes.
    """

    def __init__(self, app: ASGIApp, max_body: int = MAX_BODY_BYTES) -> None:
        self._app = app
        self._max_body = max_body

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["method"] != "POST" or scope["path"] != MCP_PATH:
            await self._app(scope, receive, send)
            return
        headers = dict(scope.get("headers", ()))
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
        refusal = screen(body) or _missing_session(body, headers)
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

    async def _refuse(self, send: Send, status: int, refusal: Refusal) -> None:
        logger.warning("refused an HTTP message (%d): %s", status, refusal.message)
        await _json_reply(send, status, _error_body(refusal))


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


def bind_socket(address: HttpAddress) -> socket.socket:
    """A listening TCP socket on ``address`` (port 0 → a free port).

    Raises:
        HttpAddressError: the address cannot be bound (in use, not this machine's…).
    """
    try:
        infos = socket.getaddrinfo(
            address.host, address.port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE
        )
    except socket.gaierror as exc:
        raise HttpAddressError(f"--http: cannot resolve host {address.host!r}: {exc}") from exc
    family, kind, proto, _, sockaddr = infos[0]
    sock = socket.socket(family, kind, proto)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(sockaddr)
        sock.listen(128)
    except OSError as exc:
        sock.close()
        raise HttpAddressError(
            f"cannot listen on {address.host}:{address.port}: {exc.strerror or exc}; "
            "choose another port (or 0 for any free port)"
        ) from exc
    sock.setblocking(False)
    return sock


async def serve_http(
    server: Server[Any],
    address: HttpAddress,
    *,
    token: str | None,
    log_level: str = "warning",
    on_ready: Callable[[str], None] | None = None,
) -> None:
    """Serve ``server`` over streamable HTTP until cancelled.

    Args:
        server: the low-level MCP server.
        address: where to listen (checked with ``check_exposure`` first).
        token: the bearer token clients must send; None: no token (loopback only).
        log_level: uvicorn's log level (its logs go to stderr).
        on_ready: called with the endpoint URL once the socket listens.

    Raises:
        HttpAddressError: exposed without a token, or the address cannot be bound.
    """
    check_exposure(address, token)

    app: ASGIApp = MessageScreen(
        server.streamable_http_app(
            streamable_http_path=MCP_PATH, host=address.host, max_request_body_size=MAX_BODY_BYTES
        )
    )
    if token:
        app = BearerTokenGate(app, token)
    sock = bind_socket(address)
    port = int(sock.getsockname()[1])
    config = uvicorn.Config(
        app,
        log_level=log_level,
        # Our own logging setup sends everything to stderr; uvicorn's default would put the
        # access log on stdout.
        log_config=None,
        access_log=False,
        lifespan="on",
        timeout_graceful_shutdown=2,
    )
    url = address.url(port)
    logger.info("serving MCP over streamable HTTP at %s", url)
    if on_ready is not None:
        on_ready(url)
    web = uvicorn.Server(config)

    async def run(group: anyio.abc.TaskGroup) -> None:
        # Shielded: a cancelled serve_http stops uvicorn the graceful way (should_exit), so open
        # streams and the session manager's tasks are closed in order instead of torn apart.
        with anyio.CancelScope(shield=True):
            await web.serve(sockets=[sock])
        group.cancel_scope.cancel()  # uvicorn stopped by itself (a signal): so do we

    try:
        async with anyio.create_task_group() as group:
            group.start_soon(run, group)
            try:
                await anyio.sleep_forever()
            finally:
                web.should_exit = True
    finally:
        sock.close()
