"""``metaagent validate`` and ``metaagent render``, run as the real console script in a subprocess.

The expected prompts are written by hand from DESIGN.md's template rules: strings as they are,
numbers and booleans as JSON, objects and arrays as JSON with ``", "`` and ``": "``, a missing
optional argument as its default or else the empty string, ``{{``/``}}`` as literal braces.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from mcp_export.cli._render import parse_cli_arguments
from tests.fakes.cli import ROOT, metaagent

TRAVEL = "resources/examples/travel-desk.agent.yaml"
REVIEWER = "resources/examples/code-reviewer.agent.yaml"


def test_validate_examples_is_clean():
    done = metaagent("validate", REVIEWER, TRAVEL)

    assert (done.returncode, done.stderr) == (0, "")
    assert done.stdout == (
        "ok: resources/examples/code-reviewer.agent.yaml (2 tools)\n"
        "ok: resources/examples/travel-desk.agent.yaml (4 tools)\n"
    )


def test_validate_reports_every_located_problem_and_fails(tmp_path: Path):
    broken = tmp_path / "broken.agent.yaml"
    broken.write_text(
        "metadata:\n  tools:\n    - name: book flight\nsettings:\n  maxChatTurns: lots\n",
        encoding="utf-8",
    )

    done = metaagent("validate", TRAVEL, str(broken))

    assert done.returncode == 1
    assert done.stdout == "ok: resources/examples/travel-desk.agent.yaml (4 tools)\n"
    assert done.stderr == (
        f"error: {broken}:3:13: metadata.tools[0].name: tool name 'book flight' is not valid for "
        "MCP: use 1 to 128 letters, digits, '_', '-' or '.'\n"
        f'error: {broken}:5:17: settings.maxChatTurns: expected an integer, got "lots"\n'
    )


def test_validate_reports_a_syntax_error_with_line_and_column(tmp_path: Path):
    broken = tmp_path / "tabs.agent.yaml"
    broken.write_text("metadata:\n\tname: Travel Desk\n", encoding="utf-8")

    done = metaagent("validate", str(broken))

    assert (done.returncode, done.stdout) == (1, "")
    assert done.stderr == (
        f"error: {broken}:2:1: a tab cannot indent YAML: indent with spaces (invalid YAML: found "
        "character '\\t' that cannot start any token)\n"
    )


def test_validate_warns_about_literal_secrets_and_template_problems(tmp_path: Path):
    leaky = tmp_path / "leaky.agent.yaml"
    leaky.write_text(
        "metadata:\n"
        "  tools:\n"
        "    - name: greet\n"
        "      parameters:\n"
        "        type: object\n"
        "        properties: {who: {type: string}}\n"
        "        required: [who]\n"
        "      prompt: Hello {whom}\n"
        "providers:\n"
        "  openai: {OPENAI_API_KEY: sk-proj-abcdefghijklmnop1234}\n",
        encoding="utf-8",
    )

    done = metaagent("validate", str(leaky))
    strict = metaagent("validate", "--strict", str(leaky))

    assert (done.returncode, done.stdout) == (0, f"ok: {leaky} (1 tool)\n")
    warnings = done.stderr.splitlines()
    assert warnings[0] == (
        f"warning: {leaky}: providers.openai.OPENAI_API_KEY: holds a literal secret; move it to "
        "the keyring (keyring://…) or an environment variable (env://…)"
    )
    assert warnings[1].startswith(f"warning: {leaky}: metadata.tools[0].prompt: ")
    assert "{whom}" in warnings[1]
    assert (strict.returncode, strict.stdout, strict.stderr) == (1, "", done.stderr)


def test_render_prints_the_filled_prompt_exactly():
    done = metaagent(
        "render",
        TRAVEL,
        "search_flights",
        "--arg",
        "origin=LHR",
        "--arg",
        "destination=LIS",
        "--arg",
        "departure_date=2026-06-01",
        "--arg",
        'passengers=[{"name": "Ada Lovelace", "age": 36}]',
        "--arg",
        "flexible_dates=true",
    )

    assert (done.returncode, done.stderr) == (0, "")
    assert done.stdout == (
        "Find flights from LHR to LIS leaving on 2026-06-01.\n"
        "One way: no return flight.\n"
        'Passengers: [{"name": "Ada Lovelace", "age": 36, "seat": "any"}]\n'
        "Cabin: economy; flexible dates: true.\n"
        "\n"
        "List the three best options as a table with columns {airline, flight, departs, arrives,\n"
        "price} and say which one you would choose and why.\n"
    )


def test_render_keeps_a_section_only_when_its_parameter_has_a_value():
    with_return = metaagent(
        "render",
        TRAVEL,
        "search_flights",
        "--json",
        '{"origin": "LHR", "destination": "LIS", "departure_date": "2026-06-01",'
        ' "return_date": "2026-06-08", "max_price": 450.5, "passengers": [{"name": "Ada",'
        ' "age": 36}]}',
    )
    booked = metaagent(
        "render",
        TRAVEL,
        "book_flight",
        "--json",
        '{"traveller": {"name": "Grace", "email": "g@example.com"},'
        ' "flight": {"number": "TP1351", "date": "2026-06-01"}}',
    )

    assert (with_return.returncode, with_return.stderr) == (0, "")
    assert with_return.stdout.splitlines()[:5] == [
        "Find flights from LHR to LIS leaving on 2026-06-01.",
        "Return on 2026-06-08.",
        'Passengers: [{"name": "Ada", "age": 36, "seat": "any"}]',
        "Cabin: economy; flexible dates: false.",
        "Maximum total fare: 450.5 EUR.",
    ]
    assert (booked.returncode, booked.stderr) == (0, "")
    assert booked.stdout == (
        "Book flight TP1351 on 2026-06-01 for Grace <g@example.com>.\n"
        "Pay by company_card, cost center none given.\n"
        "Confirm the booking reference, the seat and the total price.\n"
    )


def test_render_builds_nested_objects_from_dotted_args_over_json():
    done = metaagent(
        "render",
        TRAVEL,
        "plan_trip",
        "--json",
        '{"trip": {"budget": {"amount": 900}, "nights": 2}, "pace": "packed"}',
        "--arg",
        "trip.destination=Lisbon",
        "--arg",
        "trip.start_date=2026-06-01",
        "--arg",
        "trip.nights=4",
        "--arg",
        'interests=["food", "architecture"]',
    )

    assert (done.returncode, done.stderr) == (0, "")
    assert done.stdout == (
        "Plan 4 nights in Lisbon starting 2026-06-01.\n"
        "Budget: 900 EUR\n"
        'Interests: ["food", "architecture"]\n'
        "Pace: packed\n"
        "Give one short paragraph per day and end with the estimated total cost.\n"
        "(plan_trip v1: keep it under 400 words.)\n"
    )


def test_python_dash_m_mcp_export_renders_the_same():
    args = ["render", REVIEWER, "explain_code", "--arg", "code=x = 1", "--arg", "max_words=60"]

    done = subprocess.run(
        [sys.executable, "-m", "mcp_export", *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )

    assert (done.returncode, done.stderr) == (0, "")
    assert done.stdout == (
        "Explain the following code to a reader at the intermediate level, in at most 60\n"
        "words. Mention any bug you notice.\n"
        "\n"
        "x = 1\n"
    )
    assert metaagent(*args).stdout == done.stdout


def test_render_with_bad_arguments_names_each_path_and_exits_2():
    done = metaagent(
        "render",
        TRAVEL,
        "search_flights",
        "--arg",
        "origin=london",
        "--arg",
        "destination=LIS",
        "--arg",
        "departure_date=2026-06-01",
        "--arg",
        'passengers=[{"name": "Ada", "age": 36}, {"name": "Tim", "age": -3}]',
    )

    assert (done.returncode, done.stdout) == (2, "")
    lines = done.stderr.splitlines()
    assert lines[0] == "metaagent render: invalid arguments for search_flights:"
    assert [line.split(":")[0].strip() for line in lines[1:]] == ["origin", "passengers[1].age"]
    assert "passengers[1].age: -3 is less than the minimum of 0" in done.stderr


def test_render_of_an_unknown_tool_lists_the_tools_and_exits_2():
    done = metaagent("render", TRAVEL, "book_hotel")

    assert (done.returncode, done.stdout) == (2, "")
    assert done.stderr == (
        f"metaagent render: {TRAVEL} has no tool 'book_hotel'; its tools: search_flights, "
        "book_flight, plan_trip, local_time\n"
    )


def test_render_of_a_broken_file_exits_1_with_the_located_message(tmp_path: Path):
    broken = tmp_path / "broken.agent.yaml"
    broken.write_text("settings:\n  toolPermission: sometimes\n", encoding="utf-8")

    done = metaagent("render", str(broken), "anything")

    assert (done.returncode, done.stdout) == (1, "")
    assert done.stderr == (
        f'metaagent render: {broken}:2:19: settings.toolPermission: expected one of "never", '
        '"tool" or "always", got "sometimes"\n'
    )


def test_render_with_a_malformed_arg_exits_2():
    done = metaagent("render", TRAVEL, "local_time", "--arg", "city")

    assert (done.returncode, done.stdout) == (2, "")
    assert done.stderr == (
        "metaagent render: --arg 'city': write it as KEY=VALUE, where KEY is a name or a dotted "
        "path (trip.destination=Paris)\n"
    )


# --- The argument parser shared with ``metaagent call`` ---------------------------------------


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("3", 3),
        ("2.5", 2.5),
        ("true", True),
        ("null", None),
        ('"3"', "3"),
        ('["a", 1]', ["a", 1]),
        ('{"a": 1}', {"a": 1}),
        ("Paris", "Paris"),
        ("2026-06-01", "2026-06-01"),
        ("01234", "01234"),
        ("NaN", "NaN"),
        ("Infinity", "Infinity"),
        ("", ""),
        ("a=b", "a=b"),
    ],
)
def test_arg_values_are_json_when_they_parse_else_strings(text: str, value: object):
    assert parse_cli_arguments([f"x={text}"], None) == {"x": value}


def test_dotted_args_merge_into_the_json_object():
    arguments = parse_cli_arguments(
        ["trip.destination=Paris", "trip.budget.amount=900", "pace=packed"],
        '{"trip": {"nights": 3, "budget": {"currency": "EUR"}}, "pace": "relaxed"}',
    )

    assert arguments == {
        "trip": {"nights": 3, "budget": {"currency": "EUR", "amount": 900}, "destination": "Paris"},
        "pace": "packed",
    }


def test_json_can_come_from_a_file(tmp_path: Path):
    args_file = tmp_path / "args.json"
    args_file.write_text('{"city": "Tokyo"}', encoding="utf-8")

    assert parse_cli_arguments([], f"@{args_file}") == {"city": "Tokyo"}


@pytest.mark.parametrize(
    ("pairs", "json_text", "message"),
    [
        (
            ["=x"],
            None,
            "--arg '=x': write it as KEY=VALUE, where KEY is a name or a dotted path "
            "(trip.destination=Paris)",
        ),
        (
            ["a..b=1"],
            None,
            "--arg 'a..b=1': write it as KEY=VALUE, where KEY is a name or a "
            "dotted path (trip.destination=Paris)",
        ),
        (
            ["trip.city=Paris"],
            '{"trip": "Lisbon"}',
            "--arg 'trip.city=Paris': trip is already \"Lisbon\", not an object",
        ),
        ([], "[1, 2]", '--json must be a JSON object ({"key": value, …})'),
        (
            [],
            "{nope",
            "--json is not valid JSON: Expecting property name enclosed in double "
            "quotes: line 1 column 2 (char 1)",
        ),
    ],
)
def test_malformed_cli_arguments_say_how_to_write_them(
    pairs: list[str], json_text: str | None, message: str
):
    with pytest.raises(ValueError) as caught:
        parse_cli_arguments(pairs, json_text)

    assert str(caught.value) == message
