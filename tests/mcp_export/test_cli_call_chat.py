"""``metaagent call`` and ``metaagent chat`` as real subprocesses against ``FakeOpenAIServer``.

The agent file is written to ``tmp_path``; its provider points at the fake server and reads the
key from ``TEST_KEY``. ``METAAGENT_HOME`` (set per test by conftest) is inherited, so the
subprocesses write the test's own history database, which the test then reads.
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from mcp_export.cli._call import call_tool
from mcp_export.cli._chat import _Chat
from mcp_export.cli._terminal import Runtime
from mcp_export.history.store import HistoryStore
from mcp_export.providers.factory import provider_for_agent
from mcp_export.toolbox.agent_toolbox import AgentToolbox
from schema_types.agent import Agent
from schema_types.files.agent_file import load_agent
from tests.fakes._script import (
    Reply,
    RequestBody,
    status,
    text,
    text_without_usage,
    tool_calls,
    tool_round_then_text,
)
from tests.fakes.noticing_provider import NOTICE, NoticingProvider
from tests.fakes.openai_server import FakeOpenAIServer

REPO = Path(__file__).resolve().parents[2]


def time_server() -> dict[str, Any]:
    local = Path(sys.executable).parent / "mcp-server-time"
    found = str(local) if local.exists() else shutil.which("mcp-server-time")
    if found:
        return {"command": found, "args": ["--local-timezone", "UTC"]}
    return {"command": sys.executable, "args": ["-m", "mcp_server_time", "--local-timezone", "UTC"]}


def write_agent(tmp_path: Path, server: FakeOpenAIServer, **extra: Any) -> Path:
    data: dict[str, Any] = {
        "metadata": {
            "name": "CLI agent",
            "tools": [
                {
                    "name": "greet",
                    "description": "Greets someone.",
                    "parameters": {
                        "type": "object",
                        "properties": {
                            "who": {"type": "string"},
                            "times": {"type": "integer", "minimum": 1, "default": 1},
                        },
                        "required": ["who"],
                    },
                    "prompt": "Greet {who} {times} times.",
                }
            ],
        },
        "settings": {"model": "openai:fake-model", "toolPermission": "tool"},
        "systemPrompt": "You are the CLI agent.",
        "providers": {
            "openai": {"OPENAI_API_KEY": "env://TEST_KEY", "OPENAI_BASE_URL": server.base_url}
        },
    }
    data.update(extra)
    path = tmp_path / "cli.agent.yaml"
    path.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
    return path


def metaagent(
    *args: str, stdin: str | None = None, timeout: float = 60
) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, TEST_KEY="sk-test", PYTHONIOENCODING="utf-8")
    return subprocess.run(
        [sys.executable, "-m", "mcp_export", *args],
        input=stdin,
        capture_output=True,
        text=True,
        encoding="utf-8",
        timeout=timeout,
        cwd=REPO,
        env=env,
        check=False,
    )


def user_texts(body: dict[str, Any]) -> list[str]:
    return [m["content"] for m in body["messages"] if m["role"] == "user"]


# --- call -----------------------------------------------------------------------------------


def test_call_streams_the_answer_to_stdout_and_records_the_run(tmp_path: Path):
    with FakeOpenAIServer([text("Hello Ada!", chunks=3)]) as server:
        agent = write_agent(tmp_path, server)
        done = metaagent(
            "call", str(agent), "greet", "--arg", "who=Ada", "--set", "temperature=0.3"
        )

    assert done.returncode == 0, done.stderr
    assert done.stdout == "Hello Ada!\n"
    body = server.bodies[0]
    assert user_texts(body) == ["Greet Ada 1 times."]
    assert body["temperature"] == 0.3
    store = HistoryStore()
    try:
        runs = store.runs()
        assert len(runs) == 1
        assert runs[0].tool_name == "greet" and runs[0].answer == "Hello Ada!"
        assert runs[0].filled_prompt == "Greet Ada 1 times."
    finally:
        store.close()


def test_call_takes_json_arguments_and_no_history(tmp_path: Path):
    with FakeOpenAIServer() as server:  # echoes the prompt
        agent = write_agent(tmp_path, server)
        done = metaagent(
            "call", str(agent), "greet", "--json", '{"who": "Bo", "times": 3}', "--no-history"
        )

    assert done.returncode == 0, done.stderr
    assert done.stdout == "Greet Bo 3 times.\n"
    store = HistoryStore()
    try:
        assert store.runs() == []
    finally:
        store.close()


def test_call_shows_inner_tool_calls_on_stderr(tmp_path: Path):
    def respond(body: RequestBody) -> Reply:
        if body.rounds_since_user == 0:
            return tool_calls([("c1", "time__get_current_time", {"timezone": "UTC"})])
        return text("It is " + json.loads(body.tool_results[0].content)["timezone"])

    servers = {"time": {**time_server(), "serverToolDefaults": {"permissionRequired": False}}}
    with FakeOpenAIServer(responder=respond) as server:
        agent = write_agent(tmp_path, server, mcpServers=servers)
        done = metaagent("call", str(agent), "greet", "--arg", "who=Ada")

    assert done.returncode == 0, done.stderr
    assert done.stdout == "It is UTC\n"
    assert '→ time__get_current_time {"timezone":"UTC"}' in done.stderr
    assert "← time__get_current_time" in done.stderr and " ms ok" in done.stderr


def test_call_with_bad_arguments_exits_2_naming_each_field(tmp_path: Path):
    with FakeOpenAIServer() as server:
        agent = write_agent(tmp_path, server)
        done = metaagent("call", str(agent), "greet", "--arg", "times=0")

    assert done.returncode == 2
    assert "who" in done.stderr and "times" in done.stderr
    assert server.model_requests == []


def test_call_of_an_unknown_tool_exits_2(tmp_path: Path):
    with FakeOpenAIServer() as server:
        agent = write_agent(tmp_path, server)
        done = metaagent("call", str(agent), "nope")

    assert done.returncode == 2
    assert "no tool named 'nope'" in done.stderr and "greet" in done.stderr


def test_call_with_an_unknown_model_parameter_exits_2(tmp_path: Path):
    with FakeOpenAIServer() as server:
        agent = write_agent(tmp_path, server)
        done = metaagent("call", str(agent), "greet", "--arg", "who=A", "--set", "warmth=3")

    assert done.returncode == 2
    assert "warmth" in done.stderr


def test_call_that_fails_exits_1_with_the_reason_and_a_hint(tmp_path: Path):
    with FakeOpenAIServer(responder=lambda body: status(500)) as server:
        agent = write_agent(tmp_path, server)
        done = metaagent("call", str(agent), "greet", "--arg", "who=Ada")

    assert done.returncode == 1
    assert done.stdout == ""
    assert "error:" in done.stderr and "500" in done.stderr
    assert "hint:" in done.stderr


EMPTY_ANSWER = (
    "error: the model answered with an empty message\n"
    "hint: try again, or make the prompt ask for a written answer\n"
)


def test_call_with_an_empty_answer_exits_1_with_the_sessions_message_and_hint(tmp_path: Path):
    with FakeOpenAIServer([text("")]) as server:
        agent = write_agent(tmp_path, server)
        done = metaagent("call", str(agent), "greet", "--arg", "who=Ada")

    assert done.returncode == 1
    assert done.stdout == ""
    assert done.stderr == EMPTY_ANSWER
    with HistoryStore() as store:
        [run] = store.runs()
    assert (run.status, run.error) == ("error", "the model answered with an empty message")


def test_call_whose_model_reports_no_usage_records_null_counts_not_zero(tmp_path: Path):
    with FakeOpenAIServer([text_without_usage("Hello Ada!", chunks=2)]) as server:
        agent = write_agent(tmp_path, server)
        done = metaagent("call", str(agent), "greet", "--arg", "who=Ada")

    assert done.returncode == 0, done.stderr
    assert done.stdout == "Hello Ada!\n"
    assert done.stderr == ""
    with HistoryStore() as store:
        [run] = store.runs()
    assert run.answer == "Hello Ada!"
    assert (run.tokens_in, run.tokens_out) == (None, None)


def test_call_notes_once_on_stderr_that_the_server_refuses_streamed_tool_use(tmp_path: Path):
    call = ("c1", "time__get_current_time", {"timezone": "UTC"})
    servers = {"time": {**time_server(), "serverToolDefaults": {"permissionRequired": False}}}
    respond = tool_round_then_text([call], "It is noon.")
    with FakeOpenAIServer(responder=respond, refuse_streamed_tool_choice=True) as server:
        agent = write_agent(tmp_path, server, mcpServers=servers)
        done = metaagent("call", str(agent), "greet", "--arg", "who=Ada")

    host = server.base_url.removeprefix("http://").removesuffix("/v1")
    note = f"note: {host} refuses streamed tool use; tool turns go without streaming\n"
    assert done.returncode == 0, done.stderr
    assert done.stdout == "It is noon.\n"
    assert done.stderr.startswith(note)
    assert done.stderr.count(note) == 1
    assert "→ time__get_current_time" in done.stderr


def _noticing_runtime(path: Path, **options: Any) -> tuple[Agent, Runtime]:
    """The agent of ``path`` and a runtime whose provider also passes ``NOTICE``."""
    agent = load_agent(path)
    provider, model = provider_for_agent(agent)
    toolbox = AgentToolbox(agent, base_dir=path.parent) if agent.mcp_servers else None
    return agent, Runtime(NoticingProvider(provider, **options), model, toolbox, None)


def test_call_prints_a_notice_once_on_stderr_and_never_in_the_answer(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
):
    monkeypatch.setenv("TEST_KEY", "sk-test")
    servers = {"time": {**time_server(), "serverToolDefaults": {"permissionRequired": False}}}
    call = ("c1", "time__get_current_time", {"timezone": "UTC"})
    with FakeOpenAIServer(responder=tool_round_then_text([call], "It is noon.")) as server:
        path = write_agent(tmp_path, server, mcpServers=servers)
        agent, runtime = _noticing_runtime(path)

        async def main() -> int:
            try:
                return await call_tool(runtime, agent, path, "greet", {"who": "Ada"}, "Hi", {})
            finally:
                await runtime.aclose()

        code = asyncio.run(main())
        requests = len(server.model_requests)

    out, err = capsys.readouterr()
    assert code == 0, err
    assert requests == 2  # both requests passed the notice
    assert out == "It is noon.\n"
    assert err.count(f"note: {NOTICE}\n") == 1
    assert err.startswith(f"note: {NOTICE}\n")


def test_chat_prints_a_notice_in_mid_answer_on_stderr_only_once_per_chat(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
):
    monkeypatch.setenv("TEST_KEY", "sk-test")
    with FakeOpenAIServer() as server:  # echoes
        path = write_agent(tmp_path, server)
        agent, runtime = _noticing_runtime(path, after_text=True)
        chat = _Chat(agent, path, runtime, {})

        async def main() -> list[bool]:
            try:
                return [await chat.send("first words"), await chat.send("second words")]
            finally:
                await runtime.aclose()

        answered = asyncio.run(main())

    out, err = capsys.readouterr()
    assert answered == [True, True]
    assert out == "first words\nsecond words\n"
    # The first delta left the answer's line open: the note starts on a line of its own.
    assert err == f"\nnote: {NOTICE}\n"


def test_chat_with_an_empty_answer_exits_1_with_the_same_message_as_call(tmp_path: Path):
    with FakeOpenAIServer([text("")]) as server:
        agent = write_agent(tmp_path, server)
        done = metaagent("chat", str(agent), "-m", "hello", "--new")

    assert done.returncode == 1
    assert done.stdout == ""
    assert done.stderr.startswith(EMPTY_ANSWER)
    assert done.stderr.removeprefix(EMPTY_ANSWER).startswith("thread: ")


def test_call_without_the_key_says_what_to_set(tmp_path: Path):
    with FakeOpenAIServer() as server:
        agent = write_agent(tmp_path, server)
        env = {k: v for k, v in os.environ.items() if k != "TEST_KEY"}
        done = subprocess.run(
            [sys.executable, "-m", "mcp_export", "call", str(agent), "greet", "--arg", "who=A"],
            capture_output=True,
            text=True,
            timeout=60,
            cwd=REPO,
            env=env | {"PYTHONIOENCODING": "utf-8"},
            check=False,
        )

    assert done.returncode == 1
    assert "TEST_KEY" in done.stderr


# --- chat -----------------------------------------------------------------------------------


def test_chat_with_m_answers_and_resumes_the_thread_on_the_next_run(tmp_path: Path):
    with FakeOpenAIServer() as server:  # echoes
        agent = write_agent(tmp_path, server)
        first = metaagent("chat", str(agent), "-m", "first message")
        second = metaagent("chat", str(agent), "-m", "second message")
        fresh = metaagent("chat", str(agent), "-m", "fresh start", "--new")

    assert first.returncode == 0, first.stderr
    assert first.stdout == "first message\n"
    thread = first.stderr.strip().splitlines()[-1].removeprefix("thread: ")
    assert second.stderr.strip().splitlines()[-1] == f"thread: {thread}"
    assert user_texts(server.bodies[1]) == ["first message", "second message"]
    assert user_texts(server.bodies[2]) == ["fresh start"]
    assert fresh.stderr.strip().splitlines()[-1] != f"thread: {thread}"


def test_chat_continues_an_explicit_thread(tmp_path: Path):
    with FakeOpenAIServer() as server:
        agent = write_agent(tmp_path, server)
        first = metaagent("chat", str(agent), "-m", "one")
        thread = first.stderr.strip().splitlines()[-1].removeprefix("thread: ")
        metaagent("chat", str(agent), "-m", "two", "--new")
        third = metaagent("chat", str(agent), "-m", "three", "--thread", thread)
        unknown = metaagent("chat", str(agent), "-m", "x", "--thread", "no-such-thread")

    assert third.returncode == 0, third.stderr
    assert user_texts(server.bodies[2]) == ["one", "three"]
    assert unknown.returncode == 2
    assert "no-such-thread" in unknown.stderr


def test_chat_repl_reads_piped_lines_and_commands(tmp_path: Path):
    servers = {
        "time": {
            **time_server(),
            "serverToolDefaults": {"permissionRequired": False},
            "tools": {"convert_time": {"permissionRequired": True}},
        }
    }
    lines = [
        "hello",
        "/set temperature 0.5",
        "/system Be brief.",
        "/tools",
        "again",
        "/save",
        "/clear",
        "fresh",
        "/bogus",
        "/quit",
        "never sent",
    ]
    with FakeOpenAIServer() as server:
        agent = write_agent(tmp_path, server, mcpServers=servers)
        done = metaagent("chat", str(agent), "--new", stdin="\n".join(lines) + "\n")

    assert done.returncode == 0, done.stderr
    out = done.stdout.splitlines()
    assert out[0] == "hello" and out[1] == "again" and out[3] == "fresh"
    saved = out[2]
    assert len(out) == 4
    bodies = server.bodies
    assert len(bodies) == 3
    assert "temperature" not in bodies[0]
    assert bodies[1]["temperature"] == 0.5
    assert bodies[1]["messages"][0] == {"role": "system", "content": "Be brief."}
    assert user_texts(bodies[1]) == ["hello", "again"]
    assert user_texts(bodies[2]) == ["fresh"]
    assert "time__get_current_time" in done.stderr
    assert "time__convert_time" in done.stderr and "needs permission" in done.stderr
    assert "unknown command /bogus" in done.stderr
    store = HistoryStore()
    try:
        assert [m.content for m in store.messages(saved) if m.role == "user"] == ["hello", "again"]
    finally:
        store.close()


def test_a_tool_loop_on_llama_cpp_python_says_the_model_never_saw_the_result(tmp_path: Path):
    """llama-cpp-python's one tool format renders no tool message: the call still answers, and
    stderr says why the answer cannot have used the tool's result (once per endpoint)."""

    def respond(body: RequestBody) -> Reply:
        if body.rounds_since_user == 0:
            return tool_calls([("c1", "time__get_current_time", {"timezone": "UTC"})])
        return text("It is noon.")

    servers = {"time": {**time_server(), "serverToolDefaults": {"permissionRequired": False}}}
    with FakeOpenAIServer.like_llama_cpp_python(responder=respond) as server:
        agent = write_agent(tmp_path, server, mcpServers=servers)
        data = yaml.safe_load(agent.read_text(encoding="utf-8"))
        data["providers"]["openai"]["stream"] = "false"
        agent.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
        done = metaagent("call", str(agent), "greet", "--arg", "who=Ada")

    assert done.returncode == 0, done.stderr
    assert done.stdout == "It is noon.\n"
    assert "leaves tool results out of the model's prompt" in done.stderr
    assert done.stderr.count("leaves tool results out") == 1
