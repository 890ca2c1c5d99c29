"""Write-behind for the history store: writes queued by the caller, applied by a thread.

Why: a served server runs many calls at once on one event loop, and each call writes five or six
history rows, each an autocommitted SQLite transaction of ~80 µs. Inline, those commits hold the
loop while other calls wait to send their model requests (64 calls at once: ~30 ms of a batch).
Queued, the loop pays a queue put per write, and the background thread applies what has queued
up in one transaction (SQLite releases the interpreter lock while it works, so the thread runs on
another core).

Group commit: after the first write of a batch the thread waits ``_WINDOW`` (50 ms) for more
before it commits, unless a reader or ``close`` is waiting for it. Without the window it woke for
nearly every write, and each small transaction (and each hand-over of the interpreter lock
between it and the event loop) cost the served server ~1.2 ms of CPU per call at 64 calls at
once, against ~0.05 ms with it (bench/server_concurrency.py: batch 370–390 → 335–346 ms).

How it stays correct:

- Order: one thread applies the writes in the order they were queued.
- Ids: an insert returns at once with a provisional id (negative, so it can never be taken for a
  real row); for rows that can still change (runs, messages not yet complete) the thread maps it
  to the real rowid when the row is written, and later updates through the same store name the
  provisional id. The map forgets a row when an update gives it its final status, and keeps at
  most ``_MAPPED`` entries otherwise.
- Reads: the store waits for the queue to drain (``flush``) before it reads, so a reader sees
  every write made before.
- Failures: a write that names a row that is gone (a thread deleted meanwhile) is skipped with a
  warning, the rest of its batch still written; any other failure (disk full, file damaged,
  locked for longer than the busy timeout) is logged once and stops recording, as a failed write
  does for a served server without write-behind. Nothing is raised at the caller.
- Crashes: a process that dies loses what was still queued (at most the last window's writes);
  rows already written stay ``pending`` and are marked as interrupted on the next open, as before.
"""

from __future__ import annotations

import itertools
import logging
import queue
import sqlite3
import threading
from collections import OrderedDict
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ._errors import HistoryError

if TYPE_CHECKING:
    from ._history import HistoryStore

__all__ = ["WriteBehind"]

logger = logging.getLogger(__name__)

_BATCH = 512
"""The most writes applied in one transaction."""
_MAPPED = 4096
"""The most provisional ids remembered (a row waiting longer for its update is logged)."""
_FLUSH_TIMEOUT = 10.0
_WINDOW = 0.05
"""Seconds the thread gathers writes after the first of a batch (unless someone is waiting)."""
_FINAL = ("complete", "error")


@dataclass(frozen=True, slots=True)
class _Write:
    table: str
    row: int
    """Insert: the provisional id it answers for. Update: the row (real or provisional)."""
    values: dict[str, Any]
    insert: bool
    remember: bool = False
    """Insert: keep the provisional id's rowid for a later update."""


class _Skipped(Exception):
    """A write that names a row that is not there."""


class WriteBehind:
    """The background writer of one ``HistoryStore`` (see the module doc)."""

    def __init__(self, store: HistoryStore) -> None:
        self._store = store
        self._queue: queue.SimpleQueue[_Write | None] = queue.SimpleQueue()
        self._provisional = itertools.count(-1, -1)
        self._rowids: OrderedDict[int, int] = OrderedDict()  # the writer thread's alone
        self._settled = threading.Condition()
        self._queued = 0  # guarded by _settled
        self._waiting = 0  # readers in flush() and a close(): commit at once; guarded by _settled
        self._failed = False
        self._thread = threading.Thread(target=self._run, name="metaagent-history", daemon=True)
        self._thread.start()

    # --- the caller's side ----------------------------------------------------------------------

    def insert(self, table: str, values: dict[str, Any], *, updatable: bool) -> int:
        """Queue an insert; returns its provisional id (kept for updates when ``updatable``)."""
        row = next(self._provisional)
        self._put(_Write(table, row, values, insert=True, remember=updatable))
        return row

    def update(self, table: str, row: int, values: dict[str, Any]) -> None:
        """Queue an update of a row (by its real or provisional id)."""
        self._put(_Write(table, row, values, insert=False))

    def _put(self, write: _Write) -> None:
        if self._failed:
            return
        with self._settled:
            self._queued += 1
        self._queue.put(write)

    def flush(self) -> None:
        """Wait until every queued write is applied (or dropped after a failure).

        Raises:
            HistoryError: the writer did not catch up within 10 s.
        """
        with self._settled:
            self._waiting += 1
            self._settled.notify_all()
            try:
                caught_up = self._settled.wait_for(lambda: self._queued == 0, _FLUSH_TIMEOUT)
            finally:
                self._waiting -= 1
            if not caught_up:
                raise HistoryError(
                    f"the history writer of {self._store.path} did not catch up within "
                    f"{_FLUSH_TIMEOUT:g} s ({self._queued} writes queued); is the disk very slow?"
                )

    def close(self) -> None:
        """Apply what is queued and stop the thread (waits up to 10 s)."""
        with self._settled:
            self._waiting += 1  # for good: no more gathering
            self._settled.notify_all()
        self._queue.put(None)
        self._thread.join(_FLUSH_TIMEOUT)
        if self._thread.is_alive():
            logger.warning(
                "history: %d writes were still queued for %s at exit",
                self._queued,
                self._store.path,
            )

    # --- the writer thread ----------------------------------------------------------------------

    def _run(self) -> None:
        while True:
            batch = [self._queue.get()]  # wait for the first, then take what else is queued
            if batch[0] is not None:
                with self._settled:  # the group-commit window (see the module doc)
                    self._settled.wait_for(lambda: self._waiting > 0, _WINDOW)
            while batch[-1] is not None and len(batch) < _BATCH:
                try:
                    batch.append(self._queue.get_nowait())
                except queue.Empty:
                    break
            writes = [write for write in batch if write is not None]  # None: close() was called
            if writes:
                try:
                    self._apply(writes)
                finally:
                    with self._settled:
                        self._queued -= len(writes)
                        self._settled.notify_all()
            if batch[-1] is None:
                return

    def _apply(self, batch: list[_Write]) -> None:
        if self._failed:
            return
        try:
            self._commit(batch)
        except (_Skipped, HistoryError) as exc:
            if not _skippable(exc):
                self._fail(exc)
                return
            for write in batch:  # find the write at fault; keep the others
                try:
                    self._commit([write])
                except (_Skipped, HistoryError) as single:
                    if not _skippable(single):
                        self._fail(single)
                        return
                    logger.warning("history: a write was skipped: %s", single)

    def _commit(self, batch: list[_Write]) -> None:
        inserted: dict[int, int] = {}
        settled: list[int] = []

        def body(conn: sqlite3.Connection) -> None:
            from ._history import insert_row, update_row

            for write in batch:
                if write.insert:
                    rowid = insert_row(conn, write.table, write.values)
                    if write.remember:
                        inserted[write.row] = rowid
                    continue
                row = inserted.get(write.row) or self._rowids.get(write.row, write.row)
                if row < 0 or not update_row(conn, write.table, row, write.values):
                    raise _Skipped(f"no row {write.row} in {write.table} to update")
                if write.values.get("status") in _FINAL:
                    settled.append(write.row)

        self._store.transaction("write", body)
        self._rowids.update(inserted)
        for row in settled:
            self._rowids.pop(row, None)
        while len(self._rowids) > _MAPPED:
            self._rowids.popitem(last=False)

    def _fail(self, exc: BaseException) -> None:
        self._failed = True
        logger.warning("history: %s; calls are no longer recorded", exc)


def _skippable(exc: BaseException) -> bool:
    """A write at fault (a row that is gone), not a database that cannot be written."""
    return isinstance(exc, _Skipped) or isinstance(exc.__cause__, sqlite3.IntegrityError)
