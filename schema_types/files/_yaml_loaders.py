"""The YAML loaders behind ``files.agent_yaml``: PyYAML's safe loader with the agent file's rules.

The rules, for JSON-shaped data: dates stay strings, a key repeated in one mapping is an error,
collections nest at most :data:`MAX_NESTING` deep. Two ways to read a text:

- :class:`PureLoader` / :data:`FastLoader` compose the node tree (every value with its line and
  column) and construct the data from it, with PyYAML's parser or libyaml's. Composing here is
  flat (:class:`_FlatComposer`): PyYAML's composers recurse, libyaml's in C past the end of the
  stack, which crashes the process on a deep document.
- :func:`data_from_events` builds the data straight from libyaml's events, without nodes: the
  quick way for a file that is well formed, about three times faster and lighter. It answers
  only for texts it reads exactly as the loaders would; anything unusual (an explicit tag, a
  merge key, a repeated key, an alias that is undefined, recursive or multiplies the document)
  raises :class:`NeedsNodes`, and the caller reads the text with a loader, which decides.
"""

from __future__ import annotations

from typing import Any, cast

import yaml
from yaml.events import (
    AliasEvent,
    MappingEndEvent,
    MappingStartEvent,
    ScalarEvent,
    SequenceEndEvent,
    SequenceStartEvent,
    StreamEndEvent,
)
from yaml.nodes import CollectionNode, MappingNode, Node, ScalarNode, SequenceNode

from schema_types.limits import MAX_NESTING, TOO_DEEP

__all__ = [
    "MAX_VALUES",
    "FastLoader",
    "NeedsNodes",
    "PureLoader",
    "YamlSyntaxError",
    "data_from_events",
]

# An agent file has hundreds of values; a million means aliases multiplied a small file.
MAX_VALUES = 1_000_000
_TIMESTAMP_TAG = "tag:yaml.org,2002:timestamp"
_MERGE_TAG = "tag:yaml.org,2002:merge"
_STR_TAG = "tag:yaml.org,2002:str"
_SEQ_TAG = "tag:yaml.org,2002:seq"
_MAP_TAG = "tag:yaml.org,2002:map"
# Scalars other than strings: PyYAML's own constructors convert them (``0x1F``, ``1_000``, ``.5``,
# ``yes``, ``~``…).
_SCALAR_TAGS = (
    "tag:yaml.org,2002:int",
    "tag:yaml.org,2002:float",
    "tag:yaml.org,2002:bool",
    "tag:yaml.org,2002:null",
)


class YamlSyntaxError(Exception):
    """The text is not YAML this loader accepts; ``line``/``column`` are 1-based when known."""

    def __init__(self, detail: str, line: int | None = None, column: int | None = None) -> None:
        self.detail = detail
        self.line = line
        self.column = column
        super().__init__(detail)


class NeedsNodes(Exception):
    """:func:`data_from_events` cannot vouch for its reading of this text: use a loader."""


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


class _FlatComposer:
    """PyYAML's composer without recursion, refusing nesting past :data:`MAX_NESTING`.

    PyYAML composes recursively: its pure-Python composer hits the recursion limit on deep
    documents, and libyaml's (in C) runs past the end of the stack and crashes the process. This
    one keeps the open collections in a list and builds the same nodes, with the same positions,
    from the parser's events, so every document is composed in time and memory linear in its
    size and a too-deep one is refused at the level where it becomes too deep.
    """

    # Provided by the parser and the resolver it is mixed with.
    get_event: Any
    check_event: Any
    resolve: Any

    def get_single_node(self) -> Node | None:
        self.get_event()  # stream start
        root = None
        if not self.check_event(StreamEndEvent):
            root = self._compose_document()
        if not self.check_event(StreamEndEvent):
            extra = self.get_event()
            raise yaml.composer.ComposerError(
                "expected a single document in the stream",
                root.start_mark if root is not None else None,
                "but found another document",
                extra.start_mark,
            )
        self.get_event()  # stream end
        return root

    def _compose_document(self) -> Node:
        # One loop over the events, with the checks in the order of their frequency: this runs
        # for every value of the file and is most of the time a load takes.
        get_event = self.get_event
        get_event()  # document start
        anchors: dict[str, Node] = {}
        tags: dict[tuple[str, Any], str] = {}  # resolving a plain scalar's tag is a regex search
        # The collections being filled, innermost last; ``waiting`` holds a mapping's pending key.
        parents: list[tuple[CollectionNode, list[Node | None]]] = []
        root: Node | None = None
        created = 0
        while root is None:
            event = get_event()
            kind = type(event)
            node: Node
            if (
                kind is not AliasEvent
                and kind is not SequenceEndEvent
                and kind is not MappingEndEvent
            ):
                created += 1
                if created > MAX_VALUES:
                    raise YamlSyntaxError(_too_many(), *_position(event))
            if kind is ScalarEvent:
                if event.anchor is not None:
                    node = self._new_node(event, anchors)
                else:
                    tag = event.tag
                    if tag is None or tag == "!":
                        key = (event.value, event.implicit)
                        tag = tags.get(key)
                        if tag is None:
                            tag = tags[key] = self.resolve(ScalarNode, event.value, event.implicit)
                    node = ScalarNode(
                        tag, event.value, event.start_mark, event.end_mark, style=event.style
                    )
            elif kind is SequenceEndEvent or kind is MappingEndEvent:
                closed = parents.pop()[0]
                closed.end_mark = event.end_mark
                if not parents:
                    root = closed
                continue
            elif kind is AliasEvent:
                found = anchors.get(event.anchor)
                if found is None:
                    raise yaml.composer.ComposerError(
                        None, None, f"found undefined alias {event.anchor!r}", event.start_mark
                    )
                node = found
            else:
                node = self._new_node(event, anchors)
            if parents:
                collection, waiting = parents[-1]
                if type(collection) is SequenceNode:
                    collection.value.append(node)
                elif waiting[0] is None:
                    waiting[0] = node
                else:
                    collection.value.append((waiting[0], node))
                    waiting[0] = None
            if kind is SequenceStartEvent or kind is MappingStartEvent:
                if len(parents) >= MAX_NESTING:
                    raise YamlSyntaxError(TOO_DEEP)
                parents.append((cast(CollectionNode, node), [None]))
            elif not parents:
                root = node
        get_event()  # document end
        return root

    def _new_node(self, event: Any, anchors: dict[str, Node]) -> Node:
        anchor = event.anchor
        if anchor is not None and anchor in anchors:
            raise yaml.composer.ComposerError(
                f"found duplicate anchor {anchor!r}; first occurrence",
                anchors[anchor].start_mark,
                "second occurrence",
                event.start_mark,
            )
        tag = event.tag
        node: Node
        if type(event) is ScalarEvent:
            if tag is None or tag == "!":
                tag = self.resolve(ScalarNode, event.value, event.implicit)
            start: Any = event.start_mark  # libyaml's marks read like PyYAML's
            end: Any = event.end_mark
            node = ScalarNode(tag, event.value, start, end, style=event.style)
        else:
            kind = SequenceNode if isinstance(event, SequenceStartEvent) else MappingNode
            if tag is None or tag == "!":
                tag = self.resolve(kind, None, event.implicit)
            node = kind(tag, [], event.start_mark, None, flow_style=event.flow_style)
        if anchor is not None:
            anchors[anchor] = node
        return node


class PureLoader(_FlatComposer, _Rules, yaml.SafeLoader):
    """The pure-Python safe loader with our rules: its error messages are the ones shown."""


FastLoader: type[Any] | None = None
"""libyaml's parser with our rules (~10× faster), or None when PyYAML was built without it."""
if getattr(yaml, "__with_libyaml__", False):

    class _FastLoader(_FlatComposer, _Rules, yaml.CSafeLoader):
        """libyaml's parser with our rules."""

    FastLoader = _FastLoader


_NO_KEY = object()  # a mapping waits for a key, not a value


def data_from_events(text: str) -> Any:
    """The data of a well-formed, plain document, built from libyaml's events without nodes.

    Returns:
        The data, exactly as :data:`FastLoader` would construct it (None for no document).

    Raises:
        NeedsNodes: the text uses something this reading leaves to the loaders, or libyaml
            refuses it (the loaders word the refusal); also when libyaml is missing.
        YamlSyntaxError: collections nest deeper than :data:`MAX_NESTING`, or the document
            holds more than :data:`MAX_VALUES` values.
    """
    if FastLoader is None:
        raise NeedsNodes
    loader = FastLoader(text)
    try:
        return _build(loader)
    except yaml.YAMLError as exc:
        raise NeedsNodes from exc
    finally:
        loader.dispose()


def _build(loader: Any) -> Any:
    # One loop over the events with the most frequent cases first: this is most of the time a
    # load takes, so it is written for speed (no calls per value, no objects but the data).
    get_event = loader.get_event
    get_event()  # stream start
    if loader.check_event(StreamEndEvent):
        return None
    get_event()  # document start
    resolve = loader.resolve
    converters = loader.yaml_constructors
    plain_tags: dict[str, str] = {}  # a plain scalar's tag is a regex search: once per text
    containers: list[Any] = []  # the open collections, innermost last
    keys: list[Any] = []  # for each, the key waiting for its value (mappings)
    anchors: list[tuple[str, int] | None] = []  # for each, its anchor and `expanded` before it
    anchored: dict[str, tuple[Any, int]] = {}  # anchor -> (value, values in it)
    unfinished: set[str] = set()  # anchors of collections still open
    created = 0  # values read
    expanded = 0  # values with aliases expanded, as _check_size counts them
    result: Any = _NO_KEY
    while result is _NO_KEY:
        event = get_event()
        kind = type(event)
        if kind is ScalarEvent:
            created += 1
            expanded += 1
            tag = event.tag
            if tag is None:
                implicit = event.implicit
                if implicit[0]:  # plain
                    tag = plain_tags.get(event.value)
                    if tag is None:
                        tag = plain_tags[event.value] = resolve(ScalarNode, event.value, implicit)
                else:
                    tag = _STR_TAG
            elif tag == "!":
                tag = resolve(ScalarNode, event.value, event.implicit)
            if tag == _STR_TAG:
                value: Any = event.value
            elif tag in _SCALAR_TAGS:
                value = converters[tag](loader, ScalarNode(tag, event.value))
            else:
                raise NeedsNodes  # an explicit tag, a merge key
            if event.anchor is not None:
                if event.anchor in anchored or event.anchor in unfinished:
                    raise NeedsNodes  # a duplicate anchor: the loaders give both positions
                anchored[event.anchor] = (value, 1)
        elif kind is SequenceEndEvent or kind is MappingEndEvent:
            value = containers.pop()
            keys.pop()
            anchor = anchors.pop()
            if anchor is not None:
                anchored[anchor[0]] = (value, expanded - anchor[1])
                unfinished.discard(anchor[0])
            if not containers:
                result = value
            continue
        elif kind is AliasEvent:
            found = anchored.get(event.anchor)
            if found is None:
                raise NeedsNodes  # undefined, or recursive (its collection is still open)
            value, size = found
            expanded += size
            if expanded > MAX_VALUES:
                raise NeedsNodes  # aliases multiply the document: the loaders say where
        else:  # a collection starts
            created += 1
            tag = event.tag
            plain = _SEQ_TAG if kind is SequenceStartEvent else _MAP_TAG
            if tag is not None and tag != "!" and tag != plain:
                raise NeedsNodes  # !!set, !!omap, a tag of the author's own
            if len(containers) >= MAX_NESTING:
                raise YamlSyntaxError(TOO_DEEP)
            value = [] if kind is SequenceStartEvent else {}
            anchor_name = event.anchor
            if anchor_name is not None:
                if anchor_name in anchored or anchor_name in unfinished:
                    raise NeedsNodes
                unfinished.add(anchor_name)
        if created > MAX_VALUES:
            raise YamlSyntaxError(_too_many(), *_position(event))
        if containers:
            parent = containers[-1]
            if type(parent) is list:
                parent.append(value)
            else:
                key = keys[-1]
                if key is _NO_KEY:
                    if type(value) is list or type(value) is dict:
                        raise NeedsNodes  # a collection as a key
                    keys[-1] = value
                elif key in parent:
                    raise NeedsNodes  # a repeated key: the loaders give both positions
                else:
                    parent[key] = value
                    keys[-1] = _NO_KEY
        elif kind is ScalarEvent or kind is AliasEvent:
            result = value
        if kind is SequenceStartEvent or kind is MappingStartEvent:
            containers.append(value)
            keys.append(_NO_KEY)
            anchors.append(None if anchor_name is None else (anchor_name, expanded))
            expanded += 1
    get_event()  # document end
    if not loader.check_event(StreamEndEvent):
        raise NeedsNodes  # a second document: the loaders refuse it with its position
    return result


def _too_many() -> str:
    return (
        f"the document holds more than {MAX_VALUES} values: an agent file holds far fewer; "
        "check that this is the agent file you meant"
    )


def _position(event: Any) -> tuple[int, int]:
    return event.start_mark.line + 1, event.start_mark.column + 1
