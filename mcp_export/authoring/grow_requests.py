"""Grow a tool's caller cases with the authoring model: requests in words a person would type.

One question to the authoring model (``authoring/exchange.py``) with the tool's name,
description and parameters asks for paraphrases of what the tool is for (each a caller case
whose ``expect.picks`` is the tool) and requests meant for another tool a client offers beside it
(each a caller case with ``picks: none``: the caller must not call ours). The answer is checked
against :data:`REQUESTS_SCHEMA` by the exchange; empty and repeated requests, and requests an
existing caller case already asks, are left out.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

from mcp_export.authoring.exchange import AuthoringConversation
from mcp_export.authoring.grow import GrowError, Proposal, unique_proposals
from schema_types.cases import Expectations, TestCase

if TYPE_CHECKING:
    from mcp_export.authoring.exchange import AuthoringModel
    from mcp_export.history.store import HistoryStore
    from mcp_export.protocol_log import ProtocolLog
    from schema_types.agent import ToolDefinition

__all__ = ["REQUESTS_SCHEMA", "request_proposals"]

_LIST = {"type": "array", "items": {"type": "string"}, "maxItems": 8}
REQUESTS_SCHEMA = {
    "type": "object",
    "properties": {"paraphrases": _LIST, "decoys": _LIST},
    "required": ["paraphrases", "decoys"],
    "additionalProperties": False,
}

_SYSTEM = (
    "You write test requests for a tool that an AI assistant can call over MCP. A request is "
    "what a person would type to the assistant, in their own words, never naming the tool. "
    "Answer in JSON with paraphrases (requests this tool is the right answer to, varied in "
    "wording and detail) and decoys (requests close to its subject that another common tool, "
    "such as a calendar, mail, web search or files, should answer instead, not this one)."
)

_NAME_WORDS = 6


def _question(tool: ToolDefinition, count: int) -> str:
    parameters = json.dumps(tool.parameters, ensure_ascii=False)
    return (
        f"The tool is {tool.name}: {tool.description}\nIts parameters (JSON Schema): "
        f"{parameters}\nWrite {count} paraphrases and {count} decoys."
    )


def _name(prefix: str, request: str) -> str:
    words = request.split()
    short = " ".join(words[:_NAME_WORDS]) + ("…" if len(words) > _NAME_WORDS else "")
    return f"{prefix}: {short}"


async def request_proposals(
    tool: ToolDefinition,
    model: AuthoringModel,
    *,
    count: int = 3,
    history: HistoryStore | None = None,
    agent_path: str | None = None,
    protocol_log: ProtocolLog | None = None,
) -> list[Proposal]:
    """Caller cases in words from the authoring model: paraphrases, then decoy requests.

    Raises:
        GrowError: the model gave no answer in the schema (the message says why).
    """
    conversation = AuthoringConversation(
        model,
        system=_SYSTEM,
        schema=REQUESTS_SCHEMA,
        schema_name="caller_requests",
        title=f"grow cases: {tool.name}",
        history=history,
        agent_path=agent_path,
        protocol_log=protocol_log,
    )
    async with conversation:
        answer = await conversation.ask(_question(tool, count))
    if not answer.ok:
        raise GrowError(f"the authoring model ({model.label}) gave no requests: {answer.error}")
    asked = {c.ask.strip().casefold() for c in tool.tests if c.ask is not None}
    out: list[Proposal] = []
    for key, kind, picks, prefix in (
        ("paraphrases", "paraphrase", tool.name, "asks"),
        ("decoys", "decoy", "none", "not for us"),
    ):
        for request in answer.value.get(key, []):
            text = " ".join(str(request).split())
            if not text or text.casefold() in asked:
                continue
            asked.add(text.casefold())
            case = TestCase(name=_name(prefix, text), ask=text, expect=Expectations(picks=picks))
            why = f"must call {tool.name}" if picks != "none" else f"must not call {tool.name}"
            out.append(Proposal("requests", kind, case, why))
    return unique_proposals(tool, out)
