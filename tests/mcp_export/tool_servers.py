"""Configs of the real tool servers the toolbox tests start (find their processes with
:mod:`tests.fakes.processes`)."""

from __future__ import annotations

import shutil
import sys
from pathlib import Path
from typing import Any

from schema_types.agent import Agent

REPO = Path(__file__).resolve().parents[2]


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
