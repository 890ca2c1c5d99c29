"""Studio start-up: process start → main window painted with the example agent, against a bare
PySide6 window measured in the same run.

Run: ``.venv/bin/python bench/studio_startup.py [--runs 10]``. Prints a table; exits 0 (1 with
``--check`` when the ratio is over the goal). Not a test: the figures depend on the machine.

Each sample spawns a fresh interpreter (``QT_QPA_PLATFORM=offscreen``, its own empty
``METAAGENT_HOME``) and times, from just before the spawn, until the child reports the first
paint of its main window: the studio through ``metaagent``'s own entry (``app.cli.main`` with the
travel-desk example, exactly what ``make studio`` runs), the bare window as a ``QMainWindow`` with a
label. The child exits right after the paint. The two kinds alternate so drift hits both alike.
Goal: the studio's median under 2 × the bare window's.
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
EXAMPLE = REPO / "resources" / "examples" / "travel-desk.agent.yaml"
GOAL_RATIO = 2.0

# Both children print "painted" at the first paint of their main window and quit.
_PAINT_WATCH = """
import os, sys
from PySide6.QtCore import QEvent, QObject, QTimer
from PySide6.QtWidgets import QApplication

class Watch(QObject):
    def eventFilter(self, watched, event):
        if event.type() == QEvent.Type.Paint:
            print("painted", flush=True)
            os._exit(0)
        return False
"""

BARE = (
    _PAINT_WATCH
    + """
from PySide6.QtWidgets import QLabel, QMainWindow
app = QApplication(sys.argv[:1])
window = QMainWindow()
window.setCentralWidget(QLabel("Hello"))
watch = Watch()
window.installEventFilter(watch)
window.resize(1200, 780)
window.show()
app.exec()
"""
)

STUDIO = (
    _PAINT_WATCH
    + """
import app.studio as studio
watch = Watch()

def on_shown(window):
    window.installEventFilter(watch)
    window.update()

sys.exit(studio.run_studio(sys.argv[1:], on_shown=on_shown))
"""
)


def sample(code: str, args: list[str], home: Path) -> float:
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
        timeout=60,
        check=False,
    )
    elapsed = (time.perf_counter() - start) * 1000
    if "painted" not in out.stdout:
        raise SystemExit(f"the child never painted (exit {out.returncode}):\n{out.stderr[-2000:]}")
    return elapsed


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument("--check", action="store_true", help="exit 1 when over the goal")
    options = parser.parse_args()
    bare: list[float] = []
    studio: list[float] = []
    with tempfile.TemporaryDirectory() as tmp:
        home = Path(tmp)
        sample(BARE, [], home)  # warm the file cache and the bytecode caches for both
        sample(STUDIO, [str(EXAMPLE)], home)
        for _ in range(options.runs):
            bare.append(sample(BARE, [], home))
            studio.append(sample(STUDIO, [str(EXAMPLE)], home))
    bare_median, studio_median = statistics.median(bare), statistics.median(studio)
    ratio = studio_median / bare_median
    print(f"Process start → first paint, offscreen, median of {options.runs}")
    print(f"  bare PySide6 window             {bare_median:8.1f} ms")
    print(f"  studio with travel-desk agent   {studio_median:8.1f} ms")
    print(f"  ratio                           {ratio:8.2f} ×   (goal < {GOAL_RATIO:.1f} ×)")
    return 1 if options.check and ratio > GOAL_RATIO else 0


if __name__ == "__main__":
    sys.exit(main())
