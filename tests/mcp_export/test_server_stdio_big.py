"""A big request over stdio does not hold up the others: ``metaagent serve`` in a subprocess.

The request is parsed once, its arguments checked in a worker thread when they are big, and its
texts redacted in linear time; a ping written right after it is answered at once (a generous
bound here; the figures are in docs/reference/benchmarks.md).
"""

from __future__ import annotations

import json
import os
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest

from tests.fakes._script import text
from tests.fakes.mcp_clients import (
    book_tool,
    serve_command,
    start_raw_session,
    tool_call_request,
    write_agent,
)
from tests.fakes.openai_server import FakeOpenAIServer

PARAMETERS = {
    "type": "object",
    "properties": {
        "destination": {"type": "string"},
        "stops": {"type": "array", "items": {"type": "string", "minLength": 1}},
    },
    "required": ["destination"],
}


def _wait_for(arrived: dict[Any, float], key: Any, seconds: float) -> float:
    deadline = time.monotonic() + seconds
    while key not in arrived:
        if time.monotonic() > deadline:
            pytest.fail(f"no answer to request {key} within {seconds} s")
        time.sleep(0.01)
    return arrived[key]


@pytest.mark.parametrize(
    "arguments",
    [
        pytest.param({"destination": "x" * 20_000_000}, id="a 20 MB string"),
        pytest.param({"destination": "Oslo", "stops": ["CPH"] * 300_000}, id="300 000 strings"),
    ],
)
def test_a_ping_right_after_a_big_call_is_answered_at_once(
    tmp_path: Path, metaagent_home: Path, arguments: dict[str, Any]
) -> None:
    with FakeOpenAIServer([text("Booked.")]) as model:
        tool = book_tool(parameters=PARAMETERS, prompt="Fly to {destination} via {stops}")
        path = write_agent(tmp_path / "a.agent.yaml", base_url=model.base_url, tools=[tool])
        env = {k: v for k, v in os.environ.items() if k != "OPENAI_API_KEY"}
        process = subprocess.Popen(
            serve_command(str(path)),  # history on: every text of the call is recorded
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=env,
        )
        assert process.stdin is not None and process.stdout is not None
        try:
            arrived = start_raw_session(process, "big")
            _wait_for(arrived, 1, 60)
            call = tool_call_request(2, "book_flight", arguments)
            process.stdin.write(json.dumps(call).encode() + b"\n")
            process.stdin.flush()
            written = time.monotonic()
            process.stdin.write(b'{"jsonrpc":"2.0","id":3,"method":"ping"}\n')
            process.stdin.flush()
            pinged = _wait_for(arrived, 3, 120) - written
            _wait_for(arrived, 2, 120)
            process.stdin.close()
            assert process.wait(timeout=60) == 0
        finally:
            process.kill()
            process.wait(timeout=30)
    # Without the care above the ping waited 4 s (20 MB; 6 to 10 s while redaction scanned it
    # slowly) and 12 s (300 000 strings).
    assert pinged < 3, f"the ping waited {pinged:.2f} s"
