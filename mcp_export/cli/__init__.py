"""``metaagent`` subcommands that need no GUI (``python -m mcp_export`` runs them too).

Each subcommand lives in its own module exposing ``register(subparsers)``; the module sets
``func=`` on its parser to a callable ``(args) -> int`` (the exit code). Dispatch imports only the
module of the command being run (all of them only for the top-level help or an unknown command),
so each command module imports what its command needs at its top and ``metaagent validate`` never
loads the mcp SDK or a provider.

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
    "_test",
    "_versions",
    "_grow",
    "_improve",
    "_hints",
    "_chat",
    "_serve",
    "_export",
    "_verify",
    "_schema",
    "_draft",
)


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """The argument parser with ``command``'s subcommand registered, or every one when None."""
    parser = argparse.ArgumentParser(
        prog="metaagent",
        description="Meta Agent Studio: author Tools agents and serve them over MCP.",
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name in COMMANDS if command is None else (f"_{command}",):
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
    arguments = list(sys.argv[1:] if argv is None else argv)
    command = arguments[0] if arguments and f"_{arguments[0]}" in COMMANDS else None
    parser = build_parser(command)
    args = parser.parse_args(arguments)
    func = getattr(args, "func", None)
    if func is None:
        parser.print_help(sys.stderr)
        return 2
    return cast(Callable[[argparse.Namespace], int], func)(args)
