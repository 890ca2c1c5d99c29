"""Asking a model whether an answer meets a test case's ``judge`` criterion.

The judge is a plain chat (no tools) with its own short system prompt; its reply must be one
JSON object ``{"pass": true|false, "reason": "…"}`` (a Markdown fence around it is allowed).
A reply that is not a verdict, or a judge model that fails, fails the expectation with the
reason, so a broken judge never passes a case.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from mcp_export.providers.base import Provider
from mcp_export.session.chat import ChatSession, run_to_result
from schema_types.agent import Agent

__all__ = ["JUDGE_SYSTEM_PROMPT", "Verdict", "judge_answer", "judge_prompt", "parse_verdict"]

JUDGE_SYSTEM_PROMPT = (
    "You check one answer of an AI tool against one criterion. Judge only the criterion, "
    'strictly. Reply with nothing but a JSON object: {"pass": true or false, "reason": '
    '"one short sentence"}.'
)

# When the reply is more than the object: how many ``"pass"`` keys are looked at, and how much
# white space may stand between one and its ``{``.
_KEYS = 16
_GAP = 32


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
    """The verdict in a judge's reply; a failed one saying why when there is none.

    The verdict is the text from the reply's first ``{`` to its last ``}`` when that is a JSON
    object with a boolean ``pass``; else the first of a few ``{"pass": …}`` objects that parses.
    Time linear in the reply's length; a reply nested too deeply to read has no verdict.
    """
    data = _object_at(reply, reply.find("{"), reply.rfind("}") + 1)
    if not _is_verdict(data):
        decoder = json.JSONDecoder()
        for start in _verdict_starts(reply):
            try:
                data = decoder.raw_decode(reply, start)[0]
            except (json.JSONDecodeError, RecursionError):
                continue
            if _is_verdict(data):
                break
    if _is_verdict(data):
        reason = data.get("reason")
        return Verdict(data["pass"], reason if isinstance(reason, str) else "")
    flat = " ".join(reply[:480].split())[:120]
    return Verdict(False, f'the judge did not reply with a verdict ({{"pass": …}}): "{flat}"')


def _verdict_starts(reply: str) -> Iterator[int]:
    """Where ``{"pass"`` (white space allowed after the brace) stands in ``reply``, among its
    first :data:`_KEYS` ``"pass"`` keys."""
    key = reply.find('"pass"')
    for _ in range(_KEYS):
        if key < 0:
            return
        window = max(0, key - _GAP)
        before = reply[window:key].rstrip()
        if before.endswith("{"):
            yield window + len(before) - 1
        key = reply.find('"pass"', key + 1)


def _object_at(reply: str, start: int, end: int) -> Any:
    if start < 0 or end <= start:
        return None
    try:
        return json.loads(reply[start:end])
    except (json.JSONDecodeError, RecursionError):
        return None


def _is_verdict(data: Any) -> bool:
    return isinstance(data, dict) and isinstance(data.get("pass"), bool)


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
