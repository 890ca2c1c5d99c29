"""``metaagent test --record`` and ``--replay`` as real subprocesses: the model is the real OpenAI
provider against ``FakeOpenAIServer``, the inner tool the real ``mcp-server-time`` over stdio.

A replay runs in a child with its network namespace cut (``unshare -rn``) and an audit hook that
counts every socket connect and name lookup: it must open none.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.fakes._script import tool_round_then_text
from tests.fakes.cli import METAAGENT, metaagent
from tests.fakes.mcp_clients import book_tool, time_server, write_agent
from tests.fakes.offline import NOTHING_OPENED, replay_offline
from tests.fakes.openai_server import FakeOpenAIServer

TIME_CALL = ("call_1", "t__get_current_time", {"timezone": "Europe/Lisbon"})
CASES: list[dict[str, Any]] = [
    {"name": "lisbon", "arguments": {"destination": "Lisbon"}, "expect": {"contains": ["done"]}},
]


def _agent(tmp_path: Path, base_url: str, prompt: str | None = None) -> Path:
    tool = book_tool(tests=CASES)
    if prompt is not None:
        tool["prompt"] = prompt
    return write_agent(
        tmp_path / "desk.agent.yaml",
        base_url=base_url,
        tools=[tool],
        mcp_servers={"t": time_server()},
    )


def _record(
    tmp_path: Path, prompt: str | None = None
) -> tuple[Path, subprocess.CompletedProcess[str]]:
    with FakeOpenAIServer(responder=tool_round_then_text([TIME_CALL])) as model:
        path = _agent(tmp_path, model.base_url, prompt)
        done = metaagent("test", str(path), "--record")
    return path, done


def _fixture(path: Path) -> dict[str, Any]:
    found = sorted(path.parent.glob("desk.agent.yaml.replay/book_flight/*.json"))
    assert [f.name for f in found] == ["lisbon--openai@fake-model.json"]
    data: dict[str, Any] = json.loads(found[0].read_text(encoding="utf-8"))
    return data


def test_a_recorded_run_replays_offline_opening_no_socket(tmp_path: Path) -> None:
    path, recorded = _record(tmp_path)
    assert (recorded.returncode, recorded.stderr) == (0, ""), recorded.stdout
    fixture = _fixture(path)
    assert [c["name"] for c in fixture["toolCalls"]] == ["t__get_current_time"]
    assert "Europe/Lisbon" in fixture["toolCalls"][0]["outcome"]["text"]
    assert len(fixture["exchanges"]) == 2
    assert "sk-test" not in json.dumps(fixture)

    done = replay_offline(path)

    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stderr.strip().endswith(NOTHING_OPENED)
    assert done.stdout.splitlines()[1].startswith("PASS      book_flight / lisbon  openai:fake")


def test_a_changed_template_fails_saying_where_and_re_recording_mends_it(tmp_path: Path) -> None:
    path, recorded = _record(tmp_path)
    assert recorded.returncode == 0, recorded.stdout
    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    data["metadata"]["tools"][0]["prompt"] = "Reserve a flight to {destination}."
    path.write_text(yaml.safe_dump(data), encoding="utf-8")

    changed = replay_offline(path)

    assert changed.returncode == 1
    lines = changed.stdout.splitlines()
    assert lines[1].startswith("REGRESSED book_flight / lisbon")  # it passed when recorded
    assert lines[2] == (
        "    replay: model request 1 differs from the recording at messages[0].content at "
        "character 0: recorded 'Book a flight to Lisbon for 1 passenger(…', now 'Reserve a "
        "flight to Lisbon.'; re-record with metaagent test --record"
    )

    again, rerecorded = _record(tmp_path, prompt="Reserve a flight to {destination}.")
    assert rerecorded.returncode == 0, rerecorded.stdout
    assert replay_offline(again).returncode == 0


def test_replay_without_a_recording_says_how_to_make_one(tmp_path: Path) -> None:
    path = _agent(tmp_path, "http://127.0.0.1:9/v1")

    done = replay_offline(path)

    assert done.returncode == 1
    assert "replay: no recording at " in done.stdout
    assert "record it with metaagent test --record" in done.stdout


@pytest.mark.parametrize(
    ("text", "said"),
    [
        ("\x00\x1b[31m{{{", "cannot be read (Expecting value"),
        ('{"a":' * 100_000 + "1" + "}" * 100_000, "nested too deeply to be a recording"),
    ],
    ids=["control characters", "nested 100 000 deep"],
)
def test_a_hostile_recording_fails_its_case_saying_so(tmp_path: Path, text: str, said: str) -> None:
    path, recorded = _record(tmp_path)
    assert recorded.returncode == 0, recorded.stdout
    (fixture,) = path.parent.glob("desk.agent.yaml.replay/book_flight/*.json")
    fixture.write_text(text, encoding="utf-8")

    done = replay_offline(path)

    assert done.returncode == 1, done.stdout + done.stderr
    assert said in done.stdout and "record it with metaagent test --record" in done.stdout
    assert "Traceback" not in done.stderr, done.stderr
    assert done.stderr.strip().endswith(NOTHING_OPENED), done.stderr


@pytest.mark.parametrize("flags", [("--record", "--replay")])
def test_record_and_replay_together_are_refused(tmp_path: Path, flags: tuple[str, ...]) -> None:
    done = subprocess.run(
        [str(METAAGENT), "test", str(tmp_path / "x.agent.yaml"), *flags],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 2
    assert "not allowed with argument" in done.stderr
