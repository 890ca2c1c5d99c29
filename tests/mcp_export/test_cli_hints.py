"""``metaagent hints``, run as the real console script in a subprocess: what it prints and its exit
code (0 whatever the hints say, 1 with ``--strict`` when there are any, 1 for a file that does
not load or tools that cannot be served together)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from mcp_export.hints import build_report
from mcp_export.server.tools import ServedAgent
from schema_types.files.agent_file import load_agent
from tests.fakes.cli import metaagent
from tests.fakes.mcp_clients import book_tool, write_agent

GOOD_DESCRIPTION = (
    "Books a flight for one traveller and answers the booking reference. Use this when the "
    "user has chosen a destination."
)


def good_tool(name: str = "book_flight") -> dict[str, Any]:
    tool = book_tool(name, description=GOOD_DESCRIPTION)
    tool["parameters"]["properties"]["passengers"]["description"] = "How many travel."
    return tool


def vague_tool() -> dict[str, Any]:
    tool = book_tool("find", description="Finds things.")
    tool["parameters"]["properties"]["cabin"] = {"type": "string", "enum": ["y", "j"]}
    return tool


def test_a_clean_agent_prints_each_tools_cost_and_no_hints(tmp_path: Path) -> None:
    path = write_agent(tmp_path / "desk.agent.yaml", tools=[good_tool()])
    done = metaagent("hints", str(path))
    report = build_report([ServedAgent(load_agent(path.resolve()), path.resolve())])
    cost = report.tools[0].tokens
    assert cost is not None and report.list_tokens is not None

    assert (done.returncode, done.stderr) == (0, "")
    assert done.stdout.splitlines() == [
        f"book_flight: {cost.entry} tokens (description {cost.description}, inputSchema "
        f"{cost.input_schema}, outputSchema {cost.output_schema})",
        "  description: 116 characters, 20 words; says when to use it",
        "  no hints",
        f"1 tool, 0 hints; the tool list costs {report.list_tokens} tokens in all",
        "Tokens counted with o200k_base (OpenAI GPT-4o, GPT-4.1, o-series); other models' "
        "tokenizers count differently.",
    ]
    assert metaagent("hints", "--strict", str(path)).returncode == 0


def test_hints_are_printed_with_exit_code_0_and_fail_only_with_strict(tmp_path: Path) -> None:
    path = write_agent(tmp_path / "desk.agent.yaml", tools=[good_tool(), vague_tool()])
    done = metaagent("hints", str(path))

    assert (done.returncode, done.stderr) == (0, "")
    lines = done.stdout.splitlines()
    find = lines.index(next(line for line in lines if line.startswith("find: ")))
    assert lines[find + 1] == "  description: 13 characters, 2 words; does not say when to use it"
    assert [line.split(":")[0] for line in lines[find + 2 : -2]] == [
        "  description-short",
        "  description-no-when",
        "  parameter-no-description",
        "  parameter-no-description",
        "  enum-no-meaning",
    ]
    assert "parameter 'cabin': the values 'y', 'j' are not explained" in done.stdout
    assert lines[-2].startswith("2 tools, 5 hints; the tool list costs ")

    strict = metaagent("hints", "--strict", str(path))
    assert (strict.returncode, strict.stdout) == (1, done.stdout)
    only_good = metaagent("hints", "--strict", "--tool", "book_flight", str(path))
    assert only_good.returncode == 0 and "find" not in only_good.stdout


def test_json_carries_the_same_report_and_the_tokenizer(tmp_path: Path) -> None:
    path = write_agent(tmp_path / "desk.agent.yaml", tools=[good_tool(), vague_tool()])
    done = metaagent("hints", "--json", str(path))
    data = json.loads(done.stdout)
    report = build_report([ServedAgent(load_agent(path.resolve()), path.resolve())])

    assert done.returncode == 0
    assert data == {**report.as_json(), "tokenizerNote": data["tokenizerNote"]}
    assert data["tokenizer"] == "o200k_base" and "count differently" in data["tokenizerNote"]
    find = data["tools"][1]
    assert find["description"] == {"chars": 13, "words": 2, "saysWhenToUse": False}
    assert find["hints"][-1]["code"] == "enum-no-meaning"
    assert find["hints"][-1]["where"] == "parameters.cabin"


def test_a_file_that_does_not_load_is_an_error(tmp_path: Path) -> None:
    broken = tmp_path / "broken.agent.yaml"
    broken.write_text("metadata:\n  tools:\n    - name: book flight\n", encoding="utf-8")
    done = metaagent("hints", str(broken))

    assert (done.returncode, done.stdout) == (1, "")
    assert done.stderr.startswith("error: ") and "book flight" in done.stderr


def test_tools_that_clash_across_files_fail_unless_prefixed(tmp_path: Path) -> None:
    one = write_agent(tmp_path / "one.agent.yaml", name="One", tools=[good_tool()])
    two = write_agent(tmp_path / "two.agent.yaml", name="Two", tools=[good_tool()])
    clash = metaagent("hints", str(one), str(two))

    assert clash.returncode == 1
    assert "error: the tools cannot be served together:" in clash.stderr
    assert "--prefix" in clash.stderr
    assert "name-collision: tool 'book_flight'" in clash.stdout

    prefixed = metaagent("hints", "--prefix", str(one), str(two))
    assert (prefixed.returncode, prefixed.stderr) == (0, "")
    assert prefixed.stdout.startswith("one__book_flight: ")
    assert "\ntwo__book_flight: " in prefixed.stdout


def test_an_unknown_tool_is_an_error_naming_the_tools(tmp_path: Path) -> None:
    path = write_agent(tmp_path / "desk.agent.yaml", tools=[good_tool()])
    done = metaagent("hints", "--tool", "nope", str(path))

    assert (done.returncode, done.stdout) == (1, "")
    assert done.stderr == "error: no tool named nope (the tools are: book_flight)\n"
