"""``metaagent test``'s reports and its judge-verdict parsing at scale: wall time per report size.

Run: ``.venv/bin/python bench/test_reports.py [--rounds 5] [--cases 500 2000 10000]``.
Prints tables; exits 0 (1 when a goal is missed). Not a test: the figures depend on the machine.

Reports: a matrix result of N cases on one model (answers of ~300 characters, every fifth case
failed with two expectations named) is written as JUnit XML (``write_junit``) and as JSON
(``write_json``) to a temporary folder. Beside them, the baseline in the same rounds: the JUnit
writer built on junitparser (``add_testcase`` per case, then ``write(pretty=True)``), kept here
as it was, timed only at the sizes it finishes in reasonable time (its cost grows with N²).
Sizes and writers are interleaved round by round (A B A B …) so machine load hits all alike;
medians are reported, with the spread of the baseline/new ratio over the rounds.

Judge replies: ``parse_verdict`` on 1 MB of ``{`` (the worst case of a search for a JSON object),
on a realistic reply (prose, then a fenced verdict), on 1 MB of prose ending in a verdict, and the
baseline (``re.search(r"\\{.*\\}", …, re.DOTALL)``) on 20 000 ``{``.

Goals: 10 000 cases' JUnit and JSON reports in under 5 s together; a 1 MB judge reply parsed in
under 50 ms.
"""

from __future__ import annotations

import argparse
import json
import re
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

import junitparser  # noqa: E402

from mcp_export.testing.expect import CallOutcome, Failure  # noqa: E402
from mcp_export.testing.judge import parse_verdict  # noqa: E402
from mcp_export.testing.report import write_json, write_junit  # noqa: E402
from mcp_export.testing.run import CaseResult, MatrixResult  # noqa: E402

GOAL_REPORT_CASES = 10_000
GOAL_REPORT_S = 5.0
GOAL_PARSE_MS = 50.0
BASELINE_MAX_CASES = 2000
MODEL = "openai:fake-model"


def _matrix(cases: int) -> MatrixResult:
    answer = "Booked flight AF123 from Paris to Oslo on 3 March, seat 14A. " * 5
    results = []
    for index in range(cases):
        failed = index % 5 == 0
        failures = (
            (
                Failure("contains[0]", f'"KL9" is not in the answer "{answer[:60]}…"'),
                Failure("maxTurns", "4 model requests, at most 3 expected"),
            )
            if failed
            else ()
        )
        outcome = CallOutcome(
            answer, False, 850.0 + index % 100, input_tokens=320, output_tokens=60
        )
        results.append(
            CaseResult("book_flight", f"case {index}", MODEL, 1, not failed, failures, outcome)
        )
    return MatrixResult(
        id="bench",
        agent_name="Travel Desk",
        agent_path="/tmp/desk.agent.yaml",
        models=[MODEL],
        cases=[("book_flight", f"case {index}") for index in range(cases)],
        repeat=1,
        results=results,
        duration_ms=1000.0,
    )


def _baseline_junit(matrix: MatrixResult, path: Path) -> None:
    """The junitparser writer of the reports before the streaming one (one model, no repeats)."""
    document = junitparser.JUnitXml(name=f"{matrix.agent_name} test cases")
    for model in matrix.models:
        suite = junitparser.TestSuite(model)
        for result in matrix.results:
            case = junitparser.TestCase(
                result.case,
                f"Travel_Desk.{result.tool}",
                round(result.outcome.duration_ms / 1000, 3),
            )
            if result.failures:
                first = result.failures[0]
                mark = junitparser.Failure(str(first), first.expectation)
                mark.text = "\n".join(
                    [*(str(f) for f in result.failures), "", "answer:", result.outcome.text]
                )
                case.result = [mark]
            case.system_out = result.outcome.text
            suite.add_testcase(case)
        document.add_testsuite(suite)
    document.update_statistics()  # type: ignore[no-untyped-call]
    document.write(str(path), pretty=True)


def _timed(action: Callable[[], object]) -> float:
    began = time.perf_counter()
    action()
    return time.perf_counter() - began


def _reports(rounds: int, sizes: list[int], folder: Path) -> bool:
    matrices = {size: _matrix(size) for size in sizes}
    samples: dict[tuple[str, int], list[float]] = {}
    for _ in range(rounds):
        for size in sizes:
            matrix = matrices[size]
            writers: list[tuple[str, Callable[[], object]]] = [
                ("junit", partial(write_junit, matrix, folder / "a.xml")),
                ("json", partial(write_json, matrix, folder / "a.json")),
            ]
            if size <= BASELINE_MAX_CASES:
                writers.append(
                    ("junit baseline", partial(_baseline_junit, matrix, folder / "b.xml"))
                )
            for name, write in writers:
                samples.setdefault((name, size), []).append(_timed(write))
    print(f"{'cases':>7} {'writer':<15} {'median s':>9} {'min s':>8}")
    for (name, size), values in sorted(samples.items(), key=lambda item: (item[0][1], item[0][0])):
        print(f"{size:>7} {name:<15} {statistics.median(values):>9.3f} {min(values):>8.3f}")
    for size in sizes:
        if size > BASELINE_MAX_CASES:
            continue
        ratios = [
            b / n
            for b, n in zip(
                samples[("junit baseline", size)], samples[("junit", size)], strict=True
            )
        ]
        print(
            f"{size:>7} JUnit baseline/new: median {statistics.median(ratios):.1f}x "
            f"(range {min(ratios):.1f}–{max(ratios):.1f}x over {len(ratios)} rounds)"
        )
    if GOAL_REPORT_CASES not in sizes:
        return True
    total = statistics.median(samples[("junit", GOAL_REPORT_CASES)]) + statistics.median(
        samples[("json", GOAL_REPORT_CASES)]
    )
    met = total < GOAL_REPORT_S
    print(f"goal: {GOAL_REPORT_CASES} cases' reports in {total:.2f} s (< {GOAL_REPORT_S} s): {met}")
    return met


def _baseline_parse(reply: str) -> object:
    found = re.search(r"\{.*\}", reply, re.DOTALL)
    if found is None:
        return None
    try:
        return json.loads(found.group(0))
    except (json.JSONDecodeError, RecursionError):
        return None


def _parsing(rounds: int) -> bool:
    megabyte = 1_000_000
    realistic = (
        "I read the answer against the criterion. It names the flight {AF123} and one seat.\n"
        '```json\n{"pass": true, "reason": "It recommends exactly one flight."}\n```'
    )
    replies = {
        "1 MB of {": "{" * megabyte,
        "realistic": realistic,
        "1 MB prose + verdict": "It depends. " * (megabyte // 12) + realistic,
    }
    baseline = {"20 000 { (baseline)": "{" * 20_000}
    samples: dict[str, list[float]] = {}
    for _ in range(rounds):
        for name, reply in replies.items():
            samples.setdefault(name, []).append(_timed(partial(parse_verdict, reply)))
        for name, reply in baseline.items():
            samples.setdefault(name, []).append(_timed(partial(_baseline_parse, reply)))
    print(f"\n{'judge reply':<24} {'median ms':>10} {'max ms':>8}")
    for name, values in samples.items():
        print(f"{name:<24} {statistics.median(values) * 1000:>10.2f} {max(values) * 1000:>8.2f}")
    worst = max(statistics.median(samples[name]) for name in replies) * 1000
    met = worst < GOAL_PARSE_MS
    print(f"goal: a 1 MB judge reply parsed in {worst:.2f} ms (< {GOAL_PARSE_MS:g} ms): {met}")
    return met


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--cases", type=int, nargs="+", default=[500, 2000, 10_000])
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        reports = _reports(args.rounds, args.cases, Path(folder))
    parsing = _parsing(args.rounds)
    return 0 if reports and parsing else 1


if __name__ == "__main__":
    raise SystemExit(main())
