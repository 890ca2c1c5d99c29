"""Section pairing and standalone lines, against the plain reading of the rules.

The engine pairs section tags with a stack per path and reads only a tag's neighbouring tokens to
decide whether it stands alone on its line, so a template of many tags or very long lines costs
time in proportion to its length. Here it is held, on random templates, to the direct reading of
the rules (search the open sections from the innermost out; look at the whole line around each
tag), which is written out below and is quadratic, but obviously right.
"""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from schema_types.template.diagnostic import Diagnostic, grouped, line_starts, location
from schema_types.template.engine import (
    Severity,
    Token,
    TokenKind,
    diagnose,
    open_sections,
    tokenize,
)
from schema_types.template.sections import OPENERS, section_structure

PIECES = [
    "{?a}",
    "{?b}",
    "{!a}",
    "{?a.b}",
    "{/a}",
    "{/b}",
    "{/a.b}",
    "{a}",
    "{{",
    "{",
    "}",
    " ",
    "\t",
    "\n",
    "\r\n",
    "x",
    "{ a }",
]


def _pairs(template: str) -> tuple[dict[int, int], set[int]]:
    tokens = tokenize(template)
    open_: list[int] = []
    ends: dict[int, int] = {}
    broken: set[int] = set()
    for index, token in enumerate(tokens):
        if token.kind in OPENERS:
            open_.append(index)
        elif token.kind is TokenKind.SECTION_END:
            depths = [d for d in range(len(open_)) if tokens[open_[d]].path == token.path]
            if not depths:
                broken.add(index)
                continue
            depth = depths[-1]
            broken.update(open_[depth + 1 :])
            ends[open_[depth]] = index
            del open_[depth:]
    broken.update(open_)
    return ends, broken


def _cuts(template: str, ends: dict[int, int]) -> dict[int, tuple[int, int]]:
    """What is left of the text tokens around tags alone on their line, reading whole lines."""
    tokens = tokenize(template)
    kept: dict[int, tuple[int, int]] = {}
    for index in sorted([*ends, *ends.values()]):
        token = tokens[index]
        line_start = template.rfind("\n", 0, token.start) + 1
        line_end = template.find("\n", token.end)
        line_end = len(template) if line_end < 0 else line_end
        if template[line_start : token.start].strip(" \t"):
            continue
        if template[token.end : line_end].rstrip("\r").strip(" \t"):
            continue
        if line_start < token.start:
            start, _ = kept.get(index - 1, (tokens[index - 1].start, tokens[index - 1].end))
            kept[index - 1] = (start, line_start)
        cut = min(line_end + 1, len(template))
        if token.end < cut:
            _, end = kept.get(index + 1, (tokens[index + 1].start, tokens[index + 1].end))
            kept[index + 1] = (cut, end)
    return kept


def _open_at(template: str, offset: int) -> list[Token]:
    open_: list[Token] = []
    for token in tokenize(template):
        if token.end > offset:
            break
        if token.kind in OPENERS:
            open_.append(token)
        elif token.kind is TokenKind.SECTION_END:
            depths = [d for d in range(len(open_)) if open_[d].path == token.path]
            if depths:
                del open_[depths[-1] :]
    return list(open_)


templates = st.lists(st.sampled_from(PIECES), max_size=40).map("".join)


@settings(max_examples=400, deadline=None)
@given(templates)
def test_tags_pair_as_the_innermost_open_section_of_their_path(template: str) -> None:
    ends, broken = _pairs(template)

    structure = section_structure(template)

    assert dict(structure.ends) == ends
    assert set(structure.broken) == broken


@settings(max_examples=400, deadline=None)
@given(templates)
def test_a_paired_tag_alone_on_its_line_takes_the_line_with_it(template: str) -> None:
    ends, _ = _pairs(template)

    assert dict(section_structure(template).kept) == _cuts(template, ends)


@settings(max_examples=200, deadline=None)
@given(templates)
def test_open_sections_at_each_offset_are_the_ones_not_yet_closed(template: str) -> None:
    for offset in range(len(template) + 1):
        assert open_sections(template, offset) == _open_at(template, offset)


def test_a_repeated_mistake_is_one_problem_placed_at_its_first_occurrence() -> None:
    template = "Hello\n" + "{?x}" * 5 + "{/y}" * 3
    parameters = {"type": "object", "properties": {"x": {}, "y": {}}}

    groups = grouped(diagnose(template, parameters))

    assert [(d.code, d.start, count) for d, count in groups] == [
        ("unclosed-section", 6, 5),
        ("section-mismatch", 26, 3),
    ]
    assert location(line_starts(template), 26) == (2, 21)


def test_distinct_messages_stay_apart_and_keep_their_order() -> None:
    first = Diagnostic(Severity.ERROR, "stray-brace", "a", 0, 1)
    other = Diagnostic(Severity.WARNING, "stray-brace", "a", 2, 3)
    third = Diagnostic(Severity.ERROR, "stray-brace", "b", 4, 5)

    assert grouped([first, other, third, first]) == [(first, 2), (other, 1), (third, 1)]


def test_line_and_column_on_a_long_line_and_after_many_lines() -> None:
    template = "a" * 100_000 + "\n" * 100_000 + "b"
    starts = line_starts(template)

    assert location(starts, 99_999) == (1, 100_000)
    assert location(starts, len(template) - 1) == (100_001, 1)
