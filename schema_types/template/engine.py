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
The lexical layer lives in ``template.tokens``, what paths refer to and the values they take in
``template.resolve``, how section tags pair up in ``template.sections``, and the diagnostic type
in ``template.diagnostic``; their public names are re-exported here.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence, Set
from dataclasses import dataclass
from typing import Any, Literal

from schema_types.template.diagnostic import Diagnostic, Severity, error_at
from schema_types.template.resolve import (
    ABSENT,
    PlaceholderKind,
    Resolver,
    has_value,
    lookup,
    parameter_paths,
    placeholder_kind,
    root_properties,
)
from schema_types.template.sections import (
    OPENERS,
    open_sections,
    section_name,
    section_problems,
    section_structure,
)
from schema_types.template.tokens import (
    _TOKEN_RE,
    TOOL_FIELD_PATHS,
    Token,
    TokenKind,
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

SegmentKind = Literal["literal", "value", "default", "fallback", "missing", "error"]


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
    resolver = Resolver(parameters)
    structure = section_structure(template)
    diagnostics: list[Diagnostic] = []
    used: set[str] = set()
    for token in structure.tokens:
        kind = token.kind
        if kind is TokenKind.TEXT or kind is TokenKind.ESCAPED_BRACE:
            continue
        if kind is TokenKind.PLACEHOLDER or kind in OPENERS:
            if kind is TokenKind.PLACEHOLDER:
                used.add(token.path[0])
            found, why = resolver.classify(token.path)
            if found == "unknown":
                what = "placeholder" if kind is TokenKind.PLACEHOLDER else "section"
                message = f"unknown {what} {token.text}: {why}"
                suggestion = resolver.suggestion(".".join(token.path))
                if suggestion is not None:
                    message += f" (did you mean {_renamed(token, suggestion)}?)"
                diagnostics.append(error_at("unknown-placeholder", message, token))
            elif found == "parameter" and (kind in OPENERS or token.fallback is not None):
                always = resolver.always(token.path)
                if always is not None:
                    diagnostics.append(_always_warning(token, always))
        elif kind is TokenKind.UNTERMINATED:
            message = (
                'unterminated brace: "{" has no closing "}" on this line'
                ' (write "{{" for a literal "{")'
            )
            diagnostics.append(error_at("unterminated-brace", message, token))
        elif kind is TokenKind.STRAY_CLOSE:
            message = (
                'stray closing brace: "}" closes no placeholder (write "}}" for a literal "}")'
            )
            diagnostics.append(error_at("stray-brace", message, token))
        elif kind is TokenKind.INVALID_PLACEHOLDER:
            diagnostics.append(error_at("invalid-placeholder", _invalid_message(token.text), token))
    if structure.faults:
        problems = section_problems(template)
        diagnostics = sorted([*diagnostics, *problems], key=lambda d: d.start)
    end = len(template)
    root = root_properties(parameters)
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
    name = section_name(token)
    if token.kind is TokenKind.SECTION:
        message = f'section {token.text} is always kept: "{name}" {why}'
    elif token.kind is TokenKind.INVERTED_SECTION:
        message = f'section {token.text} is never kept: "{name}" {why}'
    else:
        message = f'the fallback of {token.text} is never used: "{name}" {why}'
    return Diagnostic(Severity.WARNING, "always-has-value", message, token.start, token.end)


def _invalid_message(text: str) -> str:
    inner = text[1:-1].strip()
    stripped = "{" + inner + "}"
    # Matched here rather than tokenized: the tokenizer's cache is for whole templates, and a
    # template with many invalid placeholders would push its own text out of it.
    match = _TOKEN_RE.fullmatch(stripped)
    if match is not None and match.lastgroup in ("path", "fallback", "section"):
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
    resolver = Resolver(parameters)
    structure = section_structure(template)
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
        elif index in broken or (kind not in OPENERS and kind is not TokenKind.SECTION_END):
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
    resolver: Resolver,
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
    value, _ = lookup(token.path, arguments, resolver.parameters)
    return value is not ABSENT and has_value(value)


def _fill(
    token: Token,
    resolver: Resolver,
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
    value, defaulted = lookup(token.path, arguments, resolver.parameters)
    if fallback is not None and (value is ABSENT or not has_value(value)):
        return fallback, "fallback"
    if value is ABSENT:
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
