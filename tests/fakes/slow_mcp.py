"""A stdio MCP tool server that is slow to come up: it waits before answering ``initialize`` and
before answering ``tools/list``, as a server that loads a lot or is fetched on first use does.

Run it as ``python -m tests.fakes.slow_mcp [--initialize-delay S] [--list-delay S]`` (in the
repository). Hand-written newline-delimited JSON-RPC like ``tests.fakes.faulty_mcp`` (it never
imports ``mcp``): ``server/discover`` is refused at once (a client in ``auto`` mode falls back to
the ``initialize`` handshake), ``initialize`` and ``tools/list`` are answered after their delays,
``ping`` and ``tools/call`` at once. Its one tool is ``echo(text)``. It ends when its stdin ends
(or on SIGTERM, even while it waits).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from typing import Any

_ECHO = {
    "name": "echo",
    "description": "Returns its text.",
    "inputSchema": {"type": "object", "properties": {"text": {"type": "string"}}},
}


def _send(message: dict[str, Any]) -> None:
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()


def _result(method: str, params: dict[str, Any], options: argparse.Namespace) -> dict[str, Any]:
    if method == "initialize":
        time.sleep(options.initialize_delay)
        return {
            "protocolVersion": params.get("protocolVersion", "2025-11-25"),
            "capabilities": {"tools": {}},
            "serverInfo": {"name": "slow", "version": "0.0.1"},
        }
    if method == "tools/list":
        time.sleep(options.list_delay)
        return {"tools": [_ECHO]}
    if method == "ping":
        return {}
    if method == "tools/call":
        text = str((params.get("arguments") or {}).get("text", ""))
        return {"content": [{"type": "text", "text": text}], "isError": False}
    raise LookupError(method)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--initialize-delay", type=float, default=0.0, metavar="S")
    parser.add_argument("--list-delay", type=float, default=0.0, metavar="S")
    options = parser.parse_args()
    for line in sys.stdin:
        try:
            message = json.loads(line)
        except json.JSONDecodeError:
            continue
        if "id" not in message:
            continue
        try:
            result = _result(message.get("method", ""), message.get("params") or {}, options)
        except LookupError as exc:
            error = {"code": -32601, "message": f"Method not found: {exc}"}
            _send({"jsonrpc": "2.0", "id": message["id"], "error": error})
            continue
        _send({"jsonrpc": "2.0", "id": message["id"], "result": result})


if __name__ == "__main__":
    main()
