"""Under the prompt preview: what a typed tool's calls add to the model request for the schema,
following the tool's output schema and the agent's model."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from pytestqt.qtbot import QtBot

from app.document.agent_document import AgentDocument
from app.tool_editor.editor import ToolEditor
from app.tool_editor.request_additions import RequestAdditionsView
from tests.fakes.mcp_clients import write_agent

SCHEMA = {
    "type": "object",
    "properties": {"verdict": {"type": "string"}, "score": {"type": "integer"}},
    "required": ["verdict", "score"],
}


def _editor(qtbot: QtBot, tmp_path: Path, *, typed: bool = True) -> ToolEditor:
    tool = {"name": "judge", "prompt": "Judge it.", **({"outputSchema": SCHEMA} if typed else {})}
    path = write_agent(tmp_path / "a.agent.yaml", tools=[tool], model="openai:gpt-4.1-mini")
    document = AgentDocument.load(path)
    editor = ToolEditor(document, document.agent.tools[0])
    qtbot.addWidget(editor)
    editor.resize(1200, 800)
    editor.show()
    return editor


def _shown(view: RequestAdditionsView) -> tuple[str, Any]:
    """What the view says (how, and where the format comes from), and the JSON under it."""
    how, _blank, wire = view.text.toPlainText().partition("\n\n")
    return how, json.loads(wire)


def test_the_preview_shows_the_response_format_a_call_adds(qtbot: QtBot, tmp_path: Path) -> None:
    editor = _editor(qtbot, tmp_path)
    view = editor.template.request_additions

    assert view.isVisible() and view.text.isVisible()
    assert view.heading.text() == "Added for the output schema"
    how, wire = _shown(view)
    assert how.startswith("The request carries a response_format with the output schema")
    assert "Wire format: OpenAI Structured Outputs: platform.openai.com" in how
    assert wire["response_format"]["type"] == "json_schema"
    assert wire["response_format"]["json_schema"]["schema"] == SCHEMA


def test_the_preview_follows_the_model_and_the_schema(qtbot: QtBot, tmp_path: Path) -> None:
    editor = _editor(qtbot, tmp_path)
    view = editor.template.request_additions
    document = editor.document

    document.set_field(("settings", "model"), "anthropic:claude-sonnet-4-5", text="Model")
    how, wire = _shown(view)
    assert how.startswith("The model gets a final tool")
    assert wire["tools"][0]["input_schema"] == SCHEMA

    document.set_field(("settings", "model"), "sampling", text="Model")
    assert view.text.toPlainText().startswith("The model is told the output schema")
    assert '"verdict"' in view.text.toPlainText()  # the instruction carries the schema

    editor.output.remove_schema()
    assert not view.isVisible()
    document.undo_stack.undo()
    assert view.isVisible()
    document.undo_stack.undo()
    document.undo_stack.undo()
    assert _shown(view)[0].startswith("The request carries a response_format")


def test_a_tool_that_answers_text_adds_nothing(qtbot: QtBot, tmp_path: Path) -> None:
    editor = _editor(qtbot, tmp_path, typed=False)

    assert not editor.template.request_additions.isVisible()
    editor.output.add_schema()
    assert editor.template.request_additions.isVisible()
