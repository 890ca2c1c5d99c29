"""Token verifiers for the protected HTTP server: JWTs checked here, or opaque tokens introspected.

Each implements the SDK's ``TokenVerifier``: a good token gives an ``AccessToken`` (the SDK then
checks the required scopes), anything else None (the SDK answers 401). Two ways:

- ``JwtVerifier``: the token is a JWT signed by a key in the issuer's JWKS (RFC 9068 access
  tokens); PyJWT checks the signature, ``iss``, ``exp`` and ``aud``. The key set is fetched
  without blocking the event loop, cached, and fetched again on a key id it does not hold (at
  most once per ``REFETCH_INTERVAL``, each fetch within the issuer deadline): a token whose key
  is known never waits for a fetch under way.
- ``IntrospectionVerifier``: the issuer's introspection endpoint says (RFC 7662), asked with this
  server's client credentials; for opaque tokens, or to notice revoked ones at once.

``open_verifier`` builds the one the settings ask for from the issuer's metadata. A refused
token is logged with its reason, never the token itself; the reason is also left in
``oauth.refusal_reason()`` for the 401 that answers the request (``server.http_auth``).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import anyio
import httpx2
import jwt
from mcp.server.auth.provider import AccessToken, TokenVerifier

from mcp_export.server.oauth import (
    CLIENT_SECRET_ENV,
    ISSUER_TIMEOUT,
    TOKEN_REFUSAL,
    IssuerUnreadable,
    OAuthError,
    OAuthSettings,
    discover,
    fetch_json,
)

__all__ = [
    "ALGORITHMS",
    "IntrospectionVerifier",
    "JwtVerifier",
    "TrustedIssuer",
    "open_verifier",
]

logger = logging.getLogger(__name__)

ALGORITHMS = frozenset(
    ["RS256", "RS384", "RS512", "PS256", "PS384", "PS512", "ES256", "ES384", "ES512", "EdDSA"]
)
"""Signature algorithms accepted: asymmetric only (a shared-secret HS256 key in a public key set
would let anyone sign), never ``none``."""
REFETCH_INTERVAL = 10.0
"""Seconds between two fetches of the key set caused by unknown key ids (tokens with made-up key
ids must not make this server hammer the issuer)."""


def _refuse(reason: str) -> None:
    logger.warning("refused a bearer token: %s", reason)
    TOKEN_REFUSAL.set(reason)


def _scopes(claims: Mapping[str, Any]) -> list[str]:
    value = claims.get("scope", claims.get("scp", ""))
    if isinstance(value, str):
        return value.split()
    if isinstance(value, list):
        return [str(item) for item in value]
    return []


def _audiences(claims: Mapping[str, Any]) -> list[str]:
    value = claims.get("aud")
    if isinstance(value, str):
        return [value]
    if isinstance(value, list):
        return [str(item) for item in value]
    return []


def _same_resource(audience: str, resource: str) -> bool:
    return audience.rstrip("/") == resource.rstrip("/")


def _access_token(
    token: str, claims: Mapping[str, Any], resource: str, leeway: float
) -> AccessToken:
    """The SDK's view of a good token; it expires (for the SDK too) ``leeway`` after ``exp``."""
    client_id = claims.get("client_id") or claims.get("azp") or claims.get("sub") or "unknown"
    exp = claims.get("exp")
    return AccessToken(
        token=token,
        client_id=str(client_id),
        scopes=_scopes(claims),
        expires_at=int(exp + leeway) if isinstance(exp, int | float) else None,
        resource=resource,
        subject=str(claims["sub"]) if "sub" in claims else None,
        claims={"iss": claims["iss"]} if "iss" in claims else None,
    )


def _jwt_reason(exc: jwt.InvalidTokenError) -> str:
    """PyJWT's refusal in the words a client is shown (its texts are short and name no secret)."""
    if isinstance(exc, jwt.ExpiredSignatureError):
        return "it has expired"
    if isinstance(exc, jwt.InvalidAudienceError):
        return "it was issued for another resource (its audience is not this server)"
    if isinstance(exc, jwt.InvalidIssuerError):
        return "it was issued by another authorization server"
    if isinstance(exc, jwt.InvalidSignatureError):
        return "its signature does not verify"
    if isinstance(exc, jwt.ImmatureSignatureError):
        return "it is not valid yet"
    return str(exc) or type(exc).__name__


_FAMILIES = {"RSA": ("RS", "PS"), "EC": ("ES",), "OKP": ("EdDSA",)}


@dataclass(frozen=True)
class _SigningKey:
    key: jwt.PyJWK
    algorithms: frozenset[str]
    """What tokens it checks: the algorithm its JWK names, else any of its key type's."""


def _signing_keys(published: object) -> dict[str, _SigningKey]:
    """The usable signing keys of a JWKS document, by key id ("" for a key without one)."""
    entries = published.get("keys") if isinstance(published, dict) else None
    if not isinstance(entries, list):
        raise ValueError("not a JWKS document (no 'keys' list)")
    keys: dict[str, _SigningKey] = {}
    for entry in entries:
        if not isinstance(entry, dict) or entry.get("use", "sig") != "sig":
            continue
        try:
            key = jwt.PyJWK.from_dict(entry)
        except jwt.PyJWTError:
            continue  # a key type, curve or algorithm PyJWT cannot use here
        named = entry.get("alg")
        if named:
            algorithms = frozenset({str(named)}) & ALGORITHMS
        else:
            prefixes = _FAMILIES.get(str(entry.get("kty")), ())
            algorithms = frozenset(a for a in ALGORITHMS if a.startswith(prefixes))
        if algorithms:
            keys[str(entry.get("kid") or "")] = _SigningKey(key, algorithms)
    return keys


@dataclass(frozen=True)
class TrustedIssuer:
    """The authorization server a verifier trusts, for which resource, and how it is asked.

    Attributes:
        issuer: the issuer whose tokens are accepted (the ``iss`` they carry).
        resource: the audience every token must name (``aud``, a string or a list).
        http: the client that asks the issuer (owned by the caller).
        leeway: seconds of clock difference tolerated.
        timeout: seconds one question to the issuer may take as a whole.
    """

    issuer: str
    resource: str
    http: httpx2.AsyncClient
    leeway: float = 5.0
    timeout: float = ISSUER_TIMEOUT


class _IssuerVerifier(TokenVerifier):
    """What both verifiers hold: the trusted issuer's settings."""

    def __init__(self, trusted: TrustedIssuer) -> None:
        self._issuer = trusted.issuer
        self._resource = trusted.resource
        self._http = trusted.http
        self._leeway = trusted.leeway
        self._timeout = trusted.timeout

    @property
    def issuer(self) -> str:
        """The issuer whose tokens this verifier accepts."""
        return self._issuer


class JwtVerifier(_IssuerVerifier):
    """Accepts JWT access tokens signed by a key of the issuer's key set (JWKS).

    Args:
        trusted: the issuer (the ``iss`` every token must carry), the audience, the client that
            fetches the keys, the clock leeway, and the time one fetch of the key set may take.
        jwks_uri: where the issuer publishes its public keys.
    """

    def __init__(self, trusted: TrustedIssuer, jwks_uri: str) -> None:
        super().__init__(trusted)
        resource = trusted.resource
        self._audiences = sorted({resource, resource.rstrip("/"), resource.rstrip("/") + "/"})
        self._jwks_uri = jwks_uri
        self._keys: dict[str, _SigningKey] = {}
        self._refetched_at = float("-inf")
        self._lock = anyio.Lock()

    async def load_keys(self) -> None:
        """Fetch the key set now.

        Raises:
            OAuthError: it cannot be read, or holds no usable signing key.
        """
        async with self._lock:
            await self._fetch()

    async def _fetch(self) -> None:
        try:
            status, published = await fetch_json(
                self._http,
                "GET",
                self._jwks_uri,
                deadline=self._timeout,
                headers={"Accept": "application/json"},
            )
            if status != 200:
                raise IssuerUnreadable(f"HTTP {status}")
            keys = _signing_keys(published)
        except (IssuerUnreadable, ValueError) as exc:
            raise OAuthError(
                f"cannot read the authorization server's keys at {self._jwks_uri}: {exc}"
            ) from exc
        if not keys:
            raise OAuthError(f"the key set at {self._jwks_uri} holds no asymmetric signing key")
        self._keys = keys

    async def _key(self, key_id: str) -> _SigningKey | None:
        """The key ``key_id`` names; an unknown one makes a fetch of the key set (rotation).

        A known key is returned at once, whatever fetch is under way: only the requests with
        unknown key ids wait on the lock, each for at most one fetch's deadline.
        """
        if not key_id and len(self._keys) == 1:
            return next(iter(self._keys.values()))
        if key_id in self._keys:
            return self._keys[key_id]
        async with self._lock:
            if key_id not in self._keys and (
                time.monotonic() - self._refetched_at >= REFETCH_INTERVAL
            ):
                self._refetched_at = time.monotonic()
                try:
                    await self._fetch()
                except OAuthError as exc:
                    logger.warning("%s", exc)
        return self._keys.get(key_id)

    async def verify_token(self, token: str) -> AccessToken | None:
        """The token's grant when the token is good, else None (the SDK then answers 401)."""
        TOKEN_REFUSAL.set(None)
        try:
            header = jwt.get_unverified_header(token)
        except jwt.InvalidTokenError:
            _refuse("it is not a JWT")
            return None
        algorithm = str(header.get("alg", ""))
        if algorithm not in ALGORITHMS:
            _refuse(f"it is signed with algorithm {algorithm[:20]!r}, which is not accepted")
            return None
        key = await self._key(str(header.get("kid") or ""))
        if key is None:
            _refuse("it is signed by a key the authorization server does not publish")
            return None
        if algorithm not in key.algorithms:
            _refuse(f"its algorithm {algorithm!r} does not fit its key")
            return None
        try:
            claims = jwt.decode(
                token,
                key.key.key,
                algorithms=[algorithm],
                audience=self._audiences,
                issuer=self._issuer,
                leeway=self._leeway,
                options={"require": ["exp", "iss", "aud"]},
            )
        except jwt.InvalidTokenError as exc:
            _refuse(_jwt_reason(exc))
            return None
        return _access_token(token, claims, self._resource, self._leeway)


class IntrospectionVerifier(_IssuerVerifier):
    """Asks the issuer's introspection endpoint (RFC 7662) whether a token is active.

    Args:
        trusted: the issuer (checked against the answer's ``iss`` when it has one), the audience
            the answer must name in ``aud``, the client that asks, the clock leeway on ``exp``,
            and the time one question to the endpoint may take.
        endpoint: the introspection endpoint.
        client_id: this server's client id at the issuer.
        client_secret: its secret (sent with HTTP Basic authentication).
    """

    def __init__(
        self, trusted: TrustedIssuer, endpoint: str, client_id: str, client_secret: str
    ) -> None:
        super().__init__(trusted)
        self._endpoint = endpoint
        self._auth = httpx2.BasicAuth(client_id, client_secret)

    async def verify_token(self, token: str) -> AccessToken | None:
        """The token's grant when the issuer says it is active here, else None (401)."""
        TOKEN_REFUSAL.set(None)
        try:
            status, claims = await fetch_json(
                self._http,
                "POST",
                self._endpoint,
                deadline=self._timeout,
                data={"token": token, "token_type_hint": "access_token"},
                auth=self._auth,
                headers={"Accept": "application/json"},
            )
        except IssuerUnreadable as exc:
            logger.warning("cannot ask the introspection endpoint %s: %s", self._endpoint, exc)
            TOKEN_REFUSAL.set("the authorization server could not be asked about it; try again")
            return None
        if status != 200:
            logger.warning(
                "the introspection endpoint %s answered HTTP %d (are --oauth-client-id and %s "
                "right?)",
                self._endpoint,
                status,
                CLIENT_SECRET_ENV,
            )
            TOKEN_REFUSAL.set("the authorization server could not be asked about it; try again")
            return None
        if not isinstance(claims, dict):
            _refuse("the introspection answer is not a JSON object")
            return None
        reason = self._refusal(claims)
        if reason:
            _refuse(reason)
            return None
        return _access_token(token, claims, self._resource, self._leeway)

    def _refusal(self, claims: Mapping[str, Any]) -> str | None:
        if claims.get("active") is not True:
            return "the issuer says it is not active"
        issuer = claims.get("iss")
        if issuer is not None and str(issuer).rstrip("/") != self._issuer.rstrip("/"):
            return "issued by another issuer"
        if not any(_same_resource(a, self._resource) for a in _audiences(claims)):
            return "issued for another audience"
        exp = claims.get("exp")
        if isinstance(exp, int | float) and exp + self._leeway < time.time():
            return "expired"
        return None


async def open_verifier(
    settings: OAuthSettings, resource: str, http: httpx2.AsyncClient
) -> JwtVerifier | IntrospectionVerifier:
    """The verifier ``settings`` ask for, ready: metadata discovered, keys fetched.

    Args:
        settings: the OAuth settings.
        resource: this server's resource URL (the audience).
        http: the client verifiers use (owned by the caller, open while they are in use).

    Raises:
        OAuthError: the issuer or its keys cannot be reached, or introspection lacks what it
            needs.
    """
    metadata = await discover(settings.issuer, http, deadline=settings.timeout)
    issuer = str(metadata["issuer"])
    trusted = TrustedIssuer(issuer, resource, http, settings.leeway, settings.timeout)
    if settings.introspect:
        endpoint = metadata.get("introspection_endpoint")
        if not endpoint:
            raise OAuthError(
                f"--oauth-introspect: the authorization server {issuer} publishes no "
                "introspection_endpoint; leave out --oauth-introspect to check JWTs instead"
            )
        if not settings.client_id or not settings.client_secret:
            raise OAuthError(
                "--oauth-introspect needs this server's client credentials: --oauth-client-id ID "
                f"and the secret in the {CLIENT_SECRET_ENV} environment variable"
            )
        return IntrospectionVerifier(
            trusted, str(endpoint), settings.client_id, settings.client_secret
        )
    jwks_uri = metadata.get("jwks_uri")
    if not jwks_uri:
        raise OAuthError(
            f"--oauth-issuer {issuer}: its metadata has no jwks_uri to check JWT signatures "
            "with; use --oauth-introspect with this server's client credentials instead"
        )
    verifier = JwtVerifier(trusted, str(jwks_uri))
    await verifier.load_keys()
    return verifier
