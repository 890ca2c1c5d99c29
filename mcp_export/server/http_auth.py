"""The 401 and 403 answers of the served HTTP server, in words an MCP client shows.

An MCP client shows the message of a JSON-RPC error in a refused POST's body; anything else (the
SDK's ``{"error": "invalid_token"}``, a plain-text body) leaves it with "Server returned an error
response". So every refusal here has a JSON-RPC error body that says what was wrong and what to
do, while the status and the ``WWW-Authenticate`` challenge stay what an OAuth client reads to
get (or step up) its token. As RFC 6750 §3.1 asks, a request that sent no bearer credentials
(no ``Authorization``, or another scheme) gets a challenge without an error code; a token that
was refused gets ``error="invalid_token"`` and the reason.

- ``BearerTokenGate``: the one-person token check (``--token``), around everything but the
  ``/.well-known/`` documents (which then answer 404: no OAuth here) and the open paths;
- ``AuthRefusals``: with OAuth, the SDK's own 401 and 403 of the MCP endpoint (its
  ``RequireAuthMiddleware``) get such a body, the 401 the reason ``server.oauth_verifiers``
  found, and the 401's challenge loses its error code when no token was sent.
"""

from __future__ import annotations

import hmac
import logging
import re
from collections.abc import Collection

import mcp_types as types

from mcp_export.server.http_gates import (
    MCP_PATH,
    WELL_KNOWN,
    ASGIApp,
    Message,
    Receive,
    Scope,
    Send,
    admitted,
    error_body,
    json_reply,
)
from mcp_export.server.oauth import refusal_reason
from mcp_export.server.screen import Refusal

__all__ = ["AuthRefusals", "BearerTokenGate"]

logger = logging.getLogger(__name__)

_TOKEN_SOURCES = "the one it was started with: --token or the METAAGENT_TOKEN environment variable"
_RESOURCE_METADATA = re.compile(rb'resource_metadata="([^"]*)"')
_UNQUOTABLE = re.compile(r"[^\x20\x21\x23-\x5b\x5d-\x7e]")
"""What an RFC 6750 ``error_description`` may not hold (a quote, a backslash, non-ASCII)."""


def _authorization(scope: Scope) -> bytes:
    for key, value in scope.get("headers", ()):
        if key == b"authorization":
            return bytes(value)
    return b""


def _bearer(scope: Scope) -> bytes | None:
    """The bearer token the request sent, or None when it sent none (no header, another
    scheme, nothing after the scheme)."""
    scheme, _, credentials = _authorization(scope).strip().partition(b" ")
    token = credentials.strip(b" ")
    return token if scheme.lower() == b"bearer" and token else None


def _unauthorized(message: str) -> bytes:
    return error_body(Refusal(types.INVALID_REQUEST, f"Unauthorized: {message}"))


class BearerTokenGate:
    """ASGI middleware: HTTP requests must carry ``Authorization: Bearer <token>``, else 401.

    The scheme is matched in any case (RFC 9110), the token in constant time. Paths under
    ``/.well-known/`` and ``open_paths`` pass without a token; lifespan events pass untouched.

    Args:
        app: the app behind the gate.
        token: the token clients must send.
        open_paths: paths served to anyone (health checks, metrics).
    """

    def __init__(self, app: ASGIApp, token: str, open_paths: Collection[str] = ()) -> None:
        self._app = app
        self._expected = token.encode()
        self._open = frozenset(open_paths)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        path = str(scope.get("path", ""))
        if scope["type"] != "http" or path.startswith(WELL_KNOWN) or path in self._open:
            await self._app(scope, receive, send)
            return
        given = _bearer(scope)
        if given is not None and hmac.compare_digest(given, self._expected):
            await self._app(scope, receive, send)
            return
        if given is None:
            logger.warning("refused an HTTP request without a bearer token")
            body = _unauthorized(
                f"this server needs its bearer token: send it as Authorization: Bearer <token> "
                f"({_TOKEN_SOURCES})"
            )
            challenge = b'Bearer realm="metaagent"'
        else:
            logger.warning("refused an HTTP request with a wrong bearer token")
            body = _unauthorized(
                f"the bearer token sent is not this server's token; send {_TOKEN_SOURCES}"
            )
            challenge = (
                b'Bearer realm="metaagent", error="invalid_token", '
                b'error_description="the token is not this server\'s"'
            )
        await json_reply(send, 401, body, (b"www-authenticate", challenge))


class AuthRefusals:
    """ASGI middleware: the SDK's 401 and 403 of the MCP endpoint, in words a client shows.

    Sits after the SDK's authentication (it reads ``scope["user"]``) and before its endpoint.
    A request the endpoint will refuse has its answer rewritten on the way out: the body a
    JSON-RPC error (a 401 says whether no token was sent or why the token was refused, a 403
    which scopes are missing), and a 401's challenge without ``error`` when no token was sent.
    The status and the rest of the challenge (``resource_metadata``, a 403's scope) stay.

    Args:
        app: the app behind (the SDK's routes).
        issuer: the authorization server clients get tokens from.
        resource: this server's resource URL, the audience of its tokens.
        required_scopes: the scopes the endpoint requires.
    """

    def __init__(
        self, app: ASGIApp, *, issuer: str, resource: str, required_scopes: Collection[str] = ()
    ) -> None:
        self._app = app
        self._issuer = issuer
        self._resource = resource
        self._scopes = frozenset(required_scopes)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["path"] != MCP_PATH or admitted(scope, self._scopes):
            await self._app(scope, receive, send)
            return
        await self._app(scope, receive, self._explaining(scope, send))

    def _explaining(self, scope: Scope, send: Send) -> Send:
        token_sent = _bearer(scope) is not None
        replaced: list[bytes] = []

        async def explaining(message: Message) -> None:
            if message["type"] == "http.response.start" and message["status"] in (401, 403):
                headers = [(k, v) for k, v in message.get("headers", ()) if k != b"content-length"]
                if message["status"] == 401:
                    sdk = dict(headers).get(b"www-authenticate", b"")
                    metadata = _RESOURCE_METADATA.search(sdk)
                    metadata_url = metadata.group(1).decode() if metadata else ""
                    reason = None if not token_sent else refusal_reason() or "it is not valid here"
                    body = self._unauthorized(reason, metadata_url)
                    headers = [(k, v) for k, v in headers if k != b"www-authenticate"]
                    headers.append((b"www-authenticate", _challenge(reason, metadata_url)))
                else:
                    body = self._forbidden(scope)
                replaced.append(body)
                headers.append((b"content-length", b"%d" % len(body)))
                await send({**message, "headers": headers})
            elif message["type"] == "http.response.body" and replaced:
                if not message.get("more_body", False):
                    await send({"type": "http.response.body", "body": replaced[0]})
            else:
                await send(message)

        return explaining

    def _unauthorized(self, reason: str | None, metadata_url: str) -> bytes:
        if reason is None:
            where = f"; how to get one: {metadata_url}" if metadata_url else ""
            return _unauthorized(
                f"this server needs an OAuth access token issued by {self._issuer} for "
                f"{self._resource}, sent as Authorization: Bearer <token>{where}"
            )
        return _unauthorized(
            f"the access token was refused: {reason}; get a new one from {self._issuer} "
            f"for {self._resource}"
        )

    def _forbidden(self, scope: Scope) -> bytes:
        granted = getattr(scope.get("auth"), "scopes", ())
        missing = sorted(self._scopes.difference(granted))
        plural = len(missing) > 1
        return error_body(
            Refusal(
                types.INVALID_REQUEST,
                f"Forbidden: this server requires the OAuth scope{'s' if plural else ''} "
                f"{' '.join(missing)}, which the access token does not grant; ask the "
                f"authorization server for a token with {'them' if plural else 'it'}",
            )
        )


def _challenge(reason: str | None, metadata_url: str) -> bytes:
    """A 401's ``WWW-Authenticate``: an error code only when a token was refused (RFC 6750)."""
    parts: list[str] = []
    if reason is not None:
        description = _UNQUOTABLE.sub("", reason.replace('"', "'"))
        parts += ['error="invalid_token"', f'error_description="{description}"']
    if metadata_url:
        parts.append(f'resource_metadata="{metadata_url}"')
    return ("Bearer " + ", ".join(parts)).strip().encode()
