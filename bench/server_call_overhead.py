"""What serving costs per call: a call through ``metaagent serve`` minus the bare model request.

Run: ``.venv/bin/python bench/server_call_overhead.py [--calls 500] [--block 25]
[--transports stdio,http] [--eras 2025-11-25,2026-07-28]``. Prints a table; exits 0 (1 when a
goal is missed). Not a test: the figures depend on the machine.

The model is ``bench/_async_model.py`` answering at once, in its own process. Each sample is a
pair, taken back to back:

- a ``tools/call`` through a server, with the official ``mcp.Client`` over stdio or streamable
  HTTP: arguments validated, prompt filled, chat session, model request, structured result —
  plus the MCP round trip itself;
- the same model request made directly, exactly as the provider makes it (``bench/_direct.py``:
  the provider's own aiohttp request, same headers, same messages, streamed; no ``openai`` SDK).

The overhead is their difference. The servers, per transport and protocol era, all open at once:
ours (``python -m mcp_export serve``, ``--http 127.0.0.1:0`` over HTTP) with the history store
(as served by default) and with ``--no-history``, and bare (``bench/_bare_model_server.py``: a
bare mcp SDK server making the same model request with plain aiohttp). They take turns: a round
gives each server ``--block`` pairs, the order rotating from one round to the next, until each
has ``--calls`` pairs (after 20 warm-up calls each). Per server: median and p99 of the overhead
over all its pairs; per round: ours' median ÷ bare's median of that round (and history on ÷
off), reported as the median (min–max) over the rounds.

Goals: with history, median ≤ 5 ms over stdio, and ≤ 1.15 × bare over HTTP.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import statistics
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
BENCH = REPO / "bench"
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(BENCH))

from _async_model import AsyncModelProcess  # noqa: E402
from _http_servers import http_process  # noqa: E402

GOAL_MS = 5.0
GOAL_RATIO = 1.15
SYSTEM = "You are a travel agent."
PROMPT = "Book a flight to Oslo for 1 passenger(s)."

AGENT = """\
metadata:
  name: Bench Desk
  version: 1.0.0
  description: Benchmarks the served call.
  tools:
    - name: book_flight
      description: Books a flight.
      parameters:
        type: object
        properties:
          destination: {{type: string}}
          passengers: {{type: integer, minimum: 1, default: 1}}
        required: [destination]
      prompt: "Book a flight to {{destination}} for {{passengers}} passenger(s)."
settings:
  model: openai:fake-model
  maxChatTurns: 4
systemPrompt: {system}
providers:
  openai: {{OPENAI_API_KEY: sk-bench, OPENAI_BASE_URL: "{base_url}"}}
"""


# --- the agent and its server ---------------------------------------------------------------


def write_agent(directory: Path, base_url: str) -> Path:
    """The benchmark agent file (one tool, the fake model, no inner tools)."""
    path = directory / "bench.agent.yaml"
    path.write_text(AGENT.format(system=SYSTEM, base_url=base_url), encoding="utf-8")
    return path


def serve_params(agent: Path, home: Path, *extra: str) -> Any:
    """How an MCP client launches ``metaagent serve`` on ``agent``."""
    from mcp.client.stdio import StdioServerParameters

    return StdioServerParameters(
        command=sys.executable,
        args=["-m", "mcp_export", "serve", str(agent), *extra],
        cwd=str(REPO),
        env=dict(os.environ, METAAGENT_HOME=str(home)),
    )


def percentile(values: list[float], fraction: float) -> float:
    """The value at ``fraction`` of the sorted values (nearest rank)."""
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(fraction * (len(ordered) - 1))))]


# --- measuring -------------------------------------------------------------------------------

ERAS = {"2025-11-25": "legacy", "2026-07-28": "auto"}
WARM_UP = 20


@dataclass
class Setup:
    transport: str
    era: str
    label: str
    client: Any = None
    overheads: list[float] = field(default_factory=list)
    rounds: list[float] = field(default_factory=list)
    """The median overhead of each round."""

    @property
    def name(self) -> str:
        return f"{self.transport}, {self.era}, {self.label}"


async def _open(
    stack: contextlib.AsyncExitStack, setup: Setup, agent: Path, home: Path, base_url: str
) -> None:
    from mcp import Client
    from mcp.client.stdio import StdioServerParameters
    from mcp.client.streamable_http import streamable_http_client

    mode = ERAS[setup.era]
    bare = [str(BENCH / "_bare_model_server.py"), base_url]
    extra = ["--no-history"] if setup.label == "ours, history off" else []
    folder = home / f"{setup.transport}-{setup.era}-{len(extra)}"
    if setup.transport == "stdio":
        params = (
            StdioServerParameters(command=sys.executable, args=bare, cwd=str(REPO))
            if setup.label == "bare"
            else serve_params(agent, folder, *extra)
        )
        setup.client = await stack.enter_async_context(Client(params, mode=mode))
    else:
        ours = setup.label != "bare"
        serve = [sys.executable, "-m", "mcp_export", "serve", str(agent), "--http", "127.0.0.1:0"]
        command = [*serve, *extra] if ours else [sys.executable, *bare, "--http", "0"]
        env = dict(os.environ, METAAGENT_HOME=str(folder))
        url, _pid = stack.enter_context(http_process(command, env, ours=ours))
        setup.client = await stack.enter_async_context(
            Client(streamable_http_client(url), mode=mode)
        )
    await setup.client.list_tools()


async def _measure(
    setups: list[Setup], agent: Path, home: Path, base_url: str, calls: int, block: int
) -> None:
    from _direct import DirectModel

    direct = DirectModel(base_url)  # the request as the provider makes it
    body: Any = {
        "model": "fake-model",
        "messages": [{"role": "system", "content": SYSTEM}, {"role": "user", "content": PROMPT}],
        "stream": True,
        "stream_options": {"include_usage": True},
    }

    async def pair(setup: Setup) -> float:
        started = time.perf_counter()
        result = await setup.client.call_tool("book_flight", {"destination": "Oslo"})
        served = time.perf_counter() - started
        assert not result.is_error, result
        started = time.perf_counter()
        async for _ in await direct.stream(body):
            pass
        return (served - (time.perf_counter() - started)) * 1000

    try:
        async with contextlib.AsyncExitStack() as stack:
            for setup in setups:
                await _open(stack, setup, agent, home, base_url)
            for setup in setups:
                for _ in range(WARM_UP):
                    await pair(setup)
            for turn in range(-(-calls // block)):
                shift = turn % len(setups)
                for setup in setups[shift:] + setups[:shift]:
                    values = [await pair(setup) for _ in range(block)]
                    setup.overheads.extend(values)
                    setup.rounds.append(statistics.median(values))
    finally:
        await direct.close()


def _ratio(top: Setup, bottom: Setup) -> tuple[float, float, float]:
    ratios = [a / b for a, b in zip(top.rounds, bottom.rounds, strict=True) if b > 0]
    return statistics.median(ratios), min(ratios), max(ratios)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=500)
    parser.add_argument("--block", type=int, default=25)
    parser.add_argument("--transports", default="stdio,http")
    parser.add_argument("--eras", default=",".join(ERAS))
    args = parser.parse_args()
    import anyio

    setups = [
        Setup(transport, era, label)
        for transport in args.transports.split(",")
        for era in args.eras.split(",")
        for label in ("bare", "ours, history on", "ours, history off")
    ]
    model = AsyncModelProcess(0.0)
    try:
        with tempfile.TemporaryDirectory() as tmp:
            agent = write_agent(Path(tmp), model.base_url)
            anyio.run(
                _measure, setups, agent, Path(tmp) / "home", model.base_url, args.calls, args.block
            )
    finally:
        model.stop()
    rounds = len(setups[0].rounds)
    print(
        f"served call overhead, instant model: {len(setups[0].overheads)} pairs a server, in "
        f"{rounds} rounds of {args.block} taking turns"
    )
    print(f"  {'':<40}{'median ms':>10}{'p99 ms':>9}   ÷ bare (min–max)    on ÷ off (min–max)")
    met = True
    for index, setup in enumerate(setups):
        bare, on, off = setups[index - index % 3 : index - index % 3 + 3]
        line = (
            f"  {setup.name:<40}{statistics.median(setup.overheads):>10.2f}"
            f"{percentile(setup.overheads, 0.99):>9.2f}"
        )
        if setup is not bare:
            line += "   {:.2f} ({:.2f}–{:.2f})".format(*_ratio(setup, bare))
        if setup is on:
            line += "    {:.2f} ({:.2f}–{:.2f})".format(*_ratio(on, off))
            if setup.transport == "stdio":
                met = met and statistics.median(setup.overheads) <= GOAL_MS
            else:
                met = met and _ratio(on, bare)[0] <= GOAL_RATIO
        print(line)
    print(
        f"goal: with history, median ≤ {GOAL_MS} ms over stdio and ≤ {GOAL_RATIO} × bare over "
        f"HTTP ({'met' if met else 'MISSED'})"
    )
    return 0 if met else 1


if __name__ == "__main__":
    sys.exit(main())
