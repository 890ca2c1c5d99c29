"""The price table: what each ``provider:model`` costs, from Preferences and the agent file.

Preferences keep the table in ``prices.yaml`` in the data directory (``mcp_export.paths``), read
by the studio and the CLI alike; it maps each ``provider:model`` to its price, the shape of the
agent file's ``settings.prices`` (:mod:`schema_types.prices`)::

    openai:gpt-4.1-mini: {input: 0.4, output: 1.6, cachedInput: 0.1}
    local:llama3.2: {input: 0, output: 0}

An agent file's entry for a model wins over the one in Preferences.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml
from pydantic import ValidationError

from mcp_export.costs.cost import Cost, call_cost
from mcp_export.errors import ConfigurationError
from mcp_export.paths import data_dir
from schema_types.agent import Agent
from schema_types.prices import ModelPrice

__all__ = [
    "PRICES_FILE",
    "PriceTable",
    "PricesError",
    "load_prices",
    "parse_prices",
    "price_table",
    "prices_path",
    "save_prices",
]

PRICES_FILE = "prices.yaml"


class PricesError(ConfigurationError):
    """The price table of Preferences cannot be read; the message says where and what to fix."""


def prices_path() -> Path:
    """Where Preferences keep the price table."""
    return data_dir() / PRICES_FILE


@dataclass(frozen=True)
class PriceTable:
    """Prices by ``provider:model``."""

    entries: Mapping[str, ModelPrice] = field(default_factory=lambda: dict[str, ModelPrice]())

    def price(self, model: str) -> ModelPrice | None:
        """The price of ``model``, or None when the table does not have it."""
        return self.entries.get(model)

    def cost(
        self,
        model: str,
        input_tokens: int | None,
        output_tokens: int | None,
        *,
        partial: bool = False,
    ) -> Cost:
        """What one call of ``model`` with these token counts cost (``costs.cost.call_cost``)."""
        return call_cost(model, self.price(model), input_tokens, output_tokens, partial=partial)


def load_prices(path: Path | None = None) -> dict[str, ModelPrice]:
    """The price table of Preferences (``prices_path()``); empty when there is no file.

    Raises:
        PricesError: the file is not YAML, not a mapping, or an entry is not a price.
    """
    path = path or prices_path()
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return {}
    except OSError as exc:
        raise PricesError(f"cannot read the price table {path}: {exc.strerror or exc}") from None
    return parse_prices(text, path)


def parse_prices(text: str, path: Path) -> dict[str, ModelPrice]:
    """The price table written in ``text`` (YAML, the shape of ``prices.yaml``; ``path`` names
    it in messages).

    Raises:
        PricesError: the text is not YAML, not a mapping, or an entry is not a price.
    """
    try:
        data: Any = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        raise PricesError(f"the price table {path} is not YAML: {exc}") from None
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise PricesError(
            f"the price table {path} must map provider:model to a price "
            "({input: …, output: …} dollars per million tokens)"
        )
    table: dict[str, ModelPrice] = {}
    for model, entry in data.items():
        try:
            table[str(model)] = ModelPrice.model_validate(entry)
        except ValidationError as exc:
            problems = "; ".join(
                f"{'.'.join(str(p) for p in e['loc']) or 'the entry'}: {e['msg']}"
                for e in exc.errors()
            )
            raise PricesError(
                f"the price table {path} has a bad entry for {model}: {problems} (write "
                "{input: dollars per million input tokens, output: … output tokens})"
            ) from None
    return table


def save_prices(text: str, path: Path | None = None) -> dict[str, ModelPrice]:
    """Check ``text`` (``parse_prices``) and write it as the price table of Preferences, as
    written (its comments kept), atomically; returns the table.

    Raises:
        PricesError: the text is not a price table (nothing is written).
        OSError: the file cannot be written.
    """
    path = path or prices_path()
    table = parse_prices(text, path)
    path.parent.mkdir(parents=True, exist_ok=True)
    temporary = path.with_name(path.name + ".tmp")
    temporary.write_text(text, encoding="utf-8")
    os.replace(temporary, path)
    return table


def price_table(agent: Agent, preferences: Mapping[str, ModelPrice] | None = None) -> PriceTable:
    """The prices a run of ``agent`` uses: ``preferences`` (default: read from Preferences) with
    the agent file's ``settings.prices`` over them.

    Raises:
        PricesError: ``preferences`` is None and the price table of Preferences is unreadable.
    """
    merged = dict(load_prices() if preferences is None else preferences)
    merged.update(agent.settings.prices)
    return PriceTable(merged)
