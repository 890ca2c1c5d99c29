"""ToolRef: one tool followed through edits, moves, undo, reloads and removal."""

from __future__ import annotations

from pathlib import Path

from app.document.agent_document import AgentDocument, FieldPath
from app.document.tool_ref import ToolRef


def _follow(document: AgentDocument, index: int) -> tuple[ToolRef, list[FieldPath], list[bool]]:
    ref = ToolRef(document, index)
    parts: list[FieldPath] = []
    removed: list[bool] = []
    ref.changed.connect(parts.append)
    ref.removed.connect(lambda: removed.append(True))
    return ref, parts, removed


def test_an_edit_of_the_tool_says_which_part_changed(qapp, example_path: Path) -> None:
    document = AgentDocument.load(example_path)
    ref, parts, _ = _follow(document, 1)

    document.set_field(("metadata", "tools", 1, "prompt"), "New", text="Edit")
    document.set_field(("metadata", "tools", 0, "prompt"), "Other", text="Edit another")
    document.set_field(("settings", "temperature"), 0.1, text="Edit elsewhere")
    document.undo_stack.undo()
    document.undo_stack.undo()
    document.undo_stack.undo()

    assert parts == [("prompt",), ("prompt",)]
    assert ref.tool() is document.agent.tools[1]
    assert ref.path("prompt") == ("metadata", "tools", 1, "prompt")


def test_a_moved_tool_is_followed_without_a_change(qapp, example_path: Path) -> None:
    document = AgentDocument.load(example_path)
    ref, parts, _ = _follow(document, 1)
    tool = ref.tool()

    document.move_item(("metadata", "tools", 1), 0, text="Move")
    document.insert_item(("metadata", "tools", 0), {"name": "new_one"}, text="Add")

    assert ref.index() == 1 and ref.tool() is tool
    assert parts == []  # nothing of the tool itself changed
    document.set_field(("metadata", "tools", 1, "name"), "renamed", text="Rename")
    assert parts == [("name",)]
    assert ref.tool() is document.agent.tools[1]


def test_a_reload_follows_the_tool_by_name(qapp, example_path: Path) -> None:
    document = AgentDocument.load(example_path)
    ref, parts, removed = _follow(document, 2)
    name = document.agent.tools[2].name

    document.reload()

    assert parts == [()] and removed == []
    tool = ref.tool()
    assert tool is document.agent.tools[2] and tool.name == name


def test_a_removed_tool_is_gone_until_the_removal_is_undone(qapp, example_path: Path) -> None:
    document = AgentDocument.load(example_path)
    ref, parts, removed = _follow(document, 1)
    tool = ref.tool()

    document.remove_item(("metadata", "tools", 1), text="Delete")
    assert removed == [True]
    assert ref.tool() is None and ref.path() is None
    document.set_field(("metadata", "name"), "Other", text="Edit")
    assert removed == [True]  # said once

    document.undo_stack.undo()
    document.undo_stack.undo()
    assert ref.tool() is tool and ref.index() == 1
    assert parts == [()]
