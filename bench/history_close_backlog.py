"""Closing a write-behind history store with a bulk backlog: how long, and is anything lost.

Run: ``.venv/bin/python bench/history_close_backlog.py [--runs 10000 30000 60000] [--reps 3]``.
Prints a table; exits 0 when every run written is in the database after the next open (1
otherwise). Not a test: the figures depend on the machine.

For each size, one thread records that many served calls in bulk on a write-behind store
(``start_call`` + ``finish_run``: three writes per call), faster than its writer can apply them,
then closes the store and a new store opens the file. Measured: the caller's time, ``close``
(which applies the backlog for up to 5 s and hands the rest over in the write log), the next
open (which applies what was handed over), and the runs found ``complete``. Baseline, in the same
run: the same calls written inline (``write_behind=False``, one autocommitted statement each).
The two take turns (which goes first alternates from one repetition to the next); figures are
medians over ``--reps``, and the ratio (write + close + reopen ÷ inline) is given as median
(min–max) of the repetitions' pairs.
"""

from __future__ import annotations

import argparse
import logging
import statistics
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from mcp_export.history.store import HistoryStore  # noqa: E402


def _record(store: HistoryStore, calls: int) -> None:
    runs = []
    for n in range(calls):
        _thread, run = store.start_call(
            thread_id=None,
            agent_path="/bench.agent.yaml",
            agent_name="Bench",
            title=f"book: call {n}",
            kind="served",
            tool_name="book",
            arguments={"n": n},
            filled_prompt=f"Book call {n}",
            caller="bench",
        )
        runs.append(run)
    for run in runs:
        store.finish_run(run, answer="booked", duration_ms=1.0)


def _complete(path: Path) -> int:
    with HistoryStore(path) as store:
        return sum(r.status == "complete" for r in store.runs(limit=10_000_000))


def _behind(path: Path, calls: int) -> tuple[float, float, bool, int, float, int]:
    """Write behind, close, reopen: write s, close s, handed over, replayed, reopen s, complete."""
    store = HistoryStore(path, write_behind=True)
    started = time.perf_counter()
    _record(store, calls)
    written = time.perf_counter()
    store.close()
    closed = time.perf_counter()
    handed = any(path.with_name("history.sqlite3-writes").iterdir())
    with HistoryStore(path) as reopened:
        reopen = time.perf_counter() - closed
        replayed = reopened.replayed.applied
    return written - started, closed - written, handed, replayed, reopen, _complete(path)


def _inline(path: Path, calls: int) -> float:
    with HistoryStore(path) as inline:
        started = time.perf_counter()
        _record(inline, calls)
        return time.perf_counter() - started


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, nargs="+", default=[10_000, 30_000, 60_000])
    parser.add_argument("--reps", type=int, default=3)
    args = parser.parse_args()
    logging.disable(logging.WARNING)  # the hand-over warning is expected; the table says it
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for calls in args.runs:
            found: list[tuple[float, float, bool, int, float, int]] = []
            inline: list[float] = []
            for rep in range(args.reps):
                folder = Path(tmp) / f"{calls}-{rep}"
                # ABBA…: the two take turns going first
                for kind in ("behind", "inline") if rep % 2 == 0 else ("inline", "behind"):
                    path = folder / kind / "history.sqlite3"
                    if kind == "behind":
                        found.append(_behind(path, calls))
                    else:
                        inline.append(_inline(path, calls))
            rows.append((calls, found, inline))
    print(
        f"write-behind store closed with a bulk backlog (3 writes per call), against the same "
        f"writes inline; median of {args.reps}, the two taking turns"
    )
    print(
        f"  {'calls':>7}{'write s':>9}{'close s':>9}{'handed over':>13}{'replayed':>10}"
        f"{'reopen s':>10}{'complete':>10}{'total s':>9}{'inline s':>10}   ratio (min–max)"
    )
    ok = True
    for calls, found, inline in rows:
        totals = [write + close + reopen for write, close, _h, _r, reopen, _c in found]
        ratios = [total / alone for total, alone in zip(totals, inline, strict=True)]
        ok = ok and all(complete == calls for *_rest, complete in found)
        med = statistics.median
        print(
            f"  {calls:>7}{med(f[0] for f in found):>9.2f}{med(f[1] for f in found):>9.2f}"
            f"{'yes' if any(f[2] for f in found) else 'no':>13}{med(f[3] for f in found):>10.0f}"
            f"{med(f[4] for f in found):>10.2f}{min(f[5] for f in found):>10}{med(totals):>9.2f}"
            f"{med(inline):>10.2f}   {med(ratios):.2f} ({min(ratios):.2f}–{max(ratios):.2f})"
        )
    print("nothing lost" if ok else "LOST: some runs are not complete after the next open")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
