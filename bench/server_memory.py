"""Resident memory of a served agent over 2000 calls: flat after warm-up, and under 150 MB.

Run: ``.venv/bin/python bench/server_memory.py [--calls 2000]``. Prints a table; exits 0 (1 when
the goal is missed). Not a test: the figures depend on the machine.

One ``metaagent serve`` process over stdio (history on, as served by default), one official
``mcp.Client`` (2026-07-28 era), calls made one after the other against an instant local model
(``FakeOpenAIServer`` in its own process). The server's resident set size (``VmRSS`` of its
``/proc`` entry) is read after 200 calls and then every 200 up to ``--calls``. Goal: growth from
the 200-call reading to the last at most 5 %, and the last under 150 MB.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "bench"))

from server_call_overhead import ModelProcess, serve_params, write_agent  # noqa: E402

GROWTH_GOAL = 0.05
CEILING_MB = 150.0
STEP = 200


def rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    raise RuntimeError(f"no VmRSS for process {pid}")


def server_pid() -> int:
    """The served agent: our child whose command line says ``serve``."""
    me = os.getpid()
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
            cmdline = (entry / "cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        parent = int(stat.rsplit(")", 1)[1].split()[1])
        if parent == me and b"serve" in cmdline:
            return int(entry.name)
    raise RuntimeError("the served agent's process was not found")


async def _readings(params: Any, calls: int) -> list[tuple[int, float]]:
    import mcp_types as types
    from mcp import Client

    readings: list[tuple[int, float]] = []
    async with Client(params, mode="auto") as client:
        await client.list_tools()
        pid = server_pid()
        for index in range(1, calls + 1):
            result = await client.call_tool("book_flight", {"destination": f"c{index}"})
            block = result.content[0]
            assert not result.is_error and isinstance(block, types.TextContent), result
            if index % STEP == 0:
                readings.append((index, rss_mb(pid)))
    return readings


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=2000)
    args = parser.parse_args()
    import anyio

    model = ModelProcess(delay=0.0)
    try:
        with tempfile.TemporaryDirectory() as tmp:
            agent = write_agent(Path(tmp), model.base_url)
            params = serve_params(agent, Path(tmp) / "home")
            readings = anyio.run(_readings, params, args.calls)
    finally:
        model.stop()
    print(f"Served agent's resident memory over {args.calls} sequential calls")
    for calls, mb in readings:
        print(f"  after {calls:>5} calls   {mb:7.1f} MB")
    first, last = readings[0][1], readings[-1][1]
    growth = (last - first) / first
    met = growth <= GROWTH_GOAL and last < CEILING_MB
    print(
        f"goal: growth ≤ {GROWTH_GOAL:.0%} after the first {STEP}, under {CEILING_MB:.0f} MB "
        f"({'met' if met else 'MISSED'}: {growth:+.1%}, {last:.1f} MB)"
    )
    return 0 if met else 1


if __name__ == "__main__":
    sys.exit(main())
