"""A small stdio MCP tool server for the toolbox tests: the error cases a real server rarely shows.

Run it as ``python -m tests.fakes.tool_server [--stderr TEXT] [--exit-on-start CODE] [--http PORT]``
(``--http`` serves streamable HTTP on 127.0.0.1:PORT at ``/mcp`` instead of stdio). Tools:

- ``echo(text)`` returns ``text`` (and ``structuredContent`` ``{"text": …, "pid": …}``);
- ``slow_echo(text, ms)`` the same after ``ms`` milliseconds;
- ``pid()`` the server's process id, so tests can see restarts and check for orphans;
- ``env(name)`` and ``cwd()`` show how the server was started;
- ``fail(message)`` raises ``ToolError``: an ``isError`` result with the message;
- ``hang()`` waits until the caller cancels it; ``hang_cancellations(count, ms)`` waits (bounded)
  until the server has seen ``count`` such cancellations and returns how many it saw;
- ``crash(code)`` makes the whole process exit in the middle of the call;
- ``image()`` returns a PNG image block and a text block;
- ``read_only_lookup(key)`` carries ``readOnlyHint`` annotations.

Written with the SDK's ``MCPServer`` because the tests want a plain third-party-like server.
"""

from __future__ import annotations

import argparse
import base64
import os
import sys

import anyio
from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.types import ImageContent, TextContent, ToolAnnotations

server = MCPServer("fake-tools", version="0.0.1")


@server.tool(description="Returns its text.")
def echo(text: str) -> dict[str, object]:
    return {"text": text, "pid": os.getpid()}


@server.tool(description="Returns its text after ms milliseconds.")
async def slow_echo(text: str, ms: int = 100) -> dict[str, object]:
    await anyio.sleep(ms / 1000)
    return {"text": text, "pid": os.getpid()}


@server.tool(description="The server's process id.")
def pid() -> int:
    return os.getpid()


@server.tool(description="The value of an environment variable ('' when unset).")
def env(name: str) -> str:
    return os.environ.get(name, "")


@server.tool(description="The server's working directory.")
def cwd() -> str:
    return os.getcwd()


@server.tool(description="Always fails with the given message (an isError result).")
def fail(message: str = "the tool failed") -> str:
    raise ToolError(message)


# How many ``hang`` calls were cancelled, and an event per count reached, so a test can wait
# (bounded) for the server to have seen a cancellation instead of polling.
_cancelled_hangs = 0
_hang_events: dict[int, anyio.Event] = {}


@server.tool(description="Never answers until cancelled.")
async def hang() -> str:
    global _cancelled_hangs
    try:
        await anyio.sleep_forever()
    finally:
        _cancelled_hangs += 1
        _hang_events.setdefault(_cancelled_hangs, anyio.Event()).set()
        print("hang: cancelled", file=sys.stderr, flush=True)
    return "unreachable"


@server.tool(description="Waits up to ms until at least `count` hang calls were cancelled.")
async def hang_cancellations(count: int = 1, ms: int = 5000) -> int:
    with anyio.move_on_after(ms / 1000):
        await _hang_events.setdefault(count, anyio.Event()).wait()
    return _cancelled_hangs


@server.tool(description="Makes the server process exit mid-call.")
def crash(code: int = 7) -> str:
    print(f"crash: exiting with {code}", file=sys.stderr, flush=True)
    os._exit(code)


# A 1×1 transparent PNG.
_PNG = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAQAAAC1HAwCAAAAC0lEQVR42mNkYAAAAAYAAjCB0C8AAAAASUVORK5CYII="
)


@server.tool(description="Returns an image and a caption.")
def image() -> list[ImageContent | TextContent]:
    return [
        TextContent(type="text", text="a pixel"),
        ImageContent(type="image", data=base64.b64encode(_PNG).decode(), mime_type="image/png"),
    ]


@server.tool(
    description="Looks a key up; reads only.",
    annotations=ToolAnnotations(read_only_hint=True, idempotent_hint=True),
)
def read_only_lookup(key: str) -> str:
    return f"value of {key}"


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--stderr", help="write this to stderr on start")
    parser.add_argument("--exit-on-start", type=int, help="exit with this code before serving")
    parser.add_argument("--http", type=int, metavar="PORT", help="serve streamable HTTP instead")
    options = parser.parse_args()
    if options.stderr:
        print(options.stderr, file=sys.stderr, flush=True)
    if options.exit_on_start is not None:
        sys.exit(options.exit_on_start)
    if options.http is not None:
        server.run("streamable-http", host="127.0.0.1", port=options.http)
    else:
        server.run("stdio")


if __name__ == "__main__":
    main()
