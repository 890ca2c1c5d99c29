"""One data folder for the studio and the served server, run on the defaults a new user gets.

Every other test sets ``METAAGENT_HOME``; these run real processes in a temporary ``HOME`` with
neither ``METAAGENT_HOME`` nor ``XDG_DATA_HOME`` set, so the platform's default path is what runs.
"""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
from pathlib import Path

import mcp_types as types
import pytest
import yaml

from tests.fakes._script import text
from tests.fakes.mcp_clients import write_agent
from tests.fakes.openai_server import FakeOpenAIServer

REPO = Path(__file__).resolve().parents[2]


def _fresh_home_env(home: Path) -> dict[str, str]:
    env = {
        key: value
        for key, value in os.environ.items()
        if key not in ("METAAGENT_HOME", "XDG_DATA_HOME")
    }
    env.update(HOME=str(home), PYTHONIOENCODING="utf-8", QT_QPA_PLATFORM="offscreen")
    return env


def _run_python(code: str, home: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=REPO,
        env=_fresh_home_env(home),
        check=True,
    )


def _default_folder(home: Path) -> Path:
    return home / ".local" / "share" / "metaagent-studio"


def test_a_served_call_and_the_studio_settings_land_in_one_default_folder(tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    agent = tmp_path / "a.agent.yaml"
    folder = _default_folder(home)
    folder.mkdir(parents=True)  # Preferences' price table, where a new user's studio keeps it
    (folder / "prices.yaml").write_text("openai:fake: {input: 1, output: 2}\n", encoding="utf-8")
    with FakeOpenAIServer() as server:
        server.responder = lambda body: text("Hello from the model.", usage=(1000, 500))
        agent.write_text(
            yaml.safe_dump(
                {
                    "metadata": {
                        "name": "Default paths",
                        "tools": [
                            {
                                "name": "greet",
                                "description": "Greets.",
                                "parameters": {"type": "object", "properties": {}},
                                "prompt": "Say hello.",
                            }
                        ],
                    },
                    "settings": {"model": "openai:fake"},
                    "providers": {
                        "openai": {"OPENAI_API_KEY": "no-key", "OPENAI_BASE_URL": server.base_url}
                    },
                }
            ),
            encoding="utf-8",
        )
        called = subprocess.run(
            [sys.executable, "-m", "mcp_export", "call", str(agent), "greet"],
            capture_output=True,
            text=True,
            timeout=60,
            cwd=REPO,
            env=_fresh_home_env(home),
            check=False,
        )
    assert called.returncode == 0, called.stderr
    assert "Hello from the model." in called.stdout
    assert (_default_folder(home) / "history.sqlite3").is_file()
    with sqlite3.connect(_default_folder(home) / "history.sqlite3") as db:
        (cost,) = db.execute("SELECT cost_usd FROM runs").fetchone()
    assert cost == pytest.approx(0.002)  # 1000 in at $1/M, 500 out at $2/M, from prices.yaml

    studio = _run_python(
        "import json; from app.settings_store import SettingsStore;"
        f"s = SettingsStore(); s.add_recent_file(__import__('pathlib').Path({str(agent)!r}));"
        "print(json.dumps(str(s.home)))",
        home,
    )
    assert Path(json.loads(studio.stdout)) == _default_folder(home)
    assert (_default_folder(home) / "studio.ini").is_file()
    assert not (home / ".local" / "share" / "metaagent").exists()


def test_the_old_studio_folder_is_merged_into_the_one_folder_once_with_a_notice(
    tmp_path: Path,
) -> None:
    home = tmp_path / "home"
    legacy = home / ".local" / "share" / "metaagent"
    (legacy / "recovery").mkdir(parents=True)
    (legacy / "studio.ini").write_text("[recent]\n", encoding="utf-8")
    (legacy / "recovery" / "a.agent.yaml").write_text("metadata: {}\n", encoding="utf-8")
    (legacy / "test-values.json").write_text('{"old": 1}', encoding="utf-8")
    folder = _default_folder(home)
    folder.mkdir(parents=True)
    (folder / "test-values.json").write_text('{"new": 1}', encoding="utf-8")

    code = (
        "from mcp_export.paths import data_dir, data_dir_notice; data_dir(); "
        "print(data_dir_notice())"
    )
    first = _run_python(code, home)
    assert "moved 3 file(s)" in first.stdout
    assert "metaagent-studio" in first.stderr  # the notice reaches stderr too
    assert not legacy.exists()
    assert (folder / "studio.ini").read_text(encoding="utf-8") == "[recent]\n"
    assert (folder / "recovery" / "a.agent.yaml").is_file()
    # A file in both places: the one folder's copy wins, the old one is kept beside it.
    assert json.loads((folder / "test-values.json").read_text(encoding="utf-8")) == {"new": 1}
    kept = folder / "test-values.json.from-metaagent"
    assert json.loads(kept.read_text(encoding="utf-8")) == {"old": 1}

    again = _run_python(code, home)
    assert again.stdout.strip() == "None"
    assert again.stderr == ""


def test_xdg_data_home_is_honoured(tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    xdg = tmp_path / "xdg"
    env = _fresh_home_env(home)
    env["XDG_DATA_HOME"] = str(xdg)
    out = subprocess.run(
        [sys.executable, "-c", "from mcp_export.paths import data_dir; print(data_dir())"],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=REPO,
        env=env,
        check=True,
    )
    assert Path(out.stdout.strip()) == xdg / "metaagent-studio"


def test_the_http_server_on_its_defaults_records_in_the_default_folder_and_drains(
    tmp_path: Path,
) -> None:
    """``serve --http PORT`` and nothing else: loopback, no token, SQLite in the default folder,
    probes open, and SIGTERM lets the server stop by itself with exit 0."""
    import sqlite3
    import urllib.request

    import anyio
    from mcp import Client
    from mcp.client.streamable_http import streamable_http_client

    home = tmp_path / "home"
    home.mkdir()
    with FakeOpenAIServer([text("Hello over HTTP.")]) as model:
        agent = write_agent(tmp_path / "a.agent.yaml", base_url=model.base_url)
        process = subprocess.Popen(
            [sys.executable, "-m", "mcp_export", "serve", str(agent), "--http", "0"],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            cwd=REPO,
            env=_fresh_home_env(home),
        )
        try:
            assert process.stderr is not None
            announced = ""
            while " at http" not in announced:  # bounded by the test's timeout
                line = process.stderr.readline().decode()
                assert line, "serve ended without announcing its URL"
                announced = line
            url = announced.rsplit(" at ", 1)[1].strip()
            root = url.removesuffix("/mcp")

            async def call() -> str:
                with anyio.fail_after(30):
                    async with Client(streamable_http_client(url)) as client:
                        result = await client.call_tool("book_flight", {"destination": "Oslo"})
                block = result.content[0]
                assert isinstance(block, types.TextContent)
                return block.text

            answer = anyio.run(call)
            with urllib.request.urlopen(f"{root}/readyz", timeout=10) as ready:
                ready_status = ready.status
            process.terminate()
            code = process.wait(timeout=30)
        finally:
            if process.poll() is None:
                process.kill()
                process.wait(10)
    assert url.startswith("http://127.0.0.1:") and url.endswith("/mcp")
    assert answer == "Hello over HTTP."
    assert ready_status == 200
    assert code == 0
    database = _default_folder(home) / "history.sqlite3"
    with sqlite3.connect(database) as conn:
        statuses = [row[0] for row in conn.execute("SELECT status FROM runs")]
    assert statuses == ["complete"]
