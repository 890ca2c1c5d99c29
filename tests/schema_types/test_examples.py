"""The bundled example agents are clean: they load, their schemas and templates have no problem,
they hold no literal secret, and their sample arguments validate and render."""

from __future__ import annotations

from pathlib import Path

import pytest

from schema_types.agent import Agent
from schema_types.arguments import sample_arguments, validate_arguments
from schema_types.files.agent_file import load_agent
from schema_types.output_schema import check_output_schema, output_problems
from schema_types.schema.check import check_parameters_schema
from schema_types.secrets import find_literal_secrets, is_reference
from schema_types.template.engine import diagnose, render_segments

EXAMPLES_DIR = Path(__file__).parents[2] / "resources" / "examples"
EXAMPLES = sorted(EXAMPLES_DIR.glob("*.agent.yaml"))


def _tools(paths: list[Path]) -> list[tuple[Path, str]]:
    return [(path, tool.name) for path in paths for tool in load_agent(path).tools]


TOOLS = _tools(EXAMPLES)
TOOL_IDS = [f"{path.name.split('.')[0]}-{name}" for path, name in TOOLS]


def test_there_are_at_least_two_examples():
    assert [p.name for p in EXAMPLES] == [
        "code-reviewer.agent.yaml",
        "fare-finder.agent.yaml",
        "travel-desk.agent.yaml",
    ]


@pytest.mark.parametrize("example", EXAMPLES, ids=[p.name for p in EXAMPLES])
def test_example_loads_without_literal_secrets(example: Path):
    agent = load_agent(example)

    assert agent.tools
    assert find_literal_secrets(agent) == []
    for values in agent.providers.values():
        assert all(is_reference(value) for name, value in values.items() if name.endswith("KEY"))


@pytest.mark.parametrize(
    ("example", "tool_name"),
    TOOLS,
    ids=[f"{path.name.split('.')[0]}-{name}" for path, name in TOOLS],
)
def test_example_tool_is_clean_and_its_samples_render(example: Path, tool_name: str):
    tool = load_agent(example).metadata.tool(tool_name)
    assert tool is not None

    assert check_parameters_schema(tool.parameters) == []
    assert diagnose(tool.prompt, tool.parameters) == []
    arguments = validate_arguments(tool.parameters, sample_arguments(tool.parameters))
    segments = render_segments(
        tool.prompt, arguments, tool.parameters, tool_name=tool.name, tool_description=""
    )
    assert [s.text for s in segments if s.kind in ("missing", "error")] == []


def _travel_desk() -> Agent:
    return load_agent(EXAMPLES_DIR / "travel-desk.agent.yaml")


def test_travel_desk_has_what_the_studio_demonstrates():
    agent = _travel_desk()
    search = agent.metadata.tool("search_flights")
    plan = agent.metadata.tool("plan_trip")
    assert search is not None and plan is not None

    passengers = search.parameters["properties"]["passengers"]
    assert passengers["type"] == "array" and passengers["items"]["type"] == "object"
    assert search.parameters["properties"]["cabin"]["enum"][0] == "economy"
    assert search.parameters["properties"]["departure_date"]["format"] == "date"
    assert plan.conversation is True
    assert plan.parameters["properties"]["trip"]["properties"]["budget"]["type"] == "object"
    time = agent.mcp_servers["time"]
    assert (time.type, time.command) == ("stdio", "mcp-server-time")
    assert time.permission_required("get_current_time") is False
    assert agent.providers["openai"]["OPENAI_API_KEY"] == "env://OPENAI_API_KEY"


def test_the_typed_example_declares_a_sound_output_schema_its_case_checks():
    tool = load_agent(EXAMPLES_DIR / "fare-finder.agent.yaml").metadata.tool("compare_fares")
    assert tool is not None and tool.output_schema is not None
    assert check_output_schema(tool.output_schema) == []
    answer = {
        "cheapest": {"flight": "SK4411", "airline": "SAS", "price": 212.5},
        "options": [{"flight": "SK4411", "departs": "07:10", "price": 212.5}],
        "currency": "EUR",
    }
    assert output_problems(tool.output_schema, answer) == []
    (case,) = tool.tests
    assert set(case.expect.fields) == {"/cheapest/price", "/options", "/currency"}
