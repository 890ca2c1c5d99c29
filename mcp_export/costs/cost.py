"""The cost of a call, and of many: US dollars, or unknown — never a made-up 0.

A cost is unknown when the model's price is not in the table or the model server did not report
a token count. A total over calls of which some are unknown, or whose token counts are lower
bounds (a streamed answer without a usage chunk, ``providers.base.Usage``), is the sum of what
is known and says so: ``≥ $0.0012``. A total of nothing known is unknown.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass

from schema_types.prices import ModelPrice

__all__ = ["UNKNOWN", "CellCost", "Cost", "call_cost", "format_usd"]

_PER = 1_000_000


@dataclass(frozen=True)
class Cost:
    """US dollars spent, or None when unknown.

    Attributes:
        usd: the amount; None: unknown.
        at_least: the amount is a lower bound (a part of it is unknown).
        why: why the cost is unknown or only a lower bound (for a person); "" when exact.
    """

    usd: float | None
    at_least: bool = False
    why: str = ""

    @property
    def known(self) -> bool:
        """Whether there is an amount (exact or a lower bound)."""
        return self.usd is not None

    @classmethod
    def total(cls, costs: Iterable[Cost]) -> Cost:
        """The sum of ``costs``: a lower bound when one is unknown or a lower bound; unknown when
        none is known (or there are none)."""
        amount: float | None = None
        at_least = False
        why = ""
        for cost in costs:
            if cost.usd is None:
                at_least = True
            else:
                amount = (amount or 0.0) + cost.usd
                at_least = at_least or cost.at_least
            why = why or cost.why
        if amount is None:
            return cls(None, why=why or "no call")
        return cls(amount, at_least, why if at_least else "")

    def per_call(self, calls: int) -> Cost:
        """This total spread over ``calls`` calls (unknown for no call)."""
        if self.usd is None or calls < 1:
            return Cost(None, why=self.why or "no call")
        return Cost(self.usd / calls, self.at_least, self.why)

    def scaled(self, factor: float) -> Cost:
        """This cost times ``factor`` (``per_call(n).scaled(100)``: per 100 calls)."""
        return self if self.usd is None else Cost(self.usd * factor, self.at_least, self.why)

    def text(self) -> str:
        """``$0.00123``, ``≥ $0.00123`` or ``unknown``."""
        if self.usd is None:
            return "unknown"
        return ("≥ " if self.at_least else "") + format_usd(self.usd)

    def as_json(self) -> dict[str, object]:
        """``{"usd": number or null, "atLeast": bool}`` (null: unknown, never 0)."""
        data: dict[str, object] = {"usd": self.usd, "atLeast": self.at_least}
        if self.why:
            data["why"] = self.why
        return data


UNKNOWN = Cost(None, why="no price")


@dataclass(frozen=True)
class CellCost:
    """The cost of a cell's runs: all of them, per call and per 100 calls."""

    total: Cost
    per_call: Cost
    per_100: Cost
    calls: int = 1

    @classmethod
    def of(cls, total: Cost, calls: int) -> CellCost:
        """The figures of ``calls`` calls that cost ``total``."""
        per_call = total.per_call(calls)
        return cls(total, per_call, per_call.scaled(100), calls)

    def text(self) -> str:
        """``cost $0.00008 a call, $0.008 per 100 calls`` (``≥`` where a part is unknown);
        for more calls than one, what they cost in all first (``cost $0.00024 in 3 calls:
        …``); ``cost unknown``."""
        if self.per_call.usd is None:
            return "cost unknown"
        each = f"{self.per_call.text()} a call, {self.per_100.text()} per 100 calls"
        if self.calls > 1:
            return f"cost {self.total.text()} in {self.calls} calls: {each}"
        return f"cost {each}"

    def as_json(self) -> dict[str, object]:
        """``{"total", "perCall", "per100Calls"}``, each ``Cost.as_json``."""
        return {
            "total": self.total.as_json(),
            "perCall": self.per_call.as_json(),
            "per100Calls": self.per_100.as_json(),
        }


def call_cost(
    model: str,
    price: ModelPrice | None,
    input_tokens: int | None,
    output_tokens: int | None,
    *,
    partial: bool = False,
) -> Cost:
    """What one call of ``model`` cost at ``price`` (None: not in the price table).

    ``partial``: the token counts are lower bounds. A model priced at 0 for both input and
    output costs 0 whatever it reported.
    """
    if price is None:
        return Cost(None, why=f"no price for {model} (add it to the price table)")
    if price.input == 0 and price.output == 0:
        return Cost(0.0)
    if input_tokens is None or output_tokens is None:
        return Cost(None, why="the model server did not report the token counts")
    usd = (input_tokens * price.input + output_tokens * price.output) / _PER
    if partial:
        return Cost(usd, True, "a model request did not report its token counts")
    return Cost(usd)


def format_usd(amount: float) -> str:
    """``amount`` in dollars with three significant digits below a dollar (``$0.000123``)."""
    if amount == 0:
        return "$0"
    if amount >= 1:
        return f"${amount:,.2f}"
    decimals = max(2, 2 - math.floor(math.log10(amount)))
    return f"${amount:.{decimals}f}"
