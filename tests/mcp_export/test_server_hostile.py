"""What a careless or hostile MCP client sends, against the real ``metaagent serve``.

One table of attacks (``ATTACKS``) is thrown at two real server processes, one over stdio and one
over streamable HTTP, each started once for the module with a fake model behind it. Each row is
its own test: the row's bytes go out as they are, the answer (or the silence JSON-RPC prescribes
for notifications and responses) must come back, and a ``ping`` must then be answered, so a row
that kills or wedges the server fails there and not somewhere later.

Beside the table: a slow call in flight survives the attack that used to kill the process, a
request before ``initialize`` is told to send ``initialize``, and the over-nested call that
wedged the 2026-07-28 era of the HTTP transport.
"""

from __future__ import annotations

import json
import os
import queue
import subprocess
import threading
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

import httpx2
import mcp_types as types
import pytest

from tests.fakes._script import Reply, RequestBody, text
from tests.fakes.mcp_clients import REPO, serve_command, write_agent
from tests.fakes.openai_server import FakeOpenAIServer

WAIT = 30.0
"""The longest any single answer may take (seconds)."""

_META = {
    types.PROTOCOL_VERSION_META_KEY: "2026-07-28",
    types.CLIENT_INFO_META_KEY: {"name": "hostile", "version": "1"},
    types.CLIENT_CAPABILITIES_META_KEY: {},
}


def _line(message: dict[str, Any]) -> bytes:
    return json.dumps(message).encode()


def _request(request_id: Any, method: str, params: dict[str, Any] | None = None) -> bytes:
    message: dict[str, Any] = {"jsonrpc": "2.0", "id": request_id, "method": method}
    if params is not None:
        message["params"] = params
    return _line(message)


def _nested(depth: int) -> bytes:
    """A ping whose params hold arrays ``depth`` deep (the whole message: depth + 2 levels)."""
    return b'{"jsonrpc":"2.0","id":"deep","method":"ping","params":{"x":%s%s}}' % (
        b"[" * depth,
        b"]" * depth,
    )


def _call(request_id: str, destination: str, **more: Any) -> bytes:
    arguments = {"destination": destination, **more}
    return _request(request_id, "tools/call", {"name": "book_flight", "arguments": arguments})


INITIALIZE = _request(
    "init",
    "initialize",
    {
        "protocolVersion": "2025-11-25",
        "capabilities": {},
        "clientInfo": {"name": "hostile", "version": "1"},
    },
)
INITIALIZED = b'{"jsonrpc":"2.0","method":"notifications/initialized"}'


# --- the table ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class Error:
    """A JSON-RPC error answer (over HTTP with ``status``; 200 means inside the SSE stream)."""

    code: int
    id: Any
    says: str = ""
    status: int = 400


@dataclass(frozen=True)
class Result:
    """A result answer whose text (a tool's) or JSON contains ``says``."""

    id: Any
    says: str = ""
    is_error: bool = False


@dataclass(frozen=True)
class Silence:
    """No answer: a notification or a response (HTTP: 202 with no body)."""


Answer = Error | Result | Silence


@dataclass(frozen=True)
class Attack:
    """One malformed message and what each transport must answer.

    ``body`` as a tuple: the message is sent in these pieces, with a pause between them.
    """

    name: str
    body: bytes | tuple[bytes, ...]
    stdio: Answer
    http: Answer

    @property
    def data(self) -> bytes:
        return b"".join(self.body) if isinstance(self.body, tuple) else self.body


def _both(name: str, body: bytes | tuple[bytes, ...], answer: Answer) -> Attack:
    return Attack(name, body, answer, answer)


_DEEP = Error(types.INVALID_REQUEST, "deep", "more than 100 levels deep")
_BAD_ID = "the id must be a string or an integer"
_BIG = "x" * (5 * 1024 * 1024)
_LARGE = "y" * (3 * 1024 * 1024)

ATTACKS = [
    _both("nested 1000 deep", _nested(1000), _DEEP),
    _both("nested 150 deep (parses, still refused)", _nested(150), _DEEP),
    _both("nested 98 deep (at the limit)", _nested(98), Result("deep")),
    _both("id null", _request(None, "ping"), Error(types.INVALID_REQUEST, None, _BAD_ID)),
    _both("id an object", _request({}, "ping"), Error(types.INVALID_REQUEST, None, _BAD_ID)),
    _both("id an array", _request([1], "ping"), Error(types.INVALID_REQUEST, None, _BAD_ID)),
    _both("id a float", _request(1.5, "ping"), Error(types.INVALID_REQUEST, None, _BAD_ID)),
    _both("id a boolean", _request(True, "ping"), Error(types.INVALID_REQUEST, None, _BAD_ID)),
    _both("a big integer id", _request(2**70, "ping"), Result(2**70)),
    _both(
        "a batch",
        b"[" + _request("b1", "ping") + b"]",
        Error(types.INVALID_REQUEST, None, "batches"),
    ),
    _both("an empty batch", b"[]", Error(types.INVALID_REQUEST, None, "empty batch")),
    _both(
        "a 5000-digit number",
        _request("n", "ping", {"n": 0}).replace(b"0}", b"1" + b"0" * 5000 + b"}"),
        Error(types.PARSE_ERROR, None, "number out of range"),
    ),
    _both(
        "an overflowing float",
        _request("inf", "ping", {"n": 0}).replace(b"0}", b"1e999}"),
        Result("inf"),
    ),
    _both(
        "invalid UTF-8",
        b'{"jsonrpc":"2.0","id":"u","method":"\xff\xfe"}',
        Error(types.PARSE_ERROR, None, "not UTF-8"),
    ),
    _both(
        "a byte order mark",
        b"\xef\xbb\xbf" + _request("bom", "ping"),
        Error(types.PARSE_ERROR, None, "byte order mark"),
    ),
    _both(
        "a NUL byte in a string",
        b'{"jsonrpc":"2.0","id":"nul","method":"pi\x00ng"}',
        Error(types.PARSE_ERROR, None, "control character"),
    ),
    _both(
        "an unpaired surrogate escape as the id",
        b'{"jsonrpc":"2.0","id":"\\ud800","method":"nope"}',
        Error(types.PARSE_ERROR, None, "surrogate"),
    ),
    _both("not JSON", b"hello", Error(types.PARSE_ERROR, None, "not valid JSON")),
    _both("cut-off JSON", _request("cut", "ping")[:-5], Error(types.PARSE_ERROR, None)),
    _both("a JSON string", b'"ping"', Error(types.INVALID_REQUEST, None, "not a string")),
    Attack(
        "a response sent to the server",
        b'{"jsonrpc":"2.0","id":"r","result":{}}',
        stdio=Silence(),
        http=Silence(),
    ),
    Attack(
        "a malformed response",
        b'{"jsonrpc":"2.0","id":"r","result":5}',
        stdio=Silence(),
        http=Error(types.INVALID_REQUEST, None, "malformed response"),
    ),
    _both(
        "an unknown method",
        _request("unknown", "no/such/method"),
        Error(types.METHOD_NOT_FOUND, "unknown", status=200),
    ),
    _both("an unknown notification", b'{"jsonrpc":"2.0","method":"notifications/no"}', Silence()),
    Attack(
        "a notification whose method is a number",
        b'{"jsonrpc":"2.0","method":5}',
        stdio=Silence(),
        http=Error(types.INVALID_REQUEST, None, '"method" must be a string'),
    ),
    _both(
        "method a number",
        b'{"jsonrpc":"2.0","id":"m","method":5}',
        Error(types.INVALID_REQUEST, "m", '"method" must be a string'),
    ),
    _both(
        "params a string",
        b'{"jsonrpc":"2.0","id":"p","method":"tools/call","params":"book_flight"}',
        Error(types.INVALID_REQUEST, "p", '"params" must be an object'),
    ),
    _both(
        "jsonrpc 1.0",
        b'{"jsonrpc":"1.0","id":"v","method":"ping"}',
        Error(types.INVALID_REQUEST, "v", '"jsonrpc" must be "2.0"'),
    ),
    _both(
        "a message split across writes",
        (b'{"jsonrpc":"2.0","id":"split",', b'"method":"ping"}'),
        Result("split"),
    ),
    _both("CRLF line end", _request("crlf", "ping") + b"\r", Result("crlf")),
    _both(
        "a bad argument",
        _call("args", "Oslo", passengers="two"),
        Result("args", "passengers", is_error=True),
    ),
    _both(
        "an infinite argument",
        _call("infarg", "Oslo", passengers=0).replace(b"0}", b"1e999}"),
        Result("infarg", "passengers", is_error=True),
    ),
    _both("a 3 MB string argument", _call("large", _LARGE), Result("large", "booked (314")),
    Attack(
        "a 5 MB string argument",
        _call("big", _BIG),
        stdio=Result("big", "booked (524"),
        http=Error(types.INVALID_REQUEST, None, "larger than this server's limit", status=413),
    ),
]


# --- the servers -------------------------------------------------------------------------------


class HeldModel:
    """The model's answers: how long the prompt was; a prompt that says SLOW is answered only
    once ``release`` is set (so a test knows the call is in flight while it attacks)."""

    def __init__(self) -> None:
        self.release = threading.Event()

    def __call__(self, body: RequestBody) -> Reply:
        prompt = body.last_user_text
        if "SLOW" in prompt:
            self.release.wait(WAIT)
        return text(f"booked ({len(prompt)} characters)")


def _env(home: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("OPENAI_API_KEY", "METAAGENT_TOKEN")}
    return env | {"METAAGENT_HOME": str(home)}


def _drain(stream: IO[bytes], into: list[bytes]) -> threading.Thread:
    def run() -> None:
        for line in iter(stream.readline, b""):
            into.append(line)

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    return thread


class StdioPeer:
    """A ``metaagent serve`` subprocess over stdio, written to in raw bytes."""

    def __init__(self, command: list[str], env: dict[str, str]) -> None:
        self.process = subprocess.Popen(
            command,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=env,
            cwd=REPO,
        )
        assert self.process.stdout is not None and self.process.stderr is not None
        self._replies: queue.Queue[dict[str, Any] | None] = queue.Queue()
        self._stderr: list[bytes] = []
        _drain(self.process.stderr, self._stderr)
        threading.Thread(target=self._read, args=(self.process.stdout,), daemon=True).start()

    def _read(self, stdout: IO[bytes]) -> None:
        for line in iter(stdout.readline, b""):
            self._replies.put(json.loads(line))
        self._replies.put(None)  # the server closed stdout: it is gone

    @property
    def stderr(self) -> str:
        return b"".join(self._stderr).decode(errors="replace")

    def send(self, *pieces: bytes, pause: float = 0.2) -> None:
        """Write ``pieces`` as one line, with a pause between pieces."""
        stdin = self.process.stdin
        assert stdin is not None
        for i, piece in enumerate(pieces):
            if i:
                time.sleep(pause)
            stdin.write(piece + (b"\n" if i == len(pieces) - 1 else b""))
            stdin.flush()

    def reply(self) -> dict[str, Any]:
        try:
            message = self._replies.get(timeout=WAIT)
        except queue.Empty:
            pytest.fail(f"no answer within {WAIT} s; stderr:\n{self.stderr[-3000:]}")
        if message is None:
            code = self.process.wait(timeout=WAIT)
            pytest.fail(f"the server exited ({code}); stderr:\n{self.stderr[-3000:]}")
        return message

    def replies_until(self, request_id: Any) -> tuple[dict[str, Any], list[dict[str, Any]]]:
        """The answer to ``request_id``, and every other message that came before it."""
        before: list[dict[str, Any]] = []
        while (message := self.reply()).get("id") != request_id or "method" in message:
            before.append(message)
        return message, before

    def close(self) -> int:
        if self.process.stdin is not None:
            self.process.stdin.close()
        try:
            return self.process.wait(timeout=WAIT)
        finally:
            self.process.kill()
            self.process.wait(timeout=WAIT)


class HttpPeer:
    """A ``metaagent serve --http`` subprocess with one 2025-11-25 session open."""

    def __init__(self, command: list[str], env: dict[str, str]) -> None:
        self.process = subprocess.Popen(
            command,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=env,
            cwd=REPO,
        )
        assert self.process.stderr is not None
        self._stderr: list[bytes] = []
        reader = _drain(self.process.stderr, self._stderr)
        deadline = time.monotonic() + WAIT
        while "/mcp" not in self.stderr:
            if time.monotonic() > deadline or not reader.is_alive():
                self.close()
                pytest.fail(f"the HTTP server did not start; stderr:\n{self.stderr}")
            time.sleep(0.05)
        self.url = self.stderr.split("HTTP at ", 1)[1].split()[0]
        self.http = httpx2.Client(timeout=WAIT)
        response = self.http.post(self.url, content=INITIALIZE, headers=self.headers())
        assert response.status_code == 200, response.text
        self.session = response.headers["mcp-session-id"]
        assert self.post(INITIALIZED)[0] == 202

    @property
    def stderr(self) -> str:
        return b"".join(self._stderr).decode(errors="replace")

    def headers(self, session: bool = True, **extra: str) -> dict[str, str]:
        headers = {
            "Content-Type": "application/json",
            "Accept": "application/json, text/event-stream",
        }
        if session and getattr(self, "session", None):
            headers |= {"Mcp-Session-Id": self.session, "MCP-Protocol-Version": "2025-11-25"}
        return headers | extra

    def post(
        self, body: bytes | tuple[bytes, ...], *, session: bool = True, **headers: str
    ) -> tuple[int, dict[str, Any] | None]:
        """POST ``body`` (a tuple: chunked, in pieces) with ``headers``, in the session unless
        ``session`` is false; the status and the JSON-RPC message answered."""

        def pieces() -> Iterator[bytes]:
            assert isinstance(body, tuple)
            for i, piece in enumerate(body):
                if i:
                    time.sleep(0.2)
                yield piece

        content: Any = pieces() if isinstance(body, tuple) else body
        sent = self.headers(session, **headers)
        response = self.http.post(self.url, content=content, headers=sent)
        return response.status_code, _message(response)

    def close(self) -> None:
        if hasattr(self, "http"):
            self.http.close()
        self.process.terminate()
        try:
            self.process.wait(timeout=WAIT)
        finally:
            self.process.kill()
            self.process.wait(timeout=WAIT)


def _message(response: httpx2.Response) -> dict[str, Any] | None:
    """The JSON-RPC message of a JSON or an SSE response; None for an empty body."""
    if not response.content:
        return None
    if response.headers.get("content-type", "").startswith("text/event-stream"):
        for line in response.text.splitlines():
            if line.startswith("data:") and line[5:].strip():
                message: dict[str, Any] = json.loads(line[5:])
                if "id" in message:
                    return message
        return None
    parsed: dict[str, Any] = response.json()
    return parsed


@pytest.fixture(scope="module")
def held() -> HeldModel:
    return HeldModel()


@pytest.fixture(scope="module")
def model(held: HeldModel) -> Iterator[FakeOpenAIServer]:
    with FakeOpenAIServer(responder=held) as server:
        yield server


@pytest.fixture(scope="module")
def agent(tmp_path_factory: pytest.TempPathFactory, model: FakeOpenAIServer) -> Path:
    return write_agent(tmp_path_factory.mktemp("hostile") / "a.agent.yaml", base_url=model.base_url)


@pytest.fixture(scope="module")
def home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("home")


def _start_stdio(agent: Path, home: Path) -> StdioPeer:
    peer = StdioPeer(serve_command(str(agent), "--no-history"), _env(home))
    peer.send(INITIALIZE)
    assert peer.replies_until("init")[0]["result"]["serverInfo"]["name"] == "Travel Desk"
    peer.send(INITIALIZED)
    return peer


class Servers:
    """One server per transport for the module, started again for the next test after a test
    that ended it (so one fatal row fails alone instead of every row after it)."""

    def __init__(self, agent: Path, home: Path) -> None:
        self._agent = agent
        self._home = home
        self._stdio: list[StdioPeer] = []
        self._http: list[HttpPeer] = []

    def stdio(self) -> StdioPeer:
        if not self._stdio or self._stdio[-1].process.poll() is not None:
            self._stdio.append(_start_stdio(self._agent, self._home))
        return self._stdio[-1]

    def http(self) -> HttpPeer:
        if not self._http or self._http[-1].process.poll() is not None:
            command = serve_command(str(self._agent), "--no-history", "--http", "127.0.0.1:0")
            self._http.append(HttpPeer(command, _env(self._home)))
        return self._http[-1]

    def close(self) -> None:
        """Stop the servers; the ones still running must end cleanly, none with a traceback."""
        codes = [peer.close() for peer in self._stdio if peer.process.poll() is None]
        for http in self._http:
            http.close()
        stderr = [peer.stderr for peer in self._stdio] + [peer.stderr for peer in self._http]
        assert set(codes) <= {0}, codes
        assert len(self._stdio) <= 1 and len(self._http) <= 1, "a server died during the tests"
        for text_ in stderr:
            assert "Traceback" not in text_, text_[-3000:]


@pytest.fixture(scope="module")
def servers(agent: Path, home: Path) -> Iterator[Servers]:
    running = Servers(agent, home)
    try:
        yield running
    finally:
        running.close()


@pytest.fixture
def stdio(servers: Servers) -> StdioPeer:
    return servers.stdio()


@pytest.fixture
def http(servers: Servers) -> HttpPeer:
    return servers.http()


def _check(answer: Answer, message: dict[str, Any] | None, row: str) -> None:
    if isinstance(answer, Silence):
        assert message is None, (row, message)
        return
    assert message is not None, row
    assert message["id"] == answer.id, (row, message)
    if isinstance(answer, Error):
        assert message["error"]["code"] == answer.code, (row, message)
        assert answer.says in message["error"]["message"], (row, message)
        return
    result = message["result"]
    found = "".join(c.get("text", "") for c in result.get("content", [])) or json.dumps(result)
    assert answer.says in found, (row, found[:300])
    assert bool(result.get("isError")) == answer.is_error, (row, found[:300])


# --- the table, over both transports -----------------------------------------------------------


@pytest.mark.parametrize("attack", ATTACKS, ids=[a.name for a in ATTACKS])
def test_stdio_answers_each_attack_and_keeps_serving(stdio: StdioPeer, attack: Attack) -> None:
    pieces = attack.body if isinstance(attack.body, tuple) else (attack.body,)
    stdio.send(*pieces)
    after = f"after {attack.name}"
    stdio.send(_request(after, "ping"))
    pong, before = stdio.replies_until(after)
    if isinstance(attack.stdio, Silence):
        assert before == [], before
    else:
        while not before:  # an answer from a handler may come after the ping's
            before.append(stdio.reply())
        assert len(before) == 1, before
        _check(attack.stdio, before[0], attack.name)
    assert pong["result"] == {}


@pytest.mark.parametrize("attack", ATTACKS, ids=[a.name for a in ATTACKS])
def test_http_answers_each_attack_and_keeps_serving(http: HttpPeer, attack: Attack) -> None:
    status, message = http.post(attack.body)
    expected = attack.http
    if isinstance(expected, Silence):
        assert status == 202, (status, message)
    elif isinstance(expected, Error):
        assert status == expected.status, (status, message)
    else:
        assert status == 200, (status, message)
    _check(expected, message, attack.name)
    status, pong = http.post(_request("after", "ping"))
    assert status == 200 and pong is not None and pong["result"] == {}


# --- a call in flight survives -----------------------------------------------------------------


def test_a_call_in_flight_over_stdio_outlives_an_over_nested_line(
    stdio: StdioPeer, model: FakeOpenAIServer, held: HeldModel
) -> None:
    held.release.clear()
    asked = len(model.model_requests)
    try:
        stdio.send(_call("slow", "SLOW city"))
        assert model.wait_for_requests(asked + 1, WAIT)  # the call waits on the model now
        stdio.send(_nested(1000))
        stdio.send(_request("still here", "ping"))
        refused, before = stdio.replies_until("deep")
        assert before == [] and refused["error"]["code"] == types.INVALID_REQUEST
        pong, before = stdio.replies_until("still here")
        assert before == [] and pong["result"] == {}
    finally:
        held.release.set()
    slow, _ = stdio.replies_until("slow")
    assert slow["result"]["content"][0]["text"].startswith("booked")


def test_a_call_in_flight_over_http_outlives_an_over_nested_message(
    http: HttpPeer, model: FakeOpenAIServer, held: HeldModel
) -> None:
    held.release.clear()
    asked = len(model.model_requests)
    with ThreadPoolExecutor(1) as pool:
        try:
            slow = pool.submit(http.post, _call("slow", "SLOW city"))
            assert model.wait_for_requests(asked + 1, WAIT)
            status, refused = http.post(_nested(1000))
            assert status == 400 and refused is not None and refused["id"] == "deep"
            assert http.post(_request("still here", "ping"))[0] == 200
        finally:
            held.release.set()
        status, answer = slow.result(timeout=WAIT)
    assert status == 200 and answer is not None
    assert answer["result"]["content"][0]["text"].startswith("booked")


def test_over_nested_arguments_in_the_2026_era_over_http_are_refused(http: HttpPeer) -> None:
    # The 2026-07-28 era parses with json.loads (~1000 levels); the arguments were then copied
    # recursively, and the call ended in a RecursionError (a traceback in the log).
    params = {"_meta": _META, "name": "book_flight", "arguments": {"destination": "Oslo"}}
    body = _request("modern deep", "tools/call", params).replace(
        b'"Oslo"}', b'"Oslo", "x": ' + b"[" * 900 + b"]" * 900 + b"}"
    )
    modern = {
        "MCP-Protocol-Version": "2026-07-28",
        "Mcp-Method": "tools/call",
        "Mcp-Name": "book_flight",
    }
    status, refused = http.post(body, session=False, **modern)
    assert status == 400, refused
    assert refused is not None and refused["id"] == "modern deep"
    assert "more than 100 levels deep" in refused["error"]["message"]
    listing = _request("modern list", "tools/list", {"_meta": _META})
    status, listed = http.post(listing, session=False, **modern | {"Mcp-Method": "tools/list"})
    assert status == 200 and listed is not None
    assert [t["name"] for t in listed["result"]["tools"]] == ["book_flight"]


# --- before initialize -------------------------------------------------------------------------


def test_a_request_before_initialize_over_stdio_is_told_to_initialize(
    agent: Path, home: Path
) -> None:
    peer = StdioPeer(serve_command(str(agent), "--no-history"), _env(home))
    try:
        peer.send(_request("early", "tools/list"))
        early, _ = peer.replies_until("early")
        peer.send(_request("ping", "ping"))
        assert peer.replies_until("ping")[0]["result"] == {}
        peer.send(INITIALIZE)
        peer.send(INITIALIZED)
        peer.send(_request("listed", "tools/list"))
        listed, _ = peer.replies_until("listed")
    finally:
        assert peer.close() == 0
    assert early["error"]["code"] == types.INVALID_REQUEST
    assert "not initialized" in early["error"]["message"]
    assert "send an initialize request first" in early["error"]["message"]
    assert [t["name"] for t in listed["result"]["tools"]] == ["book_flight"]


def test_a_request_without_a_session_over_http_is_told_to_initialize(http: HttpPeer) -> None:
    status, early = http.post(_request("early", "tools/list"), session=False)
    assert status == 400
    assert early is not None and early["id"] == "early"
    assert early["error"]["code"] == types.INVALID_REQUEST
    assert "send an initialize request first" in early["error"]["message"]
