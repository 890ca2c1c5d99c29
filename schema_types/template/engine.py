"""The prompt-template engine: resolution, diagnostics and rendering of ``{param}`` templates.

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

Malformed braces never make rendering fail: they are kept literally and reported by ``diagnose``.
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
    referenced_paths,
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
    "diagnose",
    "parameter_paths",
    "placeholder_kind",
    "referenced_paths",
    "render",
    "render_segments",
    "render_value",
    "tokenize",
]

PlaceholderKind = Literal["parameter", "tool_field", "unknown"]
SegmentKind = Literal["literal", "value", "missing", "error"]

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
        code: ``unknown-placeholder``, ``unterminated-brace``, ``stray-brace``,
            ``invalid-placeholder`` or ``unused-required``.
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
            ``missing`` (a placeholder with no argument and no default) or ``error`` (malformed
            or unknown placeholder, kept as its source text).
        start: offset of the source token in the template.
        end: offset just past the source token.
    """

    text: str
    kind: SegmentKind
    start: int
    end: int


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


def _lookup(path: tuple[str, ...], arguments: Any, parameters: Mapping[str, Any]) -> Any:
    """The value at ``path``, taking schema defaults level by level; ``_ABSENT`` if none.

    At each step an argument wins over a default. A parent's default object is used before its
    children's defaults (as a default-filling validator would apply them), and a key absent from
    both the argument and the parent's default still takes the child's own default, even when
    the parent itself is absent: ``{trip.nights}`` shows ``nights``' default without a ``trip``.
    """
    value: Any = arguments
    node: Any = parameters
    for key in path:
        child, _ = _child_schema(node, key)
        if isinstance(value, Mapping) and key in value:
            value = value[key]
        elif child is not None and "default" in child:
            value = child["default"]
        else:
            value = _ABSENT  # keep walking: a deeper default may still apply
        node = child
    return value


# --- Public operations ------------------------------------------------------------------------


def diagnose(template: str, parameters: Mapping[str, Any]) -> list[Diagnostic]:
    """Find the design-time problems of a template.

    Args:
        template: the prompt template.
        parameters: the tool's parameters as a JSON Schema object.

    Returns:
        Errors in template order (unknown or invalid placeholders, unterminated or stray braces),
        then one warning per required top-level parameter that no placeholder reaches (spanning
        ``(len(template), len(template))``). A placeholder counts as a use of the parameter
        named by its head even if its sub-path is wrong, so a typo in a sub-path gives one
        diagnostic, not two. An unknown placeholder's message suggests the closest parameter
        path or tool field, for the first 32 distinct unknowns of a template.
    """
    resolver = _Resolver(parameters)
    diagnostics: list[Diagnostic] = []
    used: set[str] = set()
    for token in _tokens(template):
        kind = token.kind
        if kind is TokenKind.TEXT or kind is TokenKind.ESCAPED_BRACE:
            continue
        if kind is TokenKind.PLACEHOLDER:
            used.add(token.path[0])
            found, why = resolver.classify(token.path)
            if found == "unknown":
                message = f"unknown placeholder {token.text}: {why}"
                suggestion = resolver.suggestion(token.text[1:-1])
                if suggestion is not None:
                    message += f" (did you mean {{{suggestion}}}?)"
                diagnostics.append(_error("unknown-placeholder", message, token))
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


def _error(code: str, message: str, token: Token) -> Diagnostic:
    return Diagnostic(Severity.ERROR, code, message, token.start, token.end)


def _invalid_message(text: str) -> str:
    inner = text[1:-1].strip()
    stripped = "{" + inner + "}"
    tokens = _tokens(stripped)
    if len(tokens) == 1 and tokens[0].path:
        hint = f"write {stripped} without spaces"
    else:
        hint = "a placeholder is a parameter name or dotted path such as {trip.destination}"
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
        keep_missing: for previews: a placeholder with no argument and no default renders as
            its own source text instead of the empty string (its kind is ``missing`` either way).

    Returns:
        One segment per token, in order. Never raises: malformed braces and unknown
        placeholders come out as their source text with kind ``error``.
    """
    resolver = _Resolver(parameters)
    # A long template repeats its placeholders; resolve and render each path once per call.
    filled: dict[tuple[str, ...], tuple[str, SegmentKind]] = {}
    segments: list[Segment] = []
    append = segments.append
    for token in _tokens(template):
        kind = token.kind
        if kind is TokenKind.TEXT:
            append(Segment(token.text, "literal", token.start, token.end))
        elif kind is TokenKind.ESCAPED_BRACE:
            append(Segment(token.text[0], "literal", token.start, token.end))
        elif kind is TokenKind.PLACEHOLDER or kind is TokenKind.TOOL_FIELD:
            found = filled.get(token.path)
            if found is None:
                found = filled[token.path] = _fill(
                    token, resolver, arguments, tool_name, tool_description, keep_missing
                )
            append(Segment(found[0], found[1], token.start, token.end))
        else:
            append(Segment(token.text, "error", token.start, token.end))
    return segments


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
    if found == "tool_field":
        return (tool_description if token.path[-1] == "description" else tool_name), "value"
    if found == "unknown":
        return token.text, "error"
    value = _lookup(token.path, arguments, resolver.parameters)
    if value is _ABSENT:
        return (token.text if keep_missing else ""), "missing"
    return render_value(value), "value"


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
        The filled prompt; missing values without defaults are empty, malformed and unknown
        placeholders stay as written. Never raises.
    """
    segments = render_segments(
        template, arguments, parameters, tool_name=tool_name, tool_description=tool_description
    )
    return "".join(segment.text for segment in segments)
