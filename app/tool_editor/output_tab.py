"""The tool editor's *Output* section: what the tool answers, text or data of a declared shape.

A tool without an output schema answers text (the default): the section then says so and offers
"Add output schema". With one, it shows the same parameter builder the parameters use
(:class:`~app.tool_editor.parameter_builder.ParameterBuilder` with the
:data:`~app.tool_editor.schema_slot.OUTPUT` slot: tree, property panel, JSON view, problems
flagged where they are) over the tool's ``output_schema``, and "Remove output schema" puts the
tool back to text answers. Adding and removing are each one undo step; removing takes the key
out of the file (``unset_field``), so an undo of an add writes the file as it was.

The section holds no state of its own: which page it shows follows the tool's ``output_schema``
through the tool's change notices.
"""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QHBoxLayout,
    QLabel,
    QPushButton,
    QStackedWidget,
    QVBoxLayout,
    QWidget,
)

from app.document.agent_document import FieldPath
from app.document.tool_ref import ToolRef
from app.icons import icon
from app.tool_editor.parameter_builder import ParameterBuilder
from app.tool_editor.schema_slot import OUTPUT

__all__ = ["NO_OUTPUT_TEXT", "STARTER_OUTPUT_SCHEMA", "OutputTab"]

STARTER_OUTPUT_SCHEMA: dict[str, Any] = {"type": "object", "properties": {}}
"""What "Add output schema" gives the tool: an object whose fields the person then adds."""

NO_OUTPUT_TEXT = (
    "<b>No output schema: this tool answers text.</b><br><br>"
    "Give it an output schema when callers want data rather than prose (flights with prices, a "
    "verdict and a score): the model is then made to answer a JSON object of that shape, the "
    "answer is checked against it, and MCP clients receive the object as "
    "<code>structuredContent</code> with the schema declared as the tool's "
    "<code>outputSchema</code>."
)


class OutputTab(QWidget):
    """The Output section of one tool's editor.

    Args:
        ref: the edited tool.
        parent: the owning widget.

    Attributes:
        builder: the parameter builder over the tool's output schema (shown while it has one).
        add_button: "Add output schema" (shown while the tool answers text).
        remove_button: "Remove output schema" (shown while it has one).
    """

    def __init__(self, ref: ToolRef, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("outputTab")
        self.ref = ref
        self.document = ref.document

        self.none_label = QLabel(NO_OUTPUT_TEXT)
        self.none_label.setObjectName("noOutputSchema")
        self.none_label.setWordWrap(True)
        self.none_label.setTextFormat(Qt.TextFormat.RichText)
        self.add_button = QPushButton(icon("add"), "Add output schema")
        self.add_button.setObjectName("addOutputSchema")
        self.add_button.setToolTip("Make this tool answer a JSON object of a shape you declare")
        # A column of a readable width in the middle (a wrapping label given an alignment
        # would be laid out at its one-line width and cut off).
        column = QWidget()
        column.setMaximumWidth(600)
        column_layout = QVBoxLayout(column)
        column_layout.addWidget(self.none_label)
        column_layout.addSpacing(8)
        column_layout.addWidget(self.add_button, 0, Qt.AlignmentFlag.AlignLeft)
        row = QHBoxLayout()
        row.addStretch(1)
        row.addWidget(column, 3)
        row.addStretch(1)
        none_page = QWidget()
        none_layout = QVBoxLayout(none_page)
        none_layout.addStretch(1)
        none_layout.addLayout(row)
        none_layout.addStretch(2)

        self.builder = ParameterBuilder(ref, slot=OUTPUT)
        self.builder.setObjectName("outputBuilder")
        self.summary = QLabel(
            "The tool answers a JSON object of this shape (its <code>outputSchema</code>)."
        )
        self.summary.setObjectName("outputSummary")
        self.remove_button = QPushButton(icon("delete"), "Remove output schema")
        self.remove_button.setObjectName("removeOutputSchema")
        self.remove_button.setToolTip("Let the tool answer text again (one undo step)")
        schema_page = QWidget()
        schema_layout = QVBoxLayout(schema_page)
        schema_layout.setContentsMargins(0, 0, 0, 0)
        schema_layout.setSpacing(2)
        top = QHBoxLayout()
        top.setContentsMargins(4, 2, 0, 0)
        top.addWidget(self.summary, 1)
        top.addWidget(self.remove_button)
        schema_layout.addLayout(top)
        schema_layout.addWidget(self.builder, 1)

        self.pages = QStackedWidget()
        self.pages.addWidget(none_page)
        self.pages.addWidget(schema_page)
        self._none_page, self._schema_page = none_page, schema_page
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.pages)

        self.add_button.clicked.connect(self.add_schema)
        self.remove_button.clicked.connect(self.remove_schema)
        ref.changed.connect(self._on_tool_changed)
        self._show_state()

    def has_schema(self) -> bool:
        """Whether the tool declares an output schema (answers data, not text)."""
        tool = self.ref.tool()
        return tool is not None and tool.output_schema is not None

    def add_schema(self) -> bool:
        """Give the tool an output schema to build (one undo step)."""
        path, tool = self.ref.path("output_schema"), self.ref.tool()
        if path is None or tool is None or tool.output_schema is not None:
            return False
        text = f"Give {tool.name} an output schema"
        done = self.document.set_field(path, dict(STARTER_OUTPUT_SCHEMA), text=text)
        if done:
            self.builder.tree.setFocus(Qt.FocusReason.OtherFocusReason)  # Ctrl+T adds a field
        return done

    def remove_schema(self) -> bool:
        """Let the tool answer text again: the output schema leaves the file (one undo step)."""
        path, tool = self.ref.path("output_schema"), self.ref.tool()
        if path is None or tool is None or tool.output_schema is None:
            return False
        return self.document.unset_field(path, text=f"Remove the output schema of {tool.name}")

    def _on_tool_changed(self, part: FieldPath) -> None:
        if part[:1] in ((), ("output_schema",)):
            self._show_state()

    def _show_state(self) -> None:
        self.pages.setCurrentWidget(self._schema_page if self.has_schema() else self._none_page)
