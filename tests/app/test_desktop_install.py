"""``metaagent install-desktop``: the launcher, its icon and the ``*.agent.yaml`` MIME type,
installed by the real command into a temporary data directory (and once under a temporary HOME
with no ``XDG_DATA_HOME``), read back as desktops read them: the MIME cache that
``update-mime-database`` builds, queried through Qt's ``QMimeDatabase`` in a fresh process."""

from __future__ import annotations

import configparser
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from app.desktop_install import APP_ID, MIME_TYPE, desktop_entry

_MIME_TOOL = shutil.which("update-mime-database")


def _env(tmp_path: Path, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in {"XDG_DATA_HOME", "XDG_DATA_DIRS"}}
    env["HOME"] = str(tmp_path / "home")
    return env | extra


def _metaagent(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "app", "install-desktop", *args],
        env=env,
        capture_output=True,
        text=True,
        timeout=90,
        check=False,
    )


def _mime_of(env: dict[str, str], name: str) -> str:
    probe = (
        "from PySide6.QtCore import QMimeDatabase\n"
        f"print(QMimeDatabase().mimeTypeForFile({name!r}, QMimeDatabase.MatchMode.MatchExtension)"
        ".name())"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe], env=env, capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


def _files(data: Path) -> list[Path]:
    return [
        data / "applications" / f"{APP_ID}.desktop",
        data / "icons" / "hicolor" / "scalable" / "apps" / f"{APP_ID}.svg",
        data / "mime" / "packages" / f"{APP_ID}.xml",
    ]


def test_install_is_idempotent_registers_the_type_and_uninstall_removes_it(
    tmp_path: Path,
) -> None:
    data = tmp_path / "data"
    env = _env(tmp_path, XDG_DATA_HOME=str(data))
    first = _metaagent(env)
    assert first.returncode == 0, first.stderr
    assert first.stdout.startswith(f"installed the Meta Agent Studio launcher in {data}")
    launcher, icon, mime = _files(data)
    assert all(path.is_file() for path in (launcher, icon, mime))
    entry = configparser.ConfigParser(interpolation=None)
    entry.optionxform = str  # type: ignore[assignment,method-assign]
    entry.read(launcher, encoding="utf-8")
    desktop = entry["Desktop Entry"]
    assert desktop["Icon"] == APP_ID and desktop["MimeType"] == f"{MIME_TYPE};"
    command = desktop["Exec"].split()
    assert command[-1] == "%F" and Path(command[0]).is_file()
    assert icon.read_text(encoding="utf-8").startswith("<svg")
    if _MIME_TOOL is not None:
        assert _mime_of(env, "trip.agent.yaml") == MIME_TYPE
        assert _mime_of(env, "plain.yaml") != MIME_TYPE
    stamps = [path.stat().st_mtime_ns for path in (launcher, icon, mime)]

    again = _metaagent(env)
    assert again.returncode == 0 and again.stdout.strip() == f"already installed in {data}"
    assert [path.stat().st_mtime_ns for path in (launcher, icon, mime)] == stamps

    removed = _metaagent(env, "--uninstall")
    assert removed.returncode == 0, removed.stderr
    assert removed.stdout.startswith(f"removed the Meta Agent Studio launcher from {data}")
    assert not any(path.exists() for path in (launcher, icon, mime))
    if _MIME_TOOL is not None:
        assert _mime_of(env, "trip.agent.yaml") != MIME_TYPE
    nothing = _metaagent(env, "--uninstall")
    assert nothing.returncode == 0 and "not installed" in nothing.stdout


def test_without_xdg_data_home_it_goes_under_the_home_directory(tmp_path: Path) -> None:
    env = _env(tmp_path)
    done = _metaagent(env)
    assert done.returncode == 0, done.stderr
    assert all(path.is_file() for path in _files(tmp_path / "home" / ".local" / "share"))
    assert _metaagent(env, "--uninstall").returncode == 0
    assert not any(path.exists() for path in _files(tmp_path / "home" / ".local" / "share"))


def test_a_failing_cache_tool_is_reported_and_the_files_stay(tmp_path: Path) -> None:
    tools = tmp_path / "bin"
    tools.mkdir()
    broken = tools / "update-desktop-database"
    broken.write_text("#!/bin/sh\necho 'cannot write the cache' >&2\nexit 3\n")
    broken.chmod(0o755)
    data = tmp_path / "data"
    env = _env(tmp_path, XDG_DATA_HOME=str(data), PATH=f"{tools}{os.pathsep}{os.environ['PATH']}")
    done = _metaagent(env)
    assert done.returncode == 0
    assert "note: update-desktop-database failed (3): cannot write the cache" in done.stderr
    assert all(path.is_file() for path in _files(data))


def test_exec_quotes_a_path_with_spaces_as_the_spec_says() -> None:
    text = desktop_entry(["/opt/my tools/bin/metaagent", "100%"])
    (line,) = [line for line in text.splitlines() if line.startswith("Exec=")]
    assert line == 'Exec="/opt/my tools/bin/metaagent" 100%% %F'


@pytest.mark.skipif(shutil.which("desktop-file-validate") is None, reason="no desktop-file-utils")
def test_the_launcher_passes_desktop_file_validate(tmp_path: Path) -> None:
    data = tmp_path / "data"
    assert _metaagent(_env(tmp_path, XDG_DATA_HOME=str(data))).returncode == 0
    launcher = _files(data)[0]
    done = subprocess.run(
        ["desktop-file-validate", str(launcher)], capture_output=True, text=True, timeout=30
    )
    assert done.returncode == 0, done.stdout + done.stderr
