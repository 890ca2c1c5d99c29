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

__all__ = [
    "OPENERS",
    "SectionStructure",
    "open_sections",
    "section_name",
    "section_problems",
    "section_structure",
]

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
        faults: what is wrong, in template order, as token indices for
            :func:`section_problems` to word: ``(tag, end, opener)`` for a tag left unclosed
            when ``end`` closed ``opener`` around it, ``(tag, -1, -1)`` for one unclosed at the
            end, ``(end, inner, -2)`` for an end tag that closes no open section while
            ``inner`` is the innermost open one, ``(end, -1, -2)`` when none is open.
    """

    tokens: tuple[Token, ...]
    ends: Mapping[int, int]
    broken: frozenset[int]
    kept: Mapping[int, tuple[int, int]]
    faults: tuple[tuple[int, int, int], ...]


def section_name(token: Token) -> str:
    """A section tag's path, dotted (``trip.budget``)."""
    return ".".join(token.path)


@lru_cache(maxsize=8)
def section_structure(template: str) -> SectionStructure:
    tokens = _tokens(template)
    pairing = _Pairing(tokens)
    faults: list[tuple[int, int, int]] = []
    for index, token in enumerate(tokens):
        kind = token.kind
        if kind in OPENERS:
            pairing.open(index)
        elif kind is TokenKind.SECTION_END:
            depth = pairing.innermost(token.path)
            if depth is None:
                pairing.broken.add(index)
                faults.append((index, pairing.stack[-1] if pairing.stack else -1, -2))
                continue
            opener = pairing.stack[depth]
            for inner in pairing.close(depth, index):
                pairing.broken.add(inner)
                faults.append((inner, index, opener))
    faults += [(index, -1, -1) for index in pairing.stack]
    pairing.broken.update(pairing.stack)
    faults.sort()
    ends = pairing.ends
    kept = _standalone_cuts(template, tokens, sorted([*ends, *ends.values()]))
    return SectionStructure(tokens, ends, frozenset(pairing.broken), kept, tuple(faults))


@lru_cache(maxsize=8)
def section_problems(template: str) -> tuple[Diagnostic, ...]:
    """The structural diagnostics of a template (tags that pair with nothing), in order.

    Worded apart from the pairing (:func:`section_structure`): rendering needs where the tags
    pair, only ``diagnose`` needs the sentences.
    """
    structure = section_structure(template)
    tokens = structure.tokens
    problems: list[Diagnostic] = []
    for tag, other, third in structure.faults:
        token = tokens[tag]
        if third == -2 and other >= 0:
            inner = tokens[other]
            message = (
                f"{token.text} does not close the open section {inner.text}:"
                f" write {{/{section_name(inner)}}} to close it"
            )
            problems.append(error_at("section-mismatch", message, token))
        elif third == -2:
            message = (
                f"{token.text} closes no section: open one before it with"
                f" {{?{section_name(token)}}} or {{!{section_name(token)}}}"
            )
            problems.append(error_at("unopened-section-end", message, token))
        elif other >= 0:
            end, opener = tokens[other], tokens[third]
            message = (
                f"unclosed section {token.text}: {end.text} closes {opener.text} around it"
                f" first; write {{/{section_name(token)}}} before {end.text}"
            )
            problems.append(error_at("unclosed-section", message, token))
        else:
            message = (
                f"unclosed section {token.text}: write {{/{section_name(token)}}} where it ends"
            )
            problems.append(error_at("unclosed-section", message, token))
    return tuple(problems)


class _Pairing:
    """The open sections while tags are paired left to right.

    Besides the stack of open tags, each path keeps the stack depths of its own open tags, so the
    innermost open section of a path is found in constant time, however many other sections are
    open; each tag enters and leaves both stacks once, so pairing is linear in the tags.
    """

    def __init__(self, tokens: tuple[Token, ...]) -> None:
        self.tokens = tokens
        self.stack: list[int] = []  # token indices of the open tags, innermost last
        self.depths: dict[tuple[str, ...], list[int]] = {}  # path -> its depths in ``stack``
        self.ends: dict[int, int] = {}
        self.broken: set[int] = set()

    def open(self, index: int) -> None:
        self.depths.setdefault(self.tokens[index].path, []).append(len(self.stack))
        self.stack.append(index)

    def innermost(self, path: tuple[str, ...]) -> int | None:
        """The stack depth of the innermost open tag of ``path``, or None."""
        found = self.depths.get(path)
        return found[-1] if found else None

    def close(self, depth: int, end: int) -> list[int]:
        """Pair the tag at ``depth`` with the end tag ``end``; returns the tags left unclosed."""
        inner = self.stack[depth + 1 :]
        for index in reversed(self.stack[depth:]):
            # Every tag above ``depth`` is the innermost of its path, so it is last in its list.
            self.depths[self.tokens[index].path].pop()
        self.ends[self.stack[depth]] = end
        del self.stack[depth:]
        return inner


def _standalone_cuts(
    template: str, tokens: tuple[Token, ...], tags: list[int]
) -> dict[int, tuple[int, int]]:
    """What is left of the text tokens around section tags that stand alone on their line.

    Only a tag's neighbouring tokens are read: a tag alone on its line has nothing but blanks
    between it and the line's ends, and those blanks are inside the text tokens just before and
    after it (any other token on the line is not blank). So each text token is read at most
    twice, whatever the length of its line or the number of tags on it.
    """
    kept: dict[int, tuple[int, int]] = {}
    size = len(template)
    for index in tags:
        token = tokens[index]
        line_start = _line_start(template, tokens, index)
        line_end = _line_end(template, tokens, index)
        if line_start is None or line_end is None:
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


def _line_start(template: str, tokens: tuple[Token, ...], index: int) -> int | None:
    """Where the line of tag ``index`` starts, if only blanks come before it; else None."""
    start = tokens[index].start
    if start == 0 or template[start - 1] == "\n":
        return start
    before = tokens[index - 1]
    if before.kind is not TokenKind.TEXT:
        return None
    line_start = template.rfind("\n", before.start, start) + 1
    if line_start == 0 and before.start > 0:
        return None  # the line began before this text token, with a tag or a brace
    if template[line_start:start].strip(_BLANK):
        return None
    return line_start


def _line_end(template: str, tokens: tuple[Token, ...], index: int) -> int | None:
    """Where the line of tag ``index`` ends (its break), if only blanks follow it; else None."""
    end = tokens[index].end
    size = len(template)
    if end == size or template[end] == "\n":
        return end
    after = tokens[index + 1]
    if after.kind is not TokenKind.TEXT:
        return None
    line_end = template.find("\n", end, after.end)
    if line_end < 0:
        if after.end < size:
            return None  # the line goes on past this text token, with a tag or a brace
        line_end = size
    if template[end:line_end].rstrip("\r").strip(_BLANK):
        return None
    return line_end


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
    pairing = _Pairing(tokens)
    for index, token in enumerate(tokens):
        if token.end > offset:
            break
        if token.kind in OPENERS:
            pairing.open(index)
        elif token.kind is TokenKind.SECTION_END:
            depth = pairing.innermost(token.path)
            if depth is not None:
                pairing.close(depth, index)
    return [tokens[index] for index in pairing.stack]
