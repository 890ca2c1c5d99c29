"""A stand-in for Claude Code's ``claude`` command: ``mcp add-json`` and ``mcp remove``.

It answers as Claude Code 2.1.197 does (checked by running it): ``add-json NAME JSON`` with
``--scope``/``-s`` (default ``local``) stores the server in ``$HOME/.claude.json`` (user scope:
``mcpServers``; local scope: ``projects[cwd].mcpServers``) and prints ``Added stdio MCP server
NAME to user config``; a name already there is refused on stderr with ``MCP server NAME already
exists in user config`` (exit 1), JSON that is not a server with ``Invalid configuration: :
Invalid input`` (exit 1), an unknown scope with ``Invalid scope: …`` (exit 1). ``remove NAME -s
SCOPE`` prints ``Removed MCP server NAME from user config`` and ``File modified: PATH``, or
``No MCP server named "NAME" in user scope`` on stderr (exit 1).

Every run appends ``{"argv": [...], "json": <the parsed JSON or null>}`` to a log file, so a test
sees exactly what it was asked. Put it on PATH with :func:`install_fake_claude`.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

__all__ = ["install_fake_claude", "logged_calls"]

SCOPES = ("local", "user", "project", "dynamic", "enterprise", "claudeai", "managed", "agent")
LOG_NAME = "claude-calls.jsonl"


def install_fake_claude(bin_dir: Path) -> Path:
    """Write an executable ``claude`` into ``bin_dir`` that runs this fake; returns its path.

    Its log is ``bin_dir / "claude-calls.jsonl"`` (:func:`logged_calls` reads it).
    """
    bin_dir.mkdir(parents=True, exist_ok=True)
    claude = bin_dir / "claude"
    claude.write_text(
        f"#!/bin/sh\nexec {sys.executable} {Path(__file__).resolve()} "
        f'--log {bin_dir / LOG_NAME} "$@"\n',
        encoding="utf-8",
    )
    claude.chmod(0o755)
    return claude


def logged_calls(bin_dir: Path) -> list[dict[str, Any]]:
    """Every run of the fake in ``bin_dir``, oldest first."""
    log = bin_dir / LOG_NAME
    if not log.exists():
        return []
    return [json.loads(line) for line in log.read_text(encoding="utf-8").splitlines()]


def _config_path() -> Path:
    return Path(os.environ["HOME"]) / ".claude.json"


def _servers(document: dict[str, Any], scope: str) -> dict[str, Any]:
    if scope == "user":
        servers: dict[str, Any] = document.setdefault("mcpServers", {})
        return servers
    project = document.setdefault("projects", {}).setdefault(os.getcwd(), {})
    project_servers: dict[str, Any] = project.setdefault("mcpServers", {})
    return project_servers


def _scope(args: list[str]) -> tuple[str, list[str]]:
    scope, rest = "local", []
    items = iter(args)
    for item in items:
        if item in ("-s", "--scope"):
            scope = next(items, "")
        elif item.startswith("--scope="):
            scope = item.split("=", 1)[1]
        else:
            rest.append(item)
    return scope, rest


def _fail(text: str) -> int:
    sys.stderr.write(text + "\n")
    return 1


def main(argv: list[str]) -> int:
    log = Path(argv[1]) if argv[:1] == ["--log"] else None
    args = argv[2:] if log is not None else argv
    parsed: Any = None
    if args[:2] == ["mcp", "add-json"] and len(args) > 3:
        try:
            parsed = json.loads(args[3])
        except ValueError:
            parsed = None
    if log is not None:
        with log.open("a", encoding="utf-8") as handle:
            handle.write(json.dumps({"argv": args, "json": parsed}) + "\n")
    if args[:1] == ["--version"]:
        sys.stdout.write("2.1.197 (Claude Code)\n")
        return 0
    if args[:1] != ["mcp"] or len(args) < 2:
        return _fail(f"error: unknown command '{' '.join(args)}'")
    scope, rest = _scope(args[2:])
    if scope not in SCOPES:
        return _fail(f"Invalid scope: {scope}. Must be one of: {', '.join(SCOPES)}")
    config = _config_path()
    document: dict[str, Any] = (
        json.loads(config.read_text(encoding="utf-8")) if config.exists() else {}
    )
    servers = _servers(document, scope)
    if args[1] == "add-json" and len(rest) == 2:
        name = rest[0]
        if name in servers:
            return _fail(f"MCP server {name} already exists in {scope} config")
        if not isinstance(parsed, dict) or not ("command" in parsed or "url" in parsed):
            return _fail("Invalid configuration: : Invalid input")
        kind = parsed.get("type", "stdio")
        servers[name] = {"type": kind, **parsed, "args": parsed.get("args", [])}
        config.write_text(json.dumps(document, indent=2), encoding="utf-8")
        sys.stdout.write(f"Added {kind} MCP server {name} to {scope} config\n")
        return 0
    if args[1] == "remove" and len(rest) == 1:
        name = rest[0]
        if servers.pop(name, None) is None:
            return _fail(f'No MCP server named "{name}" in {scope} scope')
        config.write_text(json.dumps(document, indent=2), encoding="utf-8")
        sys.stdout.write(f"Removed MCP server {name} from {scope} config\n")
        sys.stdout.write(f"File modified: {config}\n")
        return 0
    return _fail(f"error: unknown command 'mcp {' '.join(args[1:])}'")


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
