"""CPU of a served call's history writes, this code against another source tree, in one run.

Run: ``.venv/bin/python bench/history_writes_cpu.py --before DIR [--calls 2000] [--reps 7]``
(``git archive REV | tar -x -C DIR`` makes DIR). Prints a table; exits 0. Not a test: the figures
depend on the machine.

Two child processes, one importing this tree and one importing DIR, each with a write-behind
SQLite store (``open_store(write_behind=True)``, as ``metaagent serve`` opens it) in its own
temporary directory and a remembered secret (a served agent has its model key). A block makes
``--calls`` times the writes of one served call, through the store's methods the server and the
session call (``start_call``; the user message; the pending answer; the answer; ``finish_run``),
then waits for the writer (``flush``). It reads the child's CPU: the main thread's
(``time.thread_time``, what the event loop pays) and the other threads' (``time.process_time``
less it: the history writer). A repetition runs a block in each child, back to back, the order
alternating; each ratio is this tree's block ÷ the other's block of the same repetition. Figures:
µs per call, median (min–max) over the blocks, and the ratios' median (min–max).

The server's own share of a call is what ``bench/server_call_cpu.py`` measures; this one prices
the history writes alone, where the served call's noise (the protocol, the model request) hides a
change of a few per cent.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]

_CHILD = r"""
import json, sys, time
from mcp_export.history.store import open_store
from mcp_export.redact import remember_secret

remember_secret("sk-bench-" + "k" * 40)
store = open_store(sys.argv[1], write_behind=True)
done = 0


def call(index):
    prompt = f"Book a flight to d{index} for the traveller, then say what was booked."
    thread_id, run_id = store.start_call(
        thread_id=None, agent_path=sys.argv[2], agent_name="bench-agent",
        title=f"book_flight: {prompt[:60]}", kind="served", tool_name="book_flight",
        arguments={"destination": f"d{index}"}, filled_prompt=prompt, caller="mcp-client 1.0",
    )
    store.add_message(thread_id, "user", prompt, status="complete")
    pending = store.add_message(thread_id, "assistant", "", status="pending")
    answer = f"Booked a flight to d{index}: confirmation BK{index:06d}, departing at 09:40."
    store.update_message(pending, content=answer, status="complete", tokens_in=42, tokens_out=17)
    store.finish_run(run_id, answer=answer, duration_ms=1.5, tokens_in=42, tokens_out=17)


for line in sys.stdin:
    calls = int(line)
    main, total = time.thread_time(), time.process_time()
    for index in range(done, done + calls):
        call(index)
    store.flush()
    main, total = time.thread_time() - main, time.process_time() - total
    done += calls
    print(json.dumps([main, total - main]), flush=True)
store.close()
"""


def _child(tree: Path, home: Path) -> subprocess.Popen[str]:
    home.mkdir()
    env = dict(os.environ, PYTHONPATH=str(tree), METAAGENT_HOME=str(home))
    return subprocess.Popen(
        [sys.executable, "-c", _CHILD, str(home / "history.sqlite3"), str(home / "agent.yaml")],
        cwd=str(tree),
        env=env,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )


def _block(child: subprocess.Popen[str], calls: int) -> tuple[float, float]:
    assert child.stdin is not None and child.stdout is not None
    child.stdin.write(f"{calls}\n")
    child.stdin.flush()
    main, other = json.loads(child.stdout.readline())
    return main / calls * 1e6, other / calls * 1e6


def _spread(values: list[float], digits: int = 1) -> str:
    return (
        f"{statistics.median(values):.{digits}f} "
        f"({min(values):.{digits}f}–{max(values):.{digits}f})"
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--before", type=Path, required=True, metavar="DIR")
    parser.add_argument("--calls", type=int, default=2000)
    parser.add_argument("--reps", type=int, default=7)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        trees = {"this tree": REPO, "before": args.before.resolve()}
        children = {
            name: _child(tree, Path(tmp) / name.replace(" ", "-")) for name, tree in trees.items()
        }
        try:
            figures: dict[str, dict[str, list[float]]] = {
                name: {"main": [], "other": [], "all": []} for name in trees
            }
            for child in children.values():  # warm-up
                _block(child, args.calls // 4)
            names = list(trees)
            for rep in range(args.reps):
                for name in names if rep % 2 == 0 else names[::-1]:
                    main_us, other_us = _block(children[name], args.calls)
                    figures[name]["main"].append(main_us)
                    figures[name]["other"].append(other_us)
                    figures[name]["all"].append(main_us + other_us)
                time.sleep(0.1)
        finally:
            for child in children.values():
                assert child.stdin is not None
                child.stdin.close()
                child.wait(30)
    print(
        f"history writes of a served call, CPU µs per call: {args.calls} calls a block, "
        f"median (min–max) of {args.reps} blocks per tree, blocks paired ABAB"
    )
    print(f"  {'':<12}{'main thread':<22}{'writer thread':<22}{'all':<22}")
    for name, values in figures.items():
        print(
            f"  {name:<12}{_spread(values['main']):<22}{_spread(values['other']):<22}"
            f"{_spread(values['all']):<22}"
        )
    print("this tree ÷ before, paired by repetition, median (min–max):")
    for part in ("main", "other", "all"):
        ratios = [
            a / b for a, b in zip(figures["this tree"][part], figures["before"][part], strict=True)
        ]
        print(f"  {part:<8}{_spread(ratios, 2)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
