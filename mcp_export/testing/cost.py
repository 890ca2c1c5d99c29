"""What test-case runs cost: each run's served call at its model's price, summed per cell.

A run's cost is its served call's tokens (the trace's usage) at the price of the model that
served it (a caller case's: the served model, not the caller model; the caller's and the
judge's own requests are not counted). A ``maxCost`` expectation fails when the cost is above
it, unknown, or only known as a lower bound that does not prove it held.
"""

from __future__ import annotations

from collections.abc import Sequence

from mcp_export.costs.cost import CellCost, Cost, format_usd
from mcp_export.costs.prices import PriceTable
from mcp_export.testing.callers.runner import CallerResult
from mcp_export.testing.case import CaseResult
from mcp_export.testing.expect import CallOutcome, Failure

__all__ = ["cell_cost", "cost_failure", "outcome_cost", "run_cost", "served_model"]


def served_model(result: CaseResult) -> str:
    """The model that served ``result``'s call (a caller case's ``served_model``)."""
    if isinstance(result, CallerResult) and result.served_model:
        return result.served_model
    return result.model


def outcome_cost(prices: PriceTable, model: str, outcome: CallOutcome) -> Cost:
    """What the call ``outcome`` reports cost on ``model``."""
    return prices.cost(
        model, outcome.input_tokens, outcome.output_tokens, partial=outcome.tokens_partial
    )


def run_cost(prices: PriceTable, result: CaseResult) -> Cost:
    """What one run cost."""
    return outcome_cost(prices, served_model(result), result.outcome)


def cell_cost(prices: PriceTable, results: Sequence[CaseResult]) -> CellCost:
    """The cost of ``results`` (a cell's runs, or any runs)."""
    return CellCost.of(Cost.total(run_cost(prices, r) for r in results), len(results))


def cost_failure(limit: float | None, cost: Cost) -> Failure | None:
    """The ``maxCost`` failure of a run that cost ``cost``; None when it held (or no limit)."""
    if limit is None:
        return None
    most = format_usd(limit)
    if cost.usd is None:
        return Failure("maxCost", f"the cost is unknown ({cost.why}), at most {most} expected")
    if cost.usd > limit:
        return Failure("maxCost", f"cost {cost.text()}, at most {most} expected")
    if cost.at_least:
        return Failure(
            "maxCost",
            f"cost {cost.text()} is a lower bound ({cost.why}): it cannot show that at most "
            f"{most} held",
        )
    return None
