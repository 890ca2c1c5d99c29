"""Streamable HTTP for the served agent: address parsing, the app and its gates, and uvicorn.

The SDK builds the ASGI app (``Server.streamable_http_app``: the MCP endpoint at ``/mcp``, both
protocol eras, DNS-rebinding protection on loopback hosts, and with OAuth the protected resource
metadata and the bearer checks of ``server.oauth``); this module adds two gates and runs it with
uvicorn on a socket bound here, so the real port is known (and logged) before the first request,
also for ``PORT`` 0:

- ``BearerTokenGate`` (``server.http_auth``): the one-person token check (``--token``), around
  everything but the ``/.well-known/`` documents and the extra routes;
- ``MessageScreen`` (``server.http_gates``): every POSTed message passes the check stdio input
  passes. With OAuth it runs after the token check, so a request without a good token hears
  401 first; ``AuthRefusals`` (``server.http_auth``) puts that 401 (or 403) in words an MCP
  client shows;
- ``CallerLimits`` (``server.limits``), with ``limits``: each caller's ``tools/call`` within its
  calls per period and at once, else 429 with ``Retry-After``; after the screen, so it reads a
  screened body and the authenticated caller.

Stopping: Ctrl+C (SIGINT) stops at once, cutting the calls under way (a second one does not
wait for open connections either). SIGTERM, what a supervisor sends before it kills, drains
first (``DrainGate``): readiness answers 503 and new calls are refused with 503 at once, while
the calls under way may finish for up to ``shutdown_grace`` seconds; then the server stops as on
Ctrl+C. A second SIGTERM ends the wait.

Safety rule: a server reachable from other machines runs the agent's model and tools for whoever
connects, so binding to a non-loopback address without a token or OAuth is refused at start-up
(``HttpAddressError``).
"""

from __future__ import annotations

import asyncio
import ipaddress
import logging
import signal
import socket
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from types import FrameType
from typing import TYPE_CHECKING, Any

import anyio
import anyio.abc
import httpx2
import uvicorn
from starlette.middleware import Middleware
from starlette.routing import BaseRoute, Route

from mcp_export.errors import ConfigurationError
from mcp_export.server.http_auth import AuthRefusals, BearerTokenGate
from mcp_export.server.http_gates import (
    MAX_BODY_BYTES,
    MCP_PATH,
    ASGIApp,
    Drain,
    DrainGate,
    MessageScreen,
)
from mcp_export.server.limits import CallerLimits, Limits
from mcp_export.server.oauth import OAuthSettings, auth_settings

if TYPE_CHECKING:
    from mcp.server.lowlevel.server import Server

__all__ = [
    "SHUTDOWN_GRACE",
    "TOKEN_ENV",
    "HttpAddress",
    "HttpAddressError",
    "bind_socket",
    "check_exposure",
    "parse_http_address",
    "resource_url",
    "serve_http",
]

logger = logging.getLogger(__name__)

TOKEN_ENV = "METAAGENT_TOKEN"
DEFAULT_HOST = "127.0.0.1"
SHUTDOWN_GRACE = 25.0
"""Seconds the calls under way may take to finish after SIGTERM, by default: under the 30 s a
Kubernetes pod gets by default between SIGTERM and SIGKILL, leaving time to close the store."""
_CLOSE_TIMEOUT = 2
"""Seconds open connections get to close once the server stops, before they are cancelled."""


class HttpAddressError(ConfigurationError):
    """The ``--http`` address is malformed, or exposed without a token or OAuth."""


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

    @property
    def unspecified(self) -> bool:
        """Whether this is "every interface" (0.0.0.0, ::), an address no client can use."""
        try:
            return ipaddress.ip_address(self.host).is_unspecified
        except ValueError:
            return False

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


def check_exposure(
    address: HttpAddress, token: str | None, *, oauth: OAuthSettings | None = None
) -> None:
    """Refuse to serve a non-loopback address without a bearer token or OAuth.

    Raises:
        HttpAddressError: explaining the risk and the ways out.
    """
    if token or oauth is not None or address.loopback:
        return
    raise HttpAddressError(
        f"refusing to serve on {address.host}: that address can be reached from other machines, "
        "and anyone who connects could run this agent's model and tools. Set a bearer token "
        f"(--token, or the {TOKEN_ENV} environment variable) that clients must send, check OAuth "
        "access tokens (--oauth-issuer), or serve on 127.0.0.1"
    )


def resource_url(address: HttpAddress, port: int, oauth: OAuthSettings) -> str:
    """The URL tokens must be issued for: ``oauth.resource``, else the served ``/mcp`` URL.

    Raises:
        HttpAddressError: no resource given while serving on every interface (0.0.0.0), whose
            URL no client reaches.
    """
    if oauth.resource:
        return oauth.resource
    if address.unspecified:
        raise HttpAddressError(
            f"--oauth-resource is needed when serving on {address.host}: give this server's URL "
            "as clients reach it (such as https://mcp.example.com/mcp); tokens must be issued "
            "for it"
        )
    return address.url(port)


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
        sock.listen(2048)  # uvicorn's own default backlog
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
    oauth: OAuthSettings | None = None,
    stateless: bool = False,
    extra_routes: Sequence[BaseRoute] = (),
    ready_path: str | None = None,
    shutdown_grace: float = SHUTDOWN_GRACE,
    limits: Limits | None = None,
    on_refused: Callable[[str], None] | None = None,
) -> None:
    """Serve ``server`` over streamable HTTP until cancelled or stopped by a signal.

    Args:
        server: the low-level MCP server.
        address: where to listen (checked with ``check_exposure`` first).
        token: the bearer token clients must send; None: no token (loopback only, unless OAuth).
        log_level: uvicorn's log level (its logs go to stderr).
        on_ready: called with the endpoint URL once the socket listens.
        oauth: check OAuth access tokens from this authorization server (exclusive with
            ``token``); its metadata is read, and its keys fetched, before ``on_ready``.
        stateless: serve every request on its own, without sessions (any instance behind a
            load balancer can answer any request).
        extra_routes: more routes (health checks, metrics), served without a token.
        ready_path: the readiness route among ``extra_routes``: it answers 503 once SIGTERM
            has started the shutdown.
        shutdown_grace: after SIGTERM, the seconds the calls under way may take to finish
            (new ones are refused meanwhile); 0 stops at once, as Ctrl+C does.
        limits: each caller's calls per period and at once (``server.limits``); over them a
            ``tools/call`` is answered 429 with ``Retry-After``.
        on_refused: called with the reason of each call refused by ``limits`` (the metrics).

    Raises:
        HttpAddressError: exposed without a token or OAuth, both given, or the address cannot
            be bound.
        OAuthError: the authorization server or its keys cannot be reached.
    """
    if token and oauth is not None:
        raise HttpAddressError(
            "--token and --oauth-issuer exclude each other: use --token for one person, OAuth "
            "for a team"
        )
    check_exposure(address, token, oauth=oauth)
    sock = bind_socket(address)
    try:
        async with httpx2.AsyncClient(timeout=10.0, follow_redirects=False) as http:
            port = int(sock.getsockname()[1])
            drain = Drain()
            inner = []
            if limits is not None and limits.any:
                logger.info("limiting each caller to %s", limits.describe())
                inner.append(
                    Middleware(
                        CallerLimits, limits=limits, shared_token=bool(token), refused=on_refused
                    )
                )
            app = await _app(
                server, address, port, http, token, oauth, stateless, extra_routes, drain, inner
            )
            app = DrainGate(app, drain, ready_path)
            web = _DrainingServer(app, log_level, drain, shutdown_grace)
            await _serve(web, sock, address.url(port), on_ready)
    finally:
        sock.close()


async def _app(
    server: Server[Any],
    address: HttpAddress,
    port: int,
    http: httpx2.AsyncClient,
    token: str | None,
    oauth: OAuthSettings | None,
    stateless: bool,
    extra_routes: Sequence[BaseRoute],
    drain: Drain,
    inner: Sequence[Middleware] = (),
) -> ASGIApp:
    """The served ASGI app: the SDK's, screened, behind the token gate or the OAuth checks
    (``inner``: more middleware after the screen, such as the callers' limits)."""
    protection: dict[str, Any] = {}
    explained: list[Middleware] = []
    if oauth is not None:
        # PyJWT and cryptography: only a server that checks OAuth tokens loads them.
        from mcp_export.server.oauth_verifiers import open_verifier

        resource = resource_url(address, port, oauth)
        verifier = await open_verifier(oauth, resource, http)
        protection = {
            "auth": auth_settings(oauth, resource, verifier.issuer),
            "token_verifier": verifier,
        }
        explained.append(
            Middleware(
                AuthRefusals,
                issuer=verifier.issuer,
                resource=resource,
                required_scopes=oauth.scopes,
            )
        )
        logger.info(
            "checking OAuth access tokens of %s for %s (%s)",
            verifier.issuer,
            resource,
            "introspection" if oauth.introspect else "JWT",
        )
    starlette = server.streamable_http_app(
        streamable_http_path=MCP_PATH,
        host=address.host,
        max_request_body_size=MAX_BODY_BYTES,
        stateless_http=stateless,
        custom_starlette_routes=list(extra_routes),  # type: ignore[arg-type]
        **protection,
    )
    # Innermost of the app's middleware: after the SDK's authentication, before its routes.
    starlette.user_middleware.extend(explained)
    starlette.user_middleware.append(
        Middleware(
            MessageScreen,
            max_body=MAX_BODY_BYTES,
            stateless=stateless,
            required_scopes=oauth.scopes if oauth is not None else (),
            drain=drain,
        )
    )
    starlette.user_middleware.extend(inner)
    app: ASGIApp = starlette
    if token:
        open_paths = [r.path for r in extra_routes if isinstance(r, Route)]
        app = BearerTokenGate(app, token, open_paths)
    return app


class _DrainingServer(uvicorn.Server):
    """uvicorn's server, stopping at once on SIGINT and draining first on SIGTERM.

    uvicorn would stop on either signal at once and raise it again once stopped (a SIGTERM then
    ends the process before the agents' tool servers and the history store are closed); this
    one returns instead, so ``serve`` closes them and exits 0. Its ``should_exit`` is also what
    the SDK's event streams (``sse_starlette``) watch: they end when it is set, so it is set
    only once the calls under way have finished.
    """

    def __init__(self, app: ASGIApp, log_level: str, drain: Drain, grace: float) -> None:
        super().__init__(
            uvicorn.Config(
                app,
                log_level=log_level,
                # Our own logging setup sends everything to stderr; uvicorn's default would put
                # the access log on stdout.
                log_config=None,
                access_log=False,
                lifespan="on",
                timeout_graceful_shutdown=_CLOSE_TIMEOUT,
            )
        )
        self.drain = drain
        self.grace = grace
        self._loop: asyncio.AbstractEventLoop | None = None

    async def serve(self, sockets: list[socket.socket] | None = None) -> None:
        """Serve on ``sockets`` until ``should_exit`` (a signal, or the caller)."""
        self._loop = asyncio.get_running_loop()
        await super().serve(sockets=sockets)

    def handle_exit(self, sig: int, frame: FrameType | None) -> None:
        """The signal handler (SIGINT, SIGTERM): drain on a first SIGTERM, else stop."""
        loop = self._loop
        if sig == signal.SIGTERM and self.grace > 0 and not self.drain.started and loop:
            loop.call_soon_threadsafe(self.drain.start)
            return
        if self.should_exit and sig == signal.SIGINT:
            self.force_exit = True
        self.should_exit = True

    async def stop_when_drained(self) -> None:
        """Once draining starts, wait for the calls under way (at most the grace), then stop."""
        await self.drain.wait_started()
        with anyio.move_on_after(self.grace) as waited:
            await self.drain.wait_idle()
        if waited.cancelled_caught:
            logger.warning(
                "shutting down: %d request(s) still under way after %g s are cancelled",
                self.drain.in_flight,
                self.grace,
            )
        self.should_exit = True


async def _serve(
    web: _DrainingServer,
    sock: socket.socket,
    url: str,
    on_ready: Callable[[str], None] | None,
) -> None:
    logger.info("serving MCP over streamable HTTP at %s", url)
    if on_ready is not None:
        on_ready(url)

    async def run(group: anyio.abc.TaskGroup) -> None:
        # Shielded: a cancelled serve_http stops uvicorn the graceful way (should_exit), so open
        # streams and the session manager's tasks are closed in order instead of torn apart.
        with anyio.CancelScope(shield=True):
            await web.serve(sockets=[sock])
        group.cancel_scope.cancel()  # uvicorn stopped by itself (a signal): so do we

    async with anyio.create_task_group() as group:
        group.start_soon(run, group)
        group.start_soon(web.stop_when_drained)
        try:
            await anyio.sleep_forever()
        finally:
            web.should_exit = True
