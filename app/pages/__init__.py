"""Settings pages shown for outline nodes, and the field bindings they are built from.

A binding ties one widget to one field path of an
:class:`~app.document.agent_document.AgentDocument`: typing
sets the field through the document (merged into one undo step per field until editing
finishes), and the widget re-reads the field when a change notice touches it (undo, redo, another
view), without feeding its own update back as an edit.

Pages: ``agent_page.AgentPage`` (this package), ``model_page.ModelPage`` and
``servers_page.ServersPage``; all take ``(document, parent=None)``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from PySide6.QtCore import QEvent, QObject, QSignalBlocker
from PySide6.QtWidgets import QComboBox, QLineEdit, QPlainTextEdit, QWidget

from app.document.agent_document import AgentDocument, FieldPath, merge_id_for, touches
from app.errors import reporter

__all__ = ["ComboBinding", "FieldBinding", "LineEditBinding", "PathSource", "TextEditBinding"]

# A fixed path, or a function giving the path now (a tool's index changes when tools move).
PathSource = FieldPath | Callable[[], FieldPath | None]


class FieldBinding(QObject):
    """Base of the bindings: pushes edits with a merge id, re-reads when a change touches the
    field (``follow=False``: the owner calls :meth:`refresh`, e.g. a tool's fields, whose path
    moves with the tool)."""

    def __init__(
        self,
        document: AgentDocument,
        widget: QWidget,
        path: PathSource,
        label: str,
        *,
        to_model: Callable[[Any], Any] = lambda v: v,
        from_model: Callable[[Any], Any] = lambda v: v,
        follow: bool = True,
    ) -> None:
        super().__init__(widget)
        self.document = document
        self.widget = widget
        self._path = path
        self.label = label
        self._to_model = to_model
        self._from_model = from_model
        if follow:
            document.changed_at.connect(self._on_changed_at)

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:  # noqa: N802 (Qt override)
        """Installed on its widget (``installEventFilter(binding)``): the focus leaving seals the
        typing run into one undo step."""
        if event.type() == QEvent.Type.FocusOut:
            self.document.seal()
        return False

    @property
    def path(self) -> FieldPath | None:
        """The bound field's path now (None when its object is gone, e.g. a deleted tool)."""
        return self._path() if callable(self._path) else self._path

    def commit(self, widget_value: Any) -> bool:
        """Send the widget's value to the document; False (and reported) when refused."""
        path = self.path
        if path is None:
            return False
        try:
            value = self._to_model(widget_value)
        except ValueError as exc:
            reporter().warning(f"{self.label}: {exc}")
            return False
        return self.document.set_field(
            path, value, text=f"Edit {self.label}", merge_id=merge_id_for(path)
        )

    def model_value(self) -> Any:
        """The field's value as the widget shows it."""
        path = self.path
        if path is None:
            return None
        try:
            return self._from_model(self.document.get(path))
        except (AttributeError, KeyError, IndexError):
            return None

    def _on_changed_at(self, changed: FieldPath) -> None:
        path = self.path
        if path is None or touches(changed, path):
            self.refresh()

    def refresh(self) -> None:
        """Show the document's value (called when a change touches the field)."""
        raise NotImplementedError


class LineEditBinding(FieldBinding):
    """A ``QLineEdit`` bound to a text field."""

    def __init__(
        self, document: AgentDocument, edit: QLineEdit, path: PathSource, label: str, **kwargs: Any
    ) -> None:
        super().__init__(document, edit, path, label, **kwargs)
        self.edit = edit
        edit.textEdited.connect(self.commit)
        edit.editingFinished.connect(self._on_editing_finished)
        self.refresh()

    def _on_editing_finished(self) -> None:
        self.document.seal()
        self.refresh()  # show the model's value if the last keystrokes were refused

    def refresh(self) -> None:
        value = self.model_value()
        text = "" if value is None else str(value)
        if self.edit.text() != text and not (self.edit.hasFocus() and self._same(text)):
            cursor = self.edit.cursorPosition()
            with QSignalBlocker(self.edit):
                self.edit.setText(text)
            self.edit.setCursorPosition(min(cursor, len(text)))

    def _same(self, text: str) -> bool:
        # While typing "0." the model holds 0.0: do not overwrite what the person is typing.
        try:
            return bool(self._to_model(self.edit.text()) == self._to_model(text))
        except ValueError:
            return True


class TextEditBinding(FieldBinding):
    """A ``QPlainTextEdit`` bound to a multi-line text field."""

    def __init__(
        self,
        document: AgentDocument,
        edit: QPlainTextEdit,
        path: PathSource,
        label: str,
        **kwargs: Any,
    ) -> None:
        super().__init__(document, edit, path, label, **kwargs)
        self.edit = edit
        self._updating = False
        self.refresh()
        edit.textChanged.connect(self._on_text_changed)
        edit.installEventFilter(self)  # a typing run is one undo step until the focus leaves

    def _on_text_changed(self) -> None:
        if not self._updating:
            self.commit(self.edit.toPlainText())

    def refresh(self) -> None:
        value = self.model_value()
        text = "" if value is None else str(value)
        if self.edit.toPlainText() == text:
            return
        cursor = self.edit.textCursor()
        position = cursor.position()
        self._updating = True
        try:
            self.edit.setPlainText(text)
        finally:
            self._updating = False
        cursor = self.edit.textCursor()
        cursor.setPosition(min(position, len(text)))
        self.edit.setTextCursor(cursor)


class ComboBinding(FieldBinding):
    """A ``QComboBox`` whose items carry the field's values as item data."""

    def __init__(
        self, document: AgentDocument, combo: QComboBox, path: PathSource, label: str, **kwargs: Any
    ) -> None:
        super().__init__(document, combo, path, label, **kwargs)
        self.combo = combo
        combo.activated.connect(lambda index: self.commit(combo.itemData(index)))
        self.refresh()

    def refresh(self) -> None:
        index = self.combo.findData(self.model_value())
        if index >= 0 and index != self.combo.currentIndex():
            with QSignalBlocker(self.combo):
                self.combo.setCurrentIndex(index)
