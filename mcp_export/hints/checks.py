"""The static checks of one tool's description and schema, as a client's model will read them.

A model picks a tool from its name and description and fills its arguments from the schema; each
check below names something that makes that harder, with what to write instead:

- ``description-missing`` / ``description-short``: no description, or fewer than
  :data:`SHORT_DESCRIPTION_WORDS` words.
- ``description-no-when``: no phrase says when to use the tool ("Use this when …", "when the
  user asks …", "for questions about …", "do not use for …"). A heuristic over English
  phrasings: it reads the words, not their sense.
- ``parameter-no-description``: a property (at any depth) without a ``description``.
- ``enum-no-meaning``: an ``enum`` (or ``oneOf``/``anyOf`` of ``const`` values) whose values are
  not each explained: the property's description does not mention every value, and the value
  has no description of its own.
- ``name-collision``: tool names, or sibling parameter names, that are the same or differ only
  by case or by ``_``, ``-``, ``.`` (``departure_date`` and ``departureDate``).
- ``required-unused``: a required parameter the prompt template never uses (the template
  engine's own ``unused-required`` diagnostic).

Pure: reads the tool definition, no I/O.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from schema_types.template.engine import diagnose

__all__ = [
    "SHORT_DESCRIPTION_WORDS",
    "Hint",
    "name_collisions",
    "says_when_to_use",
    "tool_hints",
]

SHORT_DESCRIPTION_WORDS = 12
"""A description with fewer words than this rarely says both what the tool does and when."""

_MAX_DEPTH = 32  # deeper schemas are not walked further (a hint names none there)

_WHEN_RE = re.compile(
    r"\b(?:"
    r"use (?:this|it|me)?\s*(?:tool\s+|function\s+)?(?:when|whenever|if|for|to)\b"
    r"|use when|call (?:this|it)\b|call (?:when|whenever|if)\b"
    r"|(?:do not|don't|never) (?:use|call)|not for\b"
    r"|when(?:ever)? (?:the )?(?:user|you|someone|asked|a user|they)\b"
    r"|if (?:the )?(?:user|you)\b|(?:questions|requests|queries|asks?) (?:about|for|on)\b"
    r"|(?:useful|intended|meant|designed|best|ideal|helpful|suited) (?:for|when|to)\b"
    r"|only (?:when|for|if)\b"
    r")",
    re.IGNORECASE,
)


@dataclass(frozen=True, slots=True)
class Hint:
    """One thing about a tool that makes a client's model likelier to pick or fill it wrong.

    Attributes:
        code: what kind of hint (see the module docstring).
        where: the part it is about: ``description``, ``name``, or ``parameters.<path>``
            (``parameters.trip.destination``, ``parameters.passengers[].name``).
        message: what is wrong and what to write instead.
    """

    code: str
    where: str
    message: str


def says_when_to_use(description: str) -> bool:
    """Whether ``description`` has a phrase that says when to use the tool (a heuristic)."""
    return _WHEN_RE.search(description) is not None


def tool_hints(description: str, parameters: Mapping[str, Any], prompt: str) -> list[Hint]:
    """The hints about one tool's description, parameters and prompt (not its name: names
    collide only among tools, see :func:`name_collisions`)."""
    hints = _description_hints(description)
    hints += _schema_hints(parameters, "", 0)
    for diagnostic in diagnose(prompt, parameters):
        if diagnostic.code == "unused-required":
            hints.append(
                Hint(
                    "required-unused",
                    "prompt",
                    f"{diagnostic.message}: a caller must send it and the answer ignores it; "
                    "use it in the prompt, or make it optional",
                )
            )
    return hints


def _description_hints(description: str) -> list[Hint]:
    text = description.strip()
    if not text:
        return [
            Hint(
                "description-missing",
                "description",
                "no description: a model picks tools by their descriptions; say what the tool "
                "does, when to use it, and what it answers",
            )
        ]
    hints: list[Hint] = []
    words = len(text.split())
    if words < SHORT_DESCRIPTION_WORDS:
        hints.append(
            Hint(
                "description-short",
                "description",
                f"the description has {words} word{'' if words == 1 else 's'}: say what the "
                "tool does, when to use it, and what it answers "
                f"(at least {SHORT_DESCRIPTION_WORDS} words)",
            )
        )
    if not says_when_to_use(text):
        hints.append(
            Hint(
                "description-no-when",
                "description",
                "the description does not say when to use the tool: add a sentence such as "
                "'Use this when the user asks …' (and, where another tool fits better, "
                "'Do not use it for …')",
            )
        )
    return hints


def _schema_hints(schema: Mapping[str, Any], path: str, depth: int) -> list[Hint]:
    """Hints for the properties of an object schema (and of objects nested in it)."""
    if depth > _MAX_DEPTH:
        return []
    hints: list[Hint] = []
    properties = schema.get("properties")
    if not isinstance(properties, Mapping):
        return hints
    names = [name for name in properties if isinstance(name, str)]
    for group in name_collisions(names):
        listed = ", ".join(repr(name) for name in group)
        where = f"parameters.{path.rstrip('.')}" if path else "parameters"
        hints.append(
            Hint(
                "name-collision",
                where,
                f"parameters {listed} differ only by case or separators: a model mixes them "
                "up; rename one so the names differ in words",
            )
        )
    for name in names:
        prop = properties[name]
        if not isinstance(prop, Mapping):
            continue
        inner = f"{path}{name}"
        hints += _property_hints(prop, inner)
        for nested, nested_path in _nested_objects(prop, inner):
            hints += _schema_hints(nested, nested_path + ".", depth + 1)
    return hints


def _nested_objects(prop: Mapping[str, Any], path: str) -> Iterator[tuple[Mapping[str, Any], str]]:
    """The object schemas inside a property: itself, and its array items (``path[]``)."""
    if isinstance(prop.get("properties"), Mapping):
        yield prop, path
    items = prop.get("items")
    if isinstance(items, Mapping) and isinstance(items.get("properties"), Mapping):
        yield items, f"{path}[]"


def _property_hints(prop: Mapping[str, Any], path: str) -> list[Hint]:
    hints: list[Hint] = []
    raw = prop.get("description")
    description = raw.strip() if isinstance(raw, str) else ""
    described = description != ""
    if not described:
        hints.append(
            Hint(
                "parameter-no-description",
                f"parameters.{path}",
                f"parameter {path!r} has no description: say what it is and what form a value "
                "takes (an example helps)",
            )
        )
    unexplained = _unexplained_values(prop, description)
    if unexplained:
        shown = ", ".join(repr(value) for value in unexplained[:6])
        if len(unexplained) > 6:
            shown += f" and {len(unexplained) - 6} more"
        hints.append(
            Hint(
                "enum-no-meaning",
                f"parameters.{path}",
                f"parameter {path!r}: the values {shown} are not explained: say in its "
                "description what each value means (or use oneOf with a const and a "
                "description per value)",
            )
        )
    items = prop.get("items")
    if isinstance(items, Mapping) and not isinstance(items.get("properties"), Mapping):
        # An array of plain values: its values' meanings belong to the items' enum.
        unexplained = _unexplained_values(items, description)
        if unexplained:
            shown = ", ".join(repr(value) for value in unexplained[:6])
            hints.append(
                Hint(
                    "enum-no-meaning",
                    f"parameters.{path}[]",
                    f"parameter {path!r}: the item values {shown} are not explained: say in "
                    "its description what each value means",
                )
            )
    return hints


def _unexplained_values(schema: Mapping[str, Any], description: str) -> list[Any]:
    """The enumerated values of ``schema`` that neither ``description`` nor their own
    description mentions; [] when the schema enumerates fewer than two values."""
    said = description.casefold()
    values: list[tuple[Any, bool]] = []
    enum = schema.get("enum")
    if isinstance(enum, list):
        values = [(value, False) for value in enum]
    else:
        for key in ("oneOf", "anyOf"):
            options = schema.get(key)
            if (
                isinstance(options, list)
                and options
                and all(isinstance(o, Mapping) and "const" in o for o in options)
            ):
                values = [
                    (o["const"], bool(str(o.get("description") or o.get("title") or "").strip()))
                    for o in options
                ]
                break
    if len(values) < 2:
        return []
    return [value for value, own in values if not own and not _mentioned(value, said)]


def _mentioned(value: Any, said: str) -> bool:
    """Whether ``value`` appears as a word of its own in ``said`` (casefolded)."""
    text = "null" if value is None else str(value).casefold()
    if isinstance(value, bool):
        text = "true" if value else "false"
    return re.search(rf"(?<!\w){re.escape(text)}(?!\w)", said) is not None


def _folded(name: str) -> str:
    return re.sub(r"[_\-.]", "", name).casefold()


def name_collisions(names: Sequence[str]) -> list[list[str]]:
    """Groups of ``names`` that are the same, or differ only by case or ``_``/``-``/``.``.

    Returns:
        Each group in the order its names first appear; names that collide with none are left
        out.
    """
    groups: dict[str, list[str]] = {}
    for name in names:
        groups.setdefault(_folded(name), []).append(name)
    return [group for group in groups.values() if len(group) > 1]
