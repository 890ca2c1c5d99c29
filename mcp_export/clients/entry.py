"""The config entry that makes an MCP client launch ``metaagent serve`` for one agent.

One entry per client format, built from the agent file alone:

- ``command`` and ``args``: by default the Python interpreter running us, as an absolute path
  that is *not* resolved through the venv's symlink (the venv's ``python`` must stay, or the
  venv's packages are lost), with ``-m mcp_export serve <absolute agent path>``; or a portable
  launcher (``uvx``, ``pipx run``, a given command) and the agent path as given
  (``clients.launchers``);
- ``env``: one entry for each environment variable the agent references (``env://NAME`` in its
  providers and in its MCP servers' env/headers), written in the client's own variable syntax so
  the client fills it in at launch. A secret value is never written anywhere.

Formats: Claude Desktop and Cursor keep ``{"mcpServers": {name: entry}}``, VS Code keeps
``{"servers": {name: {"type": "stdio", …}}}``, Claude Code gets a ``claude mcp add-json`` command
(it owns its files; ``clients.claude_code`` runs it), and ``json`` is the bare entry. Merging
into a config file lives in ``clients.install``; this module only builds and prints.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import sys
import unicodedata
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path, PureWindowsPath
from typing import TYPE_CHECKING, Any, Literal, get_args

from mcp_export.clients.launchers import Launch, interpreter_path, portable_note
from mcp_export.providers.kinds import PROVIDER_KINDS

if TYPE_CHECKING:  # the CLI registry imports this module: keep pydantic out of its start-up
    from schema_types.agent import Agent

__all__ = [
    "CLAUDE_SCOPE",
    "CLIENTS",
    "ClientId",
    "ClientInfo",
    "ExportEntry",
    "Launch",
    "build_entry",
    "claude_add_json_args",
    "default_config_path",
    "interpreter_path",
    "referenced_env_names",
    "server_name",
    "snippet",
]

ClientId = Literal["claude-desktop", "claude-code", "vscode", "cursor", "json"]
CLIENT_IDS: tuple[ClientId, ...] = get_args(ClientId)

EnvStyle = Literal["vscode", "shell", "placeholder"]

_ENV_REFERENCE = re.compile(r"env://([A-Za-z_][A-Za-z0-9_]*)")


@dataclass(frozen=True)
class ClientInfo:
    """What the export dialog shows for one client.

    Attributes:
        id: the ``--client`` value.
        label: the client's name for people.
        notes: what the person should know before choosing it.
        servers_key: the top-level key of its config file (None: no file we edit).
        env_style: how an environment value is written (``${env:NAME}``, ``${NAME}``, or an
            empty placeholder the person fills in).
        sampling: whether the client offers MCP sampling (its own model for the agent).
    """

    id: ClientId
    label: str
    notes: str
    servers_key: str | None
    env_style: EnvStyle
    sampling: bool


CLIENTS: Mapping[ClientId, ClientInfo] = {
    info.id: info
    for info in (
        ClientInfo(
            id="claude-desktop",
            label="Claude Desktop",
            notes=(
                "Claude Desktop does not offer MCP sampling, so the agent needs its own model "
                "(settings.model and a key). It does not expand variables: put each key's value "
                "into the env entry of its config file yourself. Restart Claude Desktop after "
                "installing."
            ),
            servers_key="mcpServers",
            env_style="placeholder",
            sampling=False,
        ),
        ClientInfo(
            id="claude-code",
            label="Claude Code",
            notes=(
                "Claude Code manages its own config: installing runs `claude mcp add-json` "
                "(or run the printed command yourself). It does not offer MCP sampling, so the "
                "agent needs its own model; ${NAME} is read from the environment Claude Code "
                "runs in."
            ),
            servers_key=None,
            env_style="shell",
            sampling=False,
        ),
        ClientInfo(
            id="vscode",
            label="VS Code",
            notes=(
                "VS Code (Copilot agent mode) offers MCP sampling, so an agent without a key of "
                "its own can use the model the person picked. ${env:NAME} is read from the "
                "environment VS Code was started in."
            ),
            servers_key="servers",
            env_style="vscode",
            sampling=True,
        ),
        ClientInfo(
            id="cursor",
            label="Cursor",
            notes=(
                "Cursor does not offer MCP sampling, so the agent needs its own model "
                "(settings.model and a key). ${env:NAME} is read from the environment Cursor "
                "was started in. Reload the MCP servers in Cursor's settings after installing."
            ),
            servers_key="mcpServers",
            env_style="vscode",
            sampling=False,
        ),
        ClientInfo(
            id="json",
            label="Plain JSON",
            notes=(
                "The bare server entry (command, args, env) for any other client. Fill in the "
                "empty env values, or remove them if the client passes its own environment on."
            ),
            servers_key=None,
            env_style="placeholder",
            sampling=False,
        ),
    )
}


@dataclass(frozen=True)
class ExportEntry:
    """One agent's server entry for one client.

    Attributes:
        client: the client it is for.
        name: the server's name in the client's config.
        entry: the server object (``command``, ``args``, ``env``; ``type`` where the client
            wants it), exactly as it goes into the config.
        env_names: the environment variables the agent references, in the order found.
        agent_path: the absolute agent file the server will load.
        notes: what the person still has to do (set a variable, fill in a value…).
        launch: which command starts the server and how the agent file is named in it.
    """

    client: ClientId
    name: str
    entry: dict[str, Any]
    env_names: tuple[str, ...]
    agent_path: Path
    notes: tuple[str, ...] = field(default=())
    launch: Launch = field(default=Launch())

    @property
    def info(self) -> ClientInfo:
        """The client's description."""
        return CLIENTS[self.client]

    @property
    def snippet(self) -> str:
        """The text to paste (a JSON document, or the ``claude`` command)."""
        return snippet(self)


def server_name(agent: Agent) -> str:
    """The default server name: a slug of the agent's name (``Travel Desk`` → ``travel-desk``)."""
    # Accents are dropped rather than the letters they sit on (Café → cafe).
    ascii_name = unicodedata.normalize("NFKD", agent.metadata.name).encode("ascii", "ignore")
    slug = re.sub(r"[^a-z0-9]+", "-", ascii_name.decode().lower()).strip("-")
    return slug or "agent"


def referenced_env_names(agent: Agent) -> tuple[str, ...]:
    """The environment variables the served agent reads, in order of first use.

    Two sources: every ``env://NAME`` reference in the provider settings and in the env and
    headers of the agent's own MCP servers (a reference may sit inside a value, as in
    ``Bearer env://TOKEN``); and the variables the model provider falls back to when the agent
    does not set them (``ANTHROPIC_API_KEY`` for ``anthropic:…`` with no ``providers`` entry),
    where the provider cannot work without them.
    """
    values: list[str] = []
    for settings in agent.providers.values():
        values.extend(settings.values())
    for server in agent.mcp_servers.values():
        values.extend(server.env.values())
        values.extend(server.headers.values())
    names: dict[str, None] = dict.fromkeys(_provider_fallback_names(agent))
    for value in values:
        for match in _ENV_REFERENCE.finditer(value):
            names.setdefault(match.group(1), None)
    return tuple(names)


def _provider_fallback_names(agent: Agent) -> list[str]:
    """Required provider settings the agent leaves to the process environment."""
    provider_id = agent.settings.provider_id or ""
    kind = PROVIDER_KINDS.get(provider_id)
    if kind is None or not agent.settings.model_name:
        return []
    given = agent.providers.get(provider_id, {})
    names: list[str] = []
    if kind.key_required and not any(given.get(name) for name in kind.key_names):
        names.append(kind.key_names[0])
    url_needed = kind.sdk == "openai" and kind.default_url is None and provider_id != "openai"
    if url_needed and not any(given.get(name) for name in kind.url_names):
        names.append(kind.url_names[0])
    return names


def _env_value(style: EnvStyle, name: str) -> str:
    if style == "vscode":
        return "${env:" + name + "}"
    if style == "shell":
        return "${" + name + "}"
    return ""


def build_entry(
    agent_path: str | os.PathLike[str],
    agent: Agent,
    client: ClientId,
    *,
    name: str | None = None,
    launch: Launch | None = None,
) -> ExportEntry:
    """Build the config entry that launches ``metaagent serve`` for this agent.

    Args:
        agent_path: the agent file (made absolute; the client starts elsewhere).
        agent: the loaded agent (for its name and the variables it references).
        client: which client format.
        name: the server's name in the client; default: a slug of the agent's name.
        launch: the command that starts the server and how the agent file is named; default:
            this machine's interpreter and the absolute path.

    Raises:
        ValueError: unknown client, an empty name, or a launcher without its command.
    """
    if client not in CLIENTS:
        raise ValueError(f"unknown client {client!r}: choose one of {', '.join(CLIENT_IDS)}")
    info = CLIENTS[client]
    chosen = server_name(agent) if name is None else name.strip()
    if not chosen:
        raise ValueError("the server name must not be empty")
    path = Path(os.path.abspath(os.fspath(agent_path)))
    env_names = referenced_env_names(agent)
    entry: dict[str, Any] = {}
    if client in ("vscode", "claude-code"):
        entry["type"] = "stdio"
    launch = Launch() if launch is None else launch
    entry["command"], entry["args"] = launch.command_line(agent_path)
    if env_names:
        entry["env"] = {env: _env_value(info.env_style, env) for env in env_names}
    return ExportEntry(
        client=client,
        name=chosen,
        entry=entry,
        env_names=env_names,
        agent_path=path,
        notes=(*_notes(agent, info, chosen, env_names), *portable_note(launch, agent_path)),
        launch=launch,
    )


def _notes(
    agent: Agent, info: ClientInfo, name: str, env_names: tuple[str, ...]
) -> tuple[str, ...]:
    notes: list[str] = []
    if env_names:
        listed = ", ".join(env_names)
        if info.id == "claude-desktop":
            notes.append(
                f"set {listed} in the env of '{name}' in its config file: {info.label} does not "
                "read your shell's environment, and no secret value is ever written for you"
            )
        elif info.env_style == "placeholder":
            notes.append(
                f"fill in {listed} in the entry's env (or leave them out if your client passes "
                "its own environment on): no secret value is ever written for you"
            )
        else:
            notes.append(
                f"{info.label} reads {listed} from its environment: set it before starting it"
            )
    if agent.settings.model == "sampling" and not info.sampling:
        notes.append(
            f"the agent's model is 'sampling', but {info.label} does not offer MCP sampling: "
            "set settings.model to a provider model and its key, or use a client that samples"
        )
    elif not agent.settings.model and not info.sampling:
        notes.append(
            f"the agent has no settings.model and {info.label} does not offer MCP sampling: "
            "set a provider model (for example openai:gpt-4.1-mini) and its key"
        )
    return tuple(notes)


CLAUDE_SCOPE = "user"
"""Claude Code's scope for an installed agent: every project of the person sees it."""


def claude_add_json_args(entry: ExportEntry, claude: str = "claude") -> list[str]:
    """The Claude Code command that adds the entry: ``claude mcp add-json NAME JSON --scope user``.

    Args:
        entry: the entry (its JSON is written compactly, as one argument).
        claude: the ``claude`` executable to name first.
    """
    payload = json.dumps(entry.entry, ensure_ascii=False, separators=(",", ":"))
    return [claude, "mcp", "add-json", entry.name, payload, "--scope", CLAUDE_SCOPE]


def snippet(entry: ExportEntry) -> str:
    """The text the person pastes: a config document, the bare entry, or the ``claude`` command.

    JSON is indented by two spaces; the Claude Code command is one line whose arguments are
    quoted with ``shlex.quote`` (POSIX shells).
    """
    info = CLIENTS[entry.client]
    if entry.client == "claude-code":
        return shlex.join(claude_add_json_args(entry))
    if info.servers_key is None:
        document: Any = entry.entry
    else:
        document = {info.servers_key: {entry.name: entry.entry}}
    return json.dumps(document, indent=2, ensure_ascii=False)


def default_config_path(
    client: ClientId,
    *,
    platform: str | None = None,
    home: str | os.PathLike[str] | None = None,
    env: Mapping[str, str] | None = None,
) -> Path | None:
    """The client's user-level config file on this (or the given) operating system.

    Args:
        client: which client.
        platform: a ``sys.platform`` value (``linux``, ``darwin``, ``win32``); default: this one.
        home: the home directory; default: ``Path.home()``.
        env: the environment (``APPDATA``, ``XDG_CONFIG_HOME``); default: ``os.environ``.

    Returns:
        The path (it may not exist yet), or None for clients whose files we never edit
        (Claude Code) or that have no file (plain JSON).
    """
    platform = sys.platform if platform is None else platform
    base_home = Path.home() if home is None else Path(home)
    environ: Mapping[str, str] = os.environ if env is None else env
    if client == "cursor":
        if platform == "win32":
            return _windows_path(str(base_home), ".cursor", "mcp.json")
        return base_home / ".cursor" / "mcp.json"
    parts: tuple[str, ...]
    if client == "claude-desktop":
        parts = ("Claude", "claude_desktop_config.json")
    elif client == "vscode":
        parts = ("Code", "User", "mcp.json")
    else:
        return None
    if platform == "win32":
        appdata = environ.get("APPDATA") or str(
            PureWindowsPath(str(base_home), "AppData", "Roaming")
        )
        return _windows_path(appdata, *parts)
    if platform == "darwin":
        return base_home / "Library" / "Application Support" / Path(*parts)
    # Electron apps on Linux keep their data under XDG_CONFIG_HOME, else ~/.config.
    config_home = environ.get("XDG_CONFIG_HOME") or str(base_home / ".config")
    return Path(config_home, *parts)


def _windows_path(*parts: str) -> Path:
    # A Windows path asked for on another OS (tests, docs) keeps its backslashes in str().
    return Path(str(PureWindowsPath(*parts)))
