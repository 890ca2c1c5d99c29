"""The write log: what a write-behind store has answered for survives its process.

A write-behind store (``history/writer.py``) returns to its caller before the write is in the
database. So that nothing it answered for is lost — at exit, in a crash, to ``kill -9`` — it first
appends the write to its own log file as one line, then queues it; the background writer empties
the log whenever it has applied everything queued. A log therefore holds the writes that are not
in the database yet, and after a crash maybe some that are (those applied since the queue was
last empty): applying those again changes nothing (an insert carries its row id and is skipped
when the row is there; an update sets the same values again) — except that a thread deleted in
the meantime comes back.

Where, and whose::

    <database>-writes/w<pid>-<start>-<token>-<skip>.jsonl

``pid``/``start`` name the process that owns the log (``0``/``x``: no process — a store that
closed before its writer caught up handed the log over); the first ``skip`` bytes are known to be
in the database. Every store that opens the database replays the logs whose owner is gone: it
claims one by renaming it to its own name (one claimer wins), applies it in one transaction, then
deletes it. A line cut off by a crash is skipped with a warning. A log that cannot be applied
because the database stayed locked is handed back for the next open; one whose lines the database
refuses is kept as ``….jsonl.failed`` and named in a warning.

A store that opened while another process kept the file locked names its rows by provisional
ids (-1, -2, …) until its writer can reserve real ones; the writer then appends a line saying
which real ids they are (``rows.IdsResolved``), and a replay reads the whole log before it
applies it, so every write of a provisional row lands under its real id. A log whose store never
could reserve them gets fresh ids in the replay's transaction.

Appends are plain ``write`` calls without ``fsync``: a log survives the death of its process (the
system holds the data), not a power cut — the trade the database makes with ``synchronous=NORMAL``.
"""

from __future__ import annotations

import contextlib
import logging
import os
import re
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from mcp_export.errors import HistoryError
from mcp_export.history.rows import (
    IdsResolved,
    Write,
    provisional_id,
    read_line,
    with_real_id,
    writer_alive,
)

if TYPE_CHECKING:
    from mcp_export.history.backend import Database
    from mcp_export.history.sql import Connection

__all__ = ["Replayed", "WriteLog", "log_directory", "replay_logs"]

logger = logging.getLogger(__name__)

_NAME = re.compile(r"w(\d+)-(\d+|x)-([0-9a-f]+)-(\d+)\.jsonl")


def log_directory(database: Path) -> Path:
    """The directory of the write logs of ``database``."""
    return database.with_name(database.name + "-writes")


def _name(pid: int, start: str | None, token: str, skip: int) -> str:
    return f"w{pid}-{start or 'x'}-{token}-{skip}.jsonl"


class WriteLog:
    """The log file of one write-behind store (see the module doc); not thread-safe by itself.

    Raises:
        OSError: the log cannot be created next to the database.
    """

    def __init__(self, database: Path, pid: int, start: str | None) -> None:
        directory = log_directory(database)
        directory.mkdir(exist_ok=True)
        self._token = uuid.uuid4().hex[:16]
        self.path = directory / _name(pid, start, self._token, 0)
        flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_APPEND | getattr(os, "O_BINARY", 0)
        # The log holds history text: readable by its owner only, like a key file.
        self._fd = os.open(self.path, flags, 0o600)
        self.size = 0

    def append(self, line: bytes) -> int:
        """Append one line; returns the log's size after it."""
        view = memoryview(line)
        while view:
            view = view[os.write(self._fd, view) :]
        self.size += len(line)
        return self.size

    def empty(self) -> None:
        """Drop every line (the writer has applied them all)."""
        os.ftruncate(self._fd, 0)
        self.size = 0

    def close(self, applied: int) -> Path | None:
        """Close the log; returns where it was handed over, or None when it was deleted.

        Deleted when its first ``applied`` bytes (those in the database) are all it holds, else
        handed over to the next store that opens the database.
        """
        os.close(self._fd)
        if applied >= self.size:
            self.path.unlink(missing_ok=True)
            return None
        handed = self.path.with_name(_name(0, None, self._token, applied))
        os.replace(self.path, handed)
        return handed


@dataclass
class Replayed:
    """What replaying the logs at an open did."""

    applied: int = 0
    """Writes applied from logs of processes that are gone (or of stores that were closed)."""
    skipped: list[str] = field(default_factory=list)
    """Why each write that could not be applied was skipped."""
    left: int = 0
    """Logs left for a later try: the database was kept locked."""


def replay_logs(database: Database, pid: int, start: str | None) -> Replayed:
    """Apply the logs next to ``database`` (an SQLite file) whose owner is gone, then delete them.

    Args:
        database: the database; one without a file has no logs.
        pid: this process, the claimer.
        start: this process's start marker.
    """
    replayed = Replayed()
    if database.path is None:
        return replayed
    directory = log_directory(database.path)
    if not directory.is_dir():
        return replayed
    for path in sorted(directory.iterdir()):
        found = _NAME.fullmatch(path.name)
        if found is None:
            continue
        owner, owner_start = int(found[1]), None if found[2] == "x" else found[2]
        token, skip = found[3], int(found[4])
        if owner and writer_alive(owner, owner_start):
            continue  # its own writer applies it
        claimed = path.with_name(_name(pid, start, token, skip))
        try:
            os.replace(path, claimed)
        except FileNotFoundError:
            continue  # another process claimed it first
        except OSError as exc:
            logger.warning("history: cannot claim the write log %s: %s", path, exc)
            continue
        _replay_one(claimed, skip, token, database, replayed)
    return replayed


def _resolve_the_rest(
    conn: Connection, database: Database, writes: list[Write], resolved: dict[str, IdsResolved]
) -> None:
    """Reserve real ids for the provisional ids of a log whose store never could."""
    counts: dict[str, int] = {}
    for write in writes:
        provisional = provisional_id(write)
        if provisional and write.table not in resolved:
            counts[write.table] = max(counts.get(write.table, 0), -provisional)
    for table, count in counts.items():
        ids = database.reserve_ids(conn, table, count)
        resolved[table] = IdsResolved(table, ids[0], count)


def _replay_one(path: Path, skip: int, token: str, database: Database, replayed: Replayed) -> None:
    skipped: list[str] = []

    def body(conn: Connection) -> int:
        skipped.clear()
        writes: list[Write] = []
        resolved: dict[str, IdsResolved] = {}
        with path.open("rb") as lines:
            lines.seek(skip)
            for number, line in enumerate(lines, 1):
                try:
                    if not line.endswith(b"\n"):
                        raise ValueError("the line was cut off")
                    read = read_line(line)
                except ValueError as exc:
                    skipped.append(f"{path.name} line {number}: {exc}")
                    continue
                if isinstance(read, IdsResolved):
                    resolved[read.table] = read
                else:
                    writes.append(read)
        _resolve_the_rest(conn, database, writes, resolved)
        applied = 0
        for write in writes:
            table = resolved.get(write.table)
            reason = database.apply_write(
                conn, with_real_id(write, table) if table and provisional_id(write) else write
            )
            if reason is None:
                applied += 1
            else:
                skipped.append(reason)
        return applied

    try:
        applied: int = database.transaction("apply the write log of", body)
    except (HistoryError, OSError) as exc:
        if database.busy(exc):
            handed = path.with_name(_name(0, None, token, skip))
            with contextlib.suppress(OSError):
                os.replace(path, handed)
            replayed.left += 1
            logger.warning(
                "history: the write log %s could not be applied (%s); the next open tries again",
                handed,
                exc,
            )
        else:
            failed = path.with_name(path.name + ".failed")
            with contextlib.suppress(OSError):
                os.replace(path, failed)
            logger.warning(
                "history: the write log %s cannot be applied (%s); it is kept for inspection",
                failed,
                exc,
            )
        return
    path.unlink(missing_ok=True)
    replayed.applied += applied
    replayed.skipped.extend(skipped)
    if skipped:
        logger.warning(
            "history: %d writes of an interrupted process were applied, %d could not be: %s",
            applied,
            len(skipped),
            "; ".join(skipped[:3]) + (" …" if len(skipped) > 3 else ""),
        )
