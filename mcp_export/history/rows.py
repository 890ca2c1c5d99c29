"""The one place history rows are written, and who wrote them.

Every write of the store — made at once, applied later by the background writer, or replayed
from a write log after a crash — is a :class:`Write` built by :func:`new_write`, which cleans its
values (:func:`clean`), and is applied by its database (``Database.apply_write``). Cleaning
passes every free text through :func:`~mcp_export.redact.redact` and every JSON column through
:func:`~mcp_export.redact.redact_json` before the text reaches the database or a log file, so a
resolved secret that a provider echoed into an error cannot be stored by any caller. Columns that
identify or key a row (ids, agent path, status, role …) are left as they are: a redaction there
would break the lookups that join rows.

Each row also records its writer (pid and, where the system tells, the process start time; the
host too in a database that many machines share), so that a later process can tell rows left
``pending`` by a writer that is gone.
"""

from __future__ import annotations

import ctypes
import json
import os
import re
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from mcp_export.redact import redact, redact_json

__all__ = [
    "ROW_ID_TABLES",
    "TEXT_ID_TABLES",
    "IdsResolved",
    "Write",
    "clean",
    "merged_writes",
    "new_write",
    "process_start_marker",
    "provisional_id",
    "read_line",
    "with_real_id",
    "writer_alive",
]

_compact = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"), check_circular=False).encode

ROW_ID_TABLES = ("messages", "runs", "case_runs")
"""Tables whose rows have integer ids (``threads`` ids are uuids made by the caller)."""
TEXT_ID_TABLES = ("threads", "served_versions")
"""Tables whose ids the caller makes (a thread's uuid, a served version's fingerprint): a row
written twice is kept as first written."""
_JSON_COLUMNS = {
    "messages": frozenset({"tool_calls"}),
    "runs": frozenset({"arguments"}),
    "case_runs": frozenset({"failures", "verdict", "caller", "version"}),
    "served_versions": frozenset({"version"}),
}
_KEY_COLUMNS = frozenset(
    [
        "id",
        "thread_id",
        "agent_path",
        "agent_key",
        "kind",
        "status",
        "role",
        "tool_name",
        "tool_call_id",
        "writer_start",
        "matrix_id",
        "case_name",
        "model",
        "fingerprint",
    ]
)
_COLUMN = re.compile(r"[a-z_]+")


@dataclass(frozen=True, slots=True)
class Write:
    """One insert (``row`` None) or one update of row ``row``, with cleaned values."""

    table: str
    values: dict[str, Any]
    row: int | None = None

    def line(self) -> bytes:
        """The write as one line of a write log."""
        return _compact([self.table, self.row, self.values]).encode() + b"\n"

    @classmethod
    def from_line(cls, line: bytes) -> Write:
        """A write read back from a write-log line.

        Raises:
            ValueError: the line is not a write (cut off by a crash, or damaged).
        """
        table, row, values = json.loads(line)
        if table not in (*TEXT_ID_TABLES, *ROW_ID_TABLES) or not isinstance(values, dict):
            raise ValueError(f"not a history write: {line[:80]!r}")
        if not all(_COLUMN.fullmatch(key) for key in values):  # they become SQL column names
            raise ValueError(f"not column names: {sorted(values)!r}")
        if row is not None and not isinstance(row, int):
            raise ValueError(f"not a row id: {row!r}")
        return cls(table, values, row)


@dataclass(frozen=True, slots=True)
class IdsResolved:
    """A write-log line saying which real ids a store's provisional ids of ``table`` are.

    A write-behind store that cannot reserve row ids (``history/row_ids.py``: the database is
    kept locked when it opens) hands out provisional ids -1, -2, … meanwhile; once it can, it
    reserves ``count`` ids from ``first`` for them: -k is ``first + k - 1``.
    """

    table: str
    first: int
    count: int

    def line(self) -> bytes:
        """The resolution as one line of a write log."""
        return (
            _compact(["ids", self.table, {"first": self.first, "count": self.count}]).encode()
            + b"\n"
        )

    def real(self, provisional: int) -> int:
        """The real id of a provisional one (-1 … -count)."""
        return self.first - provisional - 1


def read_line(line: bytes) -> Write | IdsResolved:
    """A write, or a resolution of provisional ids, read back from a write-log line.

    Raises:
        ValueError: the line is neither (cut off by a crash, or damaged).
    """
    if line.startswith(b'["ids",'):
        _, table, given = json.loads(line)
        if table not in ROW_ID_TABLES or not isinstance(given, dict):
            raise ValueError(f"not a resolution of row ids: {line[:80]!r}")
        first, count = given.get("first"), given.get("count")
        if not isinstance(first, int) or not isinstance(count, int) or first < 1 or count < 0:
            raise ValueError(f"not a resolution of row ids: {line[:80]!r}")
        return IdsResolved(table, first, count)
    return Write.from_line(line)


def provisional_id(write: Write) -> int:
    """The provisional id a write names (a negative one, see :class:`IdsResolved`), or 0."""
    row = write.row if write.row is not None else write.values.get("id", 0)
    return row if isinstance(row, int) and row < 0 and write.table in ROW_ID_TABLES else 0


def with_real_id(write: Write, resolved: IdsResolved) -> Write:
    """``write`` naming the real id of the provisional one it names (``provisional_id``)."""
    if write.row is not None:
        return Write(write.table, write.values, resolved.real(write.row))
    return Write(write.table, {**write.values, "id": resolved.real(write.values["id"])})


def merged_writes(writes: Sequence[Write]) -> list[Write]:
    """``writes`` with each update of a row inserted earlier in the batch folded into its insert.

    A call's rows are mostly inserted and finished within one batch (a run started, then
    finished; an answer pending, then complete): one statement each instead of two, and the
    triggers of one insert instead of an insert's and an update's. The rows and their thread's
    summary end as they would have, statement by statement.
    """
    merged: list[Write] = []
    inserted: dict[tuple[str, Any], int] = {}
    for write in writes:
        if write.row is None:
            key = write.values.get("id")
            if key is not None:
                inserted[(write.table, key)] = len(merged)
            merged.append(write)
            continue
        at = inserted.get((write.table, write.row))
        if at is None:
            merged.append(write)
        else:
            insert = merged[at]
            merged[at] = Write(insert.table, {**insert.values, **write.values})
    return merged


def new_write(table: str, values: Mapping[str, Any], row: int | None = None) -> Write:
    """A write of ``values`` as :func:`clean` leaves them (free text redacted, JSON encoded)."""
    return Write(table, clean(table, values), row)


def clean(table: str, values: Mapping[str, Any]) -> dict[str, Any]:
    """``values`` of a ``table`` row as stored: free text redacted, JSON redacted and encoded."""
    json_columns = _JSON_COLUMNS.get(table, frozenset())
    cleaned: dict[str, Any] = {}
    for key, value in values.items():
        if key in json_columns and value is not None:
            value = _compact(redact_json(value))
        elif isinstance(value, str) and key not in _KEY_COLUMNS:
            value = redact(value)
        cleaned[key] = value
    return cleaned


# --- who wrote a row ---------------------------------------------------------------------------


def process_start_marker(pid: int) -> str | None:
    """When process ``pid`` started, as the system says (Linux), to tell a reused pid apart.

    None where the system does not say; the pid alone is then the writer's identity.
    """
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    # Fields after the command name (which may hold spaces or parentheses): state is the first,
    # starttime the 20th.
    fields = stat.rsplit(")", 1)[-1].split()
    return fields[19] if len(fields) > 19 and fields[0] != "Z" else None


def _pid_alive(pid: int) -> bool:
    if pid <= 0:
        return False
    if sys.platform == "win32":  # pragma: no cover - os.kill(pid, 0) would send CTRL_C there
        kernel32 = ctypes.windll.kernel32
        handle = kernel32.OpenProcess(0x1000, False, pid)  # PROCESS_QUERY_LIMITED_INFORMATION
        if not handle:
            return False
        code = ctypes.c_ulong()
        kernel32.GetExitCodeProcess(handle, ctypes.byref(code))
        kernel32.CloseHandle(handle)
        return code.value == 259  # STILL_ACTIVE
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # exists, owned by someone else
    return True


def writer_alive(pid: int, start: str | None) -> bool:
    """Whether the process that wrote a row (pid and start marker) still runs."""
    if not _pid_alive(pid):
        return False
    if start is None:
        return True
    current = process_start_marker(pid)
    # A zombie, or the pid now belongs to another process: the writer is gone.
    return current == start
