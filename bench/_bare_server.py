"""The cold-start baseline: a bare mcp SDK low-level server with a given tool list, over stdio.

Run: ``python bench/_bare_server.py TOOLS.json`` where the file holds the ``tools`` array of a
``tools/list`` answer (``bench/server_cold_start.py`` writes the served agent's own listing there,
so both servers list exactly the same tools). Calls echo their arguments. Nothing else is loaded:
this is what any MCP server built on the SDK pays before it can answer.
"""

from __future__ import annotations

import json
import sys
from typing import Any

import anyio
import mcp_types as types
from mcp.server.lowlevel.server import Server
from mcp.server.stdio import stdio_server


def main(tools_file: str) -> None:
    with open(tools_file, encoding="utf-8") as handle:
        listing = types.ListToolsResult(
            tools=[types.Tool.model_validate(t) for t in json.load(handle)]
        )

    async def list_tools(ctx: Any, params: Any) -> types.ListToolsResult:
        return listing

    async def call_tool(ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
        text = json.dumps(params.arguments or {})
        return types.CallToolResult(content=[types.TextContent(type="text", text=text)])

    server: Server[Any] = Server(
        "bare", version="1.0.0", on_list_tools=list_tools, on_call_tool=call_tool
    )

    async def serve() -> None:
        async with stdio_server() as (read_stream, write_stream):
            await server.run(read_stream, write_stream, server.create_initialization_options())

    anyio.run(serve)


if __name__ == "__main__":
    main(sys.argv[1])
