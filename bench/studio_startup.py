"""Studio start-up: process start → an agent of 1 to 4000 tools painted in the main window,
against a bare PySide6 window measured in the same run.

Run: ``.venv/bin/python bench/studio_startup.py [--runs 9] [--tools 1 10 100 500 4000]``. Prints a
table; exits 0 (1 with ``--check`` when a ratio the goal covers is over it). Not a test: the
figures depend on the machine.

Each sample spawns a fresh interpreter (``QT_QPA_PLATFORM=offscreen``, its own empty
``METAAGENT_HOME``) and times, from just before the spawn, until the child reports: the studio
through its own entry (``app.studio.run_studio`` with the agent file, exactly what ``metaagent
AGENT_FILE`` runs) when the outline paints the agent's rows; the bare window, a ``QMainWindow``
with a label, at its first paint. The child exits right after. The kinds alternate (bare,
studio, bare, studio …), and each studio sample is divided by the bare sample taken right
before it: the table gives the ratio of the medians and the spread of those paired ratios
(median, quartiles, range), so a busy machine shows as a wide spread rather than a wrong
figure. The studio's window paints before a large agent is read (the file is read on a worker
thread); that first paint is reported too, against the bare window likewise. Each child also
reports its CPU time when it painted (all its threads): on a busy machine the wall times wait
for a core, the CPU times much less, so their ratios are printed as well.

The agents are the travel-desk example's four tools repeated with distinct parameters
(``bench/_many_tools.py``). Inside the studio child, ``load_agent`` is timed where the studio
calls it, which splits the studio's time into reading and checking the file (``schema_types``)
and the studio's own share after it: from the agent loaded to its rows painted. Goal: the agent
painted, and the studio's window painted, within 3 × the bare window's first paint (medians)
at 1, 10, 100 and 500 tools; 4000 is reported, not held to it.
"""

from __future__ import annotations

import argparse
import os
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
from _paired import paired_ratios  # noqa: E402

GOAL_RATIO = 3.0
GOAL_SIZES = (1, 10, 100, 500)

# Every child prints "painted …" when its window shows what it is for, and quits: the bare
# window at its first paint; the studio when the outline paints the agent's rows.
BARE = """
import os, sys, time
from PySide6.QtCore import QEvent, QObject
from PySide6.QtWidgets import QApplication, QLabel, QMainWindow

class Watch(QObject):
    def eventFilter(self, watched, event):
        if event.type() == QEvent.Type.Paint:
            print(f"cpu {1000 * time.process_time():.3f}", flush=True)
            print("painted", flush=True)
            os._exit(0)
        return False

app = QApplication(sys.argv[:1])
window = QMainWindow()
window.setCentralWidget(QLabel("Hello"))
watch = Watch()
window.installEventFilter(watch)
window.resize(1200, 780)
window.show()
app.exec()
"""

STUDIO = """
import os, sys, time
import app.studio as studio  # first, as ``metaagent`` imports it: before PySide6
from PySide6.QtCore import QEvent, QObject

import schema_types.files.agent_file as agent_file

marks = {}
real_load = agent_file.load_agent

def timed_load(*args, **kwargs):
    begun = time.perf_counter()
    agent = real_load(*args, **kwargs)
    marks["load"] = (begun, time.perf_counter())
    return agent

agent_file.load_agent = timed_load  # the studio looks it up when it reads the file

class Watch(QObject):
    window = None

    def eventFilter(self, watched, event):
        if event.type() == QEvent.Type.Paint and self.window is not None:
            now = time.perf_counter()
            marks.setdefault("window", now)
            marks.setdefault("window cpu", time.process_time())
            if watched is self.window.outline.viewport() and self.window.documents():
                begun, loaded = marks["load"]
                figures = (now - marks["window"], loaded - begun, now - loaded)
                cpu = (time.process_time(), marks["window cpu"])
                print("cpu", *(f"{1000 * figure:.3f}" for figure in cpu), flush=True)
                print("painted", *(f"{1000 * figure:.3f}" for figure in figures), flush=True)
                os._exit(0)
        return False

watch = Watch()

def on_shown(window):
    watch.window = window
    studio.create_application().installEventFilter(watch)

sys.exit(studio.run_studio(sys.argv[1:], on_shown=on_shown))
"""


class Sample:
    """One child's figures (ms): spawn → painted; for the studio also its window's first paint
    (from the spawn), ``load_agent``'s time, and from the agent loaded to its rows painted; and
    the child's CPU time when it painted (for the studio: its rows, and its window first)."""

    def __init__(
        self,
        total: float,
        agent_after_window: float | None = None,
        load: float | None = None,
        after_load: float | None = None,
    ) -> None:
        self.total, self.load, self.after_load = total, load, after_load
        self.window = None if agent_after_window is None else total - agent_after_window
        self.cpu: float = 0.0
        self.window_cpu: float | None = None


def sample(code: str, args: list[str], home: Path) -> Sample:
    env = dict(os.environ, QT_QPA_PLATFORM="offscreen", METAAGENT_HOME=str(home))
    # An installed program runs from bytecode caches; let the warm-up runs write them even where
    # the shell says not to (some sandboxes set this), or every sample compiles our sources.
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    start = time.perf_counter()
    out = subprocess.run(
        [sys.executable, "-c", code, *args],
        env=env,
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    elapsed = (time.perf_counter() - start) * 1000
    line = next((ln for ln in out.stdout.splitlines() if ln.startswith("painted")), None)
    if line is None:
        raise SystemExit(f"the child never painted (exit {out.returncode}):\n{out.stderr[-2000:]}")
    figures = [float(part) for part in line.split()[1:]]
    result = Sample(elapsed, *figures)
    cpu = next(ln for ln in out.stdout.splitlines() if ln.startswith("cpu")).split()[1:]
    result.cpu = float(cpu[0])
    result.window_cpu = float(cpu[1]) if len(cpu) > 1 else None
    return result


def median(values: list[float | None]) -> float:
    return statistics.median(v for v in values if v is not None)


def main() -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--runs", type=int, default=9)
    parser.add_argument("--tools", type=int, nargs="+", default=[1, 10, 100, 500])
    parser.add_argument("--check", action="store_true", help="exit 1 when over the goal")
    options = parser.parse_args()
    sizes: list[int] = options.tools
    bare: dict[int, list[Sample]] = {size: [] for size in sizes}  # each taken before studio's
    studio: dict[int, list[Sample]] = {size: [] for size in sizes}
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        agents = {size: write_agent(folder, size) for size in sizes}
        home = folder / "home"
        sample(BARE, [], home)  # warm the file cache and the bytecode caches for all
        for size in sizes:
            sample(STUDIO, [str(agents[size])], home)
        for _ in range(options.runs):
            for size in sizes:
                bare[size].append(sample(BARE, [], home))
                studio[size].append(sample(STUDIO, [str(agents[size])], home))
    bare_ms = median([s.total for size in sizes for s in bare[size]])
    print(f"Process start → painted, offscreen, medians of {options.runs} (ms)")
    print(f"  bare PySide6 window, first paint: {bare_ms:.1f}")
    print("  tools  window  agent   ratio   load_agent  loaded→agent  (agent − load_agent)/bare")
    over = False
    spreads: list[str] = []
    for size in sizes:
        samples = studio[size]
        total = median([s.total for s in samples])
        window = median([s.window for s in samples])
        load = median([s.load for s in samples])
        after = median([s.after_load for s in samples])
        base = [s.total for s in bare[size]]
        ratio = total / median(list(base))
        window_ratio = window / median(list(base))
        goal = size in GOAL_SIZES
        over = over or (goal and max(ratio, window_ratio) > GOAL_RATIO)
        mark = "" if not goal else ("  ✓" if ratio <= GOAL_RATIO else "  ✗ over the goal")
        print(
            f"  {size:5d} {window:7.1f} {total:7.1f} {ratio:5.2f} × {load:10.1f} {after:11.1f}"
            f"   {(total - load) / bare_ms:10.2f} ×{mark}"
        )
        windows = [s.window if s.window is not None else s.total for s in samples]
        spreads.append(
            f"  {size:5d}  window {paired_ratios(windows, base)}\n"
            f"         agent  {paired_ratios([s.total for s in samples], base)}"
        )
    print("Paired ratios, each studio sample ÷ the bare window sampled right before it:")
    print("\n".join(spreads))
    bare_cpu = median([s.cpu for size in sizes for s in bare[size]])
    print(f"CPU time of the child when it painted (medians, ms); bare window {bare_cpu:.1f}:")
    for size in sizes:
        samples, base_cpu = studio[size], [s.cpu for s in bare[size]]
        window_cpu = [s.window_cpu if s.window_cpu is not None else s.cpu for s in samples]
        print(
            f"  {size:5d}  window {median(list(window_cpu)):.1f}: "
            f"{paired_ratios(window_cpu, base_cpu)}\n"
            f"         agent  {median([s.cpu for s in samples]):.1f}: "
            f"{paired_ratios([s.cpu for s in samples], base_cpu)}"
        )
    sizes_named = ", ".join(map(str, GOAL_SIZES))
    print(
        f"  goal: window and agent painted within {GOAL_RATIO:.1f} × the bare window at "
        f"{sizes_named} tools"
    )
    return 1 if options.check and over else 0


if __name__ == "__main__":
    sys.exit(main())
