"""What one turn at a time per conversation costs a continued turn: this tree against a baseline.

Run: ``.venv/bin/python bench/conversation_turns.py [--baseline COMMIT] [--turns 20] [--reps 5]``.
Prints a table; exits 0. Not a test: the figures depend on the machine.

Four ``metaagent serve`` processes over stdio, open at once, driven by the official
``mcp.Client`` (2025-11-25): this tree and the baseline commit (``git archive`` into a temporary
folder, run from there), each with the default SQLite store (a home of its own) and with
``--store postgresql://…`` (a schema of its own on a throwaway cluster of
``tests/fakes/postgres.py``). The tool is a conversation tool; the model is
``bench/_async_model.py`` answering at once, in its own process. A block opens a conversation
and continues it ``--turns`` times, one turn after the other; it measures the client's wall
time per turn and the server process's CPU (``/proc/PID/stat``, all threads). For each store a
repetition runs a baseline block and a block of this tree back to back (the order alternates),
and the ratio is taken within the pair; the figures are medians over ``--reps`` repetitions,
after a warm-up block per server.
"""

from __future__ import annotations

import argparse
import contextlib
import statistics
import subprocess
import sys
import tempfile
import time
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
from _proc import children, cpu_seconds  # noqa: E402
from server_call_overhead import write_agent  # noqa: E402

from tests.fakes.postgres import PostgresCluster  # noqa: E402


@dataclass
class Served:
    label: str
    client: Any
    pid: int
    wall_ms: list[float] = field(default_factory=list)
    cpu_ms: list[float] = field(default_factory=list)


def _params(tree: Path, agent: Path, home: Path, *extra: str) -> Any:
    import os

    from mcp.client.stdio import StdioServerParameters

    return StdioServerParameters(
        command=sys.executable,
        args=["-m", "mcp_export", "serve", str(agent), *extra],
        cwd=str(tree),
        env=dict(os.environ, METAAGENT_HOME=str(home), PYTHONPATH=str(tree)),
    )


async def _conversation(client: Any, turns: int) -> None:
    opened = await client.call_tool("book_flight", {"destination": "d0"})
    assert not opened.is_error, opened
    conversation = opened.structured_content["conversationId"]
    for index in range(1, turns + 1):
        arguments = {"destination": f"d{index}", "conversation_id": conversation}
        result = await client.call_tool("book_flight", arguments)
        assert not result.is_error, result


async def _block(one: Served, turns: int) -> float:
    cpu, wall = cpu_seconds(one.pid), time.perf_counter()
    await _conversation(one.client, turns)
    wall_ms = (time.perf_counter() - wall) / (turns + 1) * 1000
    one.wall_ms.append(wall_ms)
    one.cpu_ms.append((cpu_seconds(one.pid) - cpu) / (turns + 1) * 1000)
    return wall_ms


async def _measure(
    trees: dict[str, Path], agent: Path, home: Path, urls: dict[str, str], turns: int, reps: int
) -> tuple[dict[str, Served], dict[str, list[float]]]:
    from mcp import Client

    async with contextlib.AsyncExitStack() as stack:
        served: dict[str, Served] = {}
        for tree_label, tree in trees.items():
            for store in ("sqlite", "postgresql"):
                label = f"{tree_label}/{store}"
                extra = ("--store", urls[label]) if store == "postgresql" else ()
                params = _params(tree, agent, home / label.replace("/", "-"), *extra)
                before = set(children())
                client = await stack.enter_async_context(Client(params, mode="legacy"))
                (pid,) = set(children()) - before
                served[label] = Served(label, client, pid)
                await _conversation(client, turns)  # warm-up
        ratios: dict[str, list[float]] = {}
        for store in ("sqlite", "postgresql"):
            base, ours = served[f"baseline/{store}"], served[f"this/{store}"]
            for rep in range(reps):
                base_s, ours_s = await alternated(
                    rep, partial(_block, base, turns), partial(_block, ours, turns)
                )
                ratios.setdefault(store, []).append(ours_s / base_s)
        return served, ratios


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--baseline", default="5b765c6")
    parser.add_argument("--turns", type=int, default=20)
    parser.add_argument("--reps", type=int, default=5)
    args = parser.parse_args()
    import anyio

    model = AsyncModelProcess(0.0)
    cluster = PostgresCluster()
    try:
        with tempfile.TemporaryDirectory() as tmp:
            base = Path(tmp) / "baseline"
            base.mkdir()
            archive = subprocess.run(
                ["git", "-C", str(REPO), "archive", args.baseline],
                check=True,
                capture_output=True,
            ).stdout
            subprocess.run(["tar", "-x", "-C", str(base)], input=archive, check=True)
            agent = write_agent(Path(tmp), model.base_url)
            text = agent.read_text(encoding="utf-8")
            agent.write_text(
                text.replace("      prompt:", "      conversation: true\n      prompt:", 1),
                encoding="utf-8",
            )
            urls = {f"{t}/postgresql": cluster.fresh_store() for t in ("baseline", "this")}
            served, ratios = anyio.run(
                _measure,
                {"baseline": base, "this": REPO},
                agent,
                Path(tmp) / "home",
                urls,
                args.turns,
                args.reps,
            )
    finally:
        cluster.stop()
        model.stop()

    print(
        f"a conversation continued {args.turns} times, stdio, instant model, 2025-11-25; per "
        f"turn, median (min–max) of {args.reps} paired blocks; baseline {args.baseline}"
    )
    print(f"  {'server':<22}{'wall ms/turn':<22}{'server CPU ms/turn':<22}")
    for label, one in served.items():
        cells = [
            f"{statistics.median(v):.2f} ({min(v):.2f}–{max(v):.2f})"
            for v in (one.wall_ms, one.cpu_ms)
        ]
        print(f"  {label:<22}{cells[0]:<22}{cells[1]:<22}")
    for store, values in ratios.items():
        print(
            f"  wall this ÷ baseline, {store}: {statistics.median(values):.2f} "
            f"({min(values):.2f}–{max(values):.2f})"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
