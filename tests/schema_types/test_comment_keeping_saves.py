"""Saving over a hand-written YAML agent file changes only the lines of what was edited."""

from __future__ import annotations

import difflib
import shutil
from pathlib import Path

import pytest

from schema_types.agent import Agent, ToolDefinition
from schema_types.files.agent_file import load_agent, save_agent

EXAMPLES = sorted((Path(__file__).parents[2] / "resources" / "examples").glob("*.agent.yaml"))

COMMENTED = """\
# An agent written by hand.
# Two lines of header.
x-team: platform   # owned by the platform team
metadata:
  name: 'Commented'
  version: "1.0.0"
  description: >
    Folded text that a person
    wrapped by hand.
  tools:
    # The first tool.
    - name: first
      description: Says hello.  # short on purpose
      parameters:
        type: object
        # Inputs of the first tool.
        properties:
          who: {type: string, description: 'Whom to greet'}  # flow mapping
          mood:
            type: string
            enum: [happy, sad]   # two moods only
        required: [who]
      prompt: |
        Say hello to {who}.
        Mood: {mood}

    # The second tool, kept apart by a blank line.
    - name: second
      description: "Says goodbye."
      x-category: farewell
      prompt: |
        Say goodbye.

settings:
  model: openai:gpt-4.1-mini   # cheap and quick
  temperature: 0.2
  maxChatTurns: 4

systemPrompt: |
  You greet people.
providers:
  openai: {OPENAI_API_KEY: env://OPENAI_API_KEY, x-region: eu}
# After the last key.
"""


def _saved_diff(before: str, path: Path) -> list[str]:
    """The changed lines (``-``/``+`` prefixed) between ``before`` and the saved file."""
    after = path.read_text(encoding="utf-8")
    return [
        line[0] + line[2:]
        for line in difflib.ndiff(before.splitlines(), after.splitlines())
        if line.startswith(("-", "+"))
    ]


def _commented(tmp_path: Path) -> Path:
    path = tmp_path / "commented.agent.yaml"
    path.write_text(COMMENTED, encoding="utf-8")
    return path


@pytest.mark.parametrize("example", EXAMPLES, ids=[p.name for p in EXAMPLES])
def test_saving_an_example_unchanged_writes_the_same_bytes(tmp_path: Path, example: Path):
    copy = tmp_path / example.name
    shutil.copyfile(example, copy)

    save_agent(load_agent(copy), copy)

    assert copy.read_bytes() == example.read_bytes()


def test_saving_a_commented_file_unchanged_writes_the_same_bytes(tmp_path: Path):
    path = _commented(tmp_path)

    save_agent(load_agent(path), path)

    assert path.read_text(encoding="utf-8") == COMMENTED


def test_editing_one_description_changes_only_its_line(tmp_path: Path):
    path = _commented(tmp_path)
    agent = load_agent(path)
    first, second = agent.metadata.tools
    agent.metadata.tools = [first.model_copy(update={"description": "Greets."}), second]

    save_agent(agent, path)

    assert _saved_diff(COMMENTED, path) == [
        "-      description: Says hello.  # short on purpose",
        "+      description: Greets.      # short on purpose",
    ]


def test_an_edited_string_keeps_its_quotes(tmp_path: Path):
    path = _commented(tmp_path)
    agent = load_agent(path)
    first, second = agent.metadata.tools
    agent.metadata.tools = [first, second.model_copy(update={"description": "Says bye."})]
    agent.metadata.name = "Still commented"

    save_agent(agent, path)

    assert _saved_diff(COMMENTED, path) == [
        "-  name: 'Commented'",
        "+  name: 'Still commented'",
        '-      description: "Says goodbye."',
        '+      description: "Says bye."',
    ]


def test_an_edited_prompt_stays_a_block_scalar(tmp_path: Path):
    path = _commented(tmp_path)
    agent = load_agent(path)
    first, second = agent.metadata.tools
    prompt = "Say hello to {who}.\nMood: {mood}, always.\n"
    agent.metadata.tools = [first.model_copy(update={"prompt": prompt}), second]

    save_agent(agent, path)

    assert _saved_diff(COMMENTED, path) == [
        "-        Mood: {mood}",
        "+        Mood: {mood}, always.",
    ]


def test_an_edit_inside_a_parameters_schema_keeps_its_comments(tmp_path: Path):
    path = _commented(tmp_path)
    agent = load_agent(path)
    first, second = agent.metadata.tools
    parameters = first.parameters | {"required": ["who", "mood"]}
    agent.metadata.tools = [first.model_copy(update={"parameters": parameters}), second]

    save_agent(agent, path)

    assert _saved_diff(COMMENTED, path) == [
        "-        required: [who]",
        "+        required: [who, mood]",
    ]


def test_adding_a_tool_only_adds_its_lines(tmp_path: Path):
    path = _commented(tmp_path)
    agent = load_agent(path)
    third = ToolDefinition(name="third", description="Waves.", prompt="Wave at {who}.\n")
    agent.metadata.tools = [*agent.metadata.tools, third]

    save_agent(agent, path)

    changes = _saved_diff(COMMENTED, path)
    assert all(line.startswith("+") for line in changes)
    assert "+    - name: third" in changes
    assert load_agent(path).metadata.tools[2] == third


def test_deleting_a_tool_only_removes_its_lines(tmp_path: Path):
    path = _commented(tmp_path)
    agent = load_agent(path)
    agent.metadata.tools = agent.metadata.tools[:1]

    save_agent(agent, path)

    removed = [
        "    # The second tool, kept apart by a blank line.",
        "    - name: second",
        '      description: "Says goodbye."',
        "      x-category: farewell",
        "      prompt: |",
        "        Say goodbye.",
    ]
    changes = _saved_diff(COMMENTED, path)
    assert [line for line in changes if line != "-"] == [f"-{line}" for line in removed]
    assert changes.count("-") == 1  # the blank line that set the tool apart


def test_deleting_a_tool_in_an_example_only_removes_its_lines(tmp_path: Path):
    example = next(p for p in EXAMPLES if p.name == "travel-desk.agent.yaml")
    path = tmp_path / example.name
    shutil.copyfile(example, path)
    agent = load_agent(path)
    agent.metadata.tools = [t for t in agent.metadata.tools if t.name != "book_flight"]

    save_agent(agent, path)

    changes = _saved_diff(example.read_text(encoding="utf-8"), path)
    assert all(line.startswith("-") for line in changes)
    assert "-    - name: book_flight" in changes
    assert load_agent(path).metadata.tools == agent.metadata.tools


def test_renaming_a_tool_changes_only_its_name_line(tmp_path: Path):
    path = _commented(tmp_path)
    agent = load_agent(path)
    first, second = agent.metadata.tools
    agent.metadata.tools = [first, second.model_copy(update={"name": "farewell"})]

    save_agent(agent, path)

    assert _saved_diff(COMMENTED, path) == ["-    - name: second", "+    - name: farewell"]


def test_reordering_tools_moves_each_with_the_comment_that_introduces_it(tmp_path: Path):
    path = tmp_path / "three.agent.yaml"
    original = (
        "metadata:\n"
        "  tools:\n"
        "    - name: a\n"
        "      prompt: A\n"
        "\n"
        "    # About b.\n"
        "    - name: b\n"
        "      prompt: B  # says B\n"
        "\n"
        "    # About c.\n"
        "    - name: c\n"
        "      prompt: C\n"
        "\n"
        "settings:\n"
        "  temperature: 0.2\n"
    )
    path.write_text(original, encoding="utf-8")
    agent = load_agent(path)
    a, b, c = agent.metadata.tools
    agent.metadata.tools = [a, c, b]

    save_agent(agent, path)

    assert path.read_text(encoding="utf-8") == (
        "metadata:\n"
        "  tools:\n"
        "    - name: a\n"
        "      prompt: A\n"
        "\n"
        "    # About c.\n"
        "    - name: c\n"
        "      prompt: C\n"
        "\n"
        "    # About b.\n"
        "    - name: b\n"
        "      prompt: B  # says B\n"
        "\n"
        "settings:\n"
        "  temperature: 0.2\n"
    )


def test_a_new_setting_goes_after_the_others_not_after_the_blank_line(tmp_path: Path):
    path = _commented(tmp_path)
    agent = load_agent(path)
    agent.settings.seed = 7

    save_agent(agent, path)

    assert _saved_diff(COMMENTED, path) == ["+  seed: 7"]
    assert "  maxChatTurns: 4\n  seed: 7\n\nsystemPrompt" in path.read_text(encoding="utf-8")


def test_removing_the_last_setting_keeps_the_blank_line_after_the_section(tmp_path: Path):
    path = _commented(tmp_path)
    agent = load_agent(path)
    agent.settings = agent.settings.model_copy(update={"max_chat_turns": None})
    data = agent.to_data()
    del data["settings"]["maxChatTurns"]
    agent = Agent.model_validate(data)

    save_agent(agent, path)

    assert _saved_diff(COMMENTED, path) == ["-  maxChatTurns: 4"]


def test_unknown_keys_written_by_another_tool_are_kept(tmp_path: Path):
    path = _commented(tmp_path)
    agent = load_agent(path)
    agent.metadata.name = "Renamed"

    save_agent(agent, path)

    text = path.read_text(encoding="utf-8")
    assert "x-team: platform   # owned by the platform team\n" in text
    assert "      x-category: farewell\n" in text
    assert "{OPENAI_API_KEY: env://OPENAI_API_KEY, x-region: eu}" in text


def test_lines_ruamel_would_tidy_stay_as_written_when_others_are_edited(tmp_path: Path):
    path = tmp_path / "tidy.agent.yaml"
    original = (
        "---\n"
        "metadata:\n"
        "  name: Tidy\n"
        "  x-empty: ~\n"
        "  x-flow: { a: 1 }\n"
        "settings:\n"
        "  temperature: 0.2\n"
    )
    path.write_text(original, encoding="utf-8")
    agent = load_agent(path)
    agent.settings.temperature = 0.4

    save_agent(agent, path)

    assert _saved_diff(original, path) == ["-  temperature: 0.2", "+  temperature: 0.4"]


def test_windows_line_endings_are_kept(tmp_path: Path):
    path = tmp_path / "crlf.agent.yaml"
    original = "metadata:\r\n  name: Old  # a name\r\nsettings:\r\n  temperature: 0.2\r\n"
    path.write_bytes(original.encode())
    agent = load_agent(path)
    agent.metadata.name = "New"

    save_agent(agent, path)

    assert path.read_bytes() == original.replace("Old", "New").encode()


def test_a_string_that_yaml_would_read_as_something_else_is_quoted(tmp_path: Path):
    path = _commented(tmp_path)
    agent = load_agent(path)
    agent.metadata.version = "2026-06-01"
    agent.metadata.name = "yes"

    save_agent(agent, path)

    again = load_agent(path)
    assert (again.metadata.name, again.metadata.version) == ("yes", "2026-06-01")


def test_a_new_file_is_written_whole(tmp_path: Path):
    path = tmp_path / "new.agent.yaml"

    save_agent(Agent.model_validate({"metadata": {"name": "New"}}), path)

    assert path.read_text(encoding="utf-8") == "metadata:\n  name: New\n"


AGENT_WITHOUT_TOOLS = """\
metadata:
  name: Time Helper
  version: 1.0.0
  mode: tools
  tools: []
settings:
  model: openai:walker-small
providers: {}
"""


def test_the_first_tool_and_provider_are_saved_into_empty_lists_the_studio_wrote(
    tmp_path: Path,
):
    # The studio's first save of a new agent writes `tools: []`; saving again after adding the
    # first tool failed with "zip() argument 2 is longer than argument 1".
    path = tmp_path / "time-helper.agent.yaml"
    path.write_text(AGENT_WITHOUT_TOOLS, encoding="utf-8")
    agent = load_agent(path)
    tool = ToolDefinition(name="city_time", description="Tells the time.", prompt="In {city}?")
    agent.metadata.tools = [tool]
    agent.providers = {"openai": {"OPENAI_BASE_URL": "http://127.0.0.1:1/v1"}}

    save_agent(agent, path)

    again = load_agent(path)
    assert again.metadata.tools == [tool]
    assert again.providers == {"openai": {"OPENAI_BASE_URL": "http://127.0.0.1:1/v1"}}
    assert path.read_text(encoding="utf-8").startswith("metadata:\n  name: Time Helper\n")
