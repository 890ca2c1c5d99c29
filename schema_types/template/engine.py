"""The prompt-template engine: resolution, diagnostics and rendering of prompt templates.

One implementation serves the editor's highlighter and diagnostics list, the live preview, the
test dialog and the served MCP server, so what a person tests is what a client gets. The rules
(DESIGN.md, "Prompt templates"):

* ``{param}`` is replaced by the argument value; ``{a.b}`` reaches into object arguments.
* ``{tool.name}`` / ``{tool.description}`` always mean the tool's own fields; bare ``{name}`` /
  ``{description}`` mean them only when no top-level parameter has that name.
* ``{{`` / ``}}`` are literal braces; substitution is one pass (a value holding ``{x}`` stays as
  it is) and values are inserted verbatim (no regex replacement, so ``$1`` and ``\\1`` are safe).
* Values: strings as they are; ``bool`` as ``true``/``false``; ``None`` as ``null``; numbers,
  objects and arrays as ``json.dumps(value, ensure_ascii=False)`` with its default separators
  (``", "`` and ``": "``), so ``3.0`` stays ``3.0``.
* A missing argument takes its schema default (at any depth), else renders as the empty string.
* A path *has a value* when the call gives it or the schema has a default, and it is not null,
  ``""`` or ``[]``. ``{path|text}`` inserts ``text`` when ``path`` has no value (a value is
  inserted as usual, so ``{days|a few}`` and ``{days}`` only differ when ``days`` has none).
* ``{?path}…{/path}`` keeps its text only when ``path`` has a value, ``{!path}…{/path}`` only
  when it has none. Sections nest; a close names the innermost open section. A section tag alone
  on its line (spaces and tabs around it) takes its line with it, so a section written as a block
  leaves no blank line whether it is shown or not.

Malformed braces never make rendering fail: they are kept literally and reported by ``diagnose``,
and so is a section tag that pairs with nothing (its text then counts as outside any section).
The lexical layer lives in ``template.tokens``; its public names are re-exported here.
"""

from __future__ import annotations

import difflib
import enum
import json
from collections.abc import Mapping, Sequence, Set
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, Literal

from schema_types.template.tokens import (
    TOOL_FIELD_PATHS,
    Token,
    TokenKind,
    _tokens,
    count_path_uses,
    referenced_paths,
    rename_path,
    tokenize,
)

__all__ = [
    "TOOL_FIELD_PATHS",
    "Diagnostic",
    "PlaceholderKind",
    "Segment",
    "SegmentKind",
    "Severity",
    "Token",
    "TokenKind",
    "count_path_uses",
    "diagnose",
    "has_value",
    "open_sections",
    "parameter_paths",
    "placeholder_kind",
    "referenced_paths",
    "rename_path",
    "render",
    "render_segments",
    "render_value",
    "tokenize",
]

PlaceholderKind = Literal["parameter", "tool_field", "unknown"]
SegmentKind = Literal["literal", "value", "default", "fallback", "missing", "error"]

# Bare names that fall back to the tool's own fields when no parameter claims them.
_BARE_TOOL_FIELDS = frozenset({("name",), ("description",)})
_ABSENT: Any = object()
# Bounds on walking a parameters schema for suggestions: a schema being edited may be deep or
# (built in Python) even cyclic, and suggestions must not cost the editor a keystroke.
_MAX_DEPTH = 8
_MAX_PATHS = 2000
# difflib costs ~0.1 ms per unknown placeholder against 100 parameters; a pasted template full of
# unknowns (no parameters defined yet) must not freeze the editor, so only the first few distinct
# unknowns of a template get a "did you mean".
_MAX_SUGGESTIONS = 32


class Severity(enum.Enum):
    """How bad a diagnostic is: an ERROR renders literally, a WARNING renders fine."""

    ERROR = "error"
    WARNING = "warning"


@dataclass(frozen=True, slots=True)
class Diagnostic:
    """One design-time problem of a template.

    Attributes:
        severity: ERROR or WARNING.
        code: errors ``unknown-placeholder`` (also for a section's path),
            ``unterminated-brace``, ``stray-brace``, ``invalid-placeholder``,
            ``unclosed-section``, ``unopened-section-end``, ``section-mismatch``; warnings
            ``always-has-value`` (a section or fallback whose path always has a value) and
            ``unused-required``.
        message: a sentence that can be shown to the person as it is.
        start: offset of the offending text; ``len(template)`` for ``unused-required``.
        end: offset just past it; ``len(template)`` for ``unused-required``.
    """

    severity: Severity
    code: str
    message: str
    start: int
    end: int


@dataclass(frozen=True, slots=True)
class Segment:
    """One piece of rendered output and the template span it came from.

    Attributes:
        text: the output text.
        kind: ``literal`` (template text or an escaped brace), ``value`` (a filled placeholder),
            ``default`` (a placeholder filled from a schema default), ``fallback`` (the fallback
            text of a placeholder with no value), ``missing`` (a placeholder with no value and
            no fallback) or ``error`` (malformed or unknown placeholder, or a section tag that
            pairs with nothing, kept as its source text).
        start: offset of the source text in the template.
        end: offset just past it.
        section: whether it comes from inside a section that is shown.
    """

    text: str
    kind: SegmentKind
    start: int
    end: int
    section: bool = False


# --- Schema walking ---------------------------------------------------------------------------


def _may_be_object(node: Mapping[str, Any]) -> bool:
    declared = node.get("type")
    if isinstance(declared, str):
        return declared == "object"
    if isinstance(declared, list):
        return "object" in declared
    return True  # no (or an odd) "type": anything, objects included


def _child_schema(node: Any, key: str) -> tuple[Mapping[str, Any] | None, str]:
    """The schema of property ``key`` of an object schema ``node``, or None and why not.

    Declared properties are checked strictly so typos are caught; an object that declares no
    properties, or allows additional ones explicitly, accepts any key (an empty schema).
    """
    if not isinstance(node, Mapping):
        return {}, ""  # a boolean or malformed schema: nothing to check against
    properties = node.get("properties")
    if isinstance(properties, Mapping) and key in properties:
        child = properties[key]
        return (child if isinstance(child, Mapping) else {}), ""
    if not _may_be_object(node):
        return None, "is not an object"
    additional = node.get("additionalProperties", _ABSENT)
    if isinstance(additional, Mapping):
        return additional, ""
    if additional is True or "patternProperties" in node:
        return {}, ""
    if additional is _ABSENT and not properties:
        return {}, ""
    return None, f'has no property "{key}"'


def _root_properties(parameters: Any) -> Mapping[str, Any]:
    properties = parameters.get("properties") if isinstance(parameters, Mapping) else None
    return properties if isinstance(properties, Mapping) else {}


def _problem(path: tuple[str, ...], parameters: Mapping[str, Any]) -> tuple[PlaceholderKind, str]:
    """Classify a path; for ``unknown`` also say why, as the tail of a diagnostic message."""
    if path in TOOL_FIELD_PATHS:
        return "tool_field", ""
    root = _root_properties(parameters)
    if not path or path[0] not in root:
        if path in _BARE_TOOL_FIELDS:
            return "tool_field", ""
        return "unknown", f'no parameter "{path[0] if path else ""}"'
    node = root[path[0]]
    for depth in range(1, len(path)):
        child, why = _child_schema(node, path[depth])
        if child is None:
            return "unknown", f'parameter "{".".join(path[:depth])}" {why}'
        node = child
    return "parameter", ""


def placeholder_kind(path: tuple[str, ...], parameters: Mapping[str, Any]) -> PlaceholderKind:
    """Say what a placeholder path refers to.

    Args:
        path: the placeholder's path, e.g. ``("trip", "destination")``.
        parameters: the tool's parameters as a JSON Schema object.

    Returns:
        ``"tool_field"`` for ``tool.name``/``tool.description`` and for bare ``name``/
        ``description`` when no top-level parameter has that name; ``"parameter"`` when the head
        is a top-level property and every further step exists in the nested schema (an object
        that declares no properties, or sets ``additionalProperties``, accepts any key);
        ``"unknown"`` otherwise.
    """
    return _problem(tuple(path), parameters)[0]


def parameter_paths(parameters: Mapping[str, Any]) -> list[tuple[str, ...]]:
    """Every declared parameter path, parents before children (for completion and suggestions).

    Args:
        parameters: the tool's parameters as a JSON Schema object.

    Returns:
        ``[("trip",), ("trip", "destination"), ...]`` in declaration order, bounded in depth and
        count so a pathological schema cannot stall the editor.
    """
    paths: list[tuple[str, ...]] = []

    def walk(properties: Mapping[str, Any], prefix: tuple[str, ...]) -> None:
        for key, child in properties.items():
            if len(paths) >= _MAX_PATHS or not isinstance(key, str):
                return
            path = (*prefix, key)
            paths.append(path)
            if len(path) < _MAX_DEPTH and isinstance(child, Mapping):
                walk(_root_properties(child), path)

    walk(_root_properties(parameters), ())
    return paths


class _Resolver:
    """Per-call memo of path classification, so repeated placeholders cost one dict lookup."""

    def __init__(self, parameters: Mapping[str, Any]) -> None:
        self.parameters = parameters
        self._memo: dict[tuple[str, ...], tuple[PlaceholderKind, str]] = {}
        self._candidates: tuple[str, ...] | None = None
        self._suggested: dict[str, str | None] = {}

    def classify(self, path: tuple[str, ...]) -> tuple[PlaceholderKind, str]:
        found = self._memo.get(path)
        if found is None:
            found = self._memo[path] = _problem(path, self.parameters)
        return found

    def suggestion(self, dotted: str) -> str | None:
        if dotted in self._suggested:
            return self._suggested[dotted]
        if len(self._suggested) >= _MAX_SUGGESTIONS:
            return None
        if self._candidates is None:
            names = [".".join(p) for p in parameter_paths(self.parameters)]
            names += [".".join(p) for p in sorted(TOOL_FIELD_PATHS)]
            root = _root_properties(self.parameters)
            names += [p[0] for p in sorted(_BARE_TOOL_FIELDS) if p[0] not in root]
            self._candidates = tuple(names)
        found = self._suggested[dotted] = _closest(dotted, self._candidates)
        return found


@lru_cache(maxsize=1024)
def _closest(dotted: str, candidates: tuple[str, ...]) -> str | None:
    # difflib is the slow part of diagnose; the cache makes an unchanged unknown placeholder free
    # on the next keystroke.
    matches = difflib.get_close_matches(dotted, candidates, n=1, cutoff=0.6)
    return matches[0] if matches else None


# --- Values -----------------------------------------------------------------------------------


def _json_default(value: Any) -> Any:
    # Non-JSON containers (mappings, tuples, sets) still come out as JSON; anything else as str().
    if isinstance(value, Mapping):
        return dict(value)
    if isinstance(value, Set):
        return list(value)
    if isinstance(value, Sequence) and not isinstance(value, str | bytes):
        return list(value)
    return str(value)


def render_value(value: Any) -> str:
    """Turn an argument value into the text inserted into the prompt.

    Args:
        value: any value; normally one parsed from JSON.

    Returns:
        Strings unchanged; ``true``/``false``; ``null``; numbers, objects and arrays as
        ``json.dumps(value, ensure_ascii=False)`` (separators ``", "`` and ``": "``). Never raises:
        a value JSON cannot encode falls back to ``str(value)``.
    """
    if isinstance(value, str):
        return value
    if value is True:
        return "true"
    if value is False:
        return "false"
    if value is None:
        return "null"
    try:
        return json.dumps(value, ensure_ascii=False, default=_json_default)
    except (TypeError, ValueError, RecursionError):
        # Circular containers, non-string keys json refuses, ints too long to print.
        try:
            return str(value)
        except Exception:  # last resort: rendering must never fail a served call
            return object.__repr__(value)


def _lookup(
    path: tuple[str, ...], arguments: Any, parameters: Mapping[str, Any]
) -> tuple[Any, bool]:
    """The value at ``path`` and whether a schema default supplied it; ``_ABSENT`` if none.

    At each step an argument wins over a default. A parent's default object is used before its
    children's defaults (as a default-filling validator would apply them), and a key absent from
    both the argument and the parent's default still takes the child's own default, even when
    the parent itself is absent: ``{trip.nights}`` shows ``nights``' default without a ``trip``.
    """
    value: Any = arguments
    node: Any = parameters
    defaulted = False
    for key in path:
        child, _ = _child_schema(node, key)
        if isinstance(value, Mapping) and key in value:
            value = value[key]
        elif child is not None and "default" in child:
            value = child["default"]
            defaulted = True
        else:
            value = _ABSENT  # keep walking: a deeper default may still apply
        node = child
    return value, defaulted


def has_value(value: Any) -> bool:
    """Whether a value counts as given for sections and fallbacks.

    Args:
        value: an argument value.

    Returns:
        False for None, ``""`` and ``[]`` (and any other empty list); True for everything else,
        ``false``, ``0`` and ``{}`` included.
    """
    return not (value is None or value == "" or (isinstance(value, list) and not value))


# --- Sections ---------------------------------------------------------------------------------

_OPENERS = frozenset({TokenKind.SECTION, TokenKind.INVERTED_SECTION})
_BLANK = " \t"


@dataclass(frozen=True, slots=True)
class _Structure:
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


def _name(token: Token) -> str:
    return ".".join(token.path)


@lru_cache(maxsize=8)
def _structure(template: str) -> _Structure:
    tokens = _tokens(template)
    open_: list[int] = []
    ends: dict[int, int] = {}
    broken: set[int] = set()
    problems: list[Diagnostic] = []
    for index, token in enumerate(tokens):
        kind = token.kind
        if kind in _OPENERS:
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
                        f" write {{/{_name(inner)}}} to close it"
                    )
                    problems.append(_error("section-mismatch", message, token))
                else:
                    message = (
                        f"{token.text} closes no section: open one before it with"
                        f" {{?{_name(token)}}} or {{!{_name(token)}}}"
                    )
                    problems.append(_error("unopened-section-end", message, token))
                continue
            opener = tokens[open_[depth]]
            for inner_index in open_[depth + 1 :]:
                inner = tokens[inner_index]
                broken.add(inner_index)
                message = (
                    f"unclosed section {inner.text}: {token.text} closes {opener.text} around it"
                    f" first; write {{/{_name(inner)}}} before {token.text}"
                )
                problems.append(_error("unclosed-section", message, inner))
            ends[open_[depth]] = index
            del open_[depth:]
    for index in open_:
        inner = tokens[index]
        message = f"unclosed section {inner.text}: write {{/{_name(inner)}}} where it ends"
        problems.append(_error("unclosed-section", message, inner))
    broken.update(open_)
    problems.sort(key=lambda d: d.start)
    kept = _standalone_cuts(template, tokens, [*ends, *ends.values()])
    return _Structure(tokens, ends, frozenset(broken), kept, tuple(problems))


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
        if token.kind in _OPENERS:
            open_.append(token)
        elif token.kind is TokenKind.SECTION_END:
            for depth in range(len(open_) - 1, -1, -1):
                if open_[depth].path == token.path:
                    del open_[depth:]
                    break
    return open_


def _always_has_value(path: tuple[str, ...], parameters: Mapping[str, Any]) -> str | None:
    """Why ``path`` has a value whenever a call leaves it out or must send it, or None.

    That is ``required`` when each step of the path is required, ``has a default`` when the
    path has one; with ``(unless a call sends it empty)`` after it when its schema allows a
    value that counts as none (null, ``""``, ``[]``).
    """
    root = _root_properties(parameters)
    if not path or path[0] not in root:
        return None
    node: Any = parameters
    required = True
    for key in path:
        listed = node.get("required") if isinstance(node, Mapping) else None
        required = required and isinstance(listed, list) and key in listed
        child, _ = _child_schema(node, key)
        if child is None:
            return None
        node = child
    if required:
        why = "is required"
    else:
        value, _ = _lookup(path, {}, parameters)
        if value is _ABSENT or not has_value(value):
            return None
        why = "has a default"
    if not isinstance(node, Mapping) or _may_be_empty(node):
        why += " (unless a call sends it empty)"
    return why


def _may_be_empty(node: Mapping[str, Any]) -> bool:
    """Whether a value valid for ``node`` may count as no value (null, ``""``, ``[]``)."""
    if isinstance(node.get("enum"), list):
        return any(not has_value(choice) for choice in node["enum"])
    if "const" in node:
        return not has_value(node["const"])
    declared = node.get("type")
    types = [declared] if isinstance(declared, str) else declared
    if not isinstance(types, list) or "null" in types:
        return True
    if "string" in types and not _at_least_one(node.get("minLength")):
        return True
    return "array" in types and not _at_least_one(node.get("minItems"))


def _at_least_one(bound: Any) -> bool:
    return isinstance(bound, int | float) and not isinstance(bound, bool) and bound >= 1


# --- Public operations ------------------------------------------------------------------------


def diagnose(template: str, parameters: Mapping[str, Any]) -> list[Diagnostic]:
    """Find the design-time problems of a template.

    Args:
        template: the prompt template.
        parameters: the tool's parameters as a JSON Schema object.

    Returns:
        Errors and warnings in template order (unknown or invalid placeholders, unknown section
        paths, unterminated or stray braces, section tags that pair with nothing, sections and
        fallbacks whose path always has a value), then one warning per required top-level
        parameter that no placeholder reaches (spanning ``(len(template), len(template))``; a
        section tag is not a use). A placeholder counts as a use of the parameter named by its
        head even if its sub-path is wrong, so a typo in a sub-path gives one diagnostic, not
        two. An unknown placeholder's message suggests the closest parameter path or tool field,
        for the first 32 distinct unknowns of a template.
    """
    resolver = _Resolver(parameters)
    structure = _structure(template)
    diagnostics: list[Diagnostic] = []
    used: set[str] = set()
    always_memo: dict[tuple[str, ...], str | None] = {}  # a long template repeats its paths
    for token in structure.tokens:
        kind = token.kind
        if kind is TokenKind.TEXT or kind is TokenKind.ESCAPED_BRACE:
            continue
        if kind is TokenKind.PLACEHOLDER or kind in _OPENERS:
            if kind is TokenKind.PLACEHOLDER:
                used.add(token.path[0])
            found, why = resolver.classify(token.path)
            if found == "unknown":
                what = "placeholder" if kind is TokenKind.PLACEHOLDER else "section"
                message = f"unknown {what} {token.text}: {why}"
                suggestion = resolver.suggestion(".".join(token.path))
                if suggestion is not None:
                    message += f" (did you mean {_renamed(token, suggestion)}?)"
                diagnostics.append(_error("unknown-placeholder", message, token))
            elif found == "parameter" and (kind in _OPENERS or token.fallback is not None):
                if token.path in always_memo:
                    always = always_memo[token.path]
                else:
                    always = always_memo[token.path] = _always_has_value(token.path, parameters)
                if always is not None:
                    diagnostics.append(_always_warning(token, always))
        elif kind is TokenKind.UNTERMINATED:
            message = (
                'unterminated brace: "{" has no closing "}" on this line'
                ' (write "{{" for a literal "{")'
            )
            diagnostics.append(_error("unterminated-brace", message, token))
        elif kind is TokenKind.STRAY_CLOSE:
            message = (
                'stray closing brace: "}" closes no placeholder (write "}}" for a literal "}")'
            )
            diagnostics.append(_error("stray-brace", message, token))
        elif kind is TokenKind.INVALID_PLACEHOLDER:
            diagnostics.append(_error("invalid-placeholder", _invalid_message(token.text), token))
    if structure.problems:
        diagnostics = sorted([*diagnostics, *structure.problems], key=lambda d: d.start)
    end = len(template)
    root = _root_properties(parameters)
    required = parameters.get("required") if isinstance(parameters, Mapping) else None
    if isinstance(required, list):
        # dict.fromkeys dedupes in order; non-strings are a schema being edited, skipped here.
        for name in dict.fromkeys(n for n in required if isinstance(n, str)):
            # A required name with no declared property cannot be written as a placeholder at
            # all; that is a schema problem, reported by the schema checks, not here.
            if name in root and name not in used:
                message = f'required parameter "{name}" is never used in the prompt'
                diagnostics.append(
                    Diagnostic(Severity.WARNING, "unused-required", message, end, end)
                )
    return diagnostics


def _renamed(token: Token, dotted: str) -> str:
    """``token``'s source text naming ``dotted`` instead of its own path."""
    if token.kind is TokenKind.PLACEHOLDER:
        return "{" + dotted + ("" if token.fallback is None else "|" + token.fallback) + "}"
    return token.text[:2] + dotted + "}"


def _always_warning(token: Token, why: str) -> Diagnostic:
    name = _name(token)
    if token.kind is TokenKind.SECTION:
        message = f'section {token.text} is always kept: "{name}" {why}'
    elif token.kind is TokenKind.INVERTED_SECTION:
        message = f'section {token.text} is never kept: "{name}" {why}'
    else:
        message = f'the fallback of {token.text} is never used: "{name}" {why}'
    return Diagnostic(Severity.WARNING, "always-has-value", message, token.start, token.end)


def _error(code: str, message: str, token: Token) -> Diagnostic:
    return Diagnostic(Severity.ERROR, code, message, token.start, token.end)


def _invalid_message(text: str) -> str:
    inner = text[1:-1].strip()
    stripped = "{" + inner + "}"
    tokens = _tokens(stripped)
    if len(tokens) == 1 and tokens[0].path:
        hint = f"write {stripped} without spaces"
    else:
        hint = (
            "a placeholder is a parameter name or dotted path such as {trip.destination},"
            " optionally with a fallback ({days|a few}); a section is {?days}…{/days}"
        )
    return f'invalid placeholder {text}: {hint} (write "{{{{" and "}}}}" for literal braces)'


def render_segments(
    template: str,
    arguments: Mapping[str, Any],
    parameters: Mapping[str, Any],
    *,
    tool_name: str,
    tool_description: str,
    keep_missing: bool = False,
) -> list[Segment]:
    """Fill a template, keeping the source span of every output piece.

    Args:
        template: the prompt template.
        arguments: the call's arguments (a JSON object).
        parameters: the tool's parameters as a JSON Schema object (for defaults and resolution).
        tool_name: what ``{tool.name}`` (and an unclaimed bare ``{name}``) renders as.
        tool_description: what ``{tool.description}`` (and an unclaimed ``{description}``)
            renders as.
        keep_missing: for previews: a placeholder with no value, no default and no fallback
            renders as its own source text instead of the empty string (its kind is ``missing``
            either way).

    Returns:
        The output in order: one segment per placeholder, escaped brace and (the kept part of)
        each text token outside hidden sections; section tags give none. Never raises:
        malformed braces, unknown placeholders and section tags that pair with nothing come out
        as their source text with kind ``error``.
    """
    resolver = _Resolver(parameters)
    structure = _structure(template)
    tokens, ends, broken, kept = structure.tokens, structure.ends, structure.broken, structure.kept
    # A long template repeats its placeholders; resolve and render each one once per call.
    filled: dict[tuple[tuple[str, ...], str | None], tuple[str, SegmentKind]] = {}
    shown: list[int] = []  # end-tag indices of the sections being rendered, innermost last
    segments: list[Segment] = []
    append = segments.append
    index, count = 0, len(tokens)
    while index < count:
        token = tokens[index]
        kind = token.kind
        inside = bool(shown)
        if kind is TokenKind.TEXT:
            cut = kept.get(index)
            if cut is None:
                append(Segment(token.text, "literal", token.start, token.end, inside))
            elif cut[1] > cut[0]:
                append(Segment(template[cut[0] : cut[1]], "literal", cut[0], cut[1], inside))
        elif kind is TokenKind.ESCAPED_BRACE:
            append(Segment(token.text[0], "literal", token.start, token.end, inside))
        elif kind is TokenKind.PLACEHOLDER or kind is TokenKind.TOOL_FIELD:
            key = (token.path, token.fallback)
            found = filled.get(key)
            if found is None:
                found = filled[key] = _fill(
                    token, resolver, arguments, tool_name, tool_description, keep_missing
                )
            append(Segment(found[0], found[1], token.start, token.end, inside))
        elif index in broken or (kind not in _OPENERS and kind is not TokenKind.SECTION_END):
            append(Segment(token.text, "error", token.start, token.end, inside))
        elif kind is TokenKind.SECTION_END:
            shown.pop()
        else:
            given = _given(token, resolver, arguments, tool_name, tool_description)
            if given == (kind is TokenKind.SECTION):
                shown.append(ends[index])
            else:
                index = ends[index]  # past the hidden text and its end tag
        index += 1
    return segments


def _given(
    token: Token,
    resolver: _Resolver,
    arguments: Mapping[str, Any],
    tool_name: str,
    tool_description: str,
) -> bool:
    """Whether the path of a section tag has a value."""
    found = resolver.classify(token.path)[0]
    if found == "tool_field":
        return bool(tool_description if token.path[-1] == "description" else tool_name)
    if found == "unknown":
        return False
    value, _ = _lookup(token.path, arguments, resolver.parameters)
    return value is not _ABSENT and has_value(value)


def _fill(
    token: Token,
    resolver: _Resolver,
    arguments: Mapping[str, Any],
    tool_name: str,
    tool_description: str,
    keep_missing: bool,
) -> tuple[str, SegmentKind]:
    """The text and segment kind of one well-formed placeholder."""
    found = resolver.classify(token.path)[0]
    fallback = token.fallback
    if found == "tool_field":
        text = tool_description if token.path[-1] == "description" else tool_name
        return (fallback, "fallback") if fallback is not None and not text else (text, "value")
    if found == "unknown":
        return token.text, "error"
    value, defaulted = _lookup(token.path, arguments, resolver.parameters)
    if fallback is not None and (value is _ABSENT or not has_value(value)):
        return fallback, "fallback"
    if value is _ABSENT:
        return (token.text if keep_missing else ""), "missing"
    return render_value(value), ("default" if defaulted else "value")


def render(
    template: str,
    arguments: Mapping[str, Any],
    parameters: Mapping[str, Any],
    *,
    tool_name: str,
    tool_description: str,
) -> str:
    """Fill a template with arguments: the prompt a served call (or a test run) submits.

    Args:
        template: the prompt template.
        arguments: the call's arguments (a JSON object), normally already validated.
        parameters: the tool's parameters as a JSON Schema object (for defaults and resolution).
        tool_name: what ``{tool.name}`` (and an unclaimed bare ``{name}``) renders as.
        tool_description: what ``{tool.description}`` (and an unclaimed ``{description}``)
            renders as.

    Returns:
        The filled prompt: sections kept or left out, fallbacks inserted; missing values
        without defaults or fallbacks are empty, malformed and unknown placeholders and
        unpaired section tags stay as written. Never raises.
    """
    segments = render_segments(
        template, arguments, parameters, tool_name=tool_name, tool_description=tool_description
    )
    return "".join(segment.text for segment in segments)
