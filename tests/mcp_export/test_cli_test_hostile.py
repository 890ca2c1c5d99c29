"""``metaagent test`` under hostile input, as a real subprocess against ``FakeOpenAIServer``:
characters XML cannot carry, a report that cannot be written, a case's arguments no request can
carry, a check that backtracks, and Ctrl+C in the middle of a run.
"""

from __future__ import annotations

import json
import signal
import subprocess
import time
from pathlib import Path
from typing import Any

import junitparser
import pytest

from tests.fakes._script import Reply, RequestBody, hang, text
from tests.fakes.cli import METAAGENT, metaagent
from tests.fakes.mcp_clients import book_tool, write_agent
from tests.fakes.openai_server import FakeOpenAIServer

HOSTILE = "\x1b[31mred\x1b[0m \x01\x03\x0b\x0c\x00 end"


def _agent(tmp_path: Path, server: FakeOpenAIServer, cases: list[dict[str, Any]]) -> Path:
    return write_agent(
        tmp_path / "desk.agent.yaml", base_url=server.base_url, tools=[book_tool(tests=cases)]
    )


def test_characters_xml_cannot_carry_are_escaped_and_both_reports_are_written(
    tmp_path: Path,
) -> None:
    junit, report = tmp_path / "a.xml", tmp_path / "a.json"
    cases = [{"name": f"case {HOSTILE}", "arguments": {"destination": "Oslo"}}]
    with FakeOpenAIServer(responder=lambda body: text(f"Booked. {HOSTILE}")) as model:
        path = _agent(tmp_path, model, cases)
        done = metaagent("test", str(path), "--junit", str(junit), "--json", str(report))

    assert (done.returncode, done.stderr) == (0, "")
    assert "\x1b" not in done.stdout
    assert "PASS      book_flight / case \\x1b[31mred\\x1b[0m \\x01\\x03\\x0b\\x0c\\x00 end" in (
        done.stdout
    )
    [suite] = list(junitparser.JUnitXml.fromfile(str(junit)))
    [case] = list(suite)
    assert case.name == "case \\x1b[31mred\\x1b[0m \\x01\\x03\\x0b\\x0c\\x00 end"
    assert case.system_out == "Booked. \\x1b[31mred\\x1b[0m \\x01\\x03\\x0b\\x0c\\x00 end"
    [cell] = json.loads(report.read_text(encoding="utf-8"))["cells"]
    assert (cell["case"], cell["runs"][0]["answer"]) == (f"case {HOSTILE}", f"Booked. {HOSTILE}")


def test_a_report_that_cannot_be_written_leaves_the_other_and_exits_2(tmp_path: Path) -> None:
    report = tmp_path / "a.json"
    cases = [{"name": "oslo", "arguments": {"destination": "Oslo"}}]
    with FakeOpenAIServer(responder=lambda body: text("Booked.")) as model:
        path = _agent(tmp_path, model, cases)
        done = metaagent("test", str(path), "--junit", str(tmp_path), "--json", str(report))

    assert done.returncode == 2
    assert done.stderr.startswith(f"metaagent test: cannot write the report {tmp_path}: ")
    assert "Traceback" not in done.stderr
    assert json.loads(report.read_text(encoding="utf-8"))["passed"] is True


def test_half_a_surrogate_pair_in_the_arguments_fails_that_case_only(tmp_path: Path) -> None:
    junit, report = tmp_path / "a.xml", tmp_path / "a.json"
    cases = [
        {"name": "broken", "arguments": {"destination": "SURROGATE"}},
        {"name": "oslo", "arguments": {"destination": "Oslo"}},
    ]
    with FakeOpenAIServer(responder=lambda body: text("Booked.")) as model:
        path = _agent(tmp_path, model, cases)
        written = path.read_text(encoding="utf-8").replace("SURROGATE", '"\\ud83d"')
        path.write_text(written, encoding="utf-8")
        done = metaagent("test", str(path), "--junit", str(junit), "--json", str(report))

    assert (done.returncode, done.stderr) == (1, "")
    lines = done.stdout.splitlines()
    assert lines[1].startswith("FAIL      book_flight / broken  ")
    assert lines[2] == (
        "    arguments: the arguments hold \\ud83d, half of a UTF-16 surrogate pair, which no "
        "request can carry: write the whole character in the agent file (an emoji is two \\u "
        "escapes in a row)"
    )
    assert lines[3].startswith("PASS      book_flight / oslo  ")
    assert [c.name for s in junitparser.JUnitXml.fromfile(str(junit)) for c in s] == [
        "broken",
        "oslo",
    ]
    cells = json.loads(report.read_text(encoding="utf-8"))["cells"]
    assert [(c["case"], c["passed"]) for c in cells] == [("broken", False), ("oslo", True)]


def test_a_backtracking_pattern_fails_its_case_within_the_check_limit(tmp_path: Path) -> None:
    cases = [
        {"name": "nested", "arguments": {"destination": "Oslo"}, "expect": {"matches": "(a+)+$"}},
        {"name": "either", "arguments": {"destination": "Oslo"}, "expect": {"matches": "(a|aa)+$"}},
    ]
    with FakeOpenAIServer(responder=lambda body: text("a" * 40 + "!")) as model:
        path = _agent(tmp_path, model, cases)
        began = time.monotonic()
        done = metaagent("test", str(path), timeout=30)
        took = time.monotonic() - began

    assert done.returncode == 1
    assert "Traceback" not in done.stderr
    assert "FAIL      book_flight / either  " in done.stdout
    assert (
        "    matches: /(a|aa)+$/ took longer than 2 s on the answer (41 characters) and was "
        in (done.stdout)
    )
    assert '    matches: /(a+)+$/ finds nothing in the answer "aaaa' in done.stdout
    assert took < 20


def _sigint_as_in_a_terminal() -> None:
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def _one_then_hang(body: RequestBody) -> Reply:
    return text("Booked AF1.") if "Oslo" in body.last_user_text else hang()


def test_ctrl_c_stops_the_run_at_once_and_reports_what_finished(tmp_path: Path) -> None:
    report = tmp_path / "a.json"
    cases = [
        {"name": "oslo", "arguments": {"destination": "Oslo"}, "expect": {"contains": ["AF1"]}},
        {"name": "rome", "arguments": {"destination": "Rome"}},
    ]
    with FakeOpenAIServer(responder=_one_then_hang) as model:
        path = _agent(tmp_path, model, cases)
        process = subprocess.Popen(
            [str(METAAGENT), "test", str(path), "--concurrency", "1", "--json", str(report)],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            # As from a terminal: a suite started in the background ignores SIGINT, and a child
            # inherits that (Python then installs no KeyboardInterrupt handler at all).
            preexec_fn=_sigint_as_in_a_terminal,
        )
        try:
            deadline = time.monotonic() + 30
            while len(model.bodies) < 2 and process.poll() is None:
                assert time.monotonic() < deadline, "the second call never reached the model"
                time.sleep(0.05)
            process.send_signal(signal.SIGINT)
            stopped = time.monotonic()
            stdout, stderr = process.communicate(timeout=15)
            took = time.monotonic() - stopped
        finally:
            if process.poll() is None:
                process.kill()
                process.communicate()

    assert process.returncode == 130
    assert took < 5
    assert "Traceback" not in stderr
    assert "metaagent test: interrupted: 1 of 2 calls had finished" in stderr
    lines = stdout.splitlines()
    assert lines[1].startswith("PASS      book_flight / oslo  ")
    assert lines[2].startswith("1 passed, 0 failed; 1 call in ")
    cells = json.loads(report.read_text(encoding="utf-8"))["cells"]
    assert [(c["case"], len(c["runs"])) for c in cells] == [("oslo", 1), ("rome", 0)]


@pytest.mark.parametrize(
    ("schema", "found"),
    [
        ({"$ref": "#"}, 'the reference "#" leads back here'),
        (
            {
                "$defs": {"a": {"$ref": "#/$defs/b"}, "b": {"$ref": "#/$defs/a"}},
                "$ref": "#/$defs/a",
            },
            "($defs.a → $defs.b → $defs.a)",
        ),
    ],
)
def test_validate_refuses_an_expectation_schema_whose_references_loop(
    tmp_path: Path, schema: dict[str, Any], found: str
) -> None:
    cases = [
        {"name": "loop", "arguments": {"destination": "Oslo"}, "expect": {"jsonSchema": schema}}
    ]
    path = write_agent(
        tmp_path / "desk.agent.yaml", base_url="http://127.0.0.1:9", tools=[book_tool(tests=cases)]
    )
    done = metaagent("validate", str(path))

    assert done.returncode != 0
    assert (
        "metadata.tools[0].tests[0].expect.jsonSchema: not a schema an answer can be checked"
        in (done.stdout + done.stderr)
    )
    assert found in done.stdout + done.stderr
