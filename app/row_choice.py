"""Choosing one row of a table or list view from code, as a click on it does.

``QAbstractItemView.selectRow`` reads the application's keyboard modifiers: while Qt reads Ctrl
as held (a key press whose release it has not seen), it toggles the row instead of choosing it,
and it changes nothing when the row is already the selection. :func:`choose_row` clears the
selection, then makes the row the only selected and the current one, whatever the modifiers, so
a view that follows the selection always hears of it.
"""

from __future__ import annotations

from PySide6.QtCore import QItemSelectionModel
from PySide6.QtWidgets import QAbstractItemView

__all__ = ["choose_row"]


def choose_row(view: QAbstractItemView, row: int) -> None:
    """Make ``row`` of ``view`` its only selected row, and its current one."""
    selection = view.selectionModel()
    if selection is None:
        return
    selection.clearSelection()
    flags = (
        QItemSelectionModel.SelectionFlag.ClearAndSelect
        | QItemSelectionModel.SelectionFlag.Rows
        | QItemSelectionModel.SelectionFlag.Current
    )
    selection.setCurrentIndex(view.model().index(row, 0), flags)
