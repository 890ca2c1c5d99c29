"""``metaagent test``'s caller options and the caller part of its report.

Options: ``--caller-model M`` (repeatable; default ``settings.callers.models``, else the first
model), ``--caller-prompt TEXT``
(the caller's system prompt), ``--decoys SETS`` (bundled sets, comma-separated, or ``none``),
``--decoy-agent FILE`` and ``--decoy-server 'COMMAND ARGS'`` (repeatable), ``--prefix`` (offer
our tools as ``--prefix`` serves them). The report ends with each caller model's rates and,
for a tool whose description changed since the last recorded run, the pick rate before and
after.
"""

from __future__ import annotations

import argparse
import shlex
from pathlib import Path

from rich.console import Console
from rich.markup import escape

from mcp_export.cli._report import error
from mcp_export.testing.callers.offer import COMMON_SETS
from mcp_export.testing.callers.rates import CallerRates, PickChange, caller_rates
from mcp_export.testing.callers.runner import CallerOptions, CallerResult
from mcp_export.testing.junit import xml_safe
from mcp_export.testing.run import MatrixResult
from schema_types.agent import McpServerConfig

__all__ = ["add_caller_options", "caller_options", "print_callers", "rates_line", "step_label"]


def add_caller_options(parser: argparse.ArgumentParser) -> None:
    """Add the caller case options to ``metaagent test``."""
    group = parser.add_argument_group("caller cases (cases with ask)")
    group.add_argument(
        "--caller-model",
        metavar="M",
        action="append",
        default=[],
        help="the client's model that picks the tool (provider:model); repeat for several "
        "(default: settings.callers.models, else the first --model)",
    )
    group.add_argument(
        "--caller-prompt",
        metavar="TEXT",
        help="the caller's system prompt (default: settings.callers.systemPrompt, else a "
        "short neutral assistant prompt)",
    )
    group.add_argument(
        "--decoys",
        metavar="SETS",
        help=f"bundled decoy tool sets, comma-separated ({', '.join(COMMON_SETS)}), or none "
        "(default: settings.callers.decoys, else all)",
    )
    group.add_argument(
        "--decoy-agent",
        metavar="FILE",
        action="append",
        default=[],
        type=Path,
        help="offer this agent file's tools as decoys too (repeatable)",
    )
    group.add_argument(
        "--decoy-server",
        metavar="COMMAND",
        action="append",
        default=[],
        help="start this MCP server (a stdio command line), list its tools and offer them as "
        "decoys; they are never called (repeatable)",
    )
    group.add_argument(
        "--prefix",
        action="store_true",
        help="offer our tools named <agent>__<tool>, as serve --prefix lists them",
    )


def caller_options(args: argparse.Namespace) -> CallerOptions | None:
    """The run's caller options, or None after saying on stderr what is wrong with them."""
    sets: tuple[str, ...] | None = None
    if args.decoys is not None:
        names = [n.strip() for n in args.decoys.split(",") if n.strip()]
        sets = () if names in ([], ["none"]) else tuple(names)
        unknown = [n for n in sets if n not in COMMON_SETS]
        if unknown:
            error(
                "test",
                f"--decoys: no bundled set is named {', '.join(map(repr, unknown))} "
                f"(the sets: {', '.join(COMMON_SETS)}, or none)",
            )
            return None
    servers: dict[str, McpServerConfig] = {}
    for line in args.decoy_server:
        try:
            words = shlex.split(line)
        except ValueError as exc:
            error("test", f"--decoy-server {line!r}: {exc}")
            return None
        if not words:
            error("test", "--decoy-server needs a command line, e.g. 'mcp-server-time'")
            return None
        name = Path(words[0]).name
        if name in servers:
            name = f"{name}-{len(servers) + 1}"
        servers[name] = McpServerConfig(command=words[0], args=words[1:])
    return CallerOptions(
        models=tuple(dict.fromkeys(args.caller_model)),
        system_prompt=args.caller_prompt,
        decoy_sets=sets,
        decoy_agents=tuple(p.resolve() for p in args.decoy_agent),
        decoy_servers=servers,
        prefix=args.prefix,
    )


def step_label(result: CallerResult) -> str:
    """``[step] `` for a failed caller run's failure lines (empty when it passed)."""
    return f"[{result.step}] " if result.step is not None else ""


def rates_line(rates: CallerRates) -> str:
    """One caller model's rates in words: ``picked right 3/4, wrong tool 1/4 (send_email ×1)…``."""
    n = rates.runs
    left = f"{rates.left_recording} replayed run(s) left the recording, not counted (re-record)"
    if not n:
        return left
    wrong = f"wrong tool {rates.wrong_tool}/{n}"
    if rates.wrong_tools:
        wrong += " (" + ", ".join(f"{k} ×{v}" for k, v in rates.wrong_tools.items()) + ")"
    parts = [
        f"picked right {rates.picked}/{n}",
        wrong,
        f"no call {rates.no_call}/{n}",
        f"arguments valid {rates.arguments_valid}/{n}",
        f"arguments as expected {rates.arguments_expected}/{n}",
        f"answer passed {rates.answer_passed}/{n}",
    ]
    if rates.caller_failed:
        parts.append(f"caller failed {rates.caller_failed}/{n}")
    if rates.left_recording:
        parts.append(left)
    return ", ".join(parts)


def print_callers(console: Console, matrix: MatrixResult, moved: list[PickChange] | None) -> None:
    """The caller models' rates, then the pick rates a description edit moved."""
    if not matrix.caller_cases:
        return
    for rates in caller_rates(matrix.results, matrix.caller_models):
        if rates.runs or rates.left_recording:
            console.print(f"caller {_shown(rates.model)}: {_shown(rates_line(rates))}")
    for change in moved or []:
        (k0, n0), (k1, n1) = change.before, change.after
        console.print(
            f"description of {_shown(change.tool)} changed since the last run: "
            f"picked right {k0}/{n0} before, {k1}/{n1} now "
            f"({_shown(change.case)}, caller {_shown(change.model)})"
        )


def _shown(text: str) -> str:
    return escape(xml_safe(text))
