"""Improve a tool from its failures: the authoring model proposes one change, checked and re-run.

:func:`suggest_fix` gives the authoring model the tool, its failed cases with their answers and
failed expectations, and asks for one change (which field, its new text, the reason). The change
is applied to a copy of the agent and must pass the same checks as ``metaagent validate``; an
invalid one gets one repair turn with the problems, then :class:`FixRefused` quoting them. The
:class:`Fix` carries the changed agent and the unified diff of the agent file's text (the
round-trip save of each agent, so the diff is exactly what saving would change). Nothing is
written: :func:`rerun` runs the chosen cases on the changed agent, and :func:`compare` gives each
model's pass rate before → after, with every cell that passed before and fails now (a
regression) first.
"""

from __future__ import annotations

import difflib
import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, cast

from mcp_export.authoring.exchange import AuthoringConversation, AuthoringModel
from mcp_export.errors import ExportError
from mcp_export.testing.callers.runner import CallerOptions
from mcp_export.testing.run import (
    CaseResult,
    MatrixResult,
    OnResult,
    run_matrix,
    select_cases,
)
from schema_types.agent import Agent, ToolDefinition
from schema_types.agent_checks import check_agent_data
from schema_types.files.agent_file import text_for_save

if TYPE_CHECKING:
    from mcp_export.history.store import HistoryStore
    from mcp_export.protocol_log import ProtocolLog

__all__ = [
    "FIELDS",
    "PROPOSAL_SCHEMA",
    "Comparison",
    "Fix",
    "FixRefused",
    "Proposal",
    "apply_proposal",
    "compare",
    "comparison_lines",
    "failed_results",
    "fix_conversation",
    "rerun",
    "rerun_cases",
    "suggest_fix",
]

Field = Literal["description", "prompt", "parameters", "systemPrompt"]
FIELDS: tuple[Field, ...] = ("description", "prompt", "parameters", "systemPrompt")

PROPOSAL_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "field": {"enum": list(FIELDS)},
        "text": {"type": "string"},
        "reason": {"type": "string", "minLength": 1},
    },
    "required": ["field", "text", "reason"],
    "additionalProperties": False,
}

SYSTEM = (
    "You improve one tool of an MCP agent whose test cases fail. The tool's model answers each "
    "call from the prompt template (its {parameters} filled in) under the system prompt. "
    "Propose exactly ONE change that makes the failed cases pass without breaking the others: "
    "field is description (the tool's description), prompt (the whole new template), "
    "parameters (the whole new JSON Schema of the parameters, as JSON text) or systemPrompt "
    "(the whole new system prompt). text is the field's whole new value; reason says in one or "
    "two sentences why it fixes the failures. Answer with the JSON object only."
)


class FixRefused(ExportError):
    """The authoring model's change was invalid twice (or unanswerable); ``problems`` says why."""

    def __init__(self, problems: Sequence[str]) -> None:
        self.problems = list(problems)
        listing = "; ".join(self.problems)
        super().__init__(
            "no fix is offered: the authoring model's change was still invalid after one "
            f"repair turn ({listing}); edit the tool yourself or ask again"
        )


@dataclass(frozen=True)
class Proposal:
    """One change: ``field`` of the tool (or the agent's ``systemPrompt``), its new ``text``."""

    field: Field
    text: str
    reason: str


@dataclass(frozen=True)
class Fix:
    """A checked change, not yet applied to any file.

    Attributes:
        tool: the tool improved.
        proposal: what the model proposed.
        agent: the agent with the change.
        before: the agent file's text without the change (as a save would write it).
        after: its text with the change.
        diff: the unified diff from ``before`` to ``after``.
        repaired: the first proposal was invalid and this is the repair.
    """

    tool: str
    proposal: Proposal
    agent: Agent
    before: str
    after: str
    diff: str
    repaired: bool = False


def failed_results(matrix: MatrixResult, tool: str) -> list[CaseResult]:
    """The failed runs of ``tool``'s cases, in the order run."""
    return [r for r in matrix.results if r.tool == tool and not r.passed]


def _tool(agent: Agent, name: str) -> ToolDefinition:
    found = agent.metadata.tool(name)
    if found is None:
        raise ExportError(f"the agent has no tool named {name!r}")
    return found


def _brief(agent: Agent, tool: ToolDefinition, failed: Sequence[CaseResult]) -> str:
    cases = {c.name: c for c in tool.tests}
    parts = [
        f"Tool {tool.name}",
        f"description: {tool.description}",
        f"parameters: {json.dumps(tool.parameters, ensure_ascii=False)}",
        f"prompt template:\n{tool.prompt}",
        f"system prompt:\n{agent.system_prompt or '(none)'}",
        "Failed cases:",
    ]
    for result in failed:
        case = cases.get(result.case)
        arguments = json.dumps(case.arguments if case else None, ensure_ascii=False)
        parts.append(f"- case {result.case} on {result.model}, arguments {arguments}")
        parts.append(f"  answer: {result.outcome.text[:1000]}")
        parts += [f"  failed: {failure}" for failure in result.failures]
    return "\n".join(parts)


def apply_proposal(agent: Agent, tool: str, proposal: Proposal) -> Agent:
    """The agent with ``proposal`` applied (``agent`` itself is unchanged).

    Raises:
        ExportError: the change does not pass validation; the message lists every problem.
    """
    data = agent.to_data()
    if proposal.field == "systemPrompt":
        data["systemPrompt"] = proposal.text
    else:
        tools = cast("list[dict[str, Any]]", data["metadata"]["tools"])
        target = next(t for t in tools if t.get("name") == tool)
        if proposal.field == "parameters":
            try:
                value: Any = json.loads(proposal.text)
            except ValueError as exc:
                raise ExportError(f"parameters: the new schema is not JSON ({exc})") from None
            if not isinstance(value, dict):
                raise ExportError("parameters: the new schema is not a JSON object")
            target["parameters"] = value
        else:
            target[proposal.field] = proposal.text
    changed, problems = check_agent_data(data, None)
    if changed is None:
        raise ExportError("; ".join(f"{p.path or 'the agent'}: {p.detail}" for p in problems))
    return changed


def _diff(before: str, after: str, path: Path) -> str:
    lines = difflib.unified_diff(
        before.splitlines(keepends=True),
        after.splitlines(keepends=True),
        fromfile=f"{path.name} (now)",
        tofile=f"{path.name} (with the fix)",
        n=2,
    )
    return "".join(line if line.endswith("\n") else line + "\n" for line in lines)


def fix_conversation(
    model: AuthoringModel,
    tool: str,
    failed: Sequence[CaseResult],
    *,
    history: HistoryStore | None = None,
    agent_path: str | None = None,
    protocol_log: ProtocolLog | None = None,
) -> AuthoringConversation:
    """The conversation :func:`suggest_fix` asks in (recorded in ``history`` and the log)."""
    count = len({(r.case, r.model) for r in failed})
    return AuthoringConversation(
        model,
        system=SYSTEM,
        schema=PROPOSAL_SCHEMA,
        schema_name="tool_fix",
        title=f"improve {tool}: {count} failed case{'s' * (count != 1)}",
        history=history,
        agent_path=agent_path,
        protocol_log=protocol_log,
    )


async def suggest_fix(
    agent: Agent,
    path: Path,
    tool: str,
    failed: Sequence[CaseResult],
    conversation: AuthoringConversation,
) -> Fix:
    """Ask the authoring model (in ``conversation``, from :func:`fix_conversation`) for one
    change that fixes ``failed`` (runs of ``tool``'s cases).

    Raises:
        FixRefused: the proposal was invalid twice: no answer in the schema, a changed agent
            that does not validate, or no change at all.
        ExportError: ``tool`` is not a tool of the agent.
    """
    question = _brief(agent, _tool(agent, tool), failed)
    problems: list[str] = []
    for turn in range(2):
        answer = await conversation.ask(question)
        try:
            if not answer.ok:
                raise ExportError(answer.error or "the authoring model gave no answer")
            value = cast("dict[str, Any]", answer.value)
            proposal = Proposal(
                cast("Field", value["field"]), str(value["text"]), str(value["reason"])
            )
            changed = apply_proposal(agent, tool, proposal)
            before, after = text_for_save(agent, path), text_for_save(changed, path)
            if before == after:
                raise ExportError(f"{proposal.field}: the new text is the same as the old")
        except ExportError as exc:
            problems.append(str(exc))
            question = f"Your change was refused: {exc}\nAnswer again with one valid change."
            continue
        diff = _diff(before, after, path)
        return Fix(tool, proposal, changed, before, after, diff, repaired=turn > 0)
    raise FixRefused(problems)


def rerun_cases(matrix: MatrixResult, tool: str, selected: Iterable[str] = ()) -> list[str]:
    """The cases to re-run: those ``selected`` (default every failed case of ``tool``) and every
    case of ``tool`` that passed before on some model, in the matrix's order."""
    chosen = set(selected) or {r.case for r in failed_results(matrix, tool)}
    passed = {r.case for r in matrix.results if r.tool == tool and r.passed}
    return [c for t, c in matrix.cases if t == tool and (c in chosen or c in passed)]


async def rerun(
    fix: Fix,
    path: Path,
    before: MatrixResult,
    cases: Sequence[str],
    *,
    on_result: OnResult | None = None,
) -> MatrixResult:
    """Run ``cases`` of the fixed tool on the changed agent, on ``before``'s models."""
    chosen = [(t, c) for t, c in select_cases(fix.agent, tool=fix.tool) if c.name in cases]
    return await run_matrix(
        fix.agent,
        path,
        chosen,
        models=before.models,
        repeat=before.repeat,
        callers=CallerOptions(models=tuple(before.caller_models)),
        on_result=on_result,
    )


@dataclass(frozen=True)
class Rate:
    """Cells that passed (every attempt) out of those run, on one model."""

    passed: int
    total: int

    def __str__(self) -> str:
        return f"{self.passed}/{self.total}"


@dataclass(frozen=True)
class Comparison:
    """Before → after over the re-run cells.

    Attributes:
        rates: each model's ``(before, after)``.
        regressions: ``(case, model)`` cells that passed before and fail now.
        fixed: cells that failed before and pass now.
        still_failing: cells that failed before and still do.
    """

    tool: str
    rates: dict[str, tuple[Rate, Rate]] = field(
        default_factory=lambda: dict[str, tuple[Rate, Rate]]()
    )
    regressions: list[tuple[str, str]] = field(default_factory=lambda: list[tuple[str, str]]())
    fixed: list[tuple[str, str]] = field(default_factory=lambda: list[tuple[str, str]]())
    still_failing: list[tuple[str, str]] = field(default_factory=lambda: list[tuple[str, str]]())


def _cell_passed(matrix: MatrixResult, tool: str, case: str, model: str) -> bool | None:
    runs = matrix.cell(tool, case, model)
    return all(r.passed for r in runs) if runs else None


def compare(before: MatrixResult, after: MatrixResult, tool: str) -> Comparison:
    """Each model's pass rate over the cells ``after`` ran, before and after, and the cells
    that changed."""
    result = Comparison(tool)
    counts: dict[str, list[int]] = {}
    for t, case in after.cases:
        for model in after.columns(t, case):
            old = _cell_passed(before, t, case, model)
            new = _cell_passed(after, t, case, model)
            if old is None or new is None:
                continue
            tally = counts.setdefault(model, [0, 0, 0])
            tally[0] += old
            tally[1] += new
            tally[2] += 1
            if old and not new:
                result.regressions.append((case, model))
            elif new and not old:
                result.fixed.append((case, model))
            elif not new:
                result.still_failing.append((case, model))
    for model, (old_n, new_n, total) in counts.items():
        result.rates[model] = (Rate(old_n, total), Rate(new_n, total))
    return result


def comparison_lines(comparison: Comparison) -> list[str]:
    """The comparison as lines of text: regressions first, then fixes, then each model's rate."""
    tool = comparison.tool
    lines = [f"REGRESSED  {tool} / {case}  {model}" for case, model in comparison.regressions]
    lines += [f"FIXED      {tool} / {case}  {model}" for case, model in comparison.fixed]
    lines += [f"STILL FAIL {tool} / {case}  {model}" for case, model in comparison.still_failing]
    for model, (old, new) in comparison.rates.items():
        lines.append(f"{model}: {old} → {new} passed")
    return lines
