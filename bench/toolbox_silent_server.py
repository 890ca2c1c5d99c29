"""A tool server that never answers ``initialize``, beside a healthy one: how long calls take.

Run: ``.venv/bin/python bench/toolbox_silent_server.py [--rounds 1]``. Prints a table; exits 0
(1 when the goal is missed). Not a test: the figures depend on the machine.

The agent has two inner MCP servers: the real ``mcp-server-time`` (PyPI) and
``tests.fakes.tool_server --never-initialize`` (starts, reads, never answers). The model is
``FakeOpenAIServer`` in its own process: it asks for ``time__get_current_time``, then answers with
the result, so each call needs only the healthy server. Measured: the first call of a fresh
runtime (both servers start with it) and a second call right after; the baseline is the same
agent without the silent server, measured in the same run, interleaved.

- served: ``python -m mcp_export serve --no-history`` over stdio, called with the official
  ``mcp.Client``, at call limits (``timeoutSeconds``) of 8, 15 and 25 s, with the default start-up
  limit (the agent file has no start-up setting yet);
- in process: ``ChatSession`` on a shared ``AgentToolbox``, call limit 15 s, start-up limits 5,
  10 and 25 s.

Goal: no call fails, and the silent server costs the first call at most
min(start-up limit, call limit / 2) + 1 s over the baseline — a listing waits for a starting
server at most half of the call's remaining time.
"""

from __future__ import annotations

import argparse
import multiprocessing
import os
import statistics
import sys
import tempfile
import time
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

SLACK = 1.0
TIME_SERVER = str(Path(sys.executable).parent / "mcp-server-time")

AGENT = """\
metadata:
  name: Silent Bench
  tools:
    - name: now
      description: The time.
      parameters: {{type: object, properties: {{}}}}
      prompt: What time is it?
settings: {{model: "openai:fake-model", timeoutSeconds: {limit}, toolPermission: tool}}
providers:
  openai: {{OPENAI_API_KEY: "env://BENCH_KEY", OPENAI_BASE_URL: "{base_url}"}}
mcpServers:
{servers}"""
TIME_ENTRY = """\
  time:
    command: {command}
    serverToolDefaults: {{permissionRequired: false}}
"""
SILENT_ENTRY = """\
  silent:
    command: {python}
    args: [-m, tests.fakes.tool_server, --never-initialize]
    cwd: {repo}
    serverToolDefaults: {{permissionRequired: false}}
"""


# --- the fake model, in its own process ------------------------------------------------------


def _respond(body: Any) -> Any:
    from tests.fakes._script import text, tool_calls

    if body.rounds_since_user == 0:
        return tool_calls([("c1", "time__get_current_time", {"timezone": "UTC"})])
    return text("It is " + body.tool_results[0].content[:80], usage=(20, 2))


def _serve(pipe: Connection) -> None:
    from tests.fakes.openai_server import FakeOpenAIServer

    with FakeOpenAIServer(responder=_respond) as server:
        pipe.send(server.base_url)
        pipe.recv()  # until told to stop


class ModelProcess:
    """A ``FakeOpenAIServer`` in a child process."""

    def __init__(self) -> None:
        context = multiprocessing.get_context("spawn")
        self._pipe, child = context.Pipe()
        self._process = context.Process(target=_serve, args=(child,), daemon=True)
        self._process.start()
        self.base_url: str = self._pipe.recv()

    def stop(self) -> None:
        self._pipe.send("stop")
        self._process.join(10)


def agent_text(base_url: str, limit: float, silent: bool) -> str:
    servers = TIME_ENTRY.format(command=TIME_SERVER)
    if silent:
        servers += SILENT_ENTRY.format(python=sys.executable, repo=REPO)
    return AGENT.format(limit=limit, base_url=base_url, servers=servers)


# --- measuring -------------------------------------------------------------------------------


async def served_calls(agent: Path, home: Path) -> tuple[float, float]:
    """Seconds of the first and the second call through ``metaagent serve``."""
    from mcp import Client
    from mcp.client.stdio import StdioServerParameters
    from mcp.types import TextContent

    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "mcp_export", "serve", "--no-history", str(agent)],
        cwd=str(REPO),
        env=dict(os.environ, METAAGENT_HOME=str(home), BENCH_KEY="sk-bench"),
    )
    times: list[float] = []
    async with Client(params, mode="legacy") as client:
        for _ in range(2):
            started = time.perf_counter()
            result = await client.call_tool("now", {}, read_timeout_seconds=120)
            times.append(time.perf_counter() - started)
            text = " ".join(b.text for b in result.content if isinstance(b, TextContent))
            if result.is_error or "It is" not in text:
                raise RuntimeError(f"the call failed: {text}")
    return times[0], times[1]


async def session_calls(agent_file: Path, startup: float) -> tuple[float, float]:
    """Seconds of the first and the second session run on one toolbox."""
    from mcp_export.providers.factory import provider_for_agent
    from mcp_export.session.chat import ChatSession, run_to_result
    from mcp_export.toolbox.agent_toolbox import AgentToolbox
    from schema_types.files.agent_file import load_agent

    os.environ["BENCH_KEY"] = "sk-bench"
    agent = load_agent(agent_file)
    provider, model = provider_for_agent(agent)
    toolbox = AgentToolbox(agent, base_dir=REPO, startup_timeout=startup)
    times: list[float] = []
    try:
        for _ in range(2):
            started = time.perf_counter()
            result = await run_to_result(
                ChatSession(agent, provider=provider, model=model, toolbox=toolbox), "now?"
            )
            times.append(time.perf_counter() - started)
            if result.error is not None:
                raise RuntimeError(f"the call failed: {result.error}")
    finally:
        await toolbox.aclose()
        await provider.aclose()
    return times[0], times[1]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=1)
    args = parser.parse_args()
    import anyio

    model = ModelProcess()
    # (label, allowed extra seconds, baseline runs, silent runs); a run is (first, second).
    rows: list[tuple[str, float, list[tuple[float, float]], list[tuple[float, float]]]] = []
    try:
        with tempfile.TemporaryDirectory() as tmp:
            directory = Path(tmp)

            def write(name: str, limit: float, silent: bool) -> Path:
                path = directory / f"{name}.agent.yaml"
                path.write_text(agent_text(model.base_url, limit, silent), encoding="utf-8")
                return path

            for limit in (8, 15, 25):
                runs: dict[bool, list[tuple[float, float]]] = {False: [], True: []}
                for _ in range(args.rounds):
                    for silent in (False, True):
                        agent = write(f"served-{limit}-{silent}", limit, silent)
                        runs[silent].append(anyio.run(served_calls, agent, directory))
                allowed = min(10.0, limit / 2) + SLACK
                rows.append((f"served, call limit {limit} s", allowed, runs[False], runs[True]))
            for startup in (5.0, 10.0, 25.0):
                runs = {False: [], True: []}
                for _ in range(args.rounds):
                    for silent in (False, True):
                        agent = write(f"session-{startup}-{silent}", 15, silent)
                        runs[silent].append(anyio.run(session_calls, agent, startup))
                allowed = min(startup, 15 / 2) + SLACK
                label = f"in process, start-up limit {startup:g} s"
                rows.append((label, allowed, runs[False], runs[True]))
    finally:
        model.stop()

    print(f"calls needing only the healthy server, beside a silent one ({args.rounds} round(s))")
    print(f"  {'':<34}{'baseline':>9}{'silent':>8}{'extra':>8}{'goal':>7}{'2nd call':>10}")
    met = True
    for label, allowed, baseline, beside_silent in rows:
        base = statistics.median(first for first, _ in baseline)
        with_silent = statistics.median(first for first, _ in beside_silent)
        second = statistics.median(later for _, later in beside_silent)
        extra = with_silent - base
        met = met and extra <= allowed
        print(
            f"  {label:<34}{base:>8.2f}s{with_silent:>7.2f}s{extra:>7.2f}s"
            f"{'≤' + format(allowed, 'g'):>7}{second:>9.2f}s"
        )
    verdict = "met" if met else "MISSED"
    print(f"goal: extra ≤ min(start-up limit, call limit / 2) + {SLACK:g} s ({verdict})")
    return 0 if met else 1


if __name__ == "__main__":
    sys.exit(main())
