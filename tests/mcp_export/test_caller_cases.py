"""Caller cases run in two steps: a caller model picks from the tool list a client would offer,
then the picked call is served and its answer checked. Each step that can fail is named.

The caller and the served model are the real OpenAI provider talking to ``FakeOpenAIServer``
(its ``caller`` responder chooses among the tools the request really offered); our tools come
from the agent server's own ``tools/list``; decoys from another agent file's served list, a real
``mcp-server-time`` over stdio and the bundled common sets.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from mcp_export.testing.callers import (
    DEFAULT_CALLER_PROMPT,
    CallerOptions,
    CallerResult,
    caller_rates,
)
from mcp_export.testing.callers.offer import COMMON_SETS, DecoyError, common_decoys
from mcp_export.testing.run import MatrixResult, run_matrix, select_cases
from schema_types.errors import SchemaError
from schema_types.files.agent_file import load_agent
from tests.fakes._script import RequestBody, Responder, caller, text
from tests.fakes.mcp_clients import book_tool, write_agent
from tests.fakes.openai_server import FakeOpenAIServer
from tests.mcp_export.tool_servers import time_server

pytestmark = pytest.mark.anyio

ASK = "Book a flight to Lisbon for two people"
GOOD = {"book_flight": {"destination": "LIS", "passengers": 2}}


def _booked(body: RequestBody) -> Any:
    return text("Booked AF123 to " + ("Lisbon" if "LIS" in body.last_user_text else "?"))


def _agent(tmp_path: Path, url: str, case: dict[str, Any], **settings: Any) -> Path:
    tool = book_tool(tests=[{"name": "words", "ask": ASK, **case}])
    return write_agent(tmp_path / "desk.agent.yaml", base_url=url, tools=[tool], settings=settings)


async def _run(path: Path, **options: Any) -> MatrixResult:
    agent = load_agent(path)
    return await run_matrix(agent, path, select_cases(agent), **options)


async def _one(tmp_path: Path, responder: Responder, case: dict[str, Any]) -> CallerResult:
    with FakeOpenAIServer(responder=responder) as model:
        matrix = await _run(_agent(tmp_path, model.base_url, case))
    (result,) = matrix.results
    assert isinstance(result, CallerResult)
    return result


async def test_a_caller_that_picks_our_tool_gets_its_call_served_and_the_answer_checked(
    tmp_path: Path,
) -> None:
    case = {"expect": {"arguments": {"destination": "LIS"}, "contains": ["AF123 to Lisbon"]}}
    with FakeOpenAIServer(responder=caller(GOOD, answer=_booked)) as model:
        matrix = await _run(_agent(tmp_path, model.base_url, case))
        asked = model.bodies[0]

    (result,) = matrix.results
    assert isinstance(result, CallerResult)
    assert (result.passed, result.step, result.failures) == (True, None, ())
    assert result.outcome.text == "Booked AF123 to Lisbon"
    assert result.served_model == "openai:fake-model" == result.model
    # The caller got the request in words after a neutral system prompt, and our tool exactly
    # as served, then the bundled decoys.
    assert [m["content"] for m in asked["messages"]] == [DEFAULT_CALLER_PROMPT, ASK]
    offered = [t["function"]["name"] for t in asked["tools"]]
    assert offered[0] == "book_flight"
    assert offered[1:] == [t.name for t in common_decoys()]
    assert asked["tools"][0]["function"]["description"] == "Books a flight for a traveller."
    assert result.turn is not None
    assert result.turn.transcript()["request"]["tools"][0]["source"] == "ours"
    # The served call carried the caller's arguments as they were.
    served = model.bodies[1]
    assert "Book a flight to LIS for 2 passenger(s)." in served["messages"][-1]["content"]


async def test_a_caller_that_answers_in_words_fails_at_no_call(tmp_path: Path) -> None:
    result = await _one(tmp_path, caller(pick=lambda ask, offered: None), {})

    assert (result.passed, result.step) == (False, "no call")
    assert str(result.failures[0]) == (
        'picks: no tool was called (it answered "I cannot help with that."); expected book_flight'
    )


async def test_a_caller_that_picks_a_decoy_fails_at_wrong_tool_naming_it(tmp_path: Path) -> None:
    result = await _one(tmp_path, caller(pick=lambda ask, offered: "create_event"), {})

    assert (result.passed, result.step) == (False, "wrong tool")
    assert str(result.failures[0]) == "picks: called create_event instead of book_flight"


async def test_picks_none_fails_when_the_caller_calls_our_tool_and_passes_otherwise(
    tmp_path: Path,
) -> None:
    case = {"expect": {"picks": "none"}}
    called = await _one(tmp_path, caller(GOOD), case)
    left = await _one(tmp_path / "b", caller(pick=lambda ask, offered: "web_search"), case)

    assert (called.passed, called.step) == (False, "unwanted call")
    assert "called book_flight, though the case expects none of our tools" in str(
        called.failures[0]
    )
    assert (left.passed, left.step) == (True, None)


async def test_invalid_arguments_carry_the_schemas_own_messages_and_are_not_served(
    tmp_path: Path,
) -> None:
    bad = caller({"book_flight": {"passengers": 0}})
    with FakeOpenAIServer(responder=bad) as model:
        matrix = await _run(_agent(tmp_path, model.base_url, {}))
        requests = len(model.bodies)

    (result,) = matrix.results
    assert isinstance(result, CallerResult)
    assert (result.passed, result.step) == (False, "invalid arguments")
    message = str(result.failures[0])
    assert message.startswith("arguments: book_flight was called with invalid arguments: ")
    assert "destination" in message and "passengers" in message
    assert requests == 1  # only the caller: nothing was served


async def test_arguments_that_are_not_json_fail_at_invalid_arguments(tmp_path: Path) -> None:
    result = await _one(tmp_path, caller({"book_flight": '{"destination": '}), {})

    assert (result.passed, result.step) == (False, "invalid arguments")
    assert "book_flight's arguments cannot be read" in str(result.failures[0])


async def test_valid_arguments_that_miss_the_expected_subset_fail_at_unexpected_arguments(
    tmp_path: Path,
) -> None:
    responder = caller({"book_flight": {"destination": "Lisbon"}})
    result = await _one(tmp_path, responder, {"expect": {"arguments": {"destination": "LIS"}}})

    assert (result.passed, result.step) == (False, "unexpected arguments")
    assert str(result.failures[0]) == (
        'arguments: book_flight was called with {"destination": "Lisbon"}, which does not '
        'hold {"destination": "LIS"}'
    )


async def test_a_served_answer_that_fails_its_expectations_fails_at_answer(tmp_path: Path) -> None:
    responder = caller(GOOD, answer=lambda body: text("Sold out."))
    result = await _one(tmp_path, responder, {"expect": {"contains": ["AF123"]}})

    assert (result.passed, result.step) == (False, "answer")
    assert str(result.failures[0]) == 'contains[0]: "AF123" is not in the answer "Sold out."'
    assert result.pick is not None and result.pick.arguments_valid


async def test_a_caller_model_that_fails_is_a_failed_step_not_a_crash(tmp_path: Path) -> None:
    path = _agent(tmp_path, "http://127.0.0.1:9/v1", {})
    matrix = await _run(path)

    (result,) = matrix.results
    assert isinstance(result, CallerResult)
    assert (result.passed, result.step) == (False, "caller")
    assert result.failures[0].expectation == "caller"


async def test_a_caller_model_that_cannot_be_set_up_fails_at_the_caller_step(
    tmp_path: Path,
) -> None:
    with FakeOpenAIServer(responder=caller(GOOD)) as model:
        path = _agent(tmp_path, model.base_url, {})
        matrix = await _run(path, callers=CallerOptions(models=("nosuch:model",)))

    (result,) = matrix.results
    assert isinstance(result, CallerResult)
    assert (result.passed, result.step, result.model) == (False, "caller", "nosuch:model")
    assert str(result.failures[0]).startswith(
        "caller: the caller model nosuch:model cannot be used: "
    )
    assert caller_rates(matrix.results, ["nosuch:model"])[0].caller_failed == 1


async def test_tools_of_another_agent_file_are_offered_as_they_serve_them(tmp_path: Path) -> None:
    other = write_agent(
        tmp_path / "crm.agent.yaml",
        name="CRM",
        tools=[book_tool("book_meeting", description="Books a meeting room for a team.")],
    )
    pick_meeting = caller(pick=lambda ask, offered: "book_meeting")
    with FakeOpenAIServer(responder=pick_meeting) as model:
        path = _agent(tmp_path, model.base_url, {}, callers={"decoys": []})
        matrix = await _run(path, callers=CallerOptions(decoy_agents=(other,)))
        offered = [t["function"]["name"] for t in model.bodies[0]["tools"]]

    assert offered == ["book_flight", "book_meeting"]
    (result,) = matrix.results
    assert isinstance(result, CallerResult)
    assert str(result.failures[0]) == "picks: called book_meeting instead of book_flight"
    assert result.turn is not None
    sources = [t["source"] for t in result.turn.transcript()["request"]["tools"]]
    assert sources == ["ours", f"agent:{other}"]


async def test_tools_of_a_live_mcp_server_are_offered_beside_ours(tmp_path: Path) -> None:
    time_request = "What time is it in Tokyo right now? Use the current time tool."
    tool = book_tool(tests=[{"name": "time", "ask": time_request}])
    with FakeOpenAIServer(responder=caller()) as model:
        path = write_agent(
            tmp_path / "desk.agent.yaml",
            base_url=model.base_url,
            tools=[tool],
            settings={"callers": {"decoys": [], "decoyServers": {"time": time_server()}}},
        )
        matrix = await _run(path)
        offered = {t["function"]["name"]: t["function"] for t in model.bodies[0]["tools"]}

    assert next(iter(offered)) == "book_flight"
    assert {"get_current_time", "convert_time"} <= set(offered)
    assert "timezone" in offered["get_current_time"]["parameters"]["properties"]
    (result,) = matrix.results
    assert isinstance(result, CallerResult)
    assert (result.step, str(result.failures[0])) == (
        "wrong tool",
        "picks: called get_current_time instead of book_flight",
    )


async def test_a_decoy_server_that_does_not_start_stops_the_run_saying_which(
    tmp_path: Path,
) -> None:
    path = _agent(
        tmp_path,
        "http://127.0.0.1:9/v1",
        {},
        callers={"decoyServers": {"gone": {"command": "no-such-mcp-server-here"}}},
    )
    with pytest.raises(DecoyError, match="the decoy server 'gone' cannot be listed"):
        await _run(path)


async def test_repeats_give_each_caller_model_its_rates(tmp_path: Path) -> None:
    with (
        FakeOpenAIServer(responder=caller(GOOD, answer=_booked)) as good,
        FakeOpenAIServer(responder=caller(pick=lambda ask, offered: "send_email")) as wrong,
    ):
        path = _agent(tmp_path, good.base_url, {"expect": {"contains": ["AF123"]}})
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
        data["providers"]["vllm"] = {"VLLM_BASE_URL": wrong.base_url}
        path.write_text(yaml.safe_dump(data), encoding="utf-8")
        callers = CallerOptions(models=("openai:fake-model", "vllm:mail"))
        matrix = await _run(path, repeat=3, callers=callers)

    assert matrix.caller_models == ["openai:fake-model", "vllm:mail"]
    assert len(matrix.results) == 6
    good_rates, wrong_rates = caller_rates(matrix.results, matrix.caller_models)
    assert (good_rates.runs, good_rates.picked, good_rates.answer_passed) == (3, 3, 3)
    assert (good_rates.arguments_valid, good_rates.arguments_expected) == (3, 3)
    assert (wrong_rates.runs, wrong_rates.picked, wrong_rates.wrong_tool) == (3, 0, 3)
    assert dict(wrong_rates.wrong_tools) == {"send_email": 3}
    assert (wrong_rates.arguments_valid, wrong_rates.answer_passed) == (0, 0)
    # Each served call ran on the agent's own model, whichever caller picked it.
    assert {r.served_model for r in matrix.results if isinstance(r, CallerResult)} == {
        "openai:fake-model"
    }


async def test_prefix_offers_our_tool_as_serve_prefix_lists_it_and_serves_that_name(
    tmp_path: Path,
) -> None:
    served = {"travel-desk__book_flight": {"destination": "LIS"}}
    with FakeOpenAIServer(responder=caller(served, answer=_booked)) as model:
        path = _agent(tmp_path, model.base_url, {"expect": {"contains": ["Lisbon"]}})
        matrix = await _run(path, callers=CallerOptions(prefix=True, decoy_sets=()))
        offered = [t["function"]["name"] for t in model.bodies[0]["tools"]]

    assert offered == ["travel-desk__book_flight"]
    (result,) = matrix.results
    assert (result.passed, result.outcome.text) == (True, "Booked AF123 to Lisbon")


def _hotel() -> dict[str, Any]:
    return {
        "name": "book_hotel",
        "description": "Books a hotel room.",
        "parameters": {
            "type": "object",
            "properties": {"city": {"type": "string"}, "nights": {"type": "integer", "minimum": 1}},
            "required": ["city", "nights"],
        },
        "prompt": "Book a hotel in {city} for {nights} night(s).",
    }


def _two_tools(tmp_path: Path, url: str, expect: dict[str, Any], **settings: Any) -> Path:
    case = {"name": "words", "ask": ASK, "expect": expect}
    tools = [book_tool(tests=[case]), _hotel()]
    return write_agent(tmp_path / "desk.agent.yaml", base_url=url, tools=tools, settings=settings)


def _hotel_answer(body: RequestBody) -> Any:
    return text("Served: " + body.last_user_text)


@pytest.mark.parametrize("prefix", [False, True])
async def test_picks_another_of_our_tools_serves_that_tool_and_checks_its_answer(
    tmp_path: Path, prefix: bool
) -> None:
    name = "travel-desk__book_hotel" if prefix else "book_hotel"
    expect = {
        "picks": "book_hotel",
        "arguments": {"city": "Lisbon"},
        "contains": ["Book a hotel in Lisbon for 3 night(s)."],
    }
    picks = caller(
        {name: {"city": "Lisbon", "nights": 3}},
        pick=lambda ask, offered: name,
        answer=_hotel_answer,
    )
    with FakeOpenAIServer(responder=picks) as model:
        path = _two_tools(tmp_path, model.base_url, expect)
        matrix = await _run(path, callers=CallerOptions(prefix=prefix, decoy_sets=()))

    (result,) = matrix.results
    assert isinstance(result, CallerResult)
    assert (result.tool, result.step, result.failures) == ("book_flight", None, ())
    assert result.passed
    # book_hotel's own prompt template rendered the caller's arguments: that tool was served.
    assert "Book a hotel in Lisbon for 3 night(s)." in result.outcome.text
    assert result.pick is not None and result.pick.arguments_valid is True


async def test_picks_another_of_our_tools_validates_its_arguments_by_that_tools_schema(
    tmp_path: Path,
) -> None:
    bad = caller({"book_hotel": {"city": "Lisbon", "nights": 0}}, pick=lambda a, o: "book_hotel")
    with FakeOpenAIServer(responder=bad) as model:
        path = _two_tools(tmp_path, model.base_url, {"picks": "book_hotel"})
        matrix = await _run(path, callers=CallerOptions(decoy_sets=()))
        requests = len(model.bodies)

    (result,) = matrix.results
    assert isinstance(result, CallerResult)
    assert (result.passed, result.step) == (False, "invalid arguments")
    message = str(result.failures[0])
    assert message.startswith("arguments: book_hotel was called with invalid arguments: ")
    assert "nights" in message
    assert requests == 1  # only the caller: nothing was served


async def test_the_caller_system_prompt_comes_from_the_run_else_the_agent_file(
    tmp_path: Path,
) -> None:
    with FakeOpenAIServer(responder=caller(GOOD)) as model:
        path = _agent(tmp_path, model.base_url, {}, callers={"systemPrompt": "You are Claude."})
        await _run(path)
        await _run(path, callers=CallerOptions(system_prompt="You are Cursor's agent."))
        prompts = [b["messages"][0]["content"] for b in model.bodies if b.get("tools")]

    assert prompts == ["You are Claude.", "You are Cursor's agent."]


async def test_the_caller_models_come_from_the_run_else_the_agent_file(tmp_path: Path) -> None:
    with FakeOpenAIServer(responder=caller(GOOD)) as model:
        path = _agent(tmp_path, model.base_url, {}, callers={"models": ["openai:a", "openai:b"]})
        from_file = await _run(path)
        from_run = await _run(path, callers=CallerOptions(models=("openai:c",)))
        asked = [b["model"] for b in model.bodies if b.get("tools")]

    assert from_file.caller_models == ["openai:a", "openai:b"]
    assert from_run.caller_models == ["openai:c"]
    assert sorted(asked) == ["a", "b", "c"]


def test_a_case_with_ask_and_arguments_is_refused_where_it_is(tmp_path: Path) -> None:
    tool = book_tool(tests=[{"name": "both", "ask": ASK, "arguments": {"destination": "LIS"}}])
    path = write_agent(tmp_path / "desk.agent.yaml", tools=[tool])

    with pytest.raises(SchemaError) as raised:
        load_agent(path)
    said = str(raised.value)
    assert "metadata.tools[0].tests[0]" in said
    assert "case 'both' has both ask and arguments" in said


def test_caller_expectations_without_ask_and_an_empty_ask_are_refused(tmp_path: Path) -> None:
    stray = book_tool(tests=[{"name": "stray", "arguments": {"destination": "LIS"}}])
    stray["tests"][0]["expect"] = {"picks": "book_flight"}
    blank = book_tool(tests=[{"name": "blank", "ask": "  "}])
    for name, tool in (("stray", stray), ("blank", blank)):
        path = write_agent(tmp_path / f"{name}.agent.yaml", tools=[tool])
        with pytest.raises(SchemaError) as raised:
            load_agent(path)
        said = str(raised.value)
        assert "metadata.tools[0].tests[0]" in said
        if name == "stray":
            assert "case 'stray' has expect.picks, which only a caller case checks" in said
        else:
            assert "ask is empty: write the request in words" in said


def test_an_unknown_bundled_decoy_set_is_refused_listing_the_sets() -> None:
    with pytest.raises(DecoyError, match="no bundled decoy set is named 'crm'"):
        common_decoys(["crm"])
    assert COMMON_SETS == ("calendar", "mail", "web", "files")
