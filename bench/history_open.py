"""Opening the History tab, and filtering it, over a history of 1 000 to 100 000 runs.

Run: ``.venv/bin/python bench/history_open.py [--runs 1000 10000 100000] [--samples 5]``. Prints
a table; exits 0 (1 with ``--check`` when a median is over its goal). Not a test: the figures
depend on the machine.

For each size a real SQLite history is made by the store of the code under test (its schema,
its migrations, its triggers), then filled in bulk with that many runs: served calls, tool tests
with a follow-up turn, CLI calls (each a thread, its run row, its user and assistant messages,
the assistant row inserted ``pending`` and then completed with its token counts, as a session
writes it), a chat without a run for every tenth run, and a fifth of it all under another
agent. Measured, offscreen:

- open: from building the ``HistoryView`` of the agent to the end of the first paint of its
  table (its constructor reads the store, as the main window's History tab does);
- filter: from a keystroke in the search box to the end of the repaint it causes (the table, or
  the line saying that nothing matches or that the search goes on; a keystroke that leaves the
  rows as they were causes none), typing ``oslo`` letter by letter and then ``x`` (``oslox``
  matches nothing, so the whole history is searched); ``--typed tokyo`` types a word said only in
  the follow-ups of one tool test in a thousand (the filter finds it in their messages);
- search done: from the keystroke of ``x`` until the view has searched the whole history (a
  view that searches in slices, between which it repaints, says so with ``model.searching``; one
  that filters at once is done at its repaint).

Goals: open ≤ 150 ms and a filter keystroke ≤ 50 ms with 100 000 runs.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import sqlite3
import statistics
import sys
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from PySide6.QtCore import QEvent, QObject  # noqa: E402
from PySide6.QtTest import QTest  # noqa: E402
from PySide6.QtWidgets import QApplication, QWidget  # noqa: E402

from app.history.view import HistoryView  # noqa: E402
from mcp_export.history.store import HistoryStore  # noqa: E402

OPEN_GOAL_MS = 150.0
FILTER_GOAL_MS = 50.0
AGENT = Path("/bench/travel.agent.yaml")
OTHER = "/bench/other.agent.yaml"
TOOLS = ("book_flight", "find_hotel", "rent_car", "plan_trip", "check_weather")
CITIES = (
    "Oslo", "Rome", "Bergen", "Lisbon", "Paris", "Porto", "Vienna", "Prague", "Madrid", "Dublin",
    "Athens", "Zagreb", "Riga", "Tallinn", "Vilnius", "Krakow", "Seville", "Nice", "Turin", "Bari",
)  # fmt: skip
KINDS = ("served", "served", "served", "tool-test", "call")
CALLERS = {"served": "Claude Desktop 1.2", "tool-test": "Meta Agent Studio (tool test)"}
TYPED = "oslox"


def _fill(path: Path, runs: int) -> None:
    """``runs`` runs (and a chat per ten) written in bulk, a fifth of them under another agent."""
    rng = random.Random(runs)
    pid = os.getpid()
    now = time.time()
    threads: list[tuple[Any, ...]] = []
    run_rows: list[tuple[Any, ...]] = []
    answers: list[tuple[Any, ...]] = []  # (thread, text, tokens in, tokens out, asked, ended)
    for n in range(runs + runs // 10):
        thread = uuid.uuid4().hex
        started = now - (runs + runs // 10 - n) * 60.0
        agent = str(AGENT) if n % 5 else OTHER
        city = rng.choice(CITIES)
        chat = n % 11 == 10
        kind = "chat" if chat else KINDS[n % len(KINDS)]
        tool = rng.choice(TOOLS)
        prompt = f"Please {tool.replace('_', ' ')} for a trip to {city} for {n % 4 + 1} people."
        title = f"Hello, about {city}" if chat else f"{tool}: {prompt}"[:80]
        threads.append((thread, agent, "Travel Desk", title, kind, started, started, pid))
        turns = 2 if kind == "tool-test" else 1
        asked = ended = started
        for turn in range(turns):
            follow_up = "And what about Tokyo?" if n % 1000 == 3 else "And the day after?"
            question = prompt if turn == 0 else follow_up
            ended = asked + rng.uniform(0.5, 6.0)
            tokens = (rng.randint(20, 900), rng.randint(5, 300))
            answers.append((thread, question, *tokens, asked, ended))
            asked = ended + 20.0
        run_end = answers[-turns][5]
        if not chat:
            run_rows.append(
                (
                    thread,
                    tool,
                    json.dumps({"destination": city, "passengers": n % 4 + 1}),
                    prompt,
                    CALLERS.get(kind, "metaagent call"),
                    f"Booked {city}.",
                    (run_end - started) * 1000,
                    started,
                    run_end,
                    pid,
                )
            )
    with HistoryStore(path):
        pass  # the schema, as the code under test makes it
    conn = sqlite3.connect(path, isolation_level=None)
    conn.execute("BEGIN")
    conn.executemany(
        "INSERT INTO threads (id, agent_path, agent_name, title, kind, created_at, updated_at, "
        "writer_pid) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
        threads,
    )
    conn.executemany(
        "INSERT INTO runs (thread_id, tool_name, arguments, filled_prompt, caller, status, "
        "answer, duration_ms, started_at, finished_at, writer_pid) "
        "VALUES (?, ?, ?, ?, ?, 'complete', ?, ?, ?, ?, ?)",
        run_rows,
    )
    for thread, question, tokens_in, tokens_out, asked, ended in answers:
        conn.execute(
            "INSERT INTO messages (thread_id, role, content, status, created_at, updated_at, "
            "writer_pid) VALUES (?, 'user', ?, 'complete', ?, ?, ?)",
            (thread, question, asked, asked, pid),
        )
        cursor = conn.execute(
            "INSERT INTO messages (thread_id, role, content, status, created_at, updated_at, "
            "writer_pid) VALUES (?, 'assistant', '', 'pending', ?, ?, ?)",
            (thread, asked, asked, pid),
        )
        conn.execute(
            "UPDATE messages SET content = ?, status = 'complete', tokens_in = ?, tokens_out = ?, "
            "updated_at = ? WHERE id = ?",
            ("Done, see the booking.", tokens_in, tokens_out, ended, cursor.lastrowid),
        )
    conn.execute("COMMIT")
    conn.close()


class _Paints(QObject):
    """Notes when one of the watched widgets has been painted."""

    def __init__(self, widgets: list[QWidget]) -> None:
        super().__init__()
        self.widgets = widgets
        self.painted = False
        for widget in widgets:
            widget.installEventFilter(self)

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:  # noqa: N802
        if event.type() == QEvent.Type.Paint:
            self.painted = True
        return False

    def wait(self, app: QApplication, *, rounds: int = 1_000) -> None:
        """Process events until a watched widget is painted, or ``rounds`` rounds have passed.

        Bounded by rounds, not time: PySide6 6.12 on Python 3.11 loses a reference to None in
        each ``processEvents`` call, and some twenty thousand calls abort the interpreter.
        """
        for _ in range(rounds):
            app.processEvents()
            if self.painted:
                return


def _settle(app: QApplication) -> None:
    for _ in range(5):
        app.processEvents()


def open_once(app: QApplication, store: HistoryStore) -> tuple[float, HistoryView]:
    started = time.perf_counter()
    view = HistoryView("Travel Desk", AGENT, store)
    view.resize(1280, 720)
    paints = _Paints([view.table.viewport()])
    view.show()
    paints.wait(app)
    elapsed = (time.perf_counter() - started) * 1000
    if not paints.painted:
        raise SystemExit("the table was not painted")
    view.table.viewport().removeEventFilter(paints)
    return elapsed, view


def _searching(view: HistoryView) -> bool:
    return bool(getattr(view.model, "searching", False))


def type_once(app: QApplication, view: HistoryView, typed: str = TYPED) -> list[float]:
    """Times of each keystroke of ``typed`` to its repaint (to the events it caused, when the
    rows shown stay the same), then of the last one to the end of its search; the search box is
    cleared after."""
    times = []
    for letter in typed:
        _settle(app)
        paints = _Paints([view.table.viewport(), view.empty_label])
        started = time.perf_counter()
        QTest.keyClicks(view.search, letter)
        paints.wait(app, rounds=5)
        times.append((time.perf_counter() - started) * 1000)
        for widget in paints.widgets:
            widget.removeEventFilter(paints)
    for _ in range(1_000):
        if not _searching(view):
            break
        app.processEvents()
    times.append((time.perf_counter() - started) * 1000)
    view.search.clear()
    _settle(app)
    return times


def _close(app: QApplication, view: HistoryView) -> None:
    view.close()
    view.deleteLater()
    app.sendPostedEvents(None, QEvent.Type.DeferredDelete)
    app.processEvents()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, nargs="+", default=[1_000, 10_000, 100_000])
    parser.add_argument("--samples", type=int, default=5)
    parser.add_argument("--check", action="store_true", help="exit 1 when over a goal")
    parser.add_argument("--typed", default=TYPED, help="what is typed into the filter")
    options = parser.parse_args()
    app = QApplication.instance() or QApplication([])
    assert isinstance(app, QApplication)
    over = False
    print(f"History tab over a real SQLite history ({REPO}), offscreen; medians, ms")
    typed = [options.typed[: i + 1] for i in range(len(options.typed))] + ["done"]
    print(
        f"{'runs':>8} {'fill s':>7} {'open':>7} {'first':>7} " + "".join(f"{t:>8}" for t in typed)
    )
    with tempfile.TemporaryDirectory() as tmp:
        for runs in options.runs:
            path = Path(tmp) / f"h{runs}" / "history.sqlite3"
            path.parent.mkdir()
            filled = time.perf_counter()
            _fill(path, runs)
            fill_s = time.perf_counter() - filled
            with HistoryStore(path) as store:
                first, view = open_once(app, store)
                _close(app, view)
                opens: list[float] = []
                keys: list[list[float]] = []
                for _ in range(options.samples):
                    elapsed, view = open_once(app, store)
                    opens.append(elapsed)
                    keys.append(type_once(app, view, options.typed))
                    _close(app, view)
            open_ms = statistics.median(opens)
            per_key = [statistics.median(k[i] for k in keys) for i in range(len(typed))]
            cells = "".join(f"{ms:8.1f}" for ms in per_key)
            print(f"{runs:>8} {fill_s:7.1f} {open_ms:7.1f} {first:7.1f} {cells}")
            if runs >= 100_000:
                over = open_ms > OPEN_GOAL_MS or max(per_key[:-1]) > FILTER_GOAL_MS
    print(
        f"goals at 100 000 runs: open ≤ {OPEN_GOAL_MS:.0f} ms, keystroke ≤ {FILTER_GOAL_MS:.0f} ms"
    )
    return 1 if options.check and over else 0


if __name__ == "__main__":
    sys.exit(main())
