"""The widths of History's columns: from the font, not from the rows, and the title given the
room the pane has to spare.

Sizing to contents asks every row for every column (~90 000 ``data`` calls for 500 rows), so
each column is as wide as the widest value it can hold, or its header's longest line. The
conversation's cost comes before the title, so that at 1024 px it is in sight with the start,
the kind and the case (the title then shows its first words); the title is some 30 characters
wide, the other figures after it, the time in sight at 1280 px; the last column (the tool, which
a run's title names too) takes what is left, and the table scrolls sideways when the pane is
narrower. When the pane is wider than the columns, the title grows into the room (to some 80
characters; a longer one is elided, its tooltip and the transcript have all of it), unless the
person has sized it themselves.
"""

from __future__ import annotations

from PySide6.QtCore import QEvent, QModelIndex, QObject, QPersistentModelIndex, Qt
from PySide6.QtGui import QFontMetrics
from PySide6.QtWidgets import QHeaderView, QStyledItemDelegate, QStyleOptionViewItem, QTableView

from app.history.model import CASE, COLUMNS, CONVERSATION_COST, header_text
from mcp_export.history.figures import CONVERSATION_TIME, CONVERSATION_TOKENS

__all__ = ["ColumnWidths"]

_WIDEST = {
    "Started": "2026-12-31 23:59:59",
    "Kind": "served call",
    CASE: "evening-in-tokyo · gpt-4o",  # elided in the middle beyond
    "Tool": "check_weather",
    "Status": "complete",
    CONVERSATION_TIME: "59 min 59 s",
    CONVERSATION_TOKENS: "888888 in / 88888 out",
    CONVERSATION_COST: "≥ $0.000888",
    "Title": "find_hotel: Find a hotel in Oslo",
}
"""The widest value each column holds without eliding it."""
_TITLE_MOST = 80
"""Characters the title grows to when the pane has room to spare."""
_MARGINS = 24
"""A cell's margins and the sort arrow."""


class ColumnWidths(QObject):
    """Sizes ``table``'s columns (:data:`COLUMNS`) from its font, elides the case column in the
    middle, and gives the title the room the table's viewport has to spare as it resizes."""

    def __init__(self, table: QTableView) -> None:
        super().__init__(table)
        self._table = table
        header = table.horizontalHeader()
        header.setDefaultAlignment(Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter)
        metrics = QFontMetrics(table.font())
        header_metrics = QFontMetrics(header.font())
        self._widths: list[int] = []
        for column, name in enumerate(COLUMNS):
            lines = header_text(name).splitlines()
            label = max(header_metrics.horizontalAdvance(line) for line in lines)
            width = max(metrics.horizontalAdvance(_WIDEST[name]), label) + _MARGINS
            self._widths.append(width)
            header.setSectionResizeMode(column, QHeaderView.ResizeMode.Interactive)
            header.resizeSection(column, width)
        header.setStretchLastSection(True)
        self._title = COLUMNS.index("Title")
        self._title_most = metrics.averageCharWidth() * _TITLE_MOST + _MARGINS
        self._title_set = self._widths[self._title]
        # A case's name and its model both stay in sight when the column is narrow.
        self._middle = _ElideMiddle(table)
        table.setItemDelegateForColumn(COLUMNS.index(CASE), self._middle)
        table.viewport().installEventFilter(self)

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:  # noqa: N802
        if event.type() == QEvent.Type.Resize:
            self.fit_title()
        return False

    def fit_title(self) -> None:
        """Give the title the viewport's room beyond the other columns' widths, between its own
        width and :data:`_TITLE_MOST` characters (not when the person has sized it)."""
        header = self._table.horizontalHeader()
        if header.sectionSize(self._title) != self._title_set:
            return
        others = sum(w for column, w in enumerate(self._widths) if column != self._title)
        room = self._table.viewport().width() - others
        width = max(self._widths[self._title], min(room, self._title_most))
        if width != self._title_set:
            header.resizeSection(self._title, width)
            self._title_set = width


class _ElideMiddle(QStyledItemDelegate):
    """Cells elided in the middle (``Booking ref…budget-model``), not at the end."""

    def initStyleOption(  # noqa: N802
        self, option: QStyleOptionViewItem, index: QModelIndex | QPersistentModelIndex
    ) -> None:
        super().initStyleOption(option, index)
        option.textElideMode = Qt.TextElideMode.ElideMiddle
