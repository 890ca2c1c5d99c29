"""Replay the wire transcripts under ``tests/fixtures/wire`` as a model server on loopback.

A fixture (``tests/fixtures/wire/<server>/<case>.json``, described in that folder's README) holds
exchanges: a request as a real server received it and the response it sent, byte for byte (the
body as lines, the status, the headers that matter). ``ReplayServer`` serves all the exchanges of
one server at once, the way that server would answer: each request it gets is matched to the
recorded request with the same *features* (``request_features``: the model, the first user
message, ``stream``, the tools offered, the ``tool_choice``, how many tool results, whether an
assistant message has ``content: null``), or with the features an exchange names in its
``match`` list (which may also name the request's ``path``). A chat request no exchange
matches is answered 501 and kept in ``misses``: no recording says what the server would do
with it (a GET nothing answers gets a 404).

Every chat request is also checked against the server's rules (``server.json`` in the server's
folder: what the server refuses or silently mishandles, each with where that is known from);
broken rules are kept in ``violations``. The tests assert both lists are empty.

Streamed bodies go out one event per chunk with chunked transfer encoding, as the servers send
them; whole bodies with ``Content-Length``. The ``Server`` header is the recorded one, or none.
"""

from __future__ import annotations

import http.server
import json
import threading
import urllib.parse
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import TracebackType
from typing import Any

__all__ = [
    "FIXTURES",
    "Exchange",
    "Fixture",
    "ReplayServer",
    "Seen",
    "all_fixtures",
    "load_fixture",
    "request_features",
    "server_fixtures",
    "server_rules",
]

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "wire"

DEFAULT_MATCH = ("model", "user", "stream", "tools", "tool_choice", "tool_results", "null_content")


@dataclass(frozen=True)
class Exchange:
    """One recorded request and the response the server sent to it."""

    case: str
    request: Mapping[str, Any]
    response: Mapping[str, Any]
    match: tuple[str, ...] = DEFAULT_MATCH

    @property
    def method(self) -> str:
        return str(self.request.get("method", "POST"))

    @property
    def path(self) -> str:
        return str(self.request["path"])

    @property
    def body(self) -> Mapping[str, Any]:
        body: Mapping[str, Any] = self.request.get("body") or {}
        return body

    def features(self) -> dict[str, Any]:
        return request_features(self.body)


@dataclass(frozen=True)
class Fixture:
    """One fixture file."""

    server: str
    case: str
    path: Path
    about: str
    source: Mapping[str, Any]
    exchanges: tuple[Exchange, ...]
    drive: Mapping[str, Any] = field(default_factory=lambda: dict[str, Any]())
    expect: Mapping[str, Any] | None = None

    @property
    def id(self) -> str:
        return f"{self.server}/{self.case}"


def load_fixture(path: Path) -> Fixture:
    data = json.loads(path.read_text(encoding="utf-8"))
    exchanges = tuple(
        Exchange(
            data["case"],
            entry["request"],
            entry["response"],
            tuple(entry.get("match", DEFAULT_MATCH)),
        )
        for entry in data["exchanges"]
    )
    return Fixture(
        data["server"],
        data["case"],
        path,
        data.get("about", ""),
        data["source"],
        exchanges,
        data.get("drive") or {},
        data.get("expect"),
    )


def server_fixtures(server: str) -> list[Fixture]:
    """Every fixture of one server (its folder), by case name."""
    return [
        load_fixture(path)
        for path in sorted((FIXTURES / server).glob("*.json"))
        if path.name != "server.json"
    ]


def all_fixtures() -> list[Fixture]:
    return [
        fixture
        for folder in sorted(p for p in FIXTURES.iterdir() if p.is_dir())
        for fixture in server_fixtures(folder.name)
    ]


def server_rules(server: str) -> dict[str, Any]:
    """``server.json`` of a server's folder: its kind, rules and how requests reach it."""
    meta: dict[str, Any] = json.loads((FIXTURES / server / "server.json").read_text("utf-8"))
    return meta


# --- what a request is, for matching ------------------------------------------------------------


def _text(content: object) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(str(p.get("text", "")) for p in content if isinstance(p, dict))
    return ""


def _tool_choice(body: Mapping[str, Any]) -> str:
    choice = body.get("tool_choice")
    if choice is None:
        return "absent"
    if isinstance(choice, str):
        return choice
    if isinstance(choice, dict):
        function = choice.get("function")
        if isinstance(function, dict):
            return f"function:{function.get('name')}"
        return f"{choice.get('type')}:{choice.get('name')}"
    return repr(choice)


def request_features(body: Mapping[str, Any]) -> dict[str, Any]:
    """What a chat request is, in the terms a server's answer depends on."""
    messages = [m for m in body.get("messages") or [] if isinstance(m, dict)]
    users = [_text(m.get("content")) for m in messages if m.get("role") == "user"]
    tools = body.get("tools") or []
    names = sorted(str((t.get("function") or {}).get("name")) for t in tools if isinstance(t, dict))
    return {
        "model": body.get("model"),
        "user": users[0] if users else None,
        "stream": body.get("stream") is True,
        "tools": tuple(names),
        "tool_choice": _tool_choice(body),
        "tool_results": sum(1 for m in messages if m.get("role") == "tool"),
        "null_content": any(
            m.get("role") == "assistant" and m.get("content") is None for m in messages
        ),
    }


# --- rules --------------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Request:
    method: str
    path: str
    query: Mapping[str, list[str]]
    headers: Mapping[str, str]
    body: Mapping[str, Any]


def _content_not_null(request: _Request) -> str | None:
    for index, message in enumerate(request.body.get("messages") or []):
        assistant = isinstance(message, dict) and message.get("role") == "assistant"
        if assistant and message.get("content") is None:
            return f"messages[{index}] (assistant) has content null"
    return None


def _tool_choice_with_tools(request: _Request) -> str | None:
    if request.body.get("tools") and "tool_choice" not in request.body:
        return "tools offered without a tool_choice"
    return None


def _stream_options_only_when_streaming(request: _Request) -> str | None:
    if request.body.get("stream_options") and request.body.get("stream") is not True:
        return "stream_options sent with a request that is not streamed"
    return None


def _api_version_query(request: _Request) -> str | None:
    if not request.query.get("api-version"):
        return "no api-version query parameter"
    return None


def _api_key_header(request: _Request) -> str | None:
    if not request.headers.get("api-key"):
        return "no api-key header"
    return None


def _deployment_path(request: _Request) -> str | None:
    parts = request.path.split("/")
    if not (
        len(parts) == 6
        and parts[1:3] == ["openai", "deployments"]
        and parts[3]
        and parts[4:] == ["chat", "completions"]
    ):
        return f"{request.path} is not /openai/deployments/<deployment>/chat/completions"
    return None


def _bearer_key(request: _Request) -> str | None:
    if not request.headers.get("authorization", "").startswith("Bearer "):
        return "no Authorization: Bearer header"
    return None


def _tool_choice_string(request: _Request) -> str | None:
    choice = request.body.get("tool_choice")
    if choice is not None and not isinstance(choice, str):
        return f"tool_choice {json.dumps(choice)} is not a string (read as auto)"
    return None


RULES: dict[str, Callable[[_Request], str | None]] = {
    "content_not_null": _content_not_null,
    "tool_choice_string": _tool_choice_string,
    "tool_choice_with_tools": _tool_choice_with_tools,
    "stream_options_only_when_streaming": _stream_options_only_when_streaming,
    "api_version_query": _api_version_query,
    "api_key_header": _api_key_header,
    "deployment_path": _deployment_path,
    "bearer_key": _bearer_key,
}


# --- the server ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class Seen:
    """One request the replay server got, and what it made of it."""

    method: str
    path: str
    query: Mapping[str, list[str]]
    headers: Mapping[str, str]
    body: Mapping[str, Any]
    features: Mapping[str, Any]
    answered_by: str | None
    violations: tuple[str, ...]


class _HTTPServer(http.server.ThreadingHTTPServer):
    daemon_threads = True
    block_on_close = False

    def __init__(self, replay: ReplayServer) -> None:
        self.replay = replay
        super().__init__(("127.0.0.1", 0), _Handler)


class _Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: _HTTPServer

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def do_GET(self) -> None:
        self._handle("GET", {})

    def do_POST(self) -> None:
        length = int(self.headers.get("content-length") or 0)
        raw = self.rfile.read(length) if length else b""
        try:
            body = json.loads(raw or b"{}")
        except ValueError:
            body = {"_not_json": raw.decode("utf-8", "replace")}
        self._handle("POST", body if isinstance(body, dict) else {"_not_an_object": body})

    def _handle(self, method: str, body: dict[str, Any]) -> None:
        url = urllib.parse.urlsplit(self.path)
        request = _Request(
            method,
            url.path,
            urllib.parse.parse_qs(url.query),
            {name.lower(): value for name, value in self.headers.items()},
            body,
        )
        exchange = self.server.replay.answer(request)
        if exchange is None and method == "GET":
            payload = json.dumps({"error": {"message": f"no route for GET {url.path}"}})
            self._send(404, {"content-type": "application/json"}, [payload.encode()], False)
            return
        if exchange is None:
            message = (
                f"replay: no recording of {self.server.replay.name} answers {method} "
                f"{url.path} with {json.dumps(request_features(body), sort_keys=True)}"
            )
            payload = json.dumps({"error": {"message": message, "type": "replay_miss"}})
            self._send(501, {"content-type": "application/json"}, [payload.encode()], False)
            return
        response = exchange.response
        raw = "\n".join(response.get("body_lines", [])).encode()
        headers = dict(response.get("headers", {}))
        chunked = headers.pop("framing", "content-length") == "chunked"
        pieces = _events(raw) if chunked else [raw]
        self._send(int(response["status"]), headers, pieces, chunked)

    def _send(
        self, status: int, headers: Mapping[str, str], pieces: Sequence[bytes], chunked: bool
    ) -> None:
        try:
            self.send_response_only(status)
            self.send_header("date", self.date_time_string())
            for name, value in headers.items():
                self.send_header(name, value)
            if chunked:
                self.send_header("transfer-encoding", "chunked")
                self.end_headers()
                for piece in pieces:
                    if piece:
                        self.wfile.write(b"%X\r\n%s\r\n" % (len(piece), piece))
                        self.wfile.flush()
                self.wfile.write(b"0\r\n\r\n")
            else:
                body = b"".join(pieces)
                self.send_header("content-length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)
        except OSError:
            self.close_connection = True


def _events(raw: bytes) -> list[bytes]:
    """The body cut after each blank line: one SSE event (or comment block) per chunk."""
    pieces: list[bytes] = []
    rest = raw
    while b"\n\n" in rest:
        head, _, rest = rest.partition(b"\n\n")
        pieces.append(head + b"\n\n")
    if rest:
        pieces.append(rest)
    return pieces


class ReplayServer:
    """Serves the exchanges of one server's fixtures on 127.0.0.1 (a free port).

    Args:
        name: the server (its fixture folder), named in messages.
        exchanges: what it answers.
        rules: the names of the rules every request is checked against (``RULES``).
    """

    def __init__(self, name: str, exchanges: Sequence[Exchange], rules: Sequence[str] = ()) -> None:
        unknown = [rule for rule in rules if rule not in RULES]
        if unknown:
            raise ValueError(f"unknown rules {unknown}; known: {sorted(RULES)}")
        self.name = name
        self.exchanges = list(exchanges)
        self.rules = tuple(rules)
        self._seen: list[Seen] = []
        self._lock = threading.Lock()
        self._httpd = _HTTPServer(self)
        host, port = self._httpd.server_address[:2]
        self.origin = f"http://{host!s}:{port}"
        self.host_port = f"{host!s}:{port}"
        self._thread = threading.Thread(
            target=self._httpd.serve_forever,
            kwargs={"poll_interval": 0.05},
            daemon=True,
            name=f"wire-replay-{name}",
        )
        self._thread.start()

    @classmethod
    def for_server(cls, server: str) -> ReplayServer:
        """All the exchanges of a server's fixtures, with the rules of its ``server.json``."""
        exchanges = [e for f in server_fixtures(server) for e in f.exchanges]
        return cls(server, exchanges, list(server_rules(server).get("rules", {})))

    @property
    def base_url(self) -> str:
        return f"{self.origin}/v1"

    def answer(self, request: _Request) -> Exchange | None:
        features = request_features(request.body)
        violations = tuple(
            f"{rule}: {problem}"
            for rule in (self.rules if request.method == "POST" else ())
            if (problem := RULES[rule](request)) is not None
        )
        found = self._match(request, features)
        with self._lock:
            self._seen.append(
                Seen(
                    request.method,
                    request.path,
                    request.query,
                    request.headers,
                    request.body,
                    features,
                    found.case if found is not None else None,
                    violations,
                )
            )
        return found

    def _match(self, request: _Request, features: Mapping[str, Any]) -> Exchange | None:
        for exchange in self.exchanges:
            if exchange.method != request.method:
                continue
            if request.method == "GET":
                if request.path.rstrip("/").endswith(exchange.path.rstrip("/").split("/")[-1]):
                    return exchange
                continue
            if "path" in exchange.match and request.path != exchange.path:
                continue
            recorded = exchange.features()
            if all(recorded[k] == features[k] for k in exchange.match if k != "path"):
                return exchange
        return None

    @property
    def seen(self) -> list[Seen]:
        with self._lock:
            return list(self._seen)

    @property
    def chat_requests(self) -> list[Seen]:
        return [s for s in self.seen if s.method == "POST"]

    @property
    def misses(self) -> list[Seen]:
        """The chat requests no recording answers (a GET nothing answers is a plain 404)."""
        return [s for s in self.chat_requests if s.answered_by is None]

    @property
    def violations(self) -> list[str]:
        return [v for s in self.seen for v in s.violations]

    def report(self) -> str:
        """What the server saw, one line per request (for assertion messages)."""
        lines = []
        for s in self.seen:
            answered = s.answered_by or "NO RECORDING"
            broken = f" BROKEN RULES: {list(s.violations)}" if s.violations else ""
            lines.append(
                f"{s.method} {s.path} {json.dumps(dict(s.features), sort_keys=True)} "
                f"-> {answered}{broken}"
            )
        return "\n".join(lines) or "(no requests)"

    def stop(self, timeout: float = 5.0) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()
        self._thread.join(timeout)

    def __enter__(self) -> ReplayServer:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()
