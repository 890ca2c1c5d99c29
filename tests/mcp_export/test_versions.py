"""Versions of a tool: the fingerprint of what decides its answer is stable under what does not
(a YAML comment, key order, a default written out, the title, the test cases, another tool) and
changes with each decisive field; ``metaagent versions`` lists a tool's versions from real
``metaagent test`` runs against ``FakeOpenAIServer``, newest first, with the same figures the
test run's JSON has, and diffs two.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest
import yaml

from mcp_export.costs.prices import PRICES_FILE
from mcp_export.history.store import HistoryStore
from mcp_export.versions.fingerprint import tool_version
from schema_types.files.agent_file import load_agent
from tests.fakes._script import Reply, RequestBody, text
from tests.fakes.cli import metaagent
from tests.fakes.mcp_clients import book_tool, write_agent
from tests.fakes.openai_server import FakeOpenAIServer

AGENT = """\
metadata:
  name: Travel Desk
  tools:
    - name: book_flight
      description: Books a flight.
      prompt: Book a flight to {destination}.
      parameters:
        type: object
        properties:
          destination: {type: string}
        required: [destination]
      outputSchema: {type: object}
settings:
  model: openai:gpt-4.1-mini
  temperature: 0.2
systemPrompt: You book flights.
"""

SAME = """\
# the same agent, written another way
systemPrompt: You book flights.   # a comment
settings:
  temperature: 0.2
  model: openai:gpt-4.1-mini
  maxChatTurns: 10               # its default, written out
metadata:
  name: Travel Desk (renamed)
  version: 2.0.0
  tools:
    - prompt: Book a flight to {destination}.
      outputSchema: {type: object}
      name: book_flight
      title: Book a flight
      parameters:
        required: [destination]
        properties:
          destination: {type: string}
        type: object
      description: Books a flight.
      tests:
        - name: oslo
          arguments: {destination: Oslo}
    - name: another
      prompt: Something else.
"""


def _fingerprint(tmp_path: Path, text: str) -> str:
    path = tmp_path / "agent.yaml"
    path.write_text(text, encoding="utf-8")
    agent = load_agent(path)
    tool = agent.metadata.tool("book_flight")
    assert tool is not None
    return tool_version(agent, tool).fingerprint


def test_a_comment_key_order_or_what_does_not_decide_the_answer_keeps_the_fingerprint(
    tmp_path: Path,
) -> None:
    assert _fingerprint(tmp_path, AGENT) == _fingerprint(tmp_path, SAME)


def _changed(data: dict[str, Any], where: str, value: Any) -> None:
    *parents, key = where.split(".")
    node: Any = data
    for part in parents:
        node = node[int(part)] if part.isdigit() else node[part]
    node[key] = value


@pytest.mark.parametrize(
    ("where", "value"),
    [
        ("metadata.tools.0.description", "Books a cheap flight."),
        ("metadata.tools.0.prompt", "Book a flight to {destination}, window seat."),
        (
            "metadata.tools.0.parameters",
            {"type": "object", "properties": {"destination": {"type": "string", "maxLength": 3}}},
        ),
        ("metadata.tools.0.outputSchema", {"type": "object", "required": ["flight"]}),
        ("systemPrompt", "You book flights. Be brief."),
        ("settings.model", "openai:gpt-4.1"),
        ("settings.temperature", 0.3),
        ("settings.topP", 0.9),
        ("settings.maxOutputTokens", 500),
        ("settings.maxChatTurns", 3),
        ("settings.seed", 7),
        ("settings.stop", ["END"]),
        ("settings.presencePenalty", 0.5),
        ("settings.frequencyPenalty", 0.5),
        ("settings.responseFormat", "json_object"),
        ("settings.toolChoice", "required"),
    ],
)
def test_each_decisive_field_changes_the_fingerprint(
    tmp_path: Path, where: str, value: Any
) -> None:
    data = yaml.safe_load(AGENT)
    _changed(data, where, value)
    assert _fingerprint(tmp_path, yaml.safe_dump(data)) != _fingerprint(tmp_path, AGENT)


def test_the_same_tool_on_another_model_is_another_version(tmp_path: Path) -> None:
    path = tmp_path / "agent.yaml"
    path.write_text(AGENT, encoding="utf-8")
    agent = load_agent(path)
    tool = agent.metadata.tool("book_flight")
    assert tool is not None
    own = tool_version(agent, tool)
    assert tool_version(agent, tool, "openai:gpt-4.1-mini") == own
    assert tool_version(agent, tool, "vllm:cheap").fingerprint != own.fingerprint


def _booked(body: RequestBody) -> Reply:
    answer = "Booked AF123." if "window" not in body.last_user_text else "Sorry."
    return text(answer, usage=(20, 5))


def _write(tmp_path: Path, server: FakeOpenAIServer, prompt: str) -> Path:
    cases = [
        {"name": "oslo", "arguments": {"destination": "Oslo"}, "expect": {"contains": ["AF123"]}}
    ]
    return write_agent(
        tmp_path / "desk.agent.yaml",
        base_url=server.base_url,
        tools=[book_tool(tests=cases, prompt=prompt)],
    )


def test_metaagent_versions_lists_each_version_with_its_figures_and_diffs_two(
    tmp_path: Path,
) -> None:
    home = Path(os.environ["METAAGENT_HOME"])
    home.mkdir(parents=True, exist_ok=True)
    (home / PRICES_FILE).write_text(
        "openai:fake-model: {input: 2.0, output: 8.0}\n", encoding="utf-8"
    )
    first, second = tmp_path / "first.json", tmp_path / "second.json"
    with FakeOpenAIServer(responder=_booked) as model:
        path = _write(tmp_path, model, "Book a flight to {destination}.")
        ran = [metaagent("test", str(path), "--repeat", "3", "--json", str(first))]
        path = _write(tmp_path, model, "Book a flight to {destination}, window seat.")
        ran.append(metaagent("test", str(path), "--repeat", "2", "--json", str(second)))
    assert [done.returncode for done in ran] == [0, 1]
    old = json.loads(first.read_text(encoding="utf-8"))["cells"][0]
    new = json.loads(second.read_text(encoding="utf-8"))["cells"][0]

    # Each served call of the runs records the version it ran, as its case run does.
    with HistoryStore(Path(os.environ["METAAGENT_HOME"]) / "history.sqlite3") as store:
        served = sorted(run.fingerprint or "" for run in store.runs(limit=100))
    assert served == sorted([old["fingerprint"]] * 3 + [new["fingerprint"]] * 2)

    listed = metaagent("versions", str(path), "book_flight", "--json")
    assert (listed.returncode, listed.stderr) == (0, "")
    data = json.loads(listed.stdout)
    assert data["current"] == new["fingerprint"]
    versions = data["versions"]
    assert [v["fingerprint"] for v in versions] == [new["fingerprint"], old["fingerprint"]]
    assert [(v["runs"], v["passed"], v["current"]) for v in versions] == [
        (2, 0, True),
        (3, 3, False),
    ]
    for version, cell in zip(versions, (new, old), strict=True):
        assert version["cost"]["perCall"]["usd"] == pytest.approx(cell["cost"]["perCall"]["usd"])
        assert version["cost"]["per100Calls"]["usd"] == pytest.approx(
            cell["cost"]["per100Calls"]["usd"]
        )
        times = sorted(run["durationMs"] for run in cell["runs"])
        middle = (times[(len(times) - 1) // 2] + times[len(times) // 2]) / 2
        assert version["medianMs"] == pytest.approx(middle, abs=0.001)
        assert version["tokensPerCall"] == {"tokens": 25, "atLeast": False}

    table = metaagent("versions", str(path), "book_flight")
    lines = table.stdout.splitlines()
    assert lines[0] == "book_flight: 2 versions, newest first"
    assert lines[1].split() == [
        "VERSION",
        "MODEL",
        "RUNS",
        "PASSED",
        "MEDIAN",
        "TOKENS/CALL",
        "COST/CALL",
        "COST/100",
        "CALLS",
        "LAST",
        "RUN",
    ]
    assert lines[2].startswith(f"*  {new['fingerprint'][:12]}  openai:fake-model  2 ")
    assert "0/2 (0%)" in lines[2] and "$0.0000800  $0.00800" in lines[2]
    assert lines[3].startswith(f"   {old['fingerprint'][:12]}  openai:fake-model  3 ")

    diff = metaagent(
        "versions", str(path), "book_flight", "--diff", old["fingerprint"][:8], "current"
    )
    assert diff.returncode == 0
    assert "-template: Book a flight to {destination}." in diff.stdout.splitlines()
    assert "+template: Book a flight to {destination}, window seat." in diff.stdout.splitlines()

    wrong = metaagent("versions", str(path), "book_flight", "--diff", "ffffffff", "current")
    assert wrong.returncode == 2
    assert "book_flight has no version 'ffffffff' in History (its versions: " in wrong.stderr
    no_tool = metaagent("versions", str(path), "nope")
    assert no_tool.returncode == 2
    assert "the agent has no tool named 'nope' (its tools: book_flight)" in no_tool.stderr
