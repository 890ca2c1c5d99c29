"""A proposed change applied to a copy of the agent: each field it may touch, checked like
``metaagent validate``, the agent it came from unchanged."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from mcp_export.authoring.improve import Proposal, apply_proposal
from mcp_export.errors import ExportError
from schema_types.files.agent_file import load_agent
from tests.fakes.authoring import agent_file


def test_each_field_goes_where_it_belongs_and_the_original_is_unchanged(tmp_path: Path) -> None:
    agent = load_agent(agent_file(tmp_path / "desk.agent.yaml", "http://127.0.0.1:9/v1"))
    schema = {"type": "object", "properties": {"destination": {"type": "string"}}}

    prompted = apply_proposal(agent, "book_flight", Proposal("systemPrompt", "Be brief.", "r"))
    described = apply_proposal(agent, "book_flight", Proposal("description", "Books.", "r"))
    typed = apply_proposal(agent, "book_flight", Proposal("parameters", json.dumps(schema), "r"))

    assert prompted.system_prompt == "Be brief."
    tool = described.metadata.tool("book_flight")
    assert tool is not None and tool.description == "Books."
    tool = typed.metadata.tool("book_flight")
    assert tool is not None and tool.parameters == schema
    original = agent.metadata.tool("book_flight")
    assert agent.system_prompt == "" and original is not None
    assert original.description == "Books a flight for a traveller."


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("[1, 2]", "parameters: the new schema is not a JSON object"),
        ('{"type": "object", "properties": {"a": {"type": "strung"}}}', "strung"),
    ],
)
def test_a_schema_that_does_not_validate_is_refused_with_why(
    tmp_path: Path, text: str, message: str
) -> None:
    agent = load_agent(agent_file(tmp_path / "desk.agent.yaml", "http://127.0.0.1:9/v1"))
    with pytest.raises(ExportError, match=message):
        apply_proposal(agent, "book_flight", Proposal("parameters", text, "r"))
