"""The one error reporter of the studio: every error reaches the person through it.

Anything that goes wrong (a refused edit, a file that cannot be read, an exception in a slot or in
an ``@qasync.asyncSlot`` coroutine) is turned into a :class:`Report` and emitted by the shared
:class:`ErrorReporter`. The main window shows reports in its status bar and, for errors with
details (tracebacks), in a dialog. :func:`install_excepthook` routes ``sys.excepthook`` and the
asyncio loop's exception handler here, so no traceback goes only to a console.

Usage::

    from app.errors import reporter
    reporter().error("Could not save travel.agent.yaml", detail=str(exc))
"""

from __future__ import annotations

import asyncio
import logging
import sys
import traceback
from collections.abc import Callable
from dataclasses import dataclass, field
from types import TracebackType
from typing import Any, Literal

from PySide6.QtCore import QObject, Signal

__all__ = [
    "ErrorReporter",
    "Level",
    "Report",
    "install_excepthook",
    "reporter",
    "uninstall_excepthook",
]

logger = logging.getLogger(__name__)

Level = Literal["info", "warning", "error"]


@dataclass(frozen=True)
class Report:
    """One thing to tell the person.

    Attributes:
        level: ``info`` and ``warning`` go to the status bar; ``error`` may open a dialog.
        message: one line a person understands (what happened and what to do).
        detail: optional longer text (a traceback, a server's stderr) shown on demand.
    """

    level: Level
    message: str
    detail: str = ""
    context: dict[str, Any] = field(default_factory=lambda: dict[str, Any]())


class ErrorReporter(QObject):
    """Collects reports and emits them; the main window listens to :attr:`reported`."""

    reported = Signal(object)  # Report

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.history: list[Report] = []

    def report(self, report: Report) -> None:
        """Emit ``report`` (and keep it in :attr:`history`, the last 200)."""
        self.history.append(report)
        del self.history[:-200]
        log = logger.error if report.level == "error" else logger.info
        log("%s%s", report.message, f"\n{report.detail}" if report.detail else "")
        self.reported.emit(report)

    def info(self, message: str, *, detail: str = "") -> None:
        """Report something worth a status-bar line."""
        self.report(Report("info", message, detail))

    def warning(self, message: str, *, detail: str = "") -> None:
        """Report a refused or questionable action (status bar)."""
        self.report(Report("warning", message, detail))

    def error(self, message: str, *, detail: str = "") -> None:
        """Report a failure the person must know about."""
        self.report(Report("error", message, detail))

    def exception(self, exc: BaseException, *, context: str = "") -> None:
        """Report an exception with its traceback as the detail."""
        detail = "".join(traceback.format_exception(type(exc), exc, exc.__traceback__))
        what = str(exc) or type(exc).__name__
        message = f"{context}: {what}" if context else f"Unexpected error: {what}"
        self.report(Report("error", message, detail))


_reporter: ErrorReporter | None = None


def reporter() -> ErrorReporter:
    """The process-wide reporter (created on first use)."""
    global _reporter
    if _reporter is None:
        _reporter = ErrorReporter()
    return _reporter


_ExceptHook = Callable[[type[BaseException], BaseException, TracebackType | None], Any]
_previous_hook: _ExceptHook | None = None


def _excepthook(
    exc_type: type[BaseException], exc: BaseException, tb: TracebackType | None
) -> None:
    if issubclass(exc_type, KeyboardInterrupt):
        sys.__excepthook__(exc_type, exc, tb)
        return
    if exc.__traceback__ is None and tb is not None:
        exc = exc.with_traceback(tb)
    reporter().exception(exc)
    # Keep whatever hook was there before (pytest-qt's captures exceptions to fail the test).
    if _previous_hook is not None and _previous_hook is not sys.__excepthook__:
        _previous_hook(exc_type, exc, tb)


def _loop_exception_handler(loop: asyncio.AbstractEventLoop, context: dict[str, Any]) -> None:
    exc = context.get("exception")
    if isinstance(exc, BaseException):
        if isinstance(exc, asyncio.CancelledError):
            return
        reporter().exception(exc, context=str(context.get("message") or "Background task"))
    else:
        reporter().error(str(context.get("message", "Unexpected error in a background task")))


def install_excepthook(loop: asyncio.AbstractEventLoop | None = None) -> None:
    """Route uncaught exceptions (and the asyncio loop's unhandled ones) to the reporter.

    qasync hands exceptions raised inside ``@asyncSlot`` coroutines to ``sys.excepthook``, so
    they reach the reporter too.
    """
    global _previous_hook
    if sys.excepthook is not _excepthook:
        _previous_hook = sys.excepthook
        sys.excepthook = _excepthook
    if loop is not None:
        loop.set_exception_handler(_loop_exception_handler)


def uninstall_excepthook() -> None:
    """Put back the hook that was there before :func:`install_excepthook`."""
    global _previous_hook
    if sys.excepthook is _excepthook:
        sys.excepthook = _previous_hook or sys.__excepthook__
    _previous_hook = None
