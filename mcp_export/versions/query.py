"""The versions of a tool: each with its pass rate, median time, tokens and cost, newest first,
and the difference between any two.

Read from the case runs and served calls History keeps (``history/versions.py``): a version is
a fingerprint of what decides the tool's answer (``versions/fingerprint.py``). Figures follow
the rule of ``costs.cost``: a sum over runs of which some have no count (or no cost) is the sum
of what is known, marked as a lower bound (``≥``); nothing known is unknown, never 0.
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from mcp_export.costs.cost import CellCost, Cost
from mcp_export.errors import ExportError
from mcp_export.history.schema import agent_key
from mcp_export.history.store import HistoryStore
from mcp_export.history.versions import VersionFigures
from mcp_export.versions.fingerprint import Version, version_text

__all__ = [
    "CURRENT",
    "Tokens",
    "UnknownVersion",
    "VersionSummary",
    "tool_versions",
    "version_diff",
]

FINGERPRINT_LENGTH = 64
"""The length of a whole fingerprint (a SHA-256 in hex)."""

CURRENT = "current"
"""The name of the agent file's own version (as it is now) where a version is asked for."""


class UnknownVersion(ExportError):
    """A version named for a diff is not one History has (or is ambiguous); the message lists
    the versions there are."""


@dataclass(frozen=True)
class Tokens:
    """Tokens per call: None unknown; ``at_least`` a lower bound (some runs had no count)."""

    per_call: float | None
    at_least: bool = False

    def text(self) -> str:
        """``≥ 75`` or ``unknown``."""
        if self.per_call is None:
            return "unknown"
        return ("≥ " if self.at_least else "") + f"{self.per_call:.0f}"


@dataclass(frozen=True)
class VersionSummary:
    """One version of a tool with how it did.

    Attributes:
        fingerprint: the version.
        model: its model (part of the version).
        runs: case runs recorded for it (0: a version only served).
        passed: those that passed.
        median_ms: the median time of its case runs, or of its served calls when it has no
            case run (None: unknown).
        tokens: input and output tokens per call (its case runs', or its served calls' when
            it has no case run).
        cost: the cost of its case runs and its other served calls, in all, per call and per
            100 calls.
        served_calls: its served calls that are not case runs' (in ``cost``).
        first_at, last_at: its first and last run.
        current: whether it is the agent file's version as the file is now.
    """

    fingerprint: str
    model: str
    runs: int
    passed: int
    median_ms: float | None
    tokens: Tokens
    cost: CellCost
    first_at: datetime
    last_at: datetime
    current: bool = False
    served_calls: int = 0

    @property
    def short(self) -> str:
        """The first 12 characters of the fingerprint."""
        return self.fingerprint[:12]

    @property
    def pass_rate(self) -> float | None:
        """Passed case runs over case runs; None (unknown) for a version only served."""
        return self.passed / self.runs if self.runs else None

    def passed_text(self) -> str:
        """``3/4 (75%)``, or ``—`` for a version no case ran (unknown, not 0 %)."""
        if self.pass_rate is None:
            return "—"
        return f"{self.passed}/{self.runs} ({self.pass_rate:.0%})"

    def cells(self, last_run: str) -> tuple[str, ...]:
        """The summary as a table's row: current mark, version, model, runs (``4 + 3 served``:
        case runs and other served calls, whose cost is in the cost columns), passed, median,
        tokens, cost per call and per 100 calls, then ``last_run`` (the last run's time as the
        table writes it)."""
        return (
            "*" if self.current else "",
            self.short,
            self.model,
            f"{self.runs} + {self.served_calls} served" if self.served_calls else str(self.runs),
            self.passed_text(),
            "unknown" if self.median_ms is None else f"{self.median_ms:.0f} ms",
            self.tokens.text(),
            self.cost.per_call.text(),
            self.cost.per_100.text(),
            last_run,
        )

    def as_json(self) -> dict[str, Any]:
        """The summary as JSON (nulls are unknown)."""
        return {
            "fingerprint": self.fingerprint,
            "model": self.model,
            "runs": self.runs,
            "passed": self.passed,
            "passRate": self.pass_rate,
            "medianMs": self.median_ms,
            "tokensPerCall": {"tokens": self.tokens.per_call, "atLeast": self.tokens.at_least},
            "cost": self.cost.as_json(),
            "servedCalls": self.served_calls,
            "firstRun": self.first_at.isoformat(),
            "lastRun": self.last_at.isoformat(),
            "current": self.current,
        }


def _summary(figures: VersionFigures, current: set[str]) -> VersionSummary:
    runs = figures.runs
    served = figures.served
    calls = runs + (served.calls if served is not None else 0)
    if runs:  # a tested version: its case runs' tokens, their cost and its served calls'
        tokens = _tokens(
            figures.tokens_in,
            figures.tokens_out,
            runs,
            figures.tokens_in_known,
            figures.tokens_out_known,
        )
        total = _total(figures.cost_usd, figures.cost_known, runs, figures.cost_at_least)
        if served is not None and served.calls:
            total = Cost.total(
                [
                    total,
                    _total(served.cost_usd, served.cost_known, served.calls, served.cost_at_least),
                ]
            )
    else:  # only served: its calls' tokens and cost
        assert served is not None and served.calls
        tokens = _tokens(
            served.tokens_in,
            served.tokens_out,
            served.calls,
            served.tokens_in_known,
            served.tokens_out_known,
        )
        total = _total(served.cost_usd, served.cost_known, served.calls, served.cost_at_least)
    return VersionSummary(
        fingerprint=figures.fingerprint,
        model=figures.model,
        runs=runs,
        passed=figures.passed,
        median_ms=figures.median_ms,
        tokens=tokens,
        cost=CellCost.of(total, calls),
        first_at=datetime.fromtimestamp(figures.first_at, UTC),
        last_at=datetime.fromtimestamp(figures.last_at, UTC),
        current=figures.fingerprint in current,
        served_calls=calls - runs,
    )


def _tokens(
    tokens_in: int | None, tokens_out: int | None, runs: int, in_known: int, out_known: int
) -> Tokens:
    """Tokens per run of ``runs`` runs whose known counts sum to ``tokens_in``, ``tokens_out``."""
    if tokens_in is None or tokens_out is None:
        return Tokens(None)
    return Tokens((tokens_in + tokens_out) / runs, min(in_known, out_known) < runs)


def _total(usd: float | None, known: int, runs: int, at_least: bool) -> Cost:
    """The cost of ``runs`` runs of which ``known`` have a cost, summing to ``usd``."""
    if usd is None:
        return Cost(None, why="no run's cost is known (a price or a token count is missing)")
    partial = known < runs or at_least
    return Cost(usd, partial, "some runs' cost is unknown" if partial else "")


def tool_versions(
    history: HistoryStore,
    agent_path: str | Path,
    tool: str,
    current: Version | None = None,
) -> list[VersionSummary]:
    """The versions of ``tool`` of the agent file at ``agent_path`` that its case runs or its
    served calls recorded, newest first (by their last run); ``current`` (the file's version
    now) is marked."""
    found = history.tool_versions(agent_key(str(agent_path)), tool)
    marked = {current.fingerprint} if current is not None else set[str]()
    return [_summary(figures, marked) for figures in found]


def version_diff(
    history: HistoryStore,
    agent_path: str | Path,
    tool: str,
    old: str,
    new: str,
    current: Version | None = None,
) -> str:
    """The unified diff between two versions of ``tool``, each named by its fingerprint or a
    prefix of it, or ``current`` (the agent file as it is now); "" when they are the same.

    Raises:
        UnknownVersion: a name is not a version History has, or fits more than one.
    """
    key = agent_key(str(agent_path))
    texts: list[tuple[str, str]] = []
    for name in (old, new):
        fingerprint, decisive = _resolve(history, key, tool, name, current)
        texts.append((fingerprint[:12], version_text(decisive)))
    (a_name, a_text), (b_name, b_text) = texts
    lines = difflib.unified_diff(
        a_text.splitlines(keepends=True),
        b_text.splitlines(keepends=True),
        fromfile=a_name,
        tofile=b_name,
    )
    return "".join(lines)


def _resolve(
    history: HistoryStore, key: str, tool: str, name: str, current: Version | None
) -> tuple[str, dict[str, Any]]:
    if name == CURRENT:
        if current is None:
            raise UnknownVersion("there is no current version to compare with")
        return current.fingerprint, current.decisive
    if len(name) == FINGERPRINT_LENGTH:  # a whole fingerprint: its record, without the list
        decisive = history.stored_version(key, tool, name.lower())
        if decisive is not None:
            return name.lower(), decisive
    known = [figures.fingerprint for figures in history.tool_versions(key, tool)]
    fits = [fingerprint for fingerprint in known if fingerprint.startswith(name.lower())]
    listing = ", ".join(f[:12] for f in known) or "none"
    if not name or not fits:
        raise UnknownVersion(
            f"{tool} has no version {name!r} in History (its versions: {listing}; or "
            f"{CURRENT}, the agent file as it is)"
        )
    if len(fits) > 1:
        raise UnknownVersion(
            f"{name!r} fits {len(fits)} versions of {tool} ({', '.join(f[:12] for f in fits)}): "
            "give more of the fingerprint"
        )
    decisive = history.stored_version(key, tool, fits[0])
    if decisive is None:
        raise UnknownVersion(f"History has no record of what version {fits[0][:12]} is made of")
    return fits[0], decisive
