"""Row ids that a write-behind store hands out before its rows are in the database.

Ids of ``messages`` and ``runs`` come from blocks reserved from the database
(``Database.reserve_ids``): an SQLite range, a list of a server's sequence values. No other
writer, in any process, gets them, so a logged write names its row for good. Two blocks per
table are in hand: the one ids are taken from, and a spare that the background writer replaces
(:meth:`RowIds.reserve`) once it is taken, long before the next is needed.

A store of a file that another process keeps locked when it opens cannot reserve any: it hands
out provisional ids (-1, -2, … per table) until its writer can, and the writer then reserves
real ids for them too (:meth:`RowIds.settle`, ``rows.IdsResolved``), before it applies a write.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from mcp_export.errors import HistoryError
from mcp_export.history.rows import (
    ROW_ID_TABLES,
    IdsResolved,
    Write,
    provisional_id,
    with_real_id,
)

if TYPE_CHECKING:
    from mcp_export.history.backend import Database
    from mcp_export.history.sql import Connection

__all__ = ["RowIds"]

_ID_BLOCK = 1 << 16
"""Row ids reserved at a time, per table (SQLite: one range, whatever its length)."""
_SERVER_ID_BLOCK = 1 << 10
"""Row ids reserved at a time from a server database (each one a ``nextval``)."""


class _Block:
    """The ids of a reserved block not handed out yet (a range stays a range, not 65 536 ints)."""

    __slots__ = ("_ids", "_next")

    def __init__(self, ids: Sequence[int]) -> None:
        self._ids = ids
        self._next = 0

    def __len__(self) -> int:
        return len(self._ids) - self._next

    def take(self) -> int:
        taken = self._ids[self._next]
        self._next += 1
        return taken


class RowIds:
    """The reserved row ids of one store (safe across threads).

    Args:
        database: the store's database.
        provisional: when the database is kept locked now, hand out provisional ids until
            :meth:`settle` (an SQLite file's store: its ids are ranges).

    Raises:
        HistoryError: the first two blocks cannot be reserved (and no provisional ids are
            allowed, or the database refused for another reason than a lock).
    """

    def __init__(self, database: Database, *, provisional: bool = False) -> None:
        self._db = database
        self._lock = threading.Lock()
        self._ids: dict[str, _Block] = {table: _Block(()) for table in ROW_ID_TABLES}
        self._spare: dict[str, Sequence[int] | None] = dict.fromkeys(ROW_ID_TABLES)
        # Guarded by _lock: the provisional ids handed out per table (None once settled), and
        # the real ids found for them.
        self._issued: dict[str, int] | None = None
        self._resolved: dict[str, IdsResolved] = {}
        try:
            blocks = database.transaction("reserve row ids in", self._reserve_two_blocks)
        except HistoryError as exc:
            if not (provisional and database.busy(exc)):
                raise
            self._issued = dict.fromkeys(ROW_ID_TABLES, 0)
            return
        for table, (block, spare) in blocks.items():
            self._ids[table] = _Block(block)
            self._spare[table] = spare

    @property
    def unsettled(self) -> bool:
        """Whether provisional ids are handed out (no real ids could be reserved yet)."""
        with self._lock:
            return self._issued is not None

    def settle(self) -> list[IdsResolved]:
        """Reserve the two blocks, and real ids for the provisional ones handed out (one
        transaction; the writer's thread); returns what the provisional ids became.

        Raises:
            HistoryError: the database cannot be written.
        """
        with self._lock:
            if self._issued is None:
                return []
            counts = dict(self._issued)
        size = self._size()

        def body(conn: Connection) -> dict[str, Sequence[int]]:
            return {
                table: self._db.reserve_ids(conn, table, counts[table] + 2 * size)
                for table in ROW_ID_TABLES
            }

        found = self._db.transaction("reserve row ids in", body)
        resolved: list[IdsResolved] = []
        with self._lock:
            assert self._issued is not None
            for table, ids in found.items():
                # Those handed out while the transaction ran come off the front of the block.
                issued, end = self._issued[table], counts[table] + size
                self._ids[table] = _Block(ids[issued:end])
                self._spare[table] = ids[end:]
                if issued:
                    self._resolved[table] = IdsResolved(table, ids[0], issued)
                    resolved.append(self._resolved[table])
            self._issued = None
        return resolved

    def real(self, write: Write) -> Write:
        """``write`` naming real ids, if it names a provisional one that is settled."""
        if not provisional_id(write):
            return write
        with self._lock:
            resolved = self._resolved.get(write.table)
        return write if resolved is None else with_real_id(write, resolved)

    def real_all(self, writes: Sequence[Write]) -> Sequence[Write]:
        """``writes`` naming real ids (:meth:`real` of each); ``writes`` themselves while no
        provisional id is resolved (the usual store, which never hands one out)."""
        with self._lock:
            if not self._resolved:
                return writes
        return [self.real(write) for write in writes]

    def take(self, table: str, unreachable: str | None = None) -> int:
        """The next id of ``table``.

        Args:
            table: ``messages``, ``runs`` or ``case_runs``.
            unreachable: why the database cannot be reached now, if it cannot: then no block
                is reserved here (it would wait for the database on the caller's thread).

        Raises:
            HistoryError: no id is left and none can be reserved.
        """
        with self._lock:
            if self._issued is not None:
                self._issued[table] += 1
                return -self._issued[table]
            ids = self._ids[table]
            if not ids:
                block = self._spare[table]
                if block is None:  # the writer has not caught up: reserve here
                    if unreachable is not None:
                        raise HistoryError(f"{unreachable}; no row id of {table} is left")
                    block = self._db.transaction("reserve row ids in", self._block_of(table))
                else:
                    self._spare[table] = None  # the writer reserves the next
                ids = self._ids[table] = _Block(block)
            return ids.take()

    def wanted(self) -> list[str]:
        """The tables whose spare block is taken and is to be replaced."""
        with self._lock:
            if self._issued is not None:
                return []  # settle() first
            return [table for table, block in self._spare.items() if block is None]

    def reserve(self, table: str) -> None:
        """Reserve the spare block of ``table`` (one transaction; the writer's thread).

        Raises:
            HistoryError: the database cannot be written.
        """
        block = self._db.transaction("reserve row ids in", self._block_of(table))
        with self._lock:
            self._spare[table] = block

    def fewer_than(self, count: int) -> bool:
        """Whether some table has fewer than ``count`` ids left in hand, the spare included."""
        with self._lock:
            return any(
                len(ids) + len(self._spare[table] or ()) < count for table, ids in self._ids.items()
            )

    def _size(self) -> int:
        return _ID_BLOCK if self._db.path is not None else _SERVER_ID_BLOCK

    def _reserve_two_blocks(
        self, conn: Connection
    ) -> dict[str, tuple[Sequence[int], Sequence[int]]]:
        blocks: dict[str, tuple[Sequence[int], Sequence[int]]] = {}
        for table in ROW_ID_TABLES:
            both = self._db.reserve_ids(conn, table, 2 * self._size())
            half = len(both) // 2
            blocks[table] = (both[:half], both[half:])
        return blocks

    def _block_of(self, table: str) -> Callable[[Connection], Sequence[int]]:
        """A transaction body that reserves a block of row ids of ``table``."""
        return lambda conn: self._db.reserve_ids(conn, table, self._size())
