"""YAML for agent files: parsing that remembers where every value came from, and readable dumping.

Loading composes the YAML node tree first and constructs the data from it, so a content error
found later (by pydantic or the schema check) can be pointed at the line and column of the value
it is about. libyaml parses when PyYAML has it (the studio opens a file ~10× faster); a text it
refuses is parsed again by PyYAML's own parser, whose messages the hints below explain. The
loader is PyYAML's safe loader with three changes that suit JSON-shaped data:

* dates stay strings (``default: 2026-05-01`` is the string a JSON Schema ``format: date``
  expects, not a ``datetime.date``);
* a key repeated in one mapping is an error instead of silently keeping the last value;
* aliases may not make a document recursive or expand beyond :data:`MAX_VALUES` values, so a
  "billion laughs" file cannot hang the studio.

Dumping writes multi-line strings as ``|`` block scalars, keeps key order, never folds long lines
and never emits anchors, so prompts stay readable and diffs stay small.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from typing import Any

import yaml
from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode

__all__ = [
    "MAX_VALUES",
    "YamlSyntaxError",
    "dump_yaml",
    "node_at",
    "parse_yaml",
]

# An agent file has hundreds of values; a million means aliases multiplied a small file.
MAX_VALUES = 1_000_000
_TIMESTAMP_TAG = "tag:yaml.org,2002:timestamp"
_MERGE_TAG = "tag:yaml.org,2002:merge"


class YamlSyntaxError(Exception):
    """The text is not YAML this loader accepts; ``line``/``column`` are 1-based when known."""

    def __init__(self, detail: str, line: int | None = None, column: int | None = None) -> None:
        self.detail = detail
        self.line = line
        self.column = column
        super().__init__(detail)


class _Rules(yaml.constructor.SafeConstructor, yaml.resolver.Resolver):
    """The safe loader's rules, minus timestamps, plus duplicate-key detection."""

    yaml_implicit_resolvers = {  # noqa: RUF012 - PyYAML's own class-level registry
        first: [(tag, regex) for tag, regex in resolvers if tag != _TIMESTAMP_TAG]
        for first, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()
    }

    def construct_mapping(self, node: MappingNode, deep: bool = False) -> dict[Any, Any]:
        seen: dict[Any, Node] = {}
        for key_node, _ in node.value:
            if key_node.tag == _MERGE_TAG or not isinstance(key_node, ScalarNode):
                continue  # merge keys may override on purpose; complex keys are rare
            key = self.construct_object(key_node)
            first = seen.setdefault(key, key_node)
            if first is not key_node:
                raise yaml.constructor.ConstructorError(
                    None,
                    None,
                    f"duplicate key {key!r} (first used on line {first.start_mark.line + 1}): "
                    "each key may appear once in a mapping",
                    key_node.start_mark,
                )
        return super().construct_mapping(node, deep=deep)


class _Loader(_Rules, yaml.SafeLoader):
    """The pure-Python safe loader with our rules: its error messages are the ones shown."""


_CLoader: type[Any] | None = None
if getattr(yaml, "__with_libyaml__", False):

    class _FastLoader(_Rules, yaml.CSafeLoader):
        """libyaml's parser with our rules: ~10× faster on a well-formed file."""

    _CLoader = _FastLoader

# libyaml composes nodes recursively in C, without Python's recursion limit: a document nested
# deeper than this (each level needs a column of indentation or a bracket) is read by the
# pure-Python loader, which refuses absurd nesting cleanly.
_C_DEPTH_LIMIT = 2000


def parse_yaml(text: str) -> tuple[Any, Node | None]:
    """Parse one YAML document.

    Args:
        text: the file's text.

    Returns:
        ``(data, root node)``; ``(None, None)`` for a file with no document (empty or comments).

    Raises:
        YamlSyntaxError: located where the parser stopped, with a hint for common mistakes.
    """
    if not _printable(text):
        raise _unprintable(text)
    if _CLoader is not None and _shallow(text):
        try:
            return _parse_with(_CLoader, text)
        except _ParserError:
            pass  # read it again with the pure-Python parser, whose messages we explain
    try:
        return _parse_with(_Loader, text)
    except _ParserError as exc:
        raise _yaml_error(exc.refusal) from exc.refusal


class _ParserError(Exception):
    """The parser refused the text (what the loader's own rules refuse is raised directly)."""

    def __init__(self, refusal: yaml.YAMLError) -> None:
        super().__init__(str(refusal))
        self.refusal = refusal


def _shallow(text: str) -> bool:
    widest = max((len(line) for line in text.splitlines()), default=0)
    return widest + text.count("[") + text.count("{") <= _C_DEPTH_LIMIT


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
        raise YamlSyntaxError("the document is nested too deeply to read") from exc
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
        "mapping values are not allowed here",
        "unexpected ':': check the indentation, or put a value containing ': ' in quotes",
    ),
    ("expected <block end>", "this line is not indented like the lines before it"),
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


# --- Dumping ----------------------------------------------------------------------------------


class _Dumper(yaml.SafeDumper):
    """Block scalars for multi-line strings, and no anchors for shared values."""

    def ignore_aliases(self, data: Any) -> bool:
        return True

    def analyze_scalar(self, scalar: str) -> Any:
        # PyYAML will not put a tab in a block scalar although YAML allows it there; code in a
        # prompt would otherwise turn into one long double-quoted line. Analysing the text with
        # the tabs masked lets the block style through; quoting rules stay as strict as before.
        if "\t" in scalar and "\n" in scalar:
            analysis = super().analyze_scalar(scalar.replace("\t", "x"))
            analysis.scalar = scalar
            return analysis
        return super().analyze_scalar(scalar)

    def increase_indent(self, flow: bool = False, indentless: bool = False) -> None:
        # Indent list items under their key (``tools:\n  - name: …``) as people write them.
        super().increase_indent(flow, False)


_UNICODE_BREAKS = re.compile("[\x85\u2028\u2029\ufeff]")


def _represent_str(dumper: yaml.SafeDumper, value: str) -> yaml.ScalarNode:
    # PyYAML falls back to a quoted style by itself where a block scalar cannot hold the text
    # exactly (trailing spaces on a line, control characters), so this never loses content.
    if _UNICODE_BREAKS.search(value):
        # YAML reads NEL, LS and PS as line breaks; only escapes in double quotes keep them.
        style: str | None = '"'
    else:
        style = "|" if "\n" in value else None
    return dumper.represent_scalar("tag:yaml.org,2002:str", value, style=style)


def _represent_list(dumper: yaml.SafeDumper, value: list[Any]) -> yaml.SequenceNode:
    # Short lists of short scalars (enum, required, examples, args) read best on one line.
    flow = len(value) <= _FLOW_ITEMS and all(
        value_item is None
        or isinstance(value_item, bool | int | float)
        or (
            isinstance(value_item, str) and len(value_item) <= _FLOW_TEXT and "\n" not in value_item
        )
        for value_item in value
    )
    return dumper.represent_sequence("tag:yaml.org,2002:seq", value, flow_style=flow)


_FLOW_ITEMS = 12
_FLOW_TEXT = 40
_Dumper.add_representer(str, _represent_str)
_Dumper.add_representer(list, _represent_list)

# Large enough that no description or prompt line is ever folded.
_NO_WRAP = 1 << 30


def dump_yaml(data: Any) -> str:
    """YAML text for JSON-shaped data: key order kept, block scalars for multi-line strings."""
    return yaml.dump(
        data,
        Dumper=_Dumper,
        sort_keys=False,
        allow_unicode=True,
        width=_NO_WRAP,
        default_flow_style=False,
        indent=2,
    )
