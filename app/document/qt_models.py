# ruff: noqa: N802  (Qt virtual method names are camelCase)
"""Qt item models over open agents: the outline tree and the tools list.

Both read the documents' agents live and hold no copies of their data: they only keep which tool
object sits in which row. A change notice inside one tool (``("metadata", "tools", i, …)``)
updates row ``i``; a notice for the tools list (a tool added, removed or moved) is matched against
the rows by object identity — objects in an agent never change, so a tool still there is the same
object — to tell views exactly which rows were inserted, removed or moved. Edits made through
them (renaming a tool, dragging it elsewhere) go through the document as undoable commands.

They are tested without any widget (``tests/app/test_qt_models.py``).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from difflib import SequenceMatcher
from typing import Any

from PySide6.QtCore import (
    QAbstractItemModel,
    QAbstractListModel,
    QMimeData,
    QModelIndex,
    QObject,
    QPersistentModelIndex,
    Qt,
)
from PySide6.QtGui import QFont, QIcon

from app.document.agent_document import AgentDocument, FieldPath, touches
from app.document.schema_health import tool_schema_health
from app.document.tool_ref import changed_tool_index, changes_tools_list
from app.icons import icon
from schema_types.agent import ToolDefinition

__all__ = [
    "KIND_ROLE",
    "SECTIONS",
    "TOOL_MIME",
    "OutlineModel",
    "OutlineNode",
    "ToolsListModel",
    "sync_rows",
    "tool_icon",
    "tool_tooltip",
]

AnyIndex = QModelIndex | QPersistentModelIndex
KIND_ROLE = Qt.ItemDataRole.UserRole + 1
TOOL_MIME = "application/x-metaagent-tool-rows"

# The outline sections under each agent, in order: (kind, label, icon).
SECTIONS = (
    ("agent", "Agent", "agent"),
    ("model", "Model", "model"),
    ("servers", "MCP servers", "servers"),
    ("tools", "Tools", "tools"),
)


def sync_rows(
    old: list[Any],
    new: Sequence[Any],
    *,
    key: Callable[[Any], object],
    make: Callable[[Any], Any],
    begin_remove: Callable[[int, int], None],
    end_remove: Callable[[], None],
    begin_insert: Callable[[int, int], None],
    end_insert: Callable[[], None],
    begin_move: Callable[[int, int, int], bool],
    end_move: Callable[[], None],
) -> None:
    """Bring the row cache ``old`` in line with ``new``, announcing each step to the views.

    One moved row becomes a move (selection follows it); other differences become removals and
    insertions. ``make`` turns an item of ``new`` into a cache entry; ``key`` identifies entries
    and items alike (object identity of the tool, say).

    Linear in the number of rows for the edits a person makes (one row added, removed or moved,
    anywhere in 4000): the rows both lists share at the start and at the end are set aside
    before anything else is compared.
    """
    old_keys = [key(entry) for entry in old]
    new_keys = [key(item) for item in new]
    if old_keys == new_keys:
        return
    first = 0
    shortest = min(len(old_keys), len(new_keys))
    while first < shortest and old_keys[first] == new_keys[first]:
        first += 1
    old_end, new_end = len(old_keys), len(new_keys)
    while old_end > first and new_end > first and old_keys[old_end - 1] == new_keys[new_end - 1]:
        old_end -= 1
        new_end -= 1
    old_mid, new_mid = old_keys[first:old_end], new_keys[first:new_end]
    last = old_end - 1
    if len(old_mid) == len(new_mid) > 1:
        # The first row of the differing stretch went to its end, or its last row to its start.
        if old_mid[1:] == new_mid[:-1] and old_mid[0] == new_mid[-1]:
            source, target = first, last
        elif old_mid[:-1] == new_mid[1:] and old_mid[-1] == new_mid[0]:
            source, target = last, first
        else:
            source = target = -1
        # Qt wants the destination in the old numbering ("insert before").
        if source >= 0 and begin_move(source, source, target + 1 if target > source else target):
            entry = old.pop(source)
            old.insert(target, entry)
            end_move()
            return
    opcodes = SequenceMatcher(a=old_mid, b=new_mid, autojunk=False).get_opcodes()
    for tag, i1, i2, j1, j2 in reversed(opcodes):
        i1, i2, j1, j2 = i1 + first, i2 + first, j1 + first, j2 + first
        if tag in ("delete", "replace"):
            begin_remove(i1, i2 - 1)
            del old[i1:i2]
            end_remove()
        if tag in ("insert", "replace"):
            begin_insert(i1, i1 + (j2 - j1) - 1)
            old[i1:i1] = [make(item) for item in new[j1:j2]]
            end_insert()


@dataclass(eq=False)
class OutlineNode:
    """One row of the outline: an agent, one of its sections, or one tool."""

    kind: str  # "document" | "agent" | "model" | "servers" | "tools" | "tool"
    document: AgentDocument
    parent: OutlineNode | None = None
    tool: ToolDefinition | None = None
    children: list[OutlineNode] = field(default_factory=lambda: list[OutlineNode]())


def tool_icon(document: AgentDocument, tool: ToolDefinition) -> QIcon:
    """A tool row's icon: ⚠ while its parameters or output schema need fixing."""
    health = tool_schema_health(document)
    unsound = health.problems(tool) or health.output_problems(tool)
    return icon("warning" if unsound else "tool")


def tool_tooltip(document: AgentDocument, tool: ToolDefinition) -> str:
    """A tool row's tooltip: its description, and what to fix first when its parameters (or else
    its output schema) are unsound (the tool's editor lists every problem)."""
    description = tool.description or "No description yet"
    health = tool_schema_health(document)
    problems, what = health.problems(tool), "parameters need"
    if not problems:
        problems, what = health.output_problems(tool), "output schema needs"
    if not problems:
        return description
    more = f" (and {len(problems) - 1} more)" if len(problems) > 1 else ""
    first = problems[0]
    where = f"{first.path}: " if first.path else ""
    return (
        f"⚠ The {what} fixing before the agent can be served — {where}"
        f"{first.message}{more}\n\n{description}"
    )


class OutlineModel(QAbstractItemModel):
    """The outline: one top-level row per open agent, with Agent, Model, MCP servers and Tools
    under it and one row per tool under Tools."""

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._roots: list[OutlineNode] = []
        self._slots: dict[int, list[tuple[Any, Callable[..., None]]]] = {}

    # -- documents ---------------------------------------------------------------------------

    def documents(self) -> list[AgentDocument]:
        """The open documents, in outline order."""
        return [root.document for root in self._roots]

    def add_document(self, document: AgentDocument) -> QModelIndex:
        """Show ``document`` as a new top-level row; returns its index."""
        root = OutlineNode("document", document)
        for kind, _label, _icon in SECTIONS:
            root.children.append(OutlineNode(kind, document, root))
        tools_node = root.children[3]
        tools_node.children = [
            OutlineNode("tool", document, tools_node, t) for t in document.agent.tools
        ]
        row = len(self._roots)
        self.beginInsertRows(QModelIndex(), row, row)
        self._roots.append(root)
        self.endInsertRows()

        def on_changed_at(path: FieldPath) -> None:
            self._on_changed_at(root, path)

        def on_file_changed(*_args: object) -> None:
            self._emit_rows(root, [])

        def on_health_changed() -> None:
            self._emit_rows(root, [], tools=True)

        health = tool_schema_health(document)
        slots: list[tuple[Any, Callable[..., None]]] = [
            (document.changed_at, on_changed_at),
            (document.dirty_changed, on_file_changed),
            (document.path_changed, on_file_changed),
            (health.changed, on_health_changed),
        ]
        for signal, slot in slots:
            signal.connect(slot)
        self._slots[id(root)] = slots
        return self.index(row, 0)

    def remove_document(self, document: AgentDocument) -> None:
        """Drop ``document``'s rows."""
        for row, root in enumerate(self._roots):
            if root.document is document:
                self.beginRemoveRows(QModelIndex(), row, row)
                del self._roots[row]
                self.endRemoveRows()
                for signal, slot in self._slots.pop(id(root), []):
                    try:
                        signal.disconnect(slot)
                    except (RuntimeError, TypeError):
                        pass
                return

    def index_for(
        self, document: AgentDocument, kind: str = "document", tool: ToolDefinition | None = None
    ) -> QModelIndex:
        """The index of ``document``'s row, one of its sections, or one of its tools."""
        for row, root in enumerate(self._roots):
            if root.document is not document:
                continue
            root_index = self.index(row, 0)
            if kind == "document":
                return root_index
            for section_row, section in enumerate(root.children):
                if section.kind == kind:
                    return self.index(section_row, 0, root_index)
                if kind == "tool" and section.kind == "tools":
                    for tool_row, node in enumerate(section.children):
                        if node.tool is tool:
                            return self.index(tool_row, 0, self.index(section_row, 0, root_index))
        return QModelIndex()

    def node(self, index: AnyIndex) -> OutlineNode | None:
        """The node behind ``index`` (None for the invisible root)."""
        if not index.isValid():
            return None
        node = index.internalPointer()
        return node if isinstance(node, OutlineNode) else None

    def _on_changed_at(self, root: OutlineNode, path: FieldPath) -> None:
        if root not in self._roots:
            return
        tools_node = root.children[3]
        tools = root.document.agent.tools
        sections = [
            kind
            for kind, watched in (
                ("agent", ("metadata", "name")),
                ("model", ("settings", "model")),
                ("servers", ("mcp_servers",)),
            )
            if touches(path, watched)
        ]
        row = changed_tool_index(path)
        if row is not None:
            tools_node.children[row].tool = tools[row]
            self._emit_rows(root, sections, tool_rows=(row, row))
        elif changes_tools_list(path):
            self._sync_tools(root)
            self._emit_rows(root, [*sections, "tools"])
        elif sections:
            self._emit_rows(root, sections)

    def _sync_tools(self, root: OutlineNode) -> None:
        tools_node = root.children[3]
        tools_index = self.index(3, 0, self.index(self._roots.index(root), 0))

        def begin_move(first: int, last: int, destination: int) -> bool:
            return self.beginMoveRows(tools_index, first, last, tools_index, destination)

        sync_rows(
            tools_node.children,
            root.document.agent.tools,
            key=lambda x: id(x.tool) if isinstance(x, OutlineNode) else id(x),
            make=lambda t: OutlineNode("tool", root.document, tools_node, t),
            begin_remove=lambda a, b: self.beginRemoveRows(tools_index, a, b),
            end_remove=self.endRemoveRows,
            begin_insert=lambda a, b: self.beginInsertRows(tools_index, a, b),
            end_insert=self.endInsertRows,
            begin_move=begin_move,
            end_move=self.endMoveRows,
        )

    def _emit_rows(
        self,
        root: OutlineNode,
        sections: Sequence[str],
        *,
        tools: bool = False,
        tool_rows: tuple[int, int] | None = None,
    ) -> None:
        """Say that ``root``'s row (its label: name, file, dirty), the ``sections`` rows and
        the tool rows (all of them with ``tools``, else ``tool_rows``) may show something new."""
        if root not in self._roots:
            return
        root_index = self.index(self._roots.index(root), 0)
        self.dataChanged.emit(root_index, root_index)
        for row, (kind, _label, _icon) in enumerate(SECTIONS):
            if kind in sections:
                section = self.index(row, 0, root_index)
                self.dataChanged.emit(section, section)
        count = len(root.children[3].children)
        if tools and count:
            tool_rows = (0, count - 1)
        if tool_rows is not None:
            tools_index = self.index(3, 0, root_index)
            first, last = tool_rows
            self.dataChanged.emit(
                self.index(first, 0, tools_index), self.index(last, 0, tools_index)
            )

    # -- QAbstractItemModel ------------------------------------------------------------------

    def index(self, row: int, column: int, parent: AnyIndex = QModelIndex()) -> QModelIndex:  # noqa: B008
        siblings = self._children_of(parent)
        if column != 0 or not 0 <= row < len(siblings):
            return QModelIndex()
        return self.createIndex(row, 0, siblings[row])

    def parent(self, index: AnyIndex = QModelIndex()) -> QModelIndex:  # type: ignore[override]  # noqa: B008
        node = self.node(index)
        if node is None or node.parent is None:
            return QModelIndex()
        up = node.parent
        siblings = self._roots if up.parent is None else up.parent.children
        return self.createIndex(siblings.index(up), 0, up)

    def rowCount(self, parent: AnyIndex = QModelIndex()) -> int:  # noqa: B008
        return len(self._children_of(parent))

    def columnCount(self, parent: AnyIndex = QModelIndex()) -> int:  # noqa: B008
        return 1

    def flags(self, index: AnyIndex) -> Qt.ItemFlag:
        flags = super().flags(index)
        node = self.node(index)
        if node is not None and node.kind not in ("document", "tools"):
            flags |= Qt.ItemFlag.ItemNeverHasChildren  # the view skips asking for children
        return flags

    def hasChildren(self, parent: AnyIndex = QModelIndex()) -> bool:  # noqa: B008
        return bool(self._children_of(parent))

    def _children_of(self, parent: AnyIndex) -> list[OutlineNode]:
        if not parent.isValid():
            return self._roots
        node = self.node(parent)
        return node.children if node is not None else []

    def data(self, index: AnyIndex, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        node = self.node(index)
        if node is None:
            return None
        if role == KIND_ROLE:
            return node.kind
        if role == Qt.ItemDataRole.DisplayRole:
            return self._label(node)
        if role == Qt.ItemDataRole.ToolTipRole:
            return self._tooltip(node)
        if role == Qt.ItemDataRole.DecorationRole:
            if node.tool is not None:
                return tool_icon(node.document, node.tool)
            names = {kind: name for kind, _label, name in SECTIONS}
            names.update(document="agent", tool="tool")
            return icon(names[node.kind])
        if role == Qt.ItemDataRole.FontRole and node.kind == "document":
            font = QFont()
            font.setBold(True)
            return font
        return None

    def _label(self, node: OutlineNode) -> str:
        agent = node.document.agent
        if node.kind == "document":
            name = agent.metadata.name or "Untitled agent"
            label = name
            if node.document.path is not None:
                label = f"{name} — {node.document.path.name}"
            return label + (" *" if node.document.is_dirty() else "")
        if node.kind == "tool" and node.tool is not None:
            return node.tool.name
        label = next(label for kind, label, _ in SECTIONS if kind == node.kind)
        if node.kind == "servers":
            return f"{label} ({len(agent.mcp_servers)})"
        if node.kind == "tools":
            return f"{label} ({len(agent.tools)})"
        if node.kind == "model" and agent.settings.model:
            return f"{label} — {agent.settings.model}"
        return label

    def _tooltip(self, node: OutlineNode) -> str:
        if node.kind == "document":
            where = str(node.document.path) if node.document.path else "not saved yet"
            marker = " (unsaved changes)" if node.document.is_dirty() else ""
            return f"{where}{marker}"
        if node.kind == "tool" and node.tool is not None:
            return tool_tooltip(node.document, node.tool)
        return {
            "agent": "Name, version, MCP instructions, mode and system prompt",
            "model": "Which LLM answers, its parameters and limits",
            "servers": "MCP servers this agent uses itself",
            "tools": "The tools this agent serves (double-click a tool to edit it)",
        }[node.kind]


class ToolsListModel(QAbstractListModel):
    """The tools of one agent as an editable, reorderable list (rename in place, drag to move)."""

    def __init__(self, document: AgentDocument, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.document = document
        self._tools: list[ToolDefinition] = list(document.agent.tools)
        document.changed_at.connect(self._on_changed_at)
        tool_schema_health(document).changed.connect(self._on_health_changed)

    def tool(self, row: int) -> ToolDefinition | None:
        """The tool in ``row``."""
        return self._tools[row] if 0 <= row < len(self._tools) else None

    def row_of(self, tool: ToolDefinition) -> int:
        """The row of ``tool`` (by identity), or -1."""
        return next((row for row, t in enumerate(self._tools) if t is tool), -1)

    def _on_changed_at(self, path: FieldPath) -> None:
        row = changed_tool_index(path)
        if row is not None:
            self._tools[row] = self.document.agent.tools[row]
            self.dataChanged.emit(self.index(row, 0), self.index(row, 0))
        elif changes_tools_list(path):
            self._sync()

    def _on_health_changed(self) -> None:
        if self._tools:
            self.dataChanged.emit(self.index(0, 0), self.index(len(self._tools) - 1, 0))

    def _sync(self) -> None:
        root = QModelIndex()
        sync_rows(
            self._tools,
            self.document.agent.tools,
            key=id,
            make=lambda t: t,
            begin_remove=lambda a, b: self.beginRemoveRows(root, a, b),
            end_remove=self.endRemoveRows,
            begin_insert=lambda a, b: self.beginInsertRows(root, a, b),
            end_insert=self.endInsertRows,
            begin_move=lambda a, b, d: self.beginMoveRows(root, a, b, root, d),
            end_move=self.endMoveRows,
        )

    def rowCount(self, parent: AnyIndex = QModelIndex()) -> int:  # noqa: B008
        return 0 if parent.isValid() else len(self._tools)

    def data(self, index: AnyIndex, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        tool = self.tool(index.row()) if index.isValid() else None
        if tool is None:
            return None
        if role in (Qt.ItemDataRole.DisplayRole, Qt.ItemDataRole.EditRole):
            return tool.name
        if role == Qt.ItemDataRole.ToolTipRole:
            return tool_tooltip(self.document, tool)
        if role == Qt.ItemDataRole.DecorationRole:
            return tool_icon(self.document, tool)
        return None

    def setData(self, index: AnyIndex, value: Any, role: int = Qt.ItemDataRole.EditRole) -> bool:
        """Rename the tool (validated by the agent model; a refusal is reported)."""
        if role != Qt.ItemDataRole.EditRole or not index.isValid():
            return False
        tool = self.tool(index.row())
        if tool is None:
            return False
        new_name = str(value).strip()
        if new_name == tool.name:
            return True
        return self.document.set_field(
            ("metadata", "tools", index.row(), "name"),
            new_name,
            text=f"Rename tool {tool.name} to {new_name}",
        )

    def flags(self, index: AnyIndex) -> Qt.ItemFlag:
        base = Qt.ItemFlag.ItemIsDropEnabled
        if not index.isValid():
            return base
        return (
            base
            | Qt.ItemFlag.ItemIsSelectable
            | Qt.ItemFlag.ItemIsEnabled
            | Qt.ItemFlag.ItemIsEditable
            | Qt.ItemFlag.ItemIsDragEnabled
        )

    # -- reorder (drag and drop, keyboard) ---------------------------------------------------

    def move_tool(self, source: int, target: int) -> bool:
        """Move the tool in row ``source`` so it ends up in row ``target`` (undoable)."""
        if (
            source == target
            or not (0 <= source < len(self._tools))
            or not (0 <= target < len(self._tools))
        ):
            return False
        name = self._tools[source].name
        return self.document.move_item(
            ("metadata", "tools", source), target, text=f"Move tool {name}"
        )

    def moveRows(
        self,
        source_parent: AnyIndex,
        source_row: int,
        count: int,
        destination_parent: AnyIndex,
        destination_child: int,
    ) -> bool:
        """Qt's move (destination is "insert before" in the old numbering); one row at a time."""
        if count != 1 or source_parent.isValid() or destination_parent.isValid():
            return False
        target = destination_child - 1 if destination_child > source_row else destination_child
        return self.move_tool(source_row, target)

    def supportedDropActions(self) -> Qt.DropAction:
        return Qt.DropAction.MoveAction

    def mimeTypes(self) -> list[str]:
        return [TOOL_MIME]

    def mimeData(self, indexes: Sequence[QModelIndex]) -> QMimeData:
        data = QMimeData()
        rows = sorted({i.row() for i in indexes if i.isValid()})
        data.setData(TOOL_MIME, json.dumps({"document": id(self.document), "rows": rows}).encode())
        return data

    def dropMimeData(
        self, data: QMimeData, action: Qt.DropAction, row: int, column: int, parent: AnyIndex
    ) -> bool:
        """Drop dragged rows before ``row`` (or at the end); only within the same agent."""
        if action != Qt.DropAction.MoveAction or not data.hasFormat(TOOL_MIME):
            return False
        payload = json.loads(bytes(data.data(TOOL_MIME).data()).decode())
        if payload.get("document") != id(self.document) or len(payload.get("rows", [])) != 1:
            return False
        if row < 0:
            row = parent.row() if parent.isValid() else len(self._tools)
        return self.moveRows(QModelIndex(), int(payload["rows"][0]), 1, QModelIndex(), row)
