"""The tokenizer of prompt templates: the one lexical view shared by highlighter and engine.

A template is cut into contiguous tokens that tile it exactly (``"".join(t.text for t in
tokenize(s)) == s``), so the editor can colour every character and the renderer can map every
output segment back to its source span. The grammar:

* ``{{`` and ``}}`` are literal braces (``ESCAPED_BRACE``).
* ``{path}`` where ``path`` is ``identifier(.identifier)*`` and an identifier is
  ``[A-Za-z_][A-Za-z0-9_-]*`` is a placeholder. ``{tool.name}`` and ``{tool.description}`` are
  ``TOOL_FIELD`` tokens; every other path (bare ``{name}`` included) is a ``PLACEHOLDER``, because
  whether a bare ``{name}`` means the tool's name depends on the parameters, which the tokenizer
  does not see (``template.engine.placeholder_kind`` decides).
* ``{...}`` on one line whose content is not a path (``{ destination }``, ``{}``, ``{a..b}``) is an
  ``INVALID_PLACEHOLDER``.
* ``{`` with no ``}`` before the end of the line or the next ``{`` is ``UNTERMINATED``; the token
  runs up to (not including) that newline or brace, so ``{abc`` is flagged as a whole while a
  following ``{date}`` on the same line still reads as a placeholder.
* A ``}`` that is neither part of ``}}`` nor closes a placeholder is ``STRAY_CLOSE``.

Scanning is left to right and the first alternative wins, so ``{{{x}}}`` is ``{{`` + ``{x}`` +
``}}`` (renders ``{X}``, as ``str.format`` does) and ``}}}`` is ``}}`` + a stray ``}``.

Offsets are Python ``str`` indices (code points); a Qt editor converts to UTF-16 itself.
"""

from __future__ import annotations

import enum
import re
from dataclasses import dataclass
from functools import lru_cache

__all__ = ["TOOL_FIELD_PATHS", "Token", "TokenKind", "referenced_paths", "tokenize"]


class TokenKind(enum.Enum):
    """What a token of a template is."""

    TEXT = "text"
    PLACEHOLDER = "placeholder"
    TOOL_FIELD = "tool_field"
    ESCAPED_BRACE = "escaped_brace"
    UNTERMINATED = "unterminated"
    STRAY_CLOSE = "stray_close"
    INVALID_PLACEHOLDER = "invalid_placeholder"


@dataclass(frozen=True, slots=True)
class Token:
    """One token of a template.

    Attributes:
        kind: what the token is.
        start: offset of its first character in the template.
        end: offset just past its last character (``template[start:end] == text``).
        text: its source text, braces included.
        path: the dotted path split into identifiers, for ``PLACEHOLDER`` and ``TOOL_FIELD``
            tokens; empty otherwise.
    """

    kind: TokenKind
    start: int
    end: int
    text: str
    path: tuple[str, ...] = ()


#: The paths that always mean the tool's own fields, whatever the parameters are called.
TOOL_FIELD_PATHS: frozenset[tuple[str, ...]] = frozenset(
    {("tool", "name"), ("tool", "description")}
)

_IDENT = r"[A-Za-z_][A-Za-z0-9_-]*"
# One alternation scanned by finditer: the C regex engine does the per-character work. Every
# character is matched by some alternative (plain text, or one of the brace forms, the last two
# of which accept any single brace), so the matches tile the template with no gaps. Plain text
# comes first because it is by far the most frequent; among the brace forms the order encodes
# precedence: escape, then placeholder, then the error forms.
_TOKEN_RE = re.compile(
    r"(?P<text>[^{}]+)"
    r"|(?P<escaped>\{\{|\}\})"
    r"|\{(?P<path>" + _IDENT + r"(?:\." + _IDENT + r")*)\}"
    r"|(?P<invalid>\{[^{}\n]*\})"
    r"|(?P<unterminated>\{[^{}\n]*)"
    r"|(?P<stray>\})"
)

_GROUP_KIND = {
    "text": TokenKind.TEXT,
    "escaped": TokenKind.ESCAPED_BRACE,
    "invalid": TokenKind.INVALID_PLACEHOLDER,
    "unterminated": TokenKind.UNTERMINATED,
    "stray": TokenKind.STRAY_CLOSE,
}


@lru_cache(maxsize=8)
def _tokens(template: str) -> tuple[Token, ...]:
    # Cached because the editor tokenizes, diagnoses and renders the same text on one keystroke;
    # a tuple of frozen tokens can be shared safely between those callers.
    tokens: list[Token] = []
    append = tokens.append
    for match in _TOKEN_RE.finditer(template):
        group = match.lastgroup
        start, end = match.span()
        if group == "path":
            path = tuple(match.group("path").split("."))
            kind = TokenKind.TOOL_FIELD if path in TOOL_FIELD_PATHS else TokenKind.PLACEHOLDER
            append(Token(kind, start, end, match.group(), path))
        else:
            append(Token(_GROUP_KIND[group or "text"], start, end, match.group()))
    return tuple(tokens)


def tokenize(template: str) -> list[Token]:
    """Cut a template into tokens.

    Args:
        template: the prompt template.

    Returns:
        The tokens in order; their spans are contiguous and cover ``[0, len(template))``. Never
        raises: malformed braces become ``UNTERMINATED``, ``STRAY_CLOSE`` or
        ``INVALID_PLACEHOLDER`` tokens.
    """
    return list(_tokens(template))


def referenced_paths(template: str) -> set[tuple[str, ...]]:
    """The paths of every well-formed placeholder in a template.

    Args:
        template: the prompt template.

    Returns:
        One tuple per distinct ``{path}``, tool fields (``("tool", "name")``) included; whether a
        path names a parameter is for ``placeholder_kind`` to say.
    """
    return {token.path for token in _tokens(template) if token.path}
