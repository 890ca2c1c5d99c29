"""The one exception of a kind inside what a test caught, through any exception groups (a task
group or an ``anyio`` stream wraps what a client raises)."""

from __future__ import annotations

from typing import TypeVar

E = TypeVar("E", bound=BaseException)


def innermost(raised: BaseException, kind: type[E]) -> E:
    """The one ``kind`` exception inside ``raised`` (through any exception groups)."""
    while isinstance(raised, BaseExceptionGroup):
        matched, _ = raised.split(kind)
        assert matched is not None, raised
        (raised,) = matched.exceptions
    assert isinstance(raised, kind), raised
    return raised
