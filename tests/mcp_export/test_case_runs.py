"""Test cases run as served calls: every expectation kind, the judge, a model matrix, repeats,
the history rows and the comparison with the run before, and JUnit XML read back by junitparser.

The models are the real OpenAI provider talking to ``FakeOpenAIServer`` (a real HTTP server on
loopback); inner tools come from the real ``mcp-server-time`` over stdio; history is a real SQLite
file (and, for the rows kept and compared, a real PostgreSQL too).
"""

from __future__ import annotations

import itertools
import json
from pathlib import Path
from typing import Any

import junitparser
import pytest
import yaml

from mcp_export.history.store import HistoryStore
from mcp_export.testing.expect import CallOutcome, check
from mcp_export.testing.judge import JUDGE_SYSTEM_PROMPT
from mcp_export.testing.record import compare, record_matrix
from mcp_export.testing.report import matrix_json, write_junit
from mcp_export.testing.run import MatrixResult, NoCases, run_matrix, select_cases
from schema_types.cases import Expectations
from schema_types.files.agent_file import load_agent
from tests.fakes._script import Reply, RequestBody, delay, text, tool_round_then_text
from tests.fakes.mcp_clients import book_tool, time_server, write_agent
from tests.fakes.openai_server import FakeOpenAIServer

pytest_plugins = ["tests.fakes.postgres"]

pytestmark = pytest.mark.anyio

TIME_CALL = ("call_1", "t__get_current_time", {"timezone": "UTC"})


def _agent_file(
    tmp_path: Path,
    base_url: str,
    cases: list[dict[str, Any]],
    *,
    more_providers: dict[str, Any] | None = None,
    **options: Any,
) -> Path:
    tool = book_tool(tests=cases)
    path = write_agent(tmp_path / "a.agent.yaml", base_url=base_url, tools=[tool], **options)
    if more_providers:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
        data["providers"].update(more_providers)
        path.write_text(yaml.safe_dump(data), encoding="utf-8")
    return path


async def _run(path: Path, **options: Any) -> MatrixResult:
    agent = load_agent(path)
    return await run_matrix(agent, path, select_cases(agent), **options)


def _failures(matrix: MatrixResult) -> dict[str, list[str]]:
    return {r.case: [f.expectation for f in r.failures] for r in matrix.results}


async def test_each_answer_expectation_passes_and_fails_by_name(tmp_path: Path) -> None:
    answer = 'Booked AF123 to Oslo, window seat. {"flight": "AF123", "seats": 1}'
    cases = [
        {
            "name": "contains",
            "arguments": {"destination": "Oslo"},
            "expect": {"contains": ["AF123", "Oslo"]},
        },
        {
            "name": "contains fails",
            "arguments": {"destination": "Oslo"},
            "expect": {"contains": ["Oslo", "KL9"]},
        },
        {
            "name": "not contains",
            "arguments": {"destination": "Oslo"},
            "expect": {"notContains": ["sorry"]},
        },
        {
            "name": "not contains fails",
            "arguments": {"destination": "Oslo"},
            "expect": {"notContains": ["window"]},
        },
        {
            "name": "matches",
            "arguments": {"destination": "Oslo"},
            "expect": {"matches": "(?i)WINDOW seat"},
        },
        {
            "name": "matches fails",
            "arguments": {"destination": "Oslo"},
            "expect": {"matches": "aisle"},
        },
        {"name": "bad arguments", "arguments": {"passengers": 0}, "expect": {"isError": True}},
        {
            "name": "unexpected answer",
            "arguments": {"destination": "Oslo"},
            "expect": {"isError": True},
        },
        {"name": "unexpected error", "arguments": {}, "expect": {"contains": ["AF123"]}},
    ]
    with FakeOpenAIServer(responder=lambda body: text(answer, usage=(30, 12))) as model:
        matrix = await _run(_agent_file(tmp_path, model.base_url, cases))

    assert _failures(matrix) == {
        "contains": [],
        "contains fails": ["contains[1]"],
        "not contains": [],
        "not contains fails": ["notContains[0]"],
        "matches": [],
        "matches fails": ["matches"],
        "bad arguments": [],
        "unexpected answer": ["isError"],
        "unexpected error": ["isError"],
    }
    by_case = {r.case: r for r in matrix.results}
    assert str(by_case["contains fails"].failures[0]) == (
        'contains[1]: "KL9" is not in the answer "Booked AF123 to Oslo, window seat. '
        '{\\"flight\\": \\"AF123\\", \\"seats\\": 1}"'
    )
    long = check(Expectations(contains=["Zürich"]), CallOutcome("Grüße aus Oslo " * 10, False, 1.0))
    assert str(long[0]) == (
        'contains[0]: "Zürich" is not in the answer "' + ("Grüße aus Oslo " * 6)[:79] + '…"'
    )
    assert str(by_case["unexpected error"].failures[0]).startswith(
        'isError: the call failed: "Invalid arguments for book_flight: destination:'
    )
    passed = by_case["contains"]
    assert (passed.outcome.input_tokens, passed.outcome.output_tokens, passed.outcome.turns) == (
        30,
        12,
        1,
    )
    assert passed.outcome.thread_id is None  # no history, no transcript to open


async def test_a_json_answer_is_validated_against_the_cases_schema(tmp_path: Path) -> None:
    schema = {
        "type": "object",
        "properties": {"flight": {"type": "string"}, "seats": {"type": "integer", "minimum": 1}},
        "required": ["flight", "seats"],
    }
    replies = {
        "Oslo": '```json\n{"flight": "AF123", "seats": 2}\n```',
        "Rome": '{"flight": "AZ1", "seats": 0}',
        "Lima": "Booked AF123.",
    }
    cases = [
        {"name": city, "arguments": {"destination": city}, "expect": {"jsonSchema": schema}}
        for city in replies
    ]

    def respond(body: RequestBody) -> Reply:
        return text(next(v for k, v in replies.items() if k in body.last_user_text))

    with FakeOpenAIServer(responder=respond) as model:
        matrix = await _run(_agent_file(tmp_path, model.base_url, cases))

    messages = {r.case: [str(f) for f in r.failures] for r in matrix.results}
    assert messages == {
        "Oslo": [],
        "Rome": ["jsonSchema: at seats: 0 is less than the minimum of 1"],
        "Lima": ["jsonSchema: the answer is not JSON (Expecting value at line 1, column 1)"],
    }


async def test_inner_tool_calls_and_limits_are_checked_on_what_the_client_receives(
    tmp_path: Path,
) -> None:
    cases = [
        {
            "name": "called",
            "arguments": {"destination": "Oslo"},
            "expect": {
                "toolCalls": [
                    "t__get_current_time",
                    {"name": "t__get_current_time", "arguments": {"timezone": "UTC"}},
                ],
                "maxToolCalls": 1,
                "maxTurns": 2,
            },
        },
        {
            "name": "wrong arguments",
            "arguments": {"destination": "Oslo"},
            "expect": {
                "toolCalls": [
                    {"name": "t__get_current_time", "arguments": {"timezone": "Asia/Tokyo"}}
                ]
            },
        },
        {
            "name": "too many",
            "arguments": {"destination": "Oslo"},
            "expect": {"toolCalls": ["t__convert_time"], "maxToolCalls": 0, "maxTurns": 1},
        },
    ]
    with FakeOpenAIServer(responder=tool_round_then_text([TIME_CALL], "It is noon.")) as model:
        path = _agent_file(tmp_path, model.base_url, cases, mcp_servers={"t": time_server()})
        matrix = await _run(path, concurrency=1)

    messages = {r.case: [str(f) for f in r.failures] for r in matrix.results}
    assert messages == {
        "called": [],
        "wrong arguments": [
            'toolCalls[0]: t__get_current_time with {"timezone": "Asia/Tokyo"} was not called'
            " (calls made: t__get_current_time)"
        ],
        "too many": [
            "toolCalls[0]: t__convert_time was not called (calls made: t__get_current_time)",
            "maxToolCalls: 1 inner tool calls, at most 0 expected",
            "maxTurns: 2 model requests, at most 1 expected",
        ],
    }


async def test_a_slow_answer_fails_its_duration_limit(tmp_path: Path) -> None:
    cases = [
        {
            "name": "quick enough",
            "arguments": {"destination": "Oslo"},
            "expect": {"maxDurationMs": 20000},
        },
        {
            "name": "too slow",
            "arguments": {"destination": "Rome"},
            "expect": {"maxDurationMs": 100},
        },
    ]
    with FakeOpenAIServer(responder=lambda body: delay(0.3, text("Booked."))) as model:
        matrix = await _run(_agent_file(tmp_path, model.base_url, cases))

    by_case = {r.case: r for r in matrix.results}
    assert by_case["quick enough"].passed
    [failure] = by_case["too slow"].failures
    assert failure.expectation == "maxDurationMs"
    assert failure.message.endswith("ms, at most 100 ms expected")
    assert by_case["too slow"].outcome.duration_ms >= 300


async def test_the_judge_model_decides_and_its_reason_is_kept(tmp_path: Path) -> None:
    cases = [
        {
            "name": "judged well",
            "arguments": {"destination": "Oslo"},
            "expect": {"judge": "Names exactly one flight."},
        },
        {
            "name": "judged badly",
            "arguments": {"destination": "Rome"},
            "expect": {"judge": "Says why."},
        },
        {
            "name": "no verdict",
            "arguments": {"destination": "Lima"},
            "expect": {"judge": "Is polite."},
        },
    ]
    verdicts = {
        "Names exactly one flight.": '{"pass": true, "reason": "One flight, AF123."}',
        "Says why.": '```json\n{"pass": false, "reason": "No reason is given."}\n```',
        "Is polite.": "Looks fine to me!",
    }
    judged: list[dict[str, Any]] = []

    def respond(body: RequestBody) -> Reply:
        system = body["messages"][0]["content"]
        if system == JUDGE_SYSTEM_PROMPT:
            judged.append(body)
            return text(next(v for k, v in verdicts.items() if k in body.last_user_text))
        return text("Booked AF123.")

    with FakeOpenAIServer(responder=respond) as model:
        path = _agent_file(tmp_path, model.base_url, cases, system_prompt="You book trips.")
        matrix = await _run(path)

    by_case = {r.case: r for r in matrix.results}
    assert by_case["judged well"].passed
    assert by_case["judged well"].verdict is not None
    assert by_case["judged well"].verdict.reason == "One flight, AF123."
    assert [str(f) for f in by_case["judged badly"].failures] == ["judge: No reason is given."]
    assert [str(f) for f in by_case["no verdict"].failures] == [
        'judge: the judge did not reply with a verdict ({"pass": …}): "Looks fine to me!"'
    ]
    assert len(judged) == 3
    assert all("tools" not in body for body in judged)
    assert "<answer>\nBooked AF123.\n</answer>" in judged[0]["messages"][1]["content"]


def _slow(answer: str) -> Reply:
    return text(answer, chunks=4, chunk_delay=0.05)  # streaming, so counted as in flight


async def test_a_matrix_runs_every_case_on_every_endpoint_with_bounded_concurrency(
    tmp_path: Path,
) -> None:
    cases = [
        {
            "name": f"case {n}",
            "arguments": {"destination": f"City {n}"},
            "expect": {"contains": ["AF"]},
        }
        for n in range(6)
    ]
    with (
        FakeOpenAIServer(responder=lambda body: _slow("Booked AF1.")) as first,
        FakeOpenAIServer(responder=lambda body: _slow("No flights.")) as second,
    ):
        path = _agent_file(
            tmp_path,
            first.base_url,
            cases,
            more_providers={"vllm": {"VLLM_BASE_URL": second.base_url}},
        )
        matrix = await _run(path, models=["openai:fake-model", "vllm:other"], concurrency=3)
        busiest = (first.max_in_flight, second.max_in_flight)

    assert len(matrix.results) == 12
    assert {r.model for r in matrix.results if r.passed} == {"openai:fake-model"}
    assert {r.model for r in matrix.results if not r.passed} == {"vllm:other"}
    assert 2 <= max(busiest) <= 3  # calls overlap, never more than `concurrency` at once
    assert {r.body["model"] for r in second.model_requests} == {"other"}


async def test_repeats_give_a_pass_rate_per_case_and_model(tmp_path: Path) -> None:
    cases = [
        {"name": "flaky", "arguments": {"destination": "Oslo"}, "expect": {"contains": ["AF123"]}}
    ]
    answers = itertools.cycle(["Booked AF123.", "Sold out."])
    with FakeOpenAIServer(responder=lambda body: text(next(answers))) as model:
        matrix = await _run(_agent_file(tmp_path, model.base_url, cases), repeat=4, concurrency=1)

    cell = matrix.cell("book_flight", "flaky", "openai:fake-model")
    assert [r.attempt for r in cell] == [1, 2, 3, 4]
    assert sum(r.passed for r in cell) == 2
    [entry] = matrix_json(matrix)["cells"]
    assert (entry["passRate"], entry["passed"], len(entry["runs"])) == (0.5, False, 4)


async def test_each_run_is_kept_in_history_and_compared_with_the_one_before(
    tmp_path: Path, store_location: str
) -> None:
    cases = [
        {
            "name": "stays green",
            "arguments": {"destination": "Oslo"},
            "expect": {"contains": ["Booked"]},
        },
        {"name": "breaks", "arguments": {"destination": "Rome"}, "expect": {"contains": ["AF123"]}},
        {"name": "mends", "arguments": {"destination": "Lima"}, "expect": {"contains": ["KL9"]}},
    ]
    first_answers = {"Oslo": "Booked.", "Rome": "Booked AF123.", "Lima": "Booked."}
    second_answers = {"Oslo": "Booked.", "Rome": "Booked.", "Lima": "Booked KL9."}
    store = HistoryStore(store_location)
    runs: list[MatrixResult] = []
    for answers in (first_answers, second_answers):

        def respond(body: RequestBody, answers: dict[str, str] = answers) -> Reply:
            return text(next(v for k, v in answers.items() if k in body.last_user_text))

        with FakeOpenAIServer(responder=respond) as model:
            matrix = await _run(_agent_file(tmp_path, model.base_url, cases), history=store)
        record_matrix(matrix, store)
        runs.append(matrix)

    first_changes = compare(runs[0], store)
    changes = compare(runs[1], store)
    rows = store.case_runs(matrix_id=runs[1].id)
    served = store.runs()
    transcripts = [store.messages(r.outcome.thread_id or "") for r in runs[1].results]
    store.close()

    assert set(first_changes.values()) == {"new"}
    assert list(changes.items()) == [
        (("book_flight", "breaks", "openai:fake-model"), "regressed"),
        (("book_flight", "mends", "openai:fake-model"), "fixed"),
        (("book_flight", "stays green", "openai:fake-model"), "same"),
    ]
    assert sorted((r.case_name, r.passed, r.failures) for r in rows) == [
        ("breaks", False, ['contains[0]: "AF123" is not in the answer "Booked."']),
        ("mends", True, []),
        ("stays green", True, []),
    ]
    assert [[m.role for m in t] for t in transcripts] == [["user", "assistant"]] * 3
    assert {r.caller for r in served} == {"metaagent test 1"}
    assert len(served) == 6  # each case call is a served run of its own


async def test_junit_xml_is_read_back_by_junitparser(tmp_path: Path) -> None:
    cases = [
        {"name": "good", "arguments": {"destination": "Oslo"}, "expect": {"contains": ["Booked"]}},
        {"name": "bad", "arguments": {"destination": "Rome"}, "expect": {"contains": ["KL9"]}},
        {"name": "errs", "arguments": {}, "expect": {}},
    ]
    with FakeOpenAIServer(responder=lambda body: text("Booked <b>&</b>.")) as model:
        matrix = await _run(_agent_file(tmp_path, model.base_url, cases), repeat=2)
    target = tmp_path / "junit.xml"
    write_junit(matrix, target)

    document = junitparser.JUnitXml.fromfile(str(target))
    [suite] = list(document)
    found = {case.name: [(type(r).__name__, r.message) for r in case.result] for case in suite}
    assert (suite.name, suite.tests, suite.failures, suite.errors) == ("openai:fake-model", 6, 2, 2)
    assert found["good [1/2]"] == []
    assert found["bad [2/2]"] == [
        ("Failure", 'contains[0]: "KL9" is not in the answer "Booked <b>&</b>."')
    ]
    assert found["errs [1/2]"][0][0] == "Error"
    assert {case.classname for case in suite} == {"Travel_Desk.book_flight"}
    assert json.loads(json.dumps(matrix_json(matrix)))["passed"] is False


def test_selecting_cases_names_what_there_is(tmp_path: Path) -> None:
    path = _agent_file(tmp_path, "http://127.0.0.1:9", [{"name": "only", "arguments": {}}])
    agent = load_agent(path)

    assert [c.name for _, c in select_cases(agent, case="only")] == ["only"]
    with pytest.raises(
        NoCases, match=r"no test case is named 'other' \(the cases: book_flight/only\)"
    ):
        select_cases(agent, case="other")
    with pytest.raises(NoCases, match=r"no tool named 'nope' \(its tools: book_flight\)"):
        select_cases(agent, tool="nope")
