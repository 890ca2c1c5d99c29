"""A typed tool's answer in a test run: the object as a tree, the repair turn, the schema messages.

A run of a tool with an output schema checks every answer against the schema (the runtime's
``OutputChecked`` events, ``mcp_export.session.output_events``). Each check becomes one
:class:`OutputCheckBlock` in the run's transcript, in order:

- an answer that fits: "✓ The answer fits the output schema", and the object as a tree
  (:class:`ObjectTree`: field, value, JSON type);
- an answer that does not: "✗ The answer does not fit the output schema" with the schema
  messages, each naming its JSON path, and the answer's value as a tree with the offending
  fields marked (a message about a field that is missing marks the object that lacks it);
- the repair turn, when there was one, is the block after that, headed "Repair turn": the model
  was sent those messages and answered again, and the block says whether that answer fits.

How the model was made to answer in the schema (structured output, a forced final tool, an
instruction) is said under each heading. The blocks read the check only; they hold nothing else.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any, Protocol

from PySide6.QtCore import Qt
from PySide6.QtGui import QBrush, QColor, QFontDatabase, QPalette
from PySide6.QtWidgets import (
    QFrame,
    QHeaderView,
    QLabel,
    QSizePolicy,
    QTreeWidget,
    QTreeWidgetItem,
    QVBoxLayout,
)

from app.chat.tool_card import ERROR_COLOR, OK_COLOR
from app.icons import icon
from schema_types.agent_checks import parse_path
from schema_types.errors import Problem
from schema_types.json_text import format_path, json_type_name

__all__ = [
    "MAX_CHILDREN",
    "MAX_ROWS_SHOWN",
    "CheckedAnswer",
    "ObjectTree",
    "OutputCheckBlock",
    "check_heading",
    "method_text",
]

MAX_CHILDREN = 200
"""Children of one object or array shown as rows; the rest are counted in one row."""
MAX_ROWS_SHOWN = 14
"""Rows the tree is tall enough for; a longer object scrolls inside it."""

_METHODS = {
    "response_format": "structured output (response_format with the JSON Schema)",
    "final_tool": "a forced final tool whose input is the schema",
    "instruction": "an instruction with the schema, then checking",
}


class CheckedAnswer(Protocol):
    """One answer checked against the output schema (``OutputChecked`` of the runtime)."""

    @property
    def stage(self) -> str:
        """``answer``, ``format`` (asked again under the schema) or ``repair``."""

    @property
    def method(self) -> str:
        """How the model was made to answer in the schema."""

    @property
    def text(self) -> str:
        """The answer as the model gave it."""

    @property
    def value(self) -> Any:
        """The parsed value (None when the answer is not JSON)."""

    @property
    def problems(self) -> Sequence[Problem]:
        """The schema messages; empty when the answer fits."""


def method_text(method: str) -> str:
    """How the model was made to answer in the schema, in words."""
    return _METHODS.get(method, method)


def check_heading(check: CheckedAnswer) -> str:
    """The block's heading: which answer it was and whether it fits."""
    fits = not check.problems
    if check.stage == "repair":
        verdict = "it fits the output schema" if fits else "it still does not fit the schema"
        return f"{'✓' if fits else '✗'} Repair turn: the model was sent the messages above and " + (
            f"answered again — {verdict}"
        )
    if check.stage == "format":
        verdict = "it fits" if fits else "it does not fit"
        return f"{'✓' if fits else '✗'} Asked again under the output schema: {verdict}"
    if fits:
        return "✓ The answer fits the output schema"
    return "✗ The answer does not fit the output schema"


class ObjectTree(QTreeWidget):
    """A JSON value as rows: field (or ``[index]``), value, JSON type; fields named in
    ``problems`` are marked with the message."""

    def __init__(self, value: Any, problems: Sequence[Problem] = ()) -> None:
        super().__init__()
        self.setObjectName("answerTree")
        self.setAccessibleName("The answer's object")
        self.setColumnCount(3)
        self.setHeaderLabels(["Field", "Value", "Type"])
        self.setUniformRowHeights(True)
        self.setAlternatingRowColors(True)
        self.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Fixed)
        header = self.header()
        header.setStretchLastSection(False)
        header.setSectionResizeMode(0, QHeaderView.ResizeMode.Interactive)
        header.setSectionResizeMode(1, QHeaderView.ResizeMode.Stretch)
        header.setSectionResizeMode(2, QHeaderView.ResizeMode.ResizeToContents)
        header.resizeSection(0, 180)
        self._marks = _marks_by_path(value, problems)
        root = QTreeWidgetItem(["(answer)", "", json_type_name(value)])
        self.addTopLevelItem(root)
        self._fill(root, value, ())
        self.expandAll()
        self._fit()

    def row_texts(self) -> list[tuple[str, str, str, int]]:
        """Every row as shown: (field, value, type, depth), depth first."""
        rows: list[tuple[str, str, str, int]] = []

        def walk(item: QTreeWidgetItem, depth: int) -> None:
            rows.append((item.text(0), item.text(1), item.text(2), depth))
            for index in range(item.childCount()):
                child = item.child(index)
                if child is not None:
                    walk(child, depth + 1)

        for index in range(self.topLevelItemCount()):
            top = self.topLevelItem(index)
            if top is not None:
                walk(top, 0)
        return rows

    def marked(self) -> dict[str, str]:
        """The rows marked with a schema message: their JSON path → the messages."""
        return {format_path(path): "\n".join(messages) for path, messages in self._marks.items()}

    def _fill(self, item: QTreeWidgetItem, value: Any, path: tuple[str | int, ...]) -> None:
        self._mark(item, path)
        children: list[tuple[str, str | int, Any]] = []
        if isinstance(value, dict):
            children = [(str(k), str(k), v) for k, v in value.items()]
            item.setText(1, f"{len(value)} field{'s' if len(value) != 1 else ''}")
        elif isinstance(value, list):
            children = [(f"[{i}]", i, v) for i, v in enumerate(value)]
            item.setText(1, f"{len(value)} item{'s' if len(value) != 1 else ''}")
        else:
            item.setText(1, _scalar(value))
            item.setToolTip(1, _scalar(value))
        for label, key, child_value in children[:MAX_CHILDREN]:
            child = QTreeWidgetItem([label, "", json_type_name(child_value)])
            item.addChild(child)
            self._fill(child, child_value, (*path, key))
        if len(children) > MAX_CHILDREN:
            more = QTreeWidgetItem(["…", f"{len(children) - MAX_CHILDREN} more not shown", ""])
            more.setForeground(1, self.palette().brush(QPalette.ColorRole.PlaceholderText))
            item.addChild(more)

    def _mark(self, item: QTreeWidgetItem, path: tuple[str | int, ...]) -> None:
        messages = self._marks.get(path)
        if not messages:
            return
        text = "\n".join(messages)
        item.setIcon(0, icon("warning"))
        for column in range(3):
            item.setToolTip(column, text)
        item.setForeground(0, QBrush(QColor(ERROR_COLOR)))

    def _fit(self) -> None:
        rows = sum(1 for _ in self.row_texts())
        shown = min(rows, MAX_ROWS_SHOWN)
        top = self.topLevelItem(0)
        row = self.indexRowSizeHint(self.indexFromItem(top)) if top is not None else 0
        line = max(row, self.fontMetrics().lineSpacing())
        height = shown * line + self.header().sizeHint().height() + 2 * self.frameWidth() + 4
        self.setFixedHeight(height)


def _scalar(value: Any) -> str:
    if isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False)


def _marks_by_path(
    value: Any, problems: Sequence[Problem]
) -> dict[tuple[str | int, ...], list[str]]:
    """Each problem under the deepest path of ``value`` it lies in (a missing field's message
    marks the object that lacks it)."""
    marks: dict[tuple[str | int, ...], list[str]] = {}
    for problem in problems:
        parts = tuple(parse_path(problem.path)) if problem.path else ()
        found: tuple[str | int, ...] = ()
        node = value
        for part in parts:
            if isinstance(node, dict) and str(part) in node:
                node, found = node[str(part)], (*found, str(part))
            elif isinstance(node, list) and isinstance(part, int) and 0 <= part < len(node):
                node, found = node[part], (*found, part)
            else:
                break
        marks.setdefault(found, []).append(str(problem) if problem.path else problem.message)
    return marks


class OutputCheckBlock(QFrame):
    """One checked answer in a test run's transcript (see the module docstring).

    Attributes:
        heading: the verdict line.
        method_label: how the model was made to answer in the schema.
        problems_label: the schema messages (hidden when the answer fits).
        tree: the answer's value as a tree (None when the answer is not JSON).
    """

    def __init__(self, check: CheckedAnswer) -> None:
        super().__init__()
        self.setObjectName("outputCheck")
        self.check = check
        fits = not check.problems
        color = OK_COLOR if fits else ERROR_COLOR
        self.setFrameShape(QFrame.Shape.StyledPanel)
        self.setStyleSheet(f"#outputCheck {{ border: 1px solid {color}; border-radius: 3px; }}")
        self.heading = _label("outputCheckHeading", check_heading(check))
        self.heading.setStyleSheet(f"color: {color}; font-weight: bold;")
        self.method_label = _label(
            "outputCheckMethod", f"Made to answer in the schema by {method_text(check.method)}."
        )
        self.method_label.setForegroundRole(QPalette.ColorRole.PlaceholderText)
        self.problems_label = _label(
            "outputCheckProblems",
            "\n".join(f"• {p}" if p.path else f"• {p.message}" for p in check.problems),
        )
        self.problems_label.setFont(QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont))
        self.problems_label.setVisible(not fits)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(8, 4, 8, 6)
        layout.setSpacing(4)
        layout.addWidget(self.heading)
        layout.addWidget(self.method_label)
        layout.addWidget(self.problems_label)
        self.tree: ObjectTree | None = None
        if check.value is not None or check.text.strip() == "null":
            self.tree = ObjectTree(check.value, check.problems)
            layout.addWidget(self.tree)

    def problem_lines(self) -> list[str]:
        """The schema messages as shown, one per line."""
        text = self.problems_label.text()
        return [line.removeprefix("• ") for line in text.splitlines()] if text else []


def _label(name: str, text: str) -> QLabel:
    label = QLabel()
    label.setObjectName(name)
    label.setTextFormat(Qt.TextFormat.PlainText)
    label.setText(text)
    label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
    label.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Preferred)
    label.setWordWrap(True)
    return label
