"""CPU per served call: the server process's CPU time per ``tools/call``, ours against a bare one.

Run: ``.venv/bin/python bench/server_call_cpu.py [--calls 400] [--reps 7] [--concurrency 1]
[--eras 2025-11-25,2026-07-28] [--transport stdio|http] [--variants …] [--before DIR]
[--profile DIR]``. Prints a table; exits 0 (1 when
the goal is missed). Not a test: the figures depend on the machine.

The servers, all over stdio (or all over streamable HTTP with ``--transport http``: ours with
``--http 127.0.0.1:0``, the bare one with ``--http 0``), all open at once and driven by the
official ``mcp.Client``:

- ours: ``metaagent serve`` on the benchmark agent (``server_call_overhead.write_agent``), with
  the history store (as served by default) and with ``--no-history``;
- bare: ``bench/_bare_model_server.py``, a bare mcp SDK server making the same model request with
  plain aiohttp (``TCPConnector(limit=0)``) and decoding the stream's events.

The model is ``bench/_async_model.py`` answering at once, in its own process. A block sends
``--calls`` calls to one server (``--concurrency`` at a time) and reads the server process's user
+ system CPU time before and after (``/proc/PID/stat``, all threads; clock ticks of 10 ms, so a
block of 400 calls is read to about 1 %). A repetition runs, for each server of ours in turn (the
order rotates from one repetition to the next), a block of the bare server and then one of that
server: each ratio is taken against the bare block run just before it, so a slow minute on a
shared machine weighs on both sides of it. A warm-up block per server comes first. The figures are
CPU milliseconds per call, median (min–max) over the blocks, and the median (min–max) of the
paired ratios; then the same CPU split between each process's main thread and its other threads
(``/proc/PID/task``: ours' history writer, the bare server's stdio worker threads).

``--variants no-log,no-redact+no-log,…``: also ours with parts of the history store switched off
(``bench/_patched_serve.py`` names the patches), each its own server: what each part costs.
Every server of ours has its own history database.

``--before DIR``: also ours (history on) run from another source tree (``git archive REV | tar -x
-C DIR``): the code before a change, in the same run, paired with the bare server like the others.

``--profile DIR``: afterwards, bare and ours (history on and off, the last era) each serve
``--calls`` × 5 more calls while ``_proc.sampled`` samples them: py-spy's Python stacks
(``DIR/bare.pyspy``, ``DIR/ours-on.pyspy``, ``DIR/ours-off.pyspy``: rank them with
``bench/_stacks.py``) and, where ``perf`` is installed, their on-CPU time (``DIR/*.perf``:
``perf report -i DIR/ours-on.perf --sort tid,dso``); ``DIR/*.calls`` holds the calls and the CPU
seconds they took.

Goal: ours (history on) ≤ 1.15 × bare, in every era run.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import statistics
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
BENCH = REPO / "bench"
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(BENCH))

from _async_model import AsyncModelProcess  # noqa: E402
from _http_servers import http_process  # noqa: E402
from _proc import children, cpu_seconds, raise_file_limit, sampled, thread_seconds  # noqa: E402
from server_call_overhead import serve_params, write_agent  # noqa: E402

GOAL_RATIO = 1.15
ERAS = {"2025-11-25": "legacy", "2026-07-28": "auto"}


@dataclass
class Served:
    label: str
    era: str
    client: Any
    pid: int
    cpu_ms: list[float]
    ratios: list[float]
    threads: dict[str, list[float]]
    """CPU ms per call of the main thread and of the others, one value per block."""
    """This server's CPU per call ÷ the bare server's, each block against the bare block run just
    before it (same era)."""


async def _block(client: Any, calls: int, concurrency: int) -> None:
    import anyio

    async def worker(first: int) -> None:
        for index in range(first, calls, concurrency):
            result = await client.call_tool("book_flight", {"destination": f"d{index}"})
            assert not result.is_error, result

    async with anyio.create_task_group() as group:
        for first in range(concurrency):
            group.start_soon(worker, first)


async def _profile(target: Served, directory: Path, calls: int, concurrency: int) -> None:
    """Sample ``target`` (``_proc.sampled``) while it serves ``calls`` calls; writes the calls and
    the CPU seconds they took to ``DIR/NAME.calls``."""
    import anyio

    name = target.label.replace("ours, history ", "ours-").replace(", ", "-")
    async with sampled(target.pid, directory / name):
        cpu = cpu_seconds(target.pid)
        await _block(target.client, calls, concurrency)
        spent = cpu_seconds(target.pid) - cpu
    await anyio.Path(directory / f"{name}.calls").write_text(f"{calls} {spent:.3f}\n")


async def _measure(
    base_url: str,
    agent: Path,
    home: Path,
    eras: list[str],
    calls: int,
    reps: int,
    concurrency: int,
    profile: Path | None,
    variants: list[str],
    transport: str,
    before: Path | None,
) -> list[Served]:
    from mcp import Client
    from mcp.client.stdio import StdioServerParameters
    from mcp.client.streamable_http import streamable_http_client

    bare = StdioServerParameters(
        command=sys.executable,
        args=[str(BENCH / "_bare_model_server.py"), base_url],
        cwd=str(REPO),
    )
    launched = {
        "bare": bare,
        "ours, history on": serve_params(agent, home / "on"),
        "ours, history off": serve_params(agent, home / "off", "--no-history"),
    }
    for variant in variants:
        params = serve_params(agent, home / variant)
        params.args = [str(BENCH / "_patched_serve.py"), variant, *params.args[2:]]
        launched[f"ours, {variant}"] = params
    if before is not None:
        params = serve_params(agent, home / "before")
        params.cwd = str(before)
        assert params.env is not None
        params.env["PYTHONPATH"] = str(before)
        launched["ours before, history on"] = params
    async with contextlib.AsyncExitStack() as stack:
        served: list[Served] = []
        for era in eras:
            for label, params in launched.items():
                if transport == "stdio":
                    found = set(children())
                    client = await stack.enter_async_context(Client(params, mode=ERAS[era]))
                    (pid,) = set(children()) - found
                else:
                    ours = label != "bare"
                    command = [params.command, *params.args]
                    command += ["--http", "127.0.0.1:0" if ours else "0"]
                    env = dict(params.env or os.environ)
                    url, pid = stack.enter_context(
                        http_process(command, env, ours=ours, cwd=Path(params.cwd or REPO))
                    )
                    client = await stack.enter_async_context(
                        Client(streamable_http_client(url), mode=ERAS[era])
                    )
                await client.list_tools()
                served.append(Served(label, era, client, pid, [], [], {}))
        for one in served:
            await _block(one.client, calls, concurrency)

        async def block(one: Served) -> float:
            cpu, threads = cpu_seconds(one.pid), thread_seconds(one.pid)
            await _block(one.client, calls, concurrency)
            spent = (cpu_seconds(one.pid) - cpu) / calls * 1000
            one.cpu_ms.append(spent)
            for name, seconds in thread_seconds(one.pid).items():
                share = (seconds - threads.get(name, 0.0)) / calls * 1000
                one.threads.setdefault(name, []).append(share)
            return spent

        others = [s for s in served if s.label != "bare"]
        bares = {s.era: s for s in served if s.label == "bare"}
        for rep in range(reps):
            shift = rep % len(others)
            for one in others[shift:] + others[:shift]:
                paired = await block(bares[one.era])
                one.ratios.append(await block(one) / paired)
        if profile is not None:
            for label in ("bare", "ours, history on", "ours, history off"):
                target = next(s for s in reversed(served) if s.label == label)
                await _profile(target, profile, calls * 5, concurrency)
        return served


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=400)
    parser.add_argument("--reps", type=int, default=7)
    parser.add_argument("--concurrency", type=int, default=1)
    parser.add_argument("--eras", default=",".join(ERAS))
    parser.add_argument("--profile", type=Path)
    parser.add_argument("--variants", default="")
    parser.add_argument("--transport", choices=("stdio", "http"), default="stdio")
    parser.add_argument("--before", type=Path, metavar="DIR")
    args = parser.parse_args()
    import anyio

    raise_file_limit()
    if args.profile is not None:
        args.profile.mkdir(parents=True, exist_ok=True)
    model = AsyncModelProcess(0.0)
    try:
        with tempfile.TemporaryDirectory() as tmp:
            agent = write_agent(Path(tmp), model.base_url)
            served = anyio.run(
                _measure,
                model.base_url,
                agent,
                Path(tmp) / "home",
                args.eras.split(","),
                args.calls,
                args.reps,
                args.concurrency,
                args.profile,
                [v for v in args.variants.split(",") if v],
                args.transport,
                args.before,
            )
    finally:
        model.stop()

    print(
        f"server CPU per served call, {args.transport}, instant model: {args.calls} calls a block, "
        f"{args.concurrency} at a time; median (min–max) of {args.reps} blocks"
    )
    width = max(34, *(len(f"{s.era}, {s.label}") + 2 for s in served))
    print(f"  {'':<{width}}{'CPU ms/call':<22}{'÷ bare (min–max)':<20}")
    worst = 0.0
    for era in args.eras.split(","):
        rows = [s for s in served if s.era == era]
        for one in rows:
            ratios = one.ratios or [1.0]
            ratio = statistics.median(ratios)
            spread = (
                f"{statistics.median(one.cpu_ms):.2f} ({min(one.cpu_ms):.2f}–{max(one.cpu_ms):.2f})"
            )
            print(
                f"  {era + ', ' + one.label:<{width}}{spread:<22}"
                f"{ratio:.2f} ({min(ratios):.2f}–{max(ratios):.2f})"
            )
            if one.label == "ours, history on":
                worst = max(worst, ratio)
    print("\nby thread: CPU ms per call, median of the blocks")
    for one in served:
        blocks = len(one.cpu_ms)
        shares = {n: statistics.median(v) for n, v in one.threads.items() if len(v) == blocks}
        text = ", ".join(f"{n} {v:.2f}" for n, v in sorted(shares.items()))
        print(f"  {one.era + ', ' + one.label:<{width}}{text}")
    verdict = "met" if worst <= GOAL_RATIO else "MISSED"
    print(f"goal: ours ≤ {GOAL_RATIO} × bare ({verdict}: worst ratio of medians {worst:.2f})")
    if args.profile is not None:
        print(f"profiles of bare and ours: {args.profile} (rank them: bench/_stacks.py)")
    return 0 if worst <= GOAL_RATIO else 1


if __name__ == "__main__":
    sys.exit(main())
