"""Asking a model whether an answer meets a test case's ``judge`` criterion.

The judge is a plain chat (no tools) with its own short system prompt; its reply must be one
JSON object ``{"pass": true|false, "reason": "…"}`` (a Markdown fence around it is allowed).
A reply that is not a verdict, or a judge model that fails, fails the expectation with the
reason, so a broken judge never passes a case.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from mcp_export.providers.base import Provider
from mcp_export.session.chat import ChatSession, run_to_result
from schema_types.agent import Agent

__all__ = ["JUDGE_SYSTEM_PROMPT", "Verdict", "judge_answer", "judge_prompt"]

JUDGE_SYSTEM_PROMPT = (
    "You check one answer of an AI tool against one criterion. Judge only the criterion, "
    'strictly. Reply with nothing but a JSON object: {"pass": true or false, "reason": '
    '"one short sentence"}.'
)

_OBJECT = re.compile(r"\{.*\}", re.DOTALL)


@dataclass(frozen=True)
class Verdict:
    """What the judge decided.

    Attributes:
        passed: whether the answer meets the criterion.
        reason: the judge's reason, or why there is no usable verdict.
    """

    passed: bool
    reason: str


def judge_prompt(criterion: str, tool_name: str, arguments: Mapping[str, Any], answer: str) -> str:
    """The user message the judge gets."""
    return (
        f"Criterion: {criterion}\n\n"
        f"The tool {tool_name} was called with these arguments:\n"
        f"{json.dumps(arguments, ensure_ascii=False, indent=1)}\n\n"
        f"Its answer:\n<answer>\n{answer}\n</answer>\n\n"
        "Does the answer meet the criterion?"
    )


def parse_verdict(reply: str) -> Verdict:
    """The verdict in a judge's reply; a failed one saying why when there is none."""
    found = _OBJECT.search(reply)
    data: Any = None
    if found is not None:
        try:
            data = json.loads(found.group(0))
        except json.JSONDecodeError:
            data = None
    if isinstance(data, dict) and isinstance(data.get("pass"), bool):
        reason = data.get("reason")
        return Verdict(data["pass"], reason if isinstance(reason, str) else "")
    flat = " ".join(reply.split())[:120]
    return Verdict(False, f'the judge did not reply with a verdict ({{"pass": …}}): "{flat}"')


async def judge_answer(
    agent: Agent,
    provider: Provider,
    model: str,
    *,
    criterion: str,
    tool_name: str,
    arguments: Mapping[str, Any],
    answer: str,
) -> Verdict:
    """Ask ``model`` on ``provider`` whether ``answer`` meets ``criterion``.

    Args:
        agent: the agent under test (its settings give the judge's time limit).
        provider: the judge model's provider.
        model: the judge model's name on it.
        criterion: the case's ``judge`` text.
        tool_name: the tool the answer is from.
        arguments: the call's arguments.
        answer: the answer judged.

    Returns:
        The verdict; a failed one naming the error when the judge model fails.
    """
    judge = agent.model_copy(update={"system_prompt": JUDGE_SYSTEM_PROMPT})
    session = ChatSession(judge, provider=provider, model=model, max_turns=1)
    result = await run_to_result(session, judge_prompt(criterion, tool_name, arguments, answer))
    if result.error is not None:
        return Verdict(False, f"the judge model failed: {result.error}")
    return parse_verdict(result.answer)
