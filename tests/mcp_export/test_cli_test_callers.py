"""``metaagent test`` with caller cases, as a real subprocess against ``FakeOpenAIServer``: the
step in the report, each caller model's rates, JUnit and JSON, the History rows with the
caller transcript, a live decoy server, and a description edit that moves the pick rate.

``METAAGENT_HOME`` (set per test by conftest) is inherited, so the subprocesses write the
test's own history database.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import junitparser
import yaml

from mcp_export.history.conversations import ConversationFilter
from mcp_export.history.schema import agent_key
from mcp_export.history.store import HistoryStore
from mcp_export.testing.callers.history import offered_tools
from tests.fakes._script import caller, text
from tests.fakes.cli import metaagent
from tests.fakes.mcp_clients import book_tool, write_agent
from tests.fakes.openai_server import FakeOpenAIServer
from tests.mcp_export.tool_servers import time_server

ASK = "Book a flight to Lisbon for two people"
CASE = {"name": "words", "ask": ASK, "expect": {"arguments": {"destination": "LIS"}}}
GOOD = {"book_flight": {"destination": "LIS", "passengers": 2}}


def _agent(tmp_path: Path, url: str, *, wrong_url: str | None = None, **tool: Any) -> Path:
    path = write_agent(
        tmp_path / "desk.agent.yaml",
        base_url=url,
        tools=[book_tool(tests=[CASE], **tool)],
        settings={"callers": {"decoys": ["mail"]}},
    )
    if wrong_url is not None:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
        data["providers"]["vllm"] = {"VLLM_BASE_URL": wrong_url}
        path.write_text(yaml.safe_dump(data), encoding="utf-8")
    return path


def _history() -> HistoryStore:
    return HistoryStore(Path(os.environ["METAAGENT_HOME"]) / "history.sqlite3")


def test_caller_models_get_a_step_per_cell_rates_junit_json_and_history(tmp_path: Path) -> None:
    junit, report = tmp_path / "junit.xml", tmp_path / "report.json"
    with (
        FakeOpenAIServer(responder=caller(GOOD, answer=lambda b: text("Booked AF123."))) as good,
        FakeOpenAIServer(responder=caller(pick=lambda ask, offered: "send_email")) as wrong,
    ):
        path = _agent(tmp_path, good.base_url, wrong_url=wrong.base_url)
        done = metaagent(
            "test",
            str(path),
            "--caller-model",
            "openai:fake-model",
            "--caller-model",
            "vllm:mail",
            "--repeat",
            "2",
            "--junit",
            str(junit),
            "--json",
            str(report),
        )

    assert (done.returncode, done.stderr) == (1, "")
    lines = done.stdout.splitlines()
    assert lines[0] == "Travel Desk: 1 case × 1 model × 2 repeats (1 caller case × 2 caller models)"
    assert lines[1].startswith("FAIL      book_flight / words  caller vllm:mail  0/2  ")
    assert lines[2] == "    [wrong tool] picks: called send_email instead of book_flight"
    assert lines[3].startswith("PASS      book_flight / words  caller openai:fake-model  2/2  ")
    assert lines[4].startswith("1 passed, 1 failed; 4 calls in ")
    assert lines[5:] == [
        "caller openai:fake-model: picked right 2/2, wrong tool 0/2, no call 0/2, arguments "
        "valid 2/2, arguments as expected 2/2, answer passed 2/2",
        "caller vllm:mail: picked right 0/2, wrong tool 2/2 (send_email ×2), no call 0/2, "
        "arguments valid 0/2, arguments as expected 0/2, answer passed 0/2",
    ]

    suites = {suite.name: suite for suite in junitparser.JUnitXml.fromfile(str(junit))}
    assert {name: (s.tests, s.failures) for name, s in suites.items()} == {
        "openai:fake-model (caller)": (2, 0),
        "vllm:mail (caller)": (2, 2),
    }
    rates = {p.name: p.value for p in suites["vllm:mail (caller)"].properties()}
    assert rates["pickedRight"] == "0/2"
    assert rates["wrongTools"] == "send_email ×2"
    (case, _) = list(suites["vllm:mail (caller)"])
    (failure,) = case.result
    assert failure.type == "wrong tool"
    assert failure.message == "picks: called send_email instead of book_flight"
    assert "offered: book_flight, send_email, search_email" in (failure.text or "")

    data = json.loads(report.read_text(encoding="utf-8"))
    assert data["callerModels"] == ["openai:fake-model", "vllm:mail"]
    assert [(c["model"], c["caller"], c["passRate"]) for c in data["cells"]] == [
        ("openai:fake-model", True, 1.0),
        ("vllm:mail", True, 0.0),
    ]
    run = data["cells"][1]["runs"][0]
    assert run["step"] == "wrong tool"
    assert run["caller"]["picked"] == ["send_email"]
    names = ["book_flight", "send_email", "search_email"]
    assert run["caller"]["transcript"]["request"]["toolNames"] == names
    assert "tools" not in run["caller"]["transcript"]["request"]  # once, in callerTools
    assert [(t["name"], t["source"]) for t in data["callerTools"]] == [
        ("book_flight", "ours"),
        ("send_email", "common:mail"),
        ("search_email", "common:mail"),
    ]
    assert [r["picked"] for r in data["callerRates"]] == [2, 0]
    assert data["pickChanges"] == []

    with _history() as store:
        rows = store.case_runs()
        offered = offered_tools(store, rows[0].matrix_id)
    assert len(rows) == 4
    assert offered == data["callerTools"]
    kept = [row for row in rows if row.caller and "tools" in row.caller["transcript"]["request"]]
    assert len(kept) == 1  # the whole list once per run; every row names what was offered
    steps = sorted((row.model, row.caller["step"] if row.caller else "?") for row in rows)
    assert steps == [
        ("openai:fake-model", None),
        ("openai:fake-model", None),
        ("vllm:mail", "wrong tool"),
        ("vllm:mail", "wrong tool"),
    ]
    served = [row for row in rows if row.model == "openai:fake-model"]
    assert all(row.thread_id for row in served)  # the served call's conversation
    transcript = served[0].caller["transcript"] if served[0].caller else {}
    assert transcript["request"]["user"] == ASK
    assert transcript["reply"]["toolCalls"] == [
        {"name": "book_flight", "arguments": {"destination": "LIS", "passengers": 2}}
    ]
    # The runs that picked another tool made no served call: History lists each as the caller's
    # turn, marked with the caller model and the step, and not served.
    with _history() as store:
        page = store.conversations(ConversationFilter(agent_key(str(path)), case_runs=True))
        marks = sorted(
            (row.case.model, row.case.step, row.case.served, row.thread.kind)
            for row in page.rows
            if row.case is not None
        )
        (turn, *_) = [r.thread.id for r in page.rows if r.case and r.case.model == "vllm:mail"]
        said = [(m.role, m.content, m.tool_calls) for m in store.messages(turn)]
    assert marks == [
        ("openai:fake-model", None, True, "served"),
        ("openai:fake-model", None, True, "served"),
        ("vllm:mail", "wrong tool", False, "caller"),
        ("vllm:mail", "wrong tool", False, "caller"),
    ]
    assert said[0] == ("user", ASK, None)
    assert said[1][0] == "assistant" and [c["name"] for c in said[1][2] or []] == ["send_email"]


def test_a_description_edit_shows_the_pick_rate_before_and_after(tmp_path: Path) -> None:
    # The fake caller picks the tool whose name and description share the most words with the
    # request: under a name that says nothing, only the description can draw it.
    answer = caller({"handle": {"destination": "LIS"}}, answer=lambda b: text("Booked."))
    with FakeOpenAIServer(responder=answer) as model:
        vague = _agent(tmp_path, model.base_url, name="handle", description="Handles requests.")
        before = metaagent("test", str(vague), "--decoys", "none")
        clear = _agent(
            tmp_path, model.base_url, name="handle", description="Books a flight to any city."
        )
        after = metaagent("test", str(clear), "--decoys", "none", "--json", str(tmp_path / "r"))

    assert before.returncode == 1
    assert "    [no call] picks: no tool was called" in before.stdout
    assert after.returncode == 0
    assert after.stdout.splitlines()[-1] == (
        "description of handle changed since the last run: picked right 0/1 before, 1/1 "
        "now (words, caller openai:fake-model)"
    )
    (change,) = json.loads((tmp_path / "r").read_text(encoding="utf-8"))["pickChanges"]
    assert change["pickedBefore"] == [0, 1] and change["pickedAfter"] == [1, 1]
    assert change["descriptionBefore"] == "Handles requests."


def test_decoy_options_offer_a_live_server_and_another_agent_file(tmp_path: Path) -> None:
    other = write_agent(
        tmp_path / "crm.agent.yaml",
        name="CRM",
        tools=[book_tool("log_call", description="Logs a phone call with a customer.")],
    )
    command = " ".join([time_server()["command"], *time_server().get("args", [])])
    with FakeOpenAIServer(responder=caller(GOOD, answer=lambda b: text("Booked."))) as model:
        path = _agent(tmp_path, model.base_url)
        done = metaagent(
            "test",
            str(path),
            "--decoys",
            "none",
            "--decoy-agent",
            str(other),
            "--decoy-server",
            command,
        )
        offered = [t["function"]["name"] for t in model.bodies[0]["tools"]]

    assert (done.returncode, done.stderr) == (0, "")
    assert offered[:2] == ["book_flight", "log_call"]
    assert {"get_current_time", "convert_time"} <= set(offered[2:])


def test_bad_caller_options_exit_2_saying_why(tmp_path: Path) -> None:
    path = _agent(tmp_path, "http://127.0.0.1:9/v1")
    unknown = metaagent("test", str(path), "--decoys", "calendar,crm")
    gone = metaagent("test", str(path), "--decoy-server", "no-such-mcp-server-here")

    assert (unknown.returncode, unknown.stdout) == (2, "")
    assert unknown.stderr == (
        "metaagent test: --decoys: no bundled set is named 'crm' (the sets: calendar, mail, "
        "web, files, or none)\n"
    )
    assert gone.returncode == 2
    assert "the decoy server 'no-such-mcp-server-here' cannot be listed" in gone.stderr
