# ruff: noqa: N802  (Qt virtual method names are camelCase)
"""One inner tool call in a chat transcript, as a collapsible card.

The card appears when the model asks for the tool (``ToolCallStarted``: name and arguments,
"running…") and fills in when the call ends (``ToolCallFinished``: result or error text and
duration). A call the permission rule refused never ran; it is marked in the warning colour, apart
from a tool that ran and failed, because the fix differs (a setting, not the tool).
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Literal

from PySide6.QtCore import Qt
from PySide6.QtGui import QFontDatabase, QResizeEvent
from PySide6.QtWidgets import (
    QFrame,
    QHBoxLayout,
    QLabel,
    QPlainTextEdit,
    QSizePolicy,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

if TYPE_CHECKING:
    from mcp_export.session.events import ToolCallFinished, ToolCallStarted

__all__ = ["ERROR_COLOR", "OK_COLOR", "WARNING_COLOR", "CardState", "ToolCard"]

CardState = Literal["running", "ok", "error", "refused"]

OK_COLOR = "#2e7d32"
ERROR_COLOR = "#c62828"
WARNING_COLOR = "#b26a00"
_MAX_LINES = 12  # taller texts scroll inside the card, so one big result cannot swamp the chat


class _CodeBox(QPlainTextEdit):
    """Read-only monospace text, as tall as its content up to ``_MAX_LINES`` lines."""

    def __init__(self, object_name: str) -> None:
        super().__init__()
        self.setObjectName(object_name)
        self.setReadOnly(True)
        self.setFont(QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont))
        self.setLineWrapMode(QPlainTextEdit.LineWrapMode.WidgetWidth)
        self.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Fixed)

    def show_text(self, text: str) -> None:
        self.setPlainText(text)
        self._fit()

    def resizeEvent(self, event: QResizeEvent) -> None:
        super().resizeEvent(event)
        self._fit()  # a new width wraps the text into a different number of lines

    def _fit(self) -> None:
        lines = 0
        block = self.document().firstBlock()
        while block.isValid():
            layout = block.layout()
            lines += max(1, layout.lineCount() if layout is not None else 1)
            block = block.next()
        # A block is taller than the font's line spacing; measure one, so a text that fits shows
        # without a scroll bar.
        first = self.document().firstBlock()
        line = self.blockBoundingRect(first).height() / max(1, first.layout().lineCount())
        line = max(line, float(self.fontMetrics().lineSpacing()))
        shown = min(lines, _MAX_LINES)
        padding = 2 * self.document().documentMargin() + 2 * self.frameWidth()
        height = int(shown * line + padding) + 4
        if height != self.height():
            self.setFixedHeight(height)
        self.setVerticalScrollBarPolicy(
            Qt.ScrollBarPolicy.ScrollBarAlwaysOff
            if lines <= _MAX_LINES
            else Qt.ScrollBarPolicy.ScrollBarAsNeeded
        )


class ToolCard(QFrame):
    """A collapsible card for one tool call (collapsed until the person opens it).

    Args:
        started: the event that announced the call.
    """

    def __init__(self, started: ToolCallStarted, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("toolCard")
        self.setFrameShape(QFrame.Shape.StyledPanel)
        self.call_id = started.call_id
        self.name = started.name
        self.arguments = started.arguments
        self.state: CardState = "running"
        self.result = ""
        self.duration_ms: float | None = None

        self.toggle = QToolButton()
        self.toggle.setObjectName("toolCardToggle")
        self.toggle.setCheckable(True)
        self.toggle.setArrowType(Qt.ArrowType.RightArrow)
        self.toggle.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonTextBesideIcon)
        self.toggle.setAutoRaise(True)
        self.toggle.setText(f"Tool call: {self.name}")
        self.toggle.setToolTip("Show or hide the arguments and the result")
        self.toggle.toggled.connect(self._on_toggled)
        self.status = QLabel("running…")
        self.status.setObjectName("toolCardStatus")

        self.arguments_box = _CodeBox("toolCardArguments")
        self.arguments_box.show_text(json.dumps(self.arguments, indent=2, ensure_ascii=False))
        self.result_label = QLabel("Result")
        self.result_box = _CodeBox("toolCardResult")
        self.result_box.show_text("(still running)")

        header = QHBoxLayout()
        header.setContentsMargins(0, 0, 0, 0)
        header.addWidget(self.toggle)
        header.addStretch(1)
        header.addWidget(self.status)

        self.body = QWidget()
        body = QVBoxLayout(self.body)
        body.setContentsMargins(22, 0, 4, 4)
        body.addWidget(QLabel("Arguments"))
        body.addWidget(self.arguments_box)
        body.addWidget(self.result_label)
        body.addWidget(self.result_box)
        self.body.hide()

        layout = QVBoxLayout(self)
        layout.setContentsMargins(4, 2, 4, 2)
        layout.setSpacing(2)
        layout.addLayout(header)
        layout.addWidget(self.body)

    @property
    def expanded(self) -> bool:
        """Whether the arguments and result are shown."""
        return self.toggle.isChecked()

    def set_expanded(self, expanded: bool) -> None:
        """Open or close the card."""
        self.toggle.setChecked(expanded)

    def finish(self, finished: ToolCallFinished) -> None:
        """Fill in how the call ended."""
        self.result = finished.result
        self.duration_ms = finished.duration_ms
        took = _duration(finished.duration_ms)
        if finished.refused:
            self.state = "refused"
            status, color, label = "refused: needs permission", WARNING_COLOR, "Refused"
            self.setToolTip(
                "The agent's toolPermission setting does not let a headless run use this tool; "
                "the model was told so and the tool did not run."
            )
        elif finished.is_error:
            self.state = "error"
            status, color, label = f"error · {took}", ERROR_COLOR, "Error"
        else:
            self.state = "ok"
            status, color, label = took, OK_COLOR, "Result"
        self.status.setText(status)
        self.status.setStyleSheet(f"color: {color}; font-weight: bold;")
        self.result_label.setText(label)
        self.result_box.show_text(finished.result or "(empty)")

    def _on_toggled(self, expanded: bool) -> None:
        self.toggle.setArrowType(Qt.ArrowType.DownArrow if expanded else Qt.ArrowType.RightArrow)
        self.body.setVisible(expanded)


def _duration(ms: float) -> str:
    return f"{ms:.0f} ms" if ms < 1000 else f"{ms / 1000:.2f} s"
