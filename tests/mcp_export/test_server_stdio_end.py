"""The end of stdin with requests still being served: ``metaagent serve`` in a subprocess.

A client may write its requests and close stdin at once (``printf … | metaagent serve``, a
script, a batch job); every request read before the end is answered, for up to the shutdown
grace, then the server exits with status 0.
"""

from __future__ import annotations

import json
import os
import subprocess
import time
from pathlib import Path
from typing import Any

import mcp_types as types
import pytest

from tests.fakes._script import text
from tests.fakes.mcp_clients import serve_command, write_agent
from tests.fakes.openai_server import FakeOpenAIServer

ERAS = pytest.mark.parametrize("era", ["2025-11-25", "2026-07-28"])


def _env() -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if k != "OPENAI_API_KEY"}


def _requests(era: str) -> list[dict[str, Any]]:
    """ping (6, the 2025 era has it), tools/list (7) and tools/call (8), opened as ``era`` opens
    a connection."""
    requests: list[dict[str, Any]] = [
        {"jsonrpc": "2.0", "id": 6, "method": "ping"},
        {"jsonrpc": "2.0", "id": 7, "method": "tools/list"},
        {
            "jsonrpc": "2.0",
            "id": 8,
            "method": "tools/call",
            "params": {"name": "book_flight", "arguments": {"destination": "Oslo"}},
        },
    ]
    if era == "2025-11-25":
        opening: list[dict[str, Any]] = [
            {
                "jsonrpc": "2.0",
                "id": 1,
                "method": "initialize",
                "params": {
                    "protocolVersion": era,
                    "capabilities": {},
                    "clientInfo": {"name": "batch", "version": "1"},
                },
            },
            {"jsonrpc": "2.0", "method": "notifications/initialized"},
        ]
        return opening + requests
    meta = {
        types.PROTOCOL_VERSION_META_KEY: era,
        types.CLIENT_INFO_META_KEY: {"name": "batch", "version": "1"},
        types.CLIENT_CAPABILITIES_META_KEY: {},
    }
    for request in requests:
        request["params"] = {**request.get("params", {}), "_meta": meta}
    return requests[1:]


def _serve(path: Path, stdin: Any, *flags: str) -> tuple[int, list[dict[str, Any]], str, float]:
    """Run the server on ``stdin`` to its end: exit status, answers, stderr and seconds taken."""
    started = time.monotonic()
    process = subprocess.Popen(
        serve_command(str(path), "--no-history", *flags),
        stdin=stdin,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=_env(),
    )
    try:
        stdout, stderr = process.communicate(timeout=60)
    except subprocess.TimeoutExpired:
        process.kill()
        process.communicate(timeout=30)
        pytest.fail("the server did not end within 60 s of the end of its input")
    answers = [json.loads(line) for line in stdout.splitlines()]
    return process.returncode, answers, stderr.decode(), time.monotonic() - started


@ERAS
@pytest.mark.parametrize("stdin_kind", ["file", "pipe"])
def test_every_request_read_before_the_end_of_stdin_is_answered(
    tmp_path: Path, era: str, stdin_kind: str
) -> None:
    # The model takes a second: the call is still running when stdin ends.
    with FakeOpenAIServer([text("Booked.").delayed(1.0)]) as model:
        path = write_agent(tmp_path / "a.agent.yaml", base_url=model.base_url)
        lines = b"".join(json.dumps(r).encode() + b"\n" for r in _requests(era))
        requests = tmp_path / "requests.jsonl"
        requests.write_bytes(lines)
        if stdin_kind == "file":
            with requests.open("rb") as stdin:
                code, answers, stderr, _ = _serve(path, stdin)
        else:
            read, write = os.pipe()
            os.write(write, lines)
            os.close(write)
            with os.fdopen(read, "rb") as stdin:
                code, answers, stderr, _ = _serve(path, stdin)
    assert code == 0, stderr
    assert "Traceback" not in stderr
    by_id = {answer["id"]: answer for answer in answers}
    assert sorted(by_id) == ([1, 6, 7, 8] if era == "2025-11-25" else [7, 8])
    assert all("error" not in answer for answer in answers), answers
    assert by_id[8]["result"]["content"][0]["text"] == "Booked."
    assert [t["name"] for t in by_id[7]["result"]["tools"]] == ["book_flight"]


def test_a_call_longer_than_the_grace_is_answered_connection_closed(tmp_path: Path) -> None:
    with FakeOpenAIServer([text("Too late.").delayed(30.0)]) as model:
        path = write_agent(tmp_path / "a.agent.yaml", base_url=model.base_url)
        requests = tmp_path / "requests.jsonl"
        requests.write_bytes(
            b"".join(json.dumps(r).encode() + b"\n" for r in _requests("2025-11-25"))
        )
        with requests.open("rb") as stdin:
            code, answers, stderr, took = _serve(path, stdin, "--shutdown-grace", "1")
    assert code == 0, stderr
    by_id = {answer["id"]: answer for answer in answers}
    assert "result" in by_id[6] and "result" in by_id[7]
    assert by_id[8]["error"]["message"] == "Connection closed"
    assert "stdin ended; 1 request(s) still unanswered after 1 s are cut off" in stderr
    assert took < 20  # the grace, not the model's thirty seconds
