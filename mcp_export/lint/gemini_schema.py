"""Which parts of a tool's ``inputSchema`` the Gemini API's ``parameters`` cannot carry.

A client that passes MCP tools on to Gemini as ``FunctionDeclaration.parameters`` has the
``Schema`` message of ``google/ai/generativelanguage/v1beta/content.proto`` (googleapis/googleapis)
to fill: a select subset of OpenAPI 3.0 with one ``type`` per schema, ``format`` only
float/double, int32/int64 and enum/date-time, ``anyOf`` but no ``oneOf``/``allOf``, no ``$ref``
and no ``additionalProperties``. Whatever has no field there is dropped by a careful client or
refused by the API — either way the model never sees that constraint, so the server still checks
it (the call fails with the reason) but the model cannot fill it right the first time.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from mcp_export.lint.model import Finding, LintTool
from schema_types.json_text import format_path

__all__ = ["GEMINI_SCHEMA_SOURCE", "gemini_schema_findings"]

GEMINI_SCHEMA_SOURCE = (
    "Gemini API Schema message (a select subset of OpenAPI 3.0): googleapis/googleapis "
    "google/ai/generativelanguage/v1beta/content.proto, message Schema"
)

_FIELDS = frozenset(
    {
        "type",
        "format",
        "title",
        "description",
        "nullable",
        "enum",
        "items",
        "maxItems",
        "minItems",
        "properties",
        "required",
        "minimum",
        "maximum",
        "anyOf",
        "propertyOrdering",
        "default",
    }
)
_FORMATS = {
    "number": frozenset({"float", "double"}),
    "integer": frozenset({"int32", "int64"}),
    "string": frozenset({"enum", "date-time"}),
}
# Keywords that hold subschemas, walked so a nested use is found too (reported if not in _FIELDS).
_SUBSCHEMA_MAPS = ("properties", "$defs", "definitions", "patternProperties")
_SUBSCHEMA_LISTS = ("anyOf", "oneOf", "allOf", "prefixItems")
_SUBSCHEMA_ONE = ("items", "additionalProperties", "not", "if", "then", "else", "contains")

_ADVICE = {
    "$ref": "write the referenced schema in place",
    "$defs": "write each definition where it is used",
    "oneOf": "use anyOf",
    "allOf": "merge the parts into one schema",
    "additionalProperties": "name the properties",
}


def _walk(
    schema: Any, parts: tuple[str | int, ...]
) -> Iterator[tuple[tuple[str | int, ...], dict[str, Any]]]:
    if not isinstance(schema, dict):
        return
    yield parts, schema
    for key in _SUBSCHEMA_MAPS:
        children = schema.get(key)
        if isinstance(children, dict):
            for name, child in children.items():
                yield from _walk(child, (*parts, key, str(name)))
    for key in _SUBSCHEMA_LISTS:
        children = schema.get(key)
        if isinstance(children, list):
            for index, child in enumerate(children):
                yield from _walk(child, (*parts, key, index))
    for key in _SUBSCHEMA_ONE:
        yield from _walk(schema.get(key), (*parts, key))


def _problems(schema: dict[str, Any]) -> Iterator[tuple[str, str]]:
    """(what, why) for each part of one schema object Gemini's Schema cannot hold."""
    for key in schema:
        if key not in _FIELDS:
            yield key, "no such field"
    kind = schema.get("type")
    if isinstance(kind, list):
        yield "type", f"a list of types ({', '.join(map(str, kind))}): Schema.type holds one"
    fmt = schema.get("format")
    if isinstance(fmt, str) and isinstance(kind, str) and fmt not in _FORMATS.get(kind, ()):
        allowed = ", ".join(sorted(_FORMATS.get(kind, ()))) or "none"
        yield f"format: {fmt}", f"formats for {kind}: {allowed}"


def gemini_schema_findings(tool: LintTool) -> list[Finding]:
    """One warning per keyword of ``tool``'s inputSchema that Gemini's Schema cannot carry,
    naming every place it is used."""
    places: dict[str, list[str]] = {}
    reasons: dict[str, str] = {}
    for parts, schema in _walk(tool.input_schema, ()):
        for what, why in _problems(schema):
            places.setdefault(what, []).append(format_path(parts) or "the root")
            reasons.setdefault(what, why)
    found: list[Finding] = []
    for what, where in places.items():
        advice = _ADVICE.get(what)
        shown = ", ".join(where[:3]) + (f" and {len(where) - 3} more" if len(where) > 3 else "")
        message = (
            f"{what} at {shown}: not in Gemini's parameters Schema ({reasons[what]}); dropped "
            "or refused, so the model does not see it"
        )
        if advice:
            message += f" ({advice})"
        found.append(
            Finding("gemini", tool.name, "schema-keyword", "warning", message, GEMINI_SCHEMA_SOURCE)
        )
    return found
