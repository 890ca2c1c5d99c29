"""Hundreds of concurrent served calls: 256 and 1024 at once against a model that takes 1 s.

Run: ``.venv/bin/python bench/server_concurrency_wide.py [--sizes 256,1024] [--reps 3]
[--transports stdio,http] [--eras 2025-11-25,2026-07-28]``. Prints tables; exits 0 (1 when the
goal is missed). Not a test: the figures depend on the machine.

What is compared, in the same run, batch by batch (the order alternates from one repetition to
the next, so a busy moment on the machine hits both):

- ours: ``metaagent serve`` on the benchmark agent (``server_call_overhead.write_agent``), over
  stdio or over streamable HTTP (``--http 127.0.0.1:0``);
- bare: ``bench/_bare_model_server.py``, a bare mcp SDK server making the same model request with
  plain aiohttp on a connector without a connection limit, over the same transport.

Both are driven by the official ``mcp.Client``, ``SIZE`` ``tools/call`` requests started together;
over HTTP its ``httpx2`` client sends through aiohttp without a connection limit (httpx2's default
of 100 connections would be a ceiling of the client's own, and its pool's bookkeeping grows with
the connections squared: see ``_unlimited_http``). The model is ``bench/_async_model.py`` waiting
1 s before each answer: calls that truly run concurrently take a little over 1 s. Every answer is
checked to be the one for its own request.

Before the servers, the floor: the same model requests made straight from this process with plain
aiohttp (``TCPConnector(limit=0)``), showing that the model process itself answers 1024 requests
at once in about 1 s. The soft open-files limit is raised to the hard limit here, and every child
inherits it. Also reported: the CPU time per call of each server process and of this process (the
client) over the batch (``/proc/PID/stat``), and, from the model's own clock, when the last model
request of a batch reached it (seconds after the batch started) and how long the batch went on
after the model's last answer.

``--serve-args=…`` passes more arguments to ours (``--serve-args=--no-history``); ``--patches
no-log+…`` runs ours through ``bench/_patched_serve.py`` (what a change to the history store
would save at this concurrency).

``--profile DIR``: after the measured batches, one more batch of the largest size on each server
while ``_proc.sampled`` samples it (py-spy, and perf where installed): ``DIR/TRANSPORT-MODE-NAME.*``
with the calls and the CPU seconds they took in ``….calls``.

Goal: at 1024 calls, ours ≤ 1.1 × bare (median batch time), on every transport and era run.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import statistics
import sys
import tempfile
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from multidict import CIMultiDict

REPO = Path(__file__).resolve().parents[1]
BENCH = REPO / "bench"
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(BENCH))

from _async_model import AsyncModelProcess  # noqa: E402
from _http_servers import http_process  # noqa: E402
from _proc import children, cpu_seconds, raise_file_limit, sampled  # noqa: E402
from server_call_overhead import serve_params, write_agent  # noqa: E402

MODEL_DELAY = 1.0
GOAL_RATIO = 1.1
ERAS = {"2025-11-25": "legacy", "2026-07-28": "auto"}


@dataclass
class Series:
    """Batch times (s) and the server's CPU seconds per call, one value per repetition."""

    seconds: list[float] = field(default_factory=list)
    cpu_ms: list[float] = field(default_factory=list)
    client_cpu_ms: list[float] = field(default_factory=list)
    last_out: list[float] = field(default_factory=list)
    """Seconds from the batch's start to the last model request reaching the model."""
    tail: list[float] = field(default_factory=list)
    """Seconds from the model's last answer to the batch's end."""


# --- the floor: the model asked directly ------------------------------------------------------


async def _floor(base_url: str, sizes: list[int], reps: int, model_pid: int) -> dict[int, Series]:
    import aiohttp

    url = f"{base_url}/chat/completions"
    results = {size: Series() for size in sizes}
    async with aiohttp.ClientSession(
        connector=aiohttp.TCPConnector(limit=0),
        headers={"Authorization": "Bearer sk-bench", "Content-Type": "application/json"},
    ) as http:

        async def one(index: int) -> None:
            body: dict[str, Any] = {
                "model": "fake-model",
                "messages": [{"role": "user", "content": f"floor {index}"}],
                "stream": True,
                "stream_options": {"include_usage": True},
            }
            async with http.post(url, json=body) as response:
                text = await response.read()
            assert f'floor {index}"'.encode() in text, text[:200]

        for rep in range(reps + 1):
            for size in sizes:
                cpu = cpu_seconds(model_pid)
                started = time.perf_counter()
                await asyncio.gather(*(one(i) for i in range(size)))
                elapsed = time.perf_counter() - started
                if rep:  # the first round opens the connections
                    results[size].seconds.append(elapsed)
                    results[size].cpu_ms.append((cpu_seconds(model_pid) - cpu) / size * 1000)
    return results


# --- the servers ------------------------------------------------------------------------------


def _unlimited_http() -> Any:
    """An ``httpx2.AsyncClient`` for the official client that sends through aiohttp.

    httpx2's own pool (httpcore2) looks over every connection and every waiting request whenever
    a request starts or a response closes: at 1024 calls at once that is a quarter of the client's
    CPU, and the client, not the server, would set the batch time. aiohttp's pool, without a
    connection limit, takes the same requests in linear time.
    """
    import aiohttp
    import httpx2
    from mcp.shared._httpx_utils import MCP_DEFAULT_SSE_READ_TIMEOUT, MCP_DEFAULT_TIMEOUT

    class Body(httpx2.AsyncByteStream):
        def __init__(self, response: aiohttp.ClientResponse) -> None:
            self._response = response

        async def __aiter__(self) -> AsyncIterator[bytes]:
            async for chunk in self._response.content.iter_any():
                yield chunk

        async def aclose(self) -> None:
            self._response.release()

    class Transport(httpx2.AsyncBaseTransport):
        def __init__(self) -> None:
            self._http: aiohttp.ClientSession | None = None

        async def handle_async_request(self, request: httpx2.Request) -> httpx2.Response:
            if self._http is None:
                self._http = aiohttp.ClientSession(
                    # Idle connections are let go before uvicorn's keep-alive (5 s) ends them:
                    # a POST sent on one the server is closing fails.
                    connector=aiohttp.TCPConnector(limit=0, keepalive_timeout=3),
                    timeout=aiohttp.ClientTimeout(total=None),
                    auto_decompress=False,
                    skip_auto_headers=("User-Agent", "Accept-Encoding"),
                )
            headers = [(k.decode("latin-1"), v.decode("latin-1")) for k, v in request.headers.raw]
            response = await self._http.request(
                request.method,
                str(request.url),
                headers=CIMultiDict(headers),
                data=await request.aread(),
                allow_redirects=False,
            )
            return httpx2.Response(
                status_code=response.status,
                headers=[(k, v) for k, v in response.raw_headers],
                stream=Body(response),
                request=request,
            )

        async def aclose(self) -> None:
            if self._http is not None:
                await self._http.close()

    return httpx2.AsyncClient(
        transport=Transport(),
        timeout=httpx2.Timeout(MCP_DEFAULT_TIMEOUT, read=MCP_DEFAULT_SSE_READ_TIMEOUT),
    )


async def _batch(client: Any, size: int, tag: str) -> float:
    import anyio
    import mcp_types as types

    answers: dict[int, str] = {}

    async def call(index: int) -> None:
        result = await client.call_tool("book_flight", {"destination": f"{tag}-{index}"})
        block = result.content[0]
        assert not result.is_error and isinstance(block, types.TextContent), result
        answers[index] = block.text

    started = time.perf_counter()
    async with anyio.create_task_group() as group:
        for index in range(size):
            group.start_soon(call, index)
    elapsed = time.perf_counter() - started
    assert len(answers) == size
    for index, answer in answers.items():
        assert f"{tag}-{index} " in answer, answer
    return elapsed


async def _compare(
    transport: str,
    mode: str,
    base_url: str,
    agent: Path,
    home: Path,
    sizes: list[int],
    reps: int,
    serve_args: list[str],
    profile: Path | None,
    patches: str,
) -> dict[str, dict[int, Series]]:
    from mcp import Client
    from mcp.client.stdio import StdioServerParameters
    from mcp.client.streamable_http import streamable_http_client

    bare_script = str(BENCH / "_bare_model_server.py")
    ours_module = ["-m", "mcp_export"]
    if patches:
        ours_module = [str(BENCH / "_patched_serve.py"), patches]
    results: dict[str, dict[int, Series]] = {
        "bare": {size: Series() for size in sizes},
        "ours": {size: Series() for size in sizes},
    }
    async with contextlib.AsyncExitStack() as stack:
        clients: dict[str, Any] = {}
        pids: dict[str, int] = {}
        if transport == "stdio":
            launched = {
                "bare": StdioServerParameters(
                    command=sys.executable, args=[bare_script, base_url], cwd=str(REPO)
                ),
                "ours": serve_params(agent, home, *serve_args),
            }
            launched["ours"].args = [*ours_module, *launched["ours"].args[2:]]
            for name, params in launched.items():
                before = set(children())
                clients[name] = await stack.enter_async_context(Client(params, mode=mode))
                (pids[name],) = set(children()) - before
        else:
            env = dict(os.environ, METAAGENT_HOME=str(home))
            commands = {
                "bare": [sys.executable, bare_script, base_url, "--http", "0"],
                "ours": [
                    sys.executable,
                    *ours_module,
                    *("serve", str(agent), "--http", "127.0.0.1:0"),
                    *serve_args,
                ],
            }
            for name, command in commands.items():
                url, pids[name] = stack.enter_context(
                    http_process(command, env, ours=name == "ours")
                )
                http = await stack.enter_async_context(_unlimited_http())
                transport_cm = streamable_http_client(url, http_client=http)
                clients[name] = await stack.enter_async_context(Client(transport_cm, mode=mode))
        for client in clients.values():
            await client.list_tools()
        import aiohttp

        stats = await stack.enter_async_context(aiohttp.ClientSession())
        stats_url = base_url.removesuffix("/v1") + "/stats"

        async def model_times() -> dict[str, list[float]]:
            async with stats.get(stats_url) as response:
                found: dict[str, list[float]] = await response.json(content_type=None)
                return found

        for rep in range(reps + 1):
            order = ["bare", "ours"] if rep % 2 else ["ours", "bare"]
            for size in sizes:
                for name in order:
                    await model_times()
                    cpu, own = cpu_seconds(pids[name]), cpu_seconds(os.getpid())
                    started = time.monotonic()
                    elapsed = await _batch(clients[name], size, f"r{rep}s{size}")
                    ended = time.monotonic()
                    times = await model_times()
                    if rep:  # the first round warms the connections and caches
                        series = results[name][size]
                        series.last_out.append(max(times["arrived"]) - started)
                        series.tail.append(ended - max(times["answered"]))
                        series.seconds.append(elapsed)
                        series.cpu_ms.append((cpu_seconds(pids[name]) - cpu) / size * 1000)
                        own = cpu_seconds(os.getpid()) - own
                        series.client_cpu_ms.append(own / size * 1000)
        if profile is not None:
            import anyio

            size = max(sizes)
            for name in ("bare", "ours"):
                prefix = profile / f"{transport}-{mode}-{name}"
                async with sampled(pids[name], prefix):
                    cpu = cpu_seconds(pids[name])
                    await _batch(clients[name], size, f"profile{size}")
                    spent = cpu_seconds(pids[name]) - cpu
                await anyio.Path(f"{prefix}.calls").write_text(f"{size} {spent:.3f}\n")
    return results


# --- the report -------------------------------------------------------------------------------


def _spread(values: list[float], scale: float = 1.0, digits: int = 2) -> str:
    low, mid, high = min(values) * scale, statistics.median(values) * scale, max(values) * scale
    return f"{mid:.{digits}f} ({low:.{digits}f}–{high:.{digits}f})"


def _report(label: str, found: dict[str, dict[int, Series]], sizes: list[int]) -> float:
    """Print one comparison; returns ours ÷ bare (medians) at the largest size."""
    print(f"\n{label}")
    print(
        f"  {'calls':>6}  {'bare batch s':<20}{'ours batch s':<20}{'ours ÷ bare':<20}"
        f"{'bare CPU ms/call':<20}{'ours CPU ms/call':<20}{'client CPU ms/call (bare / ours)'}"
    )
    timeline: list[str] = []
    ratio = 0.0
    for size in sizes:
        bare, ours = found["bare"][size], found["ours"][size]
        ratios = [o / b for o, b in zip(ours.seconds, bare.seconds, strict=True)]
        ratio = statistics.median(ours.seconds) / statistics.median(bare.seconds)
        ratio_text = f"{ratio:.2f} ({min(ratios):.2f}–{max(ratios):.2f})"
        print(
            f"  {size:>6}  {_spread(bare.seconds):<20}{_spread(ours.seconds):<20}"
            f"{ratio_text:<20}{_spread(bare.cpu_ms):<20}{_spread(ours.cpu_ms):<20}"
            f"{_spread(bare.client_cpu_ms)} / {_spread(ours.client_cpu_ms)}",
            flush=True,
        )
        timeline.append(
            f"  {size:>6}  {_spread(bare.last_out):<20}{_spread(ours.last_out):<20}"
            f"{_spread(bare.tail):<20}{_spread(ours.tail):<20}"
        )
    print(
        f"  {'calls':>6}  {'bare last request s':<20}{'ours last request s':<20}"
        f"{'bare after answers':<20}{'ours after answers':<20}"
    )
    print("\n".join(timeline), flush=True)
    return ratio


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="256,1024")
    parser.add_argument("--reps", type=int, default=3)
    parser.add_argument("--transports", default="stdio,http")
    parser.add_argument("--eras", default=",".join(ERAS))
    parser.add_argument(
        "--serve-args",
        default="",
        help="more arguments for ours, space-separated (--serve-args=--no-history)",
    )
    parser.add_argument("--profile", type=Path, help="sample one more batch of each server here")
    parser.add_argument(
        "--patches", default="", help="run ours through bench/_patched_serve.py with these patches"
    )
    args = parser.parse_args()
    if args.profile is not None:
        args.profile.mkdir(parents=True, exist_ok=True)
    sizes = [int(s) for s in args.sizes.split(",")]
    transports = args.transports.split(",")
    eras = args.eras.split(",")
    import anyio

    limit = raise_file_limit()
    print(
        f"concurrent served calls, model answers after {MODEL_DELAY:.0f} s; median (min–max) of "
        f"{args.reps} repetitions; open-files limit {limit}; {os.cpu_count()} CPUs",
        flush=True,
    )
    model = AsyncModelProcess(MODEL_DELAY)
    model_pid = model._process.pid
    worst = 0.0
    try:
        floor = anyio.run(_floor, model.base_url, sizes, args.reps, model_pid)
        print("\nthe floor: plain aiohttp (TCPConnector(limit=0)) straight to the model")
        print(f"  {'calls':>6}  {'batch s':<22}{'model CPU ms/request':<22}")
        for size in sizes:
            series = floor[size]
            print(f"  {size:>6}  {_spread(series.seconds):<22}{_spread(series.cpu_ms):<22}")
        with tempfile.TemporaryDirectory() as tmp:
            agent = write_agent(Path(tmp), model.base_url)
            home = Path(tmp) / "home"
            for transport in transports:
                for era in eras:
                    found = anyio.run(
                        _compare,
                        transport,
                        ERAS[era],
                        model.base_url,
                        agent,
                        home,
                        sizes,
                        args.reps,
                        args.serve_args.split(),
                        args.profile,
                        args.patches,
                    )
                    ratio = _report(f"{transport}, {era}", found, sizes)
                    worst = max(worst, ratio)
    finally:
        model.stop()
    verdict = "met" if worst <= GOAL_RATIO else "MISSED"
    print(
        f"\ngoal: at {max(sizes)} calls ours ≤ {GOAL_RATIO} × bare "
        f"({verdict}: worst ratio of medians {worst:.2f})"
    )
    return 0 if worst <= GOAL_RATIO else 1


if __name__ == "__main__":
    sys.exit(main())
