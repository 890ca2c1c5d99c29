"""A hand-written stdio MCP server for the faults the SDK's own server cannot be made to show.

``tests.fakes.tool_server`` runs this loop for its protocol-level fault modes (see
``FAULTS``). It speaks just enough of the 2025-11-25 protocol over newline-delimited JSON-RPC:
``server/discover`` is refused as an unknown method (so a client in ``auto`` mode falls back to the
``initialize`` handshake), ``initialize`` and ``ping`` are answered, notifications are ignored, and
``tools/list`` / ``tools/call`` answer as the fault says. It never imports ``mcp``, so it starts
in a few milliseconds, and it ends when its stdin ends.
"""

from __future__ import annotations

import json
import sys
from typing import Any

__all__ = ["FAULTS", "serve"]

FAULTS = {
    "never-initialize": "reads every request and never answers any",
    "hang-tools-list": "answers initialize, never answers tools/list",
    "garbage-tools-list": "answers tools/list with a result that is not a tool list",
    "invalid-schema-tool": "lists echo and a tool whose inputSchema is not a valid JSON Schema",
}

_ECHO = {
    "name": "echo",
    "description": "Returns its text.",
    "inputSchema": {"type": "object", "properties": {"text": {"type": "string"}}},
}
_BROKEN = {
    "name": "broken",
    "description": "Its parameters are not a valid JSON Schema.",
    "inputSchema": {"type": "object", "properties": {"x": {"type": "strnig"}}},
}


def _send(message: dict[str, Any]) -> None:
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()


def _answer(fault: str, method: str, params: dict[str, Any]) -> dict[str, Any] | None:
    """The ``result`` for a request (None: leave it unanswered)."""
    if method == "initialize":
        return {
            "protocolVersion": params.get("protocolVersion", "2025-11-25"),
            "capabilities": {"tools": {}},
            "serverInfo": {"name": f"faulty ({fault})", "version": "0.0.1"},
        }
    if method == "ping":
        return {}
    if method == "tools/list":
        if fault == "hang-tools-list":
            return None
        if fault == "garbage-tools-list":
            return {"tools": "this is not a list of tools"}
        return {"tools": [_ECHO, _BROKEN]}
    if method == "tools/call":
        text = str((params.get("arguments") or {}).get("text", ""))
        return {"content": [{"type": "text", "text": text}], "isError": False}
    raise LookupError(method)


def serve(fault: str) -> None:
    """Answer stdin's requests as ``fault`` says, until stdin ends."""
    for line in sys.stdin:
        try:
            message = json.loads(line)
        except json.JSONDecodeError:
            continue
        if fault == "never-initialize" or "id" not in message:
            continue
        try:
            result = _answer(fault, message.get("method", ""), message.get("params") or {})
        except LookupError as exc:
            error = {"code": -32601, "message": f"Method not found: {exc}"}
            _send({"jsonrpc": "2.0", "id": message["id"], "error": error})
            continue
        if result is not None:
            _send({"jsonrpc": "2.0", "id": message["id"], "result": result})
