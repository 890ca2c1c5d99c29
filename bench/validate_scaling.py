"""``metaagent validate`` on agents of 1 to 20 000 tools: wall time of the command, as a person
or a CI job runs it.

Run: ``.venv/bin/python bench/validate_scaling.py [--rounds 5] [--tools 1 100 500 4000 20000]``.
Prints a table; exits 0 (1 when the goal is missed). Not a test: the figures depend on the
machine.

Each sample spawns the ``metaagent`` console script of this environment on one agent file and
times it from the spawn to its exit. Two shapes of agent: ``desk``, the travel-desk example's four
tools repeated (``bench/_many_tools.py``, ~1.9 KB and ~130 values a tool: nested objects, enums,
patterns, formats, examples), and ``small``, one-line flow-style tools of ~170 bytes
(``bench/_small_tools.py``, the shape the 20 000-tool agent of issue 17 had). A file past the
10 MB an agent file may hold (desk at 20 000 tools, 37 MB) is refused by design and not timed.
Sizes are interleaved round by round so machine load hits all alike, and a bare ``python -c
pass`` is timed in the same rounds to show what any Python command pays before it starts. Goal:
500 tools validated in under 0.5 s (median) in both shapes; the other sizes are reported, with
what each tool adds to the 1-tool run, to show it stays linear.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "bench"))

from _many_tools import write_agent  # noqa: E402
from _proc import wall  # noqa: E402
from _small_tools import write_small_agent  # noqa: E402

from schema_types.limits import MAX_FILE_BYTES  # noqa: E402

GOAL_TOOLS = 500
GOAL_SECONDS = 0.5
METAAGENT = Path(sys.executable).with_name("metaagent")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--tools", type=int, nargs="+", default=[1, 100, 500, 4000, 20000])
    args = parser.parse_args()
    if METAAGENT.exists():
        validate = [str(METAAGENT), "validate"]
    else:
        validate = [sys.executable, "-m", "mcp_export", "validate"]
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        files: dict[str, Path] = {}
        refused: list[str] = []
        for count in args.tools:
            for shape, write in (("desk", write_agent), ("small", write_small_agent)):
                name = f"{shape} {count}"
                path = write(folder, count)
                if path.stat().st_size > MAX_FILE_BYTES:
                    refused.append(f"{name} ({path.stat().st_size / 2**20:.0f} MB)")
                else:
                    files[name] = path
        commands = {name: [*validate, str(path)] for name, path in files.items()}
        commands["python -c pass"] = [sys.executable, "-c", "pass"]
        for command in commands.values():  # warm the file cache and the .pyc files
            wall(command, 300)
        times: dict[str, list[float]] = {name: [] for name in commands}
        for _ in range(args.rounds):
            for name, command in commands.items():
                times[name].append(wall(command, 300))
        sizes = {name: path.stat().st_size for name, path in files.items()}
    print(f"metaagent validate, spawn → exit ({args.rounds} rounds, interleaved)")
    print(f"{'':16}{'file':>10}{'median':>10}{'min':>10}{'max':>10}{'per tool':>11}")
    medians = {name: statistics.median(values) for name, values in times.items()}
    for name, values in times.items():
        size = f"{sizes[name] / 1024:.0f} KB" if name in sizes else ""
        per_tool = ""
        shape, _, count = name.partition(" ")
        one = medians.get(f"{shape} 1")
        if name in sizes and int(count) >= 100 and one is not None:
            # What each tool adds: the 1-tool run's time is what any agent costs.
            per_tool = f"{(medians[name] - one) / (int(count) - 1) * 1e6:.0f} µs"
        print(
            f"{name:16}{size:>10}{medians[name] * 1000:>8.0f}ms{min(values) * 1000:>8.0f}ms"
            f"{max(values) * 1000:>8.0f}ms{per_tool:>11}"
        )
    for name in refused:
        print(f"{name}: over the 10 MB an agent file may hold, refused (not timed)")
    goal = {
        name: statistics.median(times[name]) for name in times if name.endswith(f" {GOAL_TOOLS}")
    }
    missed = [name for name, median in goal.items() if median >= GOAL_SECONDS]
    for name, median in goal.items():
        print(f"{name} tools: {median:.3f} s (goal < {GOAL_SECONDS} s)")
    if not goal:
        print(f"goal not measured ({GOAL_TOOLS} tools not among the sizes)")
    else:
        print("goal met" if not missed else f"goal MISSED: {', '.join(missed)}")
    return 1 if missed else 0


if __name__ == "__main__":
    sys.exit(main())
