"""``metaagent`` subcommands that need no GUI (``python -m mcp_export`` runs them too).

Each subcommand lives in its own module exposing ``register(subparsers)``; the module sets
``func=`` on its parser to a callable ``(args) -> int`` (the exit code). Modules are imported only
when listed here, and heavy imports (the mcp SDK, provider SDKs) happen inside the command
functions so ``metaagent validate`` stays instant.

Output rule: results go to stdout, diagnostics and logs to stderr (for ``serve``, stdout is the
MCP protocol). Log records reach stderr through a handler with a ``RedactingFilter``: a logged
error may quote what a provider or a tool server said, and that may repeat a key.
"""

from __future__ import annotations

import argparse
import importlib
import logging
import sys
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, cast

from mcp_export.redact import RedactingFilter

__all__ = ["COMMANDS", "build_parser", "main"]

if TYPE_CHECKING:
    _Subparsers = argparse._SubParsersAction[argparse.ArgumentParser]


# name of each subcommand module inside this package, in help order.
COMMANDS: tuple[str, ...] = (
    "_validate",
    "_render",
    "_call",
    "_chat",
    "_serve",
    "_export",
    "_verify",
)


def build_parser() -> argparse.ArgumentParser:
    """The argument parser with every available subcommand registered."""
    parser = argparse.ArgumentParser(
        prog="metaagent",
        description="Meta Agent Studio: author Tools agents and serve them over MCP.",
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name in COMMANDS:
        try:
            module = importlib.import_module(f"{__name__}.{name}")
        except ModuleNotFoundError as exc:
            if exc.name == f"{__name__}.{name}":
                continue  # not written yet
            raise
        register = cast("Callable[[_Subparsers], None]", module.register)
        register(sub)
    return parser


def _log_to_stderr() -> None:
    """Warnings and errors to stderr, redacted, as Python's last-resort handler would print them
    unredacted (a command that sets up its own logging replaces this handler)."""
    root = logging.getLogger()
    if root.handlers:
        return
    handler = logging.StreamHandler(sys.stderr)
    handler.setLevel(logging.WARNING)
    handler.addFilter(RedactingFilter())
    root.addHandler(handler)


def main(argv: Sequence[str] | None = None) -> int:
    """Run one subcommand; returns its exit code (2 for usage errors)."""
    _log_to_stderr()
    parser = build_parser()
    args = parser.parse_args(argv)
    func = getattr(args, "func", None)
    if func is None:
        parser.print_help(sys.stderr)
        return 2
    return cast(Callable[[argparse.Namespace], int], func)(args)
