"""Caller cases in the studio: a case built from a request in words, and the names it gets.

A caller case (``schema_types.cases``) has an ``ask`` instead of arguments: a caller model gets it
with the tool list a client sees, and the case checks which tool it calls (``picks``: None is the
case's own tool, ``none`` none of the agent's) and which arguments it fills (``arguments``: a
subset), before the answer's expectations. The Tests panel's *New caller case* and a chat's
*Save as caller case* both build theirs here and add it with
:func:`app.document.test_cases.add_test_case` (one undo step).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

from app.document.agent_document import AgentDocument
from app.document.test_cases import unique_case_name
from schema_types.agent import ToolDefinition
from schema_types.cases import TestCase

__all__ = ["NONE", "ask_case_name", "is_caller_case", "likely_tool", "new_caller_case"]

NONE = "none"
"""``picks: none``: the caller must call none of the agent's tools."""

_NAME_WORDS = 8
_NAME_LIMIT = 40
_WORD = re.compile(r"[^\W_]{3,}")  # words of three letters or more: "the", "me" say nothing


def is_caller_case(case: TestCase) -> bool:
    """Whether ``case`` starts from a request in words (it has an ``ask``)."""
    return case.ask is not None


def new_caller_case(
    name: str,
    ask: str,
    *,
    picks: str | None = None,
    arguments: Mapping[str, Any] | None = None,
    contains: str | None = None,
) -> TestCase:
    """A caller case for the request ``ask``.

    Args:
        name: its name.
        ask: the request in words, as a person would type it to a client.
        picks: the tool the caller must call (None: the case's own; :data:`NONE`: none of ours).
        arguments: a subset of the arguments the caller must fill (None or empty: any).
        contains: a piece every good answer has (None or blank: no such expectation).
    """
    expect: dict[str, Any] = {}
    if picks is not None:
        expect["picks"] = picks
    if arguments:
        expect["arguments"] = dict(arguments)
    if contains is not None and contains.strip():
        expect["contains"] = [contains.strip()]
    data: dict[str, Any] = {"name": name, "ask": ask}
    if expect:
        data["expect"] = expect
    return TestCase.model_validate(data)


def _words(text: str) -> set[str]:
    return {word.casefold() for word in _WORD.findall(text.replace("_", " "))}


def likely_tool(tools: Sequence[ToolDefinition], ask: str) -> str | None:
    """The tool whose name, title and description share the most words with the request (the
    first of equals; None when none shares one): where a case for it most likely belongs."""
    wanted = _words(ask)
    best, score = None, 0
    for tool in tools:
        found = len(wanted & _words(f"{tool.name} {tool.title or ''} {tool.description}"))
        if found > score:
            best, score = tool.name, found
    return best


def ask_case_name(document: AgentDocument, tool_name: str, ask: str) -> str:
    """A free name from the request's first words, whole words up to 40 characters (``Book me,
    my wife and our 7-year-old to…``), else
    ``Caller case N``."""
    words = ask.split()
    kept: list[str] = []
    for word in words[:_NAME_WORDS]:
        if kept and len(" ".join([*kept, word])) > _NAME_LIMIT:
            break
        kept.append(word)
    summary = " ".join(kept)[:_NAME_LIMIT]
    if summary and (len(kept) < len(words) or len(kept[0]) > _NAME_LIMIT):
        summary = summary.rstrip(" ,.;:") + "…"
    if not summary:
        tool = document.agent.metadata.tool(tool_name)
        summary = f"Caller case {len(tool.tests) + 1 if tool is not None else 1}"
    return unique_case_name(document, tool_name, summary)
