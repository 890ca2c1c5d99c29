"""The tab that edits one tool (name and description for now).

The main window builds tool tabs through :func:`create_tool_tab` only, so the full tool editor
(parameter builder, template editor) can replace :class:`ToolTab` here without touching the
window. A tool tab must provide: ``document``, ``tool`` (the ``ToolDefinition`` it edits, tracked
by identity), the ``title_changed(str)`` and ``tool_removed()`` signals.
"""

from __future__ import annotations

from PySide6.QtCore import Signal
from PySide6.QtWidgets import (
    QFormLayout,
    QLabel,
    QLineEdit,
    QPlainTextEdit,
    QVBoxLayout,
    QWidget,
)

from app.document import AgentDocument, FieldPath
from app.pages import TextEditBinding
from schema_types._agent import ToolDefinition

__all__ = ["ToolTab", "create_tool_tab"]


class ToolTab(QWidget):
    """Name (validated, MCP-safe, unique) and description of one tool."""

    title_changed = Signal(str)
    tool_removed = Signal()

    def __init__(
        self, document: AgentDocument, tool: ToolDefinition, parent: QWidget | None = None
    ) -> None:
        super().__init__(parent)
        self.document = document
        self.tool = tool
        self._title = tool.name

        self.name_edit = QLineEdit(tool.name)
        self.name_edit.setObjectName("toolName")
        self.name_edit.setToolTip(
            "The MCP tool name clients call: 1 to 128 letters, digits, '_', '-' or '.', unique "
            "in this agent. Press Enter to rename."
        )
        self.name_problem = QLabel()
        self.name_problem.setObjectName("toolNameProblem")
        self.name_problem.setWordWrap(True)
        self.name_problem.hide()
        self.description_edit = QPlainTextEdit()
        self.description_edit.setObjectName("toolDescription")
        self.description_edit.setTabChangesFocus(True)
        self.description_edit.setPlaceholderText("What the tool does, for the calling model.")
        self.description_edit.setToolTip(
            "Sent to MCP clients with the tool: the calling model decides from it when to use it."
        )

        form = QFormLayout()
        form.setFieldGrowthPolicy(QFormLayout.FieldGrowthPolicy.AllNonFixedFieldsGrow)
        name_label = QLabel("&Name:")
        name_label.setBuddy(self.name_edit)
        description_label = QLabel("&Description:")
        description_label.setBuddy(self.description_edit)
        form.addRow(name_label, self.name_edit)
        form.addRow("", self.name_problem)
        form.addRow(description_label, self.description_edit)
        note = QLabel("Parameters and the prompt template are edited in the full tool editor.")
        note.setEnabled(False)
        note.setWordWrap(True)
        layout = QVBoxLayout(self)
        layout.addLayout(form)
        layout.addWidget(note)
        layout.addStretch(1)

        self.name_edit.textEdited.connect(self._on_name_edited)
        self.name_edit.editingFinished.connect(self._on_name_committed)
        self.description_binding = TextEditBinding(
            document, self.description_edit, lambda: self._field("description"), "description"
        )
        document.changed.connect(self._on_document_changed)

    def title(self) -> str:
        """The tab title: the tool's name."""
        return self._title

    def index(self) -> int | None:
        """The tool's position in the agent, or None when it was deleted."""
        return next((i for i, t in enumerate(self.document.agent.tools) if t is self.tool), None)

    def _field(self, name: str) -> FieldPath | None:
        index = self.index()
        return None if index is None else ("metadata", "tools", index, name)

    def _on_name_edited(self, text: str) -> None:
        path = self._field("name")
        problem = (
            None
            if path is None or text == self.tool.name
            else (self.document.validate_field(path, text))
        )
        self.name_problem.setText(problem or "")
        self.name_problem.setVisible(bool(problem))

    def _on_name_committed(self) -> None:
        path = self._field("name")
        text = self.name_edit.text().strip()
        if path is None or text == self.tool.name:
            return
        if not self.document.set_field(path, text, text=f"Rename tool {self.tool.name} to {text}"):
            self.name_edit.setText(self.tool.name)
        self.name_problem.hide()

    def _on_document_changed(self) -> None:
        if self.index() is None:
            # A reload replaces every object: follow the tool by name if it is still there.
            same_name = self.document.agent.metadata.tool(self.tool.name)
            if same_name is None:
                self.tool_removed.emit()
                return
            self.tool = same_name
            self.description_binding.refresh()
        if not self.name_edit.hasFocus() and self.name_edit.text() != self.tool.name:
            self.name_edit.setText(self.tool.name)
        if self.tool.name != self._title:
            self._title = self.tool.name
            self.title_changed.emit(self._title)


def create_tool_tab(
    document: AgentDocument, tool: ToolDefinition, parent: QWidget | None = None
) -> QWidget:
    """The widget the main window shows in a tab for ``tool``."""
    return ToolTab(document, tool, parent)
