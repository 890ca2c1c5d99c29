"""How long a big ``tools/call`` over stdio holds up a ping sent after it.

Run: ``.venv/bin/python bench/server_big_request.py [--rounds 3] [--code DIR]``. Prints a table;
exits 0. Not a test: the figures depend on the machine.

``metaagent serve`` (history on, in a temporary data folder) gets a ``tools/call`` whose
arguments are a 20 MB string, or 300 000 short strings, then a ``ping``: right after the call, or
0.5 s and 1 s later (while the call is still being prepared). Reported: the median seconds from
writing the ping to its answer, and from writing the call to its answer, over the rounds. The
model answers at once (``FakeOpenAIServer``). ``--code DIR`` serves another checkout of the code
(an older commit unpacked with ``git archive``) for a before/after in the same run: its rounds
alternate with this checkout's.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from tests.fakes._script import text  # noqa: E402
from tests.fakes.mcp_clients import (  # noqa: E402
    book_tool,
    start_raw_session,
    tool_call_request,
    write_agent,
)
from tests.fakes.openai_server import FakeOpenAIServer  # noqa: E402

PARAMETERS = {
    "type": "object",
    "properties": {
        "destination": {"type": "string"},
        "stops": {"type": "array", "items": {"type": "string"}},
    },
    "required": ["destination"],
}
CASES: dict[str, dict[str, Any]] = {
    "20 MB string": {"destination": "x" * 20_000_000},
    "300 000 strings": {"destination": "Oslo", "stops": ["CPH"] * 300_000},
}


def _wait(arrived: dict[Any, float], key: Any) -> float:
    deadline = time.monotonic() + 300
    while key not in arrived and time.monotonic() < deadline:
        time.sleep(0.002)
    return arrived.get(key, float("nan"))


def _round(
    code: Path, agent: Path, home: Path, arguments: dict[str, Any], delay: float
) -> tuple[float, float]:
    env = {k: v for k, v in os.environ.items() if k != "OPENAI_API_KEY"}
    env |= {"PYTHONPATH": str(code), "METAAGENT_HOME": str(home)}
    process = subprocess.Popen(
        [sys.executable, "-m", "mcp_export", "serve", str(agent)],
        cwd=code,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        env=env,
    )
    assert process.stdin is not None and process.stdout is not None
    try:
        arrived = start_raw_session(process, "bench")
        _wait(arrived, 1)
        call = tool_call_request(2, "book_flight", arguments)
        process.stdin.write(json.dumps(call).encode() + b"\n")
        process.stdin.flush()
        called = time.monotonic()
        time.sleep(delay)
        process.stdin.write(b'{"jsonrpc":"2.0","id":3,"method":"ping"}\n')
        process.stdin.flush()
        pinged = time.monotonic()
        ping = _wait(arrived, 3) - pinged
        answered = _wait(arrived, 2) - called
        process.stdin.close()
        process.wait(timeout=60)
    finally:
        process.kill()
        process.wait(timeout=30)
    return ping, answered


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--code", type=Path, help="another checkout to measure in the same run")
    args = parser.parse_args()
    codes = {"this": REPO} | ({"other": args.code.resolve()} if args.code else {})
    print(f"{'code':6} {'arguments':16} {'ping after':>10} {'ping waited':>12} {'call took':>10}")
    with (
        tempfile.TemporaryDirectory() as folder,
        FakeOpenAIServer([text("Booked.")] * 10_000) as model,
    ):
        tool = book_tool(parameters=PARAMETERS, prompt="Fly to {destination} via {stops}")
        agent = write_agent(Path(folder) / "a.agent.yaml", base_url=model.base_url, tools=[tool])
        for case, arguments in CASES.items():
            for delay in (0.0, 0.5, 1.0):
                samples: dict[str, list[tuple[float, float]]] = {name: [] for name in codes}
                for index in range(args.rounds):  # ABAB…: the two checkouts alternate
                    for name, code in codes.items():
                        home = Path(folder) / f"home-{name}-{case}-{delay}-{index}"
                        samples[name].append(_round(code, agent, home, arguments, delay))
                for name, pairs in samples.items():
                    ping = statistics.median(p for p, _ in pairs)
                    took = statistics.median(t for _, t in pairs)
                    print(f"{name:6} {case:16} {delay:8.1f} s {ping:10.2f} s {took:8.2f} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
