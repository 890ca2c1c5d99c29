"""What a served call cost: its model requests' tokens at the price of the model that served it.

The price table is the one a test run uses (``costs.prices.price_table``: Preferences'
``prices.yaml`` with the agent file's ``settings.prices`` over it), read once per served agent;
the cost is ``costs.cost.call_cost``'s, the rule every view uses. A call answered by the
client's own model (MCP sampling) costs this server nothing it knows of: unknown. A total whose
token counts are lower bounds (a request did not report its counts) is a lower bound.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass

from mcp_export.costs.cost import Cost
from mcp_export.costs.prices import PricesError, PriceTable, price_table
from mcp_export.providers.base import Usage
from schema_types.agent import Agent

__all__ = ["SAMPLED", "CallPricing", "agent_pricing"]

logger = logging.getLogger(__name__)

SAMPLED = Cost(None, why="the calling client's model answered (MCP sampling): no price is known")


@dataclass(frozen=True)
class CallPricing:
    """How a call's cost is reckoned: the price table and the model it is looked up for.

    Attributes:
        prices: the price table in effect.
        model: ``provider:model`` as the table names it; None: the client's model answered.
    """

    prices: PriceTable
    model: str | None

    def cost(self, usage: Usage) -> Cost:
        """What model requests with these token totals cost."""
        if self.model is None:
            return SAMPLED
        partial = usage.input_partial or usage.output_partial
        return self.prices.cost(
            self.model, usage.input_tokens, usage.output_tokens, partial=partial
        )

    def sampled(self) -> CallPricing:
        """The pricing of a call the client's model answered."""
        return CallPricing(self.prices, None)


def agent_pricing(agent: Agent) -> CallPricing:
    """The pricing of ``agent``'s calls on its own model (an unreadable price table of
    Preferences is logged and left out: the agent file's prices alone)."""
    try:
        prices = price_table(agent)
    except PricesError as exc:
        logger.warning("%s; only the agent file's prices are used", exc)
        prices = price_table(agent, {})
    return CallPricing(prices, agent.settings.model or None)
