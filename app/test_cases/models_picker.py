"""The models a test-case run goes to: a checkable list with a field to add ``provider:model``.

The list starts with the agent's own model, checked (or with the models picked last time; the
matrix tab keeps them). The field offers the agent's model and each provider a run can reach
(``vllm:``, then type the model's name); "List models" asks those endpoints for their own lists
and offers every model they name (the tab does the asking: :attr:`ModelPicker.list_requested`).
Add (or Enter) puts the typed or chosen name in the list, checked. A name must be
``provider:model``; whether the provider is configured is the run's to say (its cells then fail
with what to set).
"""

from __future__ import annotations

from collections.abc import Iterable

from PySide6.QtCore import QSize, Qt, Signal
from PySide6.QtGui import QResizeEvent
from PySide6.QtWidgets import (
    QComboBox,
    QHBoxLayout,
    QLabel,
    QListView,
    QListWidget,
    QListWidgetItem,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

__all__ = ["ModelPicker", "is_model_name"]


def is_model_name(text: str) -> bool:
    """Whether ``text`` reads as ``provider:model`` (both parts non-empty, no spaces)."""
    provider, colon, model = text.strip().partition(":")
    return bool(colon and provider and model) and " " not in text.strip()


class ModelPicker(QWidget):
    """Checkable model names and an add field.

    Signals:
        changed: a model was added, checked or unchecked.
        list_requested: "List models" was clicked.
    """

    changed = Signal()
    list_requested = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.list = QListWidget()
        self.list.setAccessibleName("Models to run on")
        self.list.setFlow(QListView.Flow.LeftToRight)
        self.list.setWrapping(True)
        self.list.setResizeMode(QListView.ResizeMode.Adjust)
        self.list.setSpacing(2)
        self.list.setFixedHeight(self._row_height() + 6)
        self.list.itemChanged.connect(lambda _item: self.changed.emit())
        self.field = QComboBox()
        self.field.setEditable(True)
        self.field.setAccessibleName("Add a model")
        self.field.setInsertPolicy(QComboBox.InsertPolicy.NoInsert)
        self.field.setMinimumContentsLength(18)
        completer = self.field.completer()
        if completer is not None:  # typing "llama" finds ollama:llama3.2 among listed models
            completer.setFilterMode(Qt.MatchFlag.MatchContains)
            completer.setCompletionMode(completer.CompletionMode.PopupCompletion)
        line = self.field.lineEdit()
        assert line is not None
        line.setPlaceholderText("provider:model")
        line.returnPressed.connect(self.add_typed)
        self.add_button = QPushButton("Add")
        self.add_button.setToolTip("Run on this model too (provider:model)")
        self.add_button.clicked.connect(self.add_typed)
        self.list_button = QPushButton("List models")
        self.list_button.setObjectName("listModels")
        self.list_button.setToolTip(
            "Ask the agent's endpoints and those in Preferences for the models they offer"
        )
        self.list_button.clicked.connect(self.list_requested)
        self.hint = QLabel()
        self.hint.setObjectName("modelHint")
        self.hint.setVisible(False)
        self.list_note = QLabel()
        self.list_note.setObjectName("modelListNote")
        self.list_note.setWordWrap(True)
        self.list_note.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.list_note.setVisible(False)
        adder = QHBoxLayout()
        adder.setContentsMargins(0, 0, 0, 0)
        adder.addWidget(self.field, 1)
        adder.addWidget(self.add_button)
        adder.addWidget(self.list_button)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(2)
        layout.addWidget(self.list)
        layout.addLayout(adder)
        layout.addWidget(self.hint)
        layout.addWidget(self.list_note)

    def sizeHint(self) -> QSize:  # noqa: N802  (Qt's name)
        return QSize(360, super().sizeHint().height())

    def resizeEvent(self, event: QResizeEvent) -> None:  # noqa: N802  (Qt's name)
        super().resizeEvent(event)
        self._fit()

    def _row_height(self) -> int:
        return self.list.fontMetrics().lineSpacing() + 8

    def _fit(self) -> None:
        """As tall as the wrapped names need, from one row up to three (then it scrolls)."""
        count = self.list.count()
        if count == 0:
            return
        self.list.doItemsLayout()
        last = self.list.visualItemRect(self.list.item(count - 1))
        used = last.bottom() + self.list.verticalScrollBar().value() + 1
        row = self._row_height()
        wanted = min(max(used, row), row * 3) + 2 * self.list.frameWidth() + 4
        if wanted != self.list.height():
            self.list.setFixedHeight(wanted)

    def set_offers(self, names: Iterable[str]) -> None:
        """What the add field offers (``openai:gpt-4.1-mini``, ``vllm:`` …)."""
        self.field.clear()
        self.field.addItems(list(dict.fromkeys(names)))
        self.field.setCurrentIndex(-1)
        self.field.setEditText("")

    def add_offers(self, names: Iterable[str]) -> None:
        """Offer ``names`` too, after what the field offers already (the typed text stays)."""
        typed = self.field.currentText()
        known = set(self.offers())
        self.field.addItems([name for name in dict.fromkeys(names) if name not in known])
        self.field.setCurrentIndex(-1)
        self.field.setEditText(typed)

    def offers(self) -> list[str]:
        """What the add field offers, in order."""
        return [self.field.itemText(row) for row in range(self.field.count())]

    def show_list_note(self, text: str) -> None:
        """Say how the listing went (empty: say nothing)."""
        self.list_note.setText(text)
        self.list_note.setVisible(bool(text))

    def add_model(self, name: str, *, checked: bool = True) -> bool:
        """Put ``name`` in the list (checking it when it is there already).

        Returns:
            False when ``name`` is not ``provider:model`` (the hint says so).
        """
        name = name.strip()
        if not is_model_name(name):
            self.hint.setText(f"“{name}” is not provider:model (for example vllm:llama3)")
            self.hint.setVisible(True)
            return False
        self.hint.setVisible(False)
        item = self._item(name)
        if item is None:
            item = QListWidgetItem(name)
            item.setFlags(item.flags() | Qt.ItemFlag.ItemIsUserCheckable)
            item.setCheckState(Qt.CheckState.Unchecked)
            self.list.addItem(item)
            self._fit()
        if checked:
            item.setCheckState(Qt.CheckState.Checked)
        return True

    def add_typed(self) -> bool:
        """Add what the field holds; the field empties when it was added."""
        if self.add_model(self.field.currentText()):
            self.field.setEditText("")
            return True
        return False

    def set_checked(self, names: Iterable[str]) -> None:
        """Check exactly ``names`` (added when missing)."""
        wanted = list(names)
        for name in wanted:
            self.add_model(name, checked=False)
        for row in range(self.list.count()):
            item = self.list.item(row)
            state = Qt.CheckState.Checked if item.text() in wanted else Qt.CheckState.Unchecked
            item.setCheckState(state)

    def models(self) -> list[str]:
        """The checked models, in list order."""
        items = (self.list.item(row) for row in range(self.list.count()))
        return [item.text() for item in items if item.checkState() == Qt.CheckState.Checked]

    def all_models(self) -> list[str]:
        """Every model in the list, checked or not."""
        return [self.list.item(row).text() for row in range(self.list.count())]

    def _item(self, name: str) -> QListWidgetItem | None:
        found = self.list.findItems(name, Qt.MatchFlag.MatchExactly)
        return found[0] if found else None
