"""Test cases in an open agent: added, edited, renamed and removed, each one undo step, saved."""

from __future__ import annotations

from pathlib import Path

from app.document.agent_document import AgentDocument
from app.document.test_cases import (
    add_test_case,
    case_path,
    new_case,
    remove_test_case,
    replace_test_case,
    unique_case_name,
)
from schema_types.files.agent_file import load_agent


def test_a_saved_case_lands_in_the_file_and_undo_takes_it_back(
    qapp, example_path: Path, tmp_path: Path
) -> None:
    document = AgentDocument.load(example_path)
    tool = document.agent.tools[0].name

    assert add_test_case(document, tool, new_case("Lisbon", {"origin": "LHR"}, contains="TP")) == (
        "Lisbon"
    )
    assert add_test_case(document, tool, new_case("Lisbon", {"origin": "OPO"})) == "Lisbon 2"
    target = tmp_path / "saved.agent.yaml"
    document.save(target)
    saved = load_agent(target).metadata.tool(tool)
    assert saved is not None
    assert [(c.name, c.arguments, c.expect.contains) for c in saved.tests] == [
        ("Lisbon", {"origin": "LHR"}, ["TP"]),
        ("Lisbon 2", {"origin": "OPO"}, []),
    ]

    document.undo_stack.undo()
    assert [c.name for c in document.agent.tools[0].tests] == ["Lisbon"]
    document.undo_stack.undo()
    assert document.agent.tools[0].tests == []
    document.undo_stack.redo()
    assert [c.name for c in document.agent.tools[0].tests] == ["Lisbon"]


def test_editing_renaming_and_removing_a_case(qapp, example_path: Path) -> None:
    document = AgentDocument.load(example_path)
    tool = document.agent.tools[0].name
    add_test_case(document, tool, new_case("One", {}))
    add_test_case(document, tool, new_case("Two", {}, is_error=True))

    assert replace_test_case(document, tool, "One", new_case("Two", {"origin": "LHR"}))
    assert [c.name for c in document.agent.tools[0].tests] == ["Two 2", "Two"]
    assert document.agent.tools[0].tests[1].expect.is_error is True
    assert case_path(document, tool, "Two") == ("metadata", "tools", 0, "tests", 1)
    assert remove_test_case(document, tool, "Two")
    assert [c.name for c in document.agent.tools[0].tests] == ["Two 2"]
    assert not remove_test_case(document, tool, "Two")
    assert unique_case_name(document, tool, "  ") == "Case"
    document.undo_stack.undo()
    assert [c.name for c in document.agent.tools[0].tests] == ["Two 2", "Two"]
