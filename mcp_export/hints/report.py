"""The static report over served agents: each tool's hints and what its listing costs in tokens.

The token counts are made over the server's own ``tools/list`` entries
(:meth:`ServedTool.listing <mcp_export.server.tools.ServedTool.listing>`, built by
:func:`~mcp_export.server.tools.build_catalogue` as ``metaagent serve`` builds them, with the
same ``--prefix`` naming), shaped by the SDK's own result serializer for protocol
:data:`WIRE_VERSION` and written as compact JSON, as the wire carries them. The whole
list's count is of the ``tools`` array as one text (tokens merge across the entries' joins, so it
is not quite the sum). A client re-encodes the list for its model (its own tool format, often
without ``outputSchema``), and other models' tokenizers count differently: the counts say what
the list weighs and where (description, ``inputSchema``, ``outputSchema``), not what a given
client bills.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from mcp_export.errors import ConfigurationError
from mcp_export.hints.checks import Hint, name_collisions, says_when_to_use, tool_hints
from mcp_export.hints.tokens import TOKENIZER, count_tokens
from mcp_export.server.tools import ServedAgent, ServedTool, build_catalogue
from schema_types.agent import Agent, ToolDefinition

__all__ = [
    "WIRE_VERSION",
    "HintsReport",
    "TokenCost",
    "ToolReport",
    "agent_report",
    "build_report",
]

WIRE_VERSION = "2025-11-25"
"""The protocol version whose ``tools/list`` shape is counted (the newest one negotiated by
``initialize``, which today's clients speak)."""


@dataclass(frozen=True, slots=True)
class TokenCost:
    """What one tool's ``tools/list`` entry costs, in tokens.

    Attributes:
        entry: the whole entry (name, title, description, schemas, annotations).
        description: its description alone.
        input_schema: its ``inputSchema`` alone.
        output_schema: its ``outputSchema`` alone (0 when it has none).
    """

    entry: int
    description: int
    input_schema: int
    output_schema: int


@dataclass(frozen=True, slots=True)
class ToolReport:
    """The report on one tool.

    Attributes:
        name: the name it is served under (with ``--prefix``: ``agent-slug__tool``).
        tool: its name in the agent file.
        agent_file: the agent file it comes from (for an unsaved agent: its name).
        description_chars: the description's length in characters (surrounding blanks aside).
        description_words: its length in words.
        says_when: whether the description says when to use the tool (a heuristic).
        hints: what to improve, in the order description, parameters, prompt, name.
        tokens: what its listing costs; None when tokens were not counted or the list cannot
            be built (see :attr:`HintsReport.problem`).
    """

    name: str
    tool: str
    agent_file: Path | None
    description_chars: int
    description_words: int
    says_when: bool
    hints: tuple[Hint, ...]
    tokens: TokenCost | None


@dataclass(frozen=True, slots=True)
class HintsReport:
    """The report on every tool served together.

    Attributes:
        tools: one report per tool, in listing order.
        list_tokens: what the whole ``tools`` list costs; None when not counted.
        tokenizer: the encoding that counted (``o200k_base``).
        problem: why the list cannot be served as it stands (a tool name clash, a conversation
            tool with its own ``conversation_id``…); None when it can.
    """

    tools: tuple[ToolReport, ...]
    list_tokens: int | None
    tokenizer: str
    problem: str | None

    def hint_count(self) -> int:
        """How many hints all tools have together."""
        return sum(len(tool.hints) for tool in self.tools)

    def as_json(self) -> dict[str, Any]:
        """The report as JSON-ready data (camelCase keys, as the agent file spells them)."""
        return {
            "tokenizer": self.tokenizer,
            "listTokens": self.list_tokens,
            "problem": self.problem,
            "tools": [_tool_json(tool) for tool in self.tools],
        }


def _tool_json(tool: ToolReport) -> dict[str, Any]:
    tokens = tool.tokens
    return {
        "name": tool.name,
        "tool": tool.tool,
        "agentFile": None if tool.agent_file is None else str(tool.agent_file),
        "description": {
            "chars": tool.description_chars,
            "words": tool.description_words,
            "saysWhenToUse": tool.says_when,
        },
        "tokens": None
        if tokens is None
        else {
            "entry": tokens.entry,
            "description": tokens.description,
            "inputSchema": tokens.input_schema,
            "outputSchema": tokens.output_schema,
        },
        "hints": [{"code": h.code, "where": h.where, "message": h.message} for h in tool.hints],
    }


def _wire_entries(entries: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """``entries`` as the SDK puts them on the wire for :data:`WIRE_VERSION`: checked against
    the protocol's ``ListToolsResult`` and dumped in its field order (the order changes the
    count: tokens merge across neighbouring keys).

    Raises:
        pydantic.ValidationError: an entry does not fit the protocol's ``Tool``.
    """
    # Loaded here: the protocol's types take half a second to import, which neither the CLI's
    # other commands nor the studio's start should pay.
    from mcp_types.methods import serialize_server_result

    dumped = serialize_server_result("tools/list", WIRE_VERSION, {"tools": entries})
    tools: list[dict[str, Any]] = dumped["tools"]
    return tools


def _refused(exc: ValidationError, listed: Sequence[ServedTool]) -> str:
    """What the protocol's schema refuses first, named by tool: ``tool 'x': inputSchema.type:
    Input should be 'object'``."""
    prefix = "the tool list does not pass the MCP schema of tools/list"
    errors = exc.errors()
    if not errors:
        return f"{prefix}: {exc}"
    first = errors[0]
    loc = list(first["loc"])
    where = ""
    if len(loc) >= 2 and loc[0] == "tools" and isinstance(loc[1], int) and loc[1] < len(listed):
        where = f"tool {listed[loc[1]].name!r}: "
        loc = loc[2:]
    path = ".".join(str(part) for part in loc)
    more = f" (and {len(errors) - 1} more)" if len(errors) > 1 else ""
    return f"{prefix}: {where}{path}: {first['msg']}{more}"


def _wire(value: Any) -> str:
    """``value`` as the wire carries it: compact JSON, non-ASCII text as it is."""
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def build_report(
    agents: Sequence[ServedAgent], *, prefix: bool = False, count: bool = True
) -> HintsReport:
    """The report over ``agents`` served together.

    Args:
        agents: the agent files, as ``metaagent serve`` would be given them.
        prefix: name tools ``<agent-slug>__<tool>`` (``serve --prefix``).
        count: count tokens (loads the tokenizer on first use).
    """
    problem: str | None = None
    served: dict[int, ServedTool] = {}
    try:
        catalogue = build_catalogue(agents, prefix=prefix)
    except ConfigurationError as exc:
        problem = str(exc)
    else:
        served = {id(tool.definition): tool for tool in catalogue.values()}

    entries: list[dict[str, Any]] = []
    costs: dict[int, TokenCost] = {}
    if count and problem is None:
        listed = list(served.values())
        try:
            entries = _wire_entries([one.listing(None) for one in listed])
        except ValidationError as exc:
            problem = _refused(exc, listed)
            listed = []
        outputs: dict[str, int] = {}  # most tools share one output schema: counted once
        for one, entry in zip(listed, entries, strict=True):
            output = _wire(entry["outputSchema"]) if "outputSchema" in entry else ""
            if output not in outputs:
                outputs[output] = count_tokens(output)
            costs[id(one.definition)] = TokenCost(
                entry=count_tokens(_wire(entry)),
                description=count_tokens(entry.get("description") or ""),
                input_schema=count_tokens(_wire(entry["inputSchema"])),
                output_schema=outputs[output],
            )

    definitions = [(owner, tool) for owner in agents for tool in owner.agent.tools]
    names = [_served_name(served, tool) for _, tool in definitions]
    colliding = {name: group for group in name_collisions(names) for name in group}
    reports = []
    for (owner, tool), name in zip(definitions, names, strict=True):
        hints = tool_hints(tool.description, tool.parameters, tool.prompt)
        group = colliding.get(name)
        if group is not None:
            others = ", ".join(repr(other) for other in group if other != name) or repr(name)
            hints.append(
                Hint(
                    "name-collision",
                    "name",
                    f"tool {name!r} and {others} are the same or differ only by case or "
                    "separators: a model mixes them up; rename so the names differ in words",
                )
            )
        description = tool.description.strip()
        reports.append(
            ToolReport(
                name=name,
                tool=tool.name,
                agent_file=owner.path,
                description_chars=len(description),
                description_words=len(description.split()),
                says_when=says_when_to_use(description),
                hints=tuple(hints),
                tokens=costs.get(id(tool)),
            )
        )
    list_tokens = count_tokens(_wire(entries)) if count and problem is None else None
    return HintsReport(tuple(reports), list_tokens, TOKENIZER, problem)


def _served_name(served: dict[int, ServedTool], tool: ToolDefinition) -> str:
    found = served.get(id(tool))
    return tool.name if found is None else found.name


def agent_report(agent: Agent, path: Path | None = None, *, count: bool = True) -> HintsReport:
    """The report on one agent served alone (the studio's view of the agent it edits).

    Args:
        agent: the agent.
        path: its file (None: not saved yet; named only in problems).
        count: count tokens.
    """
    where = path if path is not None else Path(agent.metadata.name or "agent")
    return build_report([ServedAgent(agent, where)], count=count)
