"""The served HTTP server as an OAuth 2.1 protected resource: settings and issuer discovery.

The MCP specification (2025-11-25, "Authorization") makes an HTTP server a protected resource:
it names its authorization server in ``/.well-known/oauth-protected-resource`` metadata, and
checks every bearer token — issued by that server, for this resource (the audience), unexpired,
with the scopes required. The SDK serves the metadata and answers 401/403 (``AuthSettings``,
``RequireAuthMiddleware``); ``server.oauth_verifiers`` decides whether a token is good.

This module holds what the command line gives (``OAuthSettings``), the SDK's settings made of
it, the reading of the issuer's metadata (RFC 8414 ``/.well-known/oauth-authorization-server``,
else OpenID Connect discovery), which fails with an ``OAuthError`` saying what is wrong, and
``fetch_json``: every request to the authorization server (metadata, keys, introspection) has a
deadline for the whole exchange, from connecting to the last byte, and a size limit, so an issuer
that trickles, hangs or sends a huge document is refused in bounded time and memory, with a reason.
"""

from __future__ import annotations

import json
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

import anyio
import httpx2
from mcp.server.auth.settings import AuthSettings

from mcp_export.errors import ConfigurationError

__all__ = [
    "CLIENT_SECRET_ENV",
    "ISSUER_TIMEOUT",
    "MAX_DOCUMENT_BYTES",
    "TOKEN_REFUSAL",
    "IssuerUnreadable",
    "OAuthError",
    "OAuthSettings",
    "auth_settings",
    "discover",
    "fetch_json",
    "refusal_reason",
]


# Set by the verifiers (``oauth_verifiers``) while they check a request's token; read here, where
# the 401 is written, without importing the JWT library the verifiers need.
TOKEN_REFUSAL: ContextVar[str | None] = ContextVar("oauth_token_refusal", default=None)


def refusal_reason() -> str | None:
    """Why the bearer token of the request being answered was refused (None: not refused here).

    The SDK's authentication middleware asks the verifier and then calls the app in the same
    task, so the reason set during the check is the one of this request's token.
    """
    return TOKEN_REFUSAL.get()


CLIENT_SECRET_ENV = "METAAGENT_OAUTH_CLIENT_SECRET"
ISSUER_TIMEOUT = 10.0
"""Seconds one request to the authorization server may take, from connecting to its last byte."""
MAX_DOCUMENT_BYTES = 1024 * 1024
"""The largest answer read from the authorization server: its metadata, key set and
introspection answers are a few kilobytes."""


class OAuthError(ConfigurationError):
    """The authorization server cannot be used: unreachable, or its metadata lacks what we need."""


class IssuerUnreadable(OAuthError):
    """One answer of the authorization server cannot be read; the message is the reason alone."""


@dataclass(frozen=True)
class OAuthSettings:
    """How the served HTTP server checks OAuth access tokens.

    Attributes:
        issuer: the authorization server's issuer URL (exactly as in its tokens' ``iss``).
        resource: this server's URL as clients reach it: the audience tokens must carry.
            None: the served ``/mcp`` URL.
        scopes: scopes every token must hold (403 ``insufficient_scope`` otherwise).
        introspect: ask the issuer's introspection endpoint instead of checking JWTs here.
        client_id: this server's client id at the issuer (for introspection).
        client_secret: its secret (for introspection; read from ``CLIENT_SECRET_ENV``).
        leeway: seconds of clock difference tolerated on ``exp``, ``nbf`` and ``iat``.
        timeout: seconds one request to the authorization server may take as a whole.
    """

    issuer: str
    resource: str | None = None
    scopes: tuple[str, ...] = ()
    introspect: bool = False
    client_id: str | None = None
    client_secret: str | None = field(default=None, repr=False)
    leeway: float = 5.0
    timeout: float = ISSUER_TIMEOUT


def auth_settings(settings: OAuthSettings, resource: str, issuer: str) -> AuthSettings:
    """The SDK's settings: the metadata to publish and the scopes its middleware requires.

    Args:
        settings: the OAuth settings.
        resource: this server's resource URL.
        issuer: the issuer exactly as its metadata spells it (clients compare it to the letter).
    """
    # The required scopes are also the metadata's scopes_supported, which clients ask for. An
    # empty list, rather than none, tells them to ask for no scope: without it the SDK's client
    # asks for every scope the issuer supports (``openid`` among them), which issuers refuse
    # to grant with client credentials.
    return AuthSettings(
        issuer_url=issuer,
        resource_server_url=resource,
        required_scopes=list(settings.scopes),
        validate_token_resource=True,
    )


def _well_known(issuer: str, name: str, *, inserted: bool) -> str:
    """RFC 8414 inserts the well-known segment before the issuer's path; OpenID appends it."""
    parts = urlsplit(issuer)
    path = parts.path.rstrip("/")
    if inserted:
        return f"{parts.scheme}://{parts.netloc}/.well-known/{name}{path}"
    return f"{parts.scheme}://{parts.netloc}{path}/.well-known/{name}"


def _reason(exc: httpx2.HTTPError) -> str:
    """What went wrong, never empty (httpx's timeouts and some protocol errors have no text)."""
    if isinstance(exc, httpx2.TimeoutException):
        return f"no answer in time ({type(exc).__name__})"
    text = str(exc).strip()
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


async def fetch_json(
    http: httpx2.AsyncClient,
    method: str,
    url: str,
    *,
    deadline: float = ISSUER_TIMEOUT,
    limit: int = MAX_DOCUMENT_BYTES,
    **request: Any,
) -> tuple[int, object]:
    """One request to the authorization server: its status and, for a 200, its JSON document.

    The whole exchange must end within ``deadline`` seconds (the client's own timeout is per
    read, which a server sending a byte now and then never reaches), and the body may not be
    larger than ``limit`` bytes (it is refused as it arrives, not after). The body of an answer
    other than 200 is not read (the document is then None).

    Args:
        http: the client (owned by the caller).
        method: the HTTP method.
        url: the URL.
        deadline: seconds for the whole exchange.
        limit: the largest body read, in bytes.
        **request: more arguments of ``httpx2.AsyncClient.stream`` (headers, data, auth).

    Raises:
        IssuerUnreadable: no whole answer in time, an HTTP failure, a body over the limit, or
            a 200 whose body is not JSON; the message says which.
    """
    try:
        with anyio.fail_after(deadline):
            async with http.stream(method, url, **request) as response:
                if response.status_code != 200:
                    return response.status_code, None
                declared = response.headers.get("content-length", "")
                if declared.isdigit() and int(declared) > limit:
                    raise IssuerUnreadable(_too_large(limit))
                body = bytearray()
                async for chunk in response.aiter_bytes():
                    body += chunk
                    if len(body) > limit:
                        raise IssuerUnreadable(_too_large(limit))
    except TimeoutError:
        raise IssuerUnreadable(f"no whole answer within {deadline:g} s") from None
    except httpx2.HTTPError as exc:
        raise IssuerUnreadable(_reason(exc)) from exc
    try:
        return 200, json.loads(body)
    except (ValueError, RecursionError):
        raise IssuerUnreadable("not JSON") from None


def _too_large(limit: int) -> str:
    return f"the answer is larger than {limit} bytes, far more than such a document needs"


async def discover(
    issuer: str, http: httpx2.AsyncClient, *, deadline: float = ISSUER_TIMEOUT
) -> dict[str, Any]:
    """The authorization server's metadata (RFC 8414, else OpenID Connect discovery).

    Args:
        issuer: the issuer URL.
        http: the client (owned by the caller).
        deadline: seconds each of the (at most two) requests may take as a whole.

    Raises:
        OAuthError: neither document can be read, or its ``issuer`` is another one.
    """
    urls = [
        _well_known(issuer, "oauth-authorization-server", inserted=True),
        _well_known(issuer, "openid-configuration", inserted=False),
    ]
    problems: list[str] = []
    for url in urls:
        try:
            status, metadata = await fetch_json(
                http, "GET", url, deadline=deadline, headers={"Accept": "application/json"}
            )
        except IssuerUnreadable as exc:
            problems.append(f"{url}: {exc}")
            continue
        if status != 200:
            problems.append(f"{url}: HTTP {status}")
            continue
        if not isinstance(metadata, dict):
            problems.append(f"{url}: not a JSON object")
            continue
        named = str(metadata.get("issuer", ""))
        if named.rstrip("/") != issuer.rstrip("/"):
            raise OAuthError(
                f"--oauth-issuer {issuer}: its metadata at {url} names the issuer {named!r}; "
                "give exactly the issuer URL its tokens carry in 'iss'"
            )
        return metadata
    raise OAuthError(
        f"--oauth-issuer {issuer}: cannot read the authorization server's metadata "
        f"({'; '.join(problems)}); check the URL and that the server is running"
    )
