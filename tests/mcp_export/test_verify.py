"""``verify``: launch the exported server as a client would, over real stdio, in both modes.

The end-to-end tests spawn ``python -m mcp_export serve`` exactly as the exported entry says and
talk to it with the official ``mcp`` Client. HOME points into ``tmp_path`` so the server (and
anything it writes, and the client config files verify looks for) never touches the real home
directory. The launched server gets only what a client passes: HOME is its data folder's home.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from mcp.client.stdio import DEFAULT_INHERITED_ENV_VARS

from mcp_export.clients.entry import build_entry
from mcp_export.clients.launch import client_launch, expand
from mcp_export.clients.verify import verify_export
from mcp_export.clients.verify_checks import tool_problems
from mcp_export.clients.verify_prompts import check_prompts
from mcp_export.clients.verify_report import (
    Check,
    ModeResult,
    VerifiedPrompt,
    VerifiedTool,
    VerifyReport,
    render_report,
)
from schema_types.agent import Agent, ToolDefinition

SECRET = "sk-test-SECRET-verify-42"
TIMEOUT = 60.0

AGENT_YAML = """\
metadata:
  name: Travel Desk
  version: 2.1.0
  description: Plans and books trips.
  tools:
    - name: book_flight
      description: Books a flight ticket for a user.
      parameters:
        type: object
        properties:
          destination: {type: string, description: Where to.}
          passengers:
            type: array
            items:
              type: object
              properties: {name: {type: string}, age: {type: integer, minimum: 0}}
              required: [name]
        required: [destination]
      prompt: Book a flight to {destination} for {passengers}.
    - name: trip_chat
      description: Talks a trip through.
      conversation: true
      parameters:
        type: object
        properties: {message: {type: string}}
        required: [message]
      prompt: "{message}"
settings:
  model: openai:gpt-4.1-mini
providers:
  openai:
    OPENAI_API_KEY: env://OPENAI_API_KEY
    OPENAI_BASE_URL: http://127.0.0.1:9/v1
"""


@pytest.fixture
def agent_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.delenv("XDG_CONFIG_HOME", raising=False)
    path = tmp_path / "travel.agent.yaml"
    path.write_text(AGENT_YAML, encoding="utf-8")
    return path


PROMPT_PARAMETERS = {
    "type": "object",
    "properties": {"a": {"type": "string"}, "b": {"type": "integer"}},
    "required": ["a"],
}


def _verify_cli(path: Path, *args: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "mcp_export", "verify", str(path), "--timeout", str(TIMEOUT), *args],
        capture_output=True,
        text=True,
        encoding="utf-8",
        env=env,
        timeout=TIMEOUT * 3,
        check=False,
    )


# --- pieces that need no server ----------------------------------------------------------------


def test_each_client_expands_its_own_variable_syntax_and_claude_desktop_none():
    environ = {"KEY": SECRET, "EMPTY": ""}
    assert expand("claude-desktop", "${env:KEY} ${KEY}", environ) == ("${env:KEY} ${KEY}", [])
    assert expand("json", "", environ) == ("", [])
    assert expand("cursor", "Bearer ${env:KEY}", environ) == (f"Bearer {SECRET}", [])
    assert expand("vscode", "${env:MISSING}${env:EMPTY}", environ) == ("", ["MISSING", "EMPTY"])
    assert expand("claude-code", "${KEY}", environ) == (SECRET, [])
    assert expand("claude-code", "${MISSING:-fallback}/${GONE}", environ) == (
        "fallback/",
        ["MISSING", "GONE"],
    )


def test_the_launch_takes_the_installed_entry_as_written_else_the_exported_one(tmp_path):
    agent = Agent.model_validate(
        {"providers": {"openai": {"OPENAI_API_KEY": "env://OPENAI_API_KEY"}}}
    )
    entry = build_entry(tmp_path / "a.yaml", agent, "claude-desktop")
    environ = {"OPENAI_API_KEY": SECRET}
    config = tmp_path / "claude_desktop_config.json"

    exported = client_launch(entry, config_path=config, environ=environ)
    assert exported.source is None and exported.config_file == config
    # The file keeps a placeholder, and Claude Desktop passes it as written: empty.
    assert exported.env == {"OPENAI_API_KEY": ""}
    assert (exported.command, list(exported.args)) == (entry.entry["command"], entry.entry["args"])

    installed = {"command": "/opt/py", "args": ["-m", "x"], "env": {"OPENAI_API_KEY": "typed"}}
    config.write_text(json.dumps({"mcpServers": {entry.name: installed}}), encoding="utf-8")
    launch = client_launch(entry, config_path=config, environ=environ)
    assert launch.source == config
    assert (launch.command, launch.args, launch.env) == ("/opt/py", ("-m", "x"), installed["env"])
    assert launch.key_path("env", "X") == f"mcpServers › {entry.name} › env › X"
    # What the process gets: the SDK's default set from here, then the entry's env, nothing else.
    assert set(launch.process_env()) <= {*DEFAULT_INHERITED_ENV_VARS, "OPENAI_API_KEY"}

    cursor = build_entry(tmp_path / "a.yaml", agent, "cursor")
    cursor_config = tmp_path / "mcp.json"
    assert client_launch(cursor, config_path=cursor_config, environ=environ).env == {
        "OPENAI_API_KEY": SECRET
    }
    unset = client_launch(cursor, config_path=cursor_config, environ={})
    assert unset.env == {"OPENAI_API_KEY": ""} and unset.unset == ("OPENAI_API_KEY",)


def test_served_tools_are_checked_against_the_meta_schema_and_the_agent_file():
    definition = ToolDefinition(
        name="t",
        parameters={"type": "object", "properties": {"a": {"type": "string"}}},
    )

    def served(schema, output=None):
        return VerifiedTool("t", None, "", schema, output)

    assert tool_problems(served(dict(definition.parameters)), definition) == []
    broken = {"type": "object", "properties": {"a": {"type": "strin"}}}
    problems = tool_problems(served(broken), definition)
    assert any("not valid JSON Schema at properties/a/type" in p for p in problems)
    assert any("differs from the parameters" in p for p in problems)
    assert tool_problems(served({"type": "array"}), definition) == [
        "inputSchema: the root must be type: object",
        "inputSchema differs from the parameters in the agent file",
    ]
    bad_output = tool_problems(served(dict(definition.parameters), {"type": 5}), definition)
    assert bad_output and bad_output[0].startswith("outputSchema is not valid JSON Schema")
    chat = ToolDefinition(name="t", conversation=True, parameters=dict(definition.parameters))
    with_id = {
        "type": "object",
        "properties": {"a": {"type": "string"}, "conversation_id": {"type": "string"}},
    }
    assert tool_problems(served(with_id), chat) == []
    assert tool_problems(served(with_id), definition) != []


def test_served_prompts_are_checked_against_the_tools_and_the_setting(tmp_path):
    def agent(on):
        return Agent.model_validate(
            {
                "metadata": {"tools": [{"name": "t", "parameters": PROMPT_PARAMETERS}]},
                "settings": {"toolsAsPrompts": on},
            }
        )

    def judged(on, prompts, other=None):
        report = VerifyReport(tmp_path / "a.yaml", "json", None)
        results = [ModeResult("legacy", prompts=prompts), ModeResult("auto", prompts=other)]
        check_prompts(report, agent(on), results)
        return [(c.label, c.ok, c.detail) for c in report.checks]

    right = VerifiedPrompt("t", "", ("a", "b"), ("a",))
    assert judged(True, [right], [right]) == [("1 prompt listed", True, "t")]
    assert judged(False, None, None) == [("prompts", True, "none (settings.toolsAsPrompts is off)")]
    assert judged(False, [right], [right]) == [
        ("prompts", False, "the server lists t, but settings.toolsAsPrompts is off")
    ]
    (offers_none,) = judged(True, None, None)
    assert not offers_none[1] and "offers no prompts" in offers_none[2]
    assert judged(True, [VerifiedPrompt("t", "", ("a",), ("a",))], []) == [
        ("same prompts in both modes", False, "auto listed none"),
        ("1 prompt listed", False, "t; t takes a, its tool a, b"),
    ]
    assert judged(True, [VerifiedPrompt("u", "", (), ())]) == [
        ("same prompts in both modes", False, "auto listed none"),
        ("1 prompt listed", False, "u; missing: t; not a tool of the agent file: u"),
    ]


def test_the_report_is_one_screen_with_a_marker_per_check(tmp_path):
    agent = Agent.model_validate(
        {"metadata": {"name": "Travel Desk"}, "settings": {"model": "sampling"}}
    )
    report = VerifyReport(
        tmp_path / "a.yaml", "cursor", build_entry(tmp_path / "a.yaml", agent, "cursor")
    )
    report.add("connects (legacy handshake)", True, "protocol 2025-11-25")
    report.add("model", False, "no model\nset one")
    text = render_report(report)
    lines = text.splitlines()
    assert lines[0] == "Verify travel-desk for Cursor"
    assert lines[1].strip().endswith(f"-m mcp_export serve {tmp_path / 'a.yaml'}")
    assert "✔ connects (legacy handshake)  protocol 2025-11-25" in lines
    assert f"✘ {'model'.ljust(len('connects (legacy handshake)'))}  no model" in lines
    assert "    set one" in lines
    assert any(line.strip().startswith("note: the agent's model is 'sampling'") for line in lines)
    assert lines[-1] == "✘ 1 problem(s): model"
    assert not report.ok and report.problems == [Check("model", False, "no model\nset one")]
    coloured = render_report(report, color=True, ascii_only=True)
    assert "\033[32m+\033[0m connects" in coloured and "\033[31mx\033[0m model" in coloured


@pytest.mark.anyio
async def test_an_agent_file_that_does_not_load_is_a_failed_check(tmp_path):
    report = await verify_export(tmp_path / "missing.agent.yaml", "vscode", timeout=5)
    assert not report.ok and report.entry is None
    assert report.checks[0].label == "agent file loads"
    assert "missing.agent.yaml" in report.checks[0].detail


@pytest.mark.anyio
async def test_a_server_that_does_not_answer_in_time_is_reported(agent_file):
    report = await verify_export(agent_file, "json", timeout=0.05)
    failed = {check.label: check.detail for check in report.problems}
    assert failed["connects (legacy handshake)"].startswith("no answer within 0.05 s")
    assert failed["connects (auto discovery)"].startswith("no answer within 0.05 s")
    assert report.tools == []


# --- end to end: the real server over stdio ----------------------------------------------------


@pytest.mark.anyio
async def test_verify_launches_the_exported_server_and_sees_what_the_agent_file_says(
    agent_file, monkeypatch
):
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)

    # Cursor fills ${env:OPENAI_API_KEY} from the environment it is started in: this one.
    report = await verify_export(agent_file, "cursor", timeout=TIMEOUT)

    assert report.ok, render_report(report)
    assert report.protocols == {"legacy": "2025-11-25", "auto": "2026-07-28"}
    assert (report.server_name, report.server_version) == ("Travel Desk", "2.1.0")
    assert report.instructions == "Plans and books trips."
    assert [tool.name for tool in report.tools] == ["book_flight", "trip_chat"]
    labels = [check.label for check in report.checks]
    assert labels[:2] == ["connects (legacy handshake)", "connects (auto discovery)"]
    assert {
        "serverInfo",
        "instructions",
        "2 tools listed",
        "tool book_flight",
        "tool trip_chat",
        "prompts",
        "model",
    } <= set(labels)
    assert report.prompts == []
    for mode in ("legacy", "auto"):
        assert 0 < report.timings[f"{mode}.connect"] < TIMEOUT
        assert report.timings[f"{mode}.list"] >= 0
    assert report.timings["total"] >= max(
        report.timings["legacy.connect"], report.timings["auto.connect"]
    )
    assert SECRET not in render_report(report)


@pytest.mark.anyio
async def test_verify_lists_the_prompts_of_an_agent_that_serves_its_tools_as_prompts(
    agent_file, monkeypatch
):
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)
    text = agent_file.read_text(encoding="utf-8")
    agent_file.write_text(
        text.replace(
            "  model: openai:gpt-4.1-mini\n",
            "  model: openai:gpt-4.1-mini\n  toolsAsPrompts: true\n",
        ),
        encoding="utf-8",
    )

    report = await verify_export(agent_file, "cursor", timeout=TIMEOUT)

    assert report.ok, render_report(report)
    assert [(p.name, p.arguments, p.required) for p in report.prompts] == [
        ("book_flight", ("destination", "passengers"), ("destination",)),
        ("trip_chat", ("message",), ("message",)),
    ]
    assert "✔ 2 prompts listed" in render_report(report)
    assert "book_flight, trip_chat" in render_report(report)


@pytest.mark.anyio
async def test_a_client_without_sampling_and_no_key_is_a_problem_a_sampling_client_is_not(
    agent_file, monkeypatch
):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)

    desktop = await verify_export(agent_file, "claude-desktop", timeout=TIMEOUT)
    vscode = await verify_export(agent_file, "vscode", timeout=TIMEOUT)

    assert [check.label for check in desktop.problems] == ["env OPENAI_API_KEY", "model"]
    assert "OPENAI_API_KEY" in desktop.problems[1].detail
    assert vscode.ok, render_report(vscode)
    model = next(check for check in vscode.checks if check.label == "model")
    assert "sampling" in model.detail


def test_verify_cli_prints_one_screen_and_exits_by_the_outcome(agent_file):
    env = {**os.environ, "OPENAI_API_KEY": SECRET, "NO_COLOR": "1"}

    good = _verify_cli(agent_file, "--client", "cursor", env=env)

    assert good.returncode == 0, good.stdout + good.stderr
    lines = good.stdout.splitlines()
    assert lines[0] == "Verify travel-desk for Cursor"
    assert len(lines) <= 24
    assert any(
        line.startswith("✔ connects (legacy handshake)  protocol 2025-11-25") for line in lines
    )
    assert any(line.startswith("✔ connects (auto discovery)") for line in lines)
    assert any(line.startswith("✔ tool book_flight") for line in lines)
    assert "✘" not in good.stdout and "\033[" not in good.stdout
    assert lines[-1].startswith("✔ ready")
    assert SECRET not in good.stdout + good.stderr

    # The key is set in this shell, but Claude Desktop passes the entry's empty value.
    bad = _verify_cli(agent_file, "--client", "claude-desktop", env=env)
    assert bad.returncode == 1
    assert any(
        line.startswith("✘ model") and "OPENAI_API_KEY is set but empty" in line
        for line in bad.stdout.splitlines()
    )
    assert "ready" not in bad.stdout
    assert SECRET not in bad.stdout + bad.stderr
