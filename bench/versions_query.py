"""The versions of a tool, read from History: how long at 1 000, 10 000 and 100 000 runs.

Run: ``.venv/bin/python bench/versions_query.py [--runs 1000 10000 100000] [--reps 15]``.
Prints a table; exits 0 when the median at 10 000 runs is within 150 ms (1 otherwise). Not a
test: the figures depend on the machine.

For each size, an SQLite history file holds that many runs of the tool over 40 versions: half
case runs (each with a time, tokens and a cost; one in ten with no count and no cost) written
straight into ``case_runs``, half served calls (a thread of kind ``served`` and its ``runs`` row
with the version's fingerprint and a cost) as clients make them; and as many again of another
tool and of another agent (the store's own schema, made by ``HistoryStore``; the served rows go
through its triggers). Measured: ``versions.query.tool_versions`` (the figures summed in the
database, each version's median from its times read in the index's order, and its served calls'
count and cost) on an open store. Baseline, in the same run: the case runs' figures from reading
the agent's case runs (``HistoryStore.case_runs``) and summing them in Python. The two take
turns (which goes first alternates); figures are medians over ``--reps``, and the ratio
(baseline ÷ query) is given as median (min–max) of the pairs.
"""

from __future__ import annotations

import argparse
import random
import sqlite3
import statistics
import sys
import tempfile
import time
import uuid
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from mcp_export.history.schema import agent_key  # noqa: E402
from mcp_export.history.store import HistoryStore  # noqa: E402
from mcp_export.versions.query import tool_versions  # noqa: E402

AGENT = "/bench/desk.agent.yaml"
TOOL = "book_flight"
VERSIONS = 40


def _fill(path: Path, runs: int, agent_path: str = AGENT) -> None:
    """``runs`` runs of ``TOOL`` of the agent keyed ``agent_path`` over ``VERSIONS`` versions
    (half case runs, half served calls), as many of another of its tools and of the tool under
    another agent."""
    with HistoryStore(path):
        pass
    rng = random.Random(7)
    conn = sqlite3.connect(path)
    rows = []
    threads: list[tuple[object, ...]] = []
    served: list[tuple[object, ...]] = []
    cases = runs - runs // 2
    for agent, tool in (
        (agent_path, TOOL),
        (agent_path, "other"),
        ("/bench/other.agent.yaml", TOOL),
    ):
        for n in range(runs // 2):
            thread = uuid.uuid4().hex
            at = 1_700_000_000 + n
            known = n % 10 != 0
            threads.append((thread, agent, agent_key(agent), "Desk", tool, at))
            served.append(
                (
                    thread,
                    tool,
                    rng.uniform(50, 500),
                    at,
                    at + 1,
                    0.00008 if known else None,
                    f"{n * VERSIONS // (runs // 2):064x}",
                )
            )
        for n in range(cases):
            version = n * VERSIONS // cases
            known = n % 10 != 0
            rows.append(
                (
                    "m",
                    agent,
                    "Desk",
                    tool,
                    f"case {n % 7}",
                    "openai:x",
                    1,
                    int(rng.random() < 0.8),
                    "[]",
                    "Booked.",
                    0,
                    rng.uniform(50, 500),
                    20 if known else None,
                    5 if known else None,
                    1,
                    1_700_000_000 + n,
                    1,
                    0.00008 if known else None,
                    0,
                    f"{version:064x}",
                    '{"model": "openai:x"}',
                )
            )
    conn.executemany(
        "INSERT INTO case_runs (matrix_id, agent_path, agent_name, tool_name, case_name, model, "
        "attempt, passed, failures, answer, is_error, duration_ms, tokens_in, tokens_out, turns, "
        "created_at, writer_pid, cost_usd, cost_at_least, fingerprint, version) "
        "VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
        rows,
    )
    conn.executemany(
        "INSERT INTO threads (id, agent_path, agent_key, agent_name, kind, tool_name, title, "
        "created_at, updated_at, writer_pid) VALUES (?, ?, ?, ?, 'served', ?, 'a call', ?, ?, 1)",
        [(*t, t[-1]) for t in threads],
    )
    conn.executemany(
        "INSERT INTO runs (thread_id, tool_name, arguments, filled_prompt, caller, status, "
        "answer, duration_ms, started_at, finished_at, writer_pid, cost_usd, fingerprint) "
        "VALUES (?, ?, '{}', 'Book it.', 'bench', 'complete', 'Booked.', ?, ?, ?, 1, ?, ?)",
        served,
    )
    conn.commit()
    conn.close()


def _query(store: HistoryStore) -> float:
    began = time.perf_counter()
    found = tool_versions(store, AGENT, TOOL)
    assert len(found) == VERSIONS
    return (time.perf_counter() - began) * 1000


def _in_python(store: HistoryStore) -> float:
    began = time.perf_counter()
    groups: dict[str, list[tuple[float, bool, float | None]]] = {}
    for row in store.case_runs(agent_path=AGENT, limit=10_000_000):
        if row.tool_name == TOOL and row.fingerprint is not None:
            groups.setdefault(row.fingerprint, []).append(
                (row.duration_ms or 0.0, row.passed, row.cost_usd)
            )
    figures = {
        key: (
            len(runs),
            sum(p for _, p, _ in runs),
            statistics.median(d for d, _, _ in runs),
            sum(c for _, _, c in runs if c is not None),
        )
        for key, runs in groups.items()
    }
    assert len(figures) == VERSIONS
    return (time.perf_counter() - began) * 1000


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, nargs="+", default=[1000, 10000, 100000])
    parser.add_argument("--reps", type=int, default=15)
    args = parser.parse_args()
    print(f"{'runs of the tool':>16}  {'query ms':>9}  {'python ms':>9}  ratio (min–max)")
    ok = True
    for runs in args.runs:
        with tempfile.TemporaryDirectory() as folder:
            path = Path(folder) / "history.sqlite3"
            _fill(path, runs)
            query: list[float] = []
            python: list[float] = []
            with HistoryStore(path) as store:
                _query(store)  # the first read warms the page cache for both
                for rep in range(args.reps):
                    order = (_query, _in_python) if rep % 2 == 0 else (_in_python, _query)
                    for measure in order:
                        (query if measure is _query else python).append(measure(store))
            ratios = [p / q for p, q in zip(python, query, strict=True)]
            q, p = statistics.median(query), statistics.median(python)
            print(
                f"{runs:>16}  {q:>9.1f}  {p:>9.1f}  {statistics.median(ratios):.1f}× "
                f"({min(ratios):.1f}–{max(ratios):.1f})"
            )
            if runs == 10000 and q > 150:
                ok = False
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
