# ruff: noqa: N802  (Qt virtual method names are camelCase)
"""The live preview of a prompt template: the text a call sends, with where each part came from.

The preview text comes from :func:`schema_types.template.engine.render_segments` (the renderer
of served calls). Its owner renders with ``keep_missing=False`` unless the person turns on
:attr:`TemplatePreview.placeholders_action` ("Show placeholders"): then a placeholder with no
value, no default and no fallback shows as ``{param}`` on a warning background instead of the
nothing a call sends. Every other part is marked subtly by where it came from, readable on light
and dark palettes: a value on a soft background, a schema default the same with a dotted
underline, fallback text in italics with a dotted underline, text of an optional section that
is shown on a faint tint; unknown placeholders and brace errors in the error colour with a wavy
underline, and a value the owner flags as refused (:meth:`TemplatePreview.show_segments`'s
``problems``) on an error tint. Hovering a marked part says what it is ("from the schema
default", "fallback text", "inside {?days}…{/days}").

Updates are incremental: only the segments that differ from the previous rendering are replaced
in the view (and so re-laid out and re-highlighted), which keeps a keystroke in a long template
cheap. The sample values a tool editor fills it with come from
:mod:`app.tool_editor.sample_values`.
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from collections.abc import Mapping, Sequence
from typing import NamedTuple

from PySide6.QtCore import QEvent, Qt, Signal
from PySide6.QtGui import (
    QAction,
    QColor,
    QHelpEvent,
    QPalette,
    QSyntaxHighlighter,
    QTextCharFormat,
    QTextCursor,
)
from PySide6.QtWidgets import (
    QHBoxLayout,
    QPlainTextEdit,
    QToolButton,
    QToolTip,
    QVBoxLayout,
    QWidget,
)

from app.tool_editor.highlighter import HighlightStyle, OffsetMap, is_dark, style_colours
from app.tool_editor.sample_panel import heading
from schema_types.template.engine import Segment, SegmentKind, open_sections

__all__ = [
    "PreviewSpan",
    "TemplatePreview",
    "placeholders_button",
    "preview_column",
    "segment_format",
]

_NO_PROBLEMS: Mapping[int, str] = {}


class PreviewSpan(NamedTuple):
    """One marked piece of the preview text, in code points of the preview text.

    Attributes:
        start: offset of its first character in the preview text.
        end: offset just past it.
        kind: the kind of the segment it shows.
        section: whether it comes from inside an optional section that is shown.
        problem: why a call with the value shown here is refused ("" when it is not).
    """

    start: int
    end: int
    kind: SegmentKind
    section: bool = False
    problem: str = ""


# What the view compares between renderings: a piece's text and how it is marked. Where it came
# from in the template is left out, so typing shifts no piece after the cursor.
_Piece = tuple[str, SegmentKind, bool, str]


def segment_format(
    palette: QPalette, kind: SegmentKind, section: bool = False, problem: bool = False
) -> QTextCharFormat:
    """How a piece of the preview is marked on ``palette``.

    Args:
        palette: the preview's palette (light or dark).
        kind: the kind of the segment.
        section: it comes from inside an optional section that is shown.
        problem: a call with this value is refused.

    Returns:
        The format; an empty one for literal text outside sections.
    """
    dark = is_dark(palette)
    colours = style_colours(palette)
    fmt = QTextCharFormat()
    dim = QColor(palette.color(QPalette.ColorRole.PlaceholderText))
    if kind in ("value", "default"):
        highlight = QColor(palette.color(QPalette.ColorRole.Highlight))
        highlight.setAlpha(60 if dark else 38)
        fmt.setBackground(highlight)
    if kind in ("default", "fallback"):
        fmt.setUnderlineStyle(QTextCharFormat.UnderlineStyle.DotLine)
        fmt.setUnderlineColor(dim)
    if kind == "fallback":
        fmt.setFontItalic(True)
    elif kind == "missing":
        fmt.setBackground(QColor("#6b4f00" if dark else "#ffe7a3"))
        fmt.setFontItalic(True)
    elif kind == "error":
        colour = colours[HighlightStyle.UNKNOWN]
        fmt.setForeground(colour)
        fmt.setUnderlineStyle(QTextCharFormat.UnderlineStyle.WaveUnderline)
        fmt.setUnderlineColor(colour)
    if problem:
        colour = colours[HighlightStyle.UNKNOWN]
        tint = QColor(colour)
        tint.setAlpha(70 if dark else 40)
        fmt.setBackground(tint)
        fmt.setUnderlineStyle(QTextCharFormat.UnderlineStyle.WaveUnderline)
        fmt.setUnderlineColor(colour)
    elif section and fmt.background().style() == Qt.BrushStyle.NoBrush:
        tint = QColor(colours[HighlightStyle.SECTION])
        tint.setAlpha(56 if dark else 40)
        fmt.setBackground(tint)
    return fmt


class _SegmentHighlighter(QSyntaxHighlighter):
    """Marks the preview's spans; the spans are set before the text they describe changes."""

    def __init__(self, preview: TemplatePreview) -> None:
        super().__init__(preview)
        self._preview = preview
        self._formats: dict[tuple[SegmentKind, bool, bool], QTextCharFormat] = {}
        self._palette = preview.palette()
        self.setDocument(preview.document())

    def set_palette(self, palette: QPalette) -> None:
        self._palette = palette
        self._formats.clear()
        self.rehighlight()

    def _format(self, span: PreviewSpan) -> QTextCharFormat:
        key = (span.kind, span.section, bool(span.problem))
        found = self._formats.get(key)
        if found is None:
            found = self._formats[key] = segment_format(self._palette, *key)
        return found

    def highlightBlock(self, text: str) -> None:
        preview = self._preview
        spans = preview.spans
        qt_start = self.currentBlock().position()
        to_qt = preview.offsets.to_qt
        start = preview.offsets.from_qt(qt_start)
        end = start + len(text)
        index = max(0, bisect_right(preview.span_starts, start) - 1)
        stop = bisect_left(preview.span_starts, end, lo=index)
        # Touching spans of one format are set as one range (a thousand unpaired tags in a row
        # are one range for Qt to lay out).
        run: tuple[int, int, QTextCharFormat] | None = None
        for span in spans[index:stop]:
            if span.end <= start:
                continue
            first = to_qt(max(span.start, start)) - qt_start
            last = to_qt(min(span.end, end)) - qt_start
            if last <= first:
                continue
            form = self._format(span)
            if run is not None and run[2] is form and run[1] == first:
                run = (run[0], last, form)
                continue
            if run is not None:
                self.setFormat(run[0], run[1] - run[0], run[2])
            run = (first, last, form)
        if run is not None:
            self.setFormat(run[0], run[1] - run[0], run[2])


def _common_prefix(a: Sequence[object], b: Sequence[object]) -> int:
    count = 0
    for left, right in zip(a, b, strict=False):
        if left != right:
            break
        count += 1
    return count


class TemplatePreview(QPlainTextEdit):
    """Read-only view of a filled template, each part marked by where it came from.

    Attributes:
        spans: the marked pieces of the text shown now (every non-literal segment, and literal
            text from inside a shown section).
        placeholders_action: checkable "Show placeholders"; its owner re-renders with
            ``keep_missing`` set to :meth:`show_placeholders` when it is toggled.
    """

    placeholders_toggled = Signal(bool)
    """"Show placeholders" was turned on or off: render again with ``keep_missing`` so."""

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
        self.placeholders_action = QAction("Show placeholders", self)
        self.placeholders_action.setObjectName("showPlaceholders")
        self.placeholders_action.setCheckable(True)
        self.placeholders_action.setToolTip(
            "Show a parameter that has no value, no default and no fallback as {parameter}"
            " instead of the nothing a call sends"
        )
        self.placeholders_action.toggled.connect(self.placeholders_toggled)
        self._pieces: list[_Piece] = []
        self._sources: list[int] = []  # template offset of each piece
        self._span_pieces: list[int] = []  # the piece each span shows
        self._text = ""
        self._template = ""
        self._highlighter = _SegmentHighlighter(self)

    def text(self) -> str:
        """The preview text shown now."""
        return self._text

    def show_placeholders(self) -> bool:
        """Whether the owner should render with ``keep_missing=True``."""
        return self.placeholders_action.isChecked()

    def show_segments(
        self,
        segments: Sequence[Segment],
        *,
        template: str = "",
        problems: Mapping[int, str] = _NO_PROBLEMS,
    ) -> None:
        """Show the rendering ``segments``, replacing only what changed since the last call.

        Args:
            segments: what ``render_segments`` gave.
            template: the template they were rendered from, for saying which section a part
                comes from (without it: "inside an optional section").
            problems: why a call is refused, by the template offset of the segment whose value
                is to blame (shown on an error tint, the reason on hover).
        """
        self._template = template
        self._sources = [s.start for s in segments]  # they move as the template is typed
        if problems:
            pieces = [(s.text, s.kind, s.section, problems.get(s.start, "")) for s in segments]
        else:
            pieces = [(s.text, s.kind, s.section, "") for s in segments]
        old = self._pieces
        if pieces == old:
            return
        head = _common_prefix(old, pieces)
        tail = _common_prefix(old[head:][::-1], pieces[head:][::-1])
        old_start = sum(len(piece[0]) for piece in old[:head])
        old_end = len(self._text) - sum(len(piece[0]) for piece in old[len(old) - tail :])
        middle = "".join(piece[0] for piece in pieces[head : len(pieces) - tail])
        old_text = self._text
        new_text = old_text[:old_start] + middle + old_text[old_end:]
        old_offsets = self.offsets

        # The spans describe the new text before it is put in, so the blocks Qt re-highlights
        # for the replacement read them.
        self._pieces = pieces
        self._text = new_text
        self.offsets = OffsetMap(new_text)
        spans: list[PreviewSpan] = []
        span_pieces: list[int] = []
        position = 0
        for number, (text, kind, section, problem) in enumerate(pieces):
            size = len(text)
            if size and (section or kind != "literal"):
                spans.append(PreviewSpan(position, position + size, kind, section, problem))
                span_pieces.append(number)
            position += size
        self.spans = spans
        self.span_starts = [span.start for span in spans]
        self._span_pieces = span_pieces

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
        # Same text, other marks ({x} missing → {x} unknown): Qt sees no change; redo the marks.
        block = document.findBlock(self.offsets.to_qt(old_start))
        last = document.findBlock(self.offsets.to_qt(old_end))
        while block.isValid():
            self._highlighter.rehighlightBlock(block)
            if block == last:
                break
            block = block.next()

    def span_at(self, offset: int) -> PreviewSpan | None:
        """The marked piece holding the character at ``offset`` of the preview text, or None."""
        index = bisect_right(self.span_starts, offset) - 1
        if index >= 0 and offset < self.spans[index].end:
            return self.spans[index]
        return None

    def describe(self, span: PreviewSpan) -> str:
        """What a marked piece of the text shown now is, as its tooltip says."""
        index = bisect_left(self.span_starts, span.start)
        where = self._sources[self._span_pieces[index]] if index < len(self.spans) else 0
        source = self._template_text(span, where)
        lines: list[str] = []
        if span.problem:
            lines.append(f"A call with this value is refused: {span.problem}")
        if span.kind == "value":
            lines.append(f"{source}: the value" if source else "A value")
        elif span.kind == "default":
            lines.append(f"{source}: from the schema default" if source else "From the default")
        elif span.kind == "fallback":
            lines.append(f"{source}: fallback text, sent when it has no value")
        elif span.kind == "missing":
            lines.append(
                f"{source}: no value, no default and no fallback; a call sends nothing here"
            )
        elif span.kind == "error":
            lines.append("Not filled: see the template's problems")
        if span.section:
            lines.append(self._section_text(where))
        return "\n".join(lines)

    def _template_text(self, span: PreviewSpan, where: int) -> str:
        if not self._template or span.kind == "literal":
            return ""
        end = self._template.find("}", where)
        return self._template[where : end + 1] if end >= 0 else ""

    def _section_text(self, source: int) -> str:
        opened = open_sections(self._template, source) if self._template else []
        if not opened:
            return "Inside an optional section that is shown"
        inner = opened[-1]
        return f"Inside {inner.text}…{{/{'.'.join(inner.path)}}}"

    def set_marking_palette(self, palette: QPalette) -> None:
        """Re-pick the marking colours for ``palette``."""
        self._highlighter.set_palette(palette)

    def changeEvent(self, event: QEvent) -> None:
        super().changeEvent(event)
        if event.type() == QEvent.Type.PaletteChange:
            self.set_marking_palette(self.palette())

    def viewportEvent(self, event: QEvent) -> bool:
        if event.type() == QEvent.Type.ToolTip and isinstance(event, QHelpEvent):
            span = self._span_under(event)
            if span is not None:
                QToolTip.showText(event.globalPos(), self.describe(span), self.viewport())
                return True
        return super().viewportEvent(event)

    def _span_under(self, event: QHelpEvent) -> PreviewSpan | None:
        cursor = self.cursorForPosition(event.pos())
        position = cursor.position()
        # The cursor lands on the boundary nearest the mouse: the character under it is the one
        # after that boundary, or the one before when the mouse is left of it.
        if event.pos().x() < self.cursorRect(cursor).x():
            position -= 1
        if position < 0:
            return None
        return self.span_at(self.offsets.from_qt(position))


def placeholders_button(preview: TemplatePreview) -> QToolButton:
    """A text button that turns ``preview``'s "Show placeholders" on or off."""
    button = QToolButton()
    button.setObjectName("showPlaceholdersButton")
    button.setDefaultAction(preview.placeholders_action)
    button.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonTextOnly)
    return button


def preview_column(
    title: str, preview: TemplatePreview, button: QToolButton
) -> tuple[QWidget, QVBoxLayout]:
    """A column (no margins) headed by ``title`` (a heading for ``preview``) beside ``button``,
    and its layout, for the owner to add ``preview`` and what goes with it to."""
    box = QWidget()
    column = QVBoxLayout(box)
    column.setContentsMargins(0, 0, 0, 0)
    header = QHBoxLayout()
    header.addWidget(heading(title, preview), 1)
    header.addWidget(button)
    column.addLayout(header)
    return box, column
