"""Checking a document's agent off the GUI thread, again after each pause in the edits.

A view that shows something slow to work out from the whole agent (the tool hints, the client
rules) owns one :class:`AgentCheckWorker`. Each edit gives the document a new agent object, so the
worker thread reads a snapshot nobody changes. Edits while the view is shown ask for a new check
after :data:`REFRESH_DELAY_MS`; one check runs at a time, and a result made for an older agent is
dropped (and the check made again if the view is shown).

Results come back through one :class:`_Results` for the whole studio, made on the GUI thread and
never freed: a worker thread holds only it and plain data, so no Qt object can be freed on a worker
thread (see ``app.collector``).
"""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING

from PySide6.QtCore import QObject, QTimer, Signal

if TYPE_CHECKING:
    import logging
    from collections.abc import Callable
    from pathlib import Path

    from PySide6.QtWidgets import QWidget

    from app.document.agent_document import AgentDocument
    from schema_types.agent import Agent

__all__ = ["REFRESH_DELAY_MS", "AgentCheckWorker", "shared_results"]

REFRESH_DELAY_MS = 300
"""The pause after an edit before the agent is checked again (typing makes one check)."""


class _Results(QObject):
    """Carries results from worker threads to the GUI thread (a queued signal)."""

    made = Signal(object, int, object)  # the worker's key, generation, result or exception


_results: _Results | None = None


def shared_results() -> _Results:
    """The studio's one carrier of results from worker threads (its ``made`` signal: a key that
    tells whose result it is, a generation, the result or exception)."""
    global _results
    if _results is None:
        _results = _Results()
    return _results


def _make(
    results: _Results,
    key: object,
    generation: int,
    work: Callable[[Agent, Path | None], object],
    agent: Agent,
    path: Path | None,
    logger: logging.Logger,
    failure: str,
) -> None:
    """A worker thread's body: ``work`` on ``agent``, sent to the worker that asked."""
    try:
        result: object = work(agent, path)
    except Exception as exc:  # the thread's top: shown in the view, the studio goes on
        logger.exception(failure, agent.metadata.name)
        result = exc
    results.made.emit(key, generation, result)


class AgentCheckWorker(QObject):
    """Runs ``work`` on ``document``'s agent for ``view``, in worker threads.

    Args:
        view: the widget that shows the result (checks follow edits only while it is visible).
        document: the document whose agent is checked.
        work: the check, given the agent and its path; runs on a worker thread.
        done: called on the GUI thread with the current agent's result, or the exception
            ``work`` raised.
        thread_name: the worker threads' name.
        logger: where a failed check is logged.
        failure: the log message of a failed check, ``%s`` standing for the agent's name.
    """

    def __init__(
        self,
        view: QWidget,
        document: AgentDocument,
        work: Callable[[Agent, Path | None], object],
        done: Callable[[object], None],
        *,
        thread_name: str,
        logger: logging.Logger,
        failure: str,
    ) -> None:
        super().__init__(view)
        self._view = view
        self._document = document
        self._work = work
        self._done = done
        self._thread_name = thread_name
        self._logger = logger
        self._failure = failure
        self._generation = 0
        self._shown_generation = -1
        self._busy = False
        self._key = object()  # tells this worker's results from other workers'
        self._results = shared_results()
        self._results.made.connect(self._on_made)
        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.setInterval(REFRESH_DELAY_MS)
        self._timer.timeout.connect(self.refresh)
        document.changed_at.connect(self._on_agent_changed)

    def stale(self) -> bool:
        """Whether the agent changed since the shown result was made (or none was shown)."""
        return self._shown_generation != self._generation

    def is_current(self) -> bool:
        """Whether the shown result is of the agent as it stands."""
        return not self._busy and not self.stale()

    def _on_agent_changed(self, _path: object) -> None:
        self._generation += 1
        if self._view.isVisible():
            self._timer.start()

    def refresh(self) -> None:
        """Check the agent as it stands (in a worker thread; one at a time)."""
        self._timer.stop()
        if self._busy:
            return  # the running check's end starts the next one
        self._busy = True
        document = self._document
        args = (
            self._results,
            self._key,
            self._generation,
            self._work,
            document.agent,
            document.path,
            self._logger,
            self._failure,
        )
        threading.Thread(target=_make, args=args, name=self._thread_name, daemon=True).start()

    def _on_made(self, key: object, generation: int, result: object) -> None:
        if key is not self._key:
            return
        self._busy = False
        if generation != self._generation:
            if self._view.isVisible():
                self.refresh()  # the agent changed while this one was made
            return
        self._shown_generation = generation
        self._done(result)
