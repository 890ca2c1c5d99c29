"""Two served instances behind a loopback load balancer, on one PostgreSQL store.

Run: ``.venv/bin/python bench/two_instances.py [--size 256] [--reps 3]
[--eras 2025-11-25,2026-07-28]``. Prints a table; exits 0 (1 when the goal is missed). Not a
test: the figures depend on the machine. Needs Debian's ``postgresql`` and ``nginx``.

What runs, all on this machine:

- a throwaway PostgreSQL cluster (``tests/fakes/postgres.py``), one schema for the store;
- the model: ``bench/_async_model.py`` waiting 1 s before each answer;
- two ``metaagent serve AGENT --http 127.0.0.1:0 --stateless --store postgresql://…`` processes
  on the benchmark agent (``server_call_overhead.write_agent``);
- nginx in front of them, round robin, responses unbuffered (``bench/_balancer.py``);
- the official ``mcp.Client`` through the balancer, ``SIZE`` ``tools/call`` requests started
  together, each answer checked to be its own request's (a lost or mixed-up call fails the run).

In the same run, for comparison: two bare mcp SDK servers (``bench/_bare_model_server.py
--stateless``, the same model request with plain aiohttp, no history) behind their own nginx, and
one of ours on the default SQLite store, asked directly. Also reported: how many calls each of our
instances answered (its ``/metrics``), and the CPU per call of the servers and of this process,
the client (``/proc/PID/stat``); everything shares this machine's cores. The three take turns:
each round runs a batch on each (the order rotating from one round to the next; the first round
opens the connections and is not counted), and the two instances ÷ the two bare servers is taken
round by round, reported as the median (min–max).

Goal: 256 concurrent calls with a 1 s model: batch ≤ 1.3 s, no call lost.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import statistics
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
BENCH = REPO / "bench"
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(BENCH))

from _async_model import AsyncModelProcess  # noqa: E402
from _balancer import balancer  # noqa: E402
from _http_servers import http_process  # noqa: E402
from _proc import cpu_seconds, raise_file_limit  # noqa: E402
from server_call_overhead import write_agent  # noqa: E402
from server_concurrency_wide import _batch, _unlimited_http  # noqa: E402

MODEL_DELAY = 1.0
GOAL_SECONDS = 1.3
ERAS = {"2025-11-25": "legacy", "2026-07-28": "auto"}
COUNTED = 'metaagent_tool_calls_total{outcome="ok",tool="book_flight"}'


async def _served_calls(http: Any, url: str) -> int:
    """How many calls an instance answered, from its /metrics."""
    response = await http.get(url.removesuffix("/mcp") + "/metrics")
    for line in response.text.splitlines():
        if line.startswith(COUNTED):
            return int(float(line.split()[-1]))
    return 0


@dataclass
class _Target:
    label: str
    url: str
    pids: list[int]
    instances: list[str]
    found: dict[str, Any] = field(default_factory=dict)


async def _run(targets: list[_Target], mode: str, size: int, reps: int) -> None:
    """``reps`` + 1 rounds of a batch on each target, the order rotating between rounds (the
    first round opens the connections and is not counted)."""
    import httpx2
    from mcp import Client
    from mcp.client.streamable_http import streamable_http_client

    async with contextlib.AsyncExitStack() as stack:
        probe = await stack.enter_async_context(httpx2.AsyncClient(timeout=10))
        clients = []
        for target in targets:
            http_client = await stack.enter_async_context(_unlimited_http())
            client = await stack.enter_async_context(
                Client(streamable_http_client(target.url, http_client=http_client), mode=mode)
            )
            await client.list_tools()
            clients.append(client)
            target.found = {"seconds": [], "cpu_ms": [], "client_ms": [], "spread": []}
            target.found["before"] = [await _served_calls(probe, u) for u in target.instances]
        order = list(zip(targets, clients, strict=True))
        for rep in range(reps + 1):
            shift = rep % len(order)
            for target, client in order[shift:] + order[:shift]:
                cpu = sum(cpu_seconds(pid) for pid in target.pids)
                own = cpu_seconds(os.getpid())
                elapsed = await _batch(client, size, f"{target.label}-{mode}-r{rep}")
                if rep:
                    found = target.found
                    found["seconds"].append(elapsed)
                    spent = sum(cpu_seconds(pid) for pid in target.pids) - cpu
                    found["cpu_ms"].append(spent / size * 1000)
                    found["client_ms"].append((cpu_seconds(os.getpid()) - own) / size * 1000)
        for target in targets:
            after = [await _served_calls(probe, u) for u in target.instances]
            before = target.found.pop("before")
            target.found["spread"] = [a - b for a, b in zip(after, before, strict=True)]


def _line(label: str, era: str, found: dict[str, Any], size: int, reps: int) -> str:
    secs = found["seconds"]
    spread = "/".join(str(n) for n in found["spread"]) or "—"
    expected = size * (reps + 1)
    return (
        f"  {label:<34}{era:<12}{statistics.median(secs):>8.2f} s "
        f"({min(secs):.2f}–{max(secs):.2f}){statistics.median(found['cpu_ms']):>10.2f} ms"
        f"{statistics.median(found['client_ms']):>10.2f} ms   {spread} of {expected}"
    )


async def _main(size: int, reps: int, eras: list[str]) -> int:
    from tests.fakes.postgres import PostgresCluster

    raise_file_limit()
    model = AsyncModelProcess(MODEL_DELAY)
    cluster = PostgresCluster()
    worst = 0.0
    try:
        with tempfile.TemporaryDirectory(prefix="bench-two-") as tmp:
            folder = Path(tmp)
            agent = write_agent(folder, model.base_url)
            store = cluster.fresh_store()
            serve = [sys.executable, "-m", "mcp_export", "serve", str(agent), "--http"]
            with contextlib.ExitStack() as stack:
                shared: list[tuple[str, int]] = []
                for n in range(2):
                    env = dict(os.environ, METAAGENT_HOME=str(folder / f"home-{n}"))
                    command = [*serve, "127.0.0.1:0", "--stateless", "--store", store]
                    shared.append(stack.enter_context(http_process(command, env, ours=True)))
                upstreams = [u.removeprefix("http://").removesuffix("/mcp") for u, _ in shared]
                front, _ = stack.enter_context(balancer(upstreams))
                bare_command = [
                    sys.executable,
                    str(BENCH / "_bare_model_server.py"),
                    model.base_url,
                    *("--http", "0", "--stateless"),
                ]
                bare = [
                    stack.enter_context(http_process(bare_command, dict(os.environ), ours=False))
                    for _ in range(2)
                ]
                bare_ups = [u.removeprefix("http://").removesuffix("/mcp") for u, _ in bare]
                bare_front, _ = stack.enter_context(balancer(bare_ups))
                env = dict(os.environ, METAAGENT_HOME=str(folder / "home-single"))
                single = stack.enter_context(http_process([*serve, "127.0.0.1:0"], env, ours=True))
                print(
                    f"{size} concurrent calls, model {MODEL_DELAY:.0f} s, median of {reps} "
                    "(range); CPU per call of the servers and of the client; calls each of "
                    "ours answered"
                )
                print(f"  {'':<34}{'era':<12}{'batch':>8}   {'':<12}{'servers':>10}{'client':>13}")
                for era in eras:
                    targets = [
                        _Target(
                            "two",
                            f"{front}/mcp",
                            [pid for _, pid in shared],
                            [u for u, _ in shared],
                        ),
                        _Target("bare", f"{bare_front}/mcp", [p for _, p in bare], []),
                        _Target("one", single[0], [single[1]], [single[0]]),
                    ]
                    await _run(targets, ERAS[era], size, reps)
                    two, floor, one = (t.found for t in targets)
                    print(_line("two instances, nginx, PostgreSQL", era, two, size, reps))
                    print(_line("two bare SDK servers, nginx", era, floor, size, reps))
                    print(_line("one instance, SQLite (direct)", era, one, size, reps))
                    ratios = [a / b for a, b in zip(two["seconds"], floor["seconds"], strict=True)]
                    print(
                        f"  two instances ÷ two bare, paired by round: "
                        f"{statistics.median(ratios):.2f} ({min(ratios):.2f}–{max(ratios):.2f})"
                    )
                    worst = max(worst, statistics.median(two["seconds"]))
    finally:
        cluster.stop()
        model.stop()
    verdict = "✔" if worst <= GOAL_SECONDS else "missed"
    print(f"goal: two instances ≤ {GOAL_SECONDS} s at {size} calls: {worst:.2f} s {verdict}")
    return 0 if worst <= GOAL_SECONDS else 1


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=int, default=256)
    parser.add_argument("--reps", type=int, default=3)
    parser.add_argument("--eras", default=",".join(ERAS))
    args = parser.parse_args()
    import anyio

    started = time.perf_counter()
    code = anyio.run(_main, args.size, args.reps, args.eras.split(","))
    print(f"({time.perf_counter() - started:.0f} s)")
    return int(code)


if __name__ == "__main__":
    sys.exit(main())
