"""Closing a write-behind history store with a bulk backlog: how long, and is anything lost.

Run: ``.venv/bin/python bench/history_close_backlog.py [--runs 10000 30000 60000]``. Prints a
table; exits 0 when every run written is in the database after the next open (1 otherwise). Not
a test: the figures depend on the machine.

For each size, one thread records that many served calls in bulk on a write-behind store
(``start_call`` + ``finish_run``: three writes per call), faster than its writer can apply them,
then closes the store and a new store opens the file. Measured: the caller's time, ``close``
(which applies the backlog for up to 5 s and hands the rest over in the write log), the next
open (which applies what was handed over), and the runs found ``complete``. Baseline, in the same
run: the same calls written inline (``write_behind=False``, one autocommitted statement each).
"""

from __future__ import annotations

import argparse
import logging
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


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, nargs="+", default=[10_000, 30_000, 60_000])
    args = parser.parse_args()
    logging.disable(logging.WARNING)  # the hand-over warning is expected; the table says it
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for calls in args.runs:
            behind_path = Path(tmp) / f"behind-{calls}" / "history.sqlite3"
            store = HistoryStore(behind_path, write_behind=True)
            started = time.perf_counter()
            _record(store, calls)
            written = time.perf_counter()
            store.close()
            closed = time.perf_counter()
            handed = any(behind_path.with_name("history.sqlite3-writes").iterdir())
            with HistoryStore(behind_path) as reopened:
                reopen = time.perf_counter() - closed
                replayed = reopened.replayed.applied
            complete = _complete(behind_path)

            inline_path = Path(tmp) / f"inline-{calls}" / "history.sqlite3"
            with HistoryStore(inline_path) as inline:
                started_inline = time.perf_counter()
                _record(inline, calls)
                inline_s = time.perf_counter() - started_inline
            rows.append(
                (
                    calls,
                    written - started,
                    closed - written,
                    handed,
                    replayed,
                    reopen,
                    complete,
                    inline_s,
                )
            )
    print("write-behind store closed with a bulk backlog (3 writes per call)")
    print(
        f"  {'calls':>7}{'write s':>9}{'close s':>9}{'handed over':>13}{'replayed':>10}"
        f"{'reopen s':>10}{'complete':>10}{'total s':>9}{'inline s':>10}{'ratio':>7}"
    )
    ok = True
    for calls, write, close, handed, replayed, reopen, complete, inline_s in rows:
        total = write + close + reopen
        ok = ok and complete == calls
        print(
            f"  {calls:>7}{write:>9.2f}{close:>9.2f}{'yes' if handed else 'no':>13}{replayed:>10}"
            f"{reopen:>10.2f}{complete:>10}{total:>9.2f}{inline_s:>10.2f}{total / inline_s:>7.2f}"
        )
    print("nothing lost" if ok else "LOST: some runs are not complete after the next open")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
