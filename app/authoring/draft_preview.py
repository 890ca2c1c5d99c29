"""What a drafted tool looks like before it is accepted: its form, its template, its cases.

:class:`DraftPreview` shows one drafted tool (``mcp_export.authoring.draft``) read-only, in three
tabs a person reads like the tool editor: **Form** (name, description, what it answers, and the
parameters as a table: type, required, default, allowed values, examples, description),
**Template** (the prompt, highlighted by the editor's own highlighter, and the output schema when
it has one) and **Cases** (each case with its kind: typical, edge, must fail, caller).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from PySide6.QtCore import QEvent, Qt
from PySide6.QtWidgets import (
    QFormLayout,
    QHeaderView,
    QLabel,
    QPlainTextEdit,
    QTableWidget,
    QTableWidgetItem,
    QTabWidget,
    QVBoxLayout,
    QWidget,
)

from app.tool_editor.highlighter import TemplateHighlighter
from schema_types.agent import ToolDefinition
from schema_types.cases import TestCase

__all__ = ["PARAMETER_COLUMNS", "DraftPreview", "case_kind"]

PARAMETER_COLUMNS = (
    "Parameter",
    "Type",
    "Required",
    "Default",
    "Allowed values",
    "Examples",
    "Description",
)
CASE_COLUMNS = ("Case", "Kind", "Call", "Expects")


def _json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False)


def case_kind(case: TestCase, parameters: Mapping[str, Any]) -> str:
    """``must fail``, ``caller``, ``edge`` (an optional parameter left out, or a value at a
    bound of its range) or ``typical``."""
    if case.expect.is_error:
        return "must fail"
    if case.is_caller_case:
        return "caller"
    properties = parameters.get("properties")
    properties = properties if isinstance(properties, Mapping) else {}
    required = parameters.get("required")
    needed = set(required) if isinstance(required, list) else set()
    if any(name not in needed and name not in case.arguments for name in properties):
        return "edge"
    for name, value in case.arguments.items():
        schema = properties.get(name)
        if isinstance(schema, Mapping) and any(
            schema.get(bound) == value for bound in ("minimum", "maximum")
        ):
            return "edge"
    return "typical"


class DraftPreview(QTabWidget):
    """One drafted tool, read-only (:meth:`show_tool`; :meth:`clear` shows nothing)."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("draftPreview")
        self.name_label = _value_label("draftName")
        self.description_label = _value_label("draftDescription")
        self.answers_label = _value_label("draftAnswers")
        self.parameters_table = _table("draftParameters", PARAMETER_COLUMNS)
        form = QWidget()
        fields = QFormLayout()
        fields.addRow("Name:", self.name_label)
        fields.addRow("Description:", self.description_label)
        fields.addRow("Answers:", self.answers_label)
        form_layout = QVBoxLayout(form)
        form_layout.addLayout(fields)
        form_layout.addWidget(QLabel("Parameters:"))
        form_layout.addWidget(self.parameters_table, 1)

        self.template_view = _text_view("draftTemplate")
        self.highlighter = TemplateHighlighter(self.template_view.document(), self.template_view)
        self.highlighter.set_palette(self.palette())
        self.output_view = _text_view("draftOutputSchema")
        self.output_label = QLabel("Output schema:")
        template = QWidget()
        template_layout = QVBoxLayout(template)
        template_layout.addWidget(QLabel("Prompt template:"))
        template_layout.addWidget(self.template_view, 2)
        template_layout.addWidget(self.output_label)
        template_layout.addWidget(self.output_view, 1)

        self.cases_table = _table("draftCases", CASE_COLUMNS)
        self.addTab(form, "&Form")
        self.addTab(template, "&Template")
        self.addTab(self.cases_table, "&Cases")
        self.tool: ToolDefinition | None = None

    def changeEvent(self, event: QEvent) -> None:  # noqa: N802 (Qt override)
        if event.type() == QEvent.Type.PaletteChange:
            self.highlighter.set_palette(self.palette())
        super().changeEvent(event)

    def clear(self) -> None:
        """Show no tool."""
        self.show_tool(None)

    def show_tool(self, tool: ToolDefinition | None) -> None:
        """Show ``tool`` (None: empty)."""
        self.tool = tool
        self.name_label.setText(tool.name if tool else "")
        self.description_label.setText(tool.description if tool else "")
        typed = tool is not None and tool.output_schema is not None
        self.answers_label.setText(
            "" if tool is None else "data (an output schema)" if typed else "text"
        )
        self._fill_parameters(tool)
        self.highlighter.set_parameters(tool.parameters if tool else {})
        self.template_view.setPlainText(tool.prompt if tool else "")
        schema = tool.output_schema if tool is not None else None
        self.output_view.setPlainText(json.dumps(schema, indent=2) if schema else "")
        self.output_view.setVisible(schema is not None)
        self.output_label.setVisible(schema is not None)
        self._fill_cases(tool)

    def _fill_parameters(self, tool: ToolDefinition | None) -> None:
        table = self.parameters_table
        parameters = tool.parameters if tool else {}
        properties = parameters.get("properties")
        properties = properties if isinstance(properties, Mapping) else {}
        required = parameters.get("required")
        needed = set(required) if isinstance(required, list) else set()
        table.setRowCount(len(properties))
        for row, (name, schema) in enumerate(properties.items()):
            schema = schema if isinstance(schema, Mapping) else {}
            cells = (
                str(name),
                _type_text(schema),
                "yes" if name in needed else "",
                _json(schema["default"]) if "default" in schema else "",
                ", ".join(_json(v) for v in schema.get("enum") or ()),
                ", ".join(_json(v) for v in schema.get("examples") or ()),
                str(schema.get("description", "")),
            )
            for column, text in enumerate(cells):
                table.setItem(row, column, _item(text))
        table.resizeRowsToContents()

    def _fill_cases(self, tool: ToolDefinition | None) -> None:
        table = self.cases_table
        cases = tool.tests if tool else []
        table.setRowCount(len(cases))
        for row, case in enumerate(cases):
            call = f"ask: {case.ask}" if case.ask is not None else _json(case.arguments)
            expects = _json(case.expect.model_dump(mode="json", by_alias=True, exclude_unset=True))
            cells = (case.name, case_kind(case, tool.parameters if tool else {}), call, expects)
            for column, text in enumerate(cells):
                table.setItem(row, column, _item(text))
        table.resizeRowsToContents()


def _type_text(schema: Mapping[str, Any]) -> str:
    kind = schema.get("type")
    if isinstance(kind, list):
        text = " or ".join(str(k) for k in kind)
    else:
        text = str(kind) if kind is not None else "any"
    bounds = [
        f"{word} {schema[key]}"
        for key, word in (("minimum", "≥"), ("maximum", "≤"))
        if isinstance(schema.get(key), int | float)
    ]
    return f"{text} ({', '.join(bounds)})" if bounds else text


def _item(text: str) -> QTableWidgetItem:
    item = QTableWidgetItem(text)
    item.setFlags(item.flags() & ~Qt.ItemFlag.ItemIsEditable)
    item.setToolTip(text)
    return item


def _table(name: str, columns: tuple[str, ...]) -> QTableWidget:
    table = QTableWidget(0, len(columns))
    table.setObjectName(name)
    table.setHorizontalHeaderLabels(list(columns))
    table.verticalHeader().hide()
    table.setWordWrap(True)
    header = table.horizontalHeader()
    for column in range(len(columns) - 1):
        header.setSectionResizeMode(column, QHeaderView.ResizeMode.ResizeToContents)
    header.setSectionResizeMode(len(columns) - 1, QHeaderView.ResizeMode.Stretch)
    return table


def _value_label(name: str) -> QLabel:
    label = QLabel()
    label.setObjectName(name)
    label.setWordWrap(True)
    label.setTextFormat(Qt.TextFormat.PlainText)
    label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
    return label


def _text_view(name: str) -> QPlainTextEdit:
    view = QPlainTextEdit()
    view.setObjectName(name)
    view.setReadOnly(True)
    return view
