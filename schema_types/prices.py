"""What a model costs: US dollars per million tokens, per ``provider:model``.

Written in the agent file under ``settings.prices`` (and in the price table of Preferences, the
same shape; the agent file's entry wins)::

    settings:
      prices:
        openai:gpt-4.1-mini: {input: 0.4, output: 1.6, cachedInput: 0.1}
        local:llama3.2: {input: 0, output: 0}       # a local model: free, and known to be

A model with no entry has an unknown price: its cost is shown as unknown, never as 0.
"""

from __future__ import annotations

from pydantic import Field

from schema_types.file_model import FileModel

__all__ = ["ModelPrice"]


class ModelPrice(FileModel):
    """The price of one model, US dollars per million tokens.

    Attributes:
        input: per million input (prompt) tokens.
        output: per million output (completion) tokens.
        cached_input: per million input tokens the provider served from its prompt cache, where
            it reports them; None: cached tokens cost as ``input``.
    """

    input: float = Field(ge=0)
    output: float = Field(ge=0)
    cached_input: float | None = Field(default=None, ge=0)
