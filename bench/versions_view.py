"""Opening the Versions view of a tool (Agent ▸ Versions of a tool) at 1 000, 10 000 and
100 000 runs, against its query alone.

Run: ``.venv/bin/python bench/versions_view.py [--runs 1000 10000 100000] [--reps 11]``.
Prints a table; exits 1 when the view's median at 10 000 runs is over 150 ms (0 otherwise). Not
a test: the figures depend on the machine.

For each size a real SQLite history file (in a temporary ``METAAGENT_HOME``) is filled as
``bench/versions_query.py`` fills it: that many case runs of the tool over 40 versions, as many
of another tool and of the tool under another agent. The studio's main window (offscreen unless
``QT_QPA_PLATFORM`` says otherwise) has the agent file open, and its history store open.

- view: from triggering the window's *Agent ▸ Versions of a tool* action (as the menu does) to
  the end of the first paint of the view's table showing the tool's 40 rows; Qt's events are
  processed (the view may read off the GUI thread) until then. The tab is closed after each.
- select: then, from a click on the oldest row to the end of the diff pane's paint (the diff of
  that version against the editor's; reported, not compared).
- query: ``versions.query.tool_versions`` on the window's store, the view's own question
  (the baseline, in the same run).

The two take turns (ABAB, which goes first alternates), after one unrecorded warm-up of each;
figures are medians over ``--reps``; the ratio view ÷ query is given per pair
(``bench/_paired.py``: median, quartiles, range). The growth column is the view's median over
the previous size's.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
BENCH = REPO / "bench"
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(BENCH))
os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
HOME = Path(tempfile.mkdtemp(prefix="metaagent-bench-versions-"))
os.environ["METAAGENT_HOME"] = str(HOME)

import yaml  # noqa: E402
from _paired import paired_ratios  # noqa: E402
from PySide6.QtCore import (  # noqa: E402
    QEvent,
    QEventLoop,
    QObject,
    Qt,
    QTimer,
    qInstallMessageHandler,
)
from PySide6.QtTest import QTest  # noqa: E402
from PySide6.QtWidgets import QApplication, QTableView, QWidget  # noqa: E402
from versions_query import TOOL, VERSIONS, _fill  # noqa: E402

from app.window.main_window import MainWindow  # noqa: E402
from mcp_export.history.locations import default_history_path  # noqa: E402
from mcp_export.history.schema import agent_key  # noqa: E402
from mcp_export.versions.query import tool_versions  # noqa: E402

GOAL_MS = 150.0
ROUNDS = 400  # event-loop rounds a sample may take (each waits for an event, ≤ TICK_MS)
TICK_MS = 25


def write_agent(folder: Path) -> Path:
    """The agent whose tool's versions are shown."""
    path = folder / "desk.agent.yaml"
    data = {
        "metadata": {
            "name": "Desk",
            "tools": [
                {
                    "name": TOOL,
                    "parameters": {
                        "type": "object",
                        "properties": {"destination": {"type": "string"}},
                        "required": ["destination"],
                    },
                    "prompt": "Book a flight to {destination}.",
                },
                {"name": "other", "prompt": "Something else."},
            ],
        },
        "settings": {"model": "openai:x"},
    }
    path.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
    return path


class _Painted(QObject):
    """Notes a paint of a widget."""

    def __init__(self, widget: QWidget) -> None:
        super().__init__()
        self.done = False
        widget.installEventFilter(self)

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:  # noqa: N802
        if event.type() == QEvent.Type.Paint:
            self.done = True
        return False


def _until(app: QApplication, done: Callable[[], bool]) -> bool:
    for _ in range(ROUNDS):
        # Waits for the next event (a worker's result, a paint); the ticker bounds each wait.
        app.processEvents(QEventLoop.ProcessEventsFlag.WaitForMoreEvents)
        if done():
            return True
    return False


class _FilledPaint(QObject):
    """Notes the first paint of a table's viewport while its model has ``rows`` rows."""

    def __init__(self, table: QTableView, rows: int) -> None:
        super().__init__()
        self.table = table
        self.rows = rows
        self.done = False
        table.viewport().installEventFilter(self)

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:  # noqa: N802
        if event.type() == QEvent.Type.Paint and self.table.model().rowCount() == self.rows:
            self.done = True
        return False


def open_view(app: QApplication, window: MainWindow) -> tuple[float, float]:
    """Trigger the action, wait for the filled table's paint, then click the oldest row and
    wait for the diff's paint; the two times in ms (the tab closed)."""
    started = time.perf_counter()
    window.versions_action.trigger()
    view = window.tabs.currentWidget()
    table = getattr(view, "table", None)
    if not isinstance(table, QTableView):
        raise SystemExit(f"the action opened {view!r}, not the Versions view")
    watch = _FilledPaint(table, VERSIONS)
    filled = _until(app, lambda: watch.done)
    elapsed = (time.perf_counter() - started) * 1000
    table.viewport().removeEventFilter(watch)
    if not filled:
        shown = table.model().rowCount()
        raise SystemExit(f"the view showed {shown} rows, not {VERSIONS}, within {ROUNDS} rounds")
    diff = getattr(view, "diff")  # noqa: B009
    painted = _Painted(diff.viewport())
    started = time.perf_counter()
    cell = table.visualRect(table.model().index(VERSIONS - 1, 1)).center()
    QTest.mouseClick(table.viewport(), Qt.MouseButton.LeftButton, pos=cell)
    shown_diff = _until(app, lambda: painted.done and diff.toPlainText() != "")
    selected = (time.perf_counter() - started) * 1000
    diff.viewport().removeEventFilter(painted)
    if not shown_diff:
        raise SystemExit("the diff was not shown")
    window.remove_run_tab(view)
    app.sendPostedEvents(None, QEvent.Type.DeferredDelete)
    app.processEvents()
    return elapsed, selected


def query(window: MainWindow, agent: Path) -> float:
    """The view's question alone, on the window's store; ms."""
    store = window.history_store()
    assert store is not None
    started = time.perf_counter()
    found = tool_versions(store, agent, TOOL)
    elapsed = (time.perf_counter() - started) * 1000
    if len(found) != VERSIONS:
        raise SystemExit(f"the query found {len(found)} versions, not {VERSIONS}")
    return elapsed


def measure(
    app: QApplication, runs: int, reps: int
) -> tuple[list[float], list[float], list[float]]:
    """``reps`` pairs (view, query) over a history of ``runs`` runs of the tool, and the
    selections' times."""
    folder = Path(tempfile.mkdtemp(dir=HOME, prefix=f"runs-{runs}-"))
    os.environ["METAAGENT_HOME"] = str(folder / "home")  # a history of its own
    agent = write_agent(folder)
    history = default_history_path()
    history.parent.mkdir(parents=True)
    _fill(history, runs, agent_key(str(agent.resolve())))
    window = MainWindow()
    window.ask_save = lambda _doc: "discard"  # type: ignore[assignment,method-assign]
    window.resize(1280, 800)
    window.show()
    document = window.open_file(agent)
    if document is None:
        raise SystemExit(f"the studio could not open {agent}")
    for _ in range(5):
        app.processEvents()
    views: list[float] = []
    selects: list[float] = []
    queries: list[float] = []
    try:
        open_view(app, window)  # warm-up: imports, the page cache
        query(window, agent)
        for rep in range(reps):
            if rep % 2 == 0:
                view, select = open_view(app, window)
                queries.append(query(window, agent))
            else:
                queries.append(query(window, agent))
                view, select = open_view(app, window)
            views.append(view)
            selects.append(select)
    finally:
        window.close()
        window.close_history_store()
        window.deleteLater()
        app.sendPostedEvents(None, QEvent.Type.DeferredDelete)
        app.processEvents()
    return views, queries, selects


def _quiet(kind: object, context: object, message: str) -> None:
    """Qt's messages, but the offscreen platform's note on every window shown."""
    if "propagateSizeHints" not in message:
        print(message, file=sys.stderr)


def main() -> int:
    qInstallMessageHandler(_quiet)
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, nargs="+", default=[1_000, 10_000, 100_000])
    parser.add_argument("--reps", type=int, default=11)
    options = parser.parse_args()
    app = QApplication.instance() or QApplication([])
    assert isinstance(app, QApplication)
    ticker = QTimer()
    ticker.start(TICK_MS)
    platform = os.environ["QT_QPA_PLATFORM"]
    print(
        f"Versions view of a tool ({VERSIONS} versions), studio window ({platform}), "
        f"{options.reps} pairs, medians in ms; load {os.getloadavg()[0]:.2f}"
    )
    print(f"{'runs':>8} {'view':>8} {'query':>8}  {'view ÷ query':<44} {'growth':>6} {'select':>7}")
    over = False
    previous: float | None = None
    for runs in options.runs:
        views, queries, selects = measure(app, runs, options.reps)
        view, alone = statistics.median(views), statistics.median(queries)
        growth = "" if previous is None else f"{view / previous:.1f}×"
        spread = paired_ratios(views, queries)
        select = statistics.median(selects)
        print(f"{runs:>8} {view:8.1f} {alone:8.1f}  {spread!s:<44} {growth:>6} {select:7.1f}")
        previous = view
        if runs == 10_000 and view > GOAL_MS:
            over = True
    ticker.stop()
    print(f"goal: the view at 10 000 runs ≤ {GOAL_MS:.0f} ms; load {os.getloadavg()[0]:.2f}")
    return 1 if over else 0


if __name__ == "__main__":
    sys.exit(main())
