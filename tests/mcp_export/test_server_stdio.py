"""The real command over stdio: ``python -m mcp_export serve`` in a subprocess.

List, call and sampling with the official client in both eras; a stream of malformed input
written as raw bytes to the server's stdin; the start-up refusals and their exit codes.
"""

from __future__ import annotations

import json
import os
import pty
import socket
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

import anyio
import anyio.abc
import mcp_types as types
import pytest
from anyio.streams.buffered import BufferedByteReceiveStream
from mcp import Client

from mcp_export.history.store import HistoryStore
from mcp_export.server.stdio import StdinLines
from tests.fakes._script import text
from tests.fakes.mcp_clients import (
    ScriptedSampling,
    book_tool,
    initialize_request,
    serve_command,
    serve_params,
    write_agent,
)
from tests.fakes.openai_server import FakeOpenAIServer

pytestmark = pytest.mark.anyio

MODES = pytest.mark.parametrize("mode", ["legacy", "auto"])


def _env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != "OPENAI_API_KEY"}
    return env | extra


def _text(result: types.CallToolResult) -> str:
    return "".join(b.text for b in result.content if isinstance(b, types.TextContent))


@MODES
async def test_the_command_lists_and_answers_over_stdio(
    tmp_path: Path, metaagent_home: Path, mode: str
) -> None:
    with FakeOpenAIServer([text("Booked over stdio.")]) as model:
        path = write_agent(tmp_path / "a.agent.yaml", base_url=model.base_url)
        params = serve_params(str(path), env=_env())
        with anyio.fail_after(60):
            async with Client(params, mode=mode) as client:
                assert client.server_info is not None
                assert client.server_info.name == "Travel Desk"
                (tool,) = (await client.list_tools()).tools
                result = await client.call_tool("book_flight", {"destination": "Oslo"})
                bad = await client.call_tool("book_flight", {"passengers": "two"})
    assert tool.name == "book_flight"
    assert _text(result) == "Booked over stdio."
    assert bad.is_error and "destination" in _text(bad) and "passengers" in _text(bad)
    # The subprocess recorded the call in the same history database.
    with HistoryStore() as store:
        (run,) = [r for r in store.runs() if r.status == "complete"]
    assert run.answer == "Booked over stdio."


@MODES
async def test_the_command_samples_the_clients_model_over_stdio(tmp_path: Path, mode: str) -> None:
    path = write_agent(tmp_path / "a.agent.yaml", api_key=None)
    model = ScriptedSampling()
    params = serve_params(str(path), "--no-history", env=_env())
    with anyio.fail_after(60):
        async with Client(params, mode=mode, sampling_callback=model) as client:
            result = await client.call_tool("book_flight", {"destination": "Oslo"})
    assert _text(result) == "sampled: Book a flight to Oslo for 1 passenger(s)."
    assert len(model.requests) == 1


# --- malformed input -------------------------------------------------------------------------

_INIT = initialize_request("raw-bytes")
_GARBAGE: list[tuple[bytes, Any]] = [
    # (line, expected reply: (code, id) or None for no reply)
    (b'{"jsonrpc": "2.0", "id": 7, "method": "tools/list"', (types.PARSE_ERROR, None)),
    (b"[1, 2, 3]", (types.INVALID_REQUEST, None)),
    (
        b'{"jsonrpc":"2.0","id":"x1","method":"tools/call","params":"oops"}',
        (types.INVALID_REQUEST, "x1"),
    ),
    (b'{"jsonrpc":"2.0","method":"notifications/progress","params":5}', None),
    (b"\xff\xfe\x00binary\x80", (types.PARSE_ERROR, None)),
    (b'"just a string"', (types.INVALID_REQUEST, None)),
    (b'{"id": true, "method": 5}', (types.INVALID_REQUEST, None)),
    (b"   ", None),
    (b"a" * (8 * 1024 * 1024), (types.PARSE_ERROR, None)),
    (b'{"jsonrpc":"2.0","id":99,"result":{}}', None),
]


async def _read_message(stream: BufferedByteReceiveStream) -> dict[str, Any]:
    with anyio.fail_after(30):
        line = await stream.receive_until(b"\n", 64 * 1024 * 1024)
    message: dict[str, Any] = json.loads(line)
    return message


async def _send(process: anyio.abc.Process, *lines: bytes) -> None:
    assert process.stdin is not None
    for line in lines:
        await process.stdin.send(line + b"\n")


@pytest.mark.parametrize("era", ["2025-11-25", "2026-07-28"])
async def test_malformed_input_on_stdin_leaves_the_server_answering(
    tmp_path: Path, era: str
) -> None:
    path = write_agent(tmp_path / "a.agent.yaml")
    command = serve_command(str(path), "--no-history")
    async with await anyio.open_process(command, env=_env()) as process:
        assert process.stdout is not None
        stdout = BufferedByteReceiveStream(process.stdout)
        await _send(process, *(line for line, _ in _GARBAGE))
        for line, expected in _GARBAGE:
            if expected is None:
                continue
            reply = await _read_message(stdout)
            code, request_id = expected
            assert reply["error"]["code"] == code, (line[:60], reply)
            assert reply["id"] == request_id
        if era == "2025-11-25":
            await _send(process, json.dumps(_INIT).encode())
            initialized = await _read_message(stdout)
            assert initialized["result"]["serverInfo"]["name"] == "Travel Desk"
            await _send(
                process,
                b'{"jsonrpc":"2.0","method":"notifications/initialized"}',
                b"{broken again",
                b'{"jsonrpc":"2.0","id":2,"method":"tools/list"}',
            )
        else:
            meta = {
                types.PROTOCOL_VERSION_META_KEY: era,
                types.CLIENT_INFO_META_KEY: {"name": "raw-bytes", "version": "1"},
                types.CLIENT_CAPABILITIES_META_KEY: {},
            }
            request = {"jsonrpc": "2.0", "id": 2, "method": "tools/list", "params": {"_meta": meta}}
            await _send(process, b"{broken again", json.dumps(request).encode())
        assert (await _read_message(stdout))["error"]["code"] == types.PARSE_ERROR
        listed = await _read_message(stdout)
        assert listed["id"] == 2
        assert [t["name"] for t in listed["result"]["tools"]] == ["book_flight"]
        assert process.stdin is not None
        await process.stdin.aclose()
        with anyio.fail_after(30):
            assert await process.wait() == 0


class _Chunks:
    """A binary stream handing out given chunks (what ``StdinLines`` reads with ``read1``)."""

    def __init__(self, *chunks: bytes) -> None:
        self._chunks = list(chunks)

    def read1(self, size: int) -> bytes:
        return self._chunks.pop(0) if self._chunks else b""


async def test_a_line_longer_than_the_limit_is_skipped_without_being_kept() -> None:
    valid = b'{"jsonrpc":"2.0","id":1,"method":"ping"}'
    reader = StdinLines(_Chunks(b"x" * 40, b"y" * 40, b"z\n" + valid + b"\n"), max_line=64)  # type: ignore[arg-type]
    await reader.aclose()  # no transport to answer on
    with anyio.fail_after(5):
        messages = [message async for message in reader.messages()]
    assert messages == [types.jsonrpc_message_adapter.validate_json(valid)]
    assert reader.refused == 1


# --- start-up refusals -----------------------------------------------------------------------


def _run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        serve_command(*args),
        capture_output=True,
        text=True,
        timeout=60,
        env=_env(),
        stdin=subprocess.DEVNULL,
    )


def test_a_tool_name_clash_is_refused_at_startup_naming_both_files(tmp_path: Path) -> None:
    first = write_agent(tmp_path / "a.agent.yaml", name="One")
    second = write_agent(tmp_path / "b.agent.yaml", name="Two")
    done = _run(str(first), str(second))
    assert done.returncode == 2
    assert str(first) in done.stderr and str(second) in done.stderr
    assert "--prefix" in done.stderr
    assert done.stdout == ""


def test_a_broken_agent_file_is_refused_at_startup_with_where(tmp_path: Path) -> None:
    path = tmp_path / "broken.agent.yaml"
    path.write_text("metadata:\n  tools: [\n", encoding="utf-8")
    done = _run(str(path))
    assert done.returncode == 2
    assert "cannot load the agent file" in done.stderr and str(path) in done.stderr
    assert done.stdout == ""


def test_a_token_without_http_is_a_usage_error(tmp_path: Path) -> None:
    path = write_agent(tmp_path / "a.agent.yaml", tools=[book_tool()])
    done = _run(str(path), "--token", "abc")
    assert done.returncode == 2
    assert "--token only applies with --http" in done.stderr


async def test_stdin_that_is_a_regular_file_is_read_too(tmp_path: Path) -> None:
    # The event loop serves only pipes (see _server_stdio); `serve < requests.jsonl` reads the
    # file through a thread instead.
    valid = [json.dumps(_INIT), '{"jsonrpc":"2.0","id":2,"method":"tools/list"}']
    requests = tmp_path / "requests.jsonl"
    requests.write_text(f"{valid[0]}\n{{not json\n{valid[1]}")  # the last line without newline
    with requests.open("rb") as stdin:
        reader = StdinLines(stdin)
        await reader.aclose()  # no transport to answer refusals on
        with anyio.fail_after(5):
            messages = [message async for message in reader.messages()]
    assert messages == [types.jsonrpc_message_adapter.validate_json(line) for line in valid]
    assert reader.refused == 1


# --- end of input, whatever stdin is --------------------------------------------------------
# nohup, systemd and CI attach /dev/null; inetd hands over a socket; a person types at a
# terminal. End of input ends the server with status 0, whatever stdin is.


def _ended(process: subprocess.Popen[bytes]) -> tuple[int, bytes]:
    """The exit status (within 30 s) and stdout of a server whose input has ended."""
    try:
        stdout, stderr = process.communicate(timeout=30)
    except subprocess.TimeoutExpired:
        process.kill()
        process.communicate(timeout=30)
        pytest.fail("the server did not end within 30 s of the end of its input")
    assert "Traceback" not in stderr.decode(), stderr.decode()
    return process.returncode, stdout or b""


def _serve_with(
    path: Path,
    stdin: Any,
    stdout: Any = subprocess.PIPE,
    preexec_fn: Callable[[], None] | None = None,
) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        serve_command(str(path), "--no-history"),
        stdin=stdin,
        stdout=stdout,
        stderr=subprocess.PIPE,
        env=_env(),
        preexec_fn=preexec_fn,
    )


def test_stdin_that_is_dev_null_ends_the_server(tmp_path: Path) -> None:
    path = write_agent(tmp_path / "a.agent.yaml")
    code, _ = _ended(_serve_with(path, stdin=subprocess.DEVNULL))
    assert code == 0


def test_a_closed_stdin_ends_the_server(tmp_path: Path) -> None:
    path = write_agent(tmp_path / "a.agent.yaml")
    code, _ = _ended(_serve_with(path, stdin=None, preexec_fn=lambda: os.close(0)))
    assert code == 0


def test_stdin_that_is_a_file_is_answered_then_ends_the_server(tmp_path: Path) -> None:
    path = write_agent(tmp_path / "a.agent.yaml")
    requests = tmp_path / "requests.jsonl"
    requests.write_bytes(json.dumps(_INIT).encode() + b"\n{not json\n")
    with requests.open("rb") as stdin:
        code, stdout = _ended(_serve_with(path, stdin=stdin))
    assert code == 0
    answers = [json.loads(line) for line in stdout.splitlines()]
    assert sorted(str(a["id"]) for a in answers) == ["1", "None"]


def test_stdin_that_is_a_socket_is_served_and_its_end_ends_the_server(tmp_path: Path) -> None:
    # inetd style: one socket is both stdin and stdout.
    path = write_agent(tmp_path / "a.agent.yaml")
    client, server = socket.socketpair()
    with client, server:
        process = _serve_with(path, stdin=server, stdout=server)
        server.close()
        client.sendall(json.dumps(_INIT).encode() + b"\n")
        client.settimeout(30)
        received = client.recv(65536)
        client.shutdown(socket.SHUT_WR)
        code, _ = _ended(process)
    assert code == 0
    assert json.loads(received.splitlines()[0])["result"]["serverInfo"]["name"] == "Travel Desk"


def test_stdin_that_is_a_terminal_ends_the_server_on_end_of_file(tmp_path: Path) -> None:
    path = write_agent(tmp_path / "a.agent.yaml")
    terminal, stdin = pty.openpty()
    try:
        process = _serve_with(path, stdin=stdin)
        os.close(stdin)
        os.write(terminal, json.dumps(_INIT).encode() + b"\n")
        os.write(terminal, b"\x04")  # Ctrl-D at the start of a line: end of file
        code, stdout = _ended(process)
    finally:
        os.close(terminal)
    assert code == 0
    assert json.loads(stdout.splitlines()[0])["result"]["serverInfo"]["name"] == "Travel Desk"


def test_a_client_that_closes_stdout_ends_the_server_with_one_line(tmp_path: Path) -> None:
    path = write_agent(tmp_path / "a.agent.yaml")
    process = subprocess.Popen(
        serve_command(str(path), "--no-history"),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=_env(),
    )
    assert process.stdin is not None and process.stdout is not None
    try:
        process.stdin.write(json.dumps(_INIT).encode() + b"\n")
        process.stdin.flush()
        assert json.loads(process.stdout.readline())["id"] == 1
        process.stdout.close()  # the client stops reading; the next answer cannot be written
        process.stdin.write(b'{"jsonrpc":"2.0","id":2,"method":"tools/list"}\n')
        process.stdin.flush()
        assert process.wait(timeout=30) == 0
    finally:
        process.kill()
        process.wait(timeout=30)
    assert process.stderr is not None
    stderr = process.stderr.read().decode()
    assert "the client closed the server's stdout; stopping" in stderr
    assert "Traceback" not in stderr
