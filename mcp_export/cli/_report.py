"""How a command says what went wrong, and loads the agent file it was given.

Messages go to stderr as ``metaagent COMMAND: MESSAGE``, redacted: a message may quote what a
provider or a tool server said, and that may repeat a key.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path
from typing import TextIO, TypeVar

from mcp_export.redact import redact
from schema_types.agent import Agent
from schema_types.errors import SchemaError
from schema_types.files.agent_file import load_agent

__all__ = ["can_show", "error", "load_agent_or_report", "write_report"]

_R = TypeVar("_R")


def error(command: str, message: str) -> None:
    """Say ``metaagent COMMAND: MESSAGE`` on stderr (redacted)."""
    sys.stderr.write(redact(f"metaagent {command}: {message}\n"))
    sys.stderr.flush()


def load_agent_or_report(command: str, path: Path) -> Agent | None:
    """The agent in ``path``, or None after saying on stderr why it cannot be loaded."""
    try:
        return load_agent(path)
    except SchemaError as exc:
        error(command, str(exc))
    except OSError as exc:
        error(command, f"cannot read {path}: {exc.strerror or exc}")
    return None


def can_show(stream: TextIO, text: str) -> bool:
    """Whether ``stream``'s encoding can write ``text`` (a console may not show ✔, → or …)."""
    try:
        text.encode(getattr(stream, "encoding", None) or "ascii")
    except (UnicodeEncodeError, LookupError):
        return False
    return True


def write_report(
    command: str, write: Callable[[_R, Path], None], result: _R, path: Path | None
) -> bool:
    """Write one report of ``result`` to ``path`` (None: not asked for), each on its own: one
    that cannot be written is reported and leaves the others; whether it was written."""
    if path is None:
        return True
    try:
        write(result, path)
    except OSError as exc:
        error(command, f"cannot write the report {path}: {exc.strerror or exc}")
        return False
    return True
