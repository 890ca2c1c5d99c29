"""Opening a tool whose prompt is a hostile template (every section tag unpaired) in the
studio's tool editor.

Run: ``.venv/bin/python bench/template_open.py [--pairs 10000 20000 50000] [--runs 3]``. Prints
a table; exits 0. Not a test: the figures depend on the machine.

The prompt is ``{?x}`` N times then ``{/y}`` N times (8 bytes a pair), every tag unpaired. Each
run builds a :class:`~app.tool_editor.editor.ToolEditor` offscreen and shows it (the constructor
and ``show()`` are one stretch of GUI-thread work), then lets Qt's event loop run with a 5 ms
timer until the diagnostics list holds all 2N problems, recording the longest stretch between two
ticks (the GUI thread's longest freeze once the window is up) and the time until the problems and
preview are shown. Sizes are interleaved run by run; medians are reported.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from PySide6.QtCore import QEvent, QTimer  # noqa: E402
from PySide6.QtWidgets import QApplication  # noqa: E402

from app.document.agent_document import AgentDocument  # noqa: E402
from app.tool_editor.editor import ToolEditor  # noqa: E402
from schema_types.agent import Agent  # noqa: E402


def _document(pairs: int) -> AgentDocument:
    parameters = {"type": "object", "properties": {"x": {}, "y": {}}}
    prompt = "{?x}" * pairs + "{/y}" * pairs
    tool = {"name": "hostile", "parameters": parameters, "prompt": prompt}
    return AgentDocument(Agent.model_validate({"metadata": {"name": "H", "tools": [tool]}}))


def _open(app: QApplication, pairs: int) -> tuple[float, float, float]:
    document = _document(pairs)
    started = time.perf_counter()
    editor = ToolEditor(document, document.agent.tools[0])
    editor.resize(1400, 900)
    editor.show()
    opened = time.perf_counter() - started
    gaps: list[float] = []
    last = [time.perf_counter()]

    def tick() -> None:
        now = time.perf_counter()
        gaps.append(now - last[0])
        last[0] = now

    timer = QTimer()
    timer.timeout.connect(tick)
    timer.start(5)
    waited = time.perf_counter()
    while editor.template.error_count() != 2 * pairs and time.perf_counter() - waited < 120:
        app.processEvents()
    app.processEvents()
    timer.stop()
    shown = time.perf_counter() - waited
    editor.close()
    editor.deleteLater()
    app.sendPostedEvents(None, QEvent.Type.DeferredDelete)
    app.processEvents()
    return opened, max(gaps, default=0.0), shown


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pairs", type=int, nargs="+", default=[10_000, 20_000, 50_000])
    parser.add_argument("--runs", type=int, default=3)
    options = parser.parse_args()
    app = QApplication.instance() or QApplication([])
    assert isinstance(app, QApplication)
    _open(app, 100)  # imports, caches
    results: dict[int, list[tuple[float, float, float]]] = {n: [] for n in options.pairs}
    for _ in range(options.runs):
        for pairs in options.pairs:
            results[pairs].append(_open(app, pairs))
    print(f"Open a tool of N unpaired section-tag pairs, offscreen ({options.runs} runs, medians)")
    print(f"{'N':>8}{'prompt':>9}{'open+show':>12}{'longest gap':>13}{'until shown':>13}")
    for pairs, samples in results.items():
        opened, gap, shown = (statistics.median(values) for values in zip(*samples, strict=True))
        print(
            f"{pairs:>8}{pairs * 8 / 1024:>6.0f} KB{opened * 1000:>10.0f}ms"
            f"{gap * 1000:>11.0f}ms{shown * 1000:>11.0f}ms"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
