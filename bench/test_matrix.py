"""Test cases × models on a slow model: does ``run_matrix`` keep ``concurrency`` calls busy?

Run: ``.venv/bin/python bench/test_matrix.py [--cases 10,100] [--models 3] [--concurrency 16]
[--delay 0.5] [--reps 3]``. Prints a table; exits 0 (1 when the goal is missed). Not a test: the
figures depend on the machine.

The model is ``bench/_async_model.py`` answering every request after ``--delay`` seconds (one
process, asyncio, so it answers concurrent requests in parallel). The agent has one tool and
``CASES`` test cases that each expect the model's answer text; ``MODELS`` providers (openai,
vllm, litellm…) point at the same model process, so every call takes one model request. Each run
goes through ``mcp_export.testing.run.run_matrix`` exactly as ``metaagent test`` does (an
in-process ``AgentServer`` per model, the official MCP client, no history). The ideal is
⌈cases × models / concurrency⌉ × delay: every slot busy the whole time.

Goal: 100 cases × 3 models at concurrency 16 on a 0.5 s model within 1.2 × the ideal.
"""

from __future__ import annotations

import argparse
import asyncio
import math
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from _async_model import AsyncModelProcess
from _cases_agent import PROVIDERS, write_agent

from mcp_export.testing.run import run_matrix, select_cases
from schema_types.files.agent_file import load_agent


async def measure(path: Path, models: int, concurrency: int) -> tuple[float, int]:
    agent = load_agent(path)
    names = [f"{pid}:bench" for pid, _ in PROVIDERS[:models]]
    began = time.perf_counter()
    matrix = await run_matrix(
        agent, path, select_cases(agent), models=names, concurrency=concurrency
    )
    elapsed = time.perf_counter() - began
    failed = sum(not r.passed for r in matrix.results)
    return elapsed, failed


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", default="10,100")
    parser.add_argument("--models", type=int, default=3)
    parser.add_argument("--concurrency", type=int, default=16)
    parser.add_argument("--delay", type=float, default=0.5)
    parser.add_argument("--reps", type=int, default=3)
    args = parser.parse_args()
    model = AsyncModelProcess(args.delay)
    ok = True
    print(f"{'cases':>6} {'models':>6} {'calls':>6} {'ideal s':>8} {'median s':>9} {'ratio':>6}")
    try:
        with tempfile.TemporaryDirectory() as folder:
            for cases in (int(c) for c in args.cases.split(",")):
                path = write_agent(Path(folder), model.base_url, cases, args.models)
                calls = cases * args.models
                ideal = math.ceil(calls / args.concurrency) * args.delay
                times = []
                for _ in range(args.reps):
                    elapsed, failed = asyncio.run(measure(path, args.models, args.concurrency))
                    if failed:
                        print(f"{failed} of {calls} calls failed", file=sys.stderr)
                        ok = False
                    times.append(elapsed)
                median = statistics.median(times)
                ratio = median / ideal
                row = f"{cases:>6} {args.models:>6} {calls:>6} {ideal:>8.2f} {median:>9.2f}"
                print(f"{row} {ratio:>6.2f}")
                if cases >= 100 and ratio > 1.2:
                    ok = False
    finally:
        model.stop()
    print("goal (100 cases: ratio ≤ 1.2):", "met" if ok else "MISSED")
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
