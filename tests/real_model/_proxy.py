"""A recording pass-through in front of a model server: what the runtime really sent.

Every request to ``base_url`` goes on to the server unchanged and its answer comes back as it
streams (the connection closes at its end); the JSON body of each ``POST`` is kept in
``bodies``, so a test can read the conversation as it went over the wire.

A client that leaves before its answer is complete (the runtime gave up at its time limit)
closes the request upstream too, as a direct connection would: llama-server stops generating
an answer whose connection closed, and otherwise goes on up to its context, slowing every
later request of the run.
"""

from __future__ import annotations

import contextlib
import http.client
import http.server
import json
import select
import socket
import threading
import urllib.parse
from types import TracebackType
from typing import Any

__all__ = ["RecordingProxy"]

_HOP = {"connection", "keep-alive", "transfer-encoding", "content-length", "host"}


class RecordingProxy:
    """A loopback proxy to ``upstream`` (an origin, ``http://127.0.0.1:PORT``)."""

    def __init__(self, upstream: str) -> None:
        self.upstream = urllib.parse.urlsplit(upstream)
        self.bodies: list[dict[str, Any]] = []
        self._lock = threading.Lock()
        proxy = self

        class Handler(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.0"  # the body ends when the connection closes

            def log_message(self, format: str, *args: Any) -> None:
                pass

            def do_GET(self) -> None:
                self._forward(b"")

            def do_POST(self) -> None:
                raw = self.rfile.read(int(self.headers.get("content-length") or 0))
                with contextlib.suppress(ValueError):  # not JSON: forwarded unrecorded
                    body = json.loads(raw)
                    if isinstance(body, dict):
                        with proxy._lock:
                            proxy.bodies.append(body)
                self._forward(raw)

            def _forward(self, raw: bytes) -> None:
                host = proxy.upstream.hostname or "127.0.0.1"
                connection = http.client.HTTPConnection(host, proxy.upstream.port, timeout=900)
                headers = {k: v for k, v in self.headers.items() if k.lower() not in _HOP}
                if raw:
                    headers["Content-Length"] = str(len(raw))
                done = threading.Event()
                watcher = threading.Thread(
                    target=_close_when_client_leaves,
                    args=(self.connection, connection, done),
                    daemon=True,
                )
                try:
                    connection.request(self.command, self.path, body=raw or None, headers=headers)
                    watcher.start()
                    answer = connection.getresponse()
                    self.send_response(answer.status, answer.reason)
                    for key, value in answer.getheaders():
                        if key.lower() not in _HOP:
                            self.send_header(key, value)
                    self.end_headers()
                    while chunk := answer.read1(65536):
                        self.wfile.write(chunk)
                        self.wfile.flush()
                except OSError:
                    if not done.is_set() and not _left(self.connection):
                        raise
                finally:
                    done.set()
                    connection.close()

        self._server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def origin(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    @property
    def base_url(self) -> str:
        return f"{self.origin}/v1"

    def mark(self) -> int:
        with self._lock:
            return len(self.bodies)

    def since(self, mark: int) -> list[dict[str, Any]]:
        with self._lock:
            return list(self.bodies[mark:])

    def __enter__(self) -> RecordingProxy:
        self._thread.start()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=10)


def _left(client: socket.socket) -> bool:
    """Whether the client closed its side (it sends nothing after its request)."""
    try:
        return client.recv(1, socket.MSG_PEEK | socket.MSG_DONTWAIT) == b""
    except BlockingIOError:
        return False
    except OSError:
        return True


def _close_when_client_leaves(
    client: socket.socket, upstream: http.client.HTTPConnection, done: threading.Event
) -> None:
    """Shut the upstream connection down once ``client`` closes before ``done`` is set (the
    answer forwarded): the forwarding thread, blocked reading from upstream, then ends."""
    while not done.is_set():
        readable, _, _ = select.select([client], [], [], 0.2)
        if not readable:
            continue
        if _left(client):
            with contextlib.suppress(OSError):
                if upstream.sock is not None:
                    upstream.sock.shutdown(socket.SHUT_RDWR)
            done.set()
        return  # closed, or bytes the client should not send: stop watching either way
