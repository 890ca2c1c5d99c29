"""Saving over a YAML agent file without losing what its author wrote.

People edit agent files by hand and keep them in git, so a save rewrites only what changed:
comments, blank lines, key order, quoting, block scalars, flow collections and indentation stay.
The file is read again with ruamel.yaml's round-trip loader and the data to save is merged into
that tree (:mod:`files._yaml_merge`), which is then written back with the file's own indentation.

ruamel itself tidies a few things nobody asked it to (``~`` becomes ``null``, the spacing inside
flow collections, a ``---``). So the lines that differ between the original tree written back
unmerged and the merged tree written back are spliced into the original text, and a line that no
edit touches stays byte for byte as it was.

Every result is read back with the project's own loader and must give exactly the data to save;
when it does not (or the file uses something the merge leaves alone, such as merge keys), the
caller gets None and writes a plain dump instead.
"""

from __future__ import annotations

import difflib
import io
import re
from typing import Any

from ruamel.yaml import YAML
from ruamel.yaml.comments import CommentedMap
from ruamel.yaml.error import YAMLError
from ruamel.yaml.representer import RoundTripRepresenter

from schema_types.files._yaml_dump import NO_WRAP, dump_yaml
from schema_types.files._yaml_merge import merge, same_data
from schema_types.files.agent_yaml import YamlSyntaxError, parse_yaml_data

__all__ = ["edit_yaml_text"]


class _Representer(RoundTripRepresenter):
    """Writes None as ``null``, as the plain dump does, where ruamel would leave it empty."""

    def represent_none(self, data: Any) -> Any:
        return self.represent_scalar("tag:yaml.org,2002:null", "null")


_Representer.add_representer(type(None), _Representer.represent_none)


def edit_yaml_text(old_text: str, old_data: Any, new_data: Any) -> str | None:
    """The text of a YAML agent file with ``new_data`` in place of ``old_data``.

    Args:
        old_text: the file's text as it is on disk.
        old_data: that text's data, as the project's loader reads it.
        new_data: the data to save (plain JSON-shaped data).

    Returns:
        The new text, where every line no edit touches is as it was (``old_text`` itself when
        the data is unchanged), or None when the file cannot be edited in place.
    """
    if same_data(old_data, new_data):
        return old_text
    crlf = "\r\n" in old_text
    text = old_text.replace("\r\n", "\n") if crlf else old_text
    for keep_styles in (True, False):
        edited = _edit(text, old_data, new_data, keep_styles)
        if edited is not None:
            return edited.replace("\n", "\r\n") if crlf else edited
    return None


def _edit(text: str, old_data: Any, new_data: Any, keep_styles: bool) -> str | None:
    yaml = _round_trip(text)
    try:
        tree = yaml.load(text)
        if not isinstance(tree, CommentedMap):
            return None
        before = _dump(yaml, tree)
        merged = merge(tree, old_data, new_data, _Fresh(), keep_styles=keep_styles)
        if merged is None:
            return None
        after = _dump(yaml, merged)
    except (YAMLError, RecursionError):
        return None
    candidates = [after] if before == text else [_splice(text, before, after), after]
    for candidate in candidates:
        if candidate is not None and _reads_as(candidate, new_data):
            return candidate
    return None


def _round_trip(text: str) -> YAML:
    yaml = YAML(typ="rt")
    yaml.Representer = _Representer
    yaml.preserve_quotes = True
    yaml.width = NO_WRAP
    yaml.allow_unicode = True
    mapping, sequence, offset = detect_indent(text)
    yaml.indent(mapping=mapping, sequence=sequence, offset=offset)
    return yaml


def _dump(yaml: YAML, tree: Any) -> str:
    out = io.StringIO()
    yaml.dump(tree, out)
    return out.getvalue()


def _reads_as(text: str, data: Any) -> bool:
    try:
        return same_data(parse_yaml_data(text), data)
    except YamlSyntaxError:
        return False


class _Fresh:
    """Round-trip nodes for new values, written the way the plain dump writes them (block
    scalars for multi-line text, quotes where YAML 1.1 would read the text as something else,
    short lists in flow style), so a new tool looks like the ones the studio writes."""

    def __init__(self) -> None:
        self._yaml = YAML(typ="rt")
        self._yaml.preserve_quotes = True

    def __call__(self, value: Any) -> Any:
        return self._yaml.load(dump_yaml({"v": value}))["v"]


# --- Indentation ------------------------------------------------------------------------------

_KEY_ONLY = re.compile(r"^[^#]*:\s*(#.*)?$")
_BLOCK_HEADER = re.compile(r":\s*[|>][-+0-9]*\s*(#.*)?$")


def detect_indent(text: str) -> tuple[int, int, int]:
    """The indentation a YAML text uses, as ruamel's ``indent(mapping, sequence, offset)``.

    ``mapping`` is how far a nested mapping's keys sit right of their parent key; ``sequence``
    how far a list item's content sits right of its key, ``offset`` where its dash is. Block
    scalars are skipped (a prompt may hold ``- `` lines of its own). A text with no nesting
    gets the plain dump's settings.
    """
    mapping: int | None = None
    sequence: tuple[int, int] | None = None
    parent: int | None = None  # column of the key of a line that is only ``key:``
    block: int | None = None  # column of the key whose block scalar is being skipped
    for line in text.split("\n"):
        stripped = line.strip()
        if not stripped or stripped.startswith("#"):
            continue
        indent = len(line) - len(line.lstrip(" "))
        if block is not None:
            if indent > block:
                continue
            block = None
        key_column = len(line) - len(line.lstrip(" -"))
        if parent is not None:
            if stripped.startswith("- ") and sequence is None and indent >= parent:
                sequence = (key_column - parent, indent - parent)
            elif not stripped.startswith("-") and mapping is None and indent > parent:
                mapping = indent - parent
        if mapping is not None and sequence is not None:
            break
        parent = key_column if _KEY_ONLY.match(line) else None
        if _BLOCK_HEADER.search(line):
            block = key_column
    mapping = mapping if mapping is not None else 2
    seq, offset = sequence if sequence is not None else (mapping + 2, mapping)
    if seq < offset + 2:
        seq, offset = offset + 2, offset
    return mapping, seq, offset


# --- Splicing ---------------------------------------------------------------------------------


def _splice(original: str, before: str, after: str) -> str | None:
    """``original`` with the edits that turn ``before`` into ``after``; None where an edit
    falls on a line that ``before`` writes differently from ``original``."""
    orig_lines = original.splitlines(keepends=True)
    before_lines = before.splitlines(keepends=True)
    after_lines = after.splitlines(keepends=True)
    where: list[int | None] = [None] * (len(before_lines) + 1)
    where[len(before_lines)] = len(orig_lines)
    layout = difflib.SequenceMatcher(None, before_lines, orig_lines, autojunk=False)
    for block in layout.get_matching_blocks():
        for k in range(block.size):
            where[block.a + k] = block.b + k
    edits = difflib.SequenceMatcher(None, before_lines, after_lines, autojunk=False)
    result = list(orig_lines)
    for tag, i1, i2, j1, j2 in reversed(edits.get_opcodes()):
        if tag == "equal":
            continue
        if i1 == i2:  # an insertion: before the original's line of before_lines[i1]
            start = where[i1]
            previous = where[i1 - 1] if i1 > 0 else None
            if start is None and previous is not None:
                start = previous + 1
            if start is None:
                return None
            result[start:start] = after_lines[j1:j2]
            continue
        spots = where[i1:i2]
        first, last = spots[0], spots[-1]
        if first is None or last is None or last - first != i2 - i1 - 1 or None in spots:
            return None
        result[first : last + 1] = after_lines[j1:j2]
    return "".join(result)
