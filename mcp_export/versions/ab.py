"""A/B: the current agent and an edited variant of it, on the same cases and models, compared.

:func:`run_ab` runs the cases on each model for both, interleaved round by round (A, B, A, B …,
one run of every case a round) so that a model server's drift over the run falls on both alike;
each round is ``run_matrix``'s ordinary path. :func:`compare_ab` turns the two sides' results into
the figures a person weighs before keeping the variant: per model each side's pass rate, median
time, tokens and cost (``testing.cost``), and the tool's version on that model
(``versions.fingerprint``); and per cell each side's passes, the cells whose outcome differs
first.
"""

from __future__ import annotations

import statistics
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from mcp_export.costs.cost import Cost
from mcp_export.costs.prices import PriceTable
from mcp_export.history.store import HistoryStore
from mcp_export.testing.case import CaseResult
from mcp_export.testing.cost import cell_cost
from mcp_export.testing.run import run_matrix
from mcp_export.versions.fingerprint import tool_version
from schema_types.agent import Agent, ToolDefinition
from schema_types.cases import TestCase

__all__ = ["ABResult", "CellComparison", "SideFigures", "compare_ab", "run_ab", "with_template"]

Side = str
"""``A`` (the agent as it is) or ``B`` (the variant)."""


@dataclass(frozen=True)
class SideFigures:
    """One side's runs on one model.

    Attributes:
        runs: how many runs.
        passed: how many passed.
        median_ms: the median wall time of a run (None: no run).
        input_tokens: tokens sent over all runs (None: no run said).
        output_tokens: tokens received over all runs (None: no run said).
        cost: what all runs cost (``Cost``: unknown is never 0).
        version: the short fingerprint of the tools' version on this model ("" when several
            tools: each has its own).
    """

    runs: int
    passed: int
    median_ms: float | None
    input_tokens: int | None
    output_tokens: int | None
    cost: Cost
    version: str = ""

    @property
    def pass_rate(self) -> str:
        """``3/4 (75%)``."""
        if not self.runs:
            return "no run"
        return f"{self.passed}/{self.runs} ({100 * self.passed / self.runs:.0f}%)"


@dataclass(frozen=True)
class CellComparison:
    """One case on one model: each side's passes out of its runs."""

    tool: str
    case: str
    model: str
    a: tuple[int, int]
    b: tuple[int, int]

    @property
    def differs(self) -> bool:
        """Whether the two sides' pass rates differ."""
        (pa, na), (pb, nb) = self.a, self.b
        return pa * nb != pb * na or (na == 0) != (nb == 0)


@dataclass
class ABResult:
    """Both sides' results and figures.

    Attributes:
        models: the models, in the order given.
        figures: ``(model, side)`` → that side's figures.
        cells: every cell, those that differ first.
        results: every run of each side, in the order they finished.
    """

    models: list[str]
    figures: dict[tuple[str, Side], SideFigures]
    cells: list[CellComparison]
    results: dict[Side, list[CaseResult]] = field(default_factory=lambda: {"A": [], "B": []})


def with_template(agent: Agent, tool: str, template: str) -> Agent:
    """A copy of ``agent`` whose ``tool``'s template is ``template`` (the variant B)."""
    tools = [
        t.model_copy(update={"prompt": template}) if t.name == tool else t for t in agent.tools
    ]
    metadata = agent.metadata.model_copy(update={"tools": tools})
    return agent.model_copy(update={"metadata": metadata})


def _figures(results: Sequence[CaseResult], prices: PriceTable, version: str = "") -> SideFigures:
    times = [r.outcome.duration_ms for r in results]
    ins = [r.outcome.input_tokens for r in results if r.outcome.input_tokens is not None]
    outs = [r.outcome.output_tokens for r in results if r.outcome.output_tokens is not None]
    return SideFigures(
        runs=len(results),
        passed=sum(r.passed for r in results),
        median_ms=statistics.median(times) if times else None,
        input_tokens=sum(ins) if ins else None,
        output_tokens=sum(outs) if outs else None,
        cost=cell_cost(prices, results).total,
        version=version,
    )


def _version(agent: Agent, cases: Sequence[tuple[ToolDefinition, TestCase]], model: str) -> str:
    names = {tool.name for tool, _case in cases}
    if len(names) != 1:
        return ""
    tool = next(t for t in agent.tools if t.name in names)
    return tool_version(agent, tool, model).short


def _count(results: Sequence[CaseResult], tool: str, case: str, model: str) -> tuple[int, int]:
    mine = [r for r in results if (r.tool, r.case, r.model) == (tool, case, model)]
    return sum(r.passed for r in mine), len(mine)


def compare_ab(
    a: Agent,
    b: Agent,
    cases: Sequence[tuple[str, str]],
    models: Sequence[str],
    results: dict[Side, list[CaseResult]],
    prices: PriceTable,
) -> ABResult:
    """The figures of both sides' ``results`` (see the module docstring)."""
    figures: dict[tuple[str, Side], SideFigures] = {}
    for side, agent in (("A", a), ("B", b)):
        chosen = [(t, c) for t in agent.tools for c in t.tests if (t.name, c.name) in set(cases)]
        for model in models:
            mine = [r for r in results[side] if r.model == model]
            figures[model, side] = _figures(mine, prices, _version(agent, chosen, model))
    cells = [
        CellComparison(
            tool,
            case,
            model,
            _count(results["A"], tool, case, model),
            _count(results["B"], tool, case, model),
        )
        for model in models
        for tool, case in cases
    ]
    cells.sort(key=lambda cell: not cell.differs)  # stable: the rest keep their order
    return ABResult(list(models), figures, cells, results)


async def run_ab(
    a: Agent,
    b: Agent,
    path: Path,
    cases: Sequence[tuple[str, str]],
    models: Sequence[str],
    prices: PriceTable,
    *,
    rounds: int = 1,
    concurrency: int = 4,
    history: HistoryStore | None = None,
    on_round: Callable[[int, Side], None] | None = None,
) -> ABResult:
    """Run ``cases`` (``(tool, case)`` names in both) on ``models`` for ``a`` and ``b``,
    ``rounds`` times each, interleaved A, B, A, B.

    Args:
        a: the agent as it is.
        b: the variant.
        path: the agent's file (tool server paths start at its folder).
        cases: the cases to run; each must be in both agents.
        models: ``provider:model`` names, at least one.
        prices: the price table the costs are reckoned with.
        rounds: runs of every case on every model per side.
        concurrency: calls in flight at once within a round.
        history: where served calls are recorded (None: nowhere).
        on_round: called before each side's round with (round, side), 1-based.
    """
    wanted = set(cases)
    results: dict[Side, list[CaseResult]] = {"A": [], "B": []}
    for round_ in range(1, max(1, rounds) + 1):
        for side, agent in (("A", a), ("B", b)):
            if on_round is not None:
                on_round(round_, side)
            chosen = [(t, c) for t in agent.tools for c in t.tests if (t.name, c.name) in wanted]
            matrix = await run_matrix(
                agent,
                path,
                chosen,
                models=models,
                concurrency=concurrency,
                history=history,
            )
            results[side] += [_as_attempt(r, round_) for r in matrix.results]
    return compare_ab(a, b, cases, models, results, prices)


def _as_attempt(result: CaseResult, attempt: int) -> CaseResult:
    import dataclasses

    return dataclasses.replace(result, attempt=attempt)
