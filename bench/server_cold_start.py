"""Cold start of the served agent: spawn → initialized → tools/list, against a bare SDK server
listing the same tools, at 1 to 500 tools.

Run: ``.venv/bin/python bench/server_cold_start.py [--rounds 15] [--tools 1 10 100 500]``. Prints a
table; exits 0 (1 when the goal is missed). Not a test: the figures depend on the machine.

Both servers are started the way an MCP client starts them (a new process, stdio pipes) and sent
the same bytes at once: ``initialize``, ``notifications/initialized``, ``tools/list``. The time is
from spawning the process to reading the ``tools/list`` answer. Ours is ``python -m mcp_export
serve AGENT``; the baseline is ``bench/_bare_server.py``, the SDK's low-level server serving the
very listing ours produces (written to a file first). Two shapes of agent: ``desk``, the
travel-desk example's four tools repeated (``bench/_many_tools.py``, ~1.9 KB a tool), and
``small``, one-line tools of ~170 bytes (``bench/_small_tools.py``). Rounds are interleaved,
shapes, sizes and servers alike (bare, ours, bare, ours …), so all see the same machine load;
each of our starts is divided by the bare start right before it, and the spread of those
paired ratios (median, quartiles, range) is printed beside the ratio of the medians. The CPU
time each server had used when its ``tools/list`` answer arrived (``/proc``) is reported as
well: on a busy machine the wall times wait for a core, the CPU times much less. Goal: at every
size, our median within 1.2 × the bare server's.
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
sys.path.insert(0, str(REPO / "bench"))

from _many_tools import write_agent  # noqa: E402
from _paired import paired_ratios  # noqa: E402
from _proc import cpu_seconds  # noqa: E402
from _small_tools import write_small_agent  # noqa: E402

from tests.fakes.mcp_clients import initialize_request  # noqa: E402

GOAL = 1.2

_MESSAGES = [
    initialize_request("cold-start-bench"),
    {"jsonrpc": "2.0", "method": "notifications/initialized"},
    {"jsonrpc": "2.0", "id": 2, "method": "tools/list"},
]
_PAYLOAD = "".join(json.dumps(m) + "\n" for m in _MESSAGES).encode()


def _listing(agent_file: Path) -> list[dict[str, Any]]:
    """Our server's tools/list, as wire JSON (through the real server object, in-process)."""
    import anyio
    from mcp import Client

    from mcp_export.server.agent_server import AgentServer, load_served_agents

    async def fetch() -> list[dict[str, Any]]:
        async with (
            AgentServer(load_served_agents([agent_file]), history=False) as served,
            Client(served.server, mode="legacy") as client,
        ):
            tools = (await client.list_tools()).tools
        return [t.model_dump(by_alias=True, exclude_none=True, mode="json") for t in tools]

    return anyio.run(fetch)


def _start_to_list(command: list[str], env: dict[str, str]) -> tuple[float, float, int]:
    """Seconds from spawn to the tools/list answer, the server's CPU seconds by then, and how
    many tools it listed."""
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
    cpu = cpu_seconds(process.pid)
    process.stdin.close()
    process.wait(timeout=30)
    return elapsed, cpu, count


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=15)
    parser.add_argument("--tools", type=int, nargs="+", default=[1, 10, 100, 500])
    parser.add_argument("--shapes", nargs="+", choices=["desk", "small"], default=["desk", "small"])
    args = parser.parse_args()
    writers = {"desk": write_agent, "small": write_small_agent}
    sizes = [(shape, count) for shape in args.shapes for count in args.tools]
    commands: dict[tuple[str, int, str], list[str]] = {}
    with tempfile.TemporaryDirectory() as tmp:
        env = dict(os.environ, METAAGENT_HOME=str(Path(tmp) / "home"))
        # An installed server runs from bytecode caches; let the warm-up starts write them even
        # where the shell says not to (some sandboxes set this), or every start of ours compiles
        # our sources while the SDK's come from its installed caches.
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        for shape, count in sizes:
            agent_file = writers[shape](Path(tmp), count)
            tools_file = Path(tmp) / f"tools-{shape}-{count}.json"
            tools_file.write_text(json.dumps(_listing(agent_file)), encoding="utf-8")
            ours = [sys.executable, "-m", "mcp_export", "serve", str(agent_file)]
            bare = [sys.executable, str(REPO / "bench" / "_bare_server.py"), str(tools_file)]
            commands[shape, count, "bare"] = bare  # each bare start right before ours
            commands[shape, count, "ours"] = ours
        # One unmeasured start of each warms the file cache (.pyc files, the interpreter).
        for command in commands.values():
            _start_to_list(command, env)
        times: dict[tuple[str, int, str], list[float]] = {key: [] for key in commands}
        cpus: dict[tuple[str, int, str], list[float]] = {key: [] for key in commands}
        for _ in range(args.rounds):
            for (shape, count, name), command in commands.items():
                elapsed, cpu, listed = _start_to_list(command, env)
                assert listed == count, (shape, name, listed, count)
                times[shape, count, name].append(elapsed)
                cpus[shape, count, name].append(cpu)
    print(f"cold start, spawn → initialized → tools/list ({args.rounds} rounds, interleaved)")
    print(f"{'shape':>6}{'tools':>7}{'':6}{'median':>10}{'min':>10}{'max':>10}{'ours/bare':>12}")
    missed = []
    for shape, count in sizes:
        medians = {name: statistics.median(times[shape, count, name]) for name in ("ours", "bare")}
        ratio = medians["ours"] / medians["bare"]
        if ratio > GOAL:
            missed.append(f"{shape} {count}")
        for name in ("ours", "bare"):
            values = times[shape, count, name]
            shown = f"{ratio:.3f}" if name == "ours" else ""
            print(
                f"{shape:>6}{count:>7}  {name:4}{medians[name] * 1000:>8.0f}ms"
                f"{min(values) * 1000:>8.0f}ms{max(values) * 1000:>8.0f}ms{shown:>12}"
            )
    print("paired ratios, each start of ours ÷ the bare start right before it:")
    for shape, count in sizes:
        spread = paired_ratios(times[shape, count, "ours"], times[shape, count, "bare"])
        print(f"{shape:>6}{count:>7}  {spread}")
    print("CPU time by the tools/list answer (medians), and its paired ratios:")
    for shape, count in sizes:
        ours_cpu, bare_cpu = cpus[shape, count, "ours"], cpus[shape, count, "bare"]
        print(
            f"{shape:>6}{count:>7}  ours {statistics.median(ours_cpu) * 1000:.0f} ms, "
            f"bare {statistics.median(bare_cpu) * 1000:.0f} ms: "
            f"{paired_ratios(ours_cpu, bare_cpu)}"
        )
    verdict = "met" if not missed else f"MISSED at {', '.join(missed)} tools"
    print(f"goal: ours ≤ {GOAL} × bare at every size ({verdict})")
    return 0 if not missed else 1


if __name__ == "__main__":
    sys.exit(main())
