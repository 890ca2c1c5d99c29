"""How the section tags of a template pair up, and the lines standalone tags take with them.

``{?path}`` and ``{!path}`` open a section, ``{/path}`` closes the innermost open one of that
name; an end tag that names an outer section leaves the inner ones unclosed. A tag that pairs
with nothing is an error and renders as written. A paired tag alone on its line (spaces and tabs
around it) takes the line, its break included, out of the output.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from functools import lru_cache

from schema_types.template.diagnostic import Diagnostic, error_at
from schema_types.template.tokens import Token, TokenKind, _tokens

__all__ = ["OPENERS", "SectionStructure", "open_sections", "section_name", "section_structure"]

OPENERS = frozenset({TokenKind.SECTION, TokenKind.INVERTED_SECTION})
_BLANK = " \t"


@dataclass(frozen=True, slots=True)
class SectionStructure:
    """How the section tags of a template pair up, and what their lines leave out.

    Attributes:
        tokens: the template's tokens.
        ends: index of each paired opening tag → index of its end tag.
        broken: indices of section tags that pair with nothing (rendered as their source text).
        kept: index of a text token → the ``(start, end)`` of it that standalone tags leave.
        problems: the structural diagnostics, in template order.
    """

    tokens: tuple[Token, ...]
    ends: Mapping[int, int]
    broken: frozenset[int]
    kept: Mapping[int, tuple[int, int]]
    problems: tuple[Diagnostic, ...]


def section_name(token: Token) -> str:
    """A section tag's path, dotted (``trip.budget``)."""
    return ".".join(token.path)


@lru_cache(maxsize=8)
def section_structure(template: str) -> SectionStructure:
    tokens = _tokens(template)
    open_: list[int] = []
    ends: dict[int, int] = {}
    broken: set[int] = set()
    problems: list[Diagnostic] = []
    for index, token in enumerate(tokens):
        kind = token.kind
        if kind in OPENERS:
            open_.append(index)
        elif kind is TokenKind.SECTION_END:
            depth = next(
                (d for d in range(len(open_) - 1, -1, -1) if tokens[open_[d]].path == token.path),
                None,
            )
            if depth is None:
                broken.add(index)
                if open_:
                    inner = tokens[open_[-1]]
                    message = (
                        f"{token.text} does not close the open section {inner.text}:"
                        f" write {{/{section_name(inner)}}} to close it"
                    )
                    problems.append(error_at("section-mismatch", message, token))
                else:
                    message = (
                        f"{token.text} closes no section: open one before it with"
                        f" {{?{section_name(token)}}} or {{!{section_name(token)}}}"
                    )
                    problems.append(error_at("unopened-section-end", message, token))
                continue
            opener = tokens[open_[depth]]
            for inner_index in open_[depth + 1 :]:
                inner = tokens[inner_index]
                broken.add(inner_index)
                message = (
                    f"unclosed section {inner.text}: {token.text} closes {opener.text} around it"
                    f" first; write {{/{section_name(inner)}}} before {token.text}"
                )
                problems.append(error_at("unclosed-section", message, inner))
            ends[open_[depth]] = index
            del open_[depth:]
    for index in open_:
        inner = tokens[index]
        message = f"unclosed section {inner.text}: write {{/{section_name(inner)}}} where it ends"
        problems.append(error_at("unclosed-section", message, inner))
    broken.update(open_)
    problems.sort(key=lambda d: d.start)
    kept = _standalone_cuts(template, tokens, [*ends, *ends.values()])
    return SectionStructure(tokens, ends, frozenset(broken), kept, tuple(problems))


def _standalone_cuts(
    template: str, tokens: tuple[Token, ...], tags: list[int]
) -> dict[int, tuple[int, int]]:
    """What is left of the text tokens around section tags that stand alone on their line."""
    kept: dict[int, tuple[int, int]] = {}
    size = len(template)
    for index in sorted(tags):
        token = tokens[index]
        line_start = template.rfind("\n", 0, token.start) + 1
        line_end = template.find("\n", token.end)
        line_end = size if line_end < 0 else line_end
        if template[line_start : token.start].strip(_BLANK):
            continue
        if template[token.end : line_end].rstrip("\r").strip(_BLANK):
            continue
        if line_start < token.start:  # the indentation is the tail of the text token before
            before = index - 1
            start, _ = kept.get(before, (tokens[before].start, tokens[before].end))
            kept[before] = (start, line_start)
        cut = min(line_end + 1, size)
        if token.end < cut:  # the rest of the line and its break: the head of the next one
            after = index + 1
            _, end = kept.get(after, (tokens[after].start, tokens[after].end))
            kept[after] = (cut, end)
    return kept


def open_sections(template: str, offset: int) -> list[Token]:
    """The section tags still open at an offset of a template (to offer their end tag).

    Args:
        template: the prompt template.
        offset: a position in it (code points).

    Returns:
        The ``{?path}`` / ``{!path}`` tokens that end before ``offset`` and are not closed
        before it, outermost first.
    """
    tokens = _tokens(template)
    open_: list[Token] = []
    for token in tokens:
        if token.end > offset:
            break
        if token.kind in OPENERS:
            open_.append(token)
        elif token.kind is TokenKind.SECTION_END:
            for depth in range(len(open_) - 1, -1, -1):
                if open_[depth].path == token.path:
                    del open_[depth:]
                    break
    return open_
