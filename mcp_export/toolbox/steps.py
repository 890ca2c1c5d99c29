"""What a caller of the toolbox is waiting for while a tool server starts.

Starting a server (spawning it, or connecting to its URL, and the ``initialize`` handshake) and
listing its tools can take seconds. Inside ``report_server_steps(listener)`` (a context
variable, so it holds for the task that enters it and the tasks it starts there) a caller that
waits for a server to come up tells ``listener`` which step the server is at, as a
:class:`ServerStep`: once when the wait begins, then at each change. Nothing is reported for a
server that is already up. The toolbox knows nothing of who listens (the chat session shows the
steps).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Literal

__all__ = ["ServerPhase", "ServerStep", "report_server_steps", "server_step_listener"]

ServerPhase = Literal["initialize", "tools/list"]
"""What the server has not answered yet: the handshake (it may still be starting), or the
listing of its tools."""


@dataclass(frozen=True)
class ServerStep:
    """A tool server a caller waits for is at ``phase``.

    Attributes:
        server: the server's name in the agent file.
        phase: ``initialize`` (starting, or connecting, and the handshake) or ``tools/list``.
        remote: whether it is reached at a URL (connected to) rather than started (stdio).
    """

    server: str
    phase: ServerPhase
    remote: bool


_listener: ContextVar[Callable[[ServerStep], None] | None] = ContextVar(
    "server_step_listener", default=None
)


@contextmanager
def report_server_steps(listener: Callable[[ServerStep], None]) -> Iterator[None]:
    """Tell ``listener`` the steps of the servers waited for inside the block; it is called on
    the event loop's thread and must be quick."""
    token = _listener.set(listener)
    try:
        yield
    finally:
        _listener.reset(token)


def server_step_listener() -> Callable[[ServerStep], None] | None:
    """The listener of the current context, or None."""
    return _listener.get()
