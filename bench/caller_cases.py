"""Caller cases × caller models on a slow model: does a caller run keep ``concurrency`` busy?

Run: ``.venv/bin/python bench/caller_cases.py [--cases 100] [--callers 3] [--concurrency 16]
[--delay 0.5] [--reps 3]``. Prints a table; exits 0 (1 when the goal is missed). Not a test: the
figures depend on the machine.

The model is ``bench/_async_model.py``'s server (one asyncio process answering concurrent
requests in parallel after ``--delay`` s) with a caller's answer: a request that offers tools
gets a streamed call of the first tool with ``{"city": …}`` taken from the request; one without
gets the text answer. The agent has one tool and ``--cases`` caller cases (``ask: Tell me about
City n``, expecting that city in the arguments and in the answer); ``--callers`` providers point
at the same model, so every run is two model requests in a row (the caller's pick, then the
served call's answer), with the bundled decoys offered beside our tool. Each run goes through
``run_matrix`` as ``metaagent test --caller-model …`` does (no history). The ideal is
⌈cases × callers / concurrency⌉ × 2 × delay: every slot busy the whole time.

Beside it, in the same run and interleaved (ABAB), the same number of ordinary cases (one model
request each) against their own ideal, ⌈cases × callers / concurrency⌉ × delay: the cost of the
runner itself, for reference.

Goal: 100 caller cases × 3 caller models at concurrency 16 on a 0.5 s model within 1.2 × the
ideal.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import math
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import _async_model
import yaml
from _async_model import AsyncModelProcess
from _cases_agent import PROVIDERS
from _cases_agent import write_agent as write_plain_agent

from mcp_export.testing.callers import CallerOptions
from mcp_export.testing.run import run_matrix, select_cases
from schema_types.files.agent_file import load_agent


def _event(payload: dict[str, Any]) -> bytes:
    return b"data: " + json.dumps(payload).encode() + b"\n\n"


def caller_answer(body: bytes) -> bytes:
    """A tool call of the first offered tool when the request offers tools, else the text."""
    if not body:  # a request without a body (not a chat request) gets the plain answer
        return _text_answer(body)
    data = json.loads(body)
    tools = data.get("tools") or []
    if not tools:
        return _text_answer(body)
    said = next(m["content"] for m in reversed(data["messages"]) if m["role"] == "user")
    city = said.rsplit("about ", 1)[-1].rstrip(".")
    call = {
        "index": 0,
        "id": "call_1",
        "type": "function",
        "function": {"name": tools[0]["function"]["name"], "arguments": json.dumps({"city": city})},
    }

    def chunk(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
        choice = {"index": 0, "delta": delta, "finish_reason": finish}
        return {"id": "c", "object": "chat.completion.chunk", "created": 0, "choices": [choice]}

    usage = {"prompt_tokens": 300, "completion_tokens": 12, "total_tokens": 312}
    return b"".join(
        [
            _event(chunk({"role": "assistant", "tool_calls": [call]})),
            _event(chunk({}, "tool_calls")),
            _event({**chunk({}), "choices": [], "usage": usage}),
            b"data: [DONE]\n\n",
        ]
    )


class CallerModelProcess(AsyncModelProcess):
    """``_async_model``'s server answering as a caller too, in a child process."""

    def _command(self, delay: float) -> list[str]:
        return [sys.executable, __file__, "--serve", str(delay)]


def write_caller_agent(directory: Path, base_url: str, cases: int, callers: int) -> Path:
    tests = [
        {
            "name": f"case {n}",
            "ask": f"Tell me about City {n}",
            "expect": {"arguments": {"city": f"City {n}"}, "contains": [f"City {n}"]},
        }
        for n in range(cases)
    ]
    directory.mkdir(exist_ok=True)
    path = write_plain_agent(directory, base_url, 0, callers)
    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    data["metadata"]["tools"][0]["description"] = "Tells about a city."
    data["metadata"]["tools"][0]["tests"] = tests
    caller_path = directory / "callers.agent.yaml"
    caller_path.write_text(yaml.safe_dump(data), encoding="utf-8")
    return caller_path


async def measure(path: Path, callers: int, concurrency: int, caller: bool) -> tuple[float, int]:
    agent = load_agent(path)
    names = tuple(f"{pid}:bench" for pid, _ in PROVIDERS[:callers])
    began = time.perf_counter()
    if caller:
        matrix = await run_matrix(
            agent,
            path,
            select_cases(agent),
            concurrency=concurrency,
            callers=CallerOptions(models=names),
        )
    else:
        matrix = await run_matrix(
            agent, path, select_cases(agent), models=names, concurrency=concurrency
        )
    elapsed = time.perf_counter() - began
    return elapsed, sum(not r.passed for r in matrix.results)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", type=int, default=100)
    parser.add_argument("--callers", type=int, default=3)
    parser.add_argument("--concurrency", type=int, default=16)
    parser.add_argument("--delay", type=float, default=0.5)
    parser.add_argument("--reps", type=int, default=3)
    args = parser.parse_args()
    model = CallerModelProcess(args.delay)
    runs = args.cases * args.callers
    waves = math.ceil(runs / args.concurrency)
    ideals = {"caller": waves * 2 * args.delay, "ordinary": waves * args.delay}
    times: dict[str, list[float]] = {"caller": [], "ordinary": []}
    ok = True
    try:
        with tempfile.TemporaryDirectory() as folder:
            plain = write_plain_agent(Path(folder), model.base_url, args.cases, args.callers)
            callers = write_caller_agent(
                Path(folder) / "callers", model.base_url, args.cases, args.callers
            )
            for _ in range(args.reps):  # ABAB
                for kind, path in (("caller", callers), ("ordinary", plain)):
                    elapsed, failed = asyncio.run(
                        measure(path, args.callers, args.concurrency, kind == "caller")
                    )
                    if failed:
                        print(f"{kind}: {failed} of {runs} runs failed", file=sys.stderr)
                        ok = False
                    times[kind].append(elapsed)
    finally:
        model.stop()
    print(f"{'kind':>9} {'runs':>5} {'ideal s':>8} {'median s':>9} {'ratio':>6} {'ratios':>18}")
    for kind, found in times.items():
        ratios = [t / ideals[kind] for t in found]
        median = statistics.median(found)
        spread = f"{min(ratios):.2f}–{max(ratios):.2f}"
        print(
            f"{kind:>9} {runs:>5} {ideals[kind]:>8.2f} {median:>9.2f} "
            f"{median / ideals[kind]:>6.2f} {spread:>18}"
        )
    ratio = statistics.median(times["caller"]) / ideals["caller"]
    if ratio > 1.2:
        ok = False
    print("goal (caller cases: ratio ≤ 1.2):", "met" if ok else "MISSED")
    return 0 if ok else 1


_ORIGINAL = _async_model._answer


def _text_answer(body: bytes) -> bytes:
    return _ORIGINAL(body)


if __name__ == "__main__":
    if sys.argv[1:2] == ["--serve"]:
        from _proc import raise_file_limit

        raise_file_limit()
        _async_model._answer = caller_answer
        asyncio.run(_async_model._serve(float(sys.argv[2])))
    else:
        raise SystemExit(main())
