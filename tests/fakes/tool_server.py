"""A small stdio MCP tool server for the toolbox tests: the error cases a real server rarely shows.

Run it as ``python -m tests.fakes.tool_server [OPTIONS]``. Without options it is a well-behaved
stdio server. The options are the faults a tool server can show (``--help`` lists them):

- ``--stderr TEXT`` writes TEXT to stderr on start; ``--exit-on-start CODE`` then exits;
- ``--never-initialize``, ``--hang-tools-list``, ``--garbage-tools-list``, ``--invalid-schema-tool``
  run the hand-written protocol loop of ``tests.fakes.faulty_mcp`` with that fault;
- ``--silent-while PATH`` never initializes while PATH exists at start, else serves normally;
- ``--garbage-stdout`` writes lines that are not JSON-RPC to stdout (on start and in every
  ``echo``), as a server that logs to stdout does;
- ``--flood-stderr MB`` writes MB megabytes to stderr, in a thread, while it serves;
- ``--http PORT`` serves streamable HTTP on 127.0.0.1:PORT at ``/mcp`` instead of stdio; with
  ``--http 0`` it takes a free port and writes it to stdout once it listens.

Tools:

- ``echo(text)`` returns ``text`` (and ``structuredContent`` ``{"text": …, "pid": …}``);
- ``slow_echo(text, ms)`` the same after ``ms`` milliseconds;
- ``pid()`` the server's process id, so tests can see restarts and check for orphans;
- ``env(name)`` and ``cwd()`` show how the server was started;
- ``fail(message)`` raises ``ToolError``: an ``isError`` result with the message;
- ``hang()`` waits until the caller cancels it; ``hang_cancellations(count, ms)`` waits (bounded)
  until the server has seen ``count`` such cancellations and returns how many it saw;
- ``crash(code)`` makes the whole process exit in the middle of the call;
- ``huge(mb)`` returns a text of ``mb`` megabytes;
- ``image()`` returns a PNG image block and a text block;
- ``read_only_lookup(key)`` carries ``readOnlyHint`` annotations.

Written with the SDK's ``MCPServer`` because the tests want a plain third-party-like server.
"""

from __future__ import annotations

import argparse
import base64
import os
import socket
import sys
import threading
from pathlib import Path

import anyio
import uvicorn
from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.types import ImageContent, TextContent, ToolAnnotations

from tests.fakes.faulty_mcp import FAULTS
from tests.fakes.faulty_mcp import serve as serve_fault

server = MCPServer("fake-tools", version="0.0.1")

# Set by --garbage-stdout: ``echo`` then writes a line that is not JSON-RPC to stdout too.
_garbage_stdout = False


@server.tool(description="Returns its text.")
def echo(text: str) -> dict[str, object]:
    if _garbage_stdout:
        print(f"echo called with {text!r}", flush=True)
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
    _stop_flood()  # so that this line is the last the server writes
    print(f"crash: exiting with {code}", file=sys.stderr, flush=True)
    os._exit(code)


@server.tool(description="Returns a text of mb megabytes.")
def huge(mb: float = 20) -> str:
    return "x" * int(mb * 1024 * 1024)


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


# Set by --flood-stderr: the thread writing the flood, and how to stop it.
_flood: threading.Thread | None = None
_flood_stopped = threading.Event()


def _flood_stderr(megabytes: float) -> None:
    line = b"flood " + b"." * 1017 + b"\n"
    for index in range(int(megabytes * 1024)):
        if _flood_stopped.is_set():
            break
        sys.stderr.buffer.write(line if index % 1000 else b"flood line %d\n" % index)
    sys.stderr.buffer.write(b"flood: over\n")
    sys.stderr.buffer.flush()


def _stop_flood() -> None:
    if _flood is not None:
        _flood_stopped.set()
        _flood.join()


async def _serve_http(port: int) -> None:
    """Streamable HTTP on 127.0.0.1:PORT; with 0, a free port, written to stdout once listening
    (connections made from then on wait in the backlog until the server accepts them)."""
    listener = socket.socket()
    listener.bind(("127.0.0.1", port))
    listener.listen(64)
    print(listener.getsockname()[1], flush=True)
    config = uvicorn.Config(server.streamable_http_app(), log_level="warning")
    await uvicorn.Server(config).serve(sockets=[listener])


def main() -> None:
    global _garbage_stdout, _flood
    parser = argparse.ArgumentParser()
    parser.add_argument("--stderr", help="write this to stderr on start")
    parser.add_argument("--exit-on-start", type=int, help="exit with this code before serving")
    for fault, what in FAULTS.items():
        parser.add_argument(f"--{fault}", action="store_true", help=what)
    parser.add_argument("--silent-while", type=Path, metavar="PATH", help="never initialize")
    parser.add_argument("--garbage-stdout", action="store_true", help="write non-JSON to stdout")
    parser.add_argument("--flood-stderr", type=float, metavar="MB", help="flood stderr")
    parser.add_argument("--http", type=int, metavar="PORT", help="serve streamable HTTP instead")
    options = parser.parse_args()
    if options.stderr:
        print(options.stderr, file=sys.stderr, flush=True)
    if options.exit_on_start is not None:
        sys.exit(options.exit_on_start)
    for fault in FAULTS:
        if getattr(options, fault.replace("-", "_")):
            serve_fault(fault)
            return
    if options.silent_while is not None and options.silent_while.exists():
        serve_fault("never-initialize")
        return
    if options.garbage_stdout:
        _garbage_stdout = True
        print("fake-tools starting (this line is not JSON-RPC)", flush=True)
    if options.flood_stderr:
        _flood = threading.Thread(target=_flood_stderr, args=(options.flood_stderr,), daemon=True)
        _flood.start()
    if options.http is not None:
        anyio.run(_serve_http, options.http)
    else:
        server.run("stdio")


if __name__ == "__main__":
    main()
