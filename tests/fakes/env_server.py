"""A tiny stdio MCP server that tells how it was started: run it by path, as a client would.

``python tests/fakes/env_server.py`` serves one tool, ``environment()``, whose answer is the JSON
object of the environment the process was given when it started (``/proc/self/environ`` on Linux,
before the interpreter changed anything, such as the ``LC_CTYPE`` it sets for the C locale; the
interpreter's view elsewhere). It imports only the MCP SDK, so it runs with nothing but the
environment a client passes.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from mcp.server.mcpserver import MCPServer

server = MCPServer("environment-reporter", version="0.0.1")


def _initial_environment() -> dict[str, str]:
    proc = Path("/proc/self/environ")
    if not proc.exists():
        return dict(os.environ)
    pairs = (item.split(b"=", 1) for item in proc.read_bytes().split(b"\0") if b"=" in item)
    return {key.decode(errors="replace"): value.decode(errors="replace") for key, value in pairs}


@server.tool(description="The environment this server process was started with, as JSON.")
def environment() -> str:
    return json.dumps(_initial_environment(), sort_keys=True)


if __name__ == "__main__":
    server.run()
