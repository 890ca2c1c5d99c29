"""A real OAuth 2.1 authorization server in a child process: panva's oidc-provider (``server.js``).

It listens on a free loopback port and issues client-credentials access tokens bound to the
resource asked for (RFC 8707): RS256 JWTs for ``JWT_CLIENT`` and ``SECOND_CLIENT`` (valid
300 s) and ``SHORT_CLIENT`` (valid 1 s), opaque tokens for ``OPAQUE_CLIENT``, checked through
introspection by ``RESOURCE_SERVER``; ``OTHER_ONLY_CLIENT`` may ask for ``mcp:other`` but not
``SCOPE``. Tokens may also hold ``tools:book_flight`` (a tool's own scope). Needs Node and
``npm ci --prefix tests/fakes/oauth_server`` (``make setup`` runs it)::

    with AuthorizationServer() as issuer:
        token = issuer.token(JWT_CLIENT, resource="http://127.0.0.1:8000/mcp", scope="mcp:tools")
"""

from __future__ import annotations

import shutil
import subprocess
import threading
from pathlib import Path
from types import TracebackType
from typing import NamedTuple

import httpx2

from tests.fakes.processes import stop_process

__all__ = [
    "JWT_CLIENT",
    "OPAQUE_CLIENT",
    "OTHER_ONLY_CLIENT",
    "RESOURCE_SERVER",
    "SCOPE",
    "SECOND_CLIENT",
    "SHORT_CLIENT",
    "AuthorizationServer",
    "Client",
]

HERE = Path(__file__).resolve().parent
SCOPE = "mcp:tools"
"""The scope the tests' servers require; the server also knows ``mcp:other``."""


class Client(NamedTuple):
    """A client registered at the test authorization server (fixture secrets, not credentials)."""

    client_id: str
    secret: str


JWT_CLIENT = Client("jwt-client", "jwt-secret")
SECOND_CLIENT = Client("second-client", "second-secret")
"""Another caller with the same grants as ``JWT_CLIENT`` (per-caller limits)."""
SHORT_CLIENT = Client("short-lived", "short-secret")
OPAQUE_CLIENT = Client("opaque-client", "opaque-secret")
RESOURCE_SERVER = Client("resource-server", "rs-secret")
OTHER_ONLY_CLIENT = Client("other-only", "other-secret")


class AuthorizationServer:
    """``node server.js``: started on entering, its issuer URL read from its first stdout line.

    Args:
        timeout: seconds to wait for the issuer URL.

    Raises:
        RuntimeError: Node or the installed server is missing, or it printed no URL in time.
    """

    def __init__(self, timeout: float = 30.0) -> None:
        self._timeout = timeout
        self._process: subprocess.Popen[bytes] | None = None
        self.issuer = ""

    def __enter__(self) -> AuthorizationServer:
        node = shutil.which("node")
        if node is None or not (HERE / "node_modules" / "oidc-provider").is_dir():
            raise RuntimeError(
                "the test authorization server needs Node and its packages: run "
                "`npm ci --prefix tests/fakes/oauth_server` (make setup does)"
            )
        self._process = subprocess.Popen(
            [node, str(HERE / "server.js")],
            cwd=HERE,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
        )
        first: list[bytes] = []
        reader = threading.Thread(
            target=lambda: first.append(self._stdout_line()), daemon=True, name="oauth-issuer"
        )
        reader.start()
        reader.join(self._timeout)
        line = first[0].decode().strip() if first else ""
        if not line.startswith("http://"):
            self.close()
            raise RuntimeError(f"the authorization server printed no issuer URL: {line!r}")
        self.issuer = line
        return self

    def _stdout_line(self) -> bytes:
        assert self._process is not None and self._process.stdout is not None
        return self._process.stdout.readline()

    def token(self, client: Client, *, resource: str, scope: str = SCOPE) -> str:
        """An access token for ``client`` issued for ``resource`` with ``scope``.

        Raises:
            httpx2.HTTPStatusError: the server refused to issue it.
        """
        response = httpx2.post(
            f"{self.issuer}/token",
            data={"grant_type": "client_credentials", "resource": resource, "scope": scope},
            auth=(client.client_id, client.secret),
            timeout=10,
        )
        response.raise_for_status()
        token: str = response.json()["access_token"]
        return token

    def close(self) -> None:
        """Stop the server (terminate, then kill after 10 s)."""
        if self._process is None:
            return
        stop_process(self._process)
        if self._process.stdout is not None:
            self._process.stdout.close()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()
