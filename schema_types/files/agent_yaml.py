"""Reading YAML agent files: the data, and on demand where every value came from.

:func:`parse_yaml_data` is the quick way to the data, built straight from libyaml's events; when
there is something to report, :func:`parse_yaml` composes the node tree as well, so a content
error found later (by pydantic or the schema check) can be pointed at the line and column of the
value it is about (:func:`node_at`). A text libyaml refuses is read again by PyYAML's own parser
(when it is not too long), whose messages the hints below explain. Both read PyYAML's safe loader
with changes that suit JSON-shaped data (``files._yaml_loaders``):

* dates stay strings (``default: 2026-05-01`` is the string a JSON Schema ``format: date``
  expects, not a ``datetime.date``);
* a key repeated in one mapping is an error instead of silently keeping the last value;
* aliases may not make a document recursive or expand beyond :data:`MAX_VALUES` values, so a
  "billion laughs" file cannot hang the studio;
* collections may nest :data:`MAX_NESTING` deep at most, read without recursion, so no document
  can exhaust the stack (libyaml's own composer would crash the process).

Loading stays on libyaml, ~30× faster than ruamel's round-trip loader (travel-desk example:
1.6 ms against 51 ms, ``bench/yaml_save.py``); only a save over an existing file reads it with
ruamel, to keep its comments (``files._yaml_edit``).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

import yaml
from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode

from schema_types.files._yaml_loaders import (
    MAX_VALUES,
    FastLoader,
    NeedsNodes,
    PureLoader,
    YamlSyntaxError,
    data_from_events,
)
from schema_types.limits import TOO_DEEP

__all__ = [
    "MAX_VALUES",
    "YamlSyntaxError",
    "node_at",
    "parse_yaml",
    "parse_yaml_data",
]


# PyYAML's own parser reads ~5 µs per character: texts up to this size that libyaml refuses are
# read again by it, for its clearer words and for the few texts only it accepts (a tab starting
# a block scalar's first line); past it, libyaml's own located message is shown.
_PURE_TEXT = 256 * 1024


def parse_yaml(text: str) -> tuple[Any, Node | None]:
    """Parse one YAML document, with its node tree.

    Args:
        text: the file's text.

    Returns:
        ``(data, root node)``; ``(None, None)`` for a file with no document (empty or comments).

    Raises:
        YamlSyntaxError: located where the parser stopped, with a hint for common mistakes;
            a document nested deeper than :data:`MAX_NESTING` is refused with ``TOO_DEEP``.
    """
    if not _printable(text):
        raise _unprintable(text)
    if FastLoader is not None:
        try:
            return _parse_with(FastLoader, text)
        except _ParserError as exc:
            if len(text) > _PURE_TEXT:
                raise _yaml_error(exc.refusal) from exc.refusal
    try:
        return _parse_with(PureLoader, text)
    except _ParserError as exc:
        raise _yaml_error(exc.refusal) from exc.refusal


def parse_yaml_data(text: str) -> Any:
    """The data of one YAML document, as :func:`parse_yaml` reads it, without the node tree.

    Raises:
        YamlSyntaxError: as :func:`parse_yaml`.
    """
    if not _printable(text):
        raise _unprintable(text)
    try:
        return data_from_events(text)
    except NeedsNodes:
        return parse_yaml(text)[0]


class _ParserError(Exception):
    """The parser refused the text (what the loader's own rules refuse is raised directly)."""

    def __init__(self, refusal: yaml.YAMLError) -> None:
        super().__init__(str(refusal))
        self.refusal = refusal


def _parse_with(loader_class: type[Any], text: str) -> tuple[Any, Node | None]:
    loader = loader_class(text)
    try:
        try:
            root = loader.get_single_node()
        except yaml.YAMLError as exc:
            raise _ParserError(exc) from exc
        if root is None:
            return None, None
        _check_size(root)
        return loader.construct_document(root), root
    except yaml.YAMLError as exc:
        raise _yaml_error(exc) from exc
    except RecursionError as exc:
        raise YamlSyntaxError(TOO_DEEP) from exc
    finally:
        loader.dispose()


def _yaml_error(exc: yaml.YAMLError) -> YamlSyntaxError:
    if isinstance(exc, yaml.MarkedYAMLError):
        return _syntax_error(exc)
    return YamlSyntaxError(f"invalid YAML: {exc}")


def _printable(text: str) -> bool:
    return yaml.reader.Reader.NON_PRINTABLE.search(text) is None


def _unprintable(text: str) -> YamlSyntaxError:
    match = yaml.reader.Reader.NON_PRINTABLE.search(text)
    assert match is not None
    line, column = _line_column(text, match.start())
    code = ord(match.group())
    return YamlSyntaxError(
        f"control character U+{code:04X} is not allowed in YAML text (is this a binary file?)",
        line,
        column,
    )


def _line_column(text: str, offset: int) -> tuple[int, int]:
    line_start = text.rfind("\n", 0, offset) + 1
    return text.count("\n", 0, offset) + 1, offset - line_start + 1


def _check_size(root: Node) -> None:
    """Refuse recursive aliases and alias bombs before anything walks the data."""
    sizes: dict[int, int] = {}
    active: set[int] = set()

    def size(node: Node) -> int:
        key = id(node)
        if key in sizes:
            return sizes[key]
        if key in active:
            raise YamlSyntaxError(
                "an alias refers to a value that contains it: agent files cannot be recursive",
                node.start_mark.line + 1,
                node.start_mark.column + 1,
            )
        active.add(key)
        total = 1 + sum(size(child) for child in _children(node))
        active.discard(key)
        if total > MAX_VALUES:
            raise YamlSyntaxError(
                f"aliases expand this document to more than {MAX_VALUES} values",
                node.start_mark.line + 1,
                node.start_mark.column + 1,
            )
        sizes[key] = total
        return total

    size(root)


def _children(node: Node) -> Iterator[Node]:
    if isinstance(node, MappingNode):
        for key_node, value_node in node.value:
            yield key_node
            yield value_node
    elif isinstance(node, SequenceNode):
        yield from node.value


# (pattern in the parser's problem text, hint) — the parser's own words rarely say what to do.
_HINTS: tuple[tuple[str, str], ...] = (
    ("'\\t'", "a tab cannot indent YAML: indent with spaces"),
    (
        "mapping values are not allowed",
        "unexpected ':': check the indentation, or put a value containing ': ' in quotes",
    ),
    ("expected <block end>", "this line is not indented like the lines before it"),
    ("did not find expected key", "this line is not indented like the lines before it"),
    ("could not find expected ':'", "a key is missing its ':' (or a quote is not closed)"),
    ("found undefined alias", "an alias (*name) refers to an anchor (&name) that is not defined"),
)


def _syntax_error(exc: yaml.MarkedYAMLError) -> YamlSyntaxError:
    mark = exc.problem_mark or exc.context_mark
    line = mark.line + 1 if mark else None
    column = mark.column + 1 if mark else None
    problem = exc.problem or "invalid YAML"
    if problem.startswith("duplicate key"):
        return YamlSyntaxError(problem, line, column)
    context = exc.context or ""
    if "quoted scalar" in context and exc.context_mark is not None:
        start = exc.context_mark
        detail = (
            f"the quoted string that starts at line {start.line + 1}, column {start.column + 1} "
            "is never closed"
        )
        return YamlSyntaxError(detail, line, column)
    if "flow" in context and exc.context_mark is not None:
        start = exc.context_mark
        bracket = "[ ]" if "sequence" in context else "{ }"
        detail = (
            f"the {bracket} that opens at line {start.line + 1}, column {start.column + 1} is not "
            f"closed, or an item is missing its comma ({problem})"
        )
        return YamlSyntaxError(detail, line, column)
    hint = next((text for pattern, text in _HINTS if pattern in problem), None)
    detail = f"invalid YAML: {problem}"
    if context and exc.context_mark is not None and exc.context_mark is not exc.problem_mark:
        start = exc.context_mark
        detail += f" ({context} at line {start.line + 1}, column {start.column + 1})"
    if hint:
        detail = f"{hint} ({detail})"
    return YamlSyntaxError(detail, line, column)


def node_at(root: Node | None, parts: Sequence[str | int]) -> tuple[Node | None, int]:
    """The deepest node along a JSON path, and how many path parts it matched.

    Args:
        root: the document's root node (None when the positions are unknown).
        parts: property names and array indexes, outermost first.

    Returns:
        ``(node, matched)``: the node of ``parts[:matched]``; ``(None, 0)`` without a root.
    """
    node = root
    if node is None:
        return None, 0
    for matched, part in enumerate(parts):
        child = _child(node, part)
        if child is None:
            return node, matched
        node = child
    return node, len(parts)


def _child(node: Node, part: str | int) -> Node | None:
    if isinstance(node, SequenceNode) and isinstance(part, int):
        return node.value[part] if 0 <= part < len(node.value) else None
    if isinstance(node, MappingNode):
        # The last occurrence wins in YAML, as in the constructed data.
        found = None
        for key_node, value_node in node.value:
            if isinstance(key_node, ScalarNode) and key_node.value == str(part):
                found = value_node
        return found
    return None
