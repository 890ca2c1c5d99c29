"""``metaagent test --record`` and ``--replay`` of a caller case, as real subprocesses: the caller
model and the served model are the real OpenAI provider against ``FakeOpenAIServer``, the served
call's inner tool and a live decoy server the real ``mcp-server-time`` over stdio.

A replay runs in a child with its network namespace cut (``unshare -rn``) and an audit hook that
counts every socket connect and name lookup, and every process started: it must open none and
start none (no caller model, no served model, no decoy server, no tool server).
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import yaml

from mcp_export.testing.callers.ask import DEFAULT_CALLER_PROMPT
from tests.fakes._script import Reply, RequestBody, text, tool_calls
from tests.fakes.cli import metaagent
from tests.fakes.mcp_clients import book_tool, time_server, write_agent
from tests.fakes.offline import NOTHING_OPENED, replay_offline
from tests.fakes.openai_server import FakeOpenAIServer

ASK = "Book a flight to Lisbon for two people"
CASE: dict[str, Any] = {
    "name": "words",
    "ask": ASK,
    "expect": {"arguments": {"destination": "LIS"}, "contains": ["done"]},
}
TIME_CALL = ("call_t", "t__get_current_time", {"timezone": "Europe/Lisbon"})


def _respond(body: RequestBody) -> Reply:
    """The caller model picks book_flight; the served model asks the time, then answers."""
    if body["messages"][0]["content"] == DEFAULT_CALLER_PROMPT:
        return tool_calls([("call_1", "book_flight", {"destination": "LIS", "passengers": 2})])
    if body.rounds_since_user == 0:
        return tool_calls([TIME_CALL])
    return text("done: " + " | ".join(r.content for r in body.tool_results))


def _agent(tmp_path: Path, base_url: str, description: str | None = None) -> Path:
    tool = book_tool(tests=[CASE])
    if description is not None:
        tool["description"] = description
    return write_agent(
        tmp_path / "desk.agent.yaml",
        base_url=base_url,
        tools=[tool],
        mcp_servers={"t": time_server()},
        settings={"callers": {"decoys": ["mail"], "decoyServers": {"clock": time_server()}}},
    )


def _record(
    tmp_path: Path, description: str | None = None
) -> tuple[Path, subprocess.CompletedProcess[str], FakeOpenAIServer]:
    with FakeOpenAIServer(responder=_respond) as model:
        path = _agent(tmp_path, model.base_url, description)
        done = metaagent("test", str(path), "--record")
    return path, done, model


def _fixture(path: Path) -> dict[str, Any]:
    found = sorted(path.parent.glob("desk.agent.yaml.replay/book_flight/*.json"))
    assert [f.name for f in found] == ["words--openai@fake-model.json"]
    data: dict[str, Any] = json.loads(found[0].read_text(encoding="utf-8"))
    return data


def test_a_recorded_caller_case_replays_offline_opening_no_socket_and_no_process(
    tmp_path: Path,
) -> None:
    path, recorded, model = _record(tmp_path)
    assert (recorded.returncode, recorded.stderr) == (0, ""), recorded.stdout
    assert len(model.model_requests) == 3  # the caller's pick, the served model's two turns
    fixture = _fixture(path)
    caller = fixture["caller"]
    assert (caller["model"], caller["modelName"]) == ("openai:fake-model", "fake-model")
    (turn,) = caller["exchanges"]
    offered = [t["name"] for t in turn["request"]["tools"]]
    assert offered[0] == "book_flight"
    assert {"get_current_time", "send_email"} <= set(offered)  # the live server, the bundled set
    (pick,) = turn["events"][-1]["completion"]["message"]["toolCalls"]
    assert (pick["name"], pick["arguments"]) == (
        "book_flight",
        {"destination": "LIS", "passengers": 2},
    )
    assert [t["name"] for t in caller["decoyServers"]["clock"]] == [
        "get_current_time",
        "convert_time",
    ]
    assert [c["name"] for c in fixture["toolCalls"]] == ["t__get_current_time"]
    assert len(fixture["exchanges"]) == 2
    assert "sk-test" not in json.dumps(fixture)

    done = replay_offline(path)

    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stderr.strip().endswith(NOTHING_OPENED), done.stderr
    lines = done.stdout.splitlines()
    assert lines[1].startswith("PASS      book_flight / words  caller openai:fake-model  1/1"), (
        lines
    )


def test_a_changed_description_fails_the_replay_saying_where_and_re_recording_mends_it(
    tmp_path: Path,
) -> None:
    path, recorded, _ = _record(tmp_path)
    assert recorded.returncode == 0, recorded.stdout
    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    data["metadata"]["tools"][0]["description"] = "Reserves a seat on a plane."
    path.write_text(yaml.safe_dump(data), encoding="utf-8")

    changed = replay_offline(path)

    assert changed.returncode == 1, changed.stdout + changed.stderr
    assert changed.stderr.strip().endswith(NOTHING_OPENED), changed.stderr
    lines = changed.stdout.splitlines()
    assert lines[1].startswith("REGRESSED book_flight / words  caller openai:fake-model"), lines
    assert lines[2] == (
        "    [caller] replay: caller request 1 differs from the recording at "
        "tools[0].description at character 0: recorded 'Books a flight for a traveller.', "
        "now 'Reserves a seat on a plane.'; re-record with metaagent test --record"
    )
    assert "replay:" not in "\n".join(lines[3:]), lines  # said once
    # The replay never asked the caller: it counts in no pick rate and moves none.
    assert "caller openai:fake-model: 1 replayed run(s) left the recording, not counted" in (
        changed.stdout
    )
    assert "picked right" not in changed.stdout, changed.stdout

    again, rerecorded, _ = _record(tmp_path, description="Reserves a seat on a plane.")
    assert rerecorded.returncode == 0, rerecorded.stdout
    done = replay_offline(again)
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stderr.strip().endswith(NOTHING_OPENED), done.stderr


def test_a_caller_case_without_a_recording_says_how_to_make_one(tmp_path: Path) -> None:
    path = _agent(tmp_path, "http://127.0.0.1:9/v1")

    done = replay_offline(path)

    assert done.returncode == 1
    assert "replay: no recording at " in done.stdout, done.stdout
    assert "record it with metaagent test --record" in done.stdout


def test_a_decoy_server_added_after_recording_fails_the_replay_naming_it(tmp_path: Path) -> None:
    path, recorded, _ = _record(tmp_path)
    assert recorded.returncode == 0, recorded.stdout
    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    data["settings"]["callers"]["decoyServers"]["calendar"] = time_server()
    path.write_text(yaml.safe_dump(data), encoding="utf-8")

    done = replay_offline(path)

    assert done.returncode == 1, done.stdout + done.stderr
    assert done.stderr.strip().endswith(NOTHING_OPENED), done.stderr
    assert done.stdout.splitlines()[2] == (
        "    [caller] replay: the decoy server 'calendar' is not in the recording (it holds "
        "'clock'); re-record with metaagent test --record"
    )
