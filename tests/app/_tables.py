"""Choosing a table's row in a test as a click on it does, whatever state the table is in.

``QAbstractItemView.selectRow`` reads the application's keyboard modifiers (while Qt reads Ctrl
as held from an earlier key press, it toggles the row instead of choosing it) and changes
nothing when the row is already the selection (no selection signal, so a view that follows the
selection is not told). ``pick_row`` clears the selection, then selects the row alone: the
view hears both, whatever the modifiers and the selection before.
"""

from __future__ import annotations

from PySide6.QtCore import QItemSelectionModel
from PySide6.QtWidgets import QAbstractItemView


def pick_row(table: QAbstractItemView, row: int) -> None:
    """Make ``row`` of ``table`` its only selected row, and its current one."""
    selection = table.selectionModel()
    assert selection is not None
    index = table.model().index(row, 0)
    selection.clearSelection()
    flags = (
        QItemSelectionModel.SelectionFlag.ClearAndSelect
        | QItemSelectionModel.SelectionFlag.Rows
        | QItemSelectionModel.SelectionFlag.Current
    )
    selection.setCurrentIndex(index, flags)
