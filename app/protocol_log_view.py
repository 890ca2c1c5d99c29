"""A view of a protocol log: the raw messages of a chat with its model and its tool servers.

``ProtocolLogView(log)`` shows the entries of a ``mcp_export.protocol_log.ProtocolLog`` (the log a
chat runner attaches to its provider and toolbox): a list with each message's time, channel (the
model endpoint or the tool server), direction, kind and a one-line summary, and below it, once a
message is selected (until then the list has the room), the selected message whole, in a
monospace viewer that wraps. The search field keeps the messages
whose text holds what is typed (case-insensitive) and marks it in the viewer. Copy puts the
selected messages on the clipboard as text (each with its heading line), Copy all every message
the search keeps; Ctrl+C in the list copies the selection too.

New entries appear while a run goes on: the log tells the view after each entry (from any
thread), and the view takes them in at most every ``REFRESH_MS`` milliseconds, so a run that
records many messages costs the window one short update per interval. The list follows the newest
entries while it is scrolled to its end. Entries the log drops (its bounds) leave the list too.

The view holds no messages of its own: the log is the truth, and ``set_log`` shows another one.
"""

from __future__ import annotations

import re
import weakref
from collections.abc import Callable
from typing import Any

from PySide6.QtCore import (
    QAbstractTableModel,
    QMetaObject,
    QModelIndex,
    QObject,
    QPersistentModelIndex,
    QSortFilterProxyModel,
    Qt,
    QTimer,
    Slot,
)
from PySide6.QtGui import (
    QBrush,
    QColor,
    QFont,
    QFontDatabase,
    QGuiApplication,
    QKeyEvent,
    QKeySequence,
    QPalette,
    QTextCharFormat,
    QTextCursor,
    QTextDocument,
    QTextOption,
)
from PySide6.QtWidgets import (
    QAbstractItemView,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QLineEdit,
    QPlainTextEdit,
    QPushButton,
    QSplitter,
    QTableView,
    QTextEdit,
    QVBoxLayout,
    QWidget,
)

from app.row_choice import choose_row
from mcp_export.protocol_log import ProtocolEntry, ProtocolLog

__all__ = ["REFRESH_MS", "ProtocolLogModel", "ProtocolLogView"]

REFRESH_MS = 100
"""The shortest time between two updates of the view from its log."""
_SEARCH_DELAY_MS = 150
_MAX_MARKS = 1000
_COLUMNS = ("Time", "Channel", "Direction", "Kind", "Message")
_DIRECTIONS = {"sent": "→ sent", "received": "← received"}
_KINDS = {"stream": "stream events"}
_ERROR_LIGHT = QColor("#b3261e")
_ERROR_DARK = QColor("#ff8a80")
_NOTHING_SELECTED = "Select a message to read it whole."
_EMPTY = "No messages yet: they appear here while the chat runs."


class ProtocolLogModel(QAbstractTableModel):
    """The entries of a log as table rows (one per entry, oldest first), kept up to date by
    ``refresh``."""

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._entries: list[ProtocolEntry] = []
        self._error_colour = _ERROR_LIGHT

    def set_dark(self, dark: bool) -> None:
        """Colour error rows for a dark (or light) palette."""
        self._error_colour = _ERROR_DARK if dark else _ERROR_LIGHT

    def entry(self, row: int) -> ProtocolEntry:
        """The entry shown in ``row``."""
        return self._entries[row]

    def entries(self) -> list[ProtocolEntry]:
        """Every entry shown, oldest first."""
        return list(self._entries)

    def reset(self, entries: list[ProtocolEntry]) -> None:
        """Show ``entries`` instead of what is shown."""
        self.beginResetModel()
        self._entries = list(entries)
        self.endResetModel()

    def refresh(self, log: ProtocolLog) -> list[ProtocolEntry]:
        """Take in what changed in ``log``: drop the rows of entries it no longer keeps, add its
        new entries; returns the entries added."""
        first = log.first_sequence
        gone = 0
        while gone < len(self._entries) and self._entries[gone].sequence < first:
            gone += 1
        if gone:
            self.beginRemoveRows(QModelIndex(), 0, gone - 1)
            del self._entries[:gone]
            self.endRemoveRows()
        last = self._entries[-1].sequence if self._entries else first - 1
        new = log.entries_after(last)
        if new:
            start = len(self._entries)
            self.beginInsertRows(QModelIndex(), start, start + len(new) - 1)
            self._entries.extend(new)
            self.endInsertRows()
        return new

    def rowCount(self, parent: QModelIndex | QPersistentModelIndex = QModelIndex()) -> int:  # noqa: B008, N802
        return 0 if parent.isValid() else len(self._entries)

    def columnCount(self, parent: QModelIndex | QPersistentModelIndex = QModelIndex()) -> int:  # noqa: B008, N802
        return 0 if parent.isValid() else len(_COLUMNS)

    def headerData(  # noqa: N802
        self, section: int, orientation: Qt.Orientation, role: int = Qt.ItemDataRole.DisplayRole
    ) -> Any:
        if orientation == Qt.Orientation.Horizontal and role == Qt.ItemDataRole.DisplayRole:
            return _COLUMNS[section]
        return None

    def data(
        self, index: QModelIndex | QPersistentModelIndex, role: int = Qt.ItemDataRole.DisplayRole
    ) -> Any:
        if not index.isValid():
            return None
        entry = self._entries[index.row()]
        column = index.column()
        if role == Qt.ItemDataRole.DisplayRole:
            if column == 0:
                return entry.clock()
            if column == 1:
                return entry.channel
            if column == 2:
                return _DIRECTIONS[entry.direction]
            if column == 3:
                return _KINDS.get(entry.kind, entry.kind)
            return entry.summary
        if role == Qt.ItemDataRole.ToolTipRole and column == 4:
            return entry.summary
        if role == Qt.ItemDataRole.ForegroundRole and entry.kind == "error":
            return QBrush(self._error_colour)
        return None


class _Search(QSortFilterProxyModel):
    """Keeps the rows whose entry holds the search text (case-insensitive) in its text, its
    summary or its channel."""

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._pattern: re.Pattern[str] | None = None

    def set_text(self, text: str) -> None:
        self.beginFilterChange()
        self._pattern = re.compile(re.escape(text), re.IGNORECASE) if text else None
        self.endFilterChange(QSortFilterProxyModel.Direction.Rows)

    def filterAcceptsRow(  # noqa: N802
        self, source_row: int, source_parent: QModelIndex | QPersistentModelIndex
    ) -> bool:
        pattern = self._pattern
        if pattern is None:
            return True
        model = self.sourceModel()
        assert isinstance(model, ProtocolLogModel)
        entry = model.entry(source_row)
        return any(pattern.search(part) for part in (entry.summary, entry.channel, entry.text))


class _Table(QTableView):
    """The list of messages; Ctrl+C copies the selected messages whole (``on_copy``), not one
    cell's text."""

    def __init__(self, on_copy: Callable[[], object]) -> None:
        super().__init__()
        self._on_copy = on_copy

    def keyPressEvent(self, event: QKeyEvent) -> None:  # noqa: N802
        if event.matches(QKeySequence.StandardKey.Copy):
            self._on_copy()
            return
        super().keyPressEvent(event)


class _Notices(QObject):
    """Carries the log's notices to the GUI thread, at most one waiting at a time.

    ``notify`` may be called from any thread; ``on_change`` runs on this object's thread, once
    for any number of notices that came while it waited (a flood of entries posts one event).
    """

    def __init__(self, on_change: Callable[[], None], parent: QObject) -> None:
        super().__init__(parent)
        self._on_change = on_change
        self._waiting = False

    def notify(self) -> None:
        if self._waiting:
            return
        self._waiting = True
        QMetaObject.invokeMethod(self, "deliver", Qt.ConnectionType.QueuedConnection)

    @Slot()
    def deliver(self) -> None:
        self._waiting = False
        self._on_change()


class ProtocolLogView(QWidget):
    """The entries of a protocol log: a searchable list and the selected message whole.

    Args:
        log: the log to show; None shows nothing until ``set_log``.
        parent: the parent widget.

    Attributes:
        model: the log's entries as rows (``ProtocolLogModel``), behind the search.
        search_field: filters the messages by their text (and marks it in the viewer).
        count_label: how many messages there are, or how many the search keeps.
        table: the list of messages.
        viewer: the selected message, whole (shown from the first selection on).
        splitter: the list above the viewer.
        copy_button: copies the selected messages.
        copy_all_button: copies every message the search keeps.
        clear_button: empties the log.
    """

    def __init__(self, log: ProtocolLog | None = None, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._log: ProtocolLog | None = None
        self._unsubscribe: Callable[[], None] | None = None
        self._notices = _Notices(self._on_log_changed, self)
        self._refresh_timer = QTimer(self)
        self._refresh_timer.setSingleShot(True)
        self._refresh_timer.setInterval(REFRESH_MS)
        self._refresh_timer.timeout.connect(self.refresh)
        self._search_timer = QTimer(self)
        self._search_timer.setSingleShot(True)
        self._search_timer.setInterval(_SEARCH_DELAY_MS)
        self._search_timer.timeout.connect(self._apply_search)

        self.model = ProtocolLogModel(self)
        self._filter = _Search(self)
        self._filter.setSourceModel(self.model)

        self.search_field = QLineEdit()
        self.search_field.setPlaceholderText("Search the messages")
        self.search_field.setClearButtonEnabled(True)
        self.search_field.textChanged.connect(self._on_search_changed)
        self.count_label = QLabel()
        self.copy_button = QPushButton("Copy")
        self.copy_button.setToolTip("Copy the selected messages as text (Ctrl+C in the list)")
        self.copy_button.clicked.connect(self.copy_selected)
        self.copy_all_button = QPushButton("Copy all")
        self.copy_all_button.setToolTip("Copy every message the search keeps, as text")
        self.copy_all_button.clicked.connect(self.copy_all)
        self.clear_button = QPushButton("Clear")
        self.clear_button.setToolTip("Forget the messages recorded so far")
        self.clear_button.clicked.connect(self._on_clear_clicked)

        self._bar = bar = QHBoxLayout()
        bar.addWidget(self.search_field, 1)
        bar.addWidget(self.count_label)
        bar.addWidget(self.copy_button)
        bar.addWidget(self.copy_all_button)
        bar.addWidget(self.clear_button)

        self.table = _Table(self.copy_selected)
        self.table.setModel(self._filter)
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.setSelectionMode(QAbstractItemView.SelectionMode.ExtendedSelection)
        self.table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.table.setWordWrap(False)
        self.table.setAlternatingRowColors(True)
        self.table.verticalHeader().hide()
        self.table.verticalHeader().setDefaultSectionSize(self.fontMetrics().height() + 6)
        header = self.table.horizontalHeader()
        header.setHighlightSections(False)
        # Widths from the widest text a column can hold, not ResizeToContents: that measures
        # every row at each insert, which a long live log cannot afford.
        header.setSectionResizeMode(QHeaderView.ResizeMode.Interactive)
        header.setSectionResizeMode(len(_COLUMNS) - 1, QHeaderView.ResizeMode.Stretch)
        for column, widest in enumerate(("00:00:00.000", "", "← received", "stream events")):
            if widest:
                self.table.setColumnWidth(column, self._text_width(widest))
        self._channel_width = 0
        self.table.selectionModel().selectionChanged.connect(self._on_selection_changed)

        self.viewer = QPlainTextEdit()
        self.viewer.setReadOnly(True)
        self.viewer.setFont(QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont))
        self.viewer.setLineWrapMode(QPlainTextEdit.LineWrapMode.WidgetWidth)
        self.viewer.setWordWrapMode(QTextOption.WrapMode.WrapAtWordBoundaryOrAnywhere)
        self.viewer.setPlaceholderText(_NOTHING_SELECTED)
        self.viewer.setUndoRedoEnabled(False)

        # The viewer shows once a message is selected: until then the list has all the room.
        self.viewer.setVisible(False)
        self.table.setToolTip(_NOTHING_SELECTED)
        self.splitter = splitter = QSplitter(Qt.Orientation.Vertical)
        splitter.addWidget(self.table)
        splitter.addWidget(self.viewer)
        splitter.setStretchFactor(0, 1)
        splitter.setStretchFactor(1, 1)
        splitter.setChildrenCollapsible(False)

        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addLayout(bar)
        layout.addWidget(splitter, 1)

        self._update_colours()
        self.set_log(log)

    def add_to_bar(self, widget: QWidget) -> None:
        """Put ``widget`` (a button of the view's owner) at the end of the search bar."""
        self._bar.addWidget(widget)

    # --- the log --------------------------------------------------------------------------------

    @property
    def log(self) -> ProtocolLog | None:
        """The log shown."""
        return self._log

    def set_log(self, log: ProtocolLog | None) -> None:
        """Show ``log`` (None: nothing) and follow its new entries."""
        if self._unsubscribe is not None:
            self._unsubscribe()
            self._unsubscribe = None
        self._log = log
        self.model.reset(log.entries() if log is not None else [])
        self._fit_channels(self.model.entries())
        if log is not None:
            self._unsubscribe = log.subscribe(_notifier(self._notices))
            self.destroyed.connect(self._unsubscribe)
        self.table.scrollToBottom()
        self._show_selected()
        self._update_count()

    def refresh(self) -> None:
        """Take in the log's new entries now (the view does it by itself after each change, at
        most every ``REFRESH_MS`` ms)."""
        if self._log is None:
            return
        bar = self.table.verticalScrollBar()
        following = bar.value() >= bar.maximum()
        added = self.model.refresh(self._log)
        if added:
            self._fit_channels(added)
            if following:
                self.table.scrollToBottom()
        self._update_count()

    def _text_width(self, text: str) -> int:
        return self.table.fontMetrics().horizontalAdvance(text) + 16

    def _fit_channels(self, entries: list[ProtocolEntry]) -> None:
        """Widen the channel column to the widest channel name seen (it never narrows)."""
        widest = max((self._text_width(entry.channel) for entry in entries), default=0)
        widest = max(widest, self._text_width(_COLUMNS[1]))
        if widest > self._channel_width:
            self._channel_width = widest
            self.table.setColumnWidth(1, widest)

    def _on_log_changed(self) -> None:
        if not self._refresh_timer.isActive():
            self._refresh_timer.start()

    # --- what is shown --------------------------------------------------------------------------

    def visible_entries(self) -> list[ProtocolEntry]:
        """The entries the search keeps, in the list's order."""
        return [
            self.model.entry(self._filter.mapToSource(self._filter.index(row, 0)).row())
            for row in range(self._filter.rowCount())
        ]

    def selected_entries(self) -> list[ProtocolEntry]:
        """The selected entries, in the list's order."""
        rows = sorted(index.row() for index in self.table.selectionModel().selectedRows())
        return [
            self.model.entry(self._filter.mapToSource(self._filter.index(row, 0)).row())
            for row in rows
        ]

    def select_row(self, row: int) -> None:
        """Select the ``row``-th message the search keeps, and show it whole."""
        choose_row(self.table, row)
        self.table.scrollTo(self._filter.index(row, 0))

    def set_search(self, text: str) -> None:
        """Search for ``text`` at once (as typing it in the search field does, after a pause)."""
        self.search_field.setText(text)
        self._search_timer.stop()
        self._apply_search()

    def _on_search_changed(self) -> None:
        self._search_timer.start()

    def _apply_search(self) -> None:
        self._filter.set_text(self.search_field.text())
        self._update_count()
        self._mark_matches()

    def _on_selection_changed(self) -> None:
        self._show_selected()
        selected = self.table.selectionModel().hasSelection()
        self.copy_button.setEnabled(selected)
        if selected and not self.viewer.isVisibleTo(self):
            self.viewer.setVisible(True)
            height = max(self.splitter.height(), 2)
            self.splitter.setSizes([height // 2, height - height // 2])

    def _show_selected(self) -> None:
        self.viewer.clear()
        cursor = QTextCursor(self.viewer.document())
        heading = QTextCharFormat()
        heading.setFontWeight(QFont.Weight.Bold)
        for number, entry in enumerate(self.selected_entries()):
            if number:
                cursor.insertText("\n\n", QTextCharFormat())
            cursor.insertText(entry.heading(), heading)
            cursor.insertText(f"\n{entry.text}", QTextCharFormat())
        self.viewer.moveCursor(QTextCursor.MoveOperation.Start)
        self._mark_matches()

    def _mark_matches(self) -> None:
        """Mark every place (up to ``_MAX_MARKS``) where the viewer's text holds the search."""
        needle = self.search_field.text()
        marks: list[QTextEdit.ExtraSelection] = []
        if needle:
            document = self.viewer.document()
            style = QTextCharFormat()
            style.setBackground(self.palette().color(QPalette.ColorRole.Highlight))
            style.setForeground(self.palette().color(QPalette.ColorRole.HighlightedText))
            cursor = document.find(needle, 0, QTextDocument.FindFlag(0))
            while not cursor.isNull() and len(marks) < _MAX_MARKS:
                mark = QTextEdit.ExtraSelection()
                mark.cursor = cursor
                mark.format = style
                marks.append(mark)
                cursor = document.find(needle, cursor, QTextDocument.FindFlag(0))
            if marks:
                first = QTextCursor(marks[0].cursor)
                first.clearSelection()
                self.viewer.setTextCursor(first)
                self.viewer.ensureCursorVisible()
        self.viewer.setExtraSelections(marks)

    def _update_count(self) -> None:
        shown, total = self._filter.rowCount(), self.model.rowCount()
        if total == 0:
            text = "no messages"
        elif shown == total:
            text = f"{total} message{'s' if total != 1 else ''}"
        else:
            text = f"{shown} of {total}"
        self.count_label.setText(text)
        self.copy_all_button.setEnabled(shown > 0)
        self.copy_button.setEnabled(bool(self.table.selectionModel().hasSelection()))
        self.viewer.setPlaceholderText(_NOTHING_SELECTED if total else _EMPTY)

    # --- copying --------------------------------------------------------------------------------

    def copy_selected(self) -> str:
        """Put the selected messages on the clipboard (each with its heading); returns the
        text ("" and the clipboard untouched when nothing is selected)."""
        text = "\n\n".join(entry.as_text() for entry in self.selected_entries())
        if text:
            QGuiApplication.clipboard().setText(text)
        return text

    def copy_all(self) -> str:
        """Put every message the search keeps on the clipboard; returns the text."""
        text = "\n\n".join(entry.as_text() for entry in self.visible_entries())
        if text:
            QGuiApplication.clipboard().setText(text)
        return text

    def _on_clear_clicked(self) -> None:
        if self._log is not None:
            self._log.clear()
            self.refresh()

    # --- looks ----------------------------------------------------------------------------------

    def changeEvent(self, event: Any) -> None:  # noqa: N802
        super().changeEvent(event)
        if event.type() == event.Type.PaletteChange:
            self._update_colours()

    def _update_colours(self) -> None:
        base = self.palette().color(QPalette.ColorRole.Base)
        self.model.set_dark(base.lightness() < 128)


def _notifier(notices: _Notices) -> Callable[[], None]:
    """The log's listener: tells ``notices`` (while it exists) that the log changed."""
    target = weakref.ref(notices)

    def notify() -> None:
        alive = target()
        if alive is not None:
            try:
                alive.notify()
            except RuntimeError:  # its C++ side is gone: the view is being destroyed
                pass

    return notify
