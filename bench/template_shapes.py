"""The template engine on hostile shapes, in process: does the cost per token stay flat?

Run: ``.venv/bin/python bench/template_shapes.py [--size 10000] [--rounds 3]``. Prints a table;
exits 0 (1 when a shape's cost per unit grows by half or more from N to 4N). Not a test: the
figures depend on the machine.

Each shape is built at N and at 4N; ``diagnose`` and ``render_segments`` each run on a cold cache
(the tokenizer's and the pairing's caches are cleared first), the two sizes interleaved round by
round, medians reported. A quadratic path shows as a cost per unit four times larger at 4N.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from schema_types.template import sections, tokens  # noqa: E402
from schema_types.template.engine import diagnose, render_segments  # noqa: E402

Shape = Callable[[int], tuple[str, dict[str, Any]]]
XY: dict[str, Any] = {
    "type": "object",
    "properties": {"x": {"type": "string"}, "y": {"type": "string", "default": "d"}},
}


def _required(n: int) -> tuple[str, dict[str, Any]]:
    names = [f"p{i}" for i in range(n)]
    schema = {
        "type": "object",
        "properties": {name: {"type": "string"} for name in names},
        "required": names,
    }
    return "".join(f"{{?{name}}}a{{/{name}}}{{{name}|z}}" for name in names), schema


SHAPES: dict[str, Shape] = {
    "open then wrong close": lambda n: ("{?x}" * n + "{/y}" * n, XY),
    "nested n deep": lambda n: ("{?x}" * n + "{/x}" * n, XY),
    "sections on n required": _required,
    "standalone lines": lambda n: ("  {?x}  \n{x}\n{/x}\n" * n, XY),
    "pairs on one line": lambda n: ("   " + "{?x}{/x}" * n, XY),
    "interleaved, outer close": lambda n: ("{?x}{?y}" * n + "{/x}" * n, XY),
    "n unknown names": lambda n: ("".join(f"{{u{i}}}" for i in range(n)), XY),
    "n invalid placeholders": lambda n: ("".join(f"{{ u{i} }}" for i in range(n)), XY),
    "n fallbacks": lambda n: ("".join(f"{{y|f{i}}}" for i in range(n)), XY),
    "dotted path of n steps": lambda n: ("{" + ".".join(["a"] * n) + "}", XY),
}


def _cold(run: Callable[[], object]) -> float:
    tokens._tokens.cache_clear()
    sections.section_structure.cache_clear()
    sections.section_problems.cache_clear()
    started = time.perf_counter()
    run()
    return time.perf_counter() - started


def _time(template: str, schema: dict[str, Any]) -> tuple[float, float]:
    diagnosed = _cold(lambda: diagnose(template, schema))
    rendered = _cold(
        lambda: render_segments(template, {"x": "v"}, schema, tool_name="t", tool_description="d")
    )
    return diagnosed, rendered


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=int, default=10_000)
    parser.add_argument("--rounds", type=int, default=3)
    options = parser.parse_args()
    small, large = options.size, 4 * options.size
    print(f"diagnose / render_segments, cold caches, median of {options.rounds}; N = {small}")
    print(f"{'shape':26}{'diagnose N':>12}{'at 4N':>10}{'render N':>11}{'at 4N':>10}{'growth':>8}")
    flat = True
    for name, shape in SHAPES.items():
        built = {size: shape(size) for size in (small, large)}
        samples: dict[int, list[tuple[float, float]]] = {small: [], large: []}
        for _ in range(options.rounds):
            for size in (small, large):
                samples[size].append(_time(*built[size]))
        medians = {
            size: tuple(statistics.median(column) for column in zip(*values, strict=True))
            for size, values in samples.items()
        }
        growth = max(medians[large][i] / (4 * medians[small][i]) for i in range(2))
        flat = flat and growth < 1.5
        print(
            f"{name:26}{medians[small][0] * 1000:>10.1f}ms{medians[large][0] * 1000:>8.1f}ms"
            f"{medians[small][1] * 1000:>9.1f}ms{medians[large][1] * 1000:>8.1f}ms{growth:>8.2f}"
        )
    print("growth: cost per unit at 4N over cost per unit at N, the larger of the two (1 = linear)")
    return 0 if flat else 1


if __name__ == "__main__":
    sys.exit(main())
