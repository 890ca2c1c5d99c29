"""The hint each prompt argument carries on how to write a value that is not text.

A client (or the person behind it) follows the hint literally: the example it shows, given as
the argument's text to ``prompts/get``, must pass. The official ``mcp.Client`` talks to the real
server object in-process, in both protocol eras.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import mcp_types as types
import pytest
import yaml
from mcp import Client
from mcp.shared.exceptions import MCPError

from mcp_export.server.agent_server import AgentServer, load_served_agents
from tests.fakes.mcp_clients import REPO, book_tool, write_agent

pytestmark = pytest.mark.anyio

MODES = pytest.mark.parametrize("mode", ["legacy", "auto"])
ON = {"toolsAsPrompts": True}
EXAMPLE = REPO / "resources" / "examples" / "travel-desk.agent.yaml"

NESTED: dict[str, Any] = {
    "type": "object",
    "properties": {
        "route": {
            "type": "array",
            "minItems": 2,
            "items": {
                "type": "object",
                "properties": {
                    "from": {"type": "string"},
                    "mode": {"enum": ["train", "bus"]},
                    "legs": {"type": "array", "items": {"type": "integer", "minimum": 2}},
                },
                "required": ["from", "mode", "legs"],
                "additionalProperties": False,
            },
        },
        "filters": {
            "type": "object",
            "properties": {
                "class": {"type": "string", "enum": ["first", "second"]},
                "max": {"type": "number", "exclusiveMinimum": 0, "maximum": 0.5},
                "tags": {"type": "array", "items": {"enum": [1, 2]}, "uniqueItems": True},
            },
            "required": ["class"],
        },
        "home": {"$ref": "#/$defs/point"},
        "count": {"type": ["integer", "null"], "minimum": 5},
    },
    "required": ["route", "home"],
    "$defs": {
        "point": {
            "type": "object",
            "properties": {"x": {"type": "integer"}, "y": {"type": "integer", "maximum": -3}},
            "required": ["x", "y"],
        }
    },
}


def _hinted(description: str | None) -> str | None:
    """The example a hint offers, as the text to send (what follows "such as ")."""
    hint = -1 if description is None else description.find("rite it as ")
    if description is None or hint < 0 or "such as " not in description[hint:]:
        return None
    start = description.index("such as ", hint) + len("such as ")
    value, _ = json.JSONDecoder().raw_decode(description, start)
    return json.dumps(value)


async def _prompts(path: Path, mode: str) -> list[types.Prompt]:
    async with (
        AgentServer(load_served_agents([path]), history=False) as served,
        Client(served.server, mode=mode) as client,
    ):
        return (await client.list_prompts()).prompts


async def _follow_hints(
    path: Path, mode: str, text_values: Mapping[str, Mapping[str, str]]
) -> dict[str, dict[str, str]]:
    """Every prompt got with each hinted argument given as its hint says, and the text
    arguments from ``text_values``; returns what was sent, by prompt."""
    sent: dict[str, dict[str, str]] = {}
    async with (
        AgentServer(load_served_agents([path]), history=False) as served,
        Client(served.server, mode=mode) as client,
    ):
        for prompt in (await client.list_prompts()).prompts:
            arguments = dict(text_values.get(prompt.name, {}))
            for argument in prompt.arguments or []:
                hinted = _hinted(argument.description)
                if hinted is not None:
                    arguments[argument.name] = hinted
            try:
                await client.get_prompt(prompt.name, arguments)
            except MCPError as exc:
                pytest.fail(f"{prompt.name} refused its own hints {arguments}: {exc.error.message}")
            sent[prompt.name] = arguments
    return sent


@MODES
async def test_the_travel_desk_hints_are_accepted_as_written(tmp_path: Path, mode: str) -> None:
    data = yaml.safe_load(EXAMPLE.read_text())
    data["settings"]["toolsAsPrompts"] = True
    path = tmp_path / "travel-desk.agent.yaml"
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    text_values = {
        "search_flights": {"origin": "LHR", "destination": "LIS", "departure_date": "2026-06-01"},
        "local_time": {"city": "Tokyo"},
    }
    prompts = {p.name: p for p in await _prompts(path, mode)}
    sent = await _follow_hints(path, mode, text_values)
    arguments = {a.name: a for a in prompts["search_flights"].arguments or []}
    assert arguments["passengers"].description == (
        "Everyone travelling, in booking order. (write it as a JSON array such as "
        '[{"name": "Ada Lovelace", "age": 36, "seat": "any"}])'
    )
    assert json.loads(sent["search_flights"]["passengers"]) == [
        {"name": "Ada Lovelace", "age": 36, "seat": "any"}
    ]
    # Every structured parameter of the example got a hint that was followed.
    assert set(sent["book_flight"]) == {"traveller", "flight", "payment"}
    assert set(sent["plan_trip"]) == {"trip", "interests"}
    assert "max_price" in sent["search_flights"]


@MODES
async def test_hints_for_nested_objects_arrays_enums_and_references_are_accepted(
    tmp_path: Path, mode: str
) -> None:
    tool = book_tool(parameters=NESTED, prompt="Go {route} {filters} {home} {count}")
    path = write_agent(tmp_path / "a.agent.yaml", tools=[tool], settings=ON)
    (prompt,) = await _prompts(path, mode)
    hints = {a.name: a.description for a in prompt.arguments or []}
    sent = await _follow_hints(path, mode, {})
    assert hints == {
        "route": 'Write it as a JSON array such as [{"from": "<from>", "mode": "train", '
        '"legs": [2]}, {"from": "<from>", "mode": "train", "legs": [2]}]',
        "filters": 'Write it as a JSON object such as {"class": "first", "max": 0.25, "tags": [1]}',
        "home": 'Write it as a JSON object such as {"x": 1, "y": -3}',
        "count": "Write it as an integer or null such as 5",
    }
    assert set(sent["book_flight"]) == {"route", "filters", "home", "count"}


@MODES
async def test_a_shape_the_server_cannot_fill_in_validly_is_offered_as_a_form(
    tmp_path: Path, mode: str
) -> None:
    parameters = {
        "type": "object",
        "properties": {
            "airport": {
                "type": "object",
                "properties": {"iata": {"type": "string", "pattern": "^[A-Z]{3}$"}},
                "required": ["iata"],
            }
        },
    }
    tool = book_tool(parameters=parameters, prompt="At {airport.iata}")
    path = write_agent(tmp_path / "a.agent.yaml", tools=[tool], settings=ON)
    (prompt,) = await _prompts(path, mode)
    (argument,) = prompt.arguments or []
    # A placeholder cannot match the pattern: no "such as" promise, a shape to fill in.
    assert argument.description == 'Write it as a JSON object in the form {"iata": "<iata>"}'


async def test_a_long_example_keeps_only_the_required_members(tmp_path: Path) -> None:
    wide = {f"optional_{i}": {"type": "string", "examples": ["x" * 20]} for i in range(6)}
    parameters = {
        "type": "object",
        "properties": {
            "profile": {
                "type": "object",
                "properties": {"id": {"type": "integer", "examples": [42]}, **wide},
                "required": ["id"],
            }
        },
    }
    tool = book_tool(parameters=parameters, prompt="For {profile.id}")
    path = write_agent(tmp_path / "a.agent.yaml", tools=[tool], settings=ON)
    (prompt,) = await _prompts(path, "legacy")
    (argument,) = prompt.arguments or []
    assert argument.description == 'Write it as a JSON object such as {"id": 42}'
