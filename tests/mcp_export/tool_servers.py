"""Configs of the real tool servers the toolbox tests start, and a way to find their processes.

``marked()`` finds the processes a test started by a mark in their environment rather than by
listing this process's children: other tests (and their servers being stopped) may have children
of their own at the same moment, so only what a test marked is its own.
"""

from __future__ import annotations

import os
import shutil
import sys
import uuid
from pathlib import Path
from typing import Any

from schema_types._agent import Agent

REPO = Path(__file__).resolve().parents[2]
MARK = "TOOLBOX_TEST_MARK"


def time_server(**extra: Any) -> dict[str, Any]:
    """``mcp-server-time`` (PyPI) from the venv's bin directory, else PATH, else ``python -m``."""
    local = Path(sys.executable).parent / "mcp-server-time"
    found = str(local) if local.exists() else shutil.which("mcp-server-time")
    base = (
        {"command": found}
        if found
        else {"command": sys.executable, "args": ["-m", "mcp_server_time"]}
    )
    return base | extra


def fake_server(*flags: str, **extra: Any) -> dict[str, Any]:
    """``tests.fakes.tool_server`` with ``flags`` (its fault modes); it must run in ``REPO``."""
    return {"command": sys.executable, "args": ["-m", "tests.fakes.tool_server", *flags]} | extra


def make_agent(policy: str, servers: dict[str, dict[str, Any]], **settings: Any) -> Agent:
    return Agent.model_validate(
        {"settings": {"toolPermission": policy, **settings}, "mcpServers": servers}
    )


def new_mark() -> str:
    return uuid.uuid4().hex


def with_mark(config: dict[str, Any], mark: str) -> dict[str, Any]:
    """``config`` whose process carries ``mark`` in its environment."""
    return config | {"env": {**config.get("env", {}), MARK: mark}}


def marked(mark: str) -> set[int]:
    """Process ids of the live processes whose environment carries ``mark`` (Linux /proc)."""
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
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True
