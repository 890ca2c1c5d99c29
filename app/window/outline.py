"""The agent outline on the left of the main window.

One bold top-level row per open agent ("Travel Desk — travel-desk.agent.yaml *"), and under it
Agent, Model, MCP servers and Tools, with one row per tool. Several agents can be open at once in
the one window; each keeps its own rows, pages, tabs and undo history.
"""

from __future__ import annotations

from PySide6.QtCore import QModelIndex, Signal
from PySide6.QtWidgets import QAbstractItemView, QTreeView, QWidget

from app.document.agent_document import AgentDocument
from app.document.qt_models import OutlineModel, OutlineNode
from schema_types.agent import ToolDefinition

__all__ = ["OutlineView"]


class OutlineView(QTreeView):
    """A tree over :class:`~app.document.qt_models.OutlineModel`.

    Signals:
        node_selected(OutlineNode): the current row changed (mouse or keyboard).
        tool_activated(AgentDocument, ToolDefinition): Enter or double-click on a tool row.
    """

    node_selected = Signal(object)
    tool_activated = Signal(object, object)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("outline")
        self.outline = OutlineModel(self)
        self.setModel(self.outline)
        self.setHeaderHidden(True)
        self.setUniformRowHeights(True)
        self.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.setToolTip("Each open agent with its settings and tools (Enter opens a tool)")
        self.setMinimumWidth(180)
        self.selectionModel().currentChanged.connect(self._on_current_changed)
        self.activated.connect(self._on_activated)
        self.outline.rowsInserted.connect(self._on_rows_inserted)

    def add_document(self, document: AgentDocument) -> None:
        """Show ``document`` with its sections and its tools, and select its row."""
        index = self.outline.add_document(document)
        # Only the rows that have children: expanding recursively would ask the model about
        # every tool row (flags, children) and keep a persistent index for each.
        self.expand(index)
        self.expand(self.outline.index_for(document, "tools"))
        self.select(document, "agent")

    def remove_document(self, document: AgentDocument) -> None:
        """Drop ``document``'s rows."""
        self.outline.remove_document(document)

    def select(
        self, document: AgentDocument, kind: str, tool: ToolDefinition | None = None
    ) -> None:
        """Make the row for ``document``'s ``kind`` (or ``tool``) current."""
        index = self.outline.index_for(document, kind, tool)
        if index.isValid() and index != self.currentIndex():
            self.setCurrentIndex(index)
            self.scrollTo(index)

    def current_node(self) -> OutlineNode | None:
        """The node of the current row."""
        return self.outline.node(self.currentIndex())

    def _on_current_changed(self, current: QModelIndex, _previous: QModelIndex) -> None:
        node = self.outline.node(current)
        if node is not None:
            self.node_selected.emit(node)

    def _on_activated(self, index: QModelIndex) -> None:
        node = self.outline.node(index)
        if node is not None and node.kind == "tool" and node.tool is not None:
            self.tool_activated.emit(node.document, node.tool)

    def _on_rows_inserted(self, parent: QModelIndex, _first: int, _last: int) -> None:
        # New tools appear under an expanded Tools row.
        if parent.isValid():
            self.expand(parent)
