"""Finding the processes a test started, by a mark in their environment (Linux ``/proc``).

Listing this process's children would also count what other tests left or are still stopping;
only what a test marked is its own::

    mark = new_mark()
    config = with_mark(time_server(), mark)  # an ``mcpServers`` entry
    ...
    assert marked(mark) == set()  # every process started with it has exited
"""

from __future__ import annotations

import os
import subprocess
import uuid
from pathlib import Path
from typing import Any

__all__ = ["MARK", "alive", "marked", "new_mark", "stop_process", "with_mark"]

MARK = "TOOLBOX_TEST_MARK"


def new_mark() -> str:
    """A mark no other test uses."""
    return uuid.uuid4().hex


def with_mark(config: dict[str, Any], mark: str) -> dict[str, Any]:
    """``config`` (an ``mcpServers`` entry) whose process carries ``mark`` in its environment."""
    return config | {"env": {**config.get("env", {}), MARK: mark}}


def marked(mark: str) -> set[int]:
    """Process ids of the live processes whose environment carries ``mark``."""
    needle = f"{MARK}={mark}".encode()
    found: set[int] = set()
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            environment = (entry / "environ").read_bytes()
        except OSError:
            continue  # gone meanwhile, or not ours to read
        # A zombie's environment reads empty: it has exited, only its exit status remains.
        if needle in environment.split(b"\0"):
            found.add(int(entry.name))
    return found


def alive(pid: int) -> bool:
    """Whether a process with this id exists (a zombie counts until it is reaped)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


def stop_process(process: subprocess.Popen[bytes] | subprocess.Popen[str]) -> None:
    """End ``process``: terminate it, and kill it when it has not exited 10 s later."""
    process.terminate()
    try:
        process.wait(10)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait(10)
