"""One tool of an open agent, followed through edits, undo, redo and reloads.

A tool editor shows one tool; its parts (fields, parameter tree, template) ask a :class:`ToolRef`
for the tool and its document path, and listen to :attr:`ToolRef.changed`, which says what of the
tool changed (a path relative to the tool). The reference has already moved to the tool's new
object and index when it emits, so no part depends on the order its slots were connected in.

How it follows the tool, from the document's :attr:`~AgentDocument.changed_at` notices:

- a notice inside the tool (``("metadata", "tools", i, …)`` with ``i`` its index): the tool's
  object was replaced; take the new one at ``i`` and say which part changed;
- a notice for the tools list or above it (a tool added, removed or moved): objects in an agent
  never change (see :mod:`app.document.agent_document`), so the same object is the same tool,
  unchanged, perhaps at another index. When it is not there (a reload replaced every object), the
  tool of the same name is taken and all of it counts as changed; when there is none, the tool is
  gone (:attr:`ToolRef.removed`) — until an undo puts that very object back.
- any other notice is not about the tool.
"""

from __future__ import annotations

from PySide6.QtCore import QObject, Signal

from app.document.agent_document import AgentDocument, FieldPath
from schema_types.agent import ToolDefinition

__all__ = ["TOOLS_PATH", "ToolRef", "changed_tool_index", "changes_tools_list"]

TOOLS_PATH: FieldPath = ("metadata", "tools")


def changes_tools_list(path: FieldPath) -> bool:
    """Whether a notice for ``path`` is about the tools list as a whole (or all of the agent):
    tools may have been added, removed or moved."""
    return len(path) <= len(TOOLS_PATH) and path == TOOLS_PATH[: len(path)]


def changed_tool_index(path: FieldPath) -> int | None:
    """The index of the one tool a notice for ``path`` is inside, else None."""
    if len(path) > len(TOOLS_PATH) and path[: len(TOOLS_PATH)] == TOOLS_PATH:
        index = path[len(TOOLS_PATH)]
        return index if isinstance(index, int) else None
    return None


class ToolRef(QObject):
    """The tool at ``index`` of ``document`` now, and wherever it goes.

    Signals:
        changed(FieldPath): part of the tool changed, e.g. ``("prompt",)``; ``()`` for all of it.
        removed: the tool left the agent (deleted, or gone after a reload).
    """

    changed = Signal(object)
    removed = Signal()

    def __init__(self, document: AgentDocument, index: int, parent: QObject | None = None) -> None:
        super().__init__(parent if parent is not None else document)
        self.document = document
        self._index: int | None = index
        self._tool = document.agent.tools[index]  # the last one it was, once it left
        document.changed_at.connect(self._on_changed_at)

    @classmethod
    def of(cls, document: AgentDocument, tool: ToolDefinition) -> ToolRef:
        """A reference to ``tool`` (an object of ``document``'s agent now)."""
        index = next(i for i, t in enumerate(document.agent.tools) if t is tool)
        return cls(document, index)

    def tool(self) -> ToolDefinition | None:
        """The tool now, or None once it left the agent."""
        return None if self._index is None else self._tool

    def index(self) -> int | None:
        """The tool's position in the agent now, or None once it left."""
        return self._index

    def path(self, *inner: str | int) -> FieldPath | None:
        """The document path of the tool (or of ``inner`` in it), None once it left."""
        return None if self._index is None else (*TOOLS_PATH, self._index, *inner)

    def _on_changed_at(self, path: FieldPath) -> None:
        tools = self.document.agent.tools
        if changes_tools_list(path):
            was = self._index
            index = next((i for i, t in enumerate(tools) if t is self._tool), None)
            if index is not None:
                self._index = index
                if was is None:
                    self.changed.emit(())  # back (an undo of its removal)
                return
            same_name = None
            if was is not None:
                same_name = next(
                    (i for i, t in enumerate(tools) if t.name == self._tool.name), None
                )
            if same_name is None:
                self._index = None
                if was is not None:
                    self.removed.emit()
                return
            self._index, self._tool = same_name, tools[same_name]
            self.changed.emit(())
        elif self._index is not None and changed_tool_index(path) == self._index:
            self._tool = tools[self._index]
            self.changed.emit(path[len(TOOLS_PATH) + 1 :])
