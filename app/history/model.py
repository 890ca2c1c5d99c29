# ruff: noqa: N802  (Qt virtual method names are camelCase)
"""The history of one agent as rows: its conversations, read from the history store a page at a
time.

A row is a conversation (a thread): a chat, a tool test and its follow-up turns, a served or CLI
call and the calls that continued it. Its figures are the conversation's, labelled as the chat
tab labels them (``mcp_export.history.figures``), with what its calls cost in all (the thread
row's own total: ``$0.00209``, ``≥ $0.000584``, ``unknown``; empty while no call has ended; a
call and 100 calls in the tooltip). :class:`HistoryTableModel` filters by tool,
status and text and sorts by a column in the store's own query (``HistoryStore.conversations``,
keyset pages over the thread rows' summaries), holds the rows read so far and reads the next
page when the view scrolls to the end (``canFetchMore``/``fetchMore``). A filter that matches
few rows is searched a bounded slice of the history at a time (a few milliseconds: the number of
threads a slice looks at follows how long the last one took), going on from a zero timer until a
page is found, so the view repaints between slices and a keystroke never waits for a search of
the whole history.

The model holds no state the store does not have: Refresh reads it again. It is tested without
any widget in ``tests/app/test_history_view.py``; its pages under a view in
``tests/app/test_history_paging.py``.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, replace
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

from PySide6.QtCore import (
    QAbstractTableModel,
    QModelIndex,
    QObject,
    QPersistentModelIndex,
    Qt,
    QTimer,
    Signal,
)
from PySide6.QtGui import QBrush, QColor

from app.history.caller_runs import caller_label
from mcp_export.costs.cost import CellCost
from mcp_export.history.conversations import ConversationFilter, ConversationOrder, Position
from mcp_export.history.figures import (
    CONVERSATION_TIME,
    CONVERSATION_TOKENS,
    UNKNOWN,
    Figures,
    format_duration,
)
from mcp_export.history.schema import (
    CaseMark,
    ConversationRecord,
    MessageStatus,
    ThreadKind,
    agent_key,
)

if TYPE_CHECKING:
    from mcp_export.history.schema import RunRecord
    from mcp_export.history.store import HistoryStore

__all__ = [
    "ALL",
    "CASE",
    "CASE_RUN",
    "COLUMNS",
    "CONVERSATION_COST",
    "ENTRY_ROLE",
    "ERROR_COLOR",
    "HistoryEntry",
    "HistoryTableModel",
    "agent_scope",
    "filtered",
    "header_text",
    "history_entry",
    "local_time",
]

AnyIndex = QModelIndex | QPersistentModelIndex
ENTRY_ROLE = Qt.ItemDataRole.UserRole + 1
ALL = ""  # a filter value that lets every row through

CASE = "Case · model"
CONVERSATION_COST = "Cost of the conversation"
COLUMNS = (
    "Started",
    "Kind",
    CASE,
    CONVERSATION_COST,
    "Title",
    "Status",
    CONVERSATION_TIME,
    CONVERSATION_TOKENS,
    "Tool",
)
_ORDERS: dict[str, ConversationOrder] = {
    "Started": "started",
    "Kind": "kind",
    CASE: "case",
    "Tool": "tool",
    "Status": "status",
    CONVERSATION_TIME: "time",
    CONVERSATION_TOKENS: "tokens",
    CONVERSATION_COST: "cost",
    "Title": "title",
}
_NUMERIC = {CONVERSATION_TIME, CONVERSATION_TOKENS, CONVERSATION_COST}
_KIND_LABELS: dict[str, str] = {
    "chat": "chat",
    "tool-test": "test",
    "served": "served call",
    "call": "CLI call",
    "caller": "caller turn",
    "authoring": "authoring",
}
CASE_RUN = "case run"
"""The kind of a conversation that is a test case's served call."""
ERROR_COLOR = QColor("#b3261e")

_PAGE = 100
"""Rows read at a time: a few screens."""
_SCAN = 2000
"""Threads looked at in the first slice of a search by tool or status (a few ms)."""
_SCAN_TEXT = 500
"""Threads looked at in the first slice of a search by text (a few ms when each thread's
messages are read: a text too short or too common for the full-text index)."""
_SCAN_RANGE = (250, 16000)
"""The fewest and the most threads a slice looks at: a slice that took under a quarter of
``_SLICES_MS`` looks at twice as many next time, one that took longer than it half as many."""
_SLICES_MS = 10.0
"""How long one turn of the event loop may search before the view gets to repaint."""


@dataclass(frozen=True)
class HistoryEntry:
    """One row of the history: a conversation, with the run that started it (None for a chat).

    Attributes:
        kind: ``chat``, ``test``, ``served call``, ``CLI call`` or ``case run``.
        tool: the tool whose run started it ("" for a chat).
        status: ``complete``, ``error`` or ``pending`` (the worst of its answers).
        started: when it started (UTC).
        duration_ms: time in the conversation (None while none of its answers has ended).
        tokens_in: prompt tokens in the conversation (None when no model request reported
            them: unknown, not 0).
        tokens_out: completion tokens in the conversation, likewise.
        title: the conversation's title.
        thread_id: the conversation to show as transcript.
        run: the run that started it (None for a chat); its arguments make a re-run possible.
        case: the test case, model and matrix run whose served call it is (None for others).
        tokens_unreported: its model requests that reported no token count (the sums are
            then lower bounds).
        cost: what its calls cost (``ThreadRecord.cost``); None for a chat.
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
    case: CaseMark | None = None
    tokens_unreported: int = 0
    cost: CellCost | None = None

    @property
    def cost_text(self) -> str:
        """What its calls cost (a test case's run: the case run's cost); "" for a chat."""
        if self.case is not None:
            return self.case.cost_text()
        return self.cost.text() if self.cost is not None and self.run is not None else ""

    @property
    def total_cost_text(self) -> str:
        """What its calls cost in all: ``$0.00209``, ``≥ $0.000584`` (a part is unknown) or
        ``unknown``; "" while none has ended (a chat)."""
        return self.cost.total.text() if self.cost is not None else ""

    @property
    def case_label(self) -> str:
        """``case · model`` for a test case's run (``case · caller model · step`` for a caller
        case's), else ""."""
        if self.case is not None and self.case.caller:
            return caller_label(self.case)
        return f"{self.case.case_name} · {self.case.model}" if self.case is not None else ""

    @property
    def caller(self) -> str:
        """Who called the tool (an MCP client's name, the studio…); "" for a chat."""
        return self.run.caller if self.run is not None else ""

    @property
    def figures(self) -> Figures:
        """The conversation's figures."""
        return Figures(
            self.tokens_in, self.tokens_out, self.duration_ms, self.tokens_unreported > 0
        )


def history_entry(record: ConversationRecord) -> HistoryEntry:
    """The row of a conversation read from the store."""
    thread = record.thread
    return HistoryEntry(
        kind=CASE_RUN if record.case is not None else _KIND_LABELS.get(thread.kind, thread.kind),
        tool=thread.tool_name or "",
        status=thread.status,
        started=thread.created_at,
        duration_ms=thread.duration_ms,
        tokens_in=thread.tokens_in,
        tokens_out=thread.tokens_out,
        title=thread.title,
        thread_id=thread.id,
        run=record.run,
        case=record.case,
        tokens_unreported=thread.tokens_unreported,
        cost=thread.cost if thread.calls else None,
    )


def agent_scope(agent_name: str, agent_path: Path | None) -> ConversationFilter:
    """The store's filter for all of the agent's conversations (by file, else by name)."""
    key = agent_key(str(agent_path)) if agent_path is not None else None
    return ConversationFilter(agent_key=key, agent_name=agent_name)


def filtered(
    scope: ConversationFilter,
    *,
    tool: str = ALL,
    status: str = ALL,
    text: str = "",
    case_runs: bool | None = None,
) -> ConversationFilter:
    """``scope`` narrowed to ``tool``, ``status``, ``text`` (a kind matches by its label) and
    ``case_runs`` (True: only test cases' runs; False: none of them; None: all)."""
    needle = text.strip()
    folded = needle.casefold()
    kinds = tuple(
        cast(ThreadKind, kind)
        for kind, label in _KIND_LABELS.items()
        if folded and folded in label.casefold()
    )
    return replace(
        scope,
        tool=tool or None,
        status=cast(MessageStatus, status) if status else None,
        text=needle,
        text_kinds=kinds,
        case_runs=case_runs,
    )


def local_time(value: datetime) -> str:
    """A stored (UTC) time in this computer's time zone, to the second."""
    return value.astimezone().strftime("%Y-%m-%d %H:%M:%S")


class HistoryTableModel(QAbstractTableModel):
    """An agent's conversations as a table with :data:`COLUMNS`, read a page at a time.

    Roles: display text, :data:`ENTRY_ROLE` (the :class:`HistoryEntry`), tool tips, and red
    text for errors.

    Args:
        store: the history store (not closed by the model).
        agent_name: the agent's name (finds its conversations while it has no file).
        agent_path: the agent file, or None for an unsaved agent.
        parent: the parent object.

    Signals:
        searched(): a slice of a search ended (rows may have come, :attr:`searching` changed).
        failed(str): the store could not be read; the message says why.
    """

    searched = Signal()
    failed = Signal(str)

    def __init__(
        self,
        store: HistoryStore,
        agent_name: str,
        agent_path: Path | None,
        parent: QObject | None = None,
    ) -> None:
        super().__init__(parent)
        self.store = store
        self._scope = agent_scope(agent_name, agent_path)
        self._filter = self._scope
        self._order: ConversationOrder = "started"
        self._descending = True
        self._entries: list[HistoryEntry] = []
        self._next: Position | None = None
        self._more = False  # whether the store has rows after self._next
        self._wanted = 0  # rows the view wants read
        self._scan = _SCAN  # threads the next slice of a search looks at
        self._going_on = QTimer(self)
        self._going_on.setSingleShot(True)
        self._going_on.setInterval(0)
        self._going_on.timeout.connect(self._read)

    # -- what to show -----------------------------------------------------------------------

    def set_filters(
        self,
        *,
        tool: str = ALL,
        status: str = ALL,
        text: str = "",
        case_runs: bool | None = None,
    ) -> None:
        """Show the conversations of ``tool`` with ``status`` in which ``text`` was said or that
        it names (:data:`ALL` and "": every one), only or none of the test cases' runs
        (``case_runs`` True or False; None: all)."""
        self._filter = filtered(
            self._scope, tool=tool, status=status, text=text, case_runs=case_runs
        )
        self.reload()

    def shows(self, thread_id: str) -> bool:
        """Whether the filters let conversation ``thread_id`` through (read or not yet)."""
        from mcp_export.errors import HistoryError

        if any(entry.thread_id == thread_id for entry in self._entries):
            return True
        try:
            page = self.store.conversations(replace(self._filter, thread_id=thread_id), limit=1)
        except HistoryError as exc:
            self.failed.emit(f"Could not read the history: {exc}")
            return True  # unknown: the pane keeps what it shows
        return bool(page.rows)

    def reload(self) -> None:
        """Read the first page again from the store (the filters and the order are kept)."""
        self.beginResetModel()
        self._entries = []
        self._next = None
        self._more = True
        self._wanted = _PAGE
        self._scan = _SCAN_TEXT if self._filter.text else _SCAN
        self.endResetModel()
        self._read()

    def sort(self, column: int, order: Qt.SortOrder = Qt.SortOrder.AscendingOrder) -> None:
        if not 0 <= column < len(COLUMNS):
            return
        self._order = _ORDERS[COLUMNS[column]]
        self._descending = order == Qt.SortOrder.DescendingOrder
        self.reload()

    @property
    def searching(self) -> bool:
        """Whether a search is still looking for the rows the view wants."""
        return self._more and len(self._entries) < self._wanted

    def has_any(self) -> bool:
        """Whether the agent has any conversation at all, whatever the filters say."""
        from mcp_export.errors import HistoryError

        try:
            return self.store.has_conversations(self._filter)
        except HistoryError as exc:
            self.failed.emit(f"Could not read the history: {exc}")
            return False

    def tools(self) -> list[str]:
        """The tools whose runs started the agent's conversations, sorted."""
        from mcp_export.errors import HistoryError

        try:
            return self.store.conversation_tools(self._filter)
        except HistoryError as exc:
            self.failed.emit(f"Could not read the history: {exc}")
            return []

    def entries(self) -> list[HistoryEntry]:
        """The rows read so far, in model order."""
        return list(self._entries)

    def entry(self, row: int) -> HistoryEntry:
        """The entry in ``row``."""
        return self._entries[row]

    # -- reading pages ----------------------------------------------------------------------

    def canFetchMore(self, parent: AnyIndex) -> bool:
        return not parent.isValid() and self._more and not self._going_on.isActive()

    def fetchMore(self, parent: AnyIndex) -> None:
        if parent.isValid() or not self._more:
            return
        self._wanted = max(self._wanted, len(self._entries) + _PAGE)
        self._read()

    def _read(self) -> None:
        """Read until the rows the view wants are there, the store has no more, or this turn of
        the event loop has searched long enough (then go on from a zero timer)."""
        from mcp_export.errors import HistoryError

        self._going_on.stop()
        deadline = time.perf_counter() + _SLICES_MS / 1000
        try:
            while self.searching:
                began = time.perf_counter()
                page = self.store.conversations(
                    self._filter,
                    order=self._order,
                    descending=self._descending,
                    after=self._next,
                    limit=self._wanted - len(self._entries),
                    scan=self._scan,
                )
                took = (time.perf_counter() - began) * 1000
                if took < _SLICES_MS / 4:
                    self._scan = min(self._scan * 2, _SCAN_RANGE[1])
                elif took > _SLICES_MS:
                    self._scan = max(self._scan // 2, _SCAN_RANGE[0])
                self._next, self._more = page.next, page.next is not None
                if page.rows:
                    first = len(self._entries)
                    self.beginInsertRows(QModelIndex(), first, first + len(page.rows) - 1)
                    self._entries.extend(history_entry(record) for record in page.rows)
                    self.endInsertRows()
                if time.perf_counter() > deadline:
                    break
        except HistoryError as exc:
            self._more = False
            self.failed.emit(f"Could not read the history: {exc}")
        if self.searching:
            self._going_on.start()
        self.searched.emit()

    # -- the table --------------------------------------------------------------------------

    def rowCount(self, parent: AnyIndex | None = None) -> int:
        return 0 if parent is not None and parent.isValid() else len(self._entries)

    def columnCount(self, parent: AnyIndex | None = None) -> int:
        return 0 if parent is not None and parent.isValid() else len(COLUMNS)

    def headerData(
        self, section: int, orientation: Qt.Orientation, role: int = Qt.ItemDataRole.DisplayRole
    ) -> Any:
        if orientation != Qt.Orientation.Horizontal or not 0 <= section < len(COLUMNS):
            return None
        if role == Qt.ItemDataRole.DisplayRole:
            return header_text(COLUMNS[section])
        if role == Qt.ItemDataRole.ToolTipRole:
            return COLUMNS[section]
        return None

    def data(self, index: AnyIndex, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if not index.isValid() or not 0 <= index.row() < len(self._entries):
            return None
        entry = self._entries[index.row()]
        column = COLUMNS[index.column()]
        if role == Qt.ItemDataRole.DisplayRole:
            return _display(entry, column)
        if role == ENTRY_ROLE:
            return entry
        if role == Qt.ItemDataRole.ToolTipRole:
            return _tooltip(entry)
        if role == Qt.ItemDataRole.ForegroundRole and entry.status == "error":
            return QBrush(ERROR_COLOR)
        if role == Qt.ItemDataRole.TextAlignmentRole and column in _NUMERIC:
            return int(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
        return None


def header_text(column: str) -> str:
    """A column's label as its header shows it: a long label on two lines, so the column can
    be as narrow as its values (the words are the label's)."""
    if len(column) <= 12:
        return column
    middle = len(column) // 2
    spaces = [i for i, char in enumerate(column) if char == " "]
    cut = min(spaces, key=lambda i: abs(i - middle))
    return column[:cut] + "\n" + column[cut + 1 :]


def _display(entry: HistoryEntry, column: str) -> str:
    if column == "Started":
        return local_time(entry.started)
    if column == CONVERSATION_TIME:
        return format_duration(entry.duration_ms)
    if column == CONVERSATION_TOKENS:
        return entry.figures.tokens()
    if column == CONVERSATION_COST:
        return entry.total_cost_text
    values = {
        "Kind": entry.kind,
        CASE: entry.case_label,
        "Tool": entry.tool,
        "Status": entry.status,
        "Title": entry.title,
    }
    return values[column]


def _tooltip(entry: HistoryEntry) -> str:
    lines = [entry.title]
    if entry.case is not None:
        lines.append(f"Test case {entry.case.case_name} on {entry.case.model}")
        lines.append(f"Matrix run {entry.case.matrix_id}")
    cost = entry.cost_text
    if cost:
        lines.append(cost[0].upper() + cost[1:])
    if entry.caller:
        lines.append(f"Called by: {entry.caller}")
    if entry.status != "pending" and (entry.tokens_in is None or entry.tokens_out is None):
        lines.append(f"Tokens {UNKNOWN}: the model server did not report them")
    elif entry.tokens_unreported:
        lines.append(
            f"Tokens ≥: {entry.tokens_unreported} model request(s) did not report their counts"
        )
    if entry.run is not None and entry.run.error:
        lines.append(f"Error: {entry.run.error}")
    return "\n".join(lines)
