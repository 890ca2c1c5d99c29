"""The HTTP machinery shared by the fake model servers (one API-specific subclass each).

A real ``ThreadingHTTPServer`` on 127.0.0.1 (port 0) in a daemon thread, speaking HTTP/1.1 with
keep-alive (``Content-Length`` bodies, chunked SSE streams) and ``TCP_NODELAY``, so thousands of
requests go through it quickly. Every wait the server makes (``delay``, ``chunk_delay``, ``hang``)
watches both the client socket and a stop signal: a client that disconnects, or ``stop()``, ends
the wait at once, and the server counts the disconnect (``disconnects``) so tests can check that a
cancelled request really closed its connection.

Subclasses provide the API: which path is the model endpoint, how a ``Reply`` becomes SSE events
or a JSON body, the error body shape, the model list, and how to read the helper fields of a
``RequestBody``.
"""

from __future__ import annotations

import collections
import contextlib
import http.server
import json
import selectors
import socket
import struct
import sys
import threading
import time
import traceback
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, replace
from types import TracebackType
from typing import Any, ClassVar

from tests.fakes._script import Reply, RequestBody, Responder, echo

__all__ = ["FakeModelServer", "RecordedRequest"]


CUT_CONNECTION = b"<cut the connection>"
"""Yielded by ``stream_events`` (the object itself): the server closes the connection there, in
the middle of the chunked body."""


@dataclass(frozen=True)
class RecordedRequest:
    """One request the fake server received. Header names are lower-case."""

    method: str
    path: str
    headers: Mapping[str, str]
    body: dict[str, Any]


class _HTTPServer(http.server.ThreadingHTTPServer):
    daemon_threads = True
    # stop() joins the handler threads itself, with a bound, after unblocking them.
    block_on_close = False
    # The default backlog of 5 drops connections when benchmarks open dozens at once (the
    # client then waits a 1 s SYN retransmit).
    request_queue_size = 1024

    def __init__(self, fake: FakeModelServer) -> None:
        self.fake = fake
        self.connections: set[socket.socket] = set()
        self.handler_threads: list[threading.Thread] = []
        self.lock = threading.Lock()
        super().__init__(("127.0.0.1", 0), _Handler)

    def process_request(self, request: Any, client_address: Any) -> None:
        request.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        thread = threading.Thread(
            target=self.process_request_thread,
            args=(request, client_address),
            daemon=True,
            name="fake-model-connection",
        )
        with self.lock:
            self.connections.add(request)
            self.handler_threads = [t for t in self.handler_threads if t.is_alive()]
            self.handler_threads.append(thread)
        thread.start()

    def shutdown_request(self, request: Any) -> None:
        with self.lock:
            self.connections.discard(request)
        super().shutdown_request(request)

    def handle_error(self, request: Any, client_address: Any) -> None:
        if self.fake.stopping:
            return  # sockets are being torn down on purpose
        exc = sys.exc_info()[1]
        if isinstance(exc, ConnectionError):
            return
        self.fake.errors.append(traceback.format_exc())
        traceback.print_exc(file=sys.stderr)


class _Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: _HTTPServer

    def log_message(self, format: str, *args: Any) -> None:  # silence per-request logs
        pass

    def do_GET(self) -> None:
        fake = self.server.fake
        fake.record(RecordedRequest("GET", self.path, self._headers(), {}))
        route = fake.get_route(self.path)
        if route is not None:
            self._send_json(200, route)
        elif self.path.rstrip("/").endswith("/models"):
            self._send_json(200, fake.models_body())
        else:
            self._send_json(404, fake.error_body(404, f"no route for GET {self.path}"))

    def do_POST(self) -> None:
        fake = self.server.fake
        length = int(self.headers.get("content-length") or 0)
        raw = self.rfile.read(length) if length else b""
        try:
            parsed = json.loads(raw or b"{}")
        except ValueError:
            self._send_json(400, fake.error_body(400, "the request body is not JSON"))
            return
        body = fake.make_body(parsed if isinstance(parsed, dict) else {})
        headers = self._headers()
        fake.record(RecordedRequest("POST", self.path, headers, dict(body)))
        if not self.path.rstrip("/").endswith(fake.model_path):
            self._send_json(404, fake.error_body(404, f"no route for POST {self.path}"))
            return
        refusal = fake.check_auth(headers)
        if refusal is not None:
            self._send_json(401, fake.error_body(401, refusal))
            return
        try:
            reply = fake.next_reply(body)
        except Exception as exc:  # a responder bug must show, not kill the connection
            fake.errors.append(traceback.format_exc())
            self._send_json(500, fake.error_body(500, f"fake server responder failed: {exc!r}"))
            return
        self._answer(reply, body)

    # --- answering ------------------------------------------------------------------------------

    def _answer(self, reply: Reply, body: RequestBody) -> None:
        fake = self.server.fake
        if reply.echo_credentials and reply.kind != "status":
            key = fake.api_key_sent(self._headers()) or ""
            reply = replace(reply, text=f"{reply.text}{key}")
        if reply.delay > 0 and not self._pause(reply.delay):
            return
        if reply.kind == "hang":
            self._pause(None)
            return
        if reply.kind == "status":
            headers: dict[str, str] = dict(fake.error_headers(reply))
            if reply.retry_after is not None:
                headers["retry-after"] = f"{reply.retry_after:g}"
            message = reply.message or fake.default_error_message(reply.status)
            if reply.echo_credentials:
                message = f"{message}: {fake.credentials_sent(self._headers())}"
            self._send_json(reply.status, fake.error_body(reply.status, message), headers)
            return
        if reply.kind == "page":
            self._send_raw(
                reply.status, reply.body, reply.content_type, headers=dict(reply.headers)
            )
            return
        if reply.kind == "events":
            self._stream(
                _paced(reply.raw_events, reply.chunk_delay),
                abrupt=reply.abrupt,
                content_type=reply.content_type,
            )
            return
        if reply.kind == "reset":
            self._reset()
            return
        if body.get("stream") is True:
            self._stream(fake.stream_events(reply, body), abrupt=reply.abrupt)
        elif reply.kind == "garbage":
            self._send_raw(
                200, b'{"id": "broken", "choices": [ this is not json', "application/json"
            )
        elif reply.kind == "cut_off":
            payload = json.dumps(fake.json_body(reply, body)).encode()
            self._send_raw(200, payload, "application/json", truncate=True)
        else:
            self._send_json(200, fake.json_body(reply, body))

    def _stream(
        self,
        events: Iterator[bytes | float],
        *,
        abrupt: bool,
        content_type: str = "text/event-stream; charset=utf-8",
    ) -> None:
        self.send_response(200)
        self.send_header("content-type", content_type)
        self.send_header("cache-control", "no-cache")
        self.send_header("transfer-encoding", "chunked")
        self.end_headers()
        try:
            for item in events:
                if item is CUT_CONNECTION:  # the body ends without its last chunk
                    self.close_connection = True
                    self.connection.shutdown(socket.SHUT_RDWR)
                    return
                if isinstance(item, float):
                    if not self._pause(item):
                        return
                    continue
                self.wfile.write(b"%X\r\n%s\r\n" % (len(item), item))
            if abrupt:
                self.close_connection = True
                self.connection.shutdown(socket.SHUT_RDWR)
                return
            self.wfile.write(b"0\r\n\r\n")
        except OSError:
            self._client_gone()

    def _send_json(self, code: int, payload: Any, headers: Mapping[str, str] | None = None) -> None:
        self._send_raw(code, json.dumps(payload).encode(), "application/json", headers=headers)

    def _send_raw(
        self,
        code: int,
        payload: bytes,
        content_type: str,
        *,
        headers: Mapping[str, str] | None = None,
        truncate: bool = False,
    ) -> None:
        try:
            self.send_response(code)
            self.send_header("content-type", content_type)
            self.send_header("content-length", str(len(payload)))
            for name, value in (headers or {}).items():
                self.send_header(name, value)
            self.end_headers()
            if truncate:
                self.wfile.write(payload[: len(payload) // 2])
                self.close_connection = True
                self.connection.shutdown(socket.SHUT_RDWR)
                return
            self.wfile.write(payload)
        except OSError:
            self._client_gone()

    def _reset(self) -> None:
        """Close the connection with a TCP RST (``SO_LINGER`` 0): the client sees a reset."""
        self.close_connection = True
        with contextlib.suppress(OSError):
            self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            self.connection.close()

    # --- waiting --------------------------------------------------------------------------------

    def _pause(self, seconds: float | None) -> bool:
        """Wait ``seconds`` (None: forever). False when the client left or the server stops."""
        fake = self.server.fake
        deadline = None if seconds is None else time.monotonic() + seconds
        with selectors.DefaultSelector() as selector:
            selector.register(self.connection, selectors.EVENT_READ)
            selector.register(fake.stop_reader, selectors.EVENT_READ)
            while True:
                if fake.stopping:
                    self.close_connection = True
                    return False
                remaining = None if deadline is None else deadline - time.monotonic()
                if remaining is not None and remaining <= 0:
                    return True
                for key, _ in selector.select(remaining):
                    if key.fileobj is fake.stop_reader:
                        self.close_connection = True
                        return False
                    if self._peer_closed():
                        self._client_gone()
                        return False
                    # The client sent bytes while we wait (not in HTTP/1.1 without pipelining):
                    # stop watching the socket so the loop does not spin.
                    selector.unregister(self.connection)

    def _peer_closed(self) -> bool:
        try:
            return bool(self.connection.recv(1, socket.MSG_PEEK) == b"")
        except BlockingIOError:
            return False
        except OSError:
            return True

    def _client_gone(self) -> None:
        self.close_connection = True
        self.server.fake.note_disconnect()

    def _headers(self) -> dict[str, str]:
        return {name.lower(): value for name, value in self.headers.items()}


class FakeModelServer:
    """Base of the fake model servers: lifecycle, script queue, request log, disconnects.

    Starts serving in the constructor; use it as a context manager (or call ``stop()``).

    Args:
        script: replies to send, in order, one per model request.
        responder: answers when the script is empty (default: echo the last user message).
        models: the model ids ``GET /v1/models`` lists.
        api_key: when set, requests that do not carry this key get a 401.
    """

    model_path: ClassVar[str] = ""
    """The model endpoint's path (``/chat/completions``, ``/messages``)."""

    def __init__(
        self,
        script: Iterable[Reply] = (),
        *,
        responder: Responder | None = None,
        models: Iterable[str] = ("fake-model",),
        api_key: str | None = None,
    ) -> None:
        self.responder: Responder = responder or echo
        self.models = tuple(models)
        self.api_key = api_key
        self.errors: list[str] = []
        self.stopping = False
        self._script: collections.deque[Reply] = collections.deque(script)
        self._requests: list[RecordedRequest] = []
        self._disconnects = 0
        self._changed = threading.Condition()
        self._flight = threading.Condition()
        self._in_flight = 0
        self._max_in_flight = 0
        self._streams_started = 0
        self._stop_writer, self.stop_reader = socket.socketpair()
        self._httpd = _HTTPServer(self)
        host, port = self._httpd.server_address[:2]
        self.origin = f"http://{host!s}:{port}"
        self._thread = threading.Thread(
            target=self._httpd.serve_forever,
            kwargs={"poll_interval": 0.05},
            daemon=True,
            name="fake-model-server",
        )
        self._thread.start()

    # --- answers in flight ----------------------------------------------------------------------

    @property
    def in_flight(self) -> int:
        """Streamed answers being sent right now."""
        with self._flight:
            return self._in_flight

    @property
    def max_in_flight(self) -> int:
        """The most streamed answers that were being sent at once."""
        with self._flight:
            return self._max_in_flight

    def wait_for_in_flight(self, count: int, timeout: float = 5.0) -> bool:
        """Wait until ``count`` streamed answers are being sent at once; False on timeout."""
        with self._flight:
            return self._flight.wait_for(lambda: self._in_flight >= count, timeout)

    @contextlib.contextmanager
    def counted(self) -> Iterator[int]:
        """Count one streamed answer in flight while the block runs; yields how many streams
        were started before it plus one (its number)."""
        with self._flight:
            self._in_flight += 1
            self._max_in_flight = max(self._max_in_flight, self._in_flight)
            self._streams_started += 1
            number = self._streams_started
            self._flight.notify_all()
        try:
            yield number
        finally:
            with self._flight:
                self._in_flight -= 1
                self._flight.notify_all()

    def interrupt(self) -> None:
        """Count a request that is not a stream as one started (a server that serves one
        request at a time ends the stream in progress for it too)."""
        with self._flight:
            self._streams_started += 1

    def latest_stream(self) -> int:
        """The number of the last streamed answer started."""
        with self._flight:
            return self._streams_started

    # --- lifecycle ------------------------------------------------------------------------------

    def __enter__(self) -> FakeModelServer:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()

    def stop(self, timeout: float = 5.0) -> None:
        """Stop serving: unblock every wait and open connection, join the threads (bounded)."""
        if self.stopping:
            return
        self.stopping = True
        with contextlib.suppress(OSError):
            self._stop_writer.send(b"x")
        self._httpd.shutdown()
        with self._httpd.lock:
            connections = list(self._httpd.connections)
            threads = list(self._httpd.handler_threads)
        for connection in connections:
            # Wakes handler threads blocked reading the next keep-alive request.
            with contextlib.suppress(OSError):
                connection.shutdown(socket.SHUT_RDWR)
        self._httpd.server_close()
        deadline = time.monotonic() + timeout
        for thread in [self._thread, *threads]:
            thread.join(max(0.0, deadline - time.monotonic()))
        self._stop_writer.close()
        self.stop_reader.close()

    # --- scripting ------------------------------------------------------------------------------

    def enqueue(self, *replies: Reply) -> None:
        """Append replies to the script."""
        with self._changed:
            self._script.extend(replies)

    def next_reply(self, body: RequestBody) -> Reply:
        """The next scripted reply, else the responder's answer."""
        with self._changed:
            if self._script:
                return self._script.popleft()
        return self.responder(body)

    @property
    def pending_replies(self) -> int:
        """How many scripted replies have not been sent yet."""
        with self._changed:
            return len(self._script)

    # --- what was received ----------------------------------------------------------------------

    def record(self, request: RecordedRequest) -> None:
        with self._changed:
            self._requests.append(request)
            self._changed.notify_all()

    @property
    def requests(self) -> list[RecordedRequest]:
        """Every request received so far (a copy), oldest first."""
        with self._changed:
            return list(self._requests)

    @property
    def model_requests(self) -> list[RecordedRequest]:
        """The requests to the model endpoint, oldest first."""
        return [r for r in self.requests if r.path.rstrip("/").endswith(self.model_path)]

    @property
    def bodies(self) -> list[dict[str, Any]]:
        """The JSON bodies of the model requests, oldest first."""
        return [r.body for r in self.model_requests]

    def wait_for_requests(self, count: int, timeout: float = 5.0) -> bool:
        """Wait until ``count`` model requests arrived; False on timeout."""
        with self._changed:
            return self._changed.wait_for(
                lambda: (
                    sum(r.path.rstrip("/").endswith(self.model_path) for r in self._requests)
                    >= count
                ),
                timeout,
            )

    def note_disconnect(self) -> None:
        with self._changed:
            self._disconnects += 1
            self._changed.notify_all()

    @property
    def disconnects(self) -> int:
        """How many clients closed their connection while the server was answering."""
        with self._changed:
            return self._disconnects

    def wait_for_disconnect(self, count: int = 1, timeout: float = 5.0) -> bool:
        """Wait until ``count`` clients closed their connection mid-answer; False on timeout."""
        with self._changed:
            return self._changed.wait_for(lambda: self._disconnects >= count, timeout)

    # --- the API, provided by subclasses ---------------------------------------------------------

    def get_route(self, path: str) -> Any:
        """The JSON a ``GET`` of ``path`` answers with besides the model list; None: 404."""
        return None

    def make_body(self, parsed: dict[str, Any]) -> RequestBody:
        raise NotImplementedError

    def check_auth(self, headers: Mapping[str, str]) -> str | None:
        """None when the request may pass, else the refusal message."""
        raise NotImplementedError

    def stream_events(self, reply: Reply, body: RequestBody) -> Iterator[bytes | float]:
        """The SSE events of ``reply`` (bytes), with pauses (float seconds) between them."""
        raise NotImplementedError

    def json_body(self, reply: Reply, body: RequestBody) -> dict[str, Any]:
        raise NotImplementedError

    def error_body(self, code: int, message: str) -> dict[str, Any]:
        raise NotImplementedError

    def error_headers(self, reply: Reply) -> Mapping[str, str]:
        return {}

    def credentials_sent(self, headers: Mapping[str, str]) -> str:
        """The credential header's value as the request carried it (``Bearer …``)."""
        return headers.get("authorization", "")

    def api_key_sent(self, headers: Mapping[str, str]) -> str | None:
        """The key a request carried, without its scheme word."""
        authorization = headers.get("authorization", "")
        return authorization.removeprefix("Bearer ") if authorization else None

    def default_error_message(self, code: int) -> str:
        return f"fake server error {code}"

    def models_body(self) -> dict[str, Any]:
        raise NotImplementedError


def _paced(chunks: Iterable[bytes], pause: float) -> Iterator[bytes | float]:
    for index, chunk in enumerate(chunks):
        if index and pause:
            yield float(pause)
        yield chunk


def count_words(values: Iterable[str]) -> int:
    """A deterministic stand-in for a token count."""
    return sum(len(v.split()) for v in values)
