"""Import parameters: paste a tool definition, a JSON Schema or an example JSON object.

:func:`import_parameters` recognises, in this order: an MCP tool definition (``inputSchema``; a
``tools/list`` result with one tool too), an OpenAI function or Anthropic tool definition
(``parameters`` / ``input_schema``), a JSON Schema object (``"type": "object"``), and otherwise an
example of the arguments, whose schema is inferred (:func:`infer_schema`). The result is checked
by ``schema_types`` before anything is applied. :class:`ImportDialog` is the studio's way in.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

from PySide6.QtCore import QTimer
from PySide6.QtGui import QFontDatabase
from PySide6.QtWidgets import (
    QCheckBox,
    QDialog,
    QDialogButtonBox,
    QLabel,
    QPlainTextEdit,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from app.tool_editor.value_editors import error_colour, loads_json
from app.window.screen_fit import fit_to_screen
from schema_types.errors import SchemaDefinitionError
from schema_types.schema.check import check_parameters_schema
from schema_types.schema.nodes import parameters_from_json

__all__ = [
    "ImportDialog",
    "ImportedParameters",
    "SchemaImportError",
    "import_parameters",
    "infer_schema",
]

_ZONE = r"(Z|[+-]\d{2}:?\d{2})?"
_FORMATS = (
    ("date-time", re.compile(r"^\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(:\d{2}(\.\d+)?)?" + _ZONE + "$")),
    ("date", re.compile(r"^\d{4}-\d{2}-\d{2}$")),
    ("time", re.compile(r"^\d{2}:\d{2}:\d{2}(\.\d+)?" + _ZONE + "$")),
    ("email", re.compile(r"^[^@\s]+@[^@\s]+\.[^@\s]+$")),
    ("uri", re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*://\S+$")),
    ("uuid", re.compile(r"^[0-9a-fA-F]{8}-([0-9a-fA-F]{4}-){3}[0-9a-fA-F]{12}$")),
)  # fmt: skip


class SchemaImportError(ValueError):
    """The pasted text cannot become parameters; the message says why and what to paste."""


@dataclass(frozen=True)
class ImportedParameters:
    """What an import found.

    Attributes:
        parameters: the parameters schema (sound per ``check_parameters_schema``).
        source: what the text was read as ("MCP tool definition", "example arguments"…).
        name: the tool name in a pasted definition, if any.
        description: the tool description in a pasted definition, if any.
    """

    parameters: dict[str, Any]
    source: str
    name: str | None = None
    description: str | None = None


def infer_schema(value: Any) -> dict[str, Any]:
    """A JSON Schema for an example value: types, nested objects, item schemas, formats.

    Strings, numbers and integers keep the example as ``examples`` (the preview shows it); an
    object requires the keys that are not null; a ``null`` example gives an optional string.
    """
    return _schema_of([value])


def _schema_of(values: list[Any]) -> dict[str, Any]:
    """One schema every value fits: several examples of the same place (array items, the same
    key in objects of a list) are merged, so no example is refused by the schema made of them."""
    present = [v for v in values if v is not None]
    if not present:
        return {"type": "string"}  # null: we cannot tell the type, and it was not required
    first = present[0]
    if all(isinstance(v, dict) for v in present):
        return _object_schema(present)
    if all(isinstance(v, list) for v in present):
        return {"type": "array", "items": _schema_of([item for v in present for item in v])}
    if all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in present):
        kind = "integer" if all(isinstance(v, int) for v in present) else "number"
        return {"type": kind, "examples": [first]}
    if isinstance(first, bool):
        return {"type": "boolean"}
    if isinstance(first, str):
        schema: dict[str, Any] = {"type": "string"}
        found = next((name for name, pattern in _FORMATS if pattern.match(first)), None)
        if found:
            schema["format"] = found
        schema["examples"] = [first]
        return schema
    return _schema_of([first])  # mixed kinds: the first one's (its list or object merged)


def _object_schema(examples: list[dict[str, Any]]) -> dict[str, Any]:
    """One object schema for several examples: every key seen; required if never null/absent."""
    keys = list(dict.fromkeys(key for example in examples for key in example))
    properties = {key: _schema_of([e.get(key) for e in examples]) for key in keys}
    required = [key for key in keys if all(e.get(key) is not None for e in examples)]
    schema: dict[str, Any] = {"type": "object", "properties": properties}
    if required:
        schema["required"] = required
    return schema


def import_parameters(text: str) -> ImportedParameters:
    """Read pasted text as parameters (see the module docstring for what is recognised).

    Raises:
        SchemaImportError: the text is not JSON, not an object, holds several tools, or the
            schema found has problems (each named by its JSON path).
    """
    try:
        data = loads_json(text)
    except json.JSONDecodeError as exc:
        raise SchemaImportError(
            f"Line {exc.lineno}, column {exc.colno}: {exc.msg} (paste JSON)"
        ) from exc
    if not isinstance(data, dict):
        raise SchemaImportError("paste a JSON object: a tool definition, a schema or an example")
    tools = data.get("tools")
    if isinstance(tools, list) and _is_tool_list(data, tools):
        if len(tools) != 1:
            count = f"{len(tools)} tools" if tools else "no tool"
            raise SchemaImportError(f"this holds {count}: paste the one to import")
        data = tools[0]
    result = _recognise(data)
    try:
        parameters_from_json(result.parameters)
        problems = check_parameters_schema(result.parameters)
    except SchemaDefinitionError as exc:
        problems = exc.problems
    if problems:
        listed = "; ".join(str(p) for p in problems[:5])
        raise SchemaImportError(f"the {result.source} has problems: {listed}")
    return result


def _recognise(data: dict[str, Any]) -> ImportedParameters:
    function = data.get("function")
    if data.get("type") == "function" and isinstance(function, dict):
        data = function
    for key, source in (
        ("inputSchema", "MCP tool definition"),
        ("input_schema", "Anthropic tool definition"),
        ("parameters", "function definition"),
    ):
        schema = data.get(key)
        if isinstance(schema, dict) and (key != "parameters" or "name" in data):
            name, description = data.get("name"), data.get("description")
            return ImportedParameters(
                schema,
                source,
                name if isinstance(name, str) else None,
                description if isinstance(description, str) else None,
            )
    if data.get("type") == "object" and (
        isinstance(data.get("properties"), dict) or set(data) <= _OBJECT_SCHEMA_KEYWORDS
    ):
        return ImportedParameters(data, "JSON Schema")
    return ImportedParameters(infer_schema(data), "example arguments")


# An object schema may have no ``properties`` (a tool without arguments); these keys alone
# still say "schema", not "example arguments with a key named type".
_OBJECT_SCHEMA_KEYWORDS = {
    "type",
    "$schema",
    "$id",
    "$comment",
    "$defs",
    "title",
    "description",
    "required",
    "additionalProperties",
    "patternProperties",
    "propertyNames",
    "minProperties",
    "maxProperties",
    "unevaluatedProperties",
}


def _is_tool_list(data: dict[str, Any], tools: list[Any]) -> bool:
    """Whether ``data`` is a ``tools/list`` result rather than arguments with a "tools" key."""
    if "inputSchema" in data:
        return False
    if tools and all(isinstance(t, dict) and "inputSchema" in t for t in tools):
        return True
    return set(data) <= {"tools", "nextCursor", "_meta"}


class ImportDialog(QDialog):
    """Paste text, see what it becomes, and replace the tool's parameters with it."""

    def __init__(self, parent: QWidget | None = None, *, offer_description: bool = True) -> None:
        super().__init__(parent)
        self.setWindowTitle("Import parameters")
        self.setObjectName("importParametersDialog")
        self.result_value: ImportedParameters | None = None
        intro = QLabel(
            "Paste an MCP tool definition (with <tt>inputSchema</tt>), a JSON Schema, or an "
            "example of the arguments as a JSON object: its types are inferred."
        )
        intro.setWordWrap(True)
        self.text_edit = QPlainTextEdit()
        self.text_edit.setObjectName("importText")
        self.text_edit.setAccessibleName("Text to import")
        self.text_edit.setFont(QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont))
        self.text_edit.setPlaceholderText('{"destination": "Lisbon", "nights": 3}')
        self.summary = QLabel()
        self.summary.setObjectName("importSummary")
        self.summary.setWordWrap(True)
        self.take_description = QCheckBox("Also use its description for the tool")
        self.take_description.setChecked(offer_description)
        self.take_description.hide()
        self.buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Cancel)
        self.import_button = QPushButton("Replace parameters")
        self.import_button.setDefault(True)
        self.buttons.addButton(self.import_button, QDialogButtonBox.ButtonRole.AcceptRole)
        layout = QVBoxLayout(self)
        layout.addWidget(intro)
        layout.addWidget(self.text_edit, 1)
        layout.addWidget(self.summary)
        layout.addWidget(self.take_description)
        layout.addWidget(self.buttons)
        fit_to_screen(self, 560, 420)
        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.setInterval(200)
        self._timer.timeout.connect(self.check_text)
        self.text_edit.textChanged.connect(self._timer.start)
        self.buttons.accepted.connect(self.accept)
        self.buttons.rejected.connect(self.reject)
        self.check_text()

    def check_text(self) -> ImportedParameters | None:
        """Read the text now and say what it becomes (or why it cannot be used)."""
        self._timer.stop()
        text = self.text_edit.toPlainText()
        self.result_value = None
        if not text.strip():
            self.summary.setText("")
        else:
            try:
                self.result_value = import_parameters(text)
            except SchemaImportError as exc:
                self.summary.setText(str(exc))
                self.summary.setStyleSheet(f"color: {error_colour(self).name()};")
        found = self.result_value
        if found is not None:
            count = len(found.parameters.get("properties") or {})
            self.summary.setStyleSheet("")
            self.summary.setText(
                f"Read as {_article(found.source)}: {count} top-level "
                f"parameter{'s' * (count != 1)}."
            )
        self.take_description.setVisible(bool(found and found.description))
        self.import_button.setEnabled(found is not None)
        return found

    def accept(self) -> None:
        """Close with the import result when the text is usable."""
        if self.check_text() is not None:
            super().accept()


# "an MCP …" but "a JSON …": the article goes by sound, so it is written out per source.
_WITH_ARTICLE = {
    "MCP tool definition": "an MCP tool definition",
    "Anthropic tool definition": "an Anthropic tool definition",
    "function definition": "a function definition",
    "JSON Schema": "a JSON Schema",
    "example arguments": "example arguments",
}


def _article(source: str) -> str:
    return _WITH_ARTICLE.get(source, source)
