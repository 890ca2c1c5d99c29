"""The built wheel, installed as a colleague would: ``uv tool install`` into a fresh environment.

The wheel is built from a copy of the sources (so the checkout gets no ``build/`` or
``*.egg-info``), installed without the ``studio`` extra with nothing but the package index (and
uv's cache) to fetch from, and then:

- ``metaagent serve`` answers a real tool call over stdio against the fake model server, with no
  module of Qt (or of the studio's window code) imported — the list of imported modules is
  written by the served process itself when it ends;
- a bare ``metaagent`` says the studio needs the ``studio`` extra, and how to install it.
"""

from __future__ import annotations

import json
import os
import shlex
import shutil
import subprocess
import sys
import time
import zipfile
from collections.abc import Iterator
from pathlib import Path

import anyio
import mcp_types as types
import pytest
from mcp import Client, StdioServerParameters

from tests.fakes._script import text
from tests.fakes.mcp_clients import write_agent
from tests.fakes.openai_server import FakeOpenAIServer

ROOT = Path(__file__).resolve().parents[2]
_SOURCES = ("pyproject.toml", "README.md", "app", "mcp_export", "schema_types")
_UV = shutil.which("uv", path=str(Path(sys.executable).parent)) or shutil.which("uv")
_QT = ("PySide6", "shiboken6", "qasync")

pytestmark = [
    pytest.mark.skipif(_UV is None, reason="uv is not installed (it is in the dev extra)"),
    pytest.mark.timeout(600),
]

# Runs `metaagent serve …` in-process and, once it returns, writes which modules were imported.
_SERVE_AND_REPORT = """
import sys
from app.cli import main
report, args = sys.argv[1], sys.argv[2:]
try:
    code = main(args)
finally:
    with open(report, "w", encoding="utf-8") as out:
        out.write(sys.modules["mcp_export"].__file__ + "\\n")
        out.write("\\n".join(sorted(sys.modules)))
sys.exit(code)
"""


def _run(
    args: list[str], *, env: dict[str, str], timeout: float
) -> subprocess.CompletedProcess[str]:
    result = subprocess.run(
        args, env=env, capture_output=True, text=True, timeout=timeout, check=False
    )
    assert result.returncode == 0, f"{args[:3]} failed:\n{result.stdout}\n{result.stderr}"
    return result


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """The ``bin`` directory of a fresh ``uv tool install`` of the built wheel."""
    assert _UV is not None
    work = tmp_path_factory.mktemp("wheel")
    source = work / "src"
    source.mkdir()
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc", "*.egg-info")
    for name in _SOURCES:
        if (ROOT / name).is_dir():
            shutil.copytree(ROOT / name, source / name, ignore=ignore)
        else:
            shutil.copy2(ROOT / name, source / name)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("UV_", "VIRTUAL_ENV"))}
    env.pop("PYTHONPATH", None)
    env |= {
        "UV_TOOL_DIR": str(work / "tools"),
        "UV_TOOL_BIN_DIR": str(work / "bin"),
        "UV_PYTHON_DOWNLOADS": "never",
    }
    started = time.monotonic()
    _run(
        [_UV, "build", "--wheel", "--out-dir", str(work / "dist"), str(source)],
        env=env,
        timeout=240,
    )
    (wheel,) = (work / "dist").glob("meta_agent_studio-*.whl")
    built = time.monotonic()
    _run([_UV, "tool", "install", "--python", sys.executable, str(wheel)], env=env, timeout=300)
    print(
        f"wheel built in {built - started:.1f} s, installed in {time.monotonic() - built:.1f} s",
        file=sys.stderr,
    )
    yield work


def _clean_env(home: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in {"PYTHONPATH", "OPENAI_API_KEY"}}
    env["METAAGENT_HOME"] = str(home)
    return env


def _wait_for(path: Path, seconds: float = 30.0) -> None:
    """Until the served process has written its report (it writes it as it ends)."""
    deadline = time.monotonic() + seconds
    while not path.exists():
        assert time.monotonic() < deadline, f"{path} was not written within {seconds} s"
        time.sleep(0.05)


def _tool_python(installed: Path) -> Path:
    (python,) = (installed / "tools").glob("meta-agent-studio/bin/python")
    return python


def test_the_installed_wheel_leaves_the_studio_out(installed: Path, tmp_path: Path) -> None:
    python = _tool_python(installed)
    probe = f"import importlib.util as u; print([n for n in {_QT!r} if u.find_spec(n)])"
    found = _run([str(python), "-c", probe], env=_clean_env(tmp_path), timeout=60)
    assert found.stdout.strip() == "[]"
    for args in ([], ["trip.agent.yaml"]):  # a bare start, and a double-clicked file
        studio = subprocess.run(
            [str(installed / "bin" / "metaagent"), *args],
            env=_clean_env(tmp_path),
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )
        assert studio.returncode == 2
        assert "the studio is not installed here" in studio.stderr
        assert "pip install 'meta-agent-studio[studio]'" in studio.stderr
        assert "pipx install --force 'meta-agent-studio[studio]'" in studio.stderr


@pytest.mark.anyio
async def test_the_installed_wheel_serves_a_call_without_qt(
    installed: Path, tmp_path: Path
) -> None:
    python = _tool_python(installed)
    report = tmp_path / "modules.txt"
    with FakeOpenAIServer([text("Booked from the wheel.")]) as model:
        agent = write_agent(tmp_path / "a.agent.yaml", base_url=model.base_url)
        params = StdioServerParameters(
            command=str(python),
            args=["-c", _SERVE_AND_REPORT, str(report), "serve", str(agent), "--no-history"],
            env=_clean_env(tmp_path),
            cwd=str(tmp_path),
        )
        with anyio.fail_after(90):
            async with Client(params) as client:
                result = await client.call_tool("book_flight", {"destination": "Oslo"})
        await anyio.to_thread.run_sync(_wait_for, report)
    answer = "".join(b.text for b in result.content if isinstance(b, types.TextContent))
    assert answer == "Booked from the wheel."
    served_from, *modules = report.read_text(encoding="utf-8").split()
    assert "mcp_export.server" in modules  # the report is the served process's own
    assert served_from.startswith(str(installed / "tools"))  # the wheel's code, not the checkout's
    qt = [
        m
        for m in modules
        if m.split(".")[0] in _QT or m == "app.studio" or m.startswith("app.window")
    ]
    assert qt == []


@pytest.mark.anyio
@pytest.mark.parametrize("launcher", ["installed", "uvx"])
async def test_a_portable_entry_exported_by_the_installed_tool_serves_a_call(
    installed: Path, tmp_path: Path, launcher: str
) -> None:
    """The entry names the agent file as given and starts the server with a given command: the
    installed tool's ``metaagent``, or ``uvx --from WHEEL metaagent`` (a shared wheel)."""
    metaagent = installed / "bin" / "metaagent"
    (wheel,) = (installed / "dist").glob("meta_agent_studio-*.whl")
    uvx = Path(_UV or "uv").with_name("uvx")
    command = {
        "installed": shlex.quote(str(metaagent)),
        "uvx": shlex.join(
            [str(uvx), "--python", sys.executable, "--from", str(wheel), "metaagent"]
        ),
    }[launcher]
    env = _clean_env(tmp_path) | {"UV_PYTHON_DOWNLOADS": "never"}
    with FakeOpenAIServer([text("Booked by the portable entry.")]) as model:
        write_agent(tmp_path / "a.agent.yaml", base_url=model.base_url)
        export = [str(metaagent), "export", "a.agent.yaml", "--client", "json"]
        with anyio.fail_after(60):
            exported = await anyio.run_process(
                [*export, "--command", command, "--path", "as-given"],
                cwd=tmp_path,
                env=env,
                check=False,
            )
        assert exported.returncode == 0, exported.stderr.decode()
        entry = json.loads(exported.stdout)
        assert entry["args"][-2:] == ["serve", "a.agent.yaml"]
        params = StdioServerParameters(
            command=entry["command"],
            args=[*entry["args"], "--no-history"],
            env=env,
            cwd=str(tmp_path),  # where the client starts it: the path was kept relative
        )
        with anyio.fail_after(120):
            async with Client(params) as client:
                result = await client.call_tool("book_flight", {"destination": "Oslo"})
    answer = "".join(b.text for b in result.content if isinstance(b, types.TextContent))
    assert answer == "Booked by the portable entry."


def test_the_wheel_carries_the_studios_icons_and_the_tokenizer_data(installed: Path) -> None:
    (wheel,) = (installed / "dist").glob("meta_agent_studio-*.whl")
    with zipfile.ZipFile(wheel) as archive:
        names = set(archive.namelist())
    assert {"app/resources/icons/app.svg", "app/resources/icons/save.svg"} <= names
    assert any(name.startswith("mcp_export/hints/data/") for name in names)
