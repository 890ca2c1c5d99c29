"""Resident memory of a served agent over many calls: it levels off, against a bare SDK server.

Run: ``.venv/bin/python bench/server_memory.py [--calls 6000] [--every 500] [--era auto]
[--tracemalloc DIR]``. Prints a table; exits 0 (1 when the goal is missed). Not a test: the
figures depend on the machine.

Three servers over stdio, all open at once, each driven by its own official ``mcp.Client``, calls
made one after the other against ``bench/_async_model.py`` answering at once (its own process):

- ours: ``metaagent serve`` on the benchmark agent with the history store (as served by default),
  and with ``--no-history``;
- bare: ``bench/_bare_model_server.py``, a bare mcp SDK server making the same model request with
  plain aiohttp.

The servers take turns (ABCABC…, the order rotating from one step to the next): each step gives
each server its next ``--every`` calls (the first step 200), then reads its resident set size
(``VmRSS`` of its ``/proc`` entry). Per server: the reading after 200 calls, halfway and at the
end, the growth from 200 calls to the end and over the second half, and the second half's slope
in KB per call; then ours ÷ bare, median (min–max) over the readings of the second half.

Goal (ours, history on): growth from 200 calls to ``--calls`` ≤ 5 %, growth over the second half
≤ 1 % (it has levelled off), and under 150 MB.

``--tracemalloc DIR``: the history-on server runs with ``bench/_patched_serve.py tracemalloc``
(much slower) and a snapshot of its allocations is taken halfway and at the end
(``DIR/1.snap``, ``DIR/2.snap``); the 15 places that grew most between them are printed.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import signal
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
from _proc import children  # noqa: E402
from server_call_overhead import serve_params, write_agent  # noqa: E402

GROWTH_GOAL = 0.05
SECOND_HALF_GOAL = 0.01
CEILING_MB = 150.0
FIRST = 200


def rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    raise RuntimeError(f"no VmRSS for process {pid}")


@dataclass
class Served:
    label: str
    client: Any
    pid: int
    readings: list[tuple[int, float]] = field(default_factory=list)

    def at(self, calls: int) -> float:
        """The first reading at or after ``calls`` calls."""
        return next(mb for done, mb in self.readings if done >= calls)

    def growth(self, since: int) -> float:
        first, last = self.at(since), self.readings[-1][1]
        return (last - first) / first

    def slope_kb(self, since: int) -> float:
        """KB per call over the readings from ``since`` calls on (least squares)."""
        points = [(done, mb) for done, mb in self.readings if done >= since]
        if len(points) < 2:
            return 0.0
        slope, _ = statistics.linear_regression([p[0] for p in points], [p[1] for p in points])
        return slope * 1024


def _steps(calls: int, every: int) -> list[int]:
    marks = [FIRST, *range(every, calls + 1, every)]
    return sorted({mark for mark in marks if mark <= calls} | {calls})


async def _snapshot(pid: int, directory: Path, number: int) -> None:
    import anyio

    os.kill(pid, signal.SIGUSR1)
    done = directory / f"{number}.done"
    deadline = time.monotonic() + 120
    while not done.exists():
        if time.monotonic() > deadline:
            raise RuntimeError(f"no snapshot {number} from process {pid} within 120 s")
        await anyio.sleep(0.2)


async def _readings(
    launched: dict[str, Any], mode: str, calls: int, every: int, traced: Path | None
) -> list[Served]:
    import mcp_types as types
    from mcp import Client

    async with contextlib.AsyncExitStack() as stack:
        served: list[Served] = []
        for label, params in launched.items():
            before = set(children())
            client = await stack.enter_async_context(Client(params, mode=mode))
            (pid,) = set(children()) - before
            await client.list_tools()
            served.append(Served(label, client, pid))
        done = 0
        snaps = 0
        for step, mark in enumerate(_steps(calls, every)):
            shift = step % len(served)
            for one in served[shift:] + served[:shift]:
                for index in range(done + 1, mark + 1):
                    result = await one.client.call_tool("book_flight", {"destination": f"c{index}"})
                    block = result.content[0]
                    assert not result.is_error and isinstance(block, types.TextContent), result
                one.readings.append((mark, rss_mb(one.pid)))
            done = mark
            if traced is not None and ((mark >= calls // 2 and snaps == 0) or mark == calls):
                snaps += 1
                await _snapshot(served[0].pid, traced, snaps)
        return served


def _print_growth(directory: Path) -> None:
    import tracemalloc

    first = tracemalloc.Snapshot.load(str(directory / "1.snap"))
    last = tracemalloc.Snapshot.load(str(directory / "2.snap"))
    keep = [tracemalloc.Filter(False, tracemalloc.__file__)]
    diff = last.filter_traces(keep).compare_to(first.filter_traces(keep), "traceback")
    print("\nallocations that grew most from halfway to the end (history on):")
    for stat in diff[:15]:
        print(f"  {stat.size_diff / 1024:+9.1f} KB  {stat.count_diff:+7d} blocks")
        for line in stat.traceback.format(limit=8, most_recent_first=True):
            print(f"      {line}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=6000)
    parser.add_argument("--every", type=int, default=500)
    parser.add_argument("--era", choices=("auto", "legacy"), default="auto")
    parser.add_argument("--tracemalloc", type=Path, metavar="DIR")
    args = parser.parse_args()
    import anyio
    from mcp.client.stdio import StdioServerParameters

    model = AsyncModelProcess(0.0)
    try:
        with tempfile.TemporaryDirectory() as tmp:
            agent = write_agent(Path(tmp), model.base_url)
            home = Path(tmp) / "home"
            on = serve_params(agent, home / "on")
            if args.tracemalloc is not None:
                args.tracemalloc.mkdir(parents=True, exist_ok=True)
                on.args = [str(BENCH / "_patched_serve.py"), "tracemalloc", *on.args[2:]]
                assert on.env is not None
                on.env["BENCH_TRACEMALLOC"] = str(args.tracemalloc.resolve())
            launched = {
                "ours, history on": on,
                "ours, history off": serve_params(agent, home / "off", "--no-history"),
                "bare": StdioServerParameters(
                    command=sys.executable,
                    args=[str(BENCH / "_bare_model_server.py"), model.base_url],
                    cwd=str(REPO),
                ),
            }
            served = anyio.run(
                _readings, launched, args.era, args.calls, args.every, args.tracemalloc
            )
    finally:
        model.stop()
    half = args.calls // 2
    bare = next(s for s in served if s.label == "bare")
    print(
        f"resident memory over {args.calls} sequential calls ({args.era} era), servers taking "
        f"turns every {args.every} calls"
    )
    print(
        f"  {'':<20}{'200':>8}{half:>8}{args.calls:>8}   {'200→end':>8}{'2nd half':>9}"
        f"{'KB/call':>9}   ÷ bare, 2nd half"
    )
    for one in served:
        ratios = [mb / bare.at(done) for done, mb in one.readings if done >= half]
        print(
            f"  {one.label:<20}{one.at(FIRST):>8.1f}{one.at(half):>8.1f}"
            f"{one.readings[-1][1]:>8.1f}   {one.growth(FIRST):>+8.1%}{one.growth(half):>+9.1%}"
            f"{one.slope_kb(half):>9.2f}   {statistics.median(ratios):.2f} "
            f"({min(ratios):.2f}–{max(ratios):.2f})"
        )
    print("  (MB)")
    ours = served[0]
    met = (
        ours.growth(FIRST) <= GROWTH_GOAL
        and ours.growth(half) <= SECOND_HALF_GOAL
        and ours.readings[-1][1] < CEILING_MB
    )
    print(
        f"goal (history on): growth ≤ {GROWTH_GOAL:.0%} from {FIRST} calls, ≤ "
        f"{SECOND_HALF_GOAL:.0%} over the second half, under {CEILING_MB:.0f} MB "
        f"({'met' if met else 'MISSED'})"
    )
    if args.tracemalloc is not None:
        _print_growth(args.tracemalloc)
    return 0 if met else 1


if __name__ == "__main__":
    sys.exit(main())
