"""A loopback address where nothing answers, held for as long as a test needs it.

Binding port 0, closing the socket and then using the number is a race: between the close and
the use another process may take the port (a parallel test's server, any program on the box),
and the "nothing answers" test then talks to it. ``refused_origin`` keeps the socket bound but
never listens on it: no one else can bind the port while the block runs, and a connection to it
is refused at once (the kernel answers a connection to a bound, non-listening port with a reset).

A server that needs a free port binds port 0 itself and reports the port it got (the fake model
servers, ``tests.fakes.tool_server --http 0``, ``run_http(HttpAddress("127.0.0.1", 0))``).
"""

from __future__ import annotations

import socket
from collections.abc import Iterator
from contextlib import contextmanager

__all__ = ["refused_origin"]


@contextmanager
def refused_origin() -> Iterator[str]:
    """``http://127.0.0.1:PORT`` where connections are refused until the block ends."""
    with socket.socket() as holder:
        holder.bind(("127.0.0.1", 0))
        port: int = holder.getsockname()[1]
        yield f"http://127.0.0.1:{port}"
