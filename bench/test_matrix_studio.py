"""Does the studio stay responsive while test-case results stream into the matrix tab?

Run: ``.venv/bin/python bench/test_matrix_studio.py [--cases 100] [--models 3] [--delay 0.05]
[--concurrency 16] [--reps 3]``. Prints the figures; exits 0 (1 when the goal is missed). Not a
test: the figures depend on the machine.

A ``MatrixTab`` (offscreen, 1024×700, on a qasync loop, as in the studio, with the history store
in a temporary ``METAAGENT_HOME``) runs ``--cases`` test cases on ``--models`` models, every call
a served call of the agent's own MCP server, to ``bench/_async_model.py`` answering after
``--delay`` seconds (its own process, so its work does not compete with the window's). A 5 ms
precise ``QTimer`` records the gap between its ticks: a gap well over 5 ms is time the window
could not repaint or answer input. Measured apart:

- set-up: from Run to the first result (the runtime's import in a worker thread on the first run,
  the agent's servers);
- streaming: from the first result to the last (goal: longest gap under 50 ms);
- recording: from the last result to the run's end (the case rows written and compared with the
  run before, in a worker thread).

Each phase also names its longest garbage collection: the studio collects on the GUI thread only
(``app.collector``), so a full collection is a gap of its own.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import itertools
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

BENCH = Path(__file__).resolve().parent
sys.path.insert(0, str(BENCH))
sys.path.insert(0, str(BENCH.parent))
os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from _async_model import AsyncModelProcess  # noqa: E402
from _cases_agent import PROVIDERS, write_agent  # noqa: E402

TICK_MS = 5
STALL_GOAL_MS = 50.0


async def measure(path: Path, models: int, concurrency: int, store: Any) -> dict[str, Any]:
    from PySide6.QtCore import Qt, QTimer

    from app.document.agent_document import AgentDocument
    from app.test_cases.matrix_tab import MatrixTab

    names = [f"{pid}:bench" for pid, _ in PROVIDERS[:models]]
    tab = MatrixTab(AgentDocument.load(path), history=store, models=names)
    tab.resize(1024, 700)
    tab.show()
    tab.concurrency.setValue(concurrency)

    ticks: list[float] = []
    arrivals: list[float] = []
    collections: list[tuple[float, float]] = []  # (start, end) of each garbage collection
    began: list[float] = []

    def on_gc(phase: str, _info: dict[str, int]) -> None:
        now = time.perf_counter()
        if phase == "start":
            began[:] = [now]
        elif began:
            collections.append((began[0], now))

    gc.callbacks.append(on_gc)
    timer = QTimer()
    timer.setTimerType(Qt.TimerType.PreciseTimer)
    timer.timeout.connect(lambda: ticks.append(time.perf_counter()))
    tab.runner.results_arrived.connect(
        lambda batch: arrivals.extend([time.perf_counter()] * len(batch))
    )
    ended: asyncio.Future[Any] = asyncio.get_running_loop().create_future()

    def on_finished(end: Any) -> None:
        if not ended.done():
            ended.set_result(end)

    tab.finished.connect(on_finished)

    await asyncio.sleep(0.2)  # the tab painted
    started = time.perf_counter()
    ticks.append(started)
    timer.start(TICK_MS)
    if not tab.run():
        raise RuntimeError("the run did not start")
    end = await asyncio.wait_for(ended, 600)
    finished = time.perf_counter()
    ticks.append(finished)
    timer.stop()
    gc.callbacks.remove(on_gc)
    tab.close()
    tab.deleteLater()

    first, last = arrivals[0], arrivals[-1]

    def gaps(begin: float, stop: float) -> list[float]:
        return [(b - a) * 1000 for a, b in itertools.pairwise(ticks) if a >= begin and b <= stop]

    setup = [(b - a) * 1000 for a, b in itertools.pairwise(ticks) if b <= first]

    def collected(a: float, b: float) -> bool:
        return any(a <= start < b for start, _ in collections)

    clean = [
        (b - a) * 1000
        for a, b in itertools.pairwise(ticks)
        if a >= first and b <= last and not collected(a, b)
    ]

    def longest_gc(begin: float, stop: float) -> float:
        return max(((b - a) * 1000 for a, b in collections if begin <= a < stop), default=0.0)

    return {
        "state": end.state,
        "message": end.message,
        "calls": len(end.results),
        "failed": sum(not r.passed for r in end.results),
        "setup_ms": (first - started) * 1000,
        "setup_gaps": setup,
        "stream_ms": (last - first) * 1000,
        "stream_gaps": gaps(first, last),
        "stream_clean_max": max(clean, default=0.0),
        "record_ms": (finished - last) * 1000,
        "record_gaps": gaps(last, finished),
        "total_ms": (finished - started) * 1000,
        "gc_ms": (longest_gc(started, first), longest_gc(first, last), longest_gc(last, finished)),
    }


def _pct(values: list[float], q: float) -> float:
    ordered = sorted(values) or [0.0]
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--cases", type=int, default=100)
    parser.add_argument("--models", type=int, default=3)
    parser.add_argument("--delay", type=float, default=0.05, help="the model's answer delay, s")
    parser.add_argument("--concurrency", type=int, default=16)
    parser.add_argument("--reps", type=int, default=3)
    options = parser.parse_args()

    home = tempfile.mkdtemp(prefix="metaagent-bench-")
    os.environ["METAAGENT_HOME"] = home
    import qasync
    from PySide6.QtWidgets import QApplication

    from app.collector import collect_on_gui_thread
    from mcp_export.history.store import HistoryStore

    app = QApplication.instance() or QApplication(sys.argv)
    collector = collect_on_gui_thread(app)  # as the studio does: worker threads never collect
    model = AsyncModelProcess(options.delay)
    store = HistoryStore()
    results: list[dict[str, Any]] = []
    try:
        path = write_agent(Path(home), model.base_url, options.cases, options.models)
        loop = qasync.QEventLoop(app)
        asyncio.set_event_loop(loop)
        with loop:
            for _ in range(options.reps):
                results.append(
                    loop.run_until_complete(
                        measure(path, options.models, options.concurrency, store)
                    )
                )
    finally:
        store.close()
        model.stop()
        collector.stop()

    calls = options.cases * options.models
    print(
        f"matrix tab: {options.cases} cases × {options.models} models = {calls} calls, "
        f"model delay {options.delay * 1000:.0f} ms, {options.concurrency} at once "
        "(offscreen, qasync, history on, model in another process)"
    )
    ok = True
    for number, result in enumerate(results, 1):
        stream = result["stream_gaps"]
        worst = max(stream, default=0.0)
        ok = ok and worst < STALL_GOAL_MS and result["calls"] == calls and not result["failed"]
        print(
            f" run {number}: {result['state']} {result['calls']} calls, {result['failed']} failed"
        )
        if result["message"]:
            print(f"   note: {result['message']}")
        setup_gc, stream_gc, record_gc = result["gc_ms"]
        print(
            f"   set-up     {result['setup_ms']:7.0f} ms   longest gap "
            f"{max(result['setup_gaps'], default=0.0):6.1f} ms   longest collection "
            f"{setup_gc:5.1f} ms"
        )
        print(
            f"   streaming  {result['stream_ms']:7.0f} ms   gap median "
            f"{statistics.median(stream or [0.0]):5.1f} ms  p99 {_pct(stream, 0.99):5.1f} ms  "
            f"max {worst:5.1f} ms   longest collection {stream_gc:5.1f} ms   "
            f"max without one {result['stream_clean_max']:5.1f} ms"
        )
        print(
            f"   recording  {result['record_ms']:7.0f} ms   longest gap "
            f"{max(result['record_gaps'], default=0.0):6.1f} ms   longest collection "
            f"{record_gc:5.1f} ms"
        )
        print(f"   total      {result['total_ms']:7.0f} ms")
    verdict = "met" if ok else "MISSED"
    print(f"goal (longest gap while results stream in < {STALL_GOAL_MS:.0f} ms): {verdict}")
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
