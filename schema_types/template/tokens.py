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
* ``{path|fallback}`` is a placeholder with fallback text: the text after the first ``|`` (any
  characters but braces and line breaks, possibly none) is inserted when ``path`` has no value.
* ``{?path}`` opens a section kept only when ``path`` has a value (``SECTION``), ``{!path}`` one
  kept only when it has none (``INVERTED_SECTION``), and ``{/path}`` closes either
  (``SECTION_END``). Pairing them up is the engine's work; the tokenizer only names them.
* ``{...}`` on one line whose content is none of these (``{ destination }``, ``{}``,
  ``{a..b}``) is an ``INVALID_PLACEHOLDER``.
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

__all__ = [
    "TOOL_FIELD_PATHS",
    "Token",
    "TokenKind",
    "count_path_uses",
    "referenced_paths",
    "rename_path",
    "tokenize",
]


class TokenKind(enum.Enum):
    """What a token of a template is."""

    TEXT = "text"
    PLACEHOLDER = "placeholder"
    TOOL_FIELD = "tool_field"
    ESCAPED_BRACE = "escaped_brace"
    UNTERMINATED = "unterminated"
    STRAY_CLOSE = "stray_close"
    INVALID_PLACEHOLDER = "invalid_placeholder"
    SECTION = "section"
    INVERTED_SECTION = "inverted_section"
    SECTION_END = "section_end"


@dataclass(frozen=True, slots=True)
class Token:
    """One token of a template.

    Attributes:
        kind: what the token is.
        start: offset of its first character in the template.
        end: offset just past its last character (``template[start:end] == text``).
        text: its source text, braces included.
        path: the dotted path split into identifiers, for ``PLACEHOLDER``, ``TOOL_FIELD`` and
            the three section tokens; empty otherwise.
        fallback: the text after ``|`` of a placeholder written ``{path|fallback}``; None for
            every other token.
    """

    kind: TokenKind
    start: int
    end: int
    text: str
    path: tuple[str, ...] = ()
    fallback: str | None = None


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
_PATH = _IDENT + r"(?:\." + _IDENT + r")*"
_TOKEN_RE = re.compile(
    r"(?P<text>[^{}]+)"
    r"|(?P<escaped>\{\{|\}\})"
    r"|\{(?P<path>" + _PATH + r")(?:\|(?P<fallback>[^{}\n]*))?\}"
    r"|\{(?P<sigil>[?!/])(?P<section>" + _PATH + r")\}"
    r"|(?P<invalid>\{[^{}\n]*\})"
    r"|(?P<unterminated>\{[^{}\n]*)"
    r"|(?P<stray>\})"
)

_SIGIL_KIND = {
    "?": TokenKind.SECTION,
    "!": TokenKind.INVERTED_SECTION,
    "/": TokenKind.SECTION_END,
}
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
        if group == "path" or group == "fallback":
            path = tuple(match.group("path").split("."))
            kind = TokenKind.TOOL_FIELD if path in TOOL_FIELD_PATHS else TokenKind.PLACEHOLDER
            append(Token(kind, start, end, match.group(), path, match.group("fallback")))
        elif group == "section":
            path = tuple(match.group("section").split("."))
            kind = _SIGIL_KIND[match.group("sigil")]
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
    """The paths of every well-formed placeholder and section tag in a template.

    Args:
        template: the prompt template.

    Returns:
        One tuple per distinct path of a ``{path}``, ``{path|fallback}``, ``{?path}``,
        ``{!path}`` or ``{/path}``, tool fields (``("tool", "name")``) included; whether a path
        names a parameter is for ``placeholder_kind`` to say.
    """
    return {token.path for token in _tokens(template) if token.path}


_PATH_KINDS = frozenset(
    {
        TokenKind.PLACEHOLDER,
        TokenKind.SECTION,
        TokenKind.INVERTED_SECTION,
        TokenKind.SECTION_END,
    }
)


def count_path_uses(template: str, path: tuple[str, ...]) -> int:
    """How many placeholders and section tags of a template name ``path`` or a path below it.

    Args:
        template: the prompt template.
        path: a parameter path such as ``("trip",)``; ``{trip.destination}`` counts for it.

    Returns:
        The number of such tokens (``{?trip}…{/trip}`` counts two).
    """
    size = len(path)
    return sum(
        1 for token in _tokens(template) if token.kind in _PATH_KINDS and token.path[:size] == path
    )


def rename_path(template: str, old: tuple[str, ...], new: tuple[str, ...]) -> tuple[str, int]:
    """A template with every placeholder and section tag of ``old`` (or below it) renamed.

    ``{trip}``, ``{trip.nights|a few}`` and ``{?trip}…{/trip}`` become ``{journey}``,
    ``{journey.nights|a few}`` and ``{?journey}…{/journey}`` when ``trip`` is renamed to
    ``journey``; escaped braces, tool fields and everything else stay as written.

    Args:
        template: the prompt template.
        old: the path renamed.
        new: its new name.

    Returns:
        The new template and how many tokens were rewritten.
    """
    size = len(old)
    pieces: list[str] = []
    count = 0
    for token in _tokens(template):
        if token.kind in _PATH_KINDS and token.path[:size] == old:
            dotted = ".".join((*new, *token.path[size:]))
            if token.kind is TokenKind.PLACEHOLDER:
                tail = "" if token.fallback is None else "|" + token.fallback
                pieces.append("{" + dotted + tail + "}")
            else:
                pieces.append(token.text[:2] + dotted + "}")
            count += 1
        else:
            pieces.append(token.text)
    return "".join(pieces), count
