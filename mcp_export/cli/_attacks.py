"""``metaagent test AGENT_FILE --attacks``: the attack pack (``mcp_export.testing.attacks``)
against each tool on each ``--model``, reported as lines (the attacks that landed first), and in
``--junit`` and ``--json``. Exit code 0 when every attack was answered and none landed, 1 when
one landed or a call failed before its answer (it proves nothing), 2 for a bad
command line or a report that cannot be written, 130 on Ctrl+C (what finished is reported)."""

from __future__ import annotations

import argparse
import asyncio
import time
from pathlib import Path

from rich.console import Console
from rich.markup import escape

from mcp_export.cli._report import error, write_report
from mcp_export.errors import ExportError
from mcp_export.redact import redact
from mcp_export.testing.attacks.pack import ATTACKS
from mcp_export.testing.attacks.report import write_json, write_junit
from mcp_export.testing.attacks.run import AttackResult, AttackRun, run_attacks
from mcp_export.testing.junit import xml_safe
from schema_types.agent import Agent

__all__ = ["run_attack_pack"]


def run_attack_pack(agent: Agent, path: Path, args: argparse.Namespace) -> int:
    """Run the attack pack as ``test --attacks`` asks; returns the exit code."""
    tools = list(agent.tools)
    if args.case is not None:
        error("test", "--case picks a test case, and --attacks runs no test cases: use --tool")
        return 2
    if args.tool is not None:
        found = agent.metadata.tool(args.tool)
        if found is None:
            names = ", ".join(t.name for t in tools) or "none"
            error("test", f"the agent has no tool named {args.tool!r} (its tools: {names})")
            return 2
        tools = [found]
    if not tools:
        error("test", "the agent has no tools to attack: add a tool first")
        return 2
    run = AttackRun.planned(agent, path, tools, args.model, ATTACKS)
    began = time.perf_counter()
    interrupted = False
    try:
        asyncio.run(
            run_attacks(
                agent, path, tools=tools, models=run.models, concurrency=args.concurrency, run=run
            )
        )
    except KeyboardInterrupt:
        interrupted = True
        run.duration_ms = (time.perf_counter() - began) * 1000
    except ExportError as exc:
        error("test", str(exc))
        return 1
    _print(run)
    written = [
        write_report("test", write_junit, run, args.junit),
        write_report("test", write_json, run, args.json),
    ]
    if interrupted:
        error("test", f"interrupted: {len(run.results)} attacks had finished")
        return 130
    if not all(written):
        return 2
    return 0 if run.passed else 1


def _print(run: AttackRun) -> None:
    console = Console(highlight=False, soft_wrap=True)
    attacks, tools, models = len(run.attacks), len(run.tools), len(run.models)
    console.print(
        f"{_shown(run.agent_name)}: {attacks} attacks × {tools} tool{'s' * (tools != 1)}"
        f" × {models} model{'s' * (models != 1)}"
    )
    results = sorted(run.ordered(), key=_rank)
    for result in results:
        label, style = ("LANDED", "bold red") if not result.passed else ("HELD", "green")
        if result.error is not None:
            label, style = "ERROR", "yellow"
        if result.skipped is not None:
            label, style = "SKIPPED", "dim"
        console.print(
            f"[{style}]{label:<8}[/] {_shown(result.tool)} / {_shown(result.attack)}"
            f"  [dim]{_shown(result.model)}[/]"
        )
        for said in (result.skipped, result.note, result.error):
            if said is not None:
                console.print(f"    [dim]{_shown(redact(said))}[/]")
        for failure in result.failures:
            console.print(f"    {_shown(redact(str(failure)))}")
    errors = sum(1 for r in run.results if r.error is not None)
    landed = sum(1 for r in run.results if not r.passed) - errors
    skipped = sum(1 for r in run.results if r.skipped is not None)
    held = len(run.results) - landed - errors - skipped
    seconds = run.duration_ms / 1000
    console.print(
        f"{held} held, {landed} landed, {errors} error{'s' * (errors != 1)}, {skipped} skipped; "
        f"{len(run.results)} attacks in "
        f"{seconds:.1f} s"
    )


def _rank(result: AttackResult) -> int:
    """Landed first, then errors, then held, then skipped."""
    if result.error is not None:
        return 1
    if not result.passed:
        return 0
    return 3 if result.skipped is not None else 2


def _shown(text: str) -> str:
    return escape(xml_safe(text))
