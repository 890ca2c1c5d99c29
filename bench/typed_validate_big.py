"""How long a 1 MB typed answer takes to check: parse, then validate against the outputSchema.

Run: ``.venv/bin/python bench/typed_validate_big.py [--runs 30]``. Prints medians; exits 0 (1
when the goal is missed). Not a test: the figures depend on the machine.

The schema is the example agent's (``resources/examples/fare-finder.agent.yaml``:
``compare_fares``, the cheapest fare and every option); the answer a valid object of 1 MB (about
18 000 options), checked the way a served call checks it (``session.typed.check_answer``: JSON
parse, the quick proof, jsonschema only when the proof cannot vouch). Beside it, for scale, the
same check with the proof unavailable (jsonschema alone), interleaved run by run, and a wrong
answer of the same size (the proof fails, so jsonschema finds and words the problems).

Goal: the valid 1 MB answer checked in < 50 ms (median).
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

GOAL_MS = 50.0


def _answer() -> tuple[dict[str, Any], str]:
    options: list[dict[str, Any]] = []
    value: dict[str, Any] = {
        "cheapest": {"flight": "SK0000", "airline": "SAS", "price": 100},
        "options": options,
        "currency": "EUR",
    }
    index = 0
    while True:
        options.extend(
            {"flight": f"SK{index + i:05d}", "departs": "07:10", "price": 100 + (index + i) % 500}
            for i in range(1000)
        )
        index += 1000
        text = json.dumps(value)
        if len(text) >= 1_000_000:
            return value, text


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=30)
    args = parser.parse_args()
    from mcp_export.session.typed import check_answer
    from schema_types.arguments import checking_validator
    from schema_types.files.agent_file import load_agent

    tool = load_agent(REPO / "resources" / "examples" / "fare-finder.agent.yaml").tools[0]
    schema = tool.output_schema
    assert schema is not None
    value, text = _answer()
    wrong = text.replace('"price": 317', '"price": -317', 1)
    validator = checking_validator(schema)
    quick: list[float] = []
    walk: list[float] = []
    bad: list[float] = []
    for _ in range(args.runs):
        started = time.perf_counter()
        checked = check_answer(schema, text, stage="answer", method="bench")
        quick.append((time.perf_counter() - started) * 1000)
        assert checked.ok
        started = time.perf_counter()
        assert not list(validator.iter_errors(json.loads(text)))
        walk.append((time.perf_counter() - started) * 1000)
        started = time.perf_counter()
        failed = check_answer(schema, wrong, stage="answer", method="bench")
        bad.append((time.perf_counter() - started) * 1000)
        assert not failed.ok
    size = len(text.encode())
    print(
        f"typed answer of {size / 1e6:.2f} MB ({len(value['options'])} options), {args.runs} runs"
    )
    print(
        f"  valid, as served (parse + proof):     {statistics.median(quick):8.1f} ms median "
        f"(fastest {min(quick):.1f})"
    )
    print(f"  valid, jsonschema alone (for scale):  {statistics.median(walk):8.1f} ms median")
    print(f"  wrong at one price (proof + messages):{statistics.median(bad):8.1f} ms median")
    met = statistics.median(quick) < GOAL_MS
    print(f"goal: valid 1 MB answer checked in < {GOAL_MS:g} ms ({'met' if met else 'MISSED'})")
    return 0 if met else 1


if __name__ == "__main__":
    sys.exit(main())
