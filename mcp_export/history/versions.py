"""Reading a tool's versions from the case runs: each version's figures, and what it is made of.

A case run records the fingerprint of the tool's version it ran and the decisive fields behind
it (``case_runs.fingerprint`` and ``version``, ``versions/fingerprint.py``). The figures are
summed in the database, grouped by fingerprint over the index ``case_runs_by_version``; the
median time is the middle run (or the mean of the two middle runs) of each version, found here
from the times read in the index's order (a window function ranking them makes the database sort
every run, several times slower).

A version's served calls (``runs`` with its fingerprint, of the agent's threads, that ended)
add their count and cost, so what a version cost counts every call of it History recorded: a
case run's own served call is the case run's, counted once (its thread is the case run's).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from itertools import groupby
from operator import itemgetter
from typing import Any

from mcp_export.history.sql import Connection, dicts

__all__ = ["ServedFigures", "VersionFigures", "stored_version", "version_figures"]

_WHERE = "WHERE agent_path = ? AND tool_name = ? AND fingerprint IS NOT NULL"

_FIGURES = f"""
SELECT fingerprint, count(*) AS runs, sum(passed) AS passed,
    min(created_at) AS first_at, max(created_at) AS last_at,
    sum(tokens_in) AS tokens_in, count(tokens_in) AS tokens_in_known,
    sum(tokens_out) AS tokens_out, count(tokens_out) AS tokens_out_known,
    sum(cost_usd) AS cost_usd, count(cost_usd) AS cost_known,
    max(cost_at_least) AS cost_at_least, min(model) AS model, count(DISTINCT model) AS models
FROM case_runs {_WHERE}
GROUP BY fingerprint
"""

_SERVED = """
SELECT r.fingerprint AS fingerprint, count(*) AS calls, sum(r.cost_usd) AS cost_usd,
    count(r.cost_usd) AS cost_known, max(r.cost_at_least) AS cost_at_least
FROM runs AS r JOIN threads AS t ON t.id = r.thread_id
WHERE t.agent_key = ? AND r.tool_name = ? AND r.fingerprint IS NOT NULL
    AND r.status <> 'pending'
    AND NOT EXISTS (SELECT 1 FROM case_runs AS c WHERE c.thread_id = r.thread_id)
GROUP BY r.fingerprint
"""

_TIMES = f"""
SELECT fingerprint, duration_ms FROM case_runs {_WHERE} AND duration_ms IS NOT NULL
ORDER BY fingerprint
"""


def _medians(conn: Connection, where: tuple[str, str]) -> dict[str, float]:
    """The median time of each version that has a timed run."""
    rows = conn.execute(_TIMES, where).fetchall()
    medians: dict[str, float] = {}
    for fingerprint, group in groupby(rows, key=itemgetter(0)):
        times = sorted(float(row[1]) for row in group)
        middle = len(times) // 2
        odd = len(times) % 2 == 1
        medians[fingerprint] = times[middle] if odd else (times[middle - 1] + times[middle]) / 2
    return medians


@dataclass(frozen=True)
class VersionFigures:
    """The case runs of one version of a tool, summed.

    Attributes:
        fingerprint: the version.
        runs: case runs of it.
        passed: those that passed.
        first_at, last_at: when the first and the last of them was recorded (epoch seconds).
        tokens_in, tokens_out: the sums of the counts that are known (None: none is).
        tokens_in_known, tokens_out_known: how many runs have a count.
        cost_usd: the sum of the costs that are known (None: none is).
        cost_known: how many runs have a cost.
        cost_at_least: a known cost is a lower bound.
        median_ms: the median time of a run (None: no run has a time).
        model: the model (the first by name when the version was run on several).
        served: its served calls that are not case runs' (count and cost; see the module doc).
    """

    fingerprint: str
    runs: int
    passed: int
    first_at: float
    last_at: float
    tokens_in: int | None
    tokens_in_known: int
    tokens_out: int | None
    tokens_out_known: int
    cost_usd: float | None
    cost_known: int
    cost_at_least: bool
    median_ms: float | None
    model: str
    served: ServedFigures | None = None


@dataclass(frozen=True)
class ServedFigures:
    """The served calls of one version that ended, summed (the cost as in ``VersionFigures``)."""

    calls: int
    cost_usd: float | None
    cost_known: int
    cost_at_least: bool


def version_figures(conn: Connection, agent_path: str, tool_name: str) -> list[VersionFigures]:
    """Each version of ``tool_name`` of the agent at ``agent_path`` (its key), newest first (by
    its last run)."""
    where = (agent_path, tool_name)
    medians = _medians(conn, where)
    served = {
        row["fingerprint"]: ServedFigures(
            calls=int(row["calls"]),
            cost_usd=None if row["cost_usd"] is None else float(row["cost_usd"]),
            cost_known=int(row["cost_known"]),
            cost_at_least=bool(row["cost_at_least"]),
        )
        for row in dicts(conn.execute(_SERVED, where))
    }
    found = [
        VersionFigures(
            fingerprint=row["fingerprint"],
            runs=int(row["runs"]),
            passed=int(row["passed"] or 0),
            first_at=float(row["first_at"]),
            last_at=float(row["last_at"]),
            tokens_in=None if row["tokens_in"] is None else int(row["tokens_in"]),
            tokens_in_known=int(row["tokens_in_known"]),
            tokens_out=None if row["tokens_out"] is None else int(row["tokens_out"]),
            tokens_out_known=int(row["tokens_out_known"]),
            cost_usd=None if row["cost_usd"] is None else float(row["cost_usd"]),
            cost_known=int(row["cost_known"]),
            cost_at_least=bool(row["cost_at_least"]),
            median_ms=medians.get(row["fingerprint"]),
            model=str(row["model"]),
            served=served.get(row["fingerprint"]),
        )
        for row in dicts(conn.execute(_FIGURES, where))
    ]
    return sorted(found, key=lambda v: (v.last_at, v.fingerprint), reverse=True)


def stored_version(
    conn: Connection, agent_path: str, tool_name: str, fingerprint: str
) -> dict[str, Any] | None:
    """What the version ``fingerprint`` of the tool is made of, as recorded; None when no run
    recorded it."""
    rows = conn.execute(
        f"SELECT version FROM case_runs {_WHERE} AND fingerprint = ? AND version IS NOT NULL "
        "ORDER BY id DESC LIMIT 1",
        (agent_path, tool_name, fingerprint),
    )
    row = rows.fetchone()
    if row is None:
        return None
    data = json.loads(row[0])
    return data if isinstance(data, dict) else None
