"""The description and schema hints beside a tool's test cases: what a person reads in the Tests
tab (real widgets offscreen, the report made by the real worker thread and tokenizer), and how
an edit of the description changes it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pytestqt.qtbot import QtBot

from app.document.agent_document import AgentDocument
from app.document.tool_ref import ToolRef
from app.tool_editor.editor import ToolEditor
from app.tool_editor.hints_view import ToolHintsView
from mcp_export.hints import agent_report
from tests.fakes.mcp_clients import book_tool, write_agent

WAIT_MS = 20_000
WHEN = (
    "Books a flight for one traveller and answers the booking reference. Use this when the user "
    "has chosen a destination."
)


def vague_tool() -> dict[str, Any]:
    tool = book_tool("find", description="Finds flights.")
    tool["parameters"]["properties"]["cabin"] = {"type": "string", "enum": ["y", "j"]}
    return tool


def rows(view: ToolHintsView) -> list[str]:
    return [view.hints_list.item(row).text() for row in range(view.hints_list.count())]


def shown(qtbot: QtBot, document: AgentDocument, index: int) -> ToolHintsView:
    view = ToolHintsView(ToolRef(document, index))
    qtbot.addWidget(view)
    view.resize(700, 300)
    view.show()
    qtbot.waitUntil(lambda: view.report() is not None, timeout=WAIT_MS)
    return view


def test_the_view_shows_the_tools_hints_and_its_token_cost(qtbot: QtBot, tmp_path: Path) -> None:
    path = write_agent(tmp_path / "desk.agent.yaml", tools=[book_tool(), vague_tool()])
    document = AgentDocument.load(path)
    view = shown(qtbot, document, 1)
    expected = agent_report(document.agent, document.path)
    cost = expected.tools[1].tokens
    assert cost is not None

    assert view.summary.text() == (
        "Description: 2 words, does not say when to use it. 5 hints. tools/list entry: "
        f"{cost.entry} tokens (description {cost.description}, parameters {cost.input_schema}, "
        f"output schema {cost.output_schema}); all 2 tools: {expected.list_tokens} tokens."
    )
    assert rows(view) == [hint.message for hint in expected.tools[1].hints]
    assert "parameter 'cabin': the values 'y', 'j' are not explained" in rows(view)[-1]
    assert view.hints_list.item(0).toolTip() == "description-short (description)"
    assert "o200k_base" in view.note.text() and "count differently" in view.note.text()


def test_editing_the_description_updates_the_hints_and_the_cost(
    qtbot: QtBot, tmp_path: Path
) -> None:
    tool = book_tool(description="Books flights.")
    tool["parameters"]["properties"]["passengers"]["description"] = "How many travel."
    document = AgentDocument.load(write_agent(tmp_path / "desk.agent.yaml", tools=[tool]))
    view = shown(qtbot, document, 0)
    before = view.report()
    assert before is not None and before.tokens is not None
    assert [h.code for h in before.hints] == ["description-short", "description-no-when"]

    document.set_field(("metadata", "tools", 0, "description"), WHEN, text="Edit description")

    qtbot.waitUntil(lambda: view.report() is not before, timeout=WAIT_MS)
    after = view.report()
    assert after is not None and after.tokens is not None
    assert rows(view) == ["No hints: nothing here confuses a model."]
    assert "Description: 20 words, says when to use it. 0 hints." in view.summary.text()
    assert after.tokens.description > before.tokens.description
    assert f"entry: {after.tokens.entry} tokens" in view.summary.text()

    document.undo_stack.undo()
    qtbot.waitUntil(lambda: "2 hints" in view.summary.text(), timeout=WAIT_MS)


def test_a_colliding_name_in_another_tool_shows_here(qtbot: QtBot, tmp_path: Path) -> None:
    good = book_tool(description=WHEN)
    good["parameters"]["properties"]["passengers"]["description"] = "How many travel."
    other = {**good, "name": "search"}
    document = AgentDocument.load(write_agent(tmp_path / "desk.agent.yaml", tools=[good, other]))
    view = shown(qtbot, document, 0)
    assert rows(view) == ["No hints: nothing here confuses a model."]

    document.set_field(("metadata", "tools", 1, "name"), "Book-Flight", text="Rename")

    qtbot.waitUntil(lambda: "1 hint." in view.summary.text(), timeout=WAIT_MS)
    assert rows(view)[0].startswith("tool 'book_flight' and 'Book-Flight' are the same or differ")


def test_the_tests_tab_shows_the_hints_beside_the_cases(qtbot: QtBot, tmp_path: Path) -> None:
    path = write_agent(tmp_path / "desk.agent.yaml", tools=[book_tool(), vague_tool()])
    document = AgentDocument.load(path)
    editor = ToolEditor(document, document.agent.tools[1])
    qtbot.addWidget(editor)
    editor.resize(1200, 900)
    editor.show()
    editor.sections.setCurrentWidget(editor.tests)
    qtbot.waitUntil(lambda: editor.tests.isVisible(), timeout=WAIT_MS)
    view = editor.tests.findChild(ToolHintsView)
    assert view is not None
    qtbot.waitUntil(lambda: view.report() is not None, timeout=WAIT_MS)

    assert view.isVisible() and view.hints_list.isVisible()
    assert view.summary.text().startswith("Description: 2 words, does not say when to use it.")
    assert "all 2 tools:" in view.summary.text()
    assert len(rows(view)) == 5
