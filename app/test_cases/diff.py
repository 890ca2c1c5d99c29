"""Two answers compared word by word, for the matrix tab's side-by-side view (pure: no widgets).

:func:`diff_answers` cuts both texts into words, runs of spaces and single punctuation marks and
aligns them (``difflib``): the left text's pieces are ``same`` or ``removed``, the right text's
``same`` or ``added``; spaces and punctuation between two changes count as changed, so a changed
phrase shows as one piece. Answers too long for a word-level alignment (over :data:`MAX_WORDS`
pieces) are compared line by line instead. :func:`diff_html` renders one side as rich text with
the changed parts highlighted in colours readable on a light and on a dark background.
"""

from __future__ import annotations

import difflib
import html
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

__all__ = ["MAX_WORDS", "Piece", "changed_words", "diff_answers", "diff_html"]

MAX_WORDS = 6000
"""Above this many pieces in either answer, the alignment is made line by line."""

_PIECES = re.compile(r"\s+|\w+|[^\w\s]")
_WORD = re.compile(r"\w")
_WORDS = re.compile(r"\w+")

PieceKind = Literal["same", "removed", "added"]

# (background, text) per kind; the text colour is set too, so the pair reads on either theme.
_LIGHT = {"removed": ("#ffd6d3", "#5c0b05"), "added": ("#c9f0d0", "#0a4316")}
_DARK = {"removed": ("#6e2424", "#ffe3df"), "added": ("#1c5a2b", "#dcffe4")}


@dataclass(frozen=True)
class Piece:
    """A run of one answer's text: the same on both sides, or only on this side."""

    kind: PieceKind
    text: str


def _split(text: str, by_line: bool) -> list[str]:
    return text.splitlines(keepends=True) if by_line else _PIECES.findall(text)


def diff_answers(left: str, right: str) -> tuple[list[Piece], list[Piece]]:
    """The pieces of ``left`` (``same``/``removed``) and of ``right`` (``same``/``added``).

    Joining either side's pieces gives its text back unchanged.
    """
    by_line = max(len(_PIECES.findall(left)), len(_PIECES.findall(right))) > MAX_WORDS
    a, b = _split(left, by_line), _split(right, by_line)
    matcher = difflib.SequenceMatcher(None, a, b, autojunk=False)
    opcodes = matcher.get_opcodes()
    left_pieces: list[Piece] = []
    right_pieces: list[Piece] = []
    for index, (op, a1, a2, b1, b2) in enumerate(opcodes):
        if op == "equal" and not _between_changes(opcodes, index, a[a1:a2]):
            _append(left_pieces, "same", "".join(a[a1:a2]))
            _append(right_pieces, "same", "".join(b[b1:b2]))
            continue
        _append(left_pieces, "removed", "".join(a[a1:a2]))
        _append(right_pieces, "added", "".join(b[b1:b2]))
    return left_pieces, right_pieces


def _between_changes(
    opcodes: Sequence[tuple[str, int, int, int, int]], index: int, tokens: list[str]
) -> bool:
    """Whether an equal run is only spaces or punctuation between two changes: shown as part of
    the change, so a changed phrase reads as one piece rather than word by word."""
    inside = 0 < index < len(opcodes) - 1
    return inside and not any(_WORD.search(token) for token in tokens)


def _append(pieces: list[Piece], kind: PieceKind, text: str) -> None:
    if not text:
        return
    if pieces and pieces[-1].kind == kind:
        pieces[-1] = Piece(kind, pieces[-1].text + text)
    else:
        pieces.append(Piece(kind, text))


def changed_words(pieces: list[Piece]) -> int:
    """How many words (not spaces or punctuation) the changed pieces hold."""
    return sum(
        len(_WORDS.findall(piece.text)) or int(bool(piece.text.strip()))
        for piece in pieces
        if piece.kind != "same"
    )


def diff_html(pieces: list[Piece], *, dark: bool) -> str:
    """One side as rich text: the answer's own line breaks and spaces kept, changes highlighted."""
    colours = _DARK if dark else _LIGHT
    parts: list[str] = []
    for piece in pieces:
        text = html.escape(piece.text, quote=False)
        if piece.kind == "same":
            parts.append(text)
        else:
            background, foreground = colours[piece.kind]
            parts.append(
                f'<span style="background-color:{background}; color:{foreground}">{text}</span>'
            )
    return '<pre style="white-space: pre-wrap">' + "".join(parts) + "</pre>"
