"""Whether a drafted tool may be offered: the project's ``validate`` of the agent with the tool
added, and the cases a draft must bring.

The agent check is the one every load makes (``schema_types.agent_checks.check_agent_data``:
types, names, the parameters and output schemas, each case's expectations) plus the template
analysis ``metaagent validate`` warns about (``warnings_for``: unknown placeholders, sections,
required parameters the prompt never uses); a draft has to be clean of both. On top, what a draft
promises: 3 to 6 cases, among them one that must fail (``expect.isError: true``), one caller case
(``ask``), ordinary cases whose arguments the parameters accept, and, when the tool has optional
parameters, an ordinary case that leaves one out.

Every message starts with the path in the drafted tool it is about (``parameters.properties.
count.minimum``, ``prompt``, ``tests[2].arguments``), so the model and the author can find it.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from schema_types.agent import ToolDefinition
from schema_types.agent_checks import check_agent_data
from schema_types.agent_warnings import warnings_for
from schema_types.arguments import validate_arguments
from schema_types.errors import ArgumentsError, SchemaDefinitionError

__all__ = ["MAX_CASES", "MIN_CASES", "draft_problems", "tool_data"]

MIN_CASES = 3
MAX_CASES = 6

_TOOL_KEYS = ("name", "title", "description", "parameters", "prompt", "outputSchema", "tests")


def tool_data(draft: Mapping[str, Any]) -> dict[str, Any]:
    """The drafted tool as agent-file data (its keys in the file's order; an empty or null
    ``outputSchema`` or ``title`` left out)."""
    data: dict[str, Any] = {}
    for key in _TOOL_KEYS:
        value = draft.get(key)
        if key in ("outputSchema", "title") and not value:
            continue
        if value is not None:
            data[key] = value
    return data


def draft_problems(agent_data: Mapping[str, Any], tool: Mapping[str, Any]) -> list[str]:
    """What keeps ``tool`` (agent-file data) from being added to the agent whose file data is
    ``agent_data``; [] when it may be offered.

    Args:
        agent_data: the agent's file data as it is (``Agent.to_data()``).
        tool: the drafted tool.
    """
    metadata = dict(agent_data.get("metadata") or {})
    tools = list(metadata.get("tools") or [])
    index = len(tools)
    metadata["tools"] = [*tools, dict(tool)]
    data = {**agent_data, "metadata": metadata}
    prefix = f"metadata.tools[{index}]"
    agent, located = check_agent_data(data, None)
    problems = [_relative(p.path, prefix) + f": {p.detail}" for p in located]
    if agent is None:
        return problems or ["the draft is not a tool the agent file can hold"]
    problems += [
        _relative(w.split(": ", 1)[0], prefix) + ": " + w.split(": ", 1)[1]
        for w in warnings_for(agent)
        if w.startswith(prefix)
    ]
    problems += _case_problems(agent.tools[index])
    return problems


def _relative(path: str, prefix: str) -> str:
    """``metadata.tools[3].parameters.x`` → ``parameters.x``; the tool itself → ``(the tool)``."""
    if path == prefix:
        return "(the tool)"
    if path.startswith(prefix):
        return re.sub(r"^\.", "", path[len(prefix) :])
    return path or "(the agent)"


def _case_problems(tool: ToolDefinition) -> list[str]:
    cases = tool.tests
    found: list[str] = []
    if not MIN_CASES <= len(cases) <= MAX_CASES:
        found.append(f"tests: has {len(cases)} cases; write {MIN_CASES} to {MAX_CASES}")
    if not any(case.expect.is_error for case in cases):
        found.append(
            "tests: no case must fail; add one whose call must fail (expect: {isError: true}), "
            "e.g. with a required argument missing or out of range"
        )
    if not any(case.is_caller_case for case in cases):
        found.append(
            "tests: no caller case; add one with ask (a request in words a person would type) "
            "and no arguments"
        )
    ordinary = [
        (i, case)
        for i, case in enumerate(cases)
        if not case.is_caller_case and not case.expect.is_error
    ]
    if not ordinary:
        found.append("tests: no ordinary case; add a typical call that must succeed")
    for i, case in ordinary:
        try:
            validate_arguments(tool.parameters, case.arguments)
        except ArgumentsError as exc:
            listed = "; ".join(f"{p.path or '(arguments)'}: {p.message}" for p in exc.problems)
            found.append(
                f"tests[{i}].arguments: the parameters refuse them ({listed}); fix them, or "
                "make the case one that must fail (expect: {isError: true})"
            )
        except SchemaDefinitionError:
            pass  # the parameters schema itself is reported above
    optional = _optional_names(tool.parameters)
    if optional and ordinary and all(optional <= set(case.arguments) for _, case in ordinary):
        names = ", ".join(sorted(optional))
        found.append(
            f"tests: every ordinary case gives every optional parameter ({names}); add an edge "
            "case that leaves one out"
        )
    return found


def _optional_names(parameters: Mapping[str, Any]) -> set[str]:
    properties = parameters.get("properties")
    if not isinstance(properties, Mapping):
        return set()
    required = parameters.get("required")
    needed = set(required) if isinstance(required, list) else set()
    return {str(name) for name in properties if name not in needed}
