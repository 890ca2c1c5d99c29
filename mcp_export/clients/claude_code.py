"""Install an entry into Claude Code with its own command: ``claude mcp add-json``.

Claude Code keeps its servers in its own files (``~/.claude.json`` for the user scope) and offers
a command to add one, so that command is the only writer::

    claude mcp add-json NAME JSON --scope user

It answers ``Added stdio MCP server NAME to user config`` (exit 0), and refuses a name it already
has with ``MCP server NAME already exists in user config`` on stderr (exit 1). With ``force``,
``claude mcp remove NAME -s user`` runs first. Without a ``claude`` command on PATH nothing runs:
:class:`ClaudeNotFound` carries the command to run by hand.
"""

from __future__ import annotations

import shlex
import shutil
import subprocess
from pathlib import Path

from mcp_export.clients.entry import CLAUDE_SCOPE, ExportEntry, claude_add_json_args
from mcp_export.clients.install import InstallError, InstallResult
from mcp_export.redact import redact

__all__ = ["ClaudeNotFound", "find_claude", "install_with_claude"]


class ClaudeNotFound(InstallError):
    """There is no ``claude`` command on PATH; the message says what to run instead."""


def find_claude() -> str | None:
    """The ``claude`` executable on PATH, or None."""
    return shutil.which("claude")


def install_with_claude(
    entry: ExportEntry, *, force: bool = False, timeout: float = 60.0
) -> InstallResult:
    """Add ``entry`` to Claude Code's user scope by running ``claude mcp add-json``.

    Args:
        entry: a ``claude-code`` entry from ``build_entry``.
        force: replace a server Claude Code already has under that name.
        timeout: seconds each ``claude`` command may take.

    Returns:
        What was done; ``path`` is Claude Code's ``~/.claude.json`` (it writes no backup).

    Raises:
        ClaudeNotFound: no ``claude`` on PATH (nothing ran).
        InstallError: ``claude`` refused the entry or did not finish; the message quotes it.
    """
    claude = find_claude()
    if claude is None:
        raise ClaudeNotFound(
            "the claude command is not on PATH, so nothing was installed; run this where "
            f"Claude Code is installed:\n{shlex.join(claude_add_json_args(entry))}"
        )
    if force:
        # Refused when there is nothing to remove; the add below says whatever else is wrong.
        _run([claude, "mcp", "remove", entry.name, "-s", CLAUDE_SCOPE], timeout)
    code, out, err = _run(claude_add_json_args(entry, claude), timeout)
    said = (err or out) if code != 0 else (out or err)
    if code != 0:
        hint = ""
        if "already exists" in said:
            hint = "; use --force to replace it, or --name to install under another name"
        raise InstallError(
            f"claude mcp add-json refused '{entry.name}' (exit {code}): {said}{hint}"
        )
    return InstallResult(
        changed=True,
        backup=None,
        path=Path.home() / ".claude.json",
        message=f"installed '{entry.name}' in Claude Code ({CLAUDE_SCOPE} scope): {said}",
    )


def _run(argv: list[str], timeout: float) -> tuple[int, str, str]:
    """Run one ``claude`` command: its exit status, stdout and stderr (each on one line,
    redacted)."""
    try:
        done = subprocess.run(
            argv,
            capture_output=True,
            text=True,
            encoding="utf-8",
            errors="replace",
            stdin=subprocess.DEVNULL,
            timeout=timeout,
            check=False,
        )
    except subprocess.TimeoutExpired as exc:
        raise InstallError(
            f"claude {argv[1]} {argv[2]} did not finish within {timeout:g} s; nothing is known "
            "to be installed"
        ) from exc
    except OSError as exc:
        raise InstallError(f"cannot run {argv[0]}: {exc.strerror or exc}") from exc
    return (
        done.returncode,
        redact(" ".join(done.stdout.split())),
        redact(" ".join(done.stderr.split())),
    )
