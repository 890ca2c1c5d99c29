"""A tool server's bare command is found beside our Python too, and a missing one says where it
was looked for.

The studio started as ``.venv/bin/metaagent`` (or by ``make studio``) has no activated
environment: the venv's ``bin``, where ``mcp-server-time`` is installed, is not on ``PATH``.
These tests run with such a ``PATH`` and start the real ``mcp-server-time``.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from mcp_export.toolbox.agent_toolbox import probe_server
from schema_types.agent import McpServerConfig

pytestmark = pytest.mark.anyio

BARE_PATH = "/usr/bin:/bin"  # a PATH without the environment's bin
BESIDE = Path(sys.executable).parent


@pytest.fixture
def no_venv_on_path(monkeypatch: pytest.MonkeyPatch) -> None:
    assert (BESIDE / "mcp-server-time").exists()  # installed with us, as the studio suggests
    monkeypatch.setenv("PATH", BARE_PATH)


async def test_a_bare_command_installed_beside_the_studio_starts_without_it_on_path(
    no_venv_on_path: None,
) -> None:
    config = McpServerConfig(command="mcp-server-time", args=["--local-timezone", "UTC"])

    result = await probe_server(config, name="time")

    assert result.ok, result.error
    assert sorted(tool.name for tool in result.tools) == ["convert_time", "get_current_time"]


async def test_a_command_found_nowhere_names_the_places_it_was_looked_for(
    no_venv_on_path: None,
) -> None:
    result = await probe_server(McpServerConfig(command="no-such-mcp-server"), name="x")

    assert not result.ok and result.error is not None
    assert "could not start: command not found: no-such-mcp-server" in result.error
    assert f"looked in PATH and beside this Python: /usr/bin, /bin, {BESIDE}" in result.error


async def test_the_path_the_server_is_started_with_is_the_one_searched(tmp_path: Path) -> None:
    config = McpServerConfig(command="no-such-mcp-server", env={"PATH": str(tmp_path)})

    result = await probe_server(config, name="x")

    assert result.error is not None
    assert f"beside this Python: {tmp_path}, {BESIDE})" in result.error
