"""Telling someone who waits for a model's answer that a request is about to be sent again.

Inside ``report_retries(listener)`` (a context variable, so it holds for the task that enters
it and the tasks it starts) every wait before a retry is first told to ``listener`` as a
:class:`RetryWait`. The chat session uses it to show the step; the providers need not know who
listens. The toolbox's counterpart for its servers is ``toolbox.steps``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass

from mcp_export.errors import ProviderError

__all__ = ["RetryWait", "report_retries", "retry_listener"]


@dataclass(frozen=True)
class RetryWait:
    """A request failed in a way a retry may help; it is sent again after ``delay`` seconds.

    Attributes:
        reason: a few words on what failed (``connection refused``, ``status 503``).
        retry: which retry comes next (1 for the first).
        retries: how many retries the policy allows.
        delay: seconds until it is sent again.
        error: the failure as it would be raised (redacted).
    """

    reason: str
    retry: int
    retries: int
    delay: float
    error: ProviderError


_retry_listener: ContextVar[Callable[[RetryWait], None] | None] = ContextVar(
    "retry_listener", default=None
)


@contextmanager
def report_retries(listener: Callable[[RetryWait], None]) -> Iterator[None]:
    """Tell ``listener`` of every wait before a retry made inside the block (by this task, or a
    task it starts there); it is called on the task that waits and must be quick."""
    token = _retry_listener.set(listener)
    try:
        yield
    finally:
        _retry_listener.reset(token)


def retry_listener() -> Callable[[RetryWait], None] | None:
    """The listener of the running task, if any (for the retry loop)."""
    return _retry_listener.get()
