"""A page of History sorted by a column, over a history of 100 000 runs.

Run: ``.venv/bin/python bench/history_sort.py [--runs 100000] [--samples 7] [--before TREE]``.
Prints a table; not a test (the figures depend on the machine).

The history is ``history_open.py``'s (made by the code under test, filled in bulk: no run has
a cost, so every conversation's cost is unknown and sorts equal, as in a history of a model
without a price). Measured: the first page (100 rows) and the one after it, read by
``conversation_page`` in each order, largest first. With ``--before TREE`` the same pages are
read by TREE's ``mcp_export/history/conversations.py`` too (an order it does not know is left
out), alternating the two for each sample (ABAB…) on the same database; the ratio's spread is
over the samples.
"""

from __future__ import annotations

import argparse
import importlib.util
import sqlite3
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from history_open import AGENT, _fill  # noqa: E402

from mcp_export.history import conversations  # noqa: E402
from mcp_export.history.schema import agent_key  # noqa: E402

ORDERS = ("started", "time", "tokens", "cost", "title")


def _module(tree: Path) -> ModuleType:
    spec = importlib.util.spec_from_file_location(
        "before_conversations", tree / "mcp_export/history/conversations.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclasses look themselves up there
    spec.loader.exec_module(module)
    return module


def _pages(module: ModuleType, conn: sqlite3.Connection, order: str) -> tuple[float, float]:
    page: Callable[..., Any] = module.conversation_page
    query = module.ConversationFilter(agent_key=agent_key(str(AGENT)))
    began = time.perf_counter()
    first = page(conn, query, order=order, limit=100)
    middle = time.perf_counter()
    page(conn, query, order=order, after=first.next, limit=100)
    ended = time.perf_counter()
    return (middle - began) * 1000, (ended - middle) * 1000


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=100_000)
    parser.add_argument("--samples", type=int, default=7)
    parser.add_argument("--before", type=Path, help="a tree to compare with, in the same run")
    args = parser.parse_args()
    sides: dict[str, ModuleType] = {"this": conversations}
    if args.before is not None:
        sides["before"] = _module(args.before)
    path = Path(tempfile.mkdtemp(prefix="history-sort-")) / "h.sqlite3"
    _fill(path, args.runs)
    conn = sqlite3.connect(path)
    times: dict[tuple[str, str], list[tuple[float, float]]] = {}
    for _ in range(args.samples):
        for order in ORDERS:
            for side, module in sides.items():
                if order in module.ORDERS:
                    times.setdefault((side, order), []).append(_pages(module, conn, order))
    conn.close()
    print(f"{args.runs} runs, medians of {args.samples}, ms: first page / next page")
    for order in ORDERS:
        cells = []
        for side in sides:
            found = times.get((side, order))
            if found:
                first = statistics.median(a for a, _ in found)
                after = statistics.median(b for _, b in found)
                cells.append(f"{side} {first:6.1f} / {after:6.1f}")
        ours, before = times.get(("this", order)), times.get(("before", order))
        if ours and before:
            ratios = sorted(a[0] / b[0] for a, b in zip(ours, before, strict=True))
            cells.append(
                f"ratio {statistics.median(ratios):.2f} ({ratios[0]:.2f}–{ratios[-1]:.2f})"
            )
        print(f"{order:8} " + "   ".join(cells))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
