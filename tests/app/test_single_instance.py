"""A second ``metaagent FILE`` while the studio runs: two real studio processes (offscreen).

The first studio starts over a stale socket left where its name lives (as a crashed studio
leaves it) and must take the name over; the second start hands its file over and ends at once;
the first opens it (its recent files, kept in ``studio.ini``, say so); a request in the wrong
shape is answered with an error and the studio keeps serving.
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from app.settings_store import SettingsStore
from app.single_instance import instance_name

WAIT_S = 30.0


def _wait(what: str, done: Callable[[], bool], seconds: float = WAIT_S) -> None:
    deadline = time.monotonic() + seconds
    while not done():
        assert time.monotonic() < deadline, f"not within {seconds} s: {what}"
        time.sleep(0.05)


@pytest.fixture
def studio_env(tmp_path: Path) -> dict[str, str]:
    home = tmp_path / "home"
    SettingsStore(home).set_getting_started_shown()
    env = dict(os.environ, METAAGENT_HOME=str(home), QT_QPA_PLATFORM="offscreen")
    env.pop("XDG_DATA_HOME", None)
    return env


@pytest.fixture
def first_studio(studio_env: dict[str, str]) -> Iterator[subprocess.Popen[str]]:
    name = instance_name(Path(studio_env["METAAGENT_HOME"]))
    path = Path(tempfile.gettempdir()) / name
    stale = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    stale.bind(str(path))  # bound and closed without unlinking: nobody will ever answer there
    stale.close()
    process = subprocess.Popen(
        [sys.executable, "-m", "app"],
        env=studio_env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        _wait("the first studio listens", lambda: _answers(path) or process.poll() is not None)
        assert process.poll() is None, process.communicate()
        yield process
    finally:
        process.send_signal(signal.SIGTERM)
        try:
            process.communicate(timeout=WAIT_S)
        except subprocess.TimeoutExpired:
            process.kill()
            process.communicate()
    assert not path.exists()  # closing the studio removed its socket


def _answers(path: Path) -> bool:
    probe = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        probe.connect(str(path))
    except OSError:
        return False
    finally:
        probe.close()
    return True


def test_a_second_start_opens_its_file_in_the_running_studio(
    first_studio: subprocess.Popen[str],
    studio_env: dict[str, str],
    example_path: Path,
    tmp_path: Path,
) -> None:
    agent = tmp_path / "elsewhere" / "trip.agent.yaml"
    agent.parent.mkdir()
    agent.write_bytes(example_path.read_bytes())
    started = time.monotonic()
    second = subprocess.run(
        [sys.executable, "-m", "app", "trip.agent.yaml"],  # relative: resolved where it is given
        cwd=agent.parent,
        env=studio_env,
        capture_output=True,
        text=True,
        timeout=WAIT_S,
    )
    took = time.monotonic() - started
    assert second.returncode == 0, second.stderr
    assert "opened in the studio that is already running" in second.stderr
    home = Path(studio_env["METAAGENT_HOME"])
    _wait("the first studio opened the file", lambda: agent in SettingsStore(home).recent_entries())
    assert first_studio.poll() is None
    assert took < WAIT_S


def test_a_malformed_request_gets_an_error_and_the_studio_keeps_serving(
    first_studio: subprocess.Popen[str], studio_env: dict[str, str], example_path: Path
) -> None:
    path = Path(tempfile.gettempdir()) / instance_name(Path(studio_env["METAAGENT_HOME"]))
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as client:
        client.settimeout(10)
        client.connect(str(path))
        client.sendall(b'{"files": "not a list"}\n')
        answer = client.recv(1000)
    assert answer.startswith(b"error: files must be a list of paths")
    again = subprocess.run(
        [sys.executable, "-m", "app", str(example_path)],
        env=studio_env,
        capture_output=True,
        text=True,
        timeout=WAIT_S,
    )
    assert again.returncode == 0 and "already running" in again.stderr
    home = Path(studio_env["METAAGENT_HOME"])
    _wait("the file opened", lambda: example_path.resolve() in SettingsStore(home).recent_entries())
