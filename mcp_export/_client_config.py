"""Export an agent to MCP clients: the public surface the CLI and the studio's export dialog use.

``build_entry`` makes the server entry for one client (``_client_entry``), ``snippet`` prints it,
``default_config_path`` finds the client's config file on this OS, and ``install`` merges the
entry into that file with a backup (``_client_install``).

Errors::

    ExportError
    └── InstallError        the config file cannot be merged into; nothing was changed
"""

from __future__ import annotations

from ._client_entry import (
    CLIENT_IDS,
    CLIENTS,
    ClientId,
    ClientInfo,
    ExportEntry,
    build_entry,
    default_config_path,
    interpreter_path,
    referenced_env_names,
    server_name,
    snippet,
)
from ._client_install import InstallError, InstallResult, install, strip_jsonc

__all__ = [
    "CLIENTS",
    "CLIENT_IDS",
    "ClientId",
    "ClientInfo",
    "ExportEntry",
    "InstallError",
    "InstallResult",
    "build_entry",
    "default_config_path",
    "install",
    "interpreter_path",
    "referenced_env_names",
    "server_name",
    "snippet",
    "strip_jsonc",
]
