"""Growing a tool's cases: proposals from its schema (bounds, enum values, optional parameters),
from the authoring model (caller cases in words, ``FakeOpenAIServer`` playing it), from
History's served calls (a real SQLite history written by a call served against
``FakeOpenAIServer``), and ``metaagent grow`` as a subprocess: what it lists, what it adds to
the file (the rest kept), and its exit codes."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import mcp_types as types
import pytest
from mcp import Client

from mcp_export.authoring.exchange import authoring_model
from mcp_export.authoring.grow import (
    GrowError,
    Proposal,
    history_proposals,
    schema_proposals,
    with_cases,
)
from mcp_export.authoring.grow_requests import request_proposals
from mcp_export.history.store import HistoryStore
from mcp_export.server.agent_server import AgentServer, load_served_agents
from schema_types.agent import Agent, ToolDefinition
from schema_types.cases import TestCase
from schema_types.files.agent_file import load_agent
from tests.fakes._script import status, text
from tests.fakes.cli import metaagent
from tests.fakes.mcp_clients import book_tool, write_agent
from tests.fakes.openai_server import FakeOpenAIServer

PARAMETERS: dict[str, Any] = {
    "type": "object",
    "properties": {
        "destination": {"type": "string", "minLength": 3, "maxLength": 3},
        "passengers": {"type": "integer", "minimum": 1, "maximum": 9, "default": 1},
        "cabin": {"type": "string", "enum": ["economy", "business", "first"]},
        "bags": {"type": "array", "items": {"type": "string"}, "maxItems": 2},
    },
    "required": ["destination"],
}


def _tool(**overrides: Any) -> ToolDefinition:
    data: dict[str, Any] = {
        "name": "book_flight",
        "description": "Books a flight.",
        "parameters": PARAMETERS,
        "prompt": "Book {destination}",
    }
    data.update(overrides)
    return ToolDefinition.model_validate(data)


def _by_name(proposals: list[Proposal]) -> dict[str, Proposal]:
    return {p.case.name: p for p in proposals}


def test_each_bound_is_proposed_on_it_succeeding_and_just_past_it_failing() -> None:
    found = _by_name(schema_proposals(_tool()))

    assert found["passengers past minimum"].case.arguments["passengers"] == 0
    assert found["passengers past minimum"].case.expect.is_error is True
    assert found["passengers at maximum"].case.arguments["passengers"] == 9
    assert found["passengers at maximum"].case.expect.is_error is False
    assert found["passengers past maximum"].case.arguments["passengers"] == 10
    assert found["passengers past maximum"].case.expect.is_error is True
    assert found["destination past minLength"].case.arguments["destination"] == "xx"
    assert found["destination past minLength"].case.expect.is_error is True
    assert found["destination past maxLength"].case.expect.is_error is True
    assert len(found["bags past maxItems"].case.arguments["bags"]) == 3
    assert found["bags past maxItems"].case.expect.is_error is True
    assert {p.kind for p in found.values() if "minimum" in p.case.name} == {"bound"}


def test_each_enum_value_is_a_case_that_must_succeed() -> None:
    enums = [p for p in schema_proposals(_tool()) if p.kind == "enum"]

    assert [p.case.arguments["cabin"] for p in enums] == ["economy", "business", "first"]
    assert all(p.case.expect.is_error is False for p in enums)
    assert all(p.case.arguments["destination"] for p in enums)  # the required one is filled


def test_each_optional_parameter_is_proposed_absent_and_present() -> None:
    found = _by_name(schema_proposals(_tool()))

    assert "cabin" not in found["cabin absent"].case.arguments
    assert "cabin present" not in found  # each enum value is a case with it present
    assert len(found["bags present"].case.arguments["bags"]) == 1
    # present differs from the default: leaving it out already calls with the default
    assert found["passengers present"].case.arguments["passengers"] == 2
    assert "destination absent" not in found  # required: never left out
    assert all(p.source == "schema" for p in found.values())


def test_nested_objects_properties_are_proposed_by_their_dotted_path() -> None:
    traveller = {
        "type": "object",
        "properties": {
            "name": {"type": "string", "minLength": 1},
            "seat": {"type": "string", "enum": ["aisle", "window"]},
        },
        "required": ["name"],
    }
    parameters = {
        "type": "object",
        "properties": {"traveller": traveller, "note": {"type": "string"}},
        "required": ["traveller"],
    }
    found = _by_name(schema_proposals(_tool(parameters=parameters)))

    assert found["traveller.name past minLength"].case.arguments == {"traveller": {"name": ""}}
    assert found["traveller.name past minLength"].case.expect.is_error is True
    assert found['traveller.seat = "window"'].case.arguments == {
        "traveller": {"name": "<name>", "seat": "window"}
    }
    assert found["traveller.seat absent"].case.arguments == {
        "traveller": {"name": "<name>"},
        "note": "<note>",
    }


def test_a_proposal_equal_to_an_existing_case_is_left_out_and_names_never_clash() -> None:
    first = _by_name(schema_proposals(_tool()))['cabin = "first"'].case.arguments
    existing = {"name": "cabin absent", "arguments": first}
    found = _by_name(schema_proposals(_tool(tests=[existing])))

    assert 'cabin = "first"' not in found  # the existing case calls with these arguments
    assert 'cabin = "business"' in found
    assert "cabin absent (2)" in found  # its own name was taken by the existing case


def test_with_cases_refuses_a_taken_name_with_advice() -> None:
    agent = Agent.model_validate(
        {"metadata": {"name": "T", "tools": [_tool(tests=[{"name": "x"}]).to_data()]}}
    )
    with pytest.raises(GrowError, match="already has a case named 'x': rename it"):
        with_cases(agent, "book_flight", [TestCase(name="x")])


async def _serve(path: Path, calls: list[dict[str, Any]]) -> None:
    async with (
        AgentServer(load_served_agents([path])) as served,
        Client(served.server, client_info=types.Implementation(name="desk", version="1")) as c,
    ):
        for arguments in calls:
            await c.call_tool("book_flight", arguments)


@pytest.mark.anyio
async def test_served_calls_no_case_has_are_proposed_with_their_answers(tmp_path: Path) -> None:
    cases = [{"name": "oslo", "arguments": {"destination": "Oslo"}}]
    replies = [
        text("Booked to Oslo."),
        text("Booked 2 to Rome, seat 4A."),
        text("Paris done."),
        text("Paris again."),
    ]
    with FakeOpenAIServer(replies) as model:
        path = write_agent(
            tmp_path / "a.agent.yaml", base_url=model.base_url, tools=[book_tool(tests=cases)]
        )
        await _serve(
            path,
            [
                {"destination": "Oslo", "passengers": 1},  # the existing case, defaults filled
                {"destination": "Rome", "passengers": 2},
                {"destination": "Paris"},
                {"destination": "Paris"},  # the same call twice: proposed once
            ],
        )
    tool = load_agent(path).metadata.tool("book_flight")
    assert tool is not None
    with HistoryStore() as store:
        proposals = history_proposals(tool, store, path)

    assert [p.case.arguments for p in proposals] == [
        {"destination": "Paris", "passengers": 1},
        {"destination": "Rome", "passengers": 2},
    ]
    assert proposals[1].answer == "Booked 2 to Rome, seat 4A."
    assert proposals[1].why.startswith("served to desk 1 on ")
    assert all(p.source == "history" and p.kind == "served" for p in proposals)


AGENT_TEXT = """\
# the travel desk (this comment stays)
metadata:
  name: Travel
  tools:
    - name: book_flight
      description: Books a flight.
      parameters:
        type: object
        properties:
          destination: {type: string}
          passengers: {type: integer, minimum: 1, maximum: 9, default: 1}
        required: [destination]
      prompt: Book {destination} for {passengers}
      tests:
        - name: oslo   # the first case
          arguments: {destination: OSL}
settings:
  model: openai:x
"""


def test_grow_lists_proposals_and_writes_nothing(tmp_path: Path) -> None:
    path = tmp_path / "a.agent.yaml"
    path.write_text(AGENT_TEXT, encoding="utf-8")

    done = metaagent("grow", str(path), "book_flight")

    assert (done.returncode, done.stderr) == (0, "")
    assert "  1. passengers absent  [schema: optional]  optional passengers left out: must " in (
        done.stdout
    )
    assert (
        "passengers past maximum  [schema: bound]  passengers just past maximum 9: must fail\n"
        '     arguments: {"destination": "<destination>", "passengers": 10}\n'
        '     expect: {"isError": true}\n'
    ) in done.stdout
    assert path.read_text(encoding="utf-8") == AGENT_TEXT


def test_grow_add_appends_the_chosen_two_and_keeps_the_rest_of_the_file(tmp_path: Path) -> None:
    path = tmp_path / "a.agent.yaml"
    path.write_text(AGENT_TEXT, encoding="utf-8")

    done = metaagent(
        "grow", str(path), "book_flight", "--add", "passengers past maximum", "passengers absent"
    )

    assert (done.returncode, done.stderr) == (0, "")
    assert done.stdout == "added passengers past maximum\nadded passengers absent\n"
    text = path.read_text(encoding="utf-8")
    assert "# the travel desk (this comment stays)" in text
    assert "- name: oslo   # the first case" in text
    tool = load_agent(path).metadata.tool("book_flight")
    assert tool is not None
    assert [c.name for c in tool.tests] == ["oslo", "passengers past maximum", "passengers absent"]
    assert tool.tests[1].arguments == {"destination": "<destination>", "passengers": 10}
    assert tool.tests[1].expect.is_error is True


def test_grow_refuses_unknown_names_tools_and_sources_with_exit_2(tmp_path: Path) -> None:
    path = tmp_path / "a.agent.yaml"
    path.write_text(AGENT_TEXT, encoding="utf-8")

    unknown = metaagent("grow", str(path), "book_flight", "--add", "no such case")
    no_tool = metaagent("grow", str(path), "fly")
    bad_from = metaagent("grow", str(path), "book_flight", "--from", "schema,dreams")

    assert unknown.returncode == 2 and unknown.stdout == ""
    assert "metaagent grow: no proposal named 'no such case' (proposals: " in unknown.stderr
    assert no_tool.returncode == 2
    assert "no tool named 'fly' (its tools: book_flight)" in no_tool.stderr
    assert bad_from.returncode == 2
    assert "--from takes schema, history, requests" in bad_from.stderr
    assert path.read_text(encoding="utf-8") == AGENT_TEXT


REQUESTS = {
    "paraphrases": ["Get me a seat to Oslo next week", "I need flights for 2 to Rome", ""],
    "decoys": ["Put my Oslo trip in my calendar", "get me a seat to oslo next week"],
}


def test_the_authoring_model_proposes_caller_cases_in_words(tmp_path: Path) -> None:
    asked = [{"name": "old", "ask": "I need flights for 2 to Rome"}]
    with FakeOpenAIServer([text(json.dumps(REQUESTS))]) as model:
        path = write_agent(
            tmp_path / "a.agent.yaml", base_url=model.base_url, tools=[book_tool(tests=asked)]
        )
        agent = load_agent(path)
        tool = agent.metadata.tool("book_flight")
        assert tool is not None
        with HistoryStore() as store:
            proposals = asyncio.run(
                request_proposals(tool, authoring_model(agent), history=store, agent_path="x")
            )
            threads = store.threads(kind="authoring")
        question = model.bodies[0]["messages"][-1]["content"]

    assert [(p.kind, p.case.ask, p.case.expect.picks) for p in proposals] == [
        ("paraphrase", "Get me a seat to Oslo next week", "book_flight"),
        ("decoy", "Put my Oslo trip in my calendar", "none"),
    ]  # the empty one, the one a case asks already and the repeated one are left out
    assert proposals[0].case.name == "asks: Get me a seat to Oslo…"
    assert "book_flight: Books a flight for a traveller." in question
    assert [t.title for t in threads] == ["grow cases: book_flight"]


def test_grow_from_requests_adds_them_all_and_a_failing_model_exits_1(tmp_path: Path) -> None:
    with FakeOpenAIServer([text(json.dumps(REQUESTS)), status(400)]) as model:
        path = write_agent(tmp_path / "a.agent.yaml", base_url=model.base_url)
        done = metaagent("grow", str(path), "book_flight", "--from", "requests", "--all")
        failed = metaagent("grow", str(path), "book_flight", "--from", "requests")

    assert (done.returncode, done.stderr) == (0, "")
    assert done.stdout.splitlines()[0] == "added asks: Get me a seat to Oslo…"
    tool = load_agent(path).metadata.tool("book_flight")
    assert tool is not None
    assert [(c.ask, c.expect.picks) for c in tool.tests] == [
        ("Get me a seat to Oslo next week", "book_flight"),
        ("I need flights for 2 to Rome", "book_flight"),
        ("Put my Oslo trip in my calendar", "none"),
    ]
    assert failed.returncode == 1
    assert failed.stderr.startswith(
        "metaagent grow: the authoring model (openai:fake-model) gave no requests: "
    )
