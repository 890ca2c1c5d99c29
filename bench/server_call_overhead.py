"""What serving costs per call: a call through ``metaagent serve`` minus the bare model request.

Run: ``.venv/bin/python bench/server_call_overhead.py [--calls 500]``. Prints a table; exits 0
(1 when the goal is missed). Not a test: the figures depend on the machine.

The model is ``FakeOpenAIServer`` answering at once, in its own process (so its threads do not
share an interpreter with either side). Each sample is a pair, taken back to back:

- a ``tools/call`` through the real server (``python -m mcp_export serve`` over stdio, the
  official ``mcp.Client``): arguments validated, prompt filled, chat session, model request,
  structured result — plus the MCP round trip itself;
- the same model request made directly, exactly as the provider makes it (``bench/_direct.py``:
  the provider's own aiohttp request, same headers, same messages, streamed; no ``openai`` SDK).

The overhead is their difference; median and p99 over all pairs, for both protocol eras and with
and without the history store. Goal: median ≤ 5 ms (with history, as served by default).
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

GOAL_MS = 5.0
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


# --- the fake model, in its own process ------------------------------------------------------


def _instant(body: Any) -> Any:
    from tests.fakes._script import text

    return text("Booked.", usage=(20, 2))


def _slow(delay: float) -> Any:
    def respond(body: Any) -> Any:
        from tests.fakes._script import text

        return text(f"answer to {body.last_user_text}", usage=(20, 2)).delayed(delay)

    return respond


def _serve(delay: float, pipe: Connection) -> None:
    from tests.fakes.openai_server import FakeOpenAIServer

    with FakeOpenAIServer(responder=_slow(delay) if delay else _instant) as server:
        pipe.send(server.base_url)
        pipe.recv()  # until told to stop


class ModelProcess:
    """A ``FakeOpenAIServer`` in a child process; ``delay`` seconds per answer (0: instant)."""

    def __init__(self, delay: float = 0.0) -> None:
        context = multiprocessing.get_context("spawn")
        self._pipe, child = context.Pipe()
        self._process = context.Process(target=_serve, args=(delay, child), daemon=True)
        self._process.start()
        self.base_url: str = self._pipe.recv()

    def stop(self) -> None:
        self._pipe.send("stop")
        self._process.join(10)


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


async def _pairs(params: Any, mode: str, base_url: str, calls: int) -> list[float]:
    from _direct import DirectModel
    from mcp import Client

    direct = DirectModel(base_url)  # the request as the provider makes it
    body: Any = {
        "model": "fake-model",
        "messages": [{"role": "system", "content": SYSTEM}, {"role": "user", "content": PROMPT}],
        "stream": True,
        "stream_options": {"include_usage": True},
    }

    async def model_request() -> None:
        async for _ in await direct.stream(body):
            pass

    overheads: list[float] = []
    async with Client(params, mode=mode) as client:
        await client.list_tools()
        for index in range(calls + 20):
            started = time.perf_counter()
            result = await client.call_tool("book_flight", {"destination": "Oslo"})
            served = time.perf_counter() - started
            assert not result.is_error, result
            started = time.perf_counter()
            await model_request()
            bare = time.perf_counter() - started
            if index >= 20:  # the first calls warm connections and caches
                overheads.append((served - bare) * 1000)
    await direct.close()
    return overheads


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=500)
    args = parser.parse_args()
    import anyio

    model = ModelProcess()
    rows: list[tuple[str, list[float]]] = []
    try:
        with tempfile.TemporaryDirectory() as tmp:
            agent = write_agent(Path(tmp), model.base_url)
            home = Path(tmp) / "home"
            for mode in ("legacy", "auto"):
                for history in (True, False):
                    extra = () if history else ("--no-history",)
                    params = serve_params(agent, home, *extra)
                    values = anyio.run(_pairs, params, mode, model.base_url, args.calls)
                    era = "2025-11-25" if mode == "legacy" else "2026-07-28"
                    label = f"{era}, history {'on' if history else 'off'}"
                    rows.append((label, values))
    finally:
        model.stop()
    print(f"served call overhead over stdio, instant model ({args.calls} pairs each)")
    print(f"  {'':<32}{'median ms':>10}{'p99 ms':>10}")
    for label, values in rows:
        print(f"  {label:<32}{statistics.median(values):>10.2f}{percentile(values, 0.99):>10.2f}")
    worst = max(statistics.median(v) for label, v in rows if "history on" in label)
    verdict = "met" if worst <= GOAL_MS else "MISSED"
    print(f"goal: median ≤ {GOAL_MS} ms with history ({verdict}: worst median {worst:.2f} ms)")
    return 0 if worst <= GOAL_MS else 1


if __name__ == "__main__":
    sys.exit(main())
