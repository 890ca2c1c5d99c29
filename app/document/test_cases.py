"""Adding, changing and removing a tool's test cases in an open agent, each one undo step.

Shared by every place that makes a case: the test dialog, a finished chat tab, a History run and
the tool editor's Tests panel. A case is stored under ``metadata.tools[i].tests`` (see
:mod:`schema_types.cases`); names are unique per tool, so a taken name gets `` 2``, `` 3`` …
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from app.document.agent_document import AgentDocument, FieldPath
from schema_types.cases import TestCase

__all__ = [
    "add_test_case",
    "case_path",
    "new_case",
    "remove_test_case",
    "replace_test_case",
    "unique_case_name",
]


def _tool_index(document: AgentDocument, tool_name: str) -> int:
    for index, tool in enumerate(document.agent.metadata.tools):
        if tool.name == tool_name:
            return index
    raise KeyError(f"the agent has no tool named {tool_name!r}")


def case_path(document: AgentDocument, tool_name: str, case_name: str) -> FieldPath | None:
    """The document path of a case (``("metadata", "tools", i, "tests", j)``), or None."""
    try:
        index = _tool_index(document, tool_name)
    except KeyError:
        return None
    tool = document.agent.metadata.tools[index]
    for position, case in enumerate(tool.tests):
        if case.name == case_name:
            return ("metadata", "tools", index, "tests", position)
    return None


def unique_case_name(document: AgentDocument, tool_name: str, wanted: str) -> str:
    """``wanted`` (stripped; ``Case`` when empty), or with `` 2``, `` 3`` … when the tool has it."""
    base = " ".join(wanted.split()) or "Case"
    tool = document.agent.metadata.tool(tool_name)
    taken = {case.name for case in tool.tests} if tool is not None else set()
    if base not in taken:
        return base
    number = 2
    while f"{base} {number}" in taken:
        number += 1
    return f"{base} {number}"


def new_case(
    name: str,
    arguments: Mapping[str, Any],
    *,
    contains: str | None = None,
    is_error: bool = False,
) -> TestCase:
    """A case for ``arguments``; ``contains`` (a piece of a good answer) becomes its expectation,
    ``is_error`` expects the call to fail."""
    expect: dict[str, Any] = {}
    if contains is not None and contains.strip():
        expect["contains"] = [contains.strip()]
    if is_error:
        expect["isError"] = True
    data: dict[str, Any] = {"name": name, "arguments": dict(arguments)}
    if expect:
        data["expect"] = expect
    return TestCase.model_validate(data)


def add_test_case(document: AgentDocument, tool_name: str, case: TestCase) -> str | None:
    """Add ``case`` as the tool's last case, renamed if the name is taken; one undo step.

    Returns:
        The name it was saved under, or None when the agent refused it (reported).
    """
    index = _tool_index(document, tool_name)
    name = unique_case_name(document, tool_name, case.name)
    if name != case.name:
        case = case.model_copy(update={"name": name})
    position = len(document.agent.metadata.tools[index].tests)
    path: FieldPath = ("metadata", "tools", index, "tests", position)
    added = document.insert_item(path, case, text=f"Save test case {name} of {tool_name}")
    return name if added else None


def replace_test_case(
    document: AgentDocument, tool_name: str, case_name: str, case: TestCase, *, merge_id: int = -1
) -> bool:
    """Put ``case`` where the case ``case_name`` is (a rename included); one undo step."""
    path = case_path(document, tool_name, case_name)
    if path is None:
        return False
    if case.name != case_name:
        case = case.model_copy(update={"name": unique_case_name(document, tool_name, case.name)})
    return document.set_field(
        path, case, text=f"Edit test case {case.name} of {tool_name}", merge_id=merge_id
    )


def remove_test_case(document: AgentDocument, tool_name: str, case_name: str) -> bool:
    """Remove the case ``case_name``; one undo step."""
    path = case_path(document, tool_name, case_name)
    if path is None:
        return False
    return document.remove_item(path, text=f"Delete test case {case_name} of {tool_name}")
