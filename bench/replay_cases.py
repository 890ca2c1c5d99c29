"""Replayed test cases: how long ``metaagent test --replay`` takes for 10, 100 and 1000 cases.

Run: ``.venv/bin/python bench/replay_cases.py [--cases 10,100,1000] [--reps 5]
[--caller-cases 10,100]``. Prints two tables; exits 0 (1 when the goal is missed or a replay
fails). Not a test: the figures depend on the machine.

The agent is ``bench/_cases_agent.py``'s (one tool, N cases, each expecting its city in the
answer); its cases are recorded once against ``bench/_async_model.py`` (answering at once), then
the model process is stopped and every measured run replays them from their fixtures. Two figures
per size, each the median of ``--reps`` runs:

- ``run_matrix``: ``mcp_export.testing.run.run_matrix(mode="replay")`` in this process, as
  ``metaagent test`` calls it (concurrency 4, its default; no history);
- ``CLI``: the whole command, ``metaagent test AGENT --replay --no-history``, as a child process
  from start to exit (interpreter start-up and imports included);
- ``CLI start-up``: the same command selecting no case (``--case "no such case"``: it loads the
  agent file and exits 2), the baseline of the row; ``ms/case`` is the CLI figure less it, per case.

Goal: 100 replayed cases in ≤ 2 s in all (the CLI figure).

Then replayed *caller* cases (``--caller-cases 10,100``; ``0``: skip): ``caller_cases.py``'s agent
(one tool, N caller cases, each asking about its city; the bundled decoys offered beside our
tool) recorded once for one caller model against its caller model process, beside N ordinary
cases recorded the same way; with the model stopped, ``run_matrix(mode="replay")`` of each, in
this process, alternated (ABAB, the ordinary cases the baseline). Each caller case replays two
recorded requests (the caller's pick, checked against the offered tool list, then the served
call's) where an ordinary case replays one. Printed: the medians, and the median and spread of
the per-pair ratio caller / ordinary.
"""

from __future__ import annotations

import argparse
import asyncio
import datetime
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from _async_model import AsyncModelProcess
from _cases_agent import write_agent
from caller_cases import CallerModelProcess, write_caller_agent

from mcp_export.testing.callers import CallerOptions
from mcp_export.testing.replay.tape import Mode
from mcp_export.testing.run import run_matrix, select_cases
from schema_types.files.agent_file import load_agent

METAAGENT = Path(sys.executable).parent / "metaagent"


CALLER = "openai:bench"


async def _matrix(path: Path, mode: Mode) -> tuple[float, int]:
    agent = load_agent(path)
    began = time.perf_counter()
    matrix = await run_matrix(
        agent, path, select_cases(agent), mode=mode, callers=CallerOptions(models=(CALLER,))
    )
    return time.perf_counter() - began, sum(not r.passed for r in matrix.results)


def _cli(path: Path, *more: str) -> tuple[float, int]:
    began = time.perf_counter()
    done = subprocess.run(
        [str(METAAGENT), "test", str(path), "--replay", "--no-history", *more],
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    return time.perf_counter() - began, done.returncode


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", default="10,100,1000")
    parser.add_argument("--reps", type=int, default=5)
    parser.add_argument("--caller-cases", default="10,100")
    args = parser.parse_args()
    ok = True
    print(f"replayed cases, {datetime.date.today().isoformat()}, median of {args.reps} runs")
    print(
        f"{'cases':>6} {'run_matrix s':>13} {'CLI s':>7} {'CLI start-up s':>14} "
        f"{'ms/case (CLI)':>15}"
    )
    with tempfile.TemporaryDirectory() as folder:
        for cases in (int(c) for c in args.cases.split(",")):
            directory = Path(folder) / str(cases)
            directory.mkdir()
            model = AsyncModelProcess(0.0)
            try:
                path = write_agent(directory, model.base_url, cases, 1)
                _, failed = asyncio.run(_matrix(path, "record"))
            finally:
                model.stop()
            if failed:
                print(f"{failed} of {cases} recorded cases failed", file=sys.stderr)
                return 1
            in_process: list[float] = []
            whole: list[float] = []
            start_up: list[float] = []
            for _ in range(args.reps):  # alternated, so all see the same machine load
                elapsed, failed = asyncio.run(_matrix(path, "replay"))
                in_process.append(elapsed)
                took, code = _cli(path)
                whole.append(took)
                start_up.append(_cli(path, "--case", "no such case")[0])
                if failed or code != 0:
                    print(f"a replay failed ({failed} cases, exit {code})", file=sys.stderr)
                    ok = False
            matrix_s, cli_s = statistics.median(in_process), statistics.median(whole)
            base_s = statistics.median(start_up)
            row = f"{cases:>6} {matrix_s:>13.2f} {cli_s:>7.2f} {base_s:>14.2f}"
            print(f"{row} {(cli_s - base_s) / cases * 1000:>15.1f}")
            if cases == 100 and cli_s > 2.0:
                ok = False
    print("goal (100 replayed cases ≤ 2 s in all):", "met" if ok else "MISSED")
    sizes = [int(c) for c in args.caller_cases.split(",") if int(c) > 0]
    if sizes and not _callers(sizes, args.reps):
        ok = False
    return 0 if ok else 1


def _callers(sizes: list[int], reps: int) -> bool:
    """Replayed caller cases against as many replayed ordinary cases, interleaved."""
    ok = True
    print(f"replayed caller cases against ordinary ones, ABAB, median of {reps} runs each")
    print(
        f"{'cases':>6} {'ordinary s':>11} {'caller s':>9} {'ms/caller case':>15} "
        f"{'ratio':>6} {'ratios':>12}"
    )
    with tempfile.TemporaryDirectory() as folder:
        for cases in sizes:
            directory = Path(folder) / str(cases)
            directory.mkdir()
            model = CallerModelProcess(0.0)
            try:
                plain = write_agent(directory, model.base_url, cases, 1)
                caller = write_caller_agent(directory / "callers", model.base_url, cases, 1)
                failed = sum(asyncio.run(_matrix(p, "record"))[1] for p in (plain, caller))
            finally:
                model.stop()
            if failed:
                print(f"{failed} of {2 * cases} recorded cases failed", file=sys.stderr)
                return False
            times: dict[str, list[float]] = {"ordinary": [], "caller": []}
            for _ in range(reps):  # ABAB
                for kind, path in (("ordinary", plain), ("caller", caller)):
                    elapsed, failed = asyncio.run(_matrix(path, "replay"))
                    times[kind].append(elapsed)
                    if failed:
                        print(f"{kind}: {failed} of {cases} replays failed", file=sys.stderr)
                        ok = False
            ratios = [c / o for c, o in zip(times["caller"], times["ordinary"], strict=True)]
            plain_s, caller_s = (
                statistics.median(times["ordinary"]),
                statistics.median(times["caller"]),
            )
            spread = f"{min(ratios):.2f}–{max(ratios):.2f}"
            print(
                f"{cases:>6} {plain_s:>11.2f} {caller_s:>9.2f} {caller_s / cases * 1000:>15.1f} "
                f"{statistics.median(ratios):>6.2f} {spread:>12}"
            )
    return ok


if __name__ == "__main__":
    raise SystemExit(main())
