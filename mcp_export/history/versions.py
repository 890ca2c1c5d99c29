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

A version that was served and never run by a case is listed from its served calls alone: no
case run (its pass rate unknown), its time the median of its served calls' times, its tokens and
cost theirs, its first and last run its first and last call; what it is made of is the record
its server kept (``served_versions``; none for calls recorded before schema version 9: its model
is then unknown, and it cannot be compared or restored). A tested version's time and tokens are
its case runs'; its last run is the later of its last case run and its last served call.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, replace
from itertools import groupby
from operator import itemgetter
from typing import Any

from mcp_export.history.sql import Connection, dicts

__all__ = [
    "UNKNOWN_MODEL",
    "ServedFigures",
    "VersionFigures",
    "stored_version",
    "version_figures",
]

UNKNOWN_MODEL = "unknown"
"""The model of a served version whose record is not kept (calls before schema version 9)."""

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

_SERVED_RUNS = """
FROM runs AS r JOIN threads AS t ON t.id = r.thread_id
WHERE t.agent_key = ? AND r.tool_name = ? AND r.fingerprint IS NOT NULL
    AND r.status <> 'pending'
    AND NOT EXISTS (SELECT 1 FROM case_runs AS c WHERE c.thread_id = r.thread_id)"""

_SERVED = f"""
SELECT r.fingerprint AS fingerprint, count(*) AS calls, sum(r.cost_usd) AS cost_usd,
    count(r.cost_usd) AS cost_known, max(r.cost_at_least) AS cost_at_least,
    min(r.started_at) AS first_at, max(coalesce(r.finished_at, r.started_at)) AS last_at,
    sum(r.tokens_in) AS tokens_in, count(r.tokens_in) AS tokens_in_known,
    sum(r.tokens_out) AS tokens_out, count(r.tokens_out) AS tokens_out_known
{_SERVED_RUNS}
GROUP BY r.fingerprint
"""

_SERVED_TIMES = f"""
SELECT r.fingerprint, r.duration_ms {_SERVED_RUNS} AND r.duration_ms IS NOT NULL
    AND r.fingerprint IN ({{marks}})
ORDER BY r.fingerprint
"""

_RECORDS = "SELECT id, version FROM served_versions WHERE id IN ({marks})"

_TIMES = f"""
SELECT fingerprint, duration_ms FROM case_runs {_WHERE} AND duration_ms IS NOT NULL
ORDER BY fingerprint
"""


def _medians(rows: list[Any]) -> dict[str, float]:
    """The median time of each version of ``rows`` (fingerprint, time; in fingerprint order)."""
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
    """The served calls of one version that ended, summed (the cost, the tokens and the times as
    in ``VersionFigures``)."""

    calls: int
    cost_usd: float | None
    cost_known: int
    cost_at_least: bool
    first_at: float = 0.0
    last_at: float = 0.0
    tokens_in: int | None = None
    tokens_in_known: int = 0
    tokens_out: int | None = None
    tokens_out_known: int = 0


def version_figures(conn: Connection, agent_path: str, tool_name: str) -> list[VersionFigures]:
    """Each version of ``tool_name`` of the agent at ``agent_path`` (its key), tested or only
    served, newest first (by its last run)."""
    where = (agent_path, tool_name)
    medians = _medians(conn.execute(_TIMES, where).fetchall())
    served = {row["fingerprint"]: _served(row) for row in dicts(conn.execute(_SERVED, where))}
    found = [
        VersionFigures(
            fingerprint=row["fingerprint"],
            runs=int(row["runs"]),
            passed=int(row["passed"] or 0),
            first_at=float(row["first_at"]),
            last_at=float(row["last_at"]),
            tokens_in=_int(row["tokens_in"]),
            tokens_in_known=int(row["tokens_in_known"]),
            tokens_out=_int(row["tokens_out"]),
            tokens_out_known=int(row["tokens_out_known"]),
            cost_usd=_float(row["cost_usd"]),
            cost_known=int(row["cost_known"]),
            cost_at_least=bool(row["cost_at_least"]),
            median_ms=medians.get(row["fingerprint"]),
            model=str(row["model"]),
            served=served.get(row["fingerprint"]),
        )
        for row in dicts(conn.execute(_FIGURES, where))
    ]
    tested = {figures.fingerprint for figures in found}
    found = [
        replace(figures, last_at=max(figures.last_at, figures.served.last_at))
        if figures.served is not None
        else figures
        for figures in found
    ]
    only_served = sorted(set(served) - tested)
    if only_served:
        found += _only_served(conn, where, {f: served[f] for f in only_served})
    return sorted(found, key=lambda v: (v.last_at, v.fingerprint), reverse=True)


def _int(value: Any) -> int | None:
    return None if value is None else int(value)


def _float(value: Any) -> float | None:
    return None if value is None else float(value)


def _served(row: dict[str, Any]) -> ServedFigures:
    return ServedFigures(
        calls=int(row["calls"]),
        cost_usd=_float(row["cost_usd"]),
        cost_known=int(row["cost_known"]),
        cost_at_least=bool(row["cost_at_least"]),
        first_at=float(row["first_at"]),
        last_at=float(row["last_at"]),
        tokens_in=_int(row["tokens_in"]),
        tokens_in_known=int(row["tokens_in_known"]),
        tokens_out=_int(row["tokens_out"]),
        tokens_out_known=int(row["tokens_out_known"]),
    )


def _only_served(
    conn: Connection, where: tuple[str, str], served: dict[str, ServedFigures]
) -> list[VersionFigures]:
    """The versions no case run ran, from their served calls (see the module doc)."""
    names = list(served)
    marks = ", ".join("?" * len(names))
    times = conn.execute(_SERVED_TIMES.format(marks=marks), (*where, *names)).fetchall()
    medians = _medians(times)
    models: dict[str, str] = {}
    for fingerprint, text in conn.execute(_RECORDS.format(marks=marks), tuple(names)):
        decisive = _decisive(text)
        model = decisive.get("model") if decisive is not None else None
        if isinstance(model, str):
            models[fingerprint] = model
    return [
        VersionFigures(
            fingerprint=fingerprint,
            runs=0,
            passed=0,
            first_at=calls.first_at,
            last_at=calls.last_at,
            tokens_in=None,
            tokens_in_known=0,
            tokens_out=None,
            tokens_out_known=0,
            cost_usd=None,
            cost_known=0,
            cost_at_least=False,
            median_ms=medians.get(fingerprint),
            model=models.get(fingerprint, UNKNOWN_MODEL),
            served=calls,
        )
        for fingerprint, calls in served.items()
    ]


def _decisive(text: str) -> dict[str, Any] | None:
    data = json.loads(text)
    return data if isinstance(data, dict) else None


def stored_version(
    conn: Connection, agent_path: str, tool_name: str, fingerprint: str
) -> dict[str, Any] | None:
    """What the version ``fingerprint`` of the tool is made of, as a case run or its server
    recorded it; None when none did."""
    rows = conn.execute(
        f"SELECT version FROM case_runs {_WHERE} AND fingerprint = ? AND version IS NOT NULL "
        "ORDER BY id DESC LIMIT 1",
        (agent_path, tool_name, fingerprint),
    )
    row = rows.fetchone()
    if row is None:
        # The fingerprint is the hash of the record: whichever agent's server kept it, it is
        # this version's.
        row = conn.execute("SELECT version FROM served_versions WHERE id = ?", (fingerprint,))
        row = row.fetchone()
    if row is None:
        return None
    return _decisive(row[0])
