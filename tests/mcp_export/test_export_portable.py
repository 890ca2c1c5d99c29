"""Portable entries: ``uvx`` / ``pipx run`` of the package or a given command, and the agent file
named as the author chose (absolute, or exactly as given)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from mcp_export.clients.entry import build_entry
from mcp_export.clients.launchers import Launch
from schema_types.agent import Agent
from schema_types.files.agent_file import load_agent
from tests.fakes.mcp_clients import write_agent


def _agent(tmp_path: Path) -> Agent:

    return load_agent(write_agent(tmp_path / "a.agent.yaml", base_url="http://127.0.0.1:9/v1"))


def test_uvx_and_pipx_run_the_package_and_keep_the_path_as_given(tmp_path: Path) -> None:
    agent = _agent(tmp_path)
    uvx = build_entry("agents/a.agent.yaml", agent, "cursor", launch=Launch("uvx", "", "as-given"))
    assert uvx.entry["command"] == "uvx"
    assert uvx.entry["args"] == [
        "--from", "meta-agent-studio", "metaagent", "serve", "agents/a.agent.yaml"
    ]  # fmt: skip
    assert any("uvx fetches meta-agent-studio" in note for note in uvx.notes)
    assert any("named as given (agents/a.agent.yaml)" in note for note in uvx.notes)
    pipx = build_entry("~/a.agent.yaml", agent, "vscode", launch=Launch("pipx", "", "as-given"))
    assert pipx.entry["type"] == "stdio"
    assert pipx.entry["command"] == "pipx"
    assert pipx.entry["args"] == [
        "run", "--spec", "meta-agent-studio", "metaagent", "serve", "~/a.agent.yaml"
    ]  # fmt: skip


def test_a_given_command_is_split_like_a_shell_and_absolute_is_the_default(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    agent = _agent(tmp_path)
    launch = Launch("command", "'/opt/my tools/metaagent' --quiet-flag")
    entry = build_entry("a.agent.yaml", agent, "json", launch=launch)
    assert entry.entry["command"] == "/opt/my tools/metaagent"
    assert entry.entry["args"] == ["--quiet-flag", "serve", str(tmp_path / "a.agent.yaml")]
    default = build_entry("a.agent.yaml", agent, "json")
    assert default.entry["args"] == ["-m", "mcp_export", "serve", str(tmp_path / "a.agent.yaml")]


@pytest.mark.parametrize(
    ("launch", "message"),
    [
        (dict(launcher="command", command="  "), "needs the command that runs metaagent"),
        (dict(launcher="command", command="'open"), "cannot be read"),
        (dict(launcher="docker"), "unknown launcher 'docker'"),
        (dict(path_style="relative"), "unknown path style 'relative'"),
    ],
)
def test_a_launcher_that_cannot_work_is_refused_with_what_to_do(
    launch: dict[str, str], message: str
) -> None:
    with pytest.raises(ValueError, match=message):
        Launch(**launch)  # type: ignore[arg-type]


def test_the_cli_prints_a_portable_entry_and_refuses_a_stray_command(tmp_path: Path) -> None:
    write_agent(tmp_path / "a.agent.yaml", base_url="http://127.0.0.1:9/v1")
    env = {k: v for k, v in os.environ.items() if k != "OPENAI_API_KEY"}

    def export(*args: str) -> subprocess.CompletedProcess[str]:
        command = [sys.executable, "-m", "mcp_export", "export", "a.agent.yaml", "--client"]
        return subprocess.run(
            [*command, *args], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=60
        )

    done = export("json", "--launcher", "uvx", "--path", "as-given")
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == {
        "command": "uvx",
        "args": ["--from", "meta-agent-studio", "metaagent", "serve", "a.agent.yaml"],
    }
    given = export("cursor", "--command", "metaagent")
    entry = json.loads(given.stdout)["mcpServers"]["travel-desk"]
    assert entry == {"command": "metaagent", "args": ["serve", str(tmp_path / "a.agent.yaml")]}
    stray = export("json", "--launcher", "uvx", "--command", "metaagent")
    assert stray.returncode == 2 and "--command goes with --launcher command" in stray.stderr
    empty = export("json", "--launcher", "command")
    assert empty.returncode == 2 and "needs the command that runs metaagent" in empty.stderr
