"""Merging the data to save into a ruamel round-trip tree, so only what changed is rewritten.

A value equal to the file's keeps its node (and so its comments, quotes and layout). A changed
string keeps its style where the new text still suits it (``|`` and ``>`` for multi-line text,
quotes); any other new value is written as the plain dump would. Removed keys go, new keys come
after the existing ones; tools are matched by ``name`` (a renamed tool by its position), other
list items by position.

ruamel keeps the comment lines and blank lines after an entry on that entry's last scalar, so a
comment about the next tool, or the blank line that closes a section, belongs to whatever
happens to precede it. When entries are removed, added or moved, those lines are regrouped: each
entry keeps its end-of-line comment and the comments indented deeper than itself; the lines that
introduce an entry move with it; the lines after the last entry stay at the end.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable
from typing import Any, NamedTuple

from ruamel.yaml.comments import CommentedMap, CommentedSeq
from ruamel.yaml.error import CommentMark
from ruamel.yaml.scalarstring import (
    DoubleQuotedScalarString,
    FoldedScalarString,
    LiteralScalarString,
    SingleQuotedScalarString,
)
from ruamel.yaml.tokens import CommentToken

__all__ = ["merge", "same_data"]

Fresh = Callable[[Any], Any]
"""A new round-trip node for a plain value."""

_MAP_POST = 2  # the slot of CommentedMap.ca.items[key] holding the lines after the value
_SEQ_POST = 0  # likewise for CommentedSeq.ca.items[index]
_END = object()  # the position after the last entry


class CannotMergeError(Exception):
    """The tree and the data it was read as do not line up (merge keys, aliases)."""


def same_data(a: Any, b: Any) -> bool:
    """Whether two JSON-shaped values are the same data: key order aside, ``1`` equals
    ``1.0``, but ``true`` is not ``1``."""
    if isinstance(a, bool) or isinstance(b, bool):
        return isinstance(a, bool) and isinstance(b, bool) and a == b
    if isinstance(a, dict):
        return (
            isinstance(b, dict)
            and len(a) == len(b)
            and all(key in b and same_data(value, b[key]) for key, value in a.items())
        )
    if isinstance(a, list):
        return (
            isinstance(b, list)
            and len(a) == len(b)
            and all(same_data(x, y) for x, y in zip(a, b, strict=True))
        )
    if isinstance(a, int | float):
        return isinstance(b, int | float) and a == b
    return type(a) is type(b) and bool(a == b)


def merge(tree: Any, old: Any, new: Any, fresh: Fresh, *, keep_styles: bool = True) -> Any:
    """``tree`` (read from the file whose data is ``old``) changed to hold ``new``.

    Args:
        tree: the round-trip tree; changed in place where it can be.
        old: the file's data as the project's loader reads it (YAML 1.1 rules, unlike ruamel's).
        new: the data to save.
        fresh: makes the node of a new value.
        keep_styles: keep a changed string's quoting or block style; False writes every
            changed value as the plain dump would.

    Returns:
        The tree to write, or None when it does not line up with ``old``.
    """
    try:
        return _Merger(fresh, keep_styles).merge(tree, old, new)
    except CannotMergeError:
        return None


class _Post(NamedTuple):
    """The lines after an entry, split by whom they belong to."""

    eol: CommentToken | None  # the end-of-line comment of its last line
    trail: str  # comment lines indented deeper than the entry: inside it
    rest: str  # the lines that introduce the next entry (or end the collection)


class _Merger:
    def __init__(self, fresh: Fresh, keep_styles: bool) -> None:
        self._fresh = fresh
        self._keep_styles = keep_styles

    def merge(self, node: Any, old: Any, new: Any) -> Any:
        if same_data(old, new):
            return node
        if isinstance(node, CommentedMap) and isinstance(old, dict) and isinstance(new, dict):
            self._merge_map(node, old, new)
            return node
        if isinstance(node, CommentedSeq) and isinstance(old, list) and isinstance(new, list):
            self._merge_seq(node, old, new)
            return node
        return self._scalar(node, new)

    def _scalar(self, node: Any, new: Any) -> Any:
        if self._keep_styles and isinstance(node, str) and isinstance(new, str):
            multi_line = "\n" in new
            if isinstance(node, LiteralScalarString | FoldedScalarString) and multi_line:
                return type(node)(new)
            if isinstance(node, SingleQuotedScalarString) and not multi_line:
                return SingleQuotedScalarString(new)
            if isinstance(node, DoubleQuotedScalarString):
                return DoubleQuotedScalarString(new)
        return self._fresh(new)

    def _merge_map(self, node: CommentedMap, old: dict[Any, Any], new: dict[Any, Any]) -> None:
        keys = list(node.keys())
        if node.merge or len(keys) != len(old):
            raise CannotMergeError
        key_of = dict(zip(old, keys, strict=True))  # both in the file's order
        kept = [(key_of[key], key) for key in old if key in new]
        added = [key for key in new if key not in old]
        if len(kept) == len(keys) and not added:
            for node_key, key in kept:
                value = self.merge(node[node_key], old[key], new[key])
                if value is not node[node_key]:
                    node[node_key] = value
            return
        regroup = _is_block(node)
        posts = {key: _take_post(node, key, _column(node)) for key in keys} if regroup else {}
        values = {
            node_key: self.merge(node[node_key], old[key], new[key]) for node_key, key in kept
        }
        for node_key in keys:
            if node_key not in values:
                del node[node_key]
                node.ca.items.pop(node_key, None)
            elif values[node_key] is not node[node_key]:
                node[node_key] = values[node_key]
        for key in added:
            node[key] = self._fresh(new[key])
        if regroup:
            order: list[Hashable] = [node_key for node_key, _ in kept]
            order += added
            _place_posts(node, keys, order, posts, _MAP_POST)

    def _merge_seq(self, node: CommentedSeq, old: list[Any], new: list[Any]) -> None:
        if len(node) != len(old):
            raise CannotMergeError
        plan = _match(old, new)
        if plan == list(range(len(old))):
            for index, item in enumerate(new):
                value = self.merge(node[index], old[index], item)
                if value is not node[index]:
                    node[index] = value
            return
        regroup = _is_block(node)
        posts = {i: _take_post(node, i, _column(node)) for i in range(len(old))} if regroup else {}
        values = [
            self.merge(node[match], old[match], item) if match is not None else self._fresh(item)
            for match, item in zip(plan, new, strict=True)
        ]
        entries = dict(node.ca.items)
        list.clear(node)
        list.extend(node, values)
        node.ca.items.clear()
        for index, match in enumerate(plan):
            if match is not None and match in entries:
                node.ca.items[index] = entries[match]
        if regroup:
            order: list[Hashable] = [
                match if match is not None else _Added(index) for index, match in enumerate(plan)
            ]
            placed: dict[Hashable, int] = {
                _Added(i) if m is None else m: i for i, m in enumerate(plan)
            }
            _place_posts(node, list(range(len(old))), order, posts, _SEQ_POST, placed)


class _Added(NamedTuple):
    """A list item with no counterpart in the file, by its new position."""

    position: int


def _match(old: list[Any], new: list[Any]) -> list[int | None]:
    """For each new item, the index of the old item it continues (None: a new item)."""
    by_name: dict[str, int] = {}
    for index, item in enumerate(old):
        name = _name(item)
        if name is not None:
            by_name.setdefault(name, index)
    new_names = {_name(item) for item in new} - {None}
    used: set[int] = set()
    plan: list[int | None] = []
    for index, item in enumerate(new):
        name = _name(item)
        match = by_name.get(name) if name is not None else None
        if match is None or match in used:
            # By position: a renamed tool, or any list of things without names.
            match = (
                index
                if index < len(old) and index not in used and _name(old[index]) not in new_names
                else None
            )
        if match is not None:
            used.add(match)
        plan.append(match)
    return plan


def _name(item: Any) -> str | None:
    name = item.get("name") if isinstance(item, dict) else None
    return name if isinstance(name, str) else None


# --- The lines after an entry -----------------------------------------------------------------


def _is_block(node: CommentedMap | CommentedSeq) -> bool:
    return not node.fa.flow_style() and node.lc.col is not None


def _column(node: CommentedMap | CommentedSeq) -> int:
    column = node.lc.col
    return column if isinstance(column, int) else 0


def _slot(container: Any, key: Any, *, existing: bool) -> tuple[Any, Any, int]:
    """Where ruamel keeps the lines after an entry: on the entry's deepest last scalar.

    With ``existing``, the slot that holds a token now (the deepest one that does), else the
    deepest slot, to put one in.
    """
    value = container[key]
    if isinstance(value, CommentedMap | CommentedSeq) and len(value) and _is_block(value):
        last = list(value)[-1] if isinstance(value, CommentedMap) else len(value) - 1
        inner = _slot(value, last, existing=existing)
        if not existing or _token_at(*inner) is not None:
            return inner
    return container, key, _MAP_POST if isinstance(container, CommentedMap) else _SEQ_POST


def _token_at(container: Any, key: Any, index: int) -> CommentToken | None:
    entry = container.ca.items.get(key)
    if entry is None or len(entry) <= index:
        return None
    token = entry[index]
    return token if isinstance(token, CommentToken) else None


def _is_block_scalar(container: Any, key: Any) -> bool:
    return isinstance(container[key], LiteralScalarString | FoldedScalarString)


def _take_post(container: Any, key: Any, column: int) -> _Post:
    """The lines after an entry, removed from the tree so they can be placed again."""
    holder, holder_key, index = _slot(container, key, existing=True)
    token = _token_at(holder, holder_key, index)
    if token is None:
        return _Post(None, "", "")
    holder.ca.items[holder_key][index] = None
    text = token.value
    eol: CommentToken | None = None
    if not _is_block_scalar(holder, holder_key):  # a block scalar ends its own line
        end = text.find("\n") + 1 or len(text)
        if text[:end].strip():
            eol = CommentToken(text[:end], CommentMark(token.column), None)
        text = text[end:]
    lines = text.splitlines(keepends=True)
    inside = max(
        (n for n, line in enumerate(lines) if line.strip() and _indent(line) > column), default=-1
    )
    return _Post(eol, "".join(lines[: inside + 1]), "".join(lines[inside + 1 :]))


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip(" "))


def _place_posts(
    node: Any,
    old_keys: list[Any],
    order: list[Hashable],
    posts: dict[Any, _Post],
    post_index: int,
    placed: dict[Hashable, int] | None = None,
) -> None:
    """Give each entry, in its new order, its own end of line and the lines introducing the
    entry that now follows it (the last one: the lines that ended the collection)."""
    leads: dict[Hashable, str] = {}
    followers = [*old_keys[1:], _END] if old_keys else []  # an empty collection has no entry
    for before, after in zip(old_keys, followers, strict=True):
        post = posts.get(before)
        if post is not None:
            leads[after] = post.rest
    # A new entry is set apart like the others where they all are alike (a blank line between
    # tools, say).
    between = {leads.get(key) for key in old_keys[1:]}
    separator = between.pop() if len(between) == 1 else ""
    separator = separator if separator is not None and not separator.strip() else ""
    for position, entry in enumerate(order):
        following = order[position + 1] if position + 1 < len(order) else _END
        post = posts.get(entry, _Post(None, "", ""))
        key = entry if placed is None else placed[entry]
        _put_post(node, key, post.eol, post.trail + leads.get(following, separator))


def _put_post(node: Any, key: Any, eol: CommentToken | None, lines: str) -> None:
    holder, holder_key, index = _slot(node, key, existing=False)
    if _is_block_scalar(holder, holder_key):
        text, column = lines, 0
    else:
        text = (eol.value if eol is not None else "\n") + lines
        column = eol.column if eol is not None else 0
    if text == ("" if _is_block_scalar(holder, holder_key) else "\n"):
        return  # nothing beyond what ruamel writes anyway
    entry = holder.ca.items.setdefault(holder_key, [None, None, None, None])
    while len(entry) <= index:
        entry.append(None)
    entry[index] = CommentToken(text, CommentMark(column), None)
