"""The background writer's side of a server database: outages, and the check for gone writers.

:class:`OutageAware` is the base of ``WriteBehind`` (``history/writer.py``), which holds the
queue, the thread and the waiters; this part decides what the thread does about the database
itself.

- Busy or away: a transaction that a database kept locked refuses is tried again after
  ``_RETRY_PAUSE``. An outage of a server database (a restart, the network gone) is tried again
  too, the pause growing to ``_RETRY_MAX``, and the writes wait in the queue. While it is away
  (:attr:`OutageAware.unreachable`, one warning as it goes, one as it is back) nobody waits for
  the writer, and :meth:`OutageAware.full` says when the waiting writes fill their room
  (``_OUTAGE_BACKLOG`` bytes, or fewer than ``_ID_MARGIN`` row ids in hand), so that new calls
  go unrecorded (``server/history.py``).
- Writers that are gone: on a shared database (``Database.host`` set) the thread marks the
  pending rows of writers that are gone (``Database.mark_interrupted``) every ``check_every``
  seconds, after a batch or when it has waited that long for one, so an instance with no
  traffic still marks the rows of instances that died. Never while the database is away; a
  check that fails is left to the next one. A file's writers are checked only when a store
  opens it (their processes are this machine's, and the next process to open it does).
"""

from __future__ import annotations

import logging
import threading
import time
from abc import ABC, abstractmethod
from collections.abc import Callable
from typing import TYPE_CHECKING, TypeVar

from mcp_export.errors import HistoryError

if TYPE_CHECKING:
    from mcp_export.history.backend import Database
    from mcp_export.history.row_ids import RowIds

__all__ = ["CHECK_EVERY", "OutageAware"]

logger = logging.getLogger(__name__)
_T = TypeVar("_T")

CHECK_EVERY = 60.0
"""Seconds between a writer's checks for writers that are gone, on a shared database."""
_RETRY_PAUSE = 0.2
"""Seconds between tries of a database that was busy, and before the second try of one away."""
_RETRY_MAX = 2.0
"""The longest pause between tries of a server database that is away."""
_OUTAGE_BACKLOG = 32 << 20
"""Bytes of writes (as their log lines) that may wait for a server database that is away."""
_ID_MARGIN = 64
"""Row ids per table kept for the calls in flight while a server database is away."""


class OutageAware(ABC):
    """Retries, outages and checks of the writer's database (see the module doc).

    Args:
        check_every: seconds between checks for writers that are gone (shared databases only).
    """

    _db: Database
    _ids: RowIds
    _settled: threading.Condition
    """Guards the outage state below, with the writer's own."""

    def __init__(self, check_every: float) -> None:
        if check_every <= 0:
            raise ValueError(f"check_every must be a positive number of seconds, not {check_every}")
        # Guarded by _settled: why a server database cannot be reached now (None: it can), and
        # the bytes and the number of writes queued since.
        self._out: str | None = None
        self._out_bytes = 0
        self._out_writes = 0
        self._locked_warned = False
        self._check_every = check_every if self._db.host is not None else None
        self._checked = time.monotonic()  # the store that opens a database checks it at once

    @abstractmethod
    def _call_back(self) -> None:
        """Call the settled callbacks that are due (all of them while the database is away)."""

    @abstractmethod
    def _past_deadline(self) -> bool:
        """Whether ``close`` has run out of time."""

    @property
    def unreachable(self) -> str | None:
        """Why the server database cannot be reached now, or None (it can, or is a file)."""
        return self._out

    def full(self) -> bool:
        """Whether the database is away and the writes waiting for it fill the room kept for
        them (``_OUTAGE_BACKLOG`` bytes, or fewer than ``_ID_MARGIN`` row ids left in hand)."""
        with self._settled:
            if self._out is None:
                return False
            size = self._out_bytes
        return size >= _OUTAGE_BACKLOG or self._ids.fewer_than(_ID_MARGIN)

    def _count_waiting(self, line: bytes) -> None:
        """Count a write queued while the database is away (the caller holds ``_settled``)."""
        if self._out is not None:
            self._out_bytes += len(line)
            self._out_writes += 1

    def _until_check(self) -> float | None:
        """Seconds the thread may wait for a write before the next check is due (None: no
        checks, wait as long as it takes)."""
        if self._check_every is None:
            return None
        return max(0.0, self._checked + self._check_every - time.monotonic())

    def _check_gone(self) -> None:
        """Mark the pending rows of writers that are gone, if a check is due (module doc)."""
        if self._check_every is None or time.monotonic() - self._checked < self._check_every:
            return
        self._checked = time.monotonic()  # also when skipped: the next one is an interval away
        with self._settled:
            if self._out is not None:
                return
        try:
            marked = self._db.mark_interrupted()
        except HistoryError as exc:  # the next check will do; no write depends on it
            logger.debug("history: the check of writers that are gone failed: %s", exc)
            return
        if marked:
            logger.info("history: %d pending rows of writers that are gone marked", marked)

    def _retrying(self, work: Callable[[], _T]) -> _T:
        """``work`` (one transaction), tried again while the database is busy or away."""
        pause = _RETRY_PAUSE
        while True:
            try:
                done = work()
            except HistoryError as exc:
                if not self._db.busy(exc) or self._past_deadline():
                    raise
                if self._db.gone(exc):
                    self._away(exc)
                    time.sleep(pause)
                    pause = min(2 * pause, _RETRY_MAX)
                    continue
                if not self._locked_warned:
                    self._locked_warned = True
                    logger.warning("history: %s; the writes wait and are tried again", exc)
                time.sleep(_RETRY_PAUSE)
                continue
            self._back()
            return done

    def _away(self, exc: HistoryError) -> None:
        """The server database cannot be reached: say so once, and let every waiter go."""
        with self._settled:
            if self._out is not None:
                return
            self._out = str(exc)
            self._out_bytes = self._out_writes = 0
            self._settled.notify_all()
        logger.warning(
            "history: %s; calls go on, their writes wait and are applied once it is back (up to "
            "%d MB of them: past that, new calls are not recorded)",
            exc,
            _OUTAGE_BACKLOG >> 20,
        )
        self._call_back()

    def _back(self) -> None:
        with self._settled:
            if self._out is None:
                return
            self._out, waited = None, self._out_writes
        logger.warning(
            "history: %s answers again; the %d writes made while it was away are applied",
            self._db.location,
            waited,
        )
