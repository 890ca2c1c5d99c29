"""Write-behind for the history store: writes logged and queued by the caller, applied by a thread.

Why: a served server runs many calls at once on one event loop, and each call writes five or six
history rows, each an autocommitted SQLite transaction. Inline, those commits hold the loop while
other calls wait to send their model requests. Behind, the loop pays a line appended to a file and a
queue put per write, and the background thread applies what has queued up in one transaction (SQLite
releases the interpreter lock while it works, so the thread runs on another core).

Group commit: after the first write of a batch the thread waits ``_WINDOW`` (1 s) for more before
it commits, unless a reader or ``close`` is waiting for it. Woken for every write instead, its small
transactions and the hand-overs of the interpreter lock between it and the event loop cost the
served server CPU on every call (README, benchmarks). Within the process nothing waits for it (a
reader makes the thread commit first); another process sees the rows up to a second later.

How it stays correct:

- Nothing answered for is lost: each write is in the store's write log (``history/write_log.py``)
  before the caller gets its id. A process that dies leaves the log, and the next store that
  opens the database applies it; ``close`` applies the queue for up to ``_CLOSE_WITHIN`` seconds
  and hands what is left over the same way (with a warning saying where it is).
- Ids: the caller gets the real id of the row it inserts at once, from blocks this store
  reserves from the database (``history/row_ids.py``); the thread reserves the next block before
  the current one runs out. A store whose file another process keeps locked when it opens hands
  out provisional ids meanwhile; before it applies anything, the thread reserves real ids for
  them, logs what they became, and does what the open left to it (``catch_up``: the logs of
  ended processes, their pending rows).
- Order: one thread applies the writes in the order they were logged and queued.
- Reads: the store waits until the writes made before it are applied (``flush``), so a reader
  sees every one of them. Each write gets a number in the order it was queued; a reader waits
  for the writes up to its number only, so a busy server's readers are not kept waiting by the
  writes made after them. ``on_applied`` lets an event loop wait the same way without a thread.
- A database on a server (PostgreSQL) has no write log: the rows are for other machines too,
  and a served call waits until its rows are applied before it answers (``server/history.py``).
- Failures: a write that names a row that is gone (a thread deleted meanwhile) is skipped with a
  warning, the rest of its batch still written. A database kept locked by another process is
  tried again. Any other failure (file damaged, disk full) is logged once and stops applying:
  the writes go on into the log, for the next start, and nothing is raised at the caller.

An outage of a server database (a restart, the network gone) is not a failure: the writes wait
in the queue and no ids are reserved on the caller's thread while it is away; how the thread
tries again, and when it checks a shared database for writers that are gone (also while no
writes come), is in ``history/outage.py``.
"""

from __future__ import annotations

import logging
import queue
import threading
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from mcp_export.errors import HistoryError
from mcp_export.history.outage import CHECK_EVERY, OutageAware
from mcp_export.history.row_ids import RowIds
from mcp_export.history.rows import ROW_ID_TABLES, Write, new_write
from mcp_export.history.write_log import WriteLog

if TYPE_CHECKING:
    from mcp_export.history.backend import Database

__all__ = ["WriteBehind"]

logger = logging.getLogger(__name__)

_BATCH = 2048
"""The most writes applied in one transaction (~50 ms of work: ``close`` checks its time between
transactions)."""
_FLUSH_TIMEOUT = 10.0
_CLOSE_WITHIN = 5.0
"""Seconds ``close`` spends applying the queue before it hands the rest over in the log."""
_WINDOW = 1.0
"""Seconds the thread gathers writes after the first of a batch (unless someone is waiting)."""

_Queued = tuple[Write, int]
"""A write and the size of the log once it was appended (0 without a log)."""


class WriteBehind(OutageAware):
    """The background writer of one store's database (see the module doc).

    Args:
        database: the store's database (the writer uses ``database.for_writer()``).
        pid: this process, as the write log names it.
        start: this process's start marker (``rows.process_start_marker``).
        check_every: seconds between checks for writers that are gone, on a shared database
            (``history/outage.py``).

    Raises:
        ValueError: ``check_every`` is not a positive number.
        HistoryError: the write log cannot be created, or row ids cannot be reserved.
    """

    def __init__(
        self,
        database: Database,
        pid: int,
        start: str | None,
        *,
        check_every: float = CHECK_EVERY,
        catch_up: Callable[[], None] | None = None,
    ) -> None:
        self._db = database.for_writer()
        self._own_db = self._db is not database
        self._catch_up = catch_up
        self._log: WriteLog | None = None
        try:
            if database.path is not None:
                try:
                    self._log = WriteLog(database.path, pid, start)
                except OSError as exc:
                    raise HistoryError(
                        f"cannot create the write log of the history database {database.path}: "
                        f"{exc}; check that its directory is writable"
                    ) from exc
            self._ids = RowIds(self._db, provisional=database.path is not None)
        except HistoryError:
            self._close_db()
            raise
        self._queue: queue.SimpleQueue[_Queued | None] = queue.SimpleQueue()
        self._settled = threading.Condition()
        # Guarded by _settled: writes numbered (queued) and done (applied or dropped); readers in
        # flush() and a close() (commit at once); callbacks waiting for a number; the log's size
        # up to the last applied write; close's deadline.
        self._numbered = 0
        self._done = 0
        self._waiting = 0
        self._callbacks: list[tuple[int, Callable[[], None]]] = []
        self._applied = 0
        self._deadline: float | None = None
        self._logged_count = 0  # writes in the log, and how many of them are applied
        self._applied_count = 0
        self._failed = False
        try:
            super().__init__(check_every)
        except ValueError:
            self._close_db()
            raise
        self._thread = threading.Thread(target=self._run, name="metaagent-history", daemon=True)
        self._thread.start()

    @property
    def _queued(self) -> int:
        return self._numbered - self._done

    # --- the caller's side ----------------------------------------------------------------------

    def insert(self, table: str, values: dict[str, Any]) -> int:
        """Log and queue an insert; returns the row's id (0 for a thread: its id is a uuid).

        Raises:
            HistoryError: no row id is left and none can be reserved (the thread reserves the
                next block long before, unless the database has stayed locked all that time).
        """
        row_id = self._ids.take(table, self._out) if table in ROW_ID_TABLES else 0
        self._put(new_write(table, {"id": row_id, **values} if row_id else values))
        return row_id

    def update(self, table: str, row: int, values: dict[str, Any]) -> None:
        """Log and queue an update of a row."""
        write = new_write(table, values, row)
        self._put(self._ids.real(write) if row < 0 else write)

    def _put(self, write: Write) -> None:
        line = write.line() if self._log is not None or self._out is not None else b""
        with self._settled:
            self._count_waiting(line)
            size = self._append(line)
            if size:
                self._logged_count += 1
            if self._failed:
                return  # kept in the log for the next start, if there is one
            self._numbered += 1
        self._queue.put((write, size))

    def flush(self) -> None:
        """Wait until every write queued so far is applied (or the writer has stopped applying).

        Raises:
            HistoryError: the writer did not catch up within 10 s.
        """
        with self._settled:
            target = self._numbered
            if self._done >= target:
                return
            if self._out is None:
                self._waiting += 1
                self._settled.notify_all()
                try:
                    self._settled.wait_for(
                        lambda: self._done >= target or self._out is not None, _FLUSH_TIMEOUT
                    )
                finally:
                    self._waiting -= 1
            if self._done >= target:
                return
            if self._out is not None:
                raise HistoryError(
                    f"{self._out}; {target - self._done} writes wait for it, try again once "
                    "it is back"
                )
            raise HistoryError(
                f"the history writer of {self._db.location} did not catch up within "
                f"{_FLUSH_TIMEOUT:g} s ({target - self._done} writes queued); is the "
                "database very slow, or kept locked by another process?"
            )

    def on_applied(self, callback: Callable[[], None]) -> bool:
        """Call ``callback`` (on the writer's thread) once every write queued so far is applied.

        Returns:
            False when they already are, or when a server database cannot be reached now (the
            callback is not called); True when it will be, also when the writer stops applying,
            closes or loses the database first.
        """
        with self._settled:
            target = self._numbered
            if self._done >= target or self._out is not None:
                return False
            self._callbacks.append((target, callback))
            self._waiting += 1  # commit at once: a caller waits
            self._settled.notify_all()
        return True

    def close(self) -> None:
        """Apply what is queued (for up to 5 s), hand the rest over in the log, stop the thread."""
        deadline = time.monotonic() + _CLOSE_WITHIN
        with self._settled:
            self._deadline = deadline
            self._waiting += 1  # for good: no more gathering
            self._settled.notify_all()
        self._queue.put(None)
        self._thread.join(max(0.0, deadline - time.monotonic()))
        with self._settled:
            log, self._log = self._log, None  # the thread no longer touches it
            left, applied = self._logged_count - self._applied_count, self._applied
            unapplied = self._queued
            self._done = self._numbered
        self._call_back()
        if not self._thread.is_alive():
            self._close_db()
        if log is None:
            if unapplied and self._db.path is None:
                logger.warning(
                    "history: %d writes were not yet in %s when it closed; they are lost",
                    unapplied,
                    self._db.location,
                )
            return
        try:
            handed = log.close(applied)
        except OSError as exc:
            logger.warning("history: cannot close the write log %s: %s", log.path, exc)
            return
        if handed is not None:
            logger.warning(
                "history: %d writes were not yet in %s when it closed; they are kept in %s and "
                "applied when the history is next opened",
                left,
                self._db.location,
                handed,
            )

    def _close_db(self) -> None:
        if self._own_db:
            self._db.close()

    # --- the writer thread ----------------------------------------------------------------------

    def _run(self) -> None:
        while True:
            try:  # wait for the first, then take what else is queued
                batch = [self._queue.get(timeout=self._until_check())]
            except queue.Empty:  # no writes for a while: check all the same
                self._check_gone()
                continue
            if batch[0] is not None:
                with self._settled:  # the group-commit window (see the module doc)
                    self._settled.wait_for(lambda: self._waiting > 0, _WINDOW)
            while batch[-1] is not None and len(batch) < _BATCH:
                try:
                    batch.append(self._queue.get_nowait())
                except queue.Empty:
                    break
            writes = [item for item in batch if item is not None]  # None: close() was called
            if writes:
                self._apply(writes)
            if batch[-1] is None or self._past_deadline():
                return
            self._check_gone()

    def _past_deadline(self) -> bool:
        with self._settled:
            return self._deadline is not None and time.monotonic() >= self._deadline

    def _apply(self, writes: list[_Queued]) -> None:
        if self._failed:
            return  # logged, for the next start
        try:
            self._reserve_spare_ids()
            real = self._ids.real_all([write for write, _size in writes])
            skipped = self._retrying(lambda: self._db.apply_writes(real))
        except HistoryError as exc:
            if not self._past_deadline():  # at close, what is left is handed over
                self._fail(exc)
            return
        for reason in skipped:
            logger.warning("history: a write was skipped: %s", reason)
        with self._settled:
            self._done += len(writes)
            self._applied = writes[-1][1]
            self._applied_count += sum(1 for _write, size in writes if size)
            if self._queued == 0 and self._log is not None:
                try:
                    self._log.empty()
                    self._applied = self._applied_count = self._logged_count = 0
                except OSError as exc:
                    logger.warning("history: cannot empty the write log %s: %s", self._log, exc)
            self._settled.notify_all()
        self._call_back()

    def _call_back(self) -> None:
        """Call the callbacks whose writes are all applied, or all while the database is away
        (outside the lock)."""
        with self._settled:
            out = self._out is not None
            due = [callback for target, callback in self._callbacks if out or target <= self._done]
            if not due:
                return
            self._callbacks = [item for item in self._callbacks if not out and item[0] > self._done]
            self._waiting -= len(due)
        for callback in due:
            try:
                callback()
            except Exception:  # a waiter that went away must not stop the writer
                logger.debug("history: a settled callback failed", exc_info=True)

    def _reserve_spare_ids(self) -> None:
        if self._ids.unsettled:
            for resolved in self._retrying(self._ids.settle):
                self._log_line(resolved.line())
        if self._catch_up is not None:
            catch_up, self._catch_up = self._catch_up, None
            self._retrying(catch_up)
        for table in self._ids.wanted():
            self._retrying(lambda table=table: self._ids.reserve(table))  # type: ignore[misc]

    def _append(self, line: bytes) -> int:
        """Append a line to the log (the caller holds ``_settled``); the log's size after it,
        0 without a log."""
        if self._log is None:
            return 0
        try:
            return self._log.append(line)
        except OSError as exc:
            self._log = None
            logger.warning(
                "history: cannot append to the write log of %s (%s); queued writes are "
                "lost if the process ends before they are applied",
                self._db.location,
                exc,
            )
            return 0

    def _log_line(self, line: bytes) -> None:
        """Append a line that is no write (``rows.IdsResolved``) to the log."""
        with self._settled:
            self._append(line)

    def _fail(self, exc: BaseException) -> None:
        log = self._log
        # Said before a reader waiting in flush() is let go, so it never reads ahead of it.
        logger.warning(
            "history: %s; calls are no longer recorded in the database, their writes are %s",
            exc,
            f"kept in {log.path}" if log is not None else "lost",
        )
        with self._settled:
            self._failed = True
            self._done = self._numbered  # what the thread still takes is dropped: it is logged
            self._settled.notify_all()
        self._call_back()
