"""An OAuth authorization server that misbehaves on purpose: slow, silent or boundless answers.

A real ``ThreadingHTTPServer`` on 127.0.0.1 (port 0) in a daemon thread. It serves RFC 8414
metadata at ``/.well-known/oauth-authorization-server`` (and OpenID discovery at
``/.well-known/openid-configuration``) naming its key set at ``/jwks``, and signs RS256 JWTs
with keys it makes itself. How each document is answered is set per document, and may change
while the server runs:

- ``"ok"``: the document;
- ``"trickle"``: the headers, then one byte of the body every ``trickle_every`` seconds, forever;
- ``"huge"``: a chunked body of ``huge_bytes`` bytes (no Content-Length), sent as fast as the
  client reads; ``sent`` counts the bytes it got out;
- ``"hang"``: the request is read and never answered.

Its introspection endpoint (``/introspect``, POST) answers every token inactive, or as set in
``introspection``.

Every wait watches a stop signal, so ``stop()`` (or leaving the ``with`` block) ends it at once::

    with HostileIssuer(metadata="trickle") as issuer:
        ...  # serve --oauth-issuer issuer.url
"""

from __future__ import annotations

import http.server
import json
import threading
import time
from collections import Counter
from types import TracebackType
from typing import Any, Literal

import jwt
from cryptography.hazmat.primitives.asymmetric import rsa

__all__ = ["Behaviour", "HostileIssuer"]

Behaviour = Literal["ok", "trickle", "huge", "hang"]
METADATA_PATHS = ("/.well-known/oauth-authorization-server", "/.well-known/openid-configuration")
JWKS_PATH = "/jwks"
INTROSPECTION_PATH = "/introspect"


class _Server(http.server.ThreadingHTTPServer):
    daemon_threads = True
    block_on_close = False

    def __init__(self, issuer: HostileIssuer) -> None:
        self.issuer = issuer
        super().__init__(("127.0.0.1", 0), _Handler)

    def handle_error(self, request: Any, client_address: Any) -> None:
        pass  # clients that hang up on a trickle or a huge body are what the tests do


class _Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: _Server

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def do_GET(self) -> None:
        issuer = self.server.issuer
        path = self.path.split("?", 1)[0]
        issuer.count(path)
        if path in METADATA_PATHS:
            self._answer(issuer.metadata, issuer.metadata_document())
        elif path == JWKS_PATH:
            self._answer(issuer.jwks, issuer.jwks_document())
        else:
            self._send(404, b'{"error": "not_found"}')

    def do_POST(self) -> None:
        issuer = self.server.issuer
        length = int(self.headers.get("content-length") or 0)
        self.rfile.read(length)
        path = self.path.split("?", 1)[0]
        issuer.count(path)
        if path == INTROSPECTION_PATH:
            self._answer(issuer.introspection, {"active": False})
        else:
            self._send(404, b'{"error": "not_found"}')

    def _answer(self, behaviour: Behaviour, document: dict[str, Any]) -> None:
        issuer = self.server.issuer
        if behaviour == "ok":
            self._send(200, json.dumps(document).encode())
        elif behaviour == "hang":
            issuer.stopping.wait()
        elif behaviour == "trickle":
            self.send_response(200)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", "100000")
            self.end_headers()
            for byte in json.dumps(document).encode().ljust(100000):
                if issuer.stopping.wait(issuer.trickle_every):
                    return
                self.wfile.write(bytes([byte]))
                self.wfile.flush()
        else:
            self.send_response(200)
            self.send_header("content-type", "application/json")
            self.send_header("transfer-encoding", "chunked")
            self.end_headers()
            chunk = b" " * (1024 * 1024)
            while issuer.sent < issuer.huge_bytes and not issuer.stopping.is_set():
                self.wfile.write(b"%X\r\n%s\r\n" % (len(chunk), chunk))
                issuer.sent += len(chunk)
            self.wfile.write(b"0\r\n\r\n")

    def _send(self, status: int, body: bytes) -> None:
        self.send_response(status)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


class HostileIssuer:
    """The misbehaving authorization server (see the module docstring).

    Args:
        metadata: how the metadata documents are answered.
        jwks: how the key set is answered.
        introspection: how the introspection endpoint answers.
        trickle_every: seconds between two bytes of a trickled body.
        huge_bytes: the size of a huge body.
    """

    def __init__(
        self,
        *,
        metadata: Behaviour = "ok",
        jwks: Behaviour = "ok",
        introspection: Behaviour = "ok",
        trickle_every: float = 0.5,
        huge_bytes: int = 64 * 1024 * 1024,
    ) -> None:
        self.metadata: Behaviour = metadata
        self.jwks: Behaviour = jwks
        self.introspection: Behaviour = introspection
        self.trickle_every = trickle_every
        self.huge_bytes = huge_bytes
        self.sent = 0
        self.requests: Counter[str] = Counter()
        self.stopping = threading.Event()
        self._seen = threading.Condition()
        self._keys: dict[str, rsa.RSAPrivateKey] = {}
        self._server = _Server(self)
        self.url = f"http://127.0.0.1:{self._server.server_address[1]}"
        self._thread = threading.Thread(
            target=self._server.serve_forever, daemon=True, name="hostile-issuer"
        )

    def count(self, path: str) -> None:
        """One more request for ``path`` (from a handler thread)."""
        with self._seen:
            self.requests[path] += 1
            self._seen.notify_all()

    def wait_for_requests(self, path: str, count: int, timeout: float) -> bool:
        """Block until ``path`` was requested ``count`` times (False: not within ``timeout``)."""
        with self._seen:
            return self._seen.wait_for(lambda: self.requests[path] >= count, timeout)

    def metadata_document(self) -> dict[str, Any]:
        return {
            "issuer": self.url,
            "jwks_uri": f"{self.url}{JWKS_PATH}",
            "token_endpoint": f"{self.url}/token",
            "introspection_endpoint": f"{self.url}{INTROSPECTION_PATH}",
            "response_types_supported": ["token"],
        }

    def jwks_document(self) -> dict[str, Any]:
        keys = []
        for kid, key in list(self._keys.items()):
            public = jwt.algorithms.RSAAlgorithm.to_jwk(key.public_key(), as_dict=True)
            keys.append({**public, "kid": kid, "alg": "RS256", "use": "sig"})
        return {"keys": keys}

    def add_key(self, kid: str) -> None:
        """Make a signing key with key id ``kid`` (published from now on)."""
        self._keys[kid] = rsa.generate_private_key(public_exponent=65537, key_size=2048)

    def token(self, kid: str, *, resource: str, scope: str = "", lifetime: float = 300) -> str:
        """An RS256 access token for ``resource`` signed with the key ``kid``."""
        now = int(time.time())
        claims = {
            "iss": self.url,
            "aud": resource,
            "sub": "hostile-test",
            "client_id": "hostile-test",
            "scope": scope,
            "iat": now,
            "exp": now + int(lifetime),
        }
        return jwt.encode(claims, self._keys[kid], algorithm="RS256", headers={"kid": kid})

    def __enter__(self) -> HostileIssuer:
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop serving and end every wait (at most 10 s)."""
        self.stopping.set()
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(10)

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()
