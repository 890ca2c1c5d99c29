# ruff: noqa: N802  (Qt virtual method names are camelCase)
"""The history of one agent as rows: chats, tool tests and served calls from the history store.

:func:`load_history` reads the store (``mcp_export.HistoryStore``) into :class:`HistoryEntry`
rows: one per tool run (a test in the studio, a ``metaagent serve`` or ``metaagent call`` call),
and one per conversation that has no run (a chat). :class:`HistoryTableModel` shows them;
:class:`HistoryFilterModel` filters them by tool, status and text and sorts them.

The models hold no state the store does not have: Refresh rebuilds them from it. They are tested
without any widget (``tests/app/test_history_view.py``).
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import (
    QAbstractTableModel,
    QModelIndex,
    QObject,
    QPersistentModelIndex,
    QSortFilterProxyModel,
    Qt,
)
from PySide6.QtGui import QBrush, QColor

if TYPE_CHECKING:
    from mcp_export.history.schema import RunRecord, StoredMessage, ThreadRecord
    from mcp_export.history.store import HistoryStore

__all__ = [
    "ALL",
    "COLUMNS",
    "ENTRY_ROLE",
    "ERROR_COLOR",
    "SORT_ROLE",
    "UNKNOWN",
    "HistoryEntry",
    "HistoryFilterModel",
    "HistoryTableModel",
    "format_duration",
    "load_history",
    "local_time",
    "token_count",
]

AnyIndex = QModelIndex | QPersistentModelIndex
ENTRY_ROLE = Qt.ItemDataRole.UserRole + 1
SORT_ROLE = Qt.ItemDataRole.UserRole + 2
ALL = ""  # a filter value that lets every row through

COLUMNS = ("Started", "Kind", "Tool", "Status", "Duration", "Tokens in", "Tokens out", "Title")
_NUMERIC = {"Duration", "Tokens in", "Tokens out"}
_KIND_LABELS = {"chat": "chat", "tool-test": "test", "served": "served call", "call": "CLI call"}
ERROR_COLOR = QColor("#b3261e")
UNKNOWN = "—"


@dataclass(frozen=True)
class HistoryEntry:
    """One row of the history: a tool run, or a conversation without a run (a chat).

    Attributes:
        kind: ``chat``, ``test``, ``served call`` or ``CLI call``.
        tool: the tool that ran ("" for a chat).
        status: ``complete``, ``error`` or ``pending``.
        started: when it started (UTC).
        duration_ms: how long it took (None while pending or unknown).
        tokens_in: prompt tokens over the model requests that reported them (None when none
            did: unknown, not 0).
        tokens_out: completion tokens, likewise.
        title: the thread's title (a run without a thread: its filled prompt's first line).
        thread_id: the conversation to show as transcript (None: the run has none left).
        run: the run (None for a chat); its arguments make a re-run possible.
    """

    kind: str
    tool: str
    status: str
    started: datetime
    duration_ms: float | None
    tokens_in: int | None
    tokens_out: int | None
    title: str
    thread_id: str | None
    run: RunRecord | None = None

    @property
    def caller(self) -> str:
        """Who called the tool (an MCP client's name, the studio…); "" for a chat."""
        return self.run.caller if self.run is not None else ""

    def matches(self, text: str) -> bool:
        """Whether ``text`` (case-insensitive) occurs in the tool, kind, title, caller or prompt."""
        needle = text.casefold()
        hay = [self.tool, self.kind, self.title, self.caller]
        if self.run is not None:
            hay.append(self.run.filled_prompt)
        return any(needle in part.casefold() for part in hay)


def _path_keys(agent_path: Path) -> list[str]:
    # Writers store the path as they had it (served: resolved; the studio: as opened), so look
    # the agent up under each spelling of its path.
    keys = [str(agent_path), os.path.abspath(agent_path), str(agent_path.resolve())]
    return list(dict.fromkeys(keys))


def load_history(
    store: HistoryStore, agent_name: str, agent_path: Path | None, *, limit: int = 500
) -> list[HistoryEntry]:
    """The agent's chats and runs, newest first.

    Args:
        store: the history store.
        agent_name: used to find the threads of an agent that has no file yet.
        agent_path: the agent file; its threads are those recorded with this path.
        limit: at most this many threads and this many runs are read.

    Raises:
        HistoryError: the store cannot be read.
    """
    threads: dict[str, ThreadRecord] = {}
    runs: dict[int, RunRecord] = {}
    if agent_path is not None:
        for key in _path_keys(agent_path):
            threads.update((t.id, t) for t in store.threads(agent_path=key, limit=limit))
            runs.update((r.id, r) for r in store.runs(agent_path=key, limit=limit))
    else:
        # An unsaved agent: its threads were recorded without a path, under its name.
        for thread in store.threads(limit=limit):
            if thread.agent_path is None and thread.agent_name == agent_name:
                threads[thread.id] = thread
        for run in store.runs(limit=limit):
            if run.thread_id in threads:
                runs[run.id] = run
    entries = [_run_entry(run, threads.get(run.thread_id or "")) for run in runs.values()]
    with_runs = {run.thread_id for run in runs.values()}
    entries.extend(
        _thread_entry(thread, store.messages(thread.id))
        for thread in threads.values()
        if thread.id not in with_runs
    )
    entries.sort(key=lambda entry: entry.started, reverse=True)
    return entries


def _run_entry(run: RunRecord, thread: ThreadRecord | None) -> HistoryEntry:
    first_line = (run.filled_prompt.strip().splitlines() or [""])[0]
    return HistoryEntry(
        kind=_KIND_LABELS.get(thread.kind, thread.kind) if thread is not None else "run",
        tool=run.tool_name,
        status=run.status,
        started=run.started_at,
        duration_ms=_run_duration(run),
        tokens_in=run.tokens_in,
        tokens_out=run.tokens_out,
        title=thread.title if thread is not None else first_line,
        thread_id=run.thread_id,
        run=run,
    )


def _run_duration(run: RunRecord) -> float | None:
    # A failed run is finished without a duration (stored as 0): its clock times tell instead.
    if run.duration_ms:
        return run.duration_ms
    if run.finished_at is not None:
        return (run.finished_at - run.started_at).total_seconds() * 1e3
    return None


def _thread_entry(thread: ThreadRecord, messages: list[StoredMessage]) -> HistoryEntry:
    statuses = {message.status for message in messages}
    # The worst status wins: one failed model request makes the conversation an error.
    status = next((s for s in ("error", "pending") if s in statuses), "complete")
    last = max((message.updated_at for message in messages), default=thread.updated_at)
    tokens_in = [m.tokens_in for m in messages if m.tokens_in is not None]
    tokens_out = [m.tokens_out for m in messages if m.tokens_out is not None]
    return HistoryEntry(
        kind=_KIND_LABELS.get(thread.kind, thread.kind),
        tool="",
        status=status,
        started=thread.created_at,
        duration_ms=None
        if status == "pending"
        else (last - thread.created_at).total_seconds() * 1e3,
        tokens_in=sum(tokens_in) if tokens_in else None,
        tokens_out=sum(tokens_out) if tokens_out else None,
        title=thread.title,
        thread_id=thread.id,
    )


def format_duration(ms: float | None) -> str:
    """``850 ms``, ``2.3 s``, ``4 min 05 s``; "" when unknown."""
    if ms is None:
        return ""
    if ms < 1000:
        return f"{ms:.0f} ms"
    seconds = ms / 1000
    if seconds < 60:
        return f"{seconds:.1f} s"
    minutes, rest = divmod(round(seconds), 60)
    return f"{minutes} min {rest:02d} s"


def local_time(value: datetime) -> str:
    """A stored (UTC) time in this computer's time zone, to the second."""
    return value.astimezone().strftime("%Y-%m-%d %H:%M:%S")


class HistoryTableModel(QAbstractTableModel):
    """The history entries as a table with :data:`COLUMNS`.

    Roles: display text, :data:`SORT_ROLE` (a value that sorts right), :data:`ENTRY_ROLE` (the
    :class:`HistoryEntry`), tool tips, and red text for errors.
    """

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._entries: list[HistoryEntry] = []

    def set_entries(self, entries: list[HistoryEntry]) -> None:
        """Replace every row (after a refresh)."""
        self.beginResetModel()
        self._entries = list(entries)
        self.endResetModel()

    def entries(self) -> list[HistoryEntry]:
        """The rows, in model order."""
        return list(self._entries)

    def entry(self, row: int) -> HistoryEntry:
        """The entry in ``row``."""
        return self._entries[row]

    def tools(self) -> list[str]:
        """The tools that appear in the history, sorted."""
        return sorted({entry.tool for entry in self._entries if entry.tool})

    def rowCount(self, parent: AnyIndex | None = None) -> int:
        return 0 if parent is not None and parent.isValid() else len(self._entries)

    def columnCount(self, parent: AnyIndex | None = None) -> int:
        return 0 if parent is not None and parent.isValid() else len(COLUMNS)

    def headerData(
        self, section: int, orientation: Qt.Orientation, role: int = Qt.ItemDataRole.DisplayRole
    ) -> Any:
        if orientation == Qt.Orientation.Horizontal and role == Qt.ItemDataRole.DisplayRole:
            return COLUMNS[section]
        return None

    def data(self, index: AnyIndex, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if not index.isValid() or not 0 <= index.row() < len(self._entries):
            return None
        entry = self._entries[index.row()]
        column = COLUMNS[index.column()]
        if role == Qt.ItemDataRole.DisplayRole:
            return _display(entry, column)
        if role == SORT_ROLE:
            return _sort_value(entry, column)
        if role == ENTRY_ROLE:
            return entry
        if role == Qt.ItemDataRole.ToolTipRole:
            return _tooltip(entry)
        if role == Qt.ItemDataRole.ForegroundRole and entry.status == "error":
            return QBrush(ERROR_COLOR)
        if role == Qt.ItemDataRole.TextAlignmentRole and column in _NUMERIC:
            return int(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
        return None


def _display(entry: HistoryEntry, column: str) -> str:
    values = {
        "Started": local_time(entry.started),
        "Kind": entry.kind,
        "Tool": entry.tool,
        "Status": entry.status,
        "Duration": format_duration(entry.duration_ms),
        "Tokens in": token_count(entry.tokens_in),
        "Tokens out": token_count(entry.tokens_out),
        "Title": entry.title,
    }
    return values[column]


def _sort_value(entry: HistoryEntry, column: str) -> Any:
    if column == "Started":
        return entry.started.timestamp()
    if column == "Duration":
        return -1.0 if entry.duration_ms is None else entry.duration_ms
    if column in ("Tokens in", "Tokens out"):
        value = entry.tokens_in if column == "Tokens in" else entry.tokens_out
        return -1 if value is None else value
    return _display(entry, column).casefold()


def token_count(value: int | None) -> str:
    """A token count as shown: the number, or "—" when it is unknown (never 0 for unknown)."""
    return UNKNOWN if value is None else str(value)


def _tooltip(entry: HistoryEntry) -> str:
    lines = [entry.title]
    if entry.caller:
        lines.append(f"Called by: {entry.caller}")
    if entry.status != "pending" and (entry.tokens_in is None or entry.tokens_out is None):
        lines.append(f"Tokens {UNKNOWN}: the model server did not report them")
    if entry.run is not None and entry.run.error:
        lines.append(f"Error: {entry.run.error}")
    return "\n".join(lines)


class HistoryFilterModel(QSortFilterProxyModel):
    """Filters :class:`HistoryTableModel` rows by tool, status and text; sorts by real values."""

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._tool = ALL
        self._status = ALL
        self._text = ""
        self.setSortRole(SORT_ROLE)

    # The setters use beginFilterChange/endFilterChange: Qt 6.10 deprecates invalidateFilter().

    def set_tool(self, tool: str) -> None:
        """Only rows of ``tool`` (:data:`ALL`: every row)."""
        self.beginFilterChange()
        self._tool = tool
        self.endFilterChange(QSortFilterProxyModel.Direction.Rows)

    def set_status(self, status: str) -> None:
        """Only rows with ``status`` (``complete``, ``error``, ``pending``; :data:`ALL`)."""
        self.beginFilterChange()
        self._status = status
        self.endFilterChange(QSortFilterProxyModel.Direction.Rows)

    def set_text(self, text: str) -> None:
        """Only rows whose tool, kind, title, caller or prompt contain ``text``."""
        self.beginFilterChange()
        self._text = text.strip()
        self.endFilterChange(QSortFilterProxyModel.Direction.Rows)

    def entry(self, row: int) -> HistoryEntry:
        """The entry shown in proxy row ``row``."""
        value = self.index(row, 0).data(ENTRY_ROLE)
        assert isinstance(value, HistoryEntry)
        return value

    def filterAcceptsRow(self, source_row: int, source_parent: AnyIndex) -> bool:
        source = self.sourceModel()
        if not isinstance(source, HistoryTableModel):
            return True
        entry = source.entry(source_row)
        return (
            (self._tool == ALL or entry.tool == self._tool)
            and (self._status == ALL or entry.status == self._status)
            and (not self._text or entry.matches(self._text))
        )
