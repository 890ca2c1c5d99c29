"""How an exported entry starts ``metaagent serve``: this machine's interpreter, or a portable
command a colleague's machine can run too.

- ``python`` (the default): this interpreter, venv symlink kept, ``-m mcp_export serve`` — works
  here at once, nowhere else;
- ``uvx``: ``uvx --from meta-agent-studio metaagent serve`` — uv fetches the package (server only,
  no Qt) into its cache on first start;
- ``pipx``: ``pipx run --spec meta-agent-studio metaagent serve`` — the same through pipx;
- ``command``: a command the author gives (``metaagent``, ``/opt/tools/bin/metaagent``, ``uvx
  --from ./dist/meta_agent_studio-0.1.0-py3-none-any.whl metaagent``…), split as a POSIX shell
  would, then ``serve``.

The agent file is named as the author chooses: ``absolute`` (made absolute here; the client
starts in another directory) or ``as-given`` (kept exactly as typed: a path relative to where
the client starts, or one that exists only on the colleague's machine).
"""

from __future__ import annotations

import os
import shlex
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Literal, get_args

__all__ = [
    "LAUNCHERS",
    "PACKAGE",
    "PATH_STYLES",
    "Launch",
    "LauncherId",
    "PathStyle",
    "interpreter_path",
    "portable_note",
]

PACKAGE = "meta-agent-studio"
"""The distribution a portable launcher fetches (the server alone, without the studio extra)."""

LauncherId = Literal["python", "uvx", "pipx", "command"]
LAUNCHERS: tuple[LauncherId, ...] = get_args(LauncherId)
PathStyle = Literal["absolute", "as-given"]
PATH_STYLES: tuple[PathStyle, ...] = get_args(PathStyle)

LAUNCHER_LABELS: dict[LauncherId, str] = {
    "python": "This machine's Python",
    "uvx": "uvx (portable)",
    "pipx": "pipx run (portable)",
    "command": "A command I give",
}


def interpreter_path() -> Path:
    """The absolute path of the running interpreter, venv symlink kept.

    ``Path.resolve()`` would follow ``.venv/bin/python`` to the base interpreter, which does not
    see the venv's packages; ``abspath`` only makes the path absolute and tidy.
    """
    return Path(os.path.abspath(sys.executable))


@dataclass(frozen=True)
class Launch:
    """Which command starts the server and how the agent file is named.

    Attributes:
        launcher: see the module docstring.
        command: for ``command``: the command line that stands for ``metaagent``.
        path_style: ``absolute`` or ``as-given``.
    """

    launcher: LauncherId = "python"
    command: str = ""
    path_style: PathStyle = "absolute"

    def __post_init__(self) -> None:
        if self.launcher not in LAUNCHERS:
            raise ValueError(
                f"unknown launcher {self.launcher!r}: choose one of {', '.join(LAUNCHERS)}"
            )
        if self.path_style not in PATH_STYLES:
            raise ValueError(
                f"unknown path style {self.path_style!r}: choose one of {', '.join(PATH_STYLES)}"
            )
        if self.launcher == "command" and not self.words():
            raise ValueError(
                "the launcher 'command' needs the command that runs metaagent "
                "(for example: metaagent, or /opt/tools/bin/metaagent)"
            )

    def words(self) -> list[str]:
        """The given command split as a POSIX shell would (ValueError: unbalanced quotes)."""
        try:
            return shlex.split(self.command)
        except ValueError as exc:
            raise ValueError(f"the command {self.command!r} cannot be read: {exc}") from None

    def agent_argument(self, agent_path: str | os.PathLike[str]) -> str:
        """The agent file as the entry names it."""
        given = os.fspath(agent_path)
        if self.path_style == "as-given":
            return given
        return os.path.abspath(given)

    def command_line(self, agent_path: str | os.PathLike[str]) -> tuple[str, list[str]]:
        """The entry's ``command`` and ``args`` that serve the agent."""
        path = self.agent_argument(agent_path)
        if self.launcher == "uvx":
            return "uvx", ["--from", PACKAGE, "metaagent", "serve", path]
        if self.launcher == "pipx":
            return "pipx", ["run", "--spec", PACKAGE, "metaagent", "serve", path]
        if self.launcher == "command":
            first, *rest = self.words()
            return first, [*rest, "serve", path]
        return str(interpreter_path()), ["-m", "mcp_export", "serve", path]

    @property
    def portable(self) -> bool:
        """Whether the entry can work on another machine (the path style aside)."""
        return self.launcher != "python"


def portable_note(launch: Launch, agent_path: str | os.PathLike[str]) -> list[str]:
    """What the person should know about the chosen launcher and path."""
    notes: list[str] = []
    if launch.launcher in ("uvx", "pipx"):
        notes.append(
            f"{launch.launcher} fetches {PACKAGE} from the package index the first time the "
            "client starts the server (the server alone, no Qt); the machine needs "
            f"{launch.launcher} on the PATH the client sees. To use a wheel you share instead, "
            "give the command `uvx --from PATH_OR_URL_OF_THE_WHEEL metaagent`"
        )
    if launch.path_style == "as-given" and not Path(os.fspath(agent_path)).is_absolute():
        notes.append(
            f"the agent file is named as given ({os.fspath(agent_path)}): the client resolves "
            "it from the directory it starts the server in"
        )
    return notes
