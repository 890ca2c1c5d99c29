"""Where a stdio tool server's command is found.

A bare command (``mcp-server-time``) is looked up on the ``PATH`` the server is started with,
then beside the Python that runs us (``sys.executable``'s directory: a virtual environment's
``bin``). A studio started as ``.venv/bin/metaagent`` or by ``make studio``, or a served agent
started by an MCP client, often has no activated environment, so that ``bin`` is not on ``PATH``
although the tool servers installed with us are there. A command with a directory part is taken
as it is written, relative to the server's working folder. When nothing is found, the error says
where it looked.
"""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path

from mcp_export.errors import ToolServerError

__all__ = ["CommandNotFoundError", "find_command", "search_places"]


class CommandNotFoundError(ToolServerError):
    """A tool server's command is on neither the ``PATH`` nor beside our Python."""


def search_places(path: str | None) -> list[Path]:
    """The folders a bare command is looked for in, in order: ``path``'s (a ``PATH`` value;
    None: the environment's), then the directory of the running Python."""
    value = os.environ.get("PATH", os.defpath) if path is None else path
    beside = Path(sys.executable).parent  # not resolved: a venv's python links out of its bin
    places = [Path(part) for part in value.split(os.pathsep) if part] + [beside]
    return list(dict.fromkeys(places))  # each once, in order


def find_command(command: str, *, cwd: Path | None = None, path: str | None = None) -> str:
    """The program to start for ``command``.

    Args:
        command: as the agent file writes it.
        cwd: the server's working folder (a relative path with a directory part starts there).
        path: the ``PATH`` the server is started with; None: this process's.

    Returns:
        The path of the program (a bare command found on ``PATH`` or beside our Python), or
        ``command`` with a directory part as it is written (starting it reports a missing one).

    Raises:
        CommandNotFoundError: a bare command found nowhere; the message names the places.
    """
    if os.sep in command or (os.altsep is not None and os.altsep in command):
        if not os.path.isabs(command) and cwd is not None:
            return str(cwd / command)
        return command
    places = search_places(path)
    found = shutil.which(command, path=os.pathsep.join(str(place) for place in places))
    if found is not None:
        return found
    listed = ", ".join(str(place) for place in places) or "(PATH is empty)"
    raise CommandNotFoundError(
        f"command not found: {command} (looked in PATH and beside this Python: {listed}); "
        "install it there, or write its full path as the command"
    )
