"""Loading and saving agent files: round trips, unknown keys, key order, atomic saves."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from schema_types.agent import Agent, AgentMetadata, AgentSettings, ToolDefinition
from schema_types.errors import AgentFileError
from schema_types.files._yaml_dump import dump_yaml
from schema_types.files.agent_file import dump_agent_yaml, load_agent, save_agent
from schema_types.files.agent_yaml import parse_yaml

EXAMPLES = sorted((Path(__file__).parents[2] / "resources" / "examples").glob("*.agent.yaml"))

WITH_UNKNOWN_KEYS = """\
x-team: platform
metadata:
  name: Travel Desk
  x-owner: {email: travel@example.com}
  tools:
    - name: search
      x-category: travel
      parameters:
        type: object
        x-ui: {layout: compact}
        $defs:
          airport: {type: string, pattern: '^[A-Z]{3}$'}
        properties:
          origin: {$ref: '#/$defs/airport'}
      prompt: |
        Search from {origin}.
settings:
  model: openai:gpt-4.1-mini
  mostRecentModel: gemini:gemini-2.0-flash
  maxTurns: 25
providers:
  openai: {OPENAI_API_KEY: env://OPENAI_API_KEY, x-region: eu}
mcpServers:
  time:
    command: mcp-server-time
    x-note: bundled with the dev extras
    serverToolDefaults: {permissionRequired: false, x-audit: true}
    tools:
      convert_time: {permissionRequired: true, x-reason: writes nothing}
"""


def _raw(path: Path) -> Any:
    return yaml.safe_load(path.read_text(encoding="utf-8"))


@pytest.mark.parametrize("example", EXAMPLES, ids=[p.name for p in EXAMPLES])
def test_example_survives_load_save_load(tmp_path: Path, example: Path):
    agent = load_agent(example)
    copy = tmp_path / example.name

    save_agent(agent, copy)
    again = load_agent(copy)

    assert again == agent
    assert again.to_data() == agent.to_data()


def test_unknown_keys_survive_a_round_trip_at_every_level(tmp_path: Path):
    path = tmp_path / "unknown.agent.yaml"
    path.write_text(WITH_UNKNOWN_KEYS, encoding="utf-8")

    save_agent(load_agent(path), path)

    assert _raw(path) == yaml.safe_load(WITH_UNKNOWN_KEYS)


def test_saving_over_a_file_keeps_its_key_order_and_appends_new_keys(tmp_path: Path):
    path = tmp_path / "ordered.agent.yaml"
    path.write_text(
        "settings:\n"
        "  temperature: 0.2\n"
        "  model: openai:gpt-4.1-mini\n"
        "metadata:\n"
        "  tools:\n"
        "    - prompt: Hello {who}\n"
        "      name: greet\n"
        "      parameters: {properties: {who: {type: string}}, type: object}\n"
        "  name: Greeter\n",
        encoding="utf-8",
    )
    agent = load_agent(path)
    agent.settings.seed = 7

    save_agent(agent, path)

    assert path.read_text(encoding="utf-8") == (
        "settings:\n"
        "  temperature: 0.2\n"
        "  model: openai:gpt-4.1-mini\n"
        "  seed: 7\n"
        "metadata:\n"
        "  tools:\n"
        "    - prompt: Hello {who}\n"
        "      name: greet\n"
        "      parameters: {properties: {who: {type: string}}, type: object}\n"
        "  name: Greeter\n"
    )


def test_multiline_text_is_saved_as_block_scalars(tmp_path: Path):
    agent = Agent(
        metadata=AgentMetadata(
            name="Greeter",
            tools=[ToolDefinition(name="greet", prompt="Say hello to {who}.\nBe brief.\n")],
        ),
        system_prompt="You are friendly.\nYou are brief.",
    )
    path = tmp_path / "greeter.agent.yaml"

    save_agent(agent, path)

    assert path.read_text(encoding="utf-8") == (
        "metadata:\n"
        "  name: Greeter\n"
        "  tools:\n"
        "    - name: greet\n"
        "      prompt: |\n"
        "        Say hello to {who}.\n"
        "        Be brief.\n"
        "systemPrompt: |-\n"
        "  You are friendly.\n"
        "  You are brief.\n"
    )
    assert load_agent(path) == agent


def test_dump_agent_yaml_keeps_unicode_and_long_lines():
    description = "Plans trips to Zürich, Kraków and 東京 " + "with many words " * 10
    agent = Agent(metadata=AgentMetadata(name="Reisebüro", description=description.strip()))

    text = dump_agent_yaml(agent)

    assert text == f"metadata:\n  name: Reisebüro\n  description: {description.strip()}\n"


def test_dates_in_yaml_stay_strings(tmp_path: Path):
    path = tmp_path / "dates.agent.yaml"
    path.write_text(
        "metadata:\n  tools:\n    - name: plan\n      parameters:\n        type: object\n"
        "        properties:\n          start: {type: string, format: date, default: 2026-06-01}\n",
        encoding="utf-8",
    )

    agent = load_agent(path)

    assert agent.tools[0].parameters["properties"]["start"]["default"] == "2026-06-01"


def test_json_agent_file_loads_and_saves_as_json(tmp_path: Path):
    data = {
        "metadata": {"name": "Greeter", "tools": [{"name": "greet", "prompt": "Hi {who}"}]},
        "settings": {"maxChatTurns": 3},
    }
    path = tmp_path / "greeter.json"
    path.write_text(json.dumps(data), encoding="utf-8")

    agent = load_agent(path)
    save_agent(agent, path)

    assert agent.settings.max_chat_turns == 3
    assert json.loads(path.read_text(encoding="utf-8")) == data


def test_tsagent_directory_loads_with_prompt_md_as_system_prompt(tmp_path: Path):
    (tmp_path / "tsagent.json").write_text(
        json.dumps(
            {
                "metadata": {"name": "Old agent", "created": "2025-04-07T17:32:29.081Z"},
                "settings": {
                    "maxChatTurns": "10",
                    "temperature": "0.5",
                    "mostRecentModel": "gemini:gemini-2.0-flash",
                },
                "mcpServers": {
                    "weather": {"type": "sse", "url": "http://127.0.0.1:8080/sse", "headers": {}}
                },
            }
        ),
        encoding="utf-8",
    )
    (tmp_path / "prompt.md").write_text("You are a weather agent.\n", encoding="utf-8")

    agent = load_agent(tmp_path)

    assert agent.system_prompt == "You are a weather agent.\n"
    assert agent.settings.max_chat_turns == 10
    assert agent.settings.temperature == 0.5
    assert agent.settings.model == "gemini:gemini-2.0-flash"
    assert agent.to_data()["metadata"]["created"] == "2025-04-07T17:32:29.081Z"
    assert agent.mcp_servers["weather"].url == "http://127.0.0.1:8080/sse"


def _failing_replace(source: str, destination: str) -> None:
    raise OSError(28, "No space left on device")


def test_a_failed_save_leaves_the_original_byte_identical_and_no_temp_file(tmp_path: Path):
    path = tmp_path / "travel.agent.yaml"
    original = b"# hand-written\nmetadata:\n  name: Travel Desk\n"
    path.write_bytes(original)
    agent = load_agent(path)
    agent.metadata.name = "Changed"

    with pytest.raises(AgentFileError) as caught:
        save_agent(agent, path, _replace=_failing_replace)

    assert str(caught.value) == f"{path}: cannot save: No space left on device"
    assert path.read_bytes() == original
    assert sorted(p.name for p in tmp_path.iterdir()) == ["travel.agent.yaml"]


def test_an_interrupted_save_leaves_no_temp_file(tmp_path: Path):
    path = tmp_path / "travel.agent.yaml"
    path.write_bytes(b"metadata:\n  name: Travel Desk\n")

    def interrupted(source: str, destination: str) -> None:
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        save_agent(load_agent(path), path, _replace=interrupted)

    assert path.read_bytes() == b"metadata:\n  name: Travel Desk\n"
    assert [p.name for p in tmp_path.iterdir()] == ["travel.agent.yaml"]


def test_save_keeps_the_permissions_of_the_file_it_replaces(tmp_path: Path):
    path = tmp_path / "private.agent.yaml"
    path.write_text("metadata:\n  name: Private\n", encoding="utf-8")
    path.chmod(0o640)

    save_agent(load_agent(path), path)

    assert stat.S_IMODE(path.stat().st_mode) == 0o640


def test_a_new_file_gets_the_usual_permissions(tmp_path: Path):
    path = tmp_path / "new.agent.yaml"
    mask = os.umask(0o027)
    try:
        save_agent(Agent(), path)
    finally:
        os.umask(mask)

    assert stat.S_IMODE(path.stat().st_mode) == 0o640


def test_saving_through_a_symlink_replaces_its_target(tmp_path: Path):
    target = tmp_path / "real.agent.yaml"
    target.write_text("metadata:\n  name: Old\n", encoding="utf-8")
    link = tmp_path / "link.agent.yaml"
    link.symlink_to(target)

    save_agent(Agent(metadata=AgentMetadata(name="New")), link)

    assert link.is_symlink()
    assert target.read_text(encoding="utf-8") == "metadata:\n  name: New\n"


def test_save_refuses_a_literal_secret_unless_allowed(tmp_path: Path):
    agent = Agent(providers={"openai": {"OPENAI_API_KEY": "sk-proj-abcdefghijklmnop1234"}})
    path = tmp_path / "leaky.agent.yaml"

    with pytest.raises(AgentFileError) as caught:
        save_agent(agent, path)

    assert str(caught.value) == (
        f"{path}: providers.openai.OPENAI_API_KEY: holds a literal key; store it with keyring:// "
        "or env:// before saving"
    )
    assert not path.exists()
    save_agent(agent, path, allow_literal_secrets=True)
    assert load_agent(path) == agent


def test_save_into_a_directory_is_refused(tmp_path: Path):
    with pytest.raises(AgentFileError) as caught:
        save_agent(Agent(), tmp_path)

    assert str(caught.value) == (
        f"{tmp_path}: is a directory: save the agent as a *.agent.yaml file"
    )


def test_settings_set_in_code_are_saved(tmp_path: Path):
    agent = Agent(settings=AgentSettings(model="openai:gpt-4.1", temperature=0.3))
    path = tmp_path / "a.agent.yaml"

    save_agent(agent, path)

    assert _raw(path) == {"settings": {"model": "openai:gpt-4.1", "temperature": 0.3}}


_JSON_VALUES = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(),
    lambda children: (
        st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=8), children, max_size=4)
    ),
    max_leaves=20,
)
_TRICKY_TEXT = st.text(alphabet=" \t\n\r\x85\u2028:#'\"-|>{}[]&*!%@`,?ab", max_size=30)


@settings(max_examples=300)
@given(_JSON_VALUES)
def test_dumped_yaml_reads_back_as_the_same_data(value: Any):
    assert parse_yaml(dump_yaml({"value": value}))[0] == {"value": value}


@settings(max_examples=500)
@given(_TRICKY_TEXT)
def test_dumped_yaml_keeps_any_prompt_text_exactly(text: str):
    data = {"prompt": text, "examples": [text]}

    assert parse_yaml(dump_yaml(data))[0] == data
