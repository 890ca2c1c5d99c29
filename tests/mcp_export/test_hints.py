"""The static hints per tool (each one tripped and passed), and the token counts of the tool list:
the tokenizer's known counts, and counts made over what a real ``metaagent serve`` lists."""

from __future__ import annotations

import gzip
import json
import subprocess
import threading
from pathlib import Path
from typing import Any

import pytest

from mcp_export.hints import Hint, agent_report, build_report, count_tokens, tool_hints
from mcp_export.hints.report import WIRE_VERSION
from mcp_export.hints.tokens import TokenizerError, encoding, read_encoding
from mcp_export.server.tools import ServedAgent
from schema_types.agent import Agent
from tests.fakes.mcp_clients import REPO, book_tool, initialize_request, serve_command, write_agent

WHEN = "Books a flight for one traveller and answers the booking reference. Use this when the user"
WHEN += " asks to book a flight."


def codes(hints: list[Hint]) -> list[str]:
    return [hint.code for hint in hints]


def schema(**properties: Any) -> dict[str, Any]:
    return {"type": "object", "properties": properties}


def described(kind: str = "string", **more: Any) -> dict[str, Any]:
    return {"type": kind, "description": "What it is.", **more}


# --- the description ----------------------------------------------------------------------------


def test_a_missing_description_is_a_hint_and_a_full_one_passes() -> None:
    assert codes(tool_hints("", schema(), "")) == ["description-missing"]
    assert codes(tool_hints("  \n", schema(), "")) == ["description-missing"]
    assert tool_hints(WHEN, schema(), "") == []


def test_a_short_description_is_a_hint_with_its_word_count() -> None:
    hints = tool_hints("Books flights. Use this when asked.", schema(), "")
    assert codes(hints) == ["description-short"]
    assert "has 6 words" in hints[0].message and hints[0].where == "description"


def test_a_description_that_never_says_when_to_use_the_tool_is_a_hint() -> None:
    what_only = "Books a flight for one traveller and answers the booking reference and the price."
    hints = tool_hints(what_only, schema(), "")
    assert codes(hints) == ["description-no-when"]
    assert "Use this when" in hints[0].message
    for when in (
        "Call this to book a flight for one traveller once dates and the airport are known.",
        "Books a flight for one traveller. Do not use it for trains, buses or hotel rooms.",
        "Books a flight for one traveller when the user has chosen a flight and a date.",
        "Answers questions about the flights the traveller booked earlier, with the times.",
        "Books a flight for one traveller and answers its reference. Call when dates are known.",
        "Books a flight for one traveller and answers its reference; ideal for business trips.",
    ):
        assert tool_hints(when, schema(), "") == [], when


# --- parameters ---------------------------------------------------------------------------------


def test_parameters_without_a_description_are_named_at_any_depth() -> None:
    parameters = schema(
        destination={"type": "string"},
        trip=described("object", properties={"nights": {"type": "integer"}}),
        passengers=described("array", items={"type": "object", "properties": {"age": {}}}),
        note={"type": "string", "description": "   "},
    )
    hints = tool_hints(WHEN, parameters, "")
    assert [(h.code, h.where) for h in hints] == [
        ("parameter-no-description", "parameters.destination"),
        ("parameter-no-description", "parameters.trip.nights"),
        ("parameter-no-description", "parameters.passengers[].age"),
        ("parameter-no-description", "parameters.note"),
    ]
    assert "parameter 'trip.nights' has no description" in hints[1].message


def test_described_parameters_pass() -> None:
    parameters = schema(
        destination=described(),
        trip=described("object", properties={"nights": described("integer")}),
    )
    assert tool_hints(WHEN, parameters, "") == []


def test_an_enum_whose_values_are_not_explained_is_a_hint_naming_them() -> None:
    cabin = described(enum=["economy", "business", "first"])
    hints = tool_hints(WHEN, schema(cabin=cabin), "")
    assert codes(hints) == ["enum-no-meaning"]
    assert "'economy', 'business', 'first'" in hints[0].message
    partly = {**cabin, "description": "Economy: a seat; business: a flat bed."}
    assert "'first'" in tool_hints(WHEN, schema(cabin=partly), "")[0].message
    # "eco" inside "economy" does not explain the value "eco": values are matched as words
    short = {
        "type": "string",
        "description": "An economy or business seat.",
        "enum": ["eco", "biz"],
    }
    assert "'eco', 'biz'" in tool_hints(WHEN, schema(cabin=short), "")[0].message


def test_an_enum_explained_in_its_description_or_per_value_passes() -> None:
    explained = {
        "type": "string",
        "description": "economy: a standard seat; business: a flat bed; first: a suite.",
        "enum": ["economy", "business", "first"],
    }
    one_of = {
        "description": "The cabin.",
        "oneOf": [
            {"const": "economy", "description": "a standard seat"},
            {"const": "business", "title": "A flat bed"},
        ],
    }
    single = described(enum=["only"])  # one value: nothing to choose between
    parameters = schema(cabin=explained, class_=one_of, fixed=single)
    assert tool_hints(WHEN, parameters, "") == []
    bare_one_of = {**one_of, "oneOf": [{"const": "economy"}, {"const": "business"}]}
    assert codes(tool_hints(WHEN, schema(cabin=bare_one_of), "")) == ["enum-no-meaning"]


def test_an_array_of_enumerated_items_needs_its_values_explained() -> None:
    focus = described("array", items={"type": "string", "enum": ["security", "speed"]})
    hints = tool_hints(WHEN, schema(focus=focus), "")
    assert [(h.code, h.where) for h in hints] == [("enum-no-meaning", "parameters.focus[]")]
    focus["description"] = "security: leaks and injections; speed: slow paths."
    assert tool_hints(WHEN, schema(focus=focus), "") == []


def test_parameter_names_that_differ_only_by_case_or_separators_are_a_hint() -> None:
    parameters = schema(
        departure_date=described(), departureDate=described(), Destination=described()
    )
    hints = tool_hints(WHEN, parameters, "")
    assert codes(hints) == ["name-collision"]
    assert "'departure_date', 'departureDate'" in hints[0].message
    nested = schema(trip=described("object", properties={"City": described(), "city": described()}))
    assert [(h.code, h.where) for h in tool_hints(WHEN, nested, "")] == [
        ("name-collision", "parameters.trip")
    ]
    assert tool_hints(WHEN, schema(departure=described(), date=described()), "") == []


def test_a_required_parameter_the_prompt_never_uses_is_a_hint() -> None:
    parameters = {**schema(destination=described(), date=described()), "required": ["date"]}
    hints = tool_hints(WHEN, parameters, "Fly to {destination}.")
    assert codes(hints) == ["required-unused"]
    assert 'required parameter "date" is never used in the prompt' in hints[0].message
    assert tool_hints(WHEN, parameters, "Fly to {destination} on {date}.") == []


# --- tool names, among the tools served together ------------------------------------------------


def served(tmp_path: Path, name: str, tools: list[dict[str, Any]]) -> ServedAgent:
    path = write_agent(tmp_path / f"{name}.agent.yaml", name=name, tools=tools)
    from schema_types.files.agent_file import load_agent

    return ServedAgent(load_agent(path), path)


def test_tool_names_that_differ_only_by_case_are_a_hint_on_each_tool(tmp_path: Path) -> None:
    agent = served(
        tmp_path,
        "Desk",
        [book_tool("book_flight"), book_tool("Book-Flight"), book_tool("search")],
    )
    report = build_report([agent], count=False)
    named = {
        tool.name: [h for h in tool.hints if h.code == "name-collision"] for tool in report.tools
    }
    assert [h.where for h in named["book_flight"]] == ["name"]
    assert "'Book-Flight'" in named["book_flight"][0].message
    assert "'book_flight'" in named["Book-Flight"][0].message
    assert named["search"] == []


def test_tools_of_two_files_collide_by_case_unless_prefixed(tmp_path: Path) -> None:
    one = served(tmp_path, "One", [book_tool("book_flight")])
    two = served(tmp_path, "Two", [book_tool("BOOK_FLIGHT")])
    plain = build_report([one, two], count=False)
    assert all("name-collision" in codes(list(t.hints)) for t in plain.tools)
    prefixed = build_report([one, two], prefix=True, count=False)
    assert [t.name for t in prefixed.tools] == ["one__book_flight", "two__BOOK_FLIGHT"]
    # the slugs differ, yet the rest of each name differs only by case: still confusable
    assert all("name-collision" not in codes(list(t.hints)) for t in prefixed.tools)


def test_the_same_tool_name_in_two_files_is_the_servers_clash_not_a_crash(tmp_path: Path) -> None:
    one = served(tmp_path, "One", [book_tool()])
    two = served(tmp_path, "Two", [book_tool()])
    report = build_report([one, two])
    assert report.problem is not None and "--prefix" in report.problem
    assert report.list_tokens is None and all(t.tokens is None for t in report.tools)
    assert all("name-collision" in codes(list(t.hints)) for t in report.tools)


# --- tokens -------------------------------------------------------------------------------------


def test_the_bundled_tokenizer_gives_o200k_bases_known_tokens() -> None:
    # Token ids published for o200k_base by tiktoken ports' test suites.
    enc = encoding()
    assert enc.encode_ordinary("hello world") == [24912, 2375]
    assert enc.encode_ordinary(" 日本語とEnglish 12345!\n") == [
        17428, 40909, 5330, 28881, 220, 7633, 2548, 4175,
    ]  # fmt: skip
    assert enc.encode_ordinary("a\n\n") == [64, 279]
    assert enc.encode_ordinary("<|endoftext|>") == [27, 91, 419, 1440, 919, 91, 29]
    assert count_tokens("hello world") == 2 and count_tokens("") == 0


def test_token_costs_are_counted_over_what_serve_lists(tmp_path: Path) -> None:
    tools = [
        book_tool(description=WHEN),
        book_tool(
            "plan_trip", description="Plans a trip — dates, hotels, café tips.", title="Plan"
        ),
        book_tool("chat", conversation=True, annotations={"readOnlyHint": True}),
    ]
    path = write_agent(tmp_path / "desk.agent.yaml", tools=tools)
    listed, line = _served_listing(path, "--prefix")
    report = build_report([served_from(path)], prefix=True)

    def wire(value: Any) -> str:
        return json.dumps(value, ensure_ascii=False, separators=(",", ":"))

    assert [t.name for t in report.tools] == [entry["name"] for entry in listed]
    for tool, entry in zip(report.tools, listed, strict=True):
        assert wire(entry) in line  # the text counted is the text sent, key order included
        assert tool.tokens is not None
        assert tool.tokens.entry == count_tokens(wire(entry))
        assert tool.tokens.description == count_tokens(entry["description"])
        assert tool.tokens.input_schema == count_tokens(wire(entry["inputSchema"]))
        assert tool.tokens.output_schema == count_tokens(wire(entry["outputSchema"]))
        assert 0 < tool.tokens.description < tool.tokens.entry
    assert report.list_tokens == count_tokens(wire(listed))
    first = report.tools[0].tokens
    assert first is not None and report.as_json()["tools"][0]["tokens"]["entry"] == first.entry


def served_from(path: Path) -> ServedAgent:
    from schema_types.files.agent_file import load_agent

    return ServedAgent(load_agent(path.resolve()), path.resolve())


def _served_listing(path: Path, *args: str) -> tuple[list[dict[str, Any]], str]:
    """The ``tools`` of ``tools/list`` as a real ``metaagent serve`` answers it over stdio
    (protocol :data:`WIRE_VERSION`), and the answer's line as it came."""
    process = subprocess.Popen(
        serve_command(str(path), *args),
        cwd=REPO,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
    )
    answers: dict[Any, Any] = {}
    lines: dict[Any, str] = {}
    got = threading.Event()

    def read() -> None:
        assert process.stdout is not None
        for line in process.stdout:
            message = json.loads(line)
            answers[message.get("id")] = message
            lines[message.get("id")] = line.decode()
            if message.get("id") == 2:
                got.set()
                return

    threading.Thread(target=read, daemon=True).start()
    try:
        assert process.stdin is not None
        initialize = initialize_request("hints-test")
        assert initialize["params"]["protocolVersion"] == WIRE_VERSION
        process.stdin.write(json.dumps(initialize).encode() + b"\n")
        process.stdin.write(b'{"jsonrpc":"2.0","method":"notifications/initialized"}\n')
        process.stdin.write(b'{"jsonrpc":"2.0","id":2,"method":"tools/list"}\n')
        process.stdin.flush()
        assert got.wait(60), "no tools/list answer within 60 s"
    finally:
        process.kill()
        process.wait(10)
    tools: list[dict[str, Any]] = answers[2]["result"]["tools"]
    return tools, lines[2]


def test_an_unsaved_agent_is_reported_by_its_name_and_counted() -> None:
    agent = Agent.model_validate({"metadata": {"name": "Desk", "tools": [book_tool()]}})
    report = agent_report(agent)
    assert report.problem is None and report.list_tokens is not None
    assert report.tools[0].tokens is not None and report.tools[0].tokens.entry > 50
    assert report.tokenizer == "o200k_base"


def test_the_counted_protocol_version_is_the_newest_an_initialize_negotiates() -> None:
    from mcp_types.version import LATEST_HANDSHAKE_VERSION

    assert WIRE_VERSION == LATEST_HANDSHAKE_VERSION


def test_a_listing_the_protocol_refuses_is_named_and_the_hints_still_shown() -> None:
    # The studio reports on agents being edited: a root that is not an object is possible there.
    tool = book_tool("listing", parameters={"type": "array", "items": {"type": "string"}})
    agent = Agent.model_validate({"metadata": {"name": "Desk", "tools": [book_tool(), tool]}})
    report = agent_report(agent)

    assert report.problem is not None
    assert report.problem.startswith("the tool list does not pass the MCP schema of tools/list")
    assert report.problem.endswith(": tool 'listing': inputSchema.type: Input should be 'object'")
    assert report.list_tokens is None and all(t.tokens is None for t in report.tools)
    assert codes(list(report.tools[1].hints)) == ["description-short", "description-no-when"]


def test_a_damaged_vocabulary_is_a_clear_error_not_a_download(tmp_path: Path) -> None:
    cut = tmp_path / "cut.tiktoken.gz"
    cut.write_bytes(gzip.compress(b"aGVsbG8= 0\n" * 1000)[:-9])
    other = tmp_path / "other.tiktoken.gz"
    other.write_bytes(gzip.compress(b"aGVsbG8= 0\n"))

    with pytest.raises(TokenizerError, match=r"cut\.tiktoken\.gz cannot be read .*reinstall"):
        read_encoding(cut)
    with pytest.raises(TokenizerError, match=r"other\.tiktoken\.gz is damaged .*o200k_base"):
        read_encoding(other)
