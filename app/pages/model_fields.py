"""Field helpers of the Model page: optional numbers, spin boxes, stop sequences, result lines.

The bindings extend those of :mod:`app.pages` (typing merged into one undo step per field, the
widget re-reads the field when a change touches it) to the value shapes the model settings have: a
number that may be unset (empty = the provider's default), a bounded number that is always set,
and a list of strings edited one per line. :class:`ResultLine` is where one of the page's requests
(listing the models, testing the connection) shows how it is going and how it ended, until the
next run of that request or a dismiss.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from PySide6.QtCore import QEvent, QRegularExpression, QSignalBlocker, Qt
from PySide6.QtGui import QRegularExpressionValidator
from PySide6.QtWidgets import (
    QAbstractSpinBox,
    QDoubleSpinBox,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QSpinBox,
    QToolButton,
    QWidget,
)

from app.document.agent_document import AgentDocument, merge_id_for
from app.icons import icon
from app.pages import FieldBinding, LineEditBinding, PathSource, TextEditBinding
from app.tool_editor.value_editors import error_colour

__all__ = [
    "OptionalNumberBinding",
    "ResultLine",
    "SpinBinding",
    "StopSequencesBinding",
    "number_field",
    "optional_number",
    "stop_from_text",
    "stop_to_text",
    "wire_spin",
]

_DECIMAL = QRegularExpression(r"-?\d*\.?\d*")
_INTEGER = QRegularExpression(r"-?\d*")


def number_field(name: str, hint: str, *, integer: bool = False) -> QLineEdit:
    """A line edit for an optional number: only digits (and a sign, a point) can be typed."""
    edit = QLineEdit()
    edit.setObjectName(name)
    edit.setPlaceholderText(f"provider default ({hint})")
    edit.setClearButtonEnabled(True)
    edit.setMaximumWidth(320)  # a number, not a paragraph
    edit.setValidator(QRegularExpressionValidator(_INTEGER if integer else _DECIMAL, edit))
    return edit


def optional_number(label: str, *, integer: bool = False) -> Callable[[str], int | float | None]:
    """The text → value conversion of an optional number field (empty → None: unset)."""

    def convert(text: str) -> int | float | None:
        text = text.strip()
        if not text:
            return None
        try:
            return int(text) if integer else float(text)
        except ValueError:
            what = "a whole number" if integer else "a number"
            raise ValueError(
                f"{label} must be {what}, or empty for the provider's default"
            ) from None

    return convert


def stop_to_text(value: list[str] | None) -> str:
    r"""Stop sequences as the field shows them: one per line, line breaks written ``\n``."""
    return "\n".join(
        s.replace("\\", "\\\\").replace("\n", "\\n").replace("\t", "\\t") for s in value or []
    )


def stop_from_text(text: str) -> list[str] | None:
    r"""The stop sequences a field's text means (``\n``, ``\t``, ``\\`` unescaped); None: empty."""
    sequences = [_unescape(line) for line in text.splitlines() if line]
    return sequences or None


def _unescape(line: str) -> str:
    out: list[str] = []
    chars = iter(line)
    for char in chars:
        if char != "\\":
            out.append(char)
            continue
        following = next(chars, "")
        out.append({"n": "\n", "t": "\t", "\\": "\\"}.get(following, "\\" + following))
    return "".join(out)


def _commit_unset_aware(binding: FieldBinding, widget_value: Any) -> bool | None:
    """Commit an empty value as "unset"; None when the value is not empty (commit as usual)."""
    path = binding.path
    try:
        value = binding._to_model(widget_value)
    except ValueError:
        return None  # the ordinary commit reports it
    if value is not None or path is None:
        return None
    return binding.document.unset_field(
        path, text=f"Edit {binding.label}", merge_id=merge_id_for(path)
    )


class OptionalNumberBinding(LineEditBinding):
    """A line edit bound to an optional number: empty unsets it (the provider's default)."""

    def commit(self, widget_value: Any) -> bool:
        done = _commit_unset_aware(self, widget_value)
        return super().commit(widget_value) if done is None else done


class StopSequencesBinding(TextEditBinding):
    """The stop sequences, one per line; a half-typed line is never overwritten by the model."""

    def __init__(self, document: AgentDocument, edit: Any, path: PathSource, label: str) -> None:
        super().__init__(
            document, edit, path, label, to_model=stop_from_text, from_model=lambda v: v
        )

    def commit(self, widget_value: Any) -> bool:
        done = _commit_unset_aware(self, widget_value)
        return super().commit(widget_value) if done is None else done

    def refresh(self) -> None:
        value = self.model_value()
        if stop_from_text(self.edit.toPlainText()) == value:
            return  # same sequences (a trailing empty line while typing the next one)
        text = stop_to_text(value)
        self._updating = True
        try:
            self.edit.setPlainText(text)
        finally:
            self._updating = False


def wire_spin(binding: FieldBinding, spin: QSpinBox | QDoubleSpinBox) -> None:
    """Commit ``spin``'s value as it is typed, each typing run one undo step (sealed when the
    editing finishes or the focus leaves)."""
    spin.setKeyboardTracking(True)
    spin.setCorrectionMode(QAbstractSpinBox.CorrectionMode.CorrectToNearestValue)
    spin.valueChanged.connect(binding.commit)
    spin.editingFinished.connect(binding.document.seal)
    spin.installEventFilter(binding)


class SpinBinding(FieldBinding):
    """A ``QSpinBox``/``QDoubleSpinBox`` bound to a number that is always set."""

    def __init__(
        self,
        document: AgentDocument,
        spin: QSpinBox | QDoubleSpinBox,
        path: PathSource,
        label: str,
    ) -> None:
        super().__init__(document, spin, path, label)
        self.spin = spin
        wire_spin(self, spin)
        self.refresh()

    def refresh(self) -> None:
        value = self.model_value()
        if value is None or self.spin.value() == value:
            return
        with QSignalBlocker(self.spin):
            self.spin.setValue(value)


class ResultLine(QWidget):
    """One request's line on the page: "working…" while it runs, then its outcome (a failure
    marked ✖ and in red) with a button to dismiss it. Hidden while there is nothing to say."""

    def __init__(self, name: str, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName(name)
        self.label = QLabel()
        self.label.setWordWrap(True)
        self.label.setAlignment(Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignTop)
        self.label.setTextFormat(Qt.TextFormat.PlainText)
        self.label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.dismiss_button = QToolButton()
        self.dismiss_button.setIcon(icon("close"))
        self.dismiss_button.setAutoRaise(True)
        self.dismiss_button.setToolTip("Dismiss")
        self.dismiss_button.setAccessibleName("Dismiss")
        self.dismiss_button.clicked.connect(self.dismiss)
        layout = QHBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.label, 1)
        layout.addWidget(self.dismiss_button, 0, Qt.AlignmentFlag.AlignTop)
        self._failed = False
        self.dismiss()

    def text(self) -> str:
        """What the line says ("" when hidden)."""
        return self.label.text()

    def failed(self) -> bool:
        """Whether the line shows a failure."""
        return self._failed

    def show_running(self, text: str) -> None:
        """Say what the request is doing (replaces the previous outcome)."""
        self._show(text, failed=False, dismissible=False)

    def show_success(self, text: str) -> None:
        """Show how the request ended."""
        self._show(text, failed=False, dismissible=True)

    def show_failure(self, message: str) -> None:
        """Show why the request failed (``✖`` and the error colour)."""
        self._show(f"✖ {message}", failed=True, dismissible=True)

    def dismiss(self) -> None:
        """Clear and hide the line."""
        self._failed = False
        self.label.clear()
        self.hide()

    def _show(self, text: str, *, failed: bool, dismissible: bool) -> None:
        self._failed = failed
        self.label.setText(text)
        self._colour()
        self.dismiss_button.setVisible(dismissible)
        self.show()

    def _colour(self) -> None:
        self.label.setStyleSheet(f"color: {error_colour(self).name()};" if self._failed else "")

    def changeEvent(self, event: QEvent) -> None:  # noqa: N802 (Qt override)
        super().changeEvent(event)
        if event.type() == QEvent.Type.PaletteChange:
            self._colour()  # the red that reads on a light or a dark background
