"""Background work of a settings page on the qasync loop, tied to the page's lifetime.

A page starts a coroutine (a model list, a connection test, an MCP server probe) with
:meth:`PageTasks.start`; the window keeps answering while it runs. One task per key: starting a
key that is still running is refused, so a double click does not run the work twice. When the page
is destroyed its tasks are cancelled, so no continuation touches deleted widgets. An exception the
coroutine did not handle itself reaches the one error reporter (never only a console).
"""

from __future__ import annotations

import asyncio
from collections.abc import Coroutine
from typing import Any

from PySide6.QtCore import QObject, Signal
from PySide6.QtWidgets import QWidget

from app.errors import reporter

__all__ = ["PageTasks"]


class PageTasks(QObject):
    """The running background tasks of one widget, by key.

    Signals:
        busy_changed(key, busy): a task for ``key`` started (True) or ended (False).
    """

    busy_changed = Signal(str, bool)

    def __init__(self, owner: QWidget) -> None:
        super().__init__(owner)
        self._tasks: dict[str, asyncio.Task[Any]] = {}
        tasks = self._tasks
        # A plain function, not a bound method: this object dies together with its owner.
        owner.destroyed.connect(lambda *_: _cancel_all(tasks))

    def is_running(self, key: str) -> bool:
        """Whether the task for ``key`` is still running."""
        task = self._tasks.get(key)
        return task is not None and not task.done()

    def start(
        self, key: str, coroutine: Coroutine[Any, Any, Any], *, what: str
    ) -> asyncio.Task[Any] | None:
        """Run ``coroutine`` on the running asyncio loop.

        Args:
            key: one task per key at a time (``"refresh"``, ``"connect:time"``).
            coroutine: the work; it reports its own expected failures.
            what: what the work is, for the report of an unexpected failure ("Testing the
                connection").

        Returns:
            The task, or None when the key is busy or there is no running loop (reported).
        """
        if self.is_running(key):
            coroutine.close()
            return None
        try:
            task = asyncio.ensure_future(coroutine)
        except RuntimeError as exc:  # no asyncio loop under Qt (a bare QApplication)
            coroutine.close()
            reporter().error(f"{what}: the studio's event loop is not running ({exc})")
            return None
        self._tasks[key] = task
        self.busy_changed.emit(key, True)
        task.add_done_callback(lambda done: self._finished(key, done, what))
        return task

    def cancel_all(self) -> None:
        """Cancel every running task (the page is going away)."""
        _cancel_all(self._tasks)

    def _finished(self, key: str, task: asyncio.Task[Any], what: str) -> None:
        if self._tasks.get(key) is task:
            del self._tasks[key]
        if task.cancelled():
            return
        exc = task.exception()
        if exc is not None:
            reporter().exception(exc, context=what)
        try:
            self.busy_changed.emit(key, False)
        except RuntimeError:  # the page was deleted while the task ran
            pass


def _cancel_all(tasks: dict[str, asyncio.Task[Any]]) -> None:
    for task in list(tasks.values()):
        task.cancel()
    tasks.clear()
