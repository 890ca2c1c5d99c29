"""The transcript of a chat tab: user messages, streamed Markdown answers, tool cards, notes
about the endpoint, failures.

A scrollable column of small widgets, one per thing said or done, in order. Streaming is the
costly part: the model may send hundreds of deltas a second and re-laying out a long Markdown
answer takes milliseconds, so an :class:`AssistantBlock` only appends deltas to a buffer and
re-renders on a single-shot timer (at most every ``RENDER_INTERVAL_MS``, longer when a render
itself was slow), so a fast stream never stalls the window; :meth:`AssistantBlock.flush` renders
the rest at once when the turn ends. Text selected in an answer is read back as the Markdown has
it (:func:`markdown_source`), since that, not what is drawn, is what a caller of the tool gets.
"""

from __future__ import annotations

import itertools
import math
import re
import time
from collections.abc import Sequence

from PySide6.QtCore import QElapsedTimer, QPoint, QSizeF, Qt, QTimer, Signal
from PySide6.QtGui import QAction, QContextMenuEvent, QFont, QPalette
from PySide6.QtWidgets import (
    QFrame,
    QHBoxLayout,
    QLabel,
    QMenu,
    QPushButton,
    QScrollArea,
    QSizePolicy,
    QTextBrowser,
    QVBoxLayout,
    QWidget,
)

from app.chat.tool_card import ERROR_COLOR, WARNING_COLOR, ToolCard

__all__ = [
    "FREEZE_AT",
    "RENDER_INTERVAL_MS",
    "AssistantBlock",
    "MarkdownView",
    "NoteLine",
    "NoticeBlock",
    "TranscriptView",
    "UserBlock",
    "markdown_source",
    "paragraph_end",
]

RENDER_INTERVAL_MS = 40
FREEZE_AT = 800
_MAX_INTERVAL_MS = 250
_TEXT_FLAGS = (
    Qt.TextInteractionFlag.TextSelectableByMouse | Qt.TextInteractionFlag.LinksAccessibleByMouse
)
# What Markdown may put between two characters of its rendered text: spaces, emphasis, code and
# heading marks, a link's target, a list item's number.
_MARKUP = r"(?:\s|[*_`~#>|\\\[\]!-]|\]\([^)]*\)|\d+[.)](?=\s))*?"
_EMPHASIS = "*_`~"
_LINK_TARGET = re.compile(r"[*_`~]*\]\([^)]*\)")
_MAPPED_LIMIT = 2000
_selections = itertools.count(1)  # orders the selections made in any answer, newest highest


def markdown_source(markdown: str, shown: str) -> str:
    """The part of ``markdown`` that renders as ``shown`` (its markup included), or ``shown``.

    A selection in a rendered answer lacks the ``**`` and backticks that the answer itself (what
    a caller gets) has, so it would not be found in it as it is.
    """
    if shown in markdown or len(shown) > _MAPPED_LIMIT:
        return shown
    characters = [c for c in shown if not c.isspace()]
    if not characters:
        return shown
    found = re.search(_MARKUP.join(re.escape(c) for c in characters), markdown)
    if found is None:
        return shown
    start, end = found.span()
    # Take the marks around the ends too, so "**late** in UTC" keeps both pairs and a link that
    # ends the selection keeps its target.
    while start > 0 and markdown[start - 1] in _EMPHASIS:
        start -= 1
    link = _LINK_TARGET.match(markdown, end)
    end = link.end() if link is not None else end
    while end < len(markdown) and markdown[end] in _EMPHASIS:
        end += 1
    return markdown[start:end]


def _wrapping_label(object_name: str) -> QLabel:
    label = QLabel()
    label.setObjectName(object_name)
    label.setWordWrap(True)
    label.setTextInteractionFlags(_TEXT_FLAGS)
    label.setOpenExternalLinks(True)
    label.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Preferred)
    return label


class MarkdownView(QTextBrowser):
    """Read-only Markdown exactly as tall as its text, without scroll bars.

    A word-wrapped ``QLabel`` would do, but a layout asks a label's height-for-width several times
    per pass, each time laying its text out again; this view lays its document out once per
    change and has a fixed height, which the transcript's layout takes as it is.

    Args:
        actions: added to its context menu, below Copy and Select All.
    """

    def __init__(self, actions: Sequence[QAction] = ()) -> None:
        super().__init__()
        self.setObjectName("assistantText")
        self.markdown = ""
        self.context_actions = list(actions)
        self.selected_at = 0  # when the current selection was made (higher: later)
        self.setFrameShape(QFrame.Shape.NoFrame)
        self.setOpenExternalLinks(True)
        self.setVerticalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Fixed)
        self.viewport().setAutoFillBackground(False)
        self.document().setDocumentMargin(0)
        self.document().documentLayout().documentSizeChanged.connect(self._on_size_changed)
        self.setFixedHeight(self.fontMetrics().lineSpacing())
        self.selectionChanged.connect(self._on_selection_changed)

    def set_markdown(self, text: str) -> None:
        """Show ``text`` (Markdown)."""
        self.markdown = text
        self.setMarkdown(text)

    def selected_source(self) -> str:
        """The selected text as the Markdown has it ("" without a selection)."""
        shown = self.textCursor().selection().toPlainText().strip()
        return markdown_source(self.markdown, shown) if shown else ""

    def context_menu(self, position: QPoint) -> QMenu:
        """The menu a right click at ``position`` shows: Copy, Select All and the tab's actions."""
        menu = self.createStandardContextMenu(position)
        if self.context_actions:
            menu.addSeparator()
            menu.addActions(self.context_actions)
        return menu

    def contextMenuEvent(self, event: QContextMenuEvent) -> None:  # noqa: N802 (Qt override)
        menu = self.context_menu(event.pos())
        menu.exec(event.globalPos())
        menu.deleteLater()

    def _on_selection_changed(self) -> None:
        if self.textCursor().hasSelection():
            self.selected_at = next(_selections)

    def _on_size_changed(self, size: QSizeF) -> None:
        height = math.ceil(size.height()) + 2 * self.frameWidth()
        if height != self.height():
            self.setFixedHeight(height)


class UserBlock(QFrame):
    """One message the person sent (or the filled prompt of a tool test)."""

    def __init__(self, text: str, *, heading: str = "You") -> None:
        super().__init__()
        self.setObjectName("userMessage")
        self.setFrameShape(QFrame.Shape.StyledPanel)
        # A palette role, not a style sheet: a sheet's palette() is read once, so a block sent
        # before a switch to the dark theme stayed a light box.
        self.setAutoFillBackground(True)
        self.setBackgroundRole(QPalette.ColorRole.AlternateBase)
        self.text = text
        title = QLabel(f"<b>{heading}</b>")
        body = _wrapping_label("userText")
        body.setTextFormat(Qt.TextFormat.PlainText)
        body.setText(text)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(8, 4, 8, 6)
        layout.addWidget(title)
        layout.addWidget(body)


class AssistantBlock(QWidget):
    """The assistant's text of one model turn, rendered as Markdown while it streams.

    Re-laying out a long Markdown text costs time in proportion to its length, several times per
    layout pass, so a long answer is shown as a column of labels: once the text not yet frozen
    holds ``FREEZE_AT`` characters, its complete paragraphs (up to a blank line outside a code
    fence) go into a label that never changes again, and only the tail is re-rendered.

    Args:
        actions: added to the context menu of its text.

    Signals:
        rendered(int): the labels now show the first N characters of the text.
    """

    rendered = Signal(int)

    def __init__(self, actions: Sequence[QAction] = ()) -> None:
        super().__init__()
        self.setObjectName("assistantMessage")
        self._actions = list(actions)
        self._parts: list[str] = []
        self._text = ""
        self._frozen = 0  # text[:_frozen] is in labels that no longer change
        self.shown_length = 0
        self.last_render_ms = 0.0
        self._interval = RENDER_INTERVAL_MS
        self.labels: list[MarkdownView] = []
        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.timeout.connect(self._render)
        self._since = QElapsedTimer()
        self._column = QVBoxLayout(self)
        self._column.setContentsMargins(8, 2, 8, 2)
        self._column.setSpacing(4)
        self._column.addWidget(QLabel("<b>Assistant</b>"))
        self._live = self._new_label()

    @property
    def text(self) -> str:
        """All the text received so far (shown or not yet)."""
        if self._parts:
            self._text += "".join(self._parts)
            self._parts.clear()
        return self._text

    def shown_markdown(self) -> str:
        """The Markdown the labels show, joined."""
        return "".join(label.markdown for label in self.labels)

    def append(self, delta: str) -> None:
        """Add streamed text; it shows within the render interval."""
        self._parts.append(delta)
        if not self._timer.isActive():
            # Render soon after the first delta of a burst, but never more often than the
            # interval: a burst of deltas costs one render, not one each.
            waited = self._since.elapsed() if self._since.isValid() else self._interval
            self._timer.start(max(0, self._interval - waited))

    def flush(self) -> None:
        """Show everything received now (the turn ended)."""
        self._timer.stop()
        if self.shown_length != len(self.text):
            self._render()

    def _new_label(self) -> MarkdownView:
        label = MarkdownView(self._actions)
        self.labels.append(label)
        self._column.addWidget(label)
        return label

    def _render(self) -> None:
        text = self.text
        started = time.perf_counter()
        if len(text) - self._frozen >= FREEZE_AT:
            split = paragraph_end(text, self._frozen)
            if split > self._frozen:
                self._live.set_markdown(text[self._frozen : split])
                self._frozen = split
                self._live = self._new_label()
        self._live.set_markdown(text[self._frozen :])
        self.last_render_ms = (time.perf_counter() - started) * 1000
        # A slow render widens the gap before the next one, so rendering never takes more than
        # about a quarter of the loop's time.
        self._interval = int(
            min(_MAX_INTERVAL_MS, max(RENDER_INTERVAL_MS, 3 * self.last_render_ms))
        )
        self._since.start()
        self.shown_length = len(text)
        self.rendered.emit(self.shown_length)


def paragraph_end(text: str, start: int) -> int:
    """Where the last complete paragraph of ``text[start:]`` ends (``start`` if none).

    A paragraph ends after a complete blank line outside a code fence; ``start`` must itself be
    outside a fence.
    """
    end, position, fenced = start, start, False
    for line in text[start:].splitlines(keepends=True):
        position += len(line)
        if line.lstrip().startswith(("```", "~~~")):
            fenced = not fenced
        elif not fenced and not line.strip() and line.endswith("\n") and position > start + 1:
            end = position
    return end


class NoteLine(QLabel):
    """A muted line about how the model endpoint is used (a session ``Notice``): part of the
    trace, not of the answer."""

    def __init__(self, text: str) -> None:
        super().__init__()
        self.setObjectName("chatNote")
        self.note = text
        self.setTextFormat(Qt.TextFormat.PlainText)
        self.setText(f"Note: {text}")
        self.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.setContentsMargins(8, 0, 8, 0)
        self.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Preferred)
        self.setWordWrap(True)  # after the size policy: it adds height-for-width to it
        # The palette's muted text: readable, yet apart from the answer, in light and dark.
        self.setForegroundRole(QPalette.ColorRole.PlaceholderText)
        font = QFont(self.font())
        font.setItalic(True)
        self.setFont(font)


class NoticeBlock(QFrame):
    """A failure or a stop, with what to do and, where a setting can fix it, a button to it.

    Signals:
        open_settings(str): the button was pressed; the page kind (``model`` or ``servers``).
    """

    open_settings = Signal(str)

    def __init__(
        self,
        message: str,
        *,
        hint: str = "",
        severity: str = "error",
        page: str | None = None,
    ) -> None:
        super().__init__()
        self.setObjectName("chatNotice")
        self.setFrameShape(QFrame.Shape.StyledPanel)
        self.message = message
        self.page = page
        color = ERROR_COLOR if severity == "error" else WARNING_COLOR
        self.setStyleSheet(f"#chatNotice {{ border: 1px solid {color}; border-radius: 3px; }}")
        text = _wrapping_label("noticeText")
        text.setTextFormat(Qt.TextFormat.PlainText)
        text.setText(message)
        text.setStyleSheet(f"color: {color}; font-weight: bold;")
        layout = QVBoxLayout(self)
        layout.setContentsMargins(8, 4, 8, 6)
        layout.addWidget(text)
        self.hint_label: QLabel | None = None
        if hint:
            self.hint_label = _wrapping_label("noticeHint")
            self.hint_label.setTextFormat(Qt.TextFormat.PlainText)
            self.hint_label.setText(f"What to do: {hint}")
            layout.addWidget(self.hint_label)
        self.button: QPushButton | None = None
        if page is not None:
            caption = "Open MCP servers" if page == "servers" else "Open model settings"
            self.button = QPushButton(caption)
            self.button.setObjectName("openSettings")
            self.button.clicked.connect(lambda: self.open_settings.emit(page))
            row = QHBoxLayout()
            row.addWidget(self.button)
            row.addStretch(1)
            layout.addLayout(row)


class TranscriptView(QScrollArea):
    """The column of blocks; keeps the newest in view while the person has not scrolled up."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("transcript")
        self.setWidgetResizable(True)
        self.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        content = QWidget()
        content.setObjectName("transcriptContent")
        self._column = QVBoxLayout(content)
        self._column.setContentsMargins(6, 6, 6, 6)
        self._column.setSpacing(6)
        self._column.addStretch(1)
        self.setWidget(content)
        self._follow = True
        bar = self.verticalScrollBar()
        bar.valueChanged.connect(self._on_scrolled)
        bar.rangeChanged.connect(self._on_range_changed)

    def blocks(self) -> list[QWidget]:
        """The blocks, oldest first."""
        found: list[QWidget] = []
        for index in range(self._column.count() - 1):  # the last item is the stretch
            item = self._column.itemAt(index)
            widget = item.widget() if item is not None else None
            if widget is not None:
                found.append(widget)
        return found

    def add(self, block: QWidget) -> None:
        """Append ``block`` below the others."""
        self._column.insertWidget(self._column.count() - 1, block)
        # The layout would only show it on a later loop pass; show it now so what the transcript
        # holds and what the person sees never differ.
        block.show()

    def notes(self) -> list[str]:
        """The texts of the note lines, oldest first."""
        return [b.note for b in self.blocks() if isinstance(b, NoteLine)]

    def tool_cards(self) -> list[ToolCard]:
        """The tool cards, oldest first."""
        return [b for b in self.blocks() if isinstance(b, ToolCard)]

    def selected_answer_text(self) -> str:
        """The text last selected in an answer, as its Markdown has it ("" when none is)."""
        views = [
            label
            for block in self.blocks()
            if isinstance(block, AssistantBlock)
            for label in block.labels
            if label.textCursor().hasSelection()
        ]
        return max(views, key=lambda view: view.selected_at).selected_source() if views else ""

    def assistant_text(self) -> str:
        """Everything the assistant said, turns separated by blank lines."""
        return "\n\n".join(b.text for b in self.blocks() if isinstance(b, AssistantBlock))

    def _on_scrolled(self, value: int) -> None:
        self._follow = value >= self.verticalScrollBar().maximum() - 4

    def _on_range_changed(self, _minimum: int, maximum: int) -> None:
        if self._follow:
            self.verticalScrollBar().setValue(maximum)
