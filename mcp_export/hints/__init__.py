"""Description and schema hints, and what the tool list costs a client in tokens.

A static report per served tool (no model runs): how long its description is and whether it says
when to use the tool, parameters without a description, enums whose values are not explained,
names that differ only by case, required parameters the prompt never uses (:mod:`.checks`), and
the tokens its ``tools/list`` entry costs, counted with the bundled ``o200k_base`` vocabulary
(:mod:`.tokens`, loaded on the first count). Not to be confused with the MCP tool annotations
(``readOnlyHint``…), which the protocol also calls hints.
"""

from __future__ import annotations

from mcp_export.hints.checks import Hint, name_collisions, says_when_to_use, tool_hints
from mcp_export.hints.report import HintsReport, TokenCost, ToolReport, agent_report, build_report
from mcp_export.hints.tokens import TOKENIZER, TOKENIZER_NOTE, TokenizerError, count_tokens

__all__ = [
    "TOKENIZER",
    "TOKENIZER_NOTE",
    "Hint",
    "HintsReport",
    "TokenCost",
    "TokenizerError",
    "ToolReport",
    "agent_report",
    "build_report",
    "count_tokens",
    "name_collisions",
    "says_when_to_use",
    "tool_hints",
]
