"""Merge an exported server entry into a client's config file, without losing anything.

The rules, in the order they apply:

1. Read the file (missing → start from ``{}``). Invalid JSON is refused with its line and column
   and the file is left alone. VS Code's ``mcp.json`` is JSONC: comments and trailing commas are
   blanked out (positions kept, strings untouched) before parsing.
2. The same server already there, identical → "already installed": no write, no backup.
3. A *different* server under the same name is refused unless ``force``; the message shows both.
4. Otherwise: copy the old bytes to ``NAME.bak-YYYYMMDD-HHMMSS`` (only when the file existed), then
   write the merged document atomically (temporary file in the same directory, fsync, rename)
   with two-space indentation. Every other server and top-level key is kept as it was.
"""

from __future__ import annotations

import json
import os
import shutil
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

from mcp_export.clients.entry import CLIENTS, ExportEntry
from mcp_export.errors import ExportError
from schema_types.files.atomic_write import write_atomically

__all__ = ["InstallError", "InstallResult", "install", "read_config", "strip_jsonc"]


class InstallError(ExportError):
    """The entry could not be merged into the config file; nothing was changed."""


@dataclass(frozen=True)
class InstallResult:
    """What ``install`` did.

    Attributes:
        changed: whether the file was written.
        backup: the copy of the previous file, when one was made.
        path: the config file.
        message: one line for the person (which file changed, or why nothing did).
    """

    changed: bool
    backup: Path | None
    path: Path
    message: str


def install(
    entry: ExportEntry, config_path: str | os.PathLike[str], *, force: bool = False
) -> InstallResult:
    """Merge ``entry`` into the config file at ``config_path``.

    Args:
        entry: from ``build_entry`` (Claude Desktop, VS Code or Cursor).
        config_path: the client's config file (it and its folder may not exist yet).
        force: replace a different server that has the same name.

    Raises:
        InstallError: the client has no file we edit, the file is not valid JSON or not shaped
            like that client's config, a different server has the name and ``force`` is off, or
            the file cannot be read or written. The file is untouched in every case.
    """
    info = CLIENTS[entry.client]
    path = Path(config_path)
    if info.servers_key is None:
        how = (
            "`metaagent export --client claude-code --install` runs `claude mcp add-json` for it"
            if entry.client == "claude-code"
            else "copy the snippet into your client's config"
        )
        raise InstallError(f"{info.label} has no config file to install into: {how}")
    key = info.servers_key
    old_bytes = _read(path)
    document = _parse(old_bytes, path, jsonc=entry.client == "vscode") if old_bytes else {}
    had_comments = old_bytes is not None and _has_comments(old_bytes, entry.client)
    servers = document.get(key)
    if servers is None:
        servers = {}
    elif not isinstance(servers, dict):
        raise InstallError(
            f"{path}: '{key}' is a {type(servers).__name__}, not an object of servers; "
            "fix the file by hand, nothing was changed"
        )
    existing = servers.get(entry.name)
    if existing == entry.entry:
        return InstallResult(
            changed=False,
            backup=None,
            path=path,
            message=f"'{entry.name}' is already installed in {path}; nothing changed",
        )
    if existing is not None and not force:
        raise InstallError(
            f"{path} already has a different server named '{entry.name}'; "
            "use --force to replace it, or --name to install under another name.\n"
            f"installed:\n{_indent(existing)}\nnew:\n{_indent(entry.entry)}"
        )
    servers[entry.name] = entry.entry
    # Keep the key order of the document; a new servers key goes last.
    document[key] = servers
    backup = _backup(path, old_bytes) if old_bytes is not None else None
    _write_atomic(path, (json.dumps(document, indent=2, ensure_ascii=False) + "\n").encode())
    verb = "replaced" if existing is not None else "installed"
    message = f"{verb} '{entry.name}' in {path}"
    if backup is not None:
        message += f" (backup: {backup})"
    if had_comments:
        message += "; its comments could not be kept, the backup still has them"
    return InstallResult(changed=True, backup=backup, path=path, message=message)


def read_config(path: str | os.PathLike[str], *, jsonc: bool = False) -> dict[str, Any] | None:
    """A client's config file as a JSON object; None when the file does not exist.

    Args:
        path: the config file.
        jsonc: read it as JSONC (comments and trailing commas allowed), as VS Code does.

    Raises:
        InstallError: the file cannot be read, is not UTF-8, not valid JSON or not an object.
    """
    config = Path(path)
    data = _read(config)
    if data is None:
        return None
    return _parse(data, config, jsonc=jsonc) if data else {}


def _indent(value: Any) -> str:
    return "\n".join("  " + line for line in json.dumps(value, indent=2).splitlines())


def _read(path: Path) -> bytes | None:
    try:
        return path.read_bytes()
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise InstallError(f"cannot read {path}: {exc.strerror or exc}") from exc


def _parse(data: bytes, path: Path, *, jsonc: bool) -> dict[str, Any]:
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise InstallError(
            f"{path} is not UTF-8 text (byte {exc.start}); fix or move it, nothing was changed"
        ) from exc
    if not text.strip():
        return {}
    try:
        value = json.loads(strip_jsonc(text) if jsonc else text)
    except json.JSONDecodeError as exc:
        raise InstallError(
            f"{path} is not valid JSON (line {exc.lineno}, column {exc.colno}: {exc.msg}); "
            "fix or move it, nothing was changed"
        ) from exc
    if not isinstance(value, dict):
        raise InstallError(
            f"{path} holds a JSON {type(value).__name__}, not an object; "
            "fix or move it, nothing was changed"
        )
    return value


def _has_comments(data: bytes, client: str) -> bool:
    if client != "vscode":
        return False
    text = data.decode("utf-8-sig", errors="replace")
    return strip_jsonc(text, trailing_commas=False) != text


def strip_jsonc(text: str, *, trailing_commas: bool = True) -> str:
    """JSONC to JSON: blank out ``//`` and ``/* */`` comments (and trailing commas).

    Every removed character becomes a space (newlines stay), so a parse error afterwards points
    at the same line and column as in the original. Text inside strings is never touched.
    """
    out = list(text)
    i, n = 0, len(text)
    last_comma: int | None = None  # index of a comma not yet followed by a value
    while i < n:
        ch = text[i]
        if ch == '"':
            i = _skip_string(text, i)
            last_comma = None
            continue
        if ch == "/" and i + 1 < n and text[i + 1] == "/":
            end = text.find("\n", i)
            end = n if end == -1 else end
            _blank(out, i, end)
            i = end
            continue
        if ch == "/" and i + 1 < n and text[i + 1] == "*":
            end = text.find("*/", i + 2)
            end = n if end == -1 else end + 2  # an open comment runs to the end; JSON then fails
            _blank(out, i, end)
            i = end
            continue
        if ch == ",":
            last_comma = i
        elif ch in "}]":
            if trailing_commas and last_comma is not None:
                out[last_comma] = " "
            last_comma = None
        elif not ch.isspace():
            last_comma = None
        i += 1
    return "".join(out)


def _skip_string(text: str, start: int) -> int:
    i = start + 1
    while i < len(text):
        if text[i] == "\\":
            i += 2
            continue
        if text[i] == '"':
            return i + 1
        i += 1
    return i


def _blank(out: list[str], start: int, end: int) -> None:
    for j in range(start, end):
        if out[j] not in "\r\n":
            out[j] = " "


def _backup(path: Path, old_bytes: bytes) -> Path:
    stamp = datetime.now().strftime("%Y%m%d-%H%M%S")
    backup = path.with_name(f"{path.name}.bak-{stamp}")
    counter = 1
    while backup.exists():  # two installs in one second keep both backups
        backup = path.with_name(f"{path.name}.bak-{stamp}-{counter}")
        counter += 1
    try:
        with open(backup, "xb") as handle:
            handle.write(old_bytes)
            handle.flush()
            os.fsync(handle.fileno())
        shutil.copymode(path, backup)
    except OSError as exc:
        raise InstallError(
            f"cannot write the backup {backup}: {exc.strerror or exc}; nothing was changed"
        ) from exc
    return backup


def _write_atomic(path: Path, data: bytes) -> None:
    """Write via a temporary file in the same folder, fsync, then rename over the target."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise InstallError(f"cannot write {path}: {exc.strerror or exc}") from exc
    try:
        write_atomically(path, data)  # a private config (0600) stays private
    except OSError as exc:
        raise InstallError(f"cannot write {path}: {exc.strerror or exc}; it is unchanged") from exc
