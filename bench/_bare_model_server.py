"""The served-call baseline: a bare mcp SDK low-level server whose one tool asks a model.

Run: ``python bench/_bare_model_server.py BASE_URL [--http PORT]``. Serves ``book_flight`` (the
benchmark agent's tool: ``destination``, ``passengers``) over stdio, or over streamable HTTP at
``http://127.0.0.1:PORT/mcp`` with ``--http`` (port 0 picks one; the port is printed on stdout
once the socket listens). Each call makes the model request the served agent makes (system prompt
and the filled prompt, streamed, usage asked for) with plain aiohttp on one session whose
connector has no connection limit (``TCPConnector(limit=0)``), decodes the stream's events, and
answers with the text. Nothing else is loaded: this is what an SDK server built by hand for the
same job pays per call.

The soft ``RLIMIT_NOFILE`` is raised to the hard limit, so a thousand sockets at once fit.
"""

from __future__ import annotations

import argparse
import json
import socket
from typing import Any

import aiohttp
import anyio
import mcp_types as types
from _proc import raise_file_limit
from mcp.server.lowlevel.server import Server
from mcp.server.stdio import stdio_server

SYSTEM = "You are a travel agent."
TOOL = types.Tool(
    name="book_flight",
    description="Books a flight.",
    input_schema={
        "type": "object",
        "properties": {
            "destination": {"type": "string"},
            "passengers": {"type": "integer", "minimum": 1, "default": 1},
        },
        "required": ["destination"],
    },
)


class Model:
    """The model requests: one aiohttp session without a connection limit, made on first use."""

    def __init__(self, base_url: str) -> None:
        self.url = base_url.rstrip("/") + "/chat/completions"
        self.headers = {"Authorization": "Bearer sk-bench", "Content-Type": "application/json"}
        self._http: aiohttp.ClientSession | None = None

    def http(self) -> aiohttp.ClientSession:
        if self._http is None:
            connector = aiohttp.TCPConnector(limit=0)
            self._http = aiohttp.ClientSession(connector=connector, headers=self.headers)
        return self._http

    async def aclose(self) -> None:
        if self._http is not None:
            await self._http.close()


def build(model: Model) -> Server[Any]:

    async def list_tools(ctx: Any, params: Any) -> types.ListToolsResult:
        return types.ListToolsResult(tools=[TOOL])

    async def call_tool(ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
        arguments = params.arguments or {}
        prompt = (
            f"Book a flight to {arguments['destination']} "
            f"for {arguments.get('passengers', 1)} passenger(s)."
        )
        body = {
            "model": "fake-model",
            "messages": [
                {"role": "system", "content": SYSTEM},
                {"role": "user", "content": prompt},
            ],
            "stream": True,
            "stream_options": {"include_usage": True},
        }
        parts: list[str] = []
        async with model.http().post(model.url, data=json.dumps(body).encode()) as response:
            response.raise_for_status()
            async for line in response.content:
                if not line.startswith(b"data: ") or line.startswith(b"data: [DONE]"):
                    continue
                for choice in json.loads(line[6:])["choices"]:
                    parts.append(choice["delta"].get("content") or "")
        text = "".join(parts)
        return types.CallToolResult(content=[types.TextContent(type="text", text=text)])

    return Server("bare", version="1.0.0", on_list_tools=list_tools, on_call_tool=call_tool)


async def serve_stdio(model: Model) -> None:
    server = build(model)
    try:
        async with stdio_server() as (read_stream, write_stream):
            await server.run(read_stream, write_stream, server.create_initialization_options())
    finally:
        await model.aclose()


async def serve_http(model: Model, port: int, stateless: bool = False) -> None:
    import uvicorn

    server = build(model)
    app = server.streamable_http_app(
        streamable_http_path="/mcp", host="127.0.0.1", stateless_http=stateless
    )
    sock = socket.socket()
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", port))
    sock.listen(4096)
    sock.setblocking(False)
    print(sock.getsockname()[1], flush=True)
    config = uvicorn.Config(
        app, log_level="warning", log_config=None, access_log=False, lifespan="on"
    )
    try:
        await uvicorn.Server(config).serve(sockets=[sock])
    finally:
        await model.aclose()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("base_url")
    parser.add_argument("--http", type=int, metavar="PORT")
    parser.add_argument("--stateless", action="store_true", help="with --http: no sessions")
    args = parser.parse_args()
    raise_file_limit()
    model = Model(args.base_url)
    if args.http is None:
        anyio.run(serve_stdio, model)
    else:
        anyio.run(serve_http, model, args.http, args.stateless)


if __name__ == "__main__":
    main()
