"""Test cases in the agent file: read with located problems, kept on save, written when added."""

from __future__ import annotations

import difflib
import subprocess
import sys
from pathlib import Path

import pytest

from schema_types.cases import CalledTool, TestCase
from schema_types.errors import SchemaError
from schema_types.files.agent_file import load_agent, text_for_save

AGENT = """\
metadata:
  name: Desk
  tools:
    - name: plan
      parameters:
        type: object
        properties:
          mode: {type: string}
      prompt: Plan a {mode} trip.
      tests:
        # the everyday case
        - name: car
          arguments: {mode: car}
          expect:
            contains: [car]
            toolCalls: [t__now, {name: t__convert, arguments: {zone: UTC}}]
            judge: Names one route.
        - name: no mode
          expect: {isError: true}
"""


def test_cases_are_read_with_their_expectations(tmp_path: Path) -> None:
    path = tmp_path / "desk.agent.yaml"
    path.write_text(AGENT, encoding="utf-8")
    tool = load_agent(path).metadata.tools[0]

    car = tool.case("car")
    assert car is not None
    assert car.arguments == {"mode": "car"}
    assert car.expect.tool_calls == [
        "t__now",
        CalledTool(name="t__convert", arguments={"zone": "UTC"}),
    ]
    assert tool.tests[1].arguments == {}
    assert tool.tests[1].expect.is_error is True


def test_an_unchanged_file_saves_to_the_same_bytes_and_a_new_case_adds_only_its_lines(
    tmp_path: Path,
) -> None:
    path = tmp_path / "desk.agent.yaml"
    path.write_text(AGENT, encoding="utf-8")
    agent = load_agent(path)
    assert text_for_save(agent, path) == AGENT

    tool = agent.metadata.tools[0]
    tool.tests = [*tool.tests, TestCase(name="train", arguments={"mode": "train"})]
    added = [
        line
        for line in difflib.ndiff(AGENT.splitlines(), text_for_save(agent, path).splitlines())
        if line.startswith(("+", "-"))
    ]
    assert added == [
        "+         - name: train",
        "+           arguments:",
        "+             mode: train",
    ]


@pytest.mark.parametrize(
    ("case", "message"),
    [
        ("{name: a, expect: {matches: '('}}", "tests[0].expect.matches: not a regular expression"),
        ("{name: a, expect: {maxTurns: 0}}", "tests[0].expect.maxTurns: must be at least 1, got 0"),
        (
            "{name: a, expect: {jsonSchema: {type: 3}}}",
            "tests[0].expect.jsonSchema: not a valid JSON Schema",
        ),
        ("{name: '', arguments: {}}", "tests[0].name"),
    ],
)
def test_a_bad_case_is_a_located_problem(tmp_path: Path, case: str, message: str) -> None:
    path = tmp_path / "bad.agent.yaml"
    path.write_text(
        "metadata:\n  tools:\n    - name: plan\n      tests:\n        - " + case + "\n",
        encoding="utf-8",
    )
    with pytest.raises(SchemaError) as raised:
        load_agent(path)
    assert f"metadata.tools[0].{message}" in str(raised.value)
    assert ":5:" in str(raised.value)


def test_two_cases_of_one_tool_may_not_share_a_name(tmp_path: Path) -> None:
    path = tmp_path / "twice.agent.yaml"
    path.write_text(
        "metadata:\n  tools:\n    - name: plan\n      tests:\n        - {name: a}\n"
        "        - {name: a}\n",
        encoding="utf-8",
    )
    with pytest.raises(SchemaError, match="two test cases are named 'a'"):
        load_agent(path)


def test_an_agent_whose_cases_have_plain_json_schemas_loads_without_jsonschema(
    tmp_path: Path,
) -> None:
    # The studio's first paint and the served cold start read the agent file: jsonschema's import
    # (a tenth of a second) waits for a schema the quick proof cannot vouch for.
    path = tmp_path / "cases.agent.yaml"
    path.write_text(
        AGENT + "        - name: json\n          expect: {jsonSchema: {type: object}}\n",
        encoding="utf-8",
    )
    code = (
        "import sys; from schema_types.files.agent_file import load_agent;"
        f"agent = load_agent({str(path)!r});"
        "print(len(agent.metadata.tools[0].tests), 'jsonschema' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["3", "False"]


@pytest.mark.parametrize(
    ("mock", "message"),
    [
        ("{t__now: {result: 1, error: x}}", "a mock has result or error, not both"),
        ("{t: {down: true, delayMs: 5}}", "down: true goes alone"),
        ("{t__now: {}}", "a mock needs result, error, delayMs or down: true"),
        ("{t__now: {delayMs: -1}}", "tests[0].mock.t__now.delayMs"),
    ],
)
def test_a_bad_mock_is_a_located_problem(tmp_path: Path, mock: str, message: str) -> None:
    path = tmp_path / "bad.agent.yaml"
    path.write_text(
        "metadata:\n  tools:\n    - name: plan\n      tests:\n"
        f"        - {{name: a, mock: {mock}}}\n",
        encoding="utf-8",
    )
    with pytest.raises(SchemaError) as raised:
        load_agent(path)
    assert message in str(raised.value)
    assert ":5:" in str(raised.value)


def test_mocks_are_read_and_kept_on_save(tmp_path: Path) -> None:
    text = (
        "metadata:\n  tools:\n    - name: plan\n      tests:\n        - name: a\n"
        "          mock:\n            t__now: {error: 'Error: locked', delayMs: 200}\n"
        "            t: {down: true}\n            w__x: {result: {slots: []}}\n"
    )
    path = tmp_path / "desk.agent.yaml"
    path.write_text(text, encoding="utf-8")

    agent = load_agent(path)

    mock = agent.tools[0].tests[0].mock
    assert (mock["t__now"].error, mock["t__now"].delay_ms) == ("Error: locked", 200)
    assert mock["t"].down and mock["w__x"].result == {"slots": []}
    assert text_for_save(agent, path) == text
