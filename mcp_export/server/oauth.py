"""The served HTTP server as an OAuth 2.1 protected resource: settings and issuer discovery.

The MCP specification (2025-11-25, "Authorization") makes an HTTP server a protected resource:
it names its authorization server in ``/.well-known/oauth-protected-resource`` metadata, and
checks every bearer token — issued by that server, for this resource (the audience), unexpired,
with the scopes required. The SDK serves the metadata and answers 401/403 (``AuthSettings``,
``RequireAuthMiddleware``); ``server.oauth_verifiers`` decides whether a token is good.

This module holds what the command line gives (``OAuthSettings``), the SDK's settings made of
it, and the reading of the issuer's metadata (RFC 8414 ``/.well-known/oauth-authorization-server``,
else OpenID Connect discovery), which fails with an ``OAuthError`` saying what is wrong.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

import httpx2
from mcp.server.auth.settings import AuthSettings

from mcp_export.errors import ConfigurationError

__all__ = ["CLIENT_SECRET_ENV", "OAuthError", "OAuthSettings", "auth_settings", "discover"]

CLIENT_SECRET_ENV = "METAAGENT_OAUTH_CLIENT_SECRET"


class OAuthError(ConfigurationError):
    """The authorization server cannot be used: unreachable, or its metadata lacks what we need."""


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
    """

    issuer: str
    resource: str | None = None
    scopes: tuple[str, ...] = ()
    introspect: bool = False
    client_id: str | None = None
    client_secret: str | None = field(default=None, repr=False)
    leeway: float = 5.0


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


async def discover(issuer: str, http: httpx2.AsyncClient) -> dict[str, Any]:
    """The authorization server's metadata (RFC 8414, else OpenID Connect discovery).

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
            response = await http.get(url, headers={"Accept": "application/json"})
        except httpx2.HTTPError as exc:
            problems.append(f"{url}: {exc or type(exc).__name__}")
            continue
        if response.status_code != 200:
            problems.append(f"{url}: HTTP {response.status_code}")
            continue
        try:
            metadata = response.json()
        except ValueError:
            problems.append(f"{url}: not JSON")
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
