"""``metaagent test AGENT_FILE``: run the agent's test cases, on one or more models, as CI would.

Every case is a ``tools/call`` of the agent's own MCP server (in-process), checked against its
expectations (``mcp_export.testing``). The report goes to stdout, regressions first (each cell is
compared with its last earlier run in the history database), with each failed expectation named;
a progress bar shows on stderr while a long run goes on in a terminal. Each cell says what a
call cost and what 100 would, from the price table (Preferences' ``prices.yaml`` and the agent
file's ``settings.prices``), or that it is unknown. ``--junit`` writes JUnit
XML, ``--json`` the whole result (each written even when the other cannot be). Exit code 0 only
when every case passes, 1 when one fails, 2 for a bad command line or agent file, no case to run,
or a report that cannot be written; Ctrl+C stops the run at once and reports what finished before
it, with exit code 130.

``--record`` keeps each case's exchange in a fixture beside the agent file (a caller case's per
caller model); ``--replay`` runs the cases from their fixtures with no model, no tool server and
no decoy server (``testing.replay``).

Caller cases (``ask``) run once per ``--caller-model`` (default: ``settings.callers.models``,
else the first model), with decoys
from ``settings.callers`` plus ``--decoy-agent``, ``--decoy-server`` and ``--decoys``; each cell
says the step that failed, and the caller models' rates follow the cells (``callers_report``).
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING

from rich.console import Console
from rich.markup import escape
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from mcp_export.cli._callers import (
    add_caller_options,
    caller_options,
    print_callers,
    step_label,
)
from mcp_export.cli._report import error, load_agent_or_report, write_report
from mcp_export.costs.prices import PricesError, price_table
from mcp_export.errors import ExportError, HistoryError
from mcp_export.history.store import HistoryStore
from mcp_export.redact import redact
from mcp_export.testing.callers.history import description_changes
from mcp_export.testing.callers.offer import DecoyError
from mcp_export.testing.callers.rates import PickChange
from mcp_export.testing.callers.runner import CallerOptions, CallerResult
from mcp_export.testing.cost import cell_cost
from mcp_export.testing.junit import xml_safe
from mcp_export.testing.record import Cell, Change, cell_status, compare, record_matrix
from mcp_export.testing.report import write_json, write_junit
from mcp_export.testing.run import (
    CaseResult,
    MatrixResult,
    NoCases,
    plan_matrix,
    run_matrix,
    select_cases,
)

if TYPE_CHECKING:
    from schema_types.agent import Agent, ToolDefinition
    from schema_types.cases import TestCase

__all__ = ["register", "run"]

_LABELS: dict[str, tuple[str, str]] = {
    "regressed": ("REGRESSED", "bold red"),
    "fail": ("FAIL", "red"),
    "fixed": ("FIXED", "green"),
    "pass": ("PASS", "green"),
}


def _positive(text: str) -> int:
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be 1 or more, got {value}")
    return value


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the ``test`` subcommand."""
    parser = subparsers.add_parser(
        "test",
        help="run the agent's test cases (JUnit XML for CI)",
        description=(
            "Run the test cases written under each tool's tests: as served MCP calls, on the "
            "agent's model or on each --model, and check every expectation. Exit 0 only when "
            "every case passes."
        ),
    )
    parser.add_argument("agent_file", metavar="AGENT_FILE", help="the agent file")
    parser.add_argument("--tool", metavar="T", help="only this tool's cases")
    parser.add_argument("--case", metavar="NAME", help="only the case of this name")
    parser.add_argument(
        "--model",
        metavar="M",
        action="append",
        default=[],
        help="run on this model (provider:model from the agent's providers); repeat for a matrix",
    )
    parser.add_argument("--judge-model", metavar="M", help="the model for judge: expectations")
    parser.add_argument("--repeat", metavar="N", type=_positive, default=1, help="runs per case")
    parser.add_argument(
        "--concurrency", metavar="K", type=_positive, default=4, help="calls at once (default 4)"
    )
    parser.add_argument("--junit", metavar="FILE", type=Path, help="write JUnit XML here")
    parser.add_argument("--json", metavar="FILE", type=Path, help="write the results as JSON")
    parser.add_argument(
        "--no-history", action="store_true", help="do not record the run in the history database"
    )
    recording = parser.add_mutually_exclusive_group()
    recording.add_argument(
        "--record",
        action="store_true",
        help=(
            "keep each case's exchange (the model's answers, each inner tool's result) in "
            "fixtures beside the agent file (AGENT_FILE.replay/)"
        ),
    )
    recording.add_argument(
        "--replay",
        action="store_true",
        help=(
            "answer each case from its fixture: no model, no tool server; a request that differs "
            "from the recorded one fails the case, saying where"
        ),
    )
    parser.add_argument(
        "--attacks",
        action="store_true",
        help=(
            "run the built-in attack pack against each tool instead of the test cases "
            "(prompt leaks, injected instructions, refused tools, environment secrets)"
        ),
    )
    parser.add_argument(
        "--use-cache",
        action="store_true",
        help="answer tools that declare a cache from it, as served calls are (default: every "
        "case asks the model)",
    )
    add_caller_options(parser)
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Run ``test`` with parsed arguments; returns the exit code."""
    path = Path(args.agent_file)
    agent = load_agent_or_report("test", path)
    if agent is None:
        return 2
    if args.attacks:
        if args.record or args.replay:
            error(
                "test",
                "--attacks runs live: it cannot be recorded or replayed (drop --record/--replay)",
            )
            return 2
        from mcp_export.cli._attacks import run_attack_pack

        return run_attack_pack(agent, path.resolve(), args)
    try:
        cases = select_cases(agent, tool=args.tool, case=args.case)
    except NoCases as exc:
        error("test", str(exc))
        return 2
    models = list(dict.fromkeys(args.model)) or [agent.settings.model or ""]
    callers = caller_options(args)
    if callers is None:
        return 2
    try:
        prices = price_table(agent)
    except PricesError as exc:
        error("test", str(exc))
        return 2
    history: HistoryStore | None = None
    if not args.no_history:
        try:
            history = HistoryStore()
        except HistoryError as exc:
            error("history", f"{exc}; going on without recording")
    matrix = plan_matrix(
        agent,
        path.resolve(),
        cases,
        models=models,
        repeat=args.repeat,
        caller_models=callers.models,
        prices=prices,
    )
    began = time.perf_counter()
    interrupted = False
    try:
        asyncio.run(_run(agent, path.resolve(), cases, matrix, args, history, callers))
    except KeyboardInterrupt:
        # Ctrl+C cancels the calls in flight; what finished before it is reported as usual.
        interrupted = True
        matrix.duration_ms = (time.perf_counter() - began) * 1000
    except DecoyError as exc:
        error("test", str(exc))
        if history is not None:
            history.close()
        return 2
    except ExportError as exc:
        error("test", str(exc))
        if history is not None:
            history.close()
        return 1
    changes: dict[Cell, Change] | None = None
    moved: list[PickChange] | None = None
    if history is not None:
        try:
            record_matrix(matrix, history)
            changes = compare(matrix, history)
            moved = description_changes(matrix, history)
        except HistoryError as exc:
            error("history", f"{exc}; the run is not recorded")
        finally:
            history.close()
    _print_report(matrix, changes, moved)
    if interrupted:
        planned = matrix.planned
        error("test", f"interrupted: {len(matrix.results)} of {planned} calls had finished")
    written = [
        write_report("test", write_junit, matrix, args.junit),
        write_report("test", lambda m, p: write_json(m, p, changes, moved), matrix, args.json),
    ]
    if interrupted:
        return 130
    if not all(written):
        return 2
    return 0 if matrix.passed else 1


async def _run(
    agent: Agent,
    path: Path,
    cases: list[tuple[ToolDefinition, TestCase]],
    matrix: MatrixResult,
    args: argparse.Namespace,
    history: HistoryStore | None,
    callers: CallerOptions,
) -> MatrixResult:
    total = matrix.planned
    progress = Progress(
        TextColumn("[progress.description]{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        console=Console(file=sys.stderr),
        transient=True,
        disable=not sys.stderr.isatty() or total < 2,
    )
    with progress:
        task = progress.add_task(f"Testing {agent.metadata.name}", total=total)

        def advance(result: CaseResult) -> None:
            progress.advance(task)

        return await run_matrix(
            agent,
            path,
            cases,
            models=matrix.models,
            repeat=matrix.repeat,
            concurrency=args.concurrency,
            judge_model=args.judge_model,
            history=history,
            on_result=advance,
            matrix=matrix,
            callers=callers,
            mode="record" if args.record else "replay" if args.replay else None,
            read_cache=args.use_cache,
        )


def _print_report(
    matrix: MatrixResult, changes: dict[Cell, Change] | None, moved: list[PickChange] | None
) -> None:
    console = Console(highlight=False, soft_wrap=True)
    passed = cell_status(matrix)
    # Cells that ran (an interrupted run has not run them all).
    order = [
        (tool, case, model)
        for tool, case in matrix.cases
        for model in matrix.columns(tool, case)
        if (tool, case, model) in passed
    ]
    cells = sorted(order, key=lambda key: _rank(passed[key], _change(changes, key)))
    runs = len(matrix.results)
    console.print(
        f"{_shown(matrix.agent_name)}: {len(matrix.cases)} case{'s' * (len(matrix.cases) != 1)}"
        f" × {len(matrix.models)} model{'s' * (len(matrix.models) != 1)}"
        + (f" × {matrix.repeat} repeats" if matrix.repeat > 1 else "")
        + (
            f" ({len(matrix.caller_cases)} caller case{'s' * (len(matrix.caller_cases) != 1)}"
            f" × {len(matrix.caller_models)} caller model"
            f"{'s' * (len(matrix.caller_models) != 1)})"
            if matrix.caller_cases
            else ""
        )
    )
    for key in cells:
        tool, case, model = key
        results = matrix.cell(tool, case, model)
        change = _change(changes, key)
        status = "pass" if passed[key] else "fail"
        if change in ("regressed", "fixed"):
            status = change
        label, style = _LABELS[status]
        rate = f"{sum(r.passed for r in results)}/{len(results)}"
        slowest = _duration(max(r.outcome.duration_ms for r in results))
        tokens = _tokens(results)
        caller = (tool, case) in matrix.caller_cases
        line = (
            f"[{style}]{label:<9}[/] {_shown(tool)} / {_shown(case)}  [dim]"
            f"{'caller ' if caller else ''}{_shown(model)}"
            f"  {rate}  {slowest}{tokens}  {_shown(_cost(matrix, results))}[/]"
        )
        console.print(line)
        seen: set[str] = set()
        for result in results:
            step = step_label(result) if isinstance(result, CallerResult) else ""
            for failure in result.failures:
                text = redact(f"{step}{failure}")
                if text not in seen:
                    seen.add(text)
                    console.print(f"    {_shown(text)}")
    failed = sum(1 for ok in passed.values() if not ok)
    regressed = sum(1 for k in passed if _change(changes, k) == "regressed")
    summary = f"{len(passed) - failed} passed, {failed} failed"
    if regressed:
        summary += f" ({regressed} regressed)"
    console.print(
        f"{summary}; {runs} call{'s' * (runs != 1)} in {_duration(matrix.duration_ms)}; "
        f"{_shown(_cost(matrix, matrix.results, total=True))}"
    )
    print_callers(console, matrix, moved)


def _shown(text: str) -> str:
    """``text`` for the terminal: markup escaped, control characters (a colour code's ESC) and
    lone surrogates written as escapes, as in the JUnit report."""
    return escape(xml_safe(text))


def _duration(milliseconds: float) -> str:
    return f"{milliseconds:.0f} ms" if milliseconds < 1000 else f"{milliseconds / 1000:.1f} s"


def _rank(passed: bool, change: Change | None) -> int:
    """Regressions first, then the other failures, then the passes."""
    return 0 if change == "regressed" else 1 if not passed else 2


def _change(changes: dict[Cell, Change] | None, key: Cell) -> Change | None:
    return None if changes is None else changes.get(key)


def _cost(matrix: MatrixResult, results: list[CaseResult], *, total: bool = False) -> str:
    """``$0.0012 a call, $0.12 per 100`` (``≥`` where a part is unknown), or why it is unknown;
    with ``total``, the whole run's cost first."""
    cost = cell_cost(matrix.prices, results)
    if cost.per_call.usd is None:
        return f"cost unknown: {cost.total.why}"
    spent = f"cost {cost.total.text()}, " if total else ""
    return f"{spent}{cost.per_call.text()} a call, {cost.per_100.text()} per 100 calls"


def _tokens(results: list[CaseResult]) -> str:
    """The tokens a cell's runs spent: ``≥ N`` when a model request did not report its count
    (never an undercount shown as exact); "" when a run's count is unknown altogether."""
    counts = [(r.outcome.input_tokens, r.outcome.output_tokens) for r in results]
    if any(i is None or o is None for i, o in counts):
        return ""
    spent = sum(i or 0 for i, _ in counts) + sum(o or 0 for _, o in counts)
    at_least = "≥ " if any(r.outcome.tokens_partial for r in results) else ""
    return f"  {at_least}{spent} tokens"
