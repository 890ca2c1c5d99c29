"""What a cached answer costs the server: a hit against a miss of the same tool, interleaved.

Run: ``.venv/bin/python bench/cache_hit.py [--pairs 300] [--store sqlite|postgresql://…]``.
Prints medians, p90s and the ratio's spread; exits 0 (1 when the goal is missed). Not a test:
the figures depend on the machine.

One in-process ``AgentServer`` with its history in a fresh SQLite file (or the PostgreSQL
store given), the official ``mcp.Client`` in-process, the model ``bench/_async_model.py``
answering at once (0 ms) in its own process. ``book_flight`` declares ``cache: {ttlSeconds:
600}``. Each pair is a miss (a destination not asked before: validated, filled, the model asked,
the answer recorded and kept) and a hit (the destination of the warm-up call: the answer read
from the cache and recorded), in alternating order (``bench/_paired.py``). The time of each is
the server's own: the increase of the ``metaagent_tool_call_duration_seconds`` sum of the
server's metrics (from the call's arrival in the server to its answer), not the client's round
trip.

Goal: a hit's median ≤ 2 ms of server time.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
BENCH = REPO / "bench"
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(BENCH))

from _async_model import AsyncModelProcess  # noqa: E402
from _paired import paired_ratios, paired_samples  # noqa: E402

GOAL_MS = 2.0

AGENT = """\
metadata:
  name: Bench Desk
  version: 1.0.0
  description: Benchmarks cached answers.
  tools:
    - name: book_flight
      description: Books a flight.
      parameters:
        type: object
        properties:
          destination: {{type: string}}
          passengers: {{type: integer, minimum: 1, default: 1}}
        required: [destination]
      prompt: Book a flight to {{destination}} for {{passengers}} passenger(s).
      cache: {{ttlSeconds: 600}}
settings:
  model: openai:bench-model
systemPrompt: You are a travel agent.
providers:
  openai:
    OPENAI_API_KEY: sk-bench
    OPENAI_BASE_URL: {base_url}
"""


def _p90(values: list[float]) -> float:
    return statistics.quantiles(values, n=10, method="inclusive")[-1]


async def _main(pairs: int, store: str | None) -> int:
    from mcp import Client

    from mcp_export.server.agent_server import AgentServer, load_served_agents
    from mcp_export.server.cache import CACHE_META
    from mcp_export.server.ops import ServerMetrics

    model = AsyncModelProcess(0.0)
    try:
        with tempfile.TemporaryDirectory() as tmp:
            path = Path(tmp) / "bench.agent.yaml"
            path.write_text(AGENT.format(base_url=model.base_url), encoding="utf-8")
            history = store or str(Path(tmp) / "history.db")
            served = AgentServer(load_served_agents([path]), history=history)
            async with served, Client(served.server) as client:
                metrics = ServerMetrics(served.catalogue)
                served.metrics = metrics

                def total() -> float:
                    value = metrics.registry.get_sample_value(
                        "metaagent_tool_call_duration_seconds_sum", {"tool": "book_flight"}
                    )
                    return value or 0.0

                count = 0

                async def call(destination: str, hit: bool) -> float:
                    before = total()
                    result = await client.call_tool("book_flight", {"destination": destination})
                    assert not result.is_error, result
                    assert (CACHE_META in (result.meta or {})) == hit, destination
                    return (total() - before) * 1000

                async def miss() -> float:
                    nonlocal count
                    count += 1
                    return await call(f"City {count}", False)

                async def hit() -> float:
                    return await call("Oslo", True)

                await call("Oslo", False)
                misses, hits = await paired_samples(pairs, miss, hit, warm_up=20)
    finally:
        model.stop()
    spread = paired_ratios(hits, misses)
    where = "PostgreSQL" if store else "SQLite"
    print(f"cache hit vs miss, server time, {pairs} interleaved pairs, history in {where}")
    print(f"  miss (0 ms model): median {statistics.median(misses):.3f} ms, p90 {_p90(misses):.3f}")
    print(f"  hit:               median {statistics.median(hits):.3f} ms, p90 {_p90(hits):.3f}")
    print(f"  hit ÷ miss: {spread}")
    ok = statistics.median(hits) <= GOAL_MS
    print(f"  goal: hit median ≤ {GOAL_MS} ms: {'met' if ok else 'MISSED'}")
    return 0 if ok else 1


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pairs", type=int, default=300)
    parser.add_argument("--store", help="a postgresql:// history store (default: SQLite file)")
    args = parser.parse_args()
    return asyncio.run(_main(args.pairs, args.store))


if __name__ == "__main__":
    raise SystemExit(main())
