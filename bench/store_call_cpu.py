"""CPU per served call with the history in PostgreSQL, against the history in SQLite.

Run: ``.venv/bin/python bench/store_call_cpu.py [--sizes 100,1000] [--reps 5] [--concurrency 1]
[--era 2025-11-25]``. Prints a table; exits 0 (1 when the goal is missed). Not a test: the figures
depend on the machine.

Two ``metaagent serve`` processes over stdio on the benchmark agent
(``server_call_overhead.write_agent``), both open at once and driven by the official
``mcp.Client``: one with its default SQLite store (``history.sqlite3`` in its own home), one with
``--store postgresql://…`` on a throwaway PostgreSQL cluster (``tests/fakes/postgres.py``, the
tests' own; started here, stopped at the end). The model is ``bench/_async_model.py`` answering at
once, in its own process. A block sends N calls to one server and reads the server process's user
+ system CPU (``/proc/PID/stat``, all threads). For each size, a repetition runs a SQLite block
and then a PostgreSQL block, back to back (the order alternates between repetitions), and the
ratio is taken within the pair; the figures are the medians over ``--reps`` repetitions. A
warm-up block per server comes first. Only the server's CPU counts: PostgreSQL's own processes
are not the served process's cost.

``--conversation`` makes the tool a conversation tool: a call of one answers only once its rows
are committed (another instance may get the next turn), where a plain tool's rows are written
behind, batched with the calls around them.

Goal: CPU per call with PostgreSQL ≤ 1.2 × with SQLite, at every size.
"""

from __future__ import annotations

import argparse
import contextlib
import statistics
import sys
import tempfile
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
BENCH = REPO / "bench"
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(BENCH))

from _async_model import AsyncModelProcess  # noqa: E402
from _paired import alternated  # noqa: E402
from _proc import children, cpu_seconds, raise_file_limit  # noqa: E402
from server_call_overhead import serve_params, write_agent  # noqa: E402

from tests.fakes.postgres import PostgresCluster  # noqa: E402

GOAL_RATIO = 1.2
ERAS = {"2025-11-25": "legacy", "2026-07-28": "auto"}


@dataclass
class Served:
    label: str
    client: Any
    pid: int
    cpu_ms: dict[int, list[float]] = field(default_factory=dict)


async def _block(client: Any, calls: int, concurrency: int) -> None:
    import anyio

    async def worker(first: int) -> None:
        for index in range(first, calls, concurrency):
            result = await client.call_tool("book_flight", {"destination": f"d{index}"})
            assert not result.is_error, result

    async with anyio.create_task_group() as group:
        for first in range(concurrency):
            group.start_soon(worker, first)


async def _measure(
    agent: Path, home: Path, url: str, era: str, sizes: list[int], reps: int, concurrency: int
) -> tuple[Served, Served, dict[int, list[float]]]:
    from mcp import Client

    launched = {
        "sqlite": serve_params(agent, home / "sqlite"),
        "postgresql": serve_params(agent, home / "pg", "--store", url),
    }
    async with contextlib.AsyncExitStack() as stack:
        served: dict[str, Served] = {}
        for label, params in launched.items():
            before = set(children())
            client = await stack.enter_async_context(Client(params, mode=ERAS[era]))
            (pid,) = set(children()) - before
            await client.list_tools()
            served[label] = Served(label, client, pid)
            await _block(client, 50, concurrency)  # warm-up

        async def block(one: Served, calls: int) -> float:
            cpu = cpu_seconds(one.pid)
            await _block(one.client, calls, concurrency)
            spent = (cpu_seconds(one.pid) - cpu) / calls * 1000
            one.cpu_ms.setdefault(calls, []).append(spent)
            return spent

        ratios: dict[int, list[float]] = {}
        sqlite, postgres = served["sqlite"], served["postgresql"]
        for size in sizes:
            for rep in range(reps):
                base, shared = await alternated(
                    rep, partial(block, sqlite, size), partial(block, postgres, size)
                )
                ratios.setdefault(size, []).append(shared / base)
        return sqlite, postgres, ratios


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="100,1000")
    parser.add_argument("--reps", type=int, default=5)
    parser.add_argument("--concurrency", type=int, default=1)
    parser.add_argument("--era", default="2025-11-25", choices=sorted(ERAS))
    parser.add_argument(
        "--conversation",
        action="store_true",
        help="a conversation tool: each call then answers once its rows are in the store",
    )
    args = parser.parse_args()
    import anyio

    raise_file_limit()
    sizes = [int(size) for size in args.sizes.split(",")]
    model = AsyncModelProcess(0.0)
    cluster = PostgresCluster()
    try:
        with tempfile.TemporaryDirectory() as tmp:
            agent = write_agent(Path(tmp), model.base_url)
            if args.conversation:
                text = agent.read_text(encoding="utf-8")
                text = text.replace("      prompt:", "      conversation: true\n      prompt:", 1)
                agent.write_text(text, encoding="utf-8")
            sqlite, postgres, ratios = anyio.run(
                _measure,
                agent,
                Path(tmp) / "home",
                cluster.fresh_store(),
                args.era,
                sizes,
                args.reps,
                args.concurrency,
            )
    finally:
        cluster.stop()
        model.stop()

    print(
        f"server CPU per served call, stdio, instant model, {args.era}, {args.concurrency} at a "
        f"time, {'a conversation tool' if args.conversation else 'a plain tool'}; "
        f"median (min–max) of {args.reps} paired blocks"
    )
    print(f"  {'calls':<8}{'SQLite ms/call':<22}{'PostgreSQL ms/call':<22}{'PG ÷ SQLite':<20}")
    worst = 0.0
    for size in sizes:
        cells = []
        for one in (sqlite, postgres):
            values = one.cpu_ms[size]
            cells.append(f"{statistics.median(values):.2f} ({min(values):.2f}–{max(values):.2f})")
        ratio = statistics.median(ratios[size])
        worst = max(worst, ratio)
        spread = f"{ratio:.2f} ({min(ratios[size]):.2f}–{max(ratios[size]):.2f})"
        print(f"  {size:<8}{cells[0]:<22}{cells[1]:<22}{spread:<20}")
    verdict = "met" if worst <= GOAL_RATIO else "MISSED"
    print(f"goal: PostgreSQL ≤ {GOAL_RATIO} × SQLite ({verdict}: worst median ratio {worst:.2f})")
    return 0 if worst <= GOAL_RATIO else 1


if __name__ == "__main__":
    sys.exit(main())
