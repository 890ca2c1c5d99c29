"""Small layout parts the studio's forms and bars are built from: widgets side by side or one
below the other as one widget, and a form label that moves the focus to its field."""

from __future__ import annotations

from PySide6.QtWidgets import (
    QBoxLayout,
    QDialog,
    QDialogButtonBox,
    QHBoxLayout,
    QLabel,
    QScrollArea,
    QVBoxLayout,
    QWidget,
)

__all__ = ["buddy", "closable_column", "column", "row", "scroll_area"]


def row(*widgets: QWidget) -> tuple[QWidget, QHBoxLayout]:
    """``widgets`` side by side in a widget of their own (no margins), and its layout."""
    box = QWidget()
    layout = QHBoxLayout(box)
    _fill(layout, widgets)
    return box, layout


def column(*widgets: QWidget) -> QWidget:
    """Widgets one below the other, as one form field (a control and its explanation)."""
    box = QWidget()
    _fill(QVBoxLayout(box), widgets)
    return box


def _fill(layout: QBoxLayout, widgets: tuple[QWidget, ...]) -> None:
    layout.setContentsMargins(0, 0, 0, 0)
    layout.setSpacing(2)
    for widget in widgets:
        layout.addWidget(widget)


def buddy(text: str, widget: QWidget) -> QLabel:
    """A form label for ``widget``: its mnemonic (``&Name``) moves the focus there."""
    label = QLabel(text)
    label.setBuddy(widget)
    return label


def closable_column(dialog: QDialog, *widgets: QWidget, stretch: QWidget) -> None:
    """Lay ``widgets`` out one below the other in ``dialog``, ``stretch`` (one of them) taking the
    room to spare, above a Close button that closes the dialog."""
    buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
    buttons.rejected.connect(dialog.reject)
    layout = QVBoxLayout(dialog)
    for widget in widgets:
        layout.addWidget(widget, 1 if widget is stretch else 0)
    layout.addWidget(buttons)


def scroll_area(content: QWidget, name: str = "") -> QScrollArea:
    """``content`` in a scroll area (named ``name``) that gives it all the room there is, and
    scroll bars only when there is less room than its minimum size."""
    area = QScrollArea()
    if name:
        area.setObjectName(name)
    area.setWidgetResizable(True)
    area.setWidget(content)
    return area
