"""``metaagent test`` as a real subprocess against ``FakeOpenAIServer``: the report, exit codes,
JUnit and JSON files, history across two runs (regressions first) and the default history place.

``METAAGENT_HOME`` (set per test by conftest) is inherited, so the subprocesses write the test's
own history database; one test runs with only a temporary ``HOME`` instead.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import junitparser
import yaml

from mcp_export.history.store import HistoryStore
from tests.fakes._script import Reply, RequestBody, text
from tests.fakes.cli import metaagent
from tests.fakes.mcp_clients import book_tool, write_agent
from tests.fakes.openai_server import FakeOpenAIServer

CASES: list[dict[str, Any]] = [
    {"name": "oslo", "arguments": {"destination": "Oslo"}, "expect": {"contains": ["AF123"]}},
    {"name": "bad arguments", "arguments": {"passengers": 0}, "expect": {"isError": True}},
]


def _agent(tmp_path: Path, server: FakeOpenAIServer, **providers: Any) -> Path:
    path = write_agent(
        tmp_path / "desk.agent.yaml", base_url=server.base_url, tools=[book_tool(tests=CASES)]
    )
    if providers:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
        data["providers"].update(providers)
        path.write_text(yaml.safe_dump(data), encoding="utf-8")
    return path


def _answers(oslo: str) -> Any:
    def respond(body: RequestBody) -> Reply:
        return text(oslo if "Oslo" in body.last_user_text else "?", usage=(20, 5))

    return respond


def test_every_case_passing_exits_0_with_a_report(tmp_path: Path) -> None:
    with FakeOpenAIServer(responder=_answers("Booked AF123.")) as model:
        path = _agent(tmp_path, model)
        done = metaagent("test", str(path))

    assert (done.returncode, done.stderr) == (0, "")
    lines = done.stdout.splitlines()
    assert lines[0] == "Travel Desk: 2 cases × 1 model"
    assert lines[1].startswith("PASS      book_flight / oslo  openai:fake-model  1/1  ")
    assert lines[1].endswith(
        " 25 tokens  cost unknown: no price for openai:fake-model (add it to the price table)"
    )
    assert lines[2].startswith("PASS      book_flight / bad arguments  openai:fake-model  1/1  ")
    assert lines[3].startswith("2 passed, 0 failed; 2 calls in ")


def test_a_failing_case_exits_1_and_a_matrix_writes_junit_and_json(tmp_path: Path) -> None:
    junit, report = tmp_path / "junit.xml", tmp_path / "report.json"
    with (
        FakeOpenAIServer(responder=_answers("Booked AF123.")) as good,
        FakeOpenAIServer(responder=_answers("Sorry, sold out.")) as bad,
    ):
        path = _agent(tmp_path, good, vllm={"VLLM_BASE_URL": bad.base_url})
        done = metaagent(
            "test",
            str(path),
            "--model",
            "openai:fake-model",
            "--model",
            "vllm:cheap",
            "--junit",
            str(junit),
            "--json",
            str(report),
        )

    assert (done.returncode, done.stderr) == (1, "")
    lines = done.stdout.splitlines()
    assert lines[:3] == [
        "Travel Desk: 2 cases × 2 models",
        lines[1],
        '    contains[0]: "AF123" is not in the answer "Sorry, sold out."',
    ]
    assert lines[1].startswith("FAIL      book_flight / oslo  vllm:cheap  0/1  ")
    assert lines[-1].startswith("3 passed, 1 failed; 4 calls in ")
    suites = {suite.name: suite for suite in junitparser.JUnitXml.fromfile(str(junit))}
    assert {name: (s.tests, s.failures) for name, s in suites.items()} == {
        "openai:fake-model": (2, 0),
        "vllm:cheap": (2, 1),
    }
    data = json.loads(report.read_text(encoding="utf-8"))
    assert [(c["case"], c["model"], c["passed"], c["change"]) for c in data["cells"]] == [
        ("oslo", "openai:fake-model", True, "new"),
        ("oslo", "vllm:cheap", False, "new"),
        ("bad arguments", "openai:fake-model", True, "new"),
        ("bad arguments", "vllm:cheap", True, "new"),
    ]


def test_a_second_run_lists_its_regressions_first(tmp_path: Path) -> None:
    with FakeOpenAIServer(responder=_answers("Booked AF123.")) as model:
        path = _agent(tmp_path, model)
        first = metaagent("test", str(path))
    with FakeOpenAIServer(responder=_answers("Booked.")) as model:
        path = _agent(tmp_path, model)
        second = metaagent("test", str(path), "--repeat", "2")

    assert first.returncode == 0
    assert second.returncode == 1
    lines = second.stdout.splitlines()
    assert lines[0] == "Travel Desk: 2 cases × 1 model × 2 repeats"
    assert lines[1].startswith("REGRESSED book_flight / oslo  openai:fake-model  0/2  ")
    assert lines[-1].startswith("1 passed, 1 failed (1 regressed); 4 calls in ")
    with HistoryStore(Path(os.environ["METAAGENT_HOME"]) / "history.sqlite3") as store:
        rows = store.case_runs()
    assert len(rows) == 2 + 4
    assert len({row.matrix_id for row in rows}) == 2


def test_nothing_to_run_and_bad_options_exit_2_saying_why(tmp_path: Path) -> None:
    with FakeOpenAIServer(responder=_answers("Booked AF123.")) as model:
        path = _agent(tmp_path, model)
        unknown = metaagent("test", str(path), "--case", "lisbon")
        no_tool = metaagent("test", str(path), "--tool", "book")
        zero = metaagent("test", str(path), "--repeat", "0")
    bare = write_agent(tmp_path / "bare.agent.yaml", base_url="http://127.0.0.1:9")
    empty = metaagent("test", str(bare))

    assert (unknown.returncode, unknown.stderr) == (
        2,
        "metaagent test: no test case is named 'lisbon' (the cases: book_flight/oslo, "
        "book_flight/bad arguments)\n",
    )
    assert no_tool.returncode == 2
    assert "no tool named 'book' (its tools: book_flight)" in no_tool.stderr
    assert zero.returncode == 2
    assert "--repeat: must be 1 or more, got 0" in zero.stderr
    assert (empty.returncode, empty.stdout) == (2, "")
    assert "the agent has no test cases: add them under a tool's tests:" in empty.stderr


def test_a_new_user_without_settings_gets_the_run_recorded_in_the_default_place(
    tmp_path: Path,
) -> None:
    home = tmp_path / "home"
    home.mkdir()
    env = {k: v for k, v in os.environ.items() if not k.startswith(("METAAGENT_", "XDG_"))}
    env["HOME"] = str(home)
    with FakeOpenAIServer(responder=_answers("Booked AF123.")) as model:
        done = metaagent("test", str(_agent(tmp_path, model)), env=env)

    assert (done.returncode, done.stderr) == (0, "")
    [database] = list(home.rglob("history.sqlite3"))
    with HistoryStore(database) as store:
        assert len(store.case_runs()) == 2
