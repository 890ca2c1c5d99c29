"""Cold start of the served agent: spawn → initialized → tools/list, against a bare SDK server.

Run: ``.venv/bin/python bench/server_cold_start.py [--rounds 15]``. Prints a table; exits 0 (1
when the goal is missed). Not a test: the figures depend on the machine.

Both servers are started the way an MCP client starts them (a new process, stdio pipes) and sent
the same bytes at once: ``initialize``, ``notifications/initialized``, ``tools/list``. The time is
from spawning the process to reading the ``tools/list`` answer. Ours is ``python -m mcp_export
serve AGENT`` on a four-tool agent; the baseline is ``bench/_bare_server.py``, the SDK's low-level
server serving the very listing ours produces (written to a file first). Rounds are interleaved
so both see the same machine load. Goal: our median within 1.15 × the bare server's.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

GOAL = 1.15

AGENT = """\
metadata:
  name: Travel Desk
  version: 1.0.0
  description: Plans and books trips.
  tools:
    - name: book_flight
      description: Books a flight ticket for a user.
      parameters:
        type: object
        properties:
          destination: {type: string, description: City or airport code.}
          departure_date: {type: string, format: date}
          passengers:
            type: array
            items:
              type: object
              properties:
                name: {type: string}
                age: {type: integer, minimum: 0}
              required: [name]
          class: {enum: [economy, premium, business, first], default: economy}
        required: [destination, departure_date]
      prompt: Book a flight to {destination} on {departure_date} in {class} for {passengers}.
    - name: find_hotels
      description: Finds hotels near a place.
      parameters:
        type: object
        properties:
          city: {type: string}
          nights: {type: integer, minimum: 1, maximum: 30, default: 1}
          budget: {type: number}
        required: [city]
      prompt: Find hotels in {city} for {nights} nights under {budget}.
    - name: weather
      description: The forecast for a city.
      parameters:
        type: object
        properties:
          city: {type: string}
        required: [city]
      prompt: What is the weather in {city}?
    - name: summarize_trip
      description: Summarizes an itinerary.
      conversation: true
      parameters:
        type: object
        properties:
          itinerary: {type: string, maxLength: 20000}
        required: [itinerary]
      prompt: "Summarize: {itinerary}"
settings:
  model: openai:gpt-4.1-mini
  toolPermission: tool
systemPrompt: You are a travel agent.
providers:
  openai: {OPENAI_API_KEY: env://OPENAI_API_KEY}
mcpServers:
  time:
    type: stdio
    command: mcp-server-time
    serverToolDefaults: {permissionRequired: false}
"""

_MESSAGES = [
    {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-11-25",
            "capabilities": {},
            "clientInfo": {"name": "cold-start-bench", "version": "1"},
        },
    },
    {"jsonrpc": "2.0", "method": "notifications/initialized"},
    {"jsonrpc": "2.0", "id": 2, "method": "tools/list"},
]
_PAYLOAD = "".join(json.dumps(m) + "\n" for m in _MESSAGES).encode()


def _listing(agent_file: Path) -> list[dict[str, Any]]:
    """Our server's tools/list, as wire JSON (through the real server object, in-process)."""
    import anyio
    from mcp import Client

    from mcp_export._server import AgentServer, load_served_agents

    async def fetch() -> list[dict[str, Any]]:
        async with (
            AgentServer(load_served_agents([agent_file]), history=False) as served,
            Client(served.server, mode="legacy") as client,
        ):
            tools = (await client.list_tools()).tools
        return [t.model_dump(by_alias=True, exclude_none=True, mode="json") for t in tools]

    return anyio.run(fetch)


def _start_to_list(command: list[str], env: dict[str, str]) -> tuple[float, int]:
    """Seconds from spawn to the tools/list answer, and how many tools it listed."""
    started = time.perf_counter()
    process = subprocess.Popen(
        command,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        cwd=REPO,
        env=env,
    )
    assert process.stdin is not None and process.stdout is not None
    process.stdin.write(_PAYLOAD)
    process.stdin.flush()
    count = -1
    while True:
        line = process.stdout.readline()
        if not line:
            raise RuntimeError(f"{command} ended before answering tools/list")
        message = json.loads(line)
        if message.get("id") == 2:
            count = len(message["result"]["tools"])
            break
    elapsed = time.perf_counter() - started
    process.stdin.close()
    process.wait(timeout=30)
    return elapsed, count


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=15)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        agent_file = Path(tmp) / "travel.agent.yaml"
        agent_file.write_text(AGENT, encoding="utf-8")
        tools_file = Path(tmp) / "tools.json"
        tools_file.write_text(json.dumps(_listing(agent_file)), encoding="utf-8")
        env = dict(os.environ, METAAGENT_HOME=str(Path(tmp) / "home"))
        ours = [sys.executable, "-m", "mcp_export", "serve", str(agent_file)]
        bare = [sys.executable, str(REPO / "bench" / "_bare_server.py"), str(tools_file)]
        # One unmeasured start of each warms the file cache (.pyc files, the interpreter).
        _start_to_list(ours, env)
        _start_to_list(bare, env)
        times: dict[str, list[float]] = {"ours": [], "bare": []}
        for _ in range(args.rounds):
            for name, command in (("ours", ours), ("bare", bare)):
                elapsed, count = _start_to_list(command, env)
                assert count == 4, count
                times[name].append(elapsed)
    medians = {name: statistics.median(values) for name, values in times.items()}
    ratio = medians["ours"] / medians["bare"]
    print(f"cold start, spawn → initialized → tools/list ({args.rounds} rounds, interleaved)")
    print(f"{'':8}{'median':>10}{'min':>10}{'max':>10}")
    for name, values in times.items():
        print(
            f"{name:8}{medians[name] * 1000:>8.0f}ms{min(values) * 1000:>8.0f}ms"
            f"{max(values) * 1000:>8.0f}ms"
        )
    verdict = "met" if ratio <= GOAL else "MISSED"
    print(f"ratio ours/bare: {ratio:.3f} (goal ≤ {GOAL}: {verdict})")
    return 0 if ratio <= GOAL else 1


if __name__ == "__main__":
    sys.exit(main())
