"""An item delegate whose open line editor keeps what the person is typing.

Qt rewrites every open editor that a ``dataChanged`` covers, whatever the roles: a model that
refreshes its rows a moment after an edit (problem marks, schema checks) would put the old text
back under the cursor, so a person naming a new ``new_property`` ends with ``new_propertycity``.
"""

from __future__ import annotations

from PySide6.QtCore import QModelIndex, QPersistentModelIndex, Qt
from PySide6.QtWidgets import QLineEdit, QStyledItemDelegate, QWidget

__all__ = ["KeepTypedDelegate"]


class KeepTypedDelegate(QStyledItemDelegate):
    """Rewrites an open line editor only when its value changed and nothing was typed yet."""

    def setEditorData(  # noqa: N802 (Qt override)
        self, editor: QWidget, index: QModelIndex | QPersistentModelIndex
    ) -> None:
        if isinstance(editor, QLineEdit) and (
            editor.isModified() or editor.text() == index.data(Qt.ItemDataRole.EditRole)
        ):
            return
        super().setEditorData(editor, index)
