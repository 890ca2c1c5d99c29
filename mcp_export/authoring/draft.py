"""Draft a tool from a sentence: the authoring model proposes it, ``validate`` decides.

The model is asked (``authoring.exchange``) for the whole tool in agent-file terms, answered in
:data:`DRAFT_SCHEMA`: name, description, parameters (a JSON Schema with types, required, enums,
defaults, examples and descriptions), the prompt template (optional parameters in sections), an
output schema when the sentence asks for data, and 3 to 6 test cases (typical, edge, one that
must fail, one caller case). The draft is then checked as the agent file would be with it added
(``draft_check``). A draft with problems gets **one repair turn** in the same conversation, with
every located message; a second draft with problems is refused, quoting them. Never half a tool:
the outcome holds a tool that passed, or none.

Nothing is written here: the CLI (``metaagent draft --write``) and the studio (Accept) add an
accepted draft themselves.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from mcp_export.authoring.draft_check import MAX_CASES, MIN_CASES, draft_problems, tool_data
from mcp_export.authoring.exchange import AuthoringConversation, AuthoringModel
from schema_types.agent import ToolDefinition

if TYPE_CHECKING:
    from mcp_export.history.store import HistoryStore
    from mcp_export.protocol_log import ProtocolLog
    from schema_types.agent import Agent

__all__ = [
    "DRAFT_SCHEMA",
    "DraftOutcome",
    "draft_tool",
    "draft_user_prompt",
]

_CASE_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "name": {"type": "string", "minLength": 1},
        "arguments": {"type": "object"},
        "ask": {"type": "string"},
        "expect": {"type": "object"},
    },
    "required": ["name", "expect"],
}

DRAFT_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "name": {"type": "string", "pattern": "^[A-Za-z0-9_.-]{1,128}$"},
        "description": {"type": "string", "minLength": 1},
        "parameters": {"type": "object"},
        "prompt": {"type": "string", "minLength": 1},
        "outputSchema": {"type": ["object", "null"]},
        "tests": {
            "type": "array",
            "items": _CASE_SCHEMA,
            "minItems": MIN_CASES,
            "maxItems": MAX_CASES,
        },
    },
    "required": ["name", "description", "parameters", "prompt", "tests"],
}
"""What the authoring model answers with: one tool in agent-file terms."""

SYSTEM_PROMPT = f"""\
You design MCP tools for a "Tools agent": each tool is a name, a description, a JSON Schema of \
its parameters and a prompt template that the agent's model answers. Answer with one JSON \
object, the whole tool, in the agent file's terms:

- name: letters, digits, '_', '-' or '.', in snake_case, not a name the agent already has.
- description: what the tool does and when a client should call it, one or two sentences.
- parameters: a JSON Schema object: {{"type": "object", "properties": {{...}}, "required": \
[...]}}. Give each property a type and a description; add enum, minimum/maximum, minLength, \
default and examples where they help. Only what the tool really needs is required.
- prompt: the template the agent's model is given. {{name}} inserts a parameter's value; an \
optional parameter goes in a section that is kept only when it has a value: \
{{?name}}...{{name}}...{{/name}}. Use every required parameter. Write {{{{ and }}}} for literal \
braces.
- outputSchema: when the request asks for data (a list, numbers, fields), the JSON Schema of the \
answer (an object); else null, and the tool answers text.
- tests: {MIN_CASES} to {MAX_CASES} test cases, each {{"name": ..., "arguments": {{...}}, \
"expect": {{...}}}} with unique names: one typical call; an edge case (a bound of a range, \
optional parameters left out); one call that must fail, with "expect": {{"isError": true}} \
(e.g. a required argument missing or out of range); one caller case with "ask" (a request in \
words a person would type) and no "arguments". Expectations: contains (strings the answer must \
hold), notContains, matches (a regular expression), isError; for a tool with an outputSchema, \
fields: {{"/json/pointer": {{"equals"|"oneOf"|"atLeast"|"atMost"|"matches": ...}}}}. Keep \
expectations loose enough that a good answer passes.
"""


def draft_user_prompt(agent: Agent, sentence: str) -> str:
    """What the model is asked: the sentence, with the agent it is for."""
    existing = ", ".join(t.name for t in agent.tools) or "none yet"
    about = agent.metadata.description or "(no description)"
    return (
        f"Draft a tool for this request:\n{sentence.strip()}\n\n"
        f"The agent: {agent.metadata.name}: {about}\nIts tools: {existing}."
    )


def repair_prompt(problems: Sequence[str]) -> str:
    """The repair turn: every message, and what to do."""
    listed = "\n".join(f"- {problem}" for problem in problems)
    return (
        "The draft does not pass validation:\n"
        f"{listed}\n"
        "Answer again with the whole corrected tool as JSON only."
    )


@dataclass(frozen=True)
class DraftOutcome:
    """What drafting gave.

    Attributes:
        tool: the drafted tool when it passed validation; None when refused.
        data: its agent-file data (None when refused).
        problems: why the last draft was refused (located messages); empty when accepted.
        error: why no draft came at all (the model failed, or answered outside the schema
            after its repair), None otherwise.
        repaired: whether the draft needed its repair turn.
        model: the authoring model (``provider:model``).
        thread_id: the History thread of the exchange (None when not recorded).
    """

    tool: ToolDefinition | None
    data: dict[str, Any] | None
    problems: tuple[str, ...] = ()
    error: str | None = None
    repaired: bool = False
    model: str = ""
    thread_id: str | None = None
    drafts: tuple[Mapping[str, Any], ...] = field(default=())

    @property
    def ok(self) -> bool:
        """Whether a tool may be offered."""
        return self.tool is not None

    def refusal(self) -> str:
        """Why nothing is offered, as a person reads it ("" when a tool is)."""
        if self.tool is not None:
            return ""
        if self.error is not None:
            return f"the authoring model ({self.model}) gave no draft: {self.error}"
        listed = "\n".join(f"  {problem}" for problem in self.problems)
        return (
            f"the authoring model ({self.model}) drafted a tool that does not pass validation, "
            f"even after one repair turn; nothing was added:\n{listed}"
        )


async def draft_tool(
    agent: Agent,
    sentence: str,
    model: AuthoringModel,
    *,
    history: HistoryStore | None = None,
    agent_path: str | None = None,
    protocol_log: ProtocolLog | None = None,
) -> DraftOutcome:
    """Ask ``model`` for a tool ``sentence`` describes, for ``agent``; check it; repair once.

    The conversation is recorded in History (a thread titled ``draft a tool: …``) and the
    protocol log when given. Never raises for the model's failures: they are the outcome's
    ``error``. The model's provider is closed at the end.
    """
    agent_data = agent.to_data()
    conversation = AuthoringConversation(
        model,
        system=SYSTEM_PROMPT,
        schema=DRAFT_SCHEMA,
        schema_name="tool_draft",
        title=f"draft a tool: {sentence.strip()}",
        history=history,
        agent_path=agent_path,
        protocol_log=protocol_log,
    )
    drafts: list[Mapping[str, Any]] = []
    question = draft_user_prompt(agent, sentence)
    async with conversation:
        for attempt in range(2):
            answer = await conversation.ask(question)
            if not answer.ok or not isinstance(answer.value, Mapping):
                return DraftOutcome(
                    None,
                    None,
                    error=answer.error or "the answer is not a JSON object",
                    repaired=attempt > 0,
                    model=model.label,
                    thread_id=conversation.thread_id,
                    drafts=tuple(drafts),
                )
            data = tool_data(answer.value)
            drafts.append(data)
            problems = draft_problems(agent_data, data)
            if not problems:
                return DraftOutcome(
                    ToolDefinition.model_validate(data),
                    data,
                    repaired=attempt > 0,
                    model=model.label,
                    thread_id=conversation.thread_id,
                    drafts=tuple(drafts),
                )
            question = repair_prompt(problems)
    return DraftOutcome(
        None,
        None,
        problems=tuple(problems),
        repaired=True,
        model=model.label,
        thread_id=conversation.thread_id,
        drafts=tuple(drafts),
    )
