"""The static hints report (``mcp_export.hints``) on agents of 10, 100 and 500 tools, and what its
tokenizer costs to load.

Run: ``.venv/bin/python bench/hints_report.py [--rounds 7] [--tools 10 100 500]``. Prints tables;
exits 0 (1 when the goal is missed). Not a test: the figures depend on the machine.

Three measures:

- **report, in process**: ``build_report`` over one agent (the travel-desk example's four tools
  repeated, ``bench/_many_tools.py``), hints only (``count=False``) and with token counts, the
  tokenizer and the protocol's types already loaded (as the studio has them after its first
  Tests tab). Sizes interleave round by round; medians, min and max.
- **first count, in a fresh interpreter**: what loading pays once: importing ``tiktoken`` and
  reading the bundled ``o200k_base`` vocabulary (``encoding()``), and importing the protocol's
  types (``mcp_types.methods``), each timed inside a child process.
- **``metaagent hints`` vs ``metaagent validate``** on the 500-tool file, spawn → exit,
  interleaved (ABAB…), with the ratio's spread: the whole command as a person runs it.

Goal: the report for a 500-tool agent in under 1 s, counting included (median, in process; the
one-off load is reported beside it).
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "bench"))

from _many_tools import write_agent  # noqa: E402
from _proc import wall  # noqa: E402

from mcp_export.hints import build_report  # noqa: E402
from mcp_export.server.tools import ServedAgent  # noqa: E402
from schema_types.files.agent_file import load_agent  # noqa: E402

GOAL_TOOLS = 500
GOAL_SECONDS = 1.0
METAAGENT = Path(sys.executable).with_name("metaagent")

_LOAD = """
import time
t0 = time.perf_counter()
import tiktoken
t1 = time.perf_counter()
from mcp_export.hints.tokens import encoding
encoding()
t2 = time.perf_counter()
import mcp_types.methods
t3 = time.perf_counter()
print(t1 - t0, t2 - t1, t3 - t2)
"""


def _ms(values: list[float]) -> str:
    return (
        f"{statistics.median(values) * 1000:>8.0f}ms{min(values) * 1000:>8.0f}ms"
        f"{max(values) * 1000:>8.0f}ms"
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--tools", type=int, nargs="+", default=[10, 100, 500])
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        paths = {count: write_agent(folder, count).resolve() for count in args.tools}
        agents = {count: ServedAgent(load_agent(path), path) for count, path in paths.items()}
        build_report([agents[args.tools[0]]])  # loads the tokenizer and the protocol's types
        static: dict[int, list[float]] = {count: [] for count in args.tools}
        counted: dict[int, list[float]] = {count: [] for count in args.tools}
        for _ in range(args.rounds):
            for count, agent in agents.items():
                start = time.perf_counter()
                build_report([agent], count=False)
                static[count].append(time.perf_counter() - start)
                start = time.perf_counter()
                build_report([agent])
                counted[count].append(time.perf_counter() - start)

        loads: list[tuple[float, float, float]] = []
        for _ in range(args.rounds):
            out = subprocess.run(
                [sys.executable, "-c", _LOAD],
                cwd=REPO,
                capture_output=True,
                text=True,
                check=True,
                timeout=120,
            ).stdout.split()
            loads.append((float(out[0]), float(out[1]), float(out[2])))

        big = paths.get(GOAL_TOOLS, paths[max(paths)])
        cli = [str(METAAGENT)] if METAAGENT.exists() else [sys.executable, "-m", "mcp_export"]
        commands = {"hints": [*cli, "hints", str(big)], "validate": [*cli, "validate", str(big)]}
        for command in commands.values():  # warm the file cache and the .pyc files
            wall(command, 300)
        walls: dict[str, list[float]] = {name: [] for name in commands}
        for _ in range(args.rounds):
            for name, command in commands.items():
                walls[name].append(wall(command, 300))

    print(f"build_report, in process ({args.rounds} rounds, sizes interleaved)")
    print(f"{'tools':>6}  {'hints only: median':>18}{'min':>10}{'max':>10}   with tokens: ...")
    for count in args.tools:
        print(f"{count:>6}  {_ms(static[count]):>38}   {_ms(counted[count])}")
    print(f"first count, fresh interpreter ({args.rounds} runs): median")
    names = ("import tiktoken", "load o200k_base vocabulary", "import mcp_types.methods")
    for index, name in enumerate(names):
        print(f"  {name:28}{statistics.median(load[index] for load in loads) * 1000:>8.0f}ms")
    ratios = [h / v for h, v in zip(walls["hints"], walls["validate"], strict=True)]
    print(f"metaagent on {big.name}, spawn → exit ({args.rounds} rounds, ABAB)")
    for name, values in walls.items():
        print(f"  {name:10}{_ms(values)}")
    print(
        f"  hints / validate: median {statistics.median(ratios):.2f}x "
        f"(min {min(ratios):.2f}x, max {max(ratios):.2f}x)"
    )
    goal = counted.get(GOAL_TOOLS)
    if goal is None:
        print(f"goal not measured ({GOAL_TOOLS} tools not among the sizes)")
        return 0
    median = statistics.median(goal)
    print(f"{GOAL_TOOLS} tools, with tokens: {median:.3f} s (goal < {GOAL_SECONDS} s)")
    print("goal met" if median < GOAL_SECONDS else "goal MISSED")
    return 0 if median < GOAL_SECONDS else 1


if __name__ == "__main__":
    sys.exit(main())
