"""Test cases that cannot be checked: each fails on its own and every other case's result stays.

Real runs (``run_matrix``: served calls of the agent's own MCP server, the real OpenAI provider
talking to ``FakeOpenAIServer`` over loopback), answers and judge replies built to break a check:
JSON nested deeper than a checker can follow, a judge reply of nothing but braces, patterns that
backtrack, and a schema whose references loop (one the studio's editor holds before it is saved and
validated).
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pytest

from mcp_export.testing.expect import CallOutcome, check
from mcp_export.testing.judge import JUDGE_SYSTEM_PROMPT, parse_verdict
from mcp_export.testing.run import MatrixResult, run_matrix, select_cases
from schema_types.cases import Expectations
from schema_types.files.agent_file import load_agent
from tests.fakes._script import Reply, RequestBody, text
from tests.fakes.mcp_clients import book_tool, write_agent
from tests.fakes.openai_server import FakeOpenAIServer

pytestmark = pytest.mark.anyio

DEEP_ANSWER = "[" * 1000 + "]" * 1000
ANSWERS = {
    "Oslo": "Booked AF123.",
    "Deep": DEEP_ANSWER,
    "Judged": "Booked AF9.",
    "Prose": "Booked KL1.",
    "Pattern": '{"code": "' + "a" * 40 + '!"}',
}
VERDICTS = {
    "Booked AF9.": "{" * 5000 + "}" * 5000,
    "Booked KL1.": 'Well {it depends}. Verdict: {"pass": true, "reason": "It names one flight."}',
}


def _respond(body: RequestBody) -> Reply:
    if body["messages"][0]["content"] == JUDGE_SYSTEM_PROMPT:
        return text(next(v for k, v in VERDICTS.items() if k in body.last_user_text))
    return text(next(v for k, v in ANSWERS.items() if k in body.last_user_text))


async def _run(tmp_path: Path, base_url: str, cases: list[dict[str, Any]]) -> MatrixResult:
    path = write_agent(tmp_path / "a.agent.yaml", base_url=base_url, tools=[book_tool(tests=cases)])
    agent = load_agent(path)
    return await run_matrix(agent, path, select_cases(agent), concurrency=2)


def _case(name: str, city: str, **expect: Any) -> dict[str, Any]:
    return {"name": name, "arguments": {"destination": city}, "expect": expect}


async def test_answers_and_verdicts_too_deep_to_check_fail_their_own_case_only(
    tmp_path: Path,
) -> None:
    cases = [
        _case("deep answer", "Deep", jsonSchema={"type": "array"}),
        _case("deep verdict", "Judged", judge="Names one flight."),
        _case("verdict in prose", "Prose", judge="Names one flight."),
        _case("plain", "Oslo", contains=["AF123"]),
    ]
    with FakeOpenAIServer(responder=_respond) as model:
        matrix = await _run(tmp_path, model.base_url, cases)

    by_case = {r.case: r for r in matrix.results}
    assert sorted(by_case) == ["deep answer", "deep verdict", "plain", "verdict in prose"]
    assert [str(f) for f in by_case["deep answer"].failures] == [
        "jsonSchema: the answer is JSON nested too deeply to check (objects and arrays at most "
        "100 levels deep)"
    ]
    [judged] = by_case["deep verdict"].failures
    assert judged.message.startswith('the judge did not reply with a verdict ({"pass": …}): "{{{')
    assert by_case["verdict in prose"].passed
    assert by_case["verdict in prose"].verdict is not None
    assert by_case["verdict in prose"].verdict.reason == "It names one flight."
    assert by_case["plain"].passed


async def test_backtracking_patterns_in_a_schema_stop_at_the_deadline(tmp_path: Path) -> None:
    slow = {"type": "object", "properties": {"code": {"type": "string", "pattern": "(a|aa)+$"}}}
    cases = [
        _case("pattern", "Pattern", jsonSchema=slow),
        _case("keys", "Pattern", jsonSchema={"patternProperties": {"(c|cc)+$": {}}}),
        _case("plain", "Oslo", contains=["AF123"]),
    ]
    with FakeOpenAIServer(responder=_respond) as model:
        began = time.monotonic()
        matrix = await _run(tmp_path, model.base_url, cases)
        took = time.monotonic() - began

    by_case = {r.case: r for r in matrix.results}
    assert [str(f) for f in by_case["pattern"].failures] == [
        "jsonSchema: checking the answer took longer than 2 s and was stopped: a pattern of the "
        "schema backtracks"
    ]
    assert by_case["keys"].passed
    assert by_case["plain"].passed
    assert took < 15


def test_a_schema_whose_references_loop_fails_its_check_instead_of_recursing() -> None:
    # What validate refuses can still reach a check: the studio runs the cases of an agent as
    # they are in its editor, and a case made in code skips the file's checks.
    expect = Expectations.model_construct(json_schema={"$ref": "#"})
    outcome = CallOutcome('{"a": 1}', False, 5.0)

    [failure] = check(expect, outcome)

    assert failure.expectation == "jsonSchema"
    assert failure.message.startswith("the schema cannot be used: its references lead in a loop")


def test_a_verdict_is_found_after_text_that_is_not_one() -> None:
    assert parse_verdict('{"pass": true, "reason": "ok"}').passed
    found = parse_verdict('I read {the answer}.\n```json\n{ "pass": false, "reason": "No."}\n```')
    assert (found.passed, found.reason) == (False, "No.")
    assert not parse_verdict("{" * 200_000).passed
    assert not parse_verdict('{"pass": 1}').passed
