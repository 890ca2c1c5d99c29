"""What the per-caller limits cost a served call: ``--rate-limit``/``--calls-at-once`` on vs off.

Run: ``.venv/bin/python bench/limits_overhead.py [--calls 300]``. Prints the figures; exits 0.
Not a test: the figures depend on the machine.

Two ``metaagent serve --http 127.0.0.1:0 --no-history`` processes serve the same agent against
the same model (``bench/_async_model.py``, answering at once): one without limits, one with
limits no call reaches (``--rate-limit 1000000/min --calls-at-once 1000``), so every call passes
the limits' middleware (body read, ``tools/call`` found, the caller's table updated) and none is
refused. Each sample is one ``tools/call`` with the official ``mcp.Client`` over streamable HTTP
(protocol 2026-07-28); samples alternate between the two servers (ABAB…, the order flipping each
pair) after 20 warm-up calls each. Prints each server's median and the paired ratio's median,
quartiles and range (``bench/_paired.py``).
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from contextlib import ExitStack
from pathlib import Path

import anyio

REPO = Path(__file__).resolve().parents[1]
BENCH = REPO / "bench"
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(BENCH))

from _async_model import AsyncModelProcess  # noqa: E402
from _http_servers import http_process  # noqa: E402
from _paired import paired_ratios, paired_samples  # noqa: E402
from mcp import Client  # noqa: E402

AGENT = """\
metadata:
  name: Bench Desk
  version: 1.0.0
  description: Benchmarks the served call.
  tools:
    - name: book_flight
      description: Books a flight.
      parameters:
        type: object
        properties:
          destination: {{type: string}}
        required: [destination]
      prompt: "Book a flight to {{destination}}."
settings:
  model: openai:fake-model
providers:
  openai: {{OPENAI_API_KEY: sk-bench, OPENAI_BASE_URL: "{base_url}"}}
"""
LIMITS = ("--rate-limit", "1000000/min", "--calls-at-once", "1000")


async def _measure(plain: str, limited: str, calls: int) -> None:
    async with Client(plain) as bare, Client(limited) as ours:

        def timer(client: Client) -> Callable[[], Awaitable[float]]:
            async def one() -> float:
                started = time.perf_counter()
                result = await client.call_tool("book_flight", {"destination": "Oslo"})
                assert not result.is_error, result
                return time.perf_counter() - started

            return one

        base, mine = await paired_samples(calls, timer(bare), timer(ours), warm_up=20)
    print(f"calls per server: {calls} (interleaved, after 20 warm-up calls each)")
    print(f"without limits: median {statistics.median(base) * 1e3:.2f} ms")
    print(f"with limits:    median {statistics.median(mine) * 1e3:.2f} ms")
    print(f"with ÷ without: {paired_ratios(mine, base)}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=300)
    args = parser.parse_args()
    model = AsyncModelProcess(0.0)
    try:
        with tempfile.TemporaryDirectory() as tmp, ExitStack() as stack:
            agent = Path(tmp) / "bench.agent.yaml"
            agent.write_text(AGENT.format(base_url=model.base_url), encoding="utf-8")
            env = dict(os.environ, METAAGENT_HOME=tmp, PYTHONPATH=str(REPO))
            serve = [sys.executable, "-m", "mcp_export", "serve", str(agent), "--no-history"]
            urls = [
                stack.enter_context(
                    http_process([*serve, "--http", "127.0.0.1:0", *extra], env, ours=True)
                )[0]
                for extra in ((), LIMITS)
            ]
            anyio.run(_measure, urls[0], urls[1], args.calls)
    finally:
        model.stop()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
