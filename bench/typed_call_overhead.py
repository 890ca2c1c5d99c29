"""What a typed result costs a served call: a typed tool against the same tool untyped.

Run: ``.venv/bin/python bench/typed_call_overhead.py [--calls 400] [--block 20]
[--eras 2025-11-25,2026-07-28]``.
Prints a table; exits 0 (1 when the goal is missed). Not a test: the figures depend on the machine.

One ``metaagent serve`` (stdio, history on, as served by default) offers two tools with one
prompt: ``book_flight`` answers text, ``book_flight_typed`` declares an ``outputSchema``
(``{answer: string}``), so its request carries ``response_format`` and its answer is parsed,
checked and served as ``structuredContent`` with the trace in ``_meta``. The model is
``bench/_async_model.py`` answering at once (the object for a ``response_format`` request).
Samples are pairs taken back to back, the order alternating (``_paired.alternated``): one
untyped call, one typed call, each minus the same model request made directly right after it
(``bench/_direct.py``), i.e. the served overhead. One difference alone is noise on a busy machine
(it may even come out negative), so the pairs are taken in blocks of ``--block``: per block, the
median typed overhead ÷ the median untyped one. Reported: the medians over all pairs, the block
ratios' median (min–max), and for scale the paired ratios of the whole call times.

Goal: typed ÷ untyped overhead ≤ 1.1 (median of the block ratios).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
BENCH = REPO / "bench"
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(BENCH))

from _async_model import AsyncModelProcess  # noqa: E402
from _paired import alternated, paired_ratios  # noqa: E402
from server_call_overhead import ERAS, SYSTEM, serve_params  # noqa: E402

GOAL = 1.1
WARM_UP = 20
PROMPT = "Book a flight to Oslo for 1 passenger(s)."

AGENT = """\
metadata:
  name: Bench Desk
  tools:
    - name: book_flight
      parameters: &p
        type: object
        properties:
          destination: {{type: string}}
          passengers: {{type: integer, minimum: 1, default: 1}}
        required: [destination]
      prompt: &t "Book a flight to {{destination}} for {{passengers}} passenger(s)."
    - name: book_flight_typed
      parameters: *p
      prompt: *t
      outputSchema:
        type: object
        properties: {{answer: {{type: string}}}}
        required: [answer]
settings:
  model: openai:fake-model
  maxChatTurns: 4
systemPrompt: {system}
providers:
  openai: {{OPENAI_API_KEY: sk-bench, OPENAI_BASE_URL: "{base_url}"}}
"""


async def _measure(
    era: str, agent: Path, home: Path, base_url: str, calls: int, block: int
) -> list[str]:
    from _direct import DirectModel
    from mcp import Client

    direct = DirectModel(base_url)
    body: dict[str, Any] = {
        "model": "fake-model",
        "messages": [{"role": "system", "content": SYSTEM}, {"role": "user", "content": PROMPT}],
        "stream": True,
        "stream_options": {"include_usage": True},
    }
    typed_body = {
        **body,
        "response_format": {
            "type": "json_schema",
            "json_schema": {
                "name": "book_flight_typed",
                "schema": {
                    "type": "object",
                    "properties": {"answer": {"type": "string"}},
                    "required": ["answer"],
                },
            },
        },
    }
    try:
        async with Client(serve_params(agent, home), mode=ERAS[era]) as client:
            await client.list_tools()

            whole: dict[str, list[float]] = {"book_flight": [], "book_flight_typed": []}

            async def overhead(tool: str, request: dict[str, Any]) -> float:
                started = time.perf_counter()
                result = await client.call_tool(tool, {"destination": "Oslo"})
                served = time.perf_counter() - started
                assert not result.is_error, result
                whole[tool].append(served * 1000)
                started = time.perf_counter()
                async for _ in await direct.stream(request):
                    pass
                return (served - (time.perf_counter() - started)) * 1000

            async def untyped() -> float:
                return await overhead("book_flight", body)

            async def typed() -> float:
                return await overhead("book_flight_typed", typed_body)

            for rep in range(WARM_UP):
                await alternated(rep, untyped, typed)
            for values in whole.values():
                values.clear()
            plain: list[float] = []
            shaped: list[float] = []
            blocks: list[float] = []
            for rep in range(calls):
                base, mine = await alternated(rep, untyped, typed)
                plain.append(base)
                shaped.append(mine)
                if len(plain) % block == 0:
                    blocks.append(
                        statistics.median(shaped[-block:]) / statistics.median(plain[-block:])
                    )
    finally:
        await direct.close()
    calls_spread = paired_ratios(whole["book_flight_typed"], whole["book_flight"])
    ratio = statistics.median(blocks)
    return [
        f"  {era}: overhead untyped {statistics.median(plain):.2f} ms, typed "
        f"{statistics.median(shaped):.2f} ms (medians); typed ÷ untyped {ratio:.2f} × "
        f"(blocks of {block}: {min(blocks):.2f}–{max(blocks):.2f}); whole call "
        f"{statistics.median(whole['book_flight']):.2f} → "
        f"{statistics.median(whole['book_flight_typed']):.2f} ms, paired {calls_spread}",
        str(ratio),
    ]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=400)
    parser.add_argument("--block", type=int, default=20)
    parser.add_argument("--eras", default=",".join(ERAS))
    args = parser.parse_args()
    import anyio

    model = AsyncModelProcess(0.0)
    met = True
    print(f"served call overhead, typed vs untyped tool, instant model: {args.calls} pairs an era")
    try:
        with tempfile.TemporaryDirectory() as tmp:
            agent = Path(tmp) / "bench.agent.yaml"
            agent.write_text(AGENT.format(system=SYSTEM, base_url=model.base_url), "utf-8")
            for era in args.eras.split(","):
                line, ratio = anyio.run(
                    _measure,
                    era,
                    agent,
                    Path(tmp) / f"home-{era}",
                    model.base_url,
                    args.calls,
                    args.block,
                )
                print(line)
                met = met and float(ratio) <= GOAL
    finally:
        model.stop()
    print(f"goal: typed ÷ untyped ≤ {GOAL} ({'met' if met else 'MISSED'})")
    return 0 if met else 1


if __name__ == "__main__":
    sys.exit(main())
