"""Concurrent served calls: 64 calls at once against a model that takes 250 ms.

Run: ``.venv/bin/python bench/server_concurrency.py [--calls 64] [--batches 5]``. Prints a
table; exits 0 (1 when the goal is missed). Not a test: the figures depend on the machine.

One ``metaagent serve`` process over stdio, one official ``mcp.Client``, ``--calls`` ``tools/call``
requests started together; the model (``bench/_async_model.py``, asyncio in its own process: the
tests' threaded fake is itself too slow at dozens of requests at once) waits 250 ms before each
answer. Calls that ran one after the other would take 64 × 250 ms; calls that truly
run concurrently take a little over 250 ms. Each batch is timed from the first request to the
last answer, after a warm-up batch; every answer is checked to be the one for its own request.
Goal: batch time ≤ 1.25 × 250 ms, in both protocol eras.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "bench"))

from _async_model import AsyncModelProcess  # noqa: E402
from server_call_overhead import serve_params, write_agent  # noqa: E402

MODEL_DELAY = 0.25
GOAL = 1.25 * MODEL_DELAY


async def _batches(params: Any, mode: str, calls: int, batches: int) -> list[float]:
    import anyio
    import mcp_types as types
    from mcp import Client

    times: list[float] = []
    async with Client(params, mode=mode) as client:
        await client.list_tools()
        for batch in range(batches + 1):
            answers: dict[int, str] = {}

            async def call(
                index: int, batch: int = batch, answers: dict[int, str] = answers
            ) -> None:
                result = await client.call_tool("book_flight", {"destination": f"c{batch}-{index}"})
                block = result.content[0]
                assert not result.is_error and isinstance(block, types.TextContent), result
                answers[index] = block.text

            started = time.perf_counter()
            async with anyio.create_task_group() as group:
                for index in range(calls):
                    group.start_soon(call, index)
            elapsed = time.perf_counter() - started
            for index, answer in answers.items():
                assert f"c{batch}-{index} " in answer, answer
            assert len(answers) == calls
            if batch > 0:  # batch 0 warms the connections
                times.append(elapsed)
    return times


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=64)
    parser.add_argument("--batches", type=int, default=5)
    args = parser.parse_args()
    import anyio

    model = AsyncModelProcess(MODEL_DELAY)
    results: dict[str, list[float]] = {}
    try:
        with tempfile.TemporaryDirectory() as tmp:
            agent = write_agent(Path(tmp), model.base_url)
            params = serve_params(agent, Path(tmp) / "home")
            for mode in ("legacy", "auto"):
                era = "2025-11-25" if mode == "legacy" else "2026-07-28"
                results[era] = anyio.run(_batches, params, mode, args.calls, args.batches)
    finally:
        model.stop()
    print(
        f"{args.calls} concurrent served calls, model answers after {MODEL_DELAY * 1000:.0f} ms "
        f"({args.batches} batches each)"
    )
    print(f"  {'':<14}{'median ms':>10}{'max ms':>10}")
    for era, values in results.items():
        print(f"  {era:<14}{statistics.median(values) * 1000:>10.0f}{max(values) * 1000:>10.0f}")
    worst = max(statistics.median(v) for v in results.values())
    verdict = "met" if worst <= GOAL else "MISSED"
    print(f"goal: batch ≤ {GOAL * 1000:.0f} ms ({verdict}: worst median {worst * 1000:.0f} ms)")
    return 0 if worst <= GOAL else 1


if __name__ == "__main__":
    sys.exit(main())
