# ruff: noqa: N802  (Qt virtual method names are camelCase)
"""Syntax highlighting of prompt templates, driven by the template engine's own tokenizer.

The highlighter never parses templates itself: it asks :func:`schema_types.template.engine.tokenize`
for the tokens and :func:`schema_types.template.engine.placeholder_kind` what each path names, so
what the editor colours is exactly what the server fills. Placeholders are coloured by what they
name (parameter, tool field, unknown), the ``|fallback`` part of ``{days|a few}`` in the
parameter colour without weight, in italics; section tags (``{?days}``, ``{!days}``, ``{/days}``)
in a colour of their own, their path in the unknown style when it names nothing; escaped braces
dimmed and brace errors in the error colour. Whether section tags pair up is not a matter of one
line: the diagnostics list says so.

Each block (line) is tokenized on its own when Qt asks for it. No brace token spans a line break
(placeholders, fallbacks, section tags and brace errors end at the line) and plain text holds no
brace, so a line's tokens are the same alone as inside the whole template; a keystroke tokenizes
just its own line.

Offsets: the engine counts code points, Qt counts UTF-16 units; :class:`OffsetMap` converts (a
no-op for text without characters outside the Basic Multilingual Plane, the usual case).
"""

from __future__ import annotations

import enum
import itertools
import re
from bisect import bisect_right
from collections.abc import Mapping
from typing import Any

from PySide6.QtCore import QObject
from PySide6.QtGui import (
    QColor,
    QFont,
    QPalette,
    QSyntaxHighlighter,
    QTextCharFormat,
    QTextDocument,
)

from schema_types.template.engine import Token, TokenKind, placeholder_kind, tokenize

__all__ = [
    "HighlightStyle",
    "OffsetMap",
    "TemplateHighlighter",
    "document_text",
    "is_dark",
    "style_colours",
    "style_formats",
]

_ASTRAL = re.compile("[\U00010000-\U0010ffff]")


def document_text(document: QTextDocument) -> str:
    """The text of ``document`` exactly as typed: blocks joined by ``\\n``.

    ``toPlainText`` would also turn no-break spaces and line separators into plain ones, so a
    prompt holding them would never read back equal to itself.
    """
    return document.toRawText().replace("\u2029", "\n")


class OffsetMap:
    """Converts between ``str`` offsets (code points) and Qt positions (UTF-16 units) of a text."""

    __slots__ = ("_qt",)

    def __init__(self, text: str) -> None:
        if _ASTRAL.search(text) is None:
            self._qt: list[int] | None = None
        else:
            # qt[i] is the UTF-16 position of code point i (one entry past the end too).
            widths = (2 if ord(c) > 0xFFFF else 1 for c in text)
            self._qt = [0, *itertools.accumulate(widths)]

    def to_qt(self, offset: int) -> int:
        """The Qt position of code-point ``offset``."""
        if self._qt is None:
            return offset
        return self._qt[max(0, min(offset, len(self._qt) - 1))]

    def from_qt(self, position: int) -> int:
        """The code-point offset at (or just before) Qt ``position``."""
        if self._qt is None:
            return position
        return max(0, bisect_right(self._qt, position) - 1)


class HighlightStyle(enum.Enum):
    """How a token is shown."""

    PARAMETER = "parameter"
    TOOL_FIELD = "tool_field"
    UNKNOWN = "unknown"
    ESCAPED = "escaped"
    MALFORMED = "malformed"
    SECTION = "section"
    FALLBACK = "fallback"


def is_dark(palette: QPalette) -> bool:
    """Whether ``palette`` is a dark one (light text on a dark base)."""
    return palette.color(QPalette.ColorRole.Base).lightness() < 128


def style_colours(palette: QPalette) -> dict[HighlightStyle, QColor]:
    """The text colour of each style for ``palette`` (readable in light and dark mode)."""
    if is_dark(palette):
        names = {
            "parameter": "#78aeff",
            "tool_field": "#d7a0ff",
            "error": "#ff7b72",
            "section": "#4cc9b0",
        }
    else:
        names = {
            "parameter": "#1a5fb4",
            "tool_field": "#8236b0",
            "error": "#c01c28",
            "section": "#00796b",
        }
    dim = QColor(palette.color(QPalette.ColorRole.PlaceholderText))
    return {
        HighlightStyle.PARAMETER: QColor(names["parameter"]),
        HighlightStyle.TOOL_FIELD: QColor(names["tool_field"]),
        HighlightStyle.UNKNOWN: QColor(names["error"]),
        HighlightStyle.MALFORMED: QColor(names["error"]),
        HighlightStyle.ESCAPED: dim,
        HighlightStyle.SECTION: QColor(names["section"]),
        HighlightStyle.FALLBACK: QColor(names["parameter"]),
    }


def style_formats(palette: QPalette) -> dict[HighlightStyle, QTextCharFormat]:
    """The character format of each style for ``palette``: what the highlighter applies."""
    formats: dict[HighlightStyle, QTextCharFormat] = {}
    for style, colour in style_colours(palette).items():
        fmt = QTextCharFormat()
        fmt.setForeground(colour)
        if style in (HighlightStyle.PARAMETER, HighlightStyle.TOOL_FIELD, HighlightStyle.SECTION):
            fmt.setFontWeight(QFont.Weight.DemiBold)
        if style in (HighlightStyle.TOOL_FIELD, HighlightStyle.FALLBACK):
            fmt.setFontItalic(True)
        if style in (HighlightStyle.UNKNOWN, HighlightStyle.MALFORMED):
            fmt.setUnderlineStyle(QTextCharFormat.UnderlineStyle.WaveUnderline)
            fmt.setUnderlineColor(colour)
        formats[style] = fmt
    return formats


_FIXED_STYLES = {
    TokenKind.TOOL_FIELD: HighlightStyle.TOOL_FIELD,
    TokenKind.ESCAPED_BRACE: HighlightStyle.ESCAPED,
    TokenKind.UNTERMINATED: HighlightStyle.MALFORMED,
    TokenKind.STRAY_CLOSE: HighlightStyle.MALFORMED,
    TokenKind.INVALID_PLACEHOLDER: HighlightStyle.MALFORMED,
}

_SECTION_KINDS = frozenset({TokenKind.SECTION, TokenKind.INVERTED_SECTION, TokenKind.SECTION_END})

_KIND_STYLES = {
    "parameter": HighlightStyle.PARAMETER,
    "tool_field": HighlightStyle.TOOL_FIELD,
    "unknown": HighlightStyle.UNKNOWN,
}


class TemplateHighlighter(QSyntaxHighlighter):
    """Colours a template document: placeholders, fallbacks, section tags, escapes, errors.

    Args:
        document: the editor's text document.
        parent: the owner (normally the editor).
    """

    def __init__(self, document: QTextDocument, parent: QObject) -> None:
        super().__init__(parent)
        self._parameters: Mapping[str, Any] = {}
        self._kinds: dict[tuple[str, ...], HighlightStyle] = {}  # path → the style of its name
        self._formats = style_formats(QPalette())
        self.setDocument(document)

    # -- configuration ---------------------------------------------------------------------

    def set_parameters(self, parameters: Mapping[str, Any]) -> None:
        """Classify placeholders against ``parameters`` (the tool's JSON Schema) from now on."""
        self._parameters = parameters
        self._kinds.clear()
        self.rehighlight()

    def set_palette(self, palette: QPalette) -> None:
        """Pick colours that read well on ``palette`` (light or dark)."""
        self._formats = style_formats(palette)
        self.rehighlight()

    # -- reading ---------------------------------------------------------------------------

    def _path_style(self, path: tuple[str, ...]) -> HighlightStyle:
        style = self._kinds.get(path)
        if style is None:
            kind = placeholder_kind(path, self._parameters)
            style = self._kinds[path] = _KIND_STYLES[kind]
        return style

    def styled(self, token: Token) -> list[tuple[int, int, HighlightStyle]]:
        """How ``token`` is shown: ``(start, end, style)`` pieces, none for plain text."""
        kind = token.kind
        if kind is TokenKind.TEXT:
            return []
        if kind is TokenKind.PLACEHOLDER or kind is TokenKind.TOOL_FIELD:
            style = (
                self._path_style(token.path)
                if kind is TokenKind.PLACEHOLDER
                else HighlightStyle.TOOL_FIELD
            )
            if token.fallback is None:
                return [(token.start, token.end, style)]
            bar = token.end - 1 - len(token.fallback) - 1  # the "|" before the fallback
            return [
                (token.start, bar, style),
                (bar, token.end - 1, HighlightStyle.FALLBACK),
                (token.end - 1, token.end, style),
            ]
        if kind in _SECTION_KINDS:
            style = self._path_style(token.path)
            if style is not HighlightStyle.UNKNOWN:
                return [(token.start, token.end, HighlightStyle.SECTION)]
            return [
                (token.start, token.start + 2, HighlightStyle.SECTION),
                (token.start + 2, token.end - 1, style),
                (token.end - 1, token.end, HighlightStyle.SECTION),
            ]
        return [(token.start, token.end, _FIXED_STYLES[kind])]

    # -- Qt --------------------------------------------------------------------------------

    def highlightBlock(self, text: str) -> None:
        # Touching pieces of one style are set as one range: a line of a thousand section tags
        # side by side is one format range for Qt to lay out, not a thousand.
        offsets = OffsetMap(text)
        formats = self._formats
        run_start, run_end, run_style = 0, 0, None
        for token in tokenize(text):
            for start, end, style in self.styled(token):
                if style is run_style and start == run_end:
                    run_end = end
                    continue
                if run_style is not None:
                    first, last = offsets.to_qt(run_start), offsets.to_qt(run_end)
                    self.setFormat(first, last - first, formats[run_style])
                run_start, run_end, run_style = start, end, style
        if run_style is not None:
            first, last = offsets.to_qt(run_start), offsets.to_qt(run_end)
            self.setFormat(first, last - first, formats[run_style])
