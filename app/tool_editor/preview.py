# ruff: noqa: N802  (Qt virtual method names are camelCase)
"""The live preview of a prompt template and the "sample values" it is filled with.

The preview text is exactly what the server would send the model: it comes from
:func:`schema_types.template.engine.render_segments` (the renderer of served calls) with
``keep_missing=True``, so a placeholder with no value and no default stays visible as ``{param}``.
Each segment is marked by kind: filled values get a soft background, missing ones a warning
background, unknown placeholders and brace errors the error colour with a wavy underline.

Updates are incremental: only the segments that differ from the previous rendering are replaced
in the view (and so re-laid out and re-highlighted), which keeps a keystroke in a long template
cheap. The values it is filled with come from :mod:`app.tool_editor.sample_values`.
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from collections.abc import Sequence
from typing import NamedTuple

from PySide6.QtCore import QEvent
from PySide6.QtGui import QColor, QPalette, QSyntaxHighlighter, QTextCharFormat, QTextCursor
from PySide6.QtWidgets import QPlainTextEdit, QWidget

from app.tool_editor.highlighter import HighlightStyle, OffsetMap, is_dark, style_colours
from schema_types.template.engine import Segment, SegmentKind

__all__ = ["PreviewSpan", "TemplatePreview", "segment_formats"]


class PreviewSpan(NamedTuple):
    """One marked piece of the preview text, in code points of the preview text."""

    start: int
    end: int
    kind: SegmentKind


def segment_formats(palette: QPalette) -> dict[SegmentKind, QTextCharFormat]:
    """How each non-literal segment kind is marked in the preview, for ``palette``."""
    dark = is_dark(palette)
    value = QTextCharFormat()
    highlight = QColor(palette.color(QPalette.ColorRole.Highlight))
    highlight.setAlpha(60 if dark else 38)
    value.setBackground(highlight)
    missing = QTextCharFormat()
    missing.setBackground(QColor("#6b4f00" if dark else "#ffe7a3"))
    missing.setFontItalic(True)
    missing.setToolTip("No value: the caller sent none and the schema has no default")
    error = QTextCharFormat()
    colour = style_colours(palette)[HighlightStyle.UNKNOWN]
    error.setForeground(colour)
    error.setUnderlineStyle(QTextCharFormat.UnderlineStyle.WaveUnderline)
    error.setUnderlineColor(colour)
    return {"value": value, "missing": missing, "error": error}


class _SegmentHighlighter(QSyntaxHighlighter):
    """Marks the preview's spans; the spans are set before the text they describe changes."""

    def __init__(self, preview: TemplatePreview) -> None:
        super().__init__(preview)
        self._preview = preview
        self.formats = segment_formats(preview.palette())
        self.setDocument(preview.document())

    def highlightBlock(self, text: str) -> None:
        preview = self._preview
        spans = preview.spans
        qt_start = self.currentBlock().position()
        to_qt = preview.offsets.to_qt
        start = preview.offsets.from_qt(qt_start)
        end = start + len(text)
        index = max(0, bisect_right(preview.span_starts, start) - 1)
        stop = bisect_left(preview.span_starts, end, lo=index)
        for span in spans[index:stop]:
            if span.end <= start:
                continue
            first = to_qt(max(span.start, start)) - qt_start
            last = to_qt(min(span.end, end)) - qt_start
            if last > first:
                self.setFormat(first, last - first, self.formats[span.kind])


def _common_prefix(a: Sequence[object], b: Sequence[object]) -> int:
    count = 0
    for left, right in zip(a, b, strict=False):
        if left != right:
            break
        count += 1
    return count


class TemplatePreview(QPlainTextEdit):
    """Read-only view of a filled template with its values, gaps and errors marked.

    Attributes:
        spans: the marked (non-literal) pieces of the text shown now.
    """

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("templatePreview")
        self.setAccessibleName("Prompt preview")
        self.setReadOnly(True)
        self.setUndoRedoEnabled(False)
        self.setLineWrapMode(QPlainTextEdit.LineWrapMode.WidgetWidth)
        self.setPlaceholderText("The filled prompt appears here.")
        self.spans: list[PreviewSpan] = []
        self.span_starts: list[int] = []
        self.offsets = OffsetMap("")
        self._pieces: list[tuple[str, SegmentKind]] = []
        self._text = ""
        self._highlighter = _SegmentHighlighter(self)

    def text(self) -> str:
        """The preview text shown now."""
        return self._text

    def show_segments(self, segments: Sequence[Segment]) -> None:
        """Show the rendering ``segments``, replacing only what changed since the last call."""
        pieces = [(segment.text, segment.kind) for segment in segments]
        old = self._pieces
        if pieces == old:
            return
        head = _common_prefix(old, pieces)
        tail = _common_prefix(old[head:][::-1], pieces[head:][::-1])
        old_start = sum(len(text) for text, _ in old[:head])
        old_end = len(self._text) - sum(len(text) for text, _ in old[len(old) - tail :])
        middle = "".join(text for text, _ in pieces[head : len(pieces) - tail])
        old_text = self._text
        new_text = old_text[:old_start] + middle + old_text[old_end:]
        old_offsets = self.offsets

        # The spans describe the new text before it is put in, so the blocks Qt re-highlights
        # for the replacement read them.
        self._pieces = pieces
        self._text = new_text
        self.offsets = OffsetMap(new_text)
        spans: list[PreviewSpan] = []
        position = 0
        for text, kind in pieces:
            if kind != "literal" and text:
                spans.append(PreviewSpan(position, position + len(text), kind))
            position += len(text)
        self.spans = spans
        self.span_starts = [span.start for span in spans]

        if not old:
            self.setPlainText(new_text)
            return
        document = self.document()
        cursor = QTextCursor(document)
        cursor.setPosition(old_offsets.to_qt(old_start))
        cursor.setPosition(old_offsets.to_qt(old_end), QTextCursor.MoveMode.KeepAnchor)
        if old_text[old_start:old_end] != middle:
            cursor.insertText(middle)  # Qt re-highlights the blocks this touches
            return
        # Same text, other kinds ({x} missing → {x} unknown): Qt sees no change; redo the marks.
        block = document.findBlock(self.offsets.to_qt(old_start))
        last = document.findBlock(self.offsets.to_qt(old_end))
        while block.isValid():
            self._highlighter.rehighlightBlock(block)
            if block == last:
                break
            block = block.next()

    def set_marking_palette(self, palette: QPalette) -> None:
        """Re-pick the marking colours for ``palette``."""
        self._highlighter.formats = segment_formats(palette)
        self._highlighter.rehighlight()

    def changeEvent(self, event: QEvent) -> None:
        super().changeEvent(event)
        if event.type() == QEvent.Type.PaletteChange:
            self.set_marking_palette(self.palette())
