"""What an MCP client runs for a server entry of its config, so ``verify`` can run exactly that.

A client takes the server's entry from its config file, expands its own variable syntax in it and
starts ``command`` with ``args``. The process's environment is a small default set taken from the
client's own environment, with the entry's ``env`` over it; nothing else is passed on.

=============== ====================================== =========================================
client          the entry is read from                  variables in command, args and env
=============== ====================================== =========================================
Claude Desktop  ``claude_desktop_config.json``          none: a value is passed as written
Claude Code     ``~/.claude.json`` (``--scope user``)   ``${NAME}``, ``${NAME:-default}``
VS Code         ``mcp.json`` (``servers``)              ``${env:NAME}``
Cursor          ``~/.cursor/mcp.json``                  ``${env:NAME}``
plain JSON      no file: the entry as printed           none
=============== ====================================== =========================================

The default set is the MCP SDK's ``mcp.client.stdio.get_default_environment()`` (HOME, LOGNAME,
PATH, SHELL, TERM, USER; on Windows APPDATA, PATH, SYSTEMROOT, TEMP, USERPROFILE…), which the
SDK-based clients pass (Claude Desktop is built on the TypeScript SDK, whose list is the same).
Some clients pass more: Claude Code 2.1 passes its whole environment. Verify uses the small set
for every client, so an entry that works in verify works in every client, and a key that only
reached the server because the shell happened to export it is caught. Variables are expanded
from the environment verify runs in, as if the client had been started from the same session.

An entry not installed yet (no config file, or no entry of that name in it) is launched as the
export would write it.
"""

from __future__ import annotations

import os
import re
import shutil
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from mcp.client.stdio import StdioServerParameters, get_default_environment

from mcp_export.clients.entry import CLIENTS, ClientId, ExportEntry, default_config_path
from mcp_export.clients.install import read_config
from mcp_export.redact import remember_secret
from schema_types.secrets import looks_secret

__all__ = ["ClientLaunch", "client_launch", "config_location", "expand"]

_VSCODE_VARIABLE = re.compile(r"\$\{env:([A-Za-z_][A-Za-z0-9_]*)\}")
_SHELL_VARIABLE = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}")


@dataclass(frozen=True)
class ClientLaunch:
    """One server process as the client starts it.

    Attributes:
        client: whose config the entry is in.
        name: the server's name in that config.
        written: the entry as the client reads it (from its file, or as the export writes it).
        source: the config file the entry was read from; None when it is not installed there.
        config_file: the client's config file (read, or where an install would write it); None
            for clients without one (plain JSON).
        command: the command, variables expanded.
        args: the arguments, variables expanded.
        env: the entry's env, variables expanded (what the client adds to the default set).
        unset: variables the entry refers to that are not set where the client runs.
    """

    client: ClientId
    name: str
    written: Mapping[str, Any]
    source: Path | None
    config_file: Path | None
    command: str
    args: tuple[str, ...]
    env: dict[str, str] = field(default_factory=lambda: dict[str, str]())
    unset: tuple[str, ...] = ()

    @property
    def label(self) -> str:
        """The client's name for people, as the subject of a sentence (``the client`` for the
        plain JSON entry)."""
        return "the client" if self.client == "json" else CLIENTS[self.client].label

    @property
    def written_env(self) -> dict[str, str]:
        """The entry's env as written (before expansion); empty when it has none."""
        env = self.written.get("env")
        return {str(k): str(v) for k, v in env.items()} if isinstance(env, dict) else {}

    def key_path(self, *keys: str) -> str:
        """Where a value sits in the config file: ``mcpServers › travel-desk › env › KEY``
        (in the bare plain JSON entry: ``env › KEY``)."""
        if self.client == "json":
            return " › ".join(keys) or "the entry"
        servers = CLIENTS[self.client].servers_key or "mcpServers"
        return " › ".join((servers, self.name, *keys))

    def process_env(self) -> dict[str, str]:
        """The whole environment the server process gets: the default set, then the entry's."""
        return get_default_environment() | self.env

    def parameters(self) -> StdioServerParameters:
        """The SDK's launch parameters (it adds the default set itself)."""
        return StdioServerParameters(command=self.command, args=list(self.args), env=self.env)

    def find_command(self) -> str | None:
        """The executable the command names, looked up on the PATH the server gets; else None."""
        path = self.process_env().get("PATH", os.defpath)
        return shutil.which(self.command, path=path)


def config_location(client: ClientId) -> Path | None:
    """Where the client keeps the entry it launches: its config file, or Claude Code's own.

    Claude Code's user-scope servers (``claude mcp add-json … --scope user``) sit in the
    ``mcpServers`` of ``~/.claude.json``; it is read here, never written.
    """
    if client == "claude-code":
        return Path.home() / ".claude.json"
    return default_config_path(client)


def expand(client: ClientId, value: str, environ: Mapping[str, str]) -> tuple[str, list[str]]:
    """``value`` with the client's variables expanded from ``environ``.

    Returns:
        The expanded value and the variables it names that ``environ`` does not set (they
        expand to nothing, or to their ``:-default`` for Claude Code).
    """
    unset: list[str] = []

    def vscode(match: re.Match[str]) -> str:
        name = match.group(1)
        if not environ.get(name):
            unset.append(name)
        return environ.get(name, "")

    def shell(match: re.Match[str]) -> str:
        name, default = match.group(1), match.group(2)
        if environ.get(name):
            return environ[name]
        unset.append(name)
        return default or ""

    style = CLIENTS[client].env_style
    if style == "vscode":
        return _VSCODE_VARIABLE.sub(vscode, value), unset
    if style == "shell":
        return _SHELL_VARIABLE.sub(shell, value), unset
    return value, unset


def client_launch(
    entry: ExportEntry,
    *,
    config_path: str | os.PathLike[str] | None = None,
    environ: Mapping[str, str] | None = None,
) -> ClientLaunch:
    """The process the client starts for ``entry``'s server, read from its config when installed.

    Every env value an expansion produced, and every one whose name or shape says it is a key,
    is remembered for redaction: the verify report and a call's answer may quote it.

    Args:
        entry: the export's entry (its client and name say which config entry to read).
        config_path: the config file to read; default: the client's standard place.
        environ: the environment the client runs in; default: this process's.

    Raises:
        InstallError: the config file cannot be read or is not a config of that client.
    """
    source: Mapping[str, str] = os.environ if environ is None else environ
    config = Path(config_path) if config_path is not None else config_location(entry.client)
    if entry.client == "json":
        config = None
    written, read_from = _installed(entry, config)
    unset: list[str] = []

    def expanded(value: object) -> str:
        text, missing = expand(entry.client, str(value), source)
        unset.extend(name for name in missing if name not in unset)
        return text

    raw_args = written.get("args")
    args = tuple(expanded(arg) for arg in raw_args) if isinstance(raw_args, list) else ()
    raw_env = written.get("env")
    env: dict[str, str] = {}
    if isinstance(raw_env, dict):
        for key, value in raw_env.items():
            env[str(key)] = expanded(value)
            if env[str(key)] != str(value) or looks_secret(str(key), str(value)):
                remember_secret(env[str(key)])
    return ClientLaunch(
        client=entry.client,
        name=entry.name,
        written=written,
        source=read_from,
        config_file=config,
        command=expanded(written.get("command", "")),
        args=args,
        env=env,
        unset=tuple(unset),
    )


def _installed(entry: ExportEntry, config: Path | None) -> tuple[Mapping[str, Any], Path | None]:
    """The entry in the config file, or the export's own when it is not installed there."""
    if config is None:
        return entry.entry, None
    document = read_config(config, jsonc=entry.client == "vscode")
    servers_key = CLIENTS[entry.client].servers_key or "mcpServers"
    servers = (document or {}).get(servers_key)
    found = servers.get(entry.name) if isinstance(servers, dict) else None
    if not isinstance(found, dict):
        return entry.entry, None
    return found, config
