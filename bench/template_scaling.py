"""Hostile templates and schemas: ``metaagent validate`` and ``render`` as they grow.

Run: ``.venv/bin/python bench/template_scaling.py [--rounds 5] [--tags 10000 20000 50000]``.
Prints a table; exits 0 (1 when growth is not linear). Not a test: the figures depend on the
machine.

The hostile prompt: ``{?x}`` N times then ``{/y}`` N times (8 bytes a pair, 80 to 400 KB):
2N section tags of which none pairs, two distinct problems repeated N times each. Each sample
spawns the ``metaagent`` console script and times it from spawn to exit: ``validate`` on the file,
``render`` of the tool with one argument. Beside them the agent whose test case expects a
``jsonSchema`` of 50 000 ``patternProperties`` (2 MB), the travel-desk example as the plain
agent, and ``python -c pass`` for what any Python command pays before it starts. Every command is
run once per round, round after round, so machine load hits all alike; medians are reported.

Linear: what each pair adds (the median minus the plain agent's, over N) must not grow with N by
more than half from the smallest N to the largest; a quadratic pairing doubles it at each
doubling of N.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "bench"))

from _proc import wall  # noqa: E402

from tests.fakes.hostile_agent import plan_tool, write_json_agent  # noqa: E402

METAAGENT = Path(sys.executable).with_name("metaagent")
TRAVEL = REPO / "resources" / "examples" / "travel-desk.agent.yaml"
PATTERNS = 50_000


def _sections(folder: Path, pairs: int) -> Path:
    prompt = "{?x}" * pairs + "{/y}" * pairs + "\nTo {destination}."
    return write_json_agent(folder / f"sections-{pairs}.agent.json", plan_tool(prompt))


def _patterns(folder: Path) -> Path:
    schema = {
        "type": "object",
        "patternProperties": {f"^p{i}_[a-z]+$": {"type": "string"} for i in range(PATTERNS)},
    }
    tool = {
        "name": "plan",
        "description": "Plans a trip.",
        "parameters": {"type": "object", "properties": {"destination": {"type": "string"}}},
        "prompt": "To {destination}.",
        "tests": [
            {
                "name": "shape",
                "arguments": {"destination": "Oslo"},
                "expect": {"jsonSchema": schema},
            }
        ],
    }
    return write_json_agent(folder / "patterns.agent.json", tool)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--tags", type=int, nargs="+", default=[10_000, 20_000, 50_000])
    args = parser.parse_args()
    cli = [str(METAAGENT)] if METAAGENT.exists() else [sys.executable, "-m", "mcp_export"]
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        commands: dict[str, list[str]] = {"python -c pass": [sys.executable, "-c", "pass"]}
        commands["validate plain"] = [*cli, "validate", str(TRAVEL)]
        sizes: dict[str, int] = {}
        for pairs in args.tags:
            path = _sections(folder, pairs)
            sizes[f"validate {pairs}"] = sizes[f"render {pairs}"] = path.stat().st_size
            commands[f"validate {pairs}"] = [*cli, "validate", str(path)]
            commands[f"render {pairs}"] = [
                *cli,
                "render",
                str(path),
                "plan",
                "--arg",
                "destination=Oslo",
            ]
        patterns = _patterns(folder)
        sizes["validate patterns"] = patterns.stat().st_size
        commands["validate patterns"] = [*cli, "validate", str(patterns)]
        for command in commands.values():  # warm the file cache and the .pyc files
            wall(command, 600)
        times: dict[str, list[float]] = {name: [] for name in commands}
        for _ in range(args.rounds):
            for name, command in commands.items():
                times[name].append(wall(command, 600))
    medians = {name: statistics.median(values) for name, values in times.items()}
    print(f"spawn → exit, {args.rounds} rounds interleaved; N = section-tag pairs")
    print(f"{'':22}{'file':>9}{'median':>10}{'min':>9}{'max':>9}{'per pair':>10}")
    base = medians["validate plain"]
    per_pair: dict[str, dict[int, float]] = {"validate": {}, "render": {}}
    for name, values in times.items():
        size = f"{sizes[name] / 1024:.0f} KB" if name in sizes else ""
        extra = ""
        verb, _, count = name.partition(" ")
        if count.isdigit():
            cost = (medians[name] - base) / int(count)
            per_pair[verb][int(count)] = cost
            extra = f"{cost * 1e6:.1f} µs"
        elif name == "validate patterns":
            extra = f"{(medians[name] - base) / PATTERNS * 1e6:.1f} µs"
        print(
            f"{name:22}{size:>9}{medians[name] * 1000:>8.0f}ms{min(values) * 1000:>7.0f}ms"
            f"{max(values) * 1000:>7.0f}ms{extra:>10}"
        )
    print("(per pair: the median minus 'validate plain', over N; for patterns: over 50 000)")
    linear = True
    for verb, costs in per_pair.items():
        if len(costs) < 2:
            continue
        small, large = costs[min(costs)], costs[max(costs)]
        growth = large / small if small > 0 else float("inf")
        verdict = "linear" if growth < 1.5 else "NOT linear"
        linear = linear and growth < 1.5
        print(
            f"{verb}: per-pair cost at N={max(costs)} / at N={min(costs)}"
            f" = {growth:.2f} ({verdict})"
        )
    return 0 if linear else 1


if __name__ == "__main__":
    sys.exit(main())
