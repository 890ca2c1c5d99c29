"""``verify`` launches the entry a client's config holds, with what that client passes, and calls.

``metaagent export --install`` writes the Claude Desktop entry (its key written empty: no secret
goes into the file) and ``metaagent verify --call`` runs it as real subprocesses: the served agent
over stdio, the official ``mcp`` Client, a ``FakeOpenAIServer`` on loopback that refuses any other
key. The shell running verify has the key set, as the studio's did when Verify wrongly said Ready:
the launched server must not see it. HOME points into ``tmp_path`` (the launched server's data
folder and keyring live there).
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

import pytest
from mcp.client.stdio import get_default_environment

from mcp_export.clients.verify import verify_export
from mcp_export.clients.verify_report import render_report
from tests.fakes._script import Reply, RequestBody, text
from tests.fakes.cli import metaagent
from tests.fakes.home_keyring import use_home_keyring
from tests.fakes.openai_server import FakeOpenAIServer

# Not shaped like a known key: only verify's own redaction of what it passed can hide it.
SECRET = "test-key-SECRET-0123456789"
LIMIT_S = "60"
ENV_SERVER = Path(__file__).resolve().parents[1] / "fakes" / "env_server.py"

AGENT_YAML = """\
metadata:
  name: Travel Desk
  version: 1.0.0
  description: Plans trips.
  tools:
    - name: book_flight
      description: Books a flight.
      parameters:
        type: object
        properties: {{destination: {{type: string}}}}
        required: [destination]
      prompt: Book a flight to {{destination}}.
      tests:
        - name: refused without a destination
          arguments: {{}}
          expect: {{isError: true}}
        - name: Lisbon
          arguments: {{destination: Lisbon}}
settings:
  model: openai:fake-model
providers:
  openai:
    OPENAI_API_KEY: {key}
    OPENAI_BASE_URL: {base_url}
"""


def _booked(body: RequestBody) -> Reply:
    # The model repeats the key it was sent, as a careless proxy does: the report must not.
    return text(f"Booked: {body.last_user_text}", echo_credentials=True)


def _agent(tmp_path: Path, model: FakeOpenAIServer, key: str) -> Path:
    path = tmp_path / "travel.agent.yaml"
    path.write_text(AGENT_YAML.format(key=key, base_url=model.base_url), encoding="utf-8")
    return path


def _env(tmp_path: Path) -> dict[str, str]:
    home = tmp_path / "home"
    home.mkdir(exist_ok=True)
    passed_by_tests = ("XDG_CONFIG_HOME", "PYTHON_KEYRING_BACKEND", "METAAGENT_TEST_KEYRING")
    env = {key: value for key, value in os.environ.items() if key not in passed_by_tests}
    return env | {"HOME": str(home), "NO_COLOR": "1", "OPENAI_API_KEY": SECRET}


def _install_for_claude_desktop(agent: Path, config: Path, env: dict[str, str]) -> dict[str, Any]:
    done = metaagent(
        "export", str(agent), "--client", "claude-desktop", "--install", "--config", str(config),
        env=env,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    entry: dict[str, Any] = json.loads(config.read_text())["mcpServers"]["travel-desk"]
    return entry


def _verify(agent: Path, config: Path, env: dict[str, str], *args: str) -> Any:
    return metaagent(
        "verify", str(agent), "--client", "claude-desktop", "--config", str(config),
        "--timeout", LIMIT_S, "--call-timeout", LIMIT_S, *args,
        env=env, timeout=240,
    )  # fmt: skip


def test_an_empty_key_in_the_claude_desktop_config_is_not_ready_and_the_call_says_why(tmp_path):
    env = _env(tmp_path)
    config = tmp_path / "claude_desktop_config.json"
    with FakeOpenAIServer(responder=_booked, api_key=SECRET) as model:
        agent = _agent(tmp_path, model, "env://OPENAI_API_KEY")
        assert _install_for_claude_desktop(agent, config, env)["env"] == {"OPENAI_API_KEY": ""}

        done = _verify(agent, config, env, "--call")

    out = done.stdout
    assert done.returncode == 1, out + done.stderr
    assert f"entry: mcpServers › travel-desk in {config}" in out
    where = f"empty in {config} at mcpServers › travel-desk › env › OPENAI_API_KEY"
    lines = out.splitlines()
    assert any(line.startswith("✘ env OPENAI_API_KEY") and where in line for line in lines)
    assert "fill in the value there" in out
    assert "keyring://SERVICE/NAME at providers.openai.OPENAI_API_KEY in the agent file" in out
    assert "✘ model" in out
    assert "call book_flight with test case 'Lisbon': " in out
    assert "isError result after" in out
    assert "book_flight cannot run: no model: OPENAI_API_KEY is set but empty" in out
    assert "ready" not in out
    assert model.bodies == []  # the call failed before any model request
    assert SECRET not in out + done.stderr


def test_the_key_filled_into_the_config_is_ready_and_the_call_returns_the_answer(tmp_path):
    env = _env(tmp_path)
    config = tmp_path / "claude_desktop_config.json"
    with FakeOpenAIServer(responder=_booked, api_key=SECRET) as model:
        agent = _agent(tmp_path, model, "env://OPENAI_API_KEY")
        _install_for_claude_desktop(agent, config, env)
        document = json.loads(config.read_text())
        document["mcpServers"]["travel-desk"]["env"]["OPENAI_API_KEY"] = SECRET
        config.write_text(json.dumps(document, indent=2))
        env.pop("OPENAI_API_KEY")  # only the config has it now

        done = _verify(agent, config, env, "--call", "book_flight")

    out = done.stdout
    assert done.returncode == 0, out + done.stderr
    assert "✔ env OPENAI_API_KEY" in out and "✔ call book_flight" in out
    assert "Booked: Book a flight to Lisbon.[redacted]" in out
    assert out.rstrip().splitlines()[-1].startswith("✔ ready")
    assert len(model.bodies) == 1
    assert SECRET not in out + done.stderr


def test_a_keyring_reference_needs_no_value_in_the_config_and_the_call_answers(tmp_path):
    env = _env(tmp_path)
    env.pop("OPENAI_API_KEY")
    use_home_keyring(Path(env["HOME"]), {("metaagent-studio", "travel-desk-openai"): SECRET})
    config = tmp_path / "claude_desktop_config.json"
    with FakeOpenAIServer(responder=_booked, api_key=SECRET) as model:
        agent = _agent(tmp_path, model, "keyring://metaagent-studio/travel-desk-openai")
        assert "env" not in _install_for_claude_desktop(agent, config, env)

        done = _verify(agent, config, env, "--call")

    out = done.stdout
    assert done.returncode == 0, out + done.stderr
    assert "environment: nothing from the entry" in out
    assert "Booked: Book a flight to Lisbon." in out
    assert len(model.bodies) == 1
    assert SECRET not in out + done.stderr


@pytest.mark.parametrize(
    ("command", "said"),
    [
        ("/nowhere/bin/python", "/nowhere/bin/python does not exist"),
        ("no-such-mcp-server", "'no-such-mcp-server' is not on the PATH the server gets"),
    ],
)
def test_an_entry_whose_command_does_not_exist_says_so(tmp_path, command, said):
    env = _env(tmp_path)
    config = tmp_path / "claude_desktop_config.json"
    entry = {"command": command, "args": ["serve"]}
    config.write_text(json.dumps({"mcpServers": {"travel-desk": entry}}))
    with FakeOpenAIServer(responder=_booked, api_key=SECRET) as model:
        agent = _agent(tmp_path, model, "env://OPENAI_API_KEY")
        done = _verify(agent, config, env)

    assert done.returncode == 1
    line = next(line for line in done.stdout.splitlines() if line.startswith("✘ command"))
    assert said in line
    assert "mcpServers › travel-desk › command" in line
    assert "Claude Desktop cannot start the server" in line
    assert "connects" not in done.stdout  # nothing was launched


@pytest.mark.anyio
async def test_the_launched_server_gets_only_what_the_client_passes(tmp_path, monkeypatch):
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)
    monkeypatch.setenv("SHELL_ONLY_VARIABLE", "kept here")
    written = {"FROM_ENTRY": "yes", "OPENAI_API_KEY": ""}
    config = tmp_path / "claude_desktop_config.json"
    entry = {"command": sys.executable, "args": [str(ENV_SERVER)], "env": written}
    config.write_text(json.dumps({"mcpServers": {"travel-desk": entry}}))
    with FakeOpenAIServer(responder=_booked) as model:
        agent = _agent(tmp_path, model, "env://OPENAI_API_KEY")
        report = await verify_export(
            agent, "claude-desktop", config_path=config, call=True, tool="environment", timeout=60
        )

    assert report.call is not None and report.call.ok, render_report(report)
    seen = json.loads(report.call.text)
    assert seen == get_default_environment() | written
    assert "SHELL_ONLY_VARIABLE" not in seen and "METAAGENT_HOME" not in seen
    assert report.launch is not None and report.launch.process_env() == seen
