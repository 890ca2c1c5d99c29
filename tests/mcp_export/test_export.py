"""Export: the entry each client gets, its install into a config file, and the ``export`` CLI.

Every config file here lives under ``tmp_path`` (``--config``); the CLI subprocesses get a fake
HOME, so the real home directory is never read or written.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import stat
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from mcp_export.clients.entry import CLIENTS, ExportEntry, build_entry, default_config_path, snippet
from mcp_export.clients.install import InstallError, install, strip_jsonc
from mcp_export.errors import ExportError
from schema_types.agent import Agent
from schema_types.files.agent_file import load_agent
from tests.fakes.claude_cli import install_fake_claude, logged_calls

SECRET = "sk-test-SECRET-0123456789"
PYTHON = os.path.abspath(sys.executable)
BACKUP_NAME = re.compile(r"\.bak-\d{8}-\d{6}(-\d+)?$")

AGENT_YAML = """\
metadata:
  name: Travel Desk
  version: 1.2.0
  description: Plans and books trips.
  tools:
    - name: book_flight
      description: Books a flight.
      parameters:
        type: object
        properties:
          destination: {type: string}
        required: [destination]
      prompt: Book a flight to {destination}.
settings:
  model: openai:gpt-4.1-mini
providers:
  openai:
    OPENAI_API_KEY: env://OPENAI_API_KEY
    OPENAI_BASE_URL: http://127.0.0.1:9/v1
mcpServers:
  github:
    command: github-mcp
    env: {GITHUB_TOKEN: "env://GITHUB_TOKEN", LOG_LEVEL: debug}
  search:
    type: streamable-http
    url: http://127.0.0.1:9/mcp
    headers: {Authorization: "Bearer env://SEARCH_TOKEN"}
"""

ENV_NAMES = ("OPENAI_API_KEY", "GITHUB_TOKEN", "SEARCH_TOKEN")

# Each editable client: its servers key, the env value it gets, and whether the entry has "type".
FILE_CLIENTS: dict[str, tuple[str, str, bool]] = {
    "claude-desktop": ("mcpServers", "", False),
    "cursor": ("mcpServers", "${env:NAME}", False),
    "vscode": ("servers", "${env:NAME}", True),
}


def _agent(**metadata: Any) -> Agent:
    import yaml

    data = yaml.safe_load(AGENT_YAML)
    data["metadata"].update(metadata)
    return Agent.model_validate(data)


def _agent_file(tmp_path: Path, name: str = "travel.agent.yaml") -> Path:
    path = tmp_path / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(AGENT_YAML, encoding="utf-8")
    return path


def _existing_config(client: str) -> dict[str, Any]:
    key = FILE_CLIENTS[client][0]
    return {
        "globalShortcut": "Ctrl+Space",
        key: {
            "time": {"command": "uvx", "args": ["mcp-server-time"]},
            "files": {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-filesystem"]},
        },
        "inputs": [{"id": "token", "type": "promptString", "password": True}],
    }


def _backups(path: Path) -> list[Path]:
    return sorted(p for p in path.parent.iterdir() if BACKUP_NAME.search(p.name))


# --- the entry ---------------------------------------------------------------------------------


def test_entry_launches_this_venv_python_with_the_absolute_agent_path(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    _agent_file(tmp_path)
    entry = build_entry("travel.agent.yaml", _agent(), "claude-desktop")
    assert entry.entry["command"] == PYTHON
    # The venv's own python, not the base interpreter its symlink points at.
    assert Path(entry.entry["command"]).parent == Path(PYTHON).parent
    assert entry.entry["args"] == ["-m", "mcp_export", "serve", str(tmp_path / "travel.agent.yaml")]
    assert entry.agent_path == tmp_path / "travel.agent.yaml"


def test_default_server_name_is_a_slug_of_the_agent_name_and_can_be_chosen():
    assert build_entry("a.yaml", _agent(), "json").name == "travel-desk"
    assert build_entry("a.yaml", _agent(name="  Ünï Café 2!  "), "json").name == "uni-cafe-2"
    assert build_entry("a.yaml", _agent(name="!!!"), "json").name == "agent"
    assert build_entry("a.yaml", _agent(), "json", name="trips").name == "trips"
    with pytest.raises(ValueError, match="empty"):
        build_entry("a.yaml", _agent(), "json", name="  ")


@pytest.mark.parametrize(
    ("client", "value"),
    [
        ("claude-desktop", ""),
        ("cursor", "${env:NAME}"),
        ("vscode", "${env:NAME}"),
        ("claude-code", "${NAME}"),
        ("json", ""),
    ],
)
def test_env_names_only_the_referenced_variables_in_the_clients_syntax(client, value):
    entry = build_entry("a.yaml", _agent(), client)
    assert entry.env_names == ENV_NAMES
    assert entry.entry["env"] == {name: value.replace("NAME", name) for name in ENV_NAMES}


def test_an_agent_without_references_gets_no_env_key():
    agent = Agent.model_validate({"metadata": {"name": "Plain"}, "settings": {"model": "sampling"}})
    entry = build_entry("a.yaml", agent, "vscode")
    assert entry.env_names == ()
    assert "env" not in entry.entry


@pytest.mark.parametrize(
    ("settings", "providers", "expected"),
    [
        ({"model": "anthropic:claude-sonnet-4-5"}, {}, ("ANTHROPIC_API_KEY",)),
        ({"model": "openai:gpt-4.1"}, {}, ("OPENAI_API_KEY",)),
        ({"model": "openai:gpt-4.1"}, {"openai": {"OPENAI_API_KEY": "env://MY_KEY"}}, ("MY_KEY",)),
        ({"model": "openai:gpt-4.1"}, {"openai": {"OPENAI_API_KEY": "keyring://s/n"}}, ()),
        ({"model": "ollama:llama3.2"}, {}, ()),
        ({"model": "vllm:qwen"}, {}, ("VLLM_BASE_URL",)),
        ({"model": "openrouter:openai/gpt-4o"}, {}, ("OPENROUTER_API_KEY",)),
        ({"model": "sampling"}, {}, ()),
    ],
)
def test_env_names_include_what_the_provider_reads_when_the_agent_does_not_say(
    settings, providers, expected
):
    agent = Agent.model_validate({"settings": settings, "providers": providers})
    assert build_entry("a.yaml", agent, "vscode").env_names == expected


@pytest.mark.parametrize("client", ["claude-desktop", "cursor", "vscode", "json"])
def test_snippet_has_the_clients_config_shape(client):
    entry = build_entry("/agents/travel.agent.yaml", _agent(), client)
    document = json.loads(snippet(entry))
    assert snippet(entry) == entry.snippet
    assert "\n  " in entry.snippet  # two-space indentation
    if client == "json":
        assert document == entry.entry
        assert set(document) == {"command", "args", "env"}
        return
    key, _, typed = FILE_CLIENTS[client]
    assert document == {key: {"travel-desk": entry.entry}}
    assert ("type" in entry.entry) is typed
    if typed:
        assert entry.entry["type"] == "stdio"


def test_claude_code_gets_the_exact_add_json_command():
    entry = build_entry("/agents/travel.agent.yaml", _agent(), "claude-code")
    payload = (
        '{"type":"stdio","command":"' + PYTHON + '","args":["-m","mcp_export","serve",'
        '"/agents/travel.agent.yaml"],"env":{"OPENAI_API_KEY":"${OPENAI_API_KEY}",'
        '"GITHUB_TOKEN":"${GITHUB_TOKEN}","SEARCH_TOKEN":"${SEARCH_TOKEN}"}}'
    )
    assert entry.snippet == f"claude mcp add-json travel-desk {shlex.quote(payload)} --scope user"
    assert entry.snippet.startswith('claude mcp add-json travel-desk \'{"type":"stdio"')


def test_claude_code_command_survives_quotes_and_spaces_in_paths(tmp_path):
    path = tmp_path / "it's my agents" / "travel.agent.yaml"
    entry = build_entry(path, _agent(), "claude-code", name="trip desk")
    words = shlex.split(entry.snippet)
    assert words[:3] == ["claude", "mcp", "add-json"]
    assert words[3] == "trip desk"
    assert json.loads(words[4]) == entry.entry
    assert json.loads(words[4])["args"][-1] == str(path)
    assert words[5:] == ["--scope", "user"]


def test_every_client_is_described_for_the_export_dialog():
    assert list(CLIENTS) == ["claude-desktop", "claude-code", "vscode", "cursor", "json"]
    for client_id, info in CLIENTS.items():
        assert info.id == client_id
        assert info.label and info.notes
    assert "sampling" in CLIENTS["claude-desktop"].notes
    assert CLIENTS["vscode"].sampling and not CLIENTS["claude-desktop"].sampling


def test_notes_say_what_is_left_to_set():
    desktop = build_entry("a.yaml", _agent(), "claude-desktop")
    assert any("OPENAI_API_KEY" in note and "config file" in note for note in desktop.notes)
    vscode = build_entry("a.yaml", _agent(), "vscode")
    assert any("reads OPENAI_API_KEY" in note for note in vscode.notes)
    sampler = Agent.model_validate({"settings": {"model": "sampling"}})
    assert any(
        "does not offer MCP sampling" in n for n in build_entry("a", sampler, "cursor").notes
    )
    assert build_entry("a", sampler, "vscode").notes == ()


# --- where the config files are ----------------------------------------------------------------


@pytest.mark.parametrize(
    ("client", "platform", "expected"),
    [
        ("claude-desktop", "linux", "/home/u/.config/Claude/claude_desktop_config.json"),
        (
            "claude-desktop",
            "darwin",
            "/home/u/Library/Application Support/Claude/claude_desktop_config.json",
        ),
        ("cursor", "linux", "/home/u/.cursor/mcp.json"),
        ("cursor", "darwin", "/home/u/.cursor/mcp.json"),
        ("vscode", "linux", "/home/u/.config/Code/User/mcp.json"),
        ("vscode", "darwin", "/home/u/Library/Application Support/Code/User/mcp.json"),
    ],
)
def test_standard_config_locations_on_linux_and_macos(client, platform, expected):
    path = default_config_path(client, platform=platform, home="/home/u", env={})
    assert path == Path(expected)


def test_standard_config_locations_on_windows():
    env = {"APPDATA": r"C:\Users\u\AppData\Roaming"}
    home = r"C:\Users\u"
    assert str(default_config_path("claude-desktop", platform="win32", home=home, env=env)) == (
        r"C:\Users\u\AppData\Roaming\Claude\claude_desktop_config.json"
    )
    assert str(default_config_path("vscode", platform="win32", home=home, env=env)) == (
        r"C:\Users\u\AppData\Roaming\Code\User\mcp.json"
    )
    assert str(default_config_path("cursor", platform="win32", home=home, env=env)) == (
        r"C:\Users\u\.cursor\mcp.json"
    )
    # Without APPDATA, the roaming folder under the home directory.
    assert str(default_config_path("vscode", platform="win32", home=home, env={})) == (
        r"C:\Users\u\AppData\Roaming\Code\User\mcp.json"
    )


def test_linux_honours_xdg_config_home_and_some_clients_have_no_file():
    env = {"XDG_CONFIG_HOME": "/xdg"}
    path = default_config_path("vscode", platform="linux", home="/home/u", env=env)
    assert path == Path("/xdg/Code/User/mcp.json")
    assert default_config_path("claude-code", platform="linux", home="/h", env={}) is None
    assert default_config_path("json", platform="darwin", home="/h", env={}) is None


# --- install -----------------------------------------------------------------------------------


@pytest.mark.parametrize("client", list(FILE_CLIENTS))
def test_install_merges_keeps_everything_else_and_backs_up_the_old_bytes(tmp_path, client):
    config = tmp_path / "config" / "mcp.json"
    config.parent.mkdir()
    old = _existing_config(client)
    old_bytes = (json.dumps(old, indent=4) + "\n").encode()
    config.write_bytes(old_bytes)
    entry = build_entry(tmp_path / "travel.agent.yaml", _agent(), client)

    result = install(entry, config)

    assert result.changed and result.path == config
    assert str(config) in result.message
    key = FILE_CLIENTS[client][0]
    merged = json.loads(config.read_text())
    assert merged[key] == {**old[key], "travel-desk": entry.entry}
    assert {k: v for k, v in merged.items() if k != key} == {
        k: v for k, v in old.items() if k != key
    }
    assert list(merged) == list(old)  # top-level order kept
    assert config.read_text().startswith('{\n  "globalShortcut"')  # two-space indentation
    assert result.backup is not None and _backups(config) == [result.backup]
    assert result.backup.name.startswith("mcp.json.bak-")
    assert result.backup.read_bytes() == old_bytes


@pytest.mark.parametrize("client", list(FILE_CLIENTS))
def test_reinstalling_the_same_entry_writes_nothing(tmp_path, client):
    config = tmp_path / "mcp.json"
    config.write_text(json.dumps(_existing_config(client)))
    entry = build_entry(tmp_path / "travel.agent.yaml", _agent(), client)
    install(entry, config)
    written = config.read_bytes()
    stamp = config.stat().st_mtime_ns

    again = install(entry, config)

    assert not again.changed and again.backup is None
    assert "already installed" in again.message
    assert config.read_bytes() == written and config.stat().st_mtime_ns == stamp
    assert len(_backups(config)) == 1


@pytest.mark.parametrize("client", list(FILE_CLIENTS))
def test_a_different_server_of_the_same_name_needs_force(tmp_path, client):
    config = tmp_path / "mcp.json"
    key = FILE_CLIENTS[client][0]
    other = {"command": "node", "args": ["other-travel-desk.js"]}
    document = _existing_config(client)
    document[key]["travel-desk"] = other
    config.write_text(json.dumps(document, indent=2))
    before = config.read_bytes()
    entry = build_entry(tmp_path / "travel.agent.yaml", _agent(), client)

    with pytest.raises(InstallError) as refused:
        install(entry, config)

    message = str(refused.value)
    assert "--force" in message and "other-travel-desk.js" in message and PYTHON in message
    assert config.read_bytes() == before and _backups(config) == []

    result = install(entry, config, force=True)
    assert result.changed and "replaced" in result.message
    assert json.loads(config.read_text())[key]["travel-desk"] == entry.entry
    assert result.backup is not None and result.backup.read_bytes() == before


def test_install_creates_a_missing_file_and_folder_without_a_backup(tmp_path):
    config = tmp_path / "new" / "folder" / "claude_desktop_config.json"
    entry = build_entry(tmp_path / "a.agent.yaml", _agent(), "claude-desktop")
    result = install(entry, config)
    assert result.changed and result.backup is None
    assert json.loads(config.read_text()) == {"mcpServers": {"travel-desk": entry.entry}}
    assert config.read_text().endswith("}\n")
    assert [p.name for p in config.parent.iterdir()] == ["claude_desktop_config.json"]


def test_a_private_config_file_stays_private(tmp_path):
    config = tmp_path / "mcp.json"
    config.write_text("{}")
    config.chmod(0o600)
    install(build_entry(tmp_path / "a.yaml", _agent(), "cursor"), config)
    assert stat.S_IMODE(config.stat().st_mode) == 0o600


@pytest.mark.parametrize("client", list(FILE_CLIENTS))
def test_invalid_json_is_refused_with_its_position_and_left_untouched(tmp_path, client):
    config = tmp_path / "mcp.json"
    broken = b'{\n  "mcpServers": {\n    "time": {"command": "uvx",}\n  \n'
    config.write_bytes(broken)
    entry = build_entry(tmp_path / "a.yaml", _agent(), client)
    with pytest.raises(InstallError, match=r"not valid JSON \(line \d+, column \d+") as refused:
        install(entry, config)
    assert isinstance(refused.value, ExportError)
    assert "nothing was changed" in str(refused.value)
    assert config.read_bytes() == broken
    assert sorted(p.name for p in tmp_path.iterdir()) == ["mcp.json"]


def test_a_config_that_is_not_shaped_like_one_is_refused(tmp_path):
    config = tmp_path / "mcp.json"
    entry = build_entry(tmp_path / "a.yaml", _agent(), "cursor")
    config.write_text('["not", "an", "object"]')
    with pytest.raises(InstallError, match="not an object"):
        install(entry, config)
    config.write_text('{"mcpServers": []}')
    with pytest.raises(InstallError, match="'mcpServers' is a list"):
        install(entry, config)
    assert config.read_text() == '{"mcpServers": []}'


def test_vscode_config_with_comments_and_trailing_commas_is_merged(tmp_path):
    config = tmp_path / "mcp.json"
    jsonc = """\
// Servers for this profile
{
  /* the time server */
  "servers": {
    "time": {"type": "stdio", "command": "uvx", "args": ["mcp-server-time",],},
    "web": {"type": "http", "url": "http://example.com/mcp // not a comment /* nor this */"},
  },
  "inputs": [],
}
"""
    config.write_text(jsonc)
    entry = build_entry(tmp_path / "a.yaml", _agent(), "vscode")

    result = install(entry, config)

    merged = json.loads(config.read_text())
    assert merged["servers"]["time"]["args"] == ["mcp-server-time"]
    assert (
        merged["servers"]["web"]["url"] == "http://example.com/mcp // not a comment /* nor this */"
    )
    assert merged["servers"]["travel-desk"] == entry.entry
    assert merged["inputs"] == []
    assert "comments could not be kept" in result.message
    assert result.backup is not None and result.backup.read_text() == jsonc


def test_comments_are_invalid_json_for_the_other_clients(tmp_path):
    config = tmp_path / "claude_desktop_config.json"
    config.write_text('{\n  // a comment\n  "mcpServers": {}\n}\n')
    with pytest.raises(InstallError, match=r"line 2, column 3"):
        install(build_entry(tmp_path / "a.yaml", _agent(), "claude-desktop"), config)


def test_strip_jsonc_keeps_positions_and_strings():
    text = '{"a": "x//y", // c\n "b": [1, 2,], /* d\n e */ "c": "/*s*/",}'
    stripped = strip_jsonc(text)
    assert len(stripped) == len(text) and stripped.count("\n") == text.count("\n")
    assert json.loads(stripped) == {"a": "x//y", "b": [1, 2], "c": "/*s*/"}
    assert strip_jsonc('{"a": "\\"//"}') == '{"a": "\\"//"}'
    with pytest.raises(json.JSONDecodeError) as error:
        json.loads(strip_jsonc('{\n  // ok\n  "a": 1 "b"\n}'))
    assert (error.value.lineno, error.value.colno) == (3, 10)


@pytest.mark.parametrize("client", ["claude-code", "json"])
def test_clients_without_a_file_cannot_be_installed_into(tmp_path, client):
    with pytest.raises(InstallError, match="no config file"):
        install(build_entry(tmp_path / "a.yaml", _agent(), client), tmp_path / "x.json")
    assert not (tmp_path / "x.json").exists()


def test_a_secret_in_the_environment_is_never_written(tmp_path, monkeypatch):
    for name in ENV_NAMES:
        monkeypatch.setenv(name, SECRET)
    for client in CLIENTS:
        entry: ExportEntry = build_entry(tmp_path / "a.yaml", _agent(), client)
        assert SECRET not in entry.snippet and SECRET not in json.dumps(entry.entry)
        assert all(SECRET not in note for note in entry.notes)
        if client in FILE_CLIENTS:
            config = tmp_path / f"{client}.json"
            install(entry, config)
            assert SECRET.encode() not in config.read_bytes()


# --- the CLI -----------------------------------------------------------------------------------


def _export(
    tmp_path: Path, *args: str, path: str | None = None
) -> subprocess.CompletedProcess[str]:
    home = tmp_path / "home"
    home.mkdir(exist_ok=True)
    env = {
        **os.environ,
        "HOME": str(home),
        "USERPROFILE": str(home),
        "XDG_CONFIG_HOME": str(home / ".config"),
        "APPDATA": str(home / "AppData"),
        **dict.fromkeys(ENV_NAMES, SECRET),
    }
    if path is not None:
        env["PATH"] = path
    return subprocess.run(
        [sys.executable, "-m", "mcp_export", "export", *args],
        capture_output=True,
        text=True,
        env=env,
        cwd=tmp_path,
        timeout=60,
        check=False,
    )


def test_cli_prints_the_snippet_and_the_notes(tmp_path):
    agent = _agent_file(tmp_path)
    done = _export(tmp_path, str(agent), "--client", "claude-desktop")
    assert done.returncode == 0, done.stderr
    document = json.loads(done.stdout)
    entry = document["mcpServers"]["travel-desk"]
    assert entry["command"] == PYTHON
    assert entry["args"] == ["-m", "mcp_export", "serve", str(agent)]
    assert entry["env"] == dict.fromkeys(ENV_NAMES, "")
    assert "note: set OPENAI_API_KEY" in done.stderr
    assert SECRET not in done.stdout + done.stderr


def test_cli_installs_then_reports_already_installed_then_refuses_a_clash(tmp_path):
    agent = _agent_file(tmp_path)
    config = tmp_path / "cfg" / "mcp.json"
    config.parent.mkdir()
    config.write_text(json.dumps(_existing_config("vscode"), indent=2))
    args = (str(agent), "--client", "vscode", "--install", "--config", str(config))

    first = _export(tmp_path, *args)
    assert first.returncode == 0, first.stderr
    assert first.stdout.strip().startswith(f"installed 'travel-desk' in {config} (backup: ")
    second = _export(tmp_path, *args)
    assert second.returncode == 0 and "already installed" in second.stdout
    assert len(_backups(config)) == 1

    clash = _export(tmp_path, *args, "--name", "time")
    assert clash.returncode == 1
    assert "different server named 'time'" in clash.stderr and "mcp-server-time" in clash.stderr
    forced = _export(tmp_path, *args, "--name", "time", "--force")
    assert forced.returncode == 0 and "replaced 'time'" in forced.stdout
    final = json.loads(config.read_text())
    assert set(final["servers"]) == {"time", "files", "travel-desk"}
    assert SECRET.encode() not in config.read_bytes()
    assert not (tmp_path / "home" / ".config").exists()  # the (fake) home was never touched


def test_cli_install_for_claude_code_runs_claude_mcp_add_json(tmp_path):
    agent = _agent_file(tmp_path)
    bin_dir = tmp_path / "bin"
    install_fake_claude(bin_dir)
    expected = build_entry(agent, load_agent(agent), "claude-code")

    done = _export(tmp_path, str(agent), "--client", "claude-code", "--install", path=str(bin_dir))

    assert done.returncode == 0, done.stderr
    assert done.stdout == (
        "installed 'travel-desk' in Claude Code (user scope): "
        "Added stdio MCP server travel-desk to user config\n"
    )
    (call,) = logged_calls(bin_dir)
    payload = call["argv"][3]
    assert call["argv"] == ["mcp", "add-json", "travel-desk", payload, "--scope", "user"]
    assert call["json"] == expected.entry
    assert call["json"]["env"] == {name: "${" + name + "}" for name in ENV_NAMES}
    stored = json.loads((tmp_path / "home" / ".claude.json").read_text())
    assert stored["mcpServers"]["travel-desk"]["command"] == PYTHON
    assert "note: Claude Code reads OPENAI_API_KEY" in done.stderr
    assert SECRET not in done.stdout + done.stderr + json.dumps(stored)


def test_claude_code_refusing_a_taken_name_fails_and_force_replaces_it(tmp_path):
    agent = _agent_file(tmp_path)
    bin_dir = tmp_path / "bin"
    install_fake_claude(bin_dir)
    args = (str(agent), "--client", "claude-code", "--install")
    assert _export(tmp_path, *args, path=str(bin_dir)).returncode == 0

    again = _export(tmp_path, *args, path=str(bin_dir))
    assert again.returncode == 1
    assert "MCP server travel-desk already exists in user config" in again.stderr
    assert "--force" in again.stderr

    forced = _export(tmp_path, *args, "--force", path=str(bin_dir))
    assert forced.returncode == 0, forced.stderr
    argvs = [call["argv"][:3] for call in logged_calls(bin_dir)]
    assert argvs[-2:] == [["mcp", "remove", "travel-desk"], ["mcp", "add-json", "travel-desk"]]
    assert logged_calls(bin_dir)[-2]["argv"][3:] == ["-s", "user"]


def test_cli_install_for_claude_code_without_claude_prints_the_command_and_fails(tmp_path):
    agent = _agent_file(tmp_path)
    empty = tmp_path / "no-claude-here"
    empty.mkdir()

    done = _export(tmp_path, str(agent), "--client", "claude-code", "--install", path=str(empty))

    assert done.returncode == 1
    assert done.stdout.startswith("claude mcp add-json travel-desk '")
    assert done.stdout.rstrip().endswith("--scope user")
    assert "the claude command is not on PATH, so nothing was installed" in done.stderr
    assert list((tmp_path / "home").iterdir()) == []


def test_cli_install_without_config_uses_the_standard_place_under_home(tmp_path):
    agent = _agent_file(tmp_path)
    done = _export(tmp_path, str(agent), "--client", "cursor", "--install")
    assert done.returncode == 0, done.stderr
    config = tmp_path / "home" / ".cursor" / "mcp.json"
    assert str(config) in done.stdout
    assert "travel-desk" in json.loads(config.read_text())["mcpServers"]


def test_cli_refuses_invalid_json_and_a_missing_agent(tmp_path):
    agent = _agent_file(tmp_path)
    config = tmp_path / "mcp.json"
    config.write_text("{ nope")
    done = _export(tmp_path, str(agent), "--client", "cursor", "--install", "--config", str(config))
    assert done.returncode == 1 and "not valid JSON (line 1, column 3" in done.stderr
    assert config.read_text() == "{ nope"
    missing = _export(tmp_path, str(tmp_path / "nowhere.agent.yaml"), "--client", "json")
    assert missing.returncode == 1 and "nowhere.agent.yaml" in missing.stderr
    json_install = _export(tmp_path, str(agent), "--client", "json", "--install")
    assert json_install.returncode == 2 and "no config file" in json_install.stderr
