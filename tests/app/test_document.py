"""AgentDocument: undoable edits by path, typing merged, refusals, dirty state, save and disk."""

from __future__ import annotations

import os
from pathlib import Path

from app.document.agent_document import AgentDocument, FieldPath, merge_id_for
from app.errors import reporter
from schema_types.files.agent_file import load_agent


def test_edits_undo_and_redo_through_the_document(qapp, example_path: Path) -> None:
    document = AgentDocument.load(example_path)
    changes: list[FieldPath] = []
    document.changed_at.connect(changes.append)

    assert document.set_field(("settings", "temperature"), 0.9, text="Edit temperature")
    assert document.set_field(("metadata", "tools", 1, "description"), "Books.", text="Edit")
    assert document.agent.settings.temperature == 0.9
    assert document.agent.tools[1].description == "Books."
    assert changes == [("settings", "temperature"), ("metadata", "tools", 1, "description")]

    document.undo_stack.undo()
    assert document.agent.tools[1].description != "Books."
    document.undo_stack.undo()
    assert document.agent.settings.temperature != 0.9
    document.undo_stack.redo()
    document.undo_stack.redo()
    assert document.agent.settings.temperature == 0.9
    assert document.agent.tools[1].description == "Books."
    assert changes[2:] == [
        ("metadata", "tools", 1, "description"),
        ("settings", "temperature"),
        ("settings", "temperature"),
        ("metadata", "tools", 1, "description"),
    ]


def test_saved_file_loads_back_equal(qapp, example_path: Path, tmp_path: Path) -> None:
    document = AgentDocument.load(example_path)
    document.set_field(("metadata", "name"), "Travel Desk Pro", text="Edit name")
    document.set_field(("system_prompt",), "You plan trips.\nBe brief.", text="Edit prompt")
    document.set_field(("mcp_servers", "clock"), {"command": "mcp-server-time"}, text="Add")
    target = tmp_path / "saved.agent.yaml"

    document.save(target)

    assert document.path == target
    assert not document.is_dirty()
    assert load_agent(target).to_data() == document.agent.to_data()


def test_typing_in_one_field_merges_into_one_undo_step(qapp) -> None:
    document = AgentDocument()
    path = ("metadata", "name")
    for text in ("T", "Tr", "Tra", "Trav"):
        document.set_field(path, text, text="Edit name", merge_id=merge_id_for(path))
    assert document.undo_stack.count() == 1

    document.seal()  # focus left the field: the next typing is a new step
    document.set_field(path, "Travel", text="Edit name", merge_id=merge_id_for(path))
    assert document.undo_stack.count() == 2

    document.undo_stack.undo()
    assert document.agent.metadata.name == "Trav"
    document.undo_stack.undo()
    assert document.agent.metadata.name == "Untitled agent"


def test_typing_back_to_the_old_value_leaves_no_step_and_no_new_key(qapp) -> None:
    document = AgentDocument()
    before = document.agent.to_data()
    path = ("settings", "temperature")
    document.set_field(path, 0.5, text="Edit", merge_id=merge_id_for(path))
    document.set_field(path, None, text="Edit", merge_id=merge_id_for(path))

    assert document.undo_stack.count() == 0
    assert not document.is_dirty()
    assert document.agent.to_data() == before


def test_undo_removes_keys_the_edit_added_to_the_file(qapp) -> None:
    document = AgentDocument()
    before = document.agent.to_data()
    document.set_field(("settings", "seed"), 7, text="Edit seed")
    assert document.agent.to_data()["settings"]["seed"] == 7

    document.undo_stack.undo()

    assert document.agent.to_data() == before


def test_refused_edit_changes_nothing_and_is_reported(qapp, example_path: Path) -> None:
    document = AgentDocument.load(example_path)
    before = document.agent.to_data()
    taken = document.agent.tools[0].name

    assert not document.set_field(("metadata", "tools", 1, "name"), taken, text="Rename")
    assert not document.set_field(("metadata", "tools", 1, "name"), "bad name", text="Rename")
    assert not document.set_field(("settings", "temperature"), 5, text="Edit temperature")
    assert not document.set_field(("mcp_servers", "time", "command"), None, text="Edit")

    assert document.agent.to_data() == before
    assert document.undo_stack.count() == 0
    messages = [r.message for r in reporter().history]
    assert any("must be unique" in m for m in messages)
    assert any("not valid for MCP" in m for m in messages)
    assert any("needs a 'command'" in m for m in messages)
    assert document.validate_field(("metadata", "tools", 0, "name"), "a b") is not None
    assert document.validate_field(("metadata", "tools", 0, "name"), "ok_name") is None
    assert document.agent.to_data() == before


def test_structural_edits_keep_object_identity_through_undo(qapp, example_path: Path) -> None:
    document = AgentDocument.load(example_path)
    tools = list(document.agent.tools)

    document.move_item(("metadata", "tools", 0), 2, text="Move")
    assert [t.name for t in document.agent.tools][2] == tools[0].name
    document.remove_item(("metadata", "tools", 1), text="Delete")
    document.insert_item(("metadata", "tools", 0), {"name": "fresh"}, text="Add")
    document.rename_key(("mcp_servers", "time"), "clock", text="Rename server")
    assert list(document.agent.mcp_servers) == ["clock"]

    while document.undo_stack.canUndo():
        document.undo_stack.undo()

    assert all(a is b for a, b in zip(document.agent.tools, tools, strict=True))
    assert list(document.agent.mcp_servers) == ["time"]


def test_dirty_state_follows_edits_undo_and_save(qapp, example_path: Path) -> None:
    document = AgentDocument.load(example_path)
    seen: list[bool] = []
    document.dirty_changed.connect(seen.append)
    assert not document.is_dirty()

    document.set_field(("metadata", "version"), "2.0.0", text="Edit version")
    assert document.is_dirty()
    document.undo_stack.undo()
    assert not document.is_dirty()
    document.undo_stack.redo()
    document.save()
    assert not document.is_dirty()
    document.mark_dirty()
    assert document.is_dirty()
    assert seen == [True, False, True, False, True]


def test_list_edits_are_announced_at_the_list(qapp, example_path: Path) -> None:
    document = AgentDocument.load(example_path)
    changes: list[FieldPath] = []
    document.changed_at.connect(changes.append)
    tools = ("metadata", "tools")

    document.move_item((*tools, 0), 1, text="Move")
    document.remove_item((*tools, 1), text="Remove")
    document.insert_item(("mcp_servers", "clock"), {"command": "c"}, text="Add server")
    document.undo_stack.undo()
    document.reload()

    assert changes == [tools, tools, ("mcp_servers",), ("mcp_servers",), ()]


def test_undo_gives_back_the_very_agent_before_the_edit(qapp, tmp_path: Path) -> None:
    source = tmp_path / "a.agent.yaml"
    source.write_text(
        "metadata:\n  name: A\n  xNote: kept\n  tools:\n    - name: t\n      xTag: 1\n"
        "settings:\n  model: openai:gpt-4.1-mini\n"
    )
    document = AgentDocument.load(source)
    before = document.agent
    saved_before = tmp_path / "before.agent.yaml"
    document.save(saved_before)

    document.set_field(("metadata", "tools", 0, "prompt"), "Hi {x}", text="Edit")
    document.set_field(("settings", "temperature"), 0.3, text="Edit")
    edited = document.agent
    document.undo_stack.undo()
    document.undo_stack.undo()
    saved_after = tmp_path / "after.agent.yaml"
    document.save(saved_after)

    assert document.agent is before
    assert before.settings.model_fields_set == {"model"}
    assert saved_after.read_text() == saved_before.read_text()
    document.undo_stack.redo()
    document.undo_stack.redo()
    assert document.agent is edited
    assert edited.tools[0].to_data() == {"name": "t", "prompt": "Hi {x}", "xTag": 1}
    assert edited.metadata.model_extra == {"xNote": "kept"}


def test_an_edit_shares_every_object_it_does_not_change(qapp, example_path: Path) -> None:
    document = AgentDocument.load(example_path)
    first, second = document.agent.tools[0], document.agent.tools[1]

    document.set_field(("metadata", "tools", 1, "prompt"), "New", text="Edit")

    assert document.agent.tools[0] is first
    assert document.agent.tools[1] is not second
    assert document.agent.tools[1].parameters is second.parameters
    assert second.prompt != "New"  # the agent before is left as it was


def test_unset_field_takes_the_key_out_of_the_file_and_undo_puts_it_back(qapp) -> None:
    document = AgentDocument()
    path = ("settings", "temperature")
    document.set_field(path, 0.5, text="Edit")
    document.seal()

    assert document.unset_field(path, text="Clear", merge_id=merge_id_for(path))
    assert "temperature" not in document.agent.settings.to_data()
    assert document.agent.settings.max_chat_turns == 10  # the other fields stay
    document.undo_stack.undo()
    assert document.agent.settings.to_data()["temperature"] == 0.5


def test_typing_back_to_the_start_leaves_no_step_and_no_key(qapp) -> None:
    document = AgentDocument()
    path = ("settings", "temperature")
    document.set_field(path, 0.5, text="Edit", merge_id=merge_id_for(path))
    document.unset_field(path, text="Edit", merge_id=merge_id_for(path))

    assert document.undo_stack.count() == 0
    assert "temperature" not in document.agent.settings.model_fields_set
    assert not document.is_dirty()


def test_reordering_a_dict_is_an_edit(qapp, example_path: Path) -> None:
    document = AgentDocument.load(example_path)
    path = ("metadata", "tools", 0, "parameters")
    parameters = document.get(path)
    reordered = dict(reversed(list(parameters.items())))

    assert document.set_field(path, reordered, text="Reorder")

    assert list(document.get(path)) == list(reordered)
    assert document.undo_stack.count() == 1


def test_change_on_disk_is_detected_by_content(qapp, example_path: Path) -> None:
    document = AgentDocument.load(example_path)
    assert not document.changed_on_disk()

    stat = example_path.stat()
    os.utime(example_path, ns=(stat.st_atime_ns, stat.st_mtime_ns + 5_000_000_000))
    assert not document.changed_on_disk()  # touched, same content

    example_path.write_text(example_path.read_text() + "\n# edited elsewhere\n")
    assert document.changed_on_disk()

    document.reload()
    assert not document.changed_on_disk()
    assert document.undo_stack.count() == 0
