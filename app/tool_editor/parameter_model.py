# ruff: noqa: N802  (Qt virtual method names are camelCase)
"""The parameter tree: a Qt item model over one tool's parameters schema (or output schema).

Rows are the schema's nodes (``schema_types.schema.nodes`` typed nodes, rebuilt whenever the tool's
``parameters`` dict changes): an object shows its properties as children, an array its item
schema. Columns: name, type, required, description.

The model holds no truth of its own. Every edit (add, delete, duplicate, rename, move, required,
any keyword, type) computes a new ``parameters`` dict with :mod:`.parameter_edits`, checks it with
``parameters_from_json`` and sets it as ONE undoable edit on the document; the rebuild that follows
the tool's notice that its ``parameters`` changed keeps views' expansion and selection by node
path (persistent indexes are re-pointed, a renamed node keeps its place).

The same model edits the tool's ``output_schema`` when given that
:class:`~app.tool_editor.schema_slot.SchemaSlot`; ``parameters()`` is then None while the tool has
none. Problems are the slot's check's (``check_parameters_schema`` by default):
:meth:`node_problems` for one node (cheap, for the property panel) and :meth:`schema_problems`
for the whole schema (computed once per change, a moment after it, since it costs ~60 ms on a
300-property schema).
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

from PySide6.QtCore import (
    QAbstractItemModel,
    QMimeData,
    QModelIndex,
    QObject,
    QPersistentModelIndex,
    Qt,
    QTimer,
    Signal,
)
from PySide6.QtGui import QFont

from app.document.agent_document import FieldPath
from app.document.tool_ref import ToolRef
from app.icons import icon
from app.tool_editor import parameter_edits as edits
from app.tool_editor.parameter_actions import ParameterActions
from app.tool_editor.parameter_edits import NodePath
from app.tool_editor.parameter_problems import node_problems
from app.tool_editor.schema_slot import PARAMETERS, SchemaSlot
from schema_types.agent import ToolDefinition
from schema_types.agent_checks import parse_path
from schema_types.errors import Problem, SchemaDefinitionError
from schema_types.schema.nodes import ArraySchema, ObjectSchema, RawSchema, parameters_from_json

__all__ = ["COLUMNS", "NODE_PATH_ROLE", "PARAMETER_MIME", "ParameterTreeModel", "type_label"]

AnyIndex = QModelIndex | QPersistentModelIndex
NODE_PATH_ROLE = Qt.ItemDataRole.UserRole + 1
PARAMETER_MIME = "application/x-metaagent-parameter"
COLUMNS = ("Name", "Type", "Required", "Description")
NAME, TYPE, REQUIRED, DESCRIPTION = range(4)


@dataclass(eq=False)
class _Item:
    id: int
    path: NodePath
    node: Any  # a typed schema node, a RawSchema or a boolean schema
    parent: _Item | None
    row: int = 0
    children: list[_Item] = field(default_factory=lambda: list[_Item]())


def type_label(node: Any) -> str:
    """What the type column shows: ``string (date, enum)``, ``array of object``, ``any``…"""
    if isinstance(node, bool):
        return "any" if node else "nothing"
    if isinstance(node, RawSchema):
        kind = node.data.get("type")
        if isinstance(kind, list):
            return " | ".join(str(k) for k in kind)
        keywords = ("anyOf", "oneOf", "allOf", "$ref", "const")
        found = next((k for k in keywords if k in node.data), "")
        return found or (str(kind) if kind else "any")
    notes = [node.format] if getattr(node, "format", None) else []
    if node.enum is not None:
        notes.append("enum")
    label = str(node.type)
    if isinstance(node, ArraySchema) and node.items is not None:
        label = f"array of {type_label(node.items)}"
    return f"{label} ({', '.join(notes)})" if notes else label


class ParameterTreeModel(ParameterActions, QAbstractItemModel):
    """The parameters of the tool ``ref`` follows, as an editable tree."""

    refreshed = Signal()  # the tree was rebuilt from a changed parameters dict
    problems_changed = Signal()  # schema_problems() was recomputed
    renamed = Signal(object, object)  # (old node path, new node path) after a person's rename

    def __init__(
        self, ref: ToolRef, parent: QObject | None = None, *, slot: SchemaSlot = PARAMETERS
    ) -> None:
        super().__init__(parent)
        self.ref = ref
        self.slot = slot
        self.document = ref.document
        self._ids: dict[NodePath, int] = {}
        self._items: dict[int, _Item] = {}
        self.root_error: str | None = None
        self._problems: list[Problem] | None = None
        self._problem_nodes: dict[NodePath, list[str]] = {}
        self._node_problems: dict[NodePath, list[tuple[str, str]]] = {}
        self._renamed: tuple[NodePath, NodePath] | None = None
        self._problem_timer = QTimer(self)
        self._problem_timer.setSingleShot(True)
        self._problem_timer.setInterval(250)
        self._problem_timer.timeout.connect(self._update_problems)
        self._params: Any = self._current_params()
        self._root, self._items = self._build(self._params)
        if self._params is not None:
            self._problem_timer.start()
        ref.changed.connect(self._on_tool_changed)
        ref.removed.connect(lambda: self._rebuild(None))

    # -- reading -------------------------------------------------------------------------------

    def tool(self) -> ToolDefinition | None:
        """The edited tool (None when it was deleted)."""
        return self.ref.tool()

    def parameters(self) -> dict[str, Any] | None:
        """The edited schema dict as the document holds it (None: no tool, or no output
        schema)."""
        tool = self.tool()
        return getattr(tool, self.slot.field) if tool is not None else None

    def node_json(self, path: NodePath) -> Any:
        """The JSON of the node at ``path`` (a dict or a boolean), None when there is none."""
        return edits.node_at(self.parameters(), path)

    def node(self, path: NodePath) -> Any:
        """The typed node at ``path`` (None when there is none)."""
        item = self._item_at(path)
        return item.node if item is not None else None

    def row_of(self, path: NodePath) -> int | None:
        """The node's row under its parent (None for the root or a missing node)."""
        item = self._item_at(path)
        return item.row if item is not None and item.parent is not None else None

    def child_count(self, path: NodePath) -> int:
        """How many rows the node at ``path`` has under it."""
        item = self._item_at(path)
        return len(item.children) if item is not None else 0

    def is_required(self, path: NodePath) -> bool:
        """Whether property ``path`` is in its object's ``required``."""
        item = self._item_at(path)
        return item is not None and self._is_required(item)

    def _on_renamed(self, old_path: NodePath, new_path: NodePath) -> None:
        self.renamed.emit(old_path, new_path)

    def paths(self) -> list[NodePath]:
        """Every node path in the tree, depth first, in row order (the root not included)."""
        return [item.path for item in self._walk(self._root)][1:]

    def index_for_path(self, path: NodePath, column: int = NAME) -> QModelIndex:
        """The index of the node at ``path`` (invalid for the root or a missing node)."""
        item = self._item_at(path)
        if item is None or item is self._root:
            return QModelIndex()
        return self.createIndex(item.row, column, item.id)

    def path_for_index(self, index: AnyIndex) -> NodePath | None:
        """The node path of ``index`` (``()`` for the invalid root index)."""
        if not index.isValid():
            return ()
        item = self._item(index)
        return item.path if item is not None else None

    def _item(self, index: AnyIndex) -> _Item | None:
        if not index.isValid() or index.model() is not self:
            return self._root if not index.isValid() else None
        return self._items.get(index.internalId())

    def _item_at(self, path: NodePath) -> _Item | None:
        item = self._items.get(self._ids.get(path, -1))
        return item if item is not None and item.path == path else None

    def _walk(self, item: _Item) -> Iterator[_Item]:
        yield item
        for child in item.children:
            yield from self._walk(child)

    # -- problems ------------------------------------------------------------------------------

    def schema_problems(self) -> list[Problem]:
        """The slot's check's problems of the whole schema (cached per change)."""
        if self._problems is None:
            params = self.parameters()
            self._problems = self.slot.check(params) if params is not None else []
            self._problem_nodes = {}
            for problem in self._problems:
                self._problem_nodes.setdefault(self._owner(problem.path), []).append(str(problem))
        return self._problems

    def known_schema_problems(self) -> list[Problem] | None:
        """:meth:`schema_problems` when already computed for the current parameters, else None
        (without computing them: that waits for the debounce timer)."""
        return self._problems

    def _owner(self, problem_path: str) -> NodePath:
        """The deepest tree node a problem's JSON path lies in."""
        parts = tuple(str(p) for p in parse_path(problem_path))
        for end in range(len(parts), 0, -1):
            if self._item_at(parts[:end]) is not None:
                return parts[:end]
        return ()

    def problems_at(self, path: NodePath) -> list[str]:
        """The whole-schema problems that lie in the node at ``path`` itself."""
        self.schema_problems()
        return self._problem_nodes.get(path, [])

    def node_problems(self, path: NodePath) -> list[tuple[str, str]]:
        """Problems of the node's own keywords (see :func:`.parameter_problems.node_problems`),
        cached until the parameters change."""
        cached = self._node_problems.get(path)
        if cached is None:
            cached = self._node_problems[path] = node_problems(self.node_json(path), path)
        return cached

    def _update_problems(self) -> None:
        self.schema_problems()
        self._emit_all_changed((Qt.ItemDataRole.DecorationRole, Qt.ItemDataRole.ToolTipRole))
        self.problems_changed.emit()

    # -- following the document ----------------------------------------------------------------

    def _current_params(self) -> Any:
        return self.parameters()

    def _on_tool_changed(self, part: FieldPath) -> None:
        if part[:1] in ((), (self.slot.field,)):
            self._rebuild(self._current_params())

    def _build(self, params: Any) -> tuple[_Item, dict[int, _Item]]:
        """The rows of ``params`` (not installed yet: views may still ask about the old ones)."""
        self.root_error = None
        root_node: Any = None
        if params is not None:
            try:
                root_node = parameters_from_json(params)
            except SchemaDefinitionError as exc:
                self.root_error = str(exc)
        items: dict[int, _Item] = {}

        def make(path: NodePath, node: Any, parent: _Item | None, row: int) -> _Item:
            item_id = self._ids.setdefault(path, len(self._ids) + 1)
            item = _Item(item_id, path, node, parent, row)
            items[item_id] = item
            children: list[tuple[NodePath, Any]] = []
            if isinstance(node, ObjectSchema):
                props = node.properties or {}
                children = [((*path, "properties", name), sub) for name, sub in props.items()]
            elif isinstance(node, ArraySchema) and node.items is not None:
                children = [((*path, "items"), node.items)]
            item.children = [make(p, n, item, r) for r, (p, n) in enumerate(children)]
            return item

        return make((), root_node, None, 0), items

    def _rebuild(self, params: Any) -> None:
        old_root, old_items = self._root, self._items
        new_root, new_items = self._build(params)
        self._params = params
        self._problems = None
        self._node_problems = {}
        if _shape(old_root) == _shape(new_root):
            # Same rows: keep the row objects (views' indexes stay good), take the new nodes.
            for old, new in zip(self._walk(old_root), self._walk(new_root), strict=True):
                old.node = new.node
            self._emit_all_changed(())
        else:
            self.layoutAboutToBeChanged.emit()
            before = self.persistentIndexList()
            self._root, self._items = new_root, new_items
            after = [self._moved(index, old_items) for index in before]
            self.changePersistentIndexList(before, after)
            self.layoutChanged.emit()
        self._renamed = None
        self.refreshed.emit()
        if params is not None:
            self._problem_timer.start()

    def _moved(self, index: QModelIndex, old_items: dict[int, _Item]) -> QModelIndex:
        """Where a persistent index points after a rebuild: the same path, a renamed node's new
        path, or (a rename undone elsewhere) the node in the same place among as many siblings."""
        old = old_items.get(index.internalId())
        if old is None:
            return QModelIndex()
        path = old.path
        if self._renamed is not None:
            before, after = self._renamed
            if path[: len(before)] == before:
                path = after + path[len(before) :]
        item = self._item_at(path)
        if item is None:
            item = self._same_place(old)
        if item is None or item is self._root:
            return QModelIndex()
        return self.createIndex(item.row, index.column(), item.id)

    def _same_place(self, old: _Item) -> _Item | None:
        chain: list[_Item] = []
        step: _Item | None = old
        while step is not None and step.parent is not None:
            chain.append(step)
            step = step.parent
        here = self._root
        for old_step in reversed(chain):
            assert old_step.parent is not None
            found = next((c for c in here.children if c.path[-1:] == old_step.path[-1:]), None)
            if found is None and len(here.children) == len(old_step.parent.children):
                found = here.children[old_step.row]
            if found is None:
                return None
            here = found
        return here

    def _emit_all_changed(self, roles: Sequence[Qt.ItemDataRole]) -> None:
        for item in self._walk(self._root):
            if item.children:
                parent = QModelIndex() if item is self._root else self._index(item)
                last = len(item.children) - 1
                self.dataChanged.emit(
                    self.index(0, 0, parent), self.index(last, len(COLUMNS) - 1, parent), roles
                )

    def _index(self, item: _Item, column: int = NAME) -> QModelIndex:
        return self.createIndex(item.row, column, item.id)

    # -- Qt model interface --------------------------------------------------------------------

    def index(self, row: int, column: int, parent: AnyIndex = QModelIndex()) -> QModelIndex:  # noqa: B008
        item = self._item(parent)
        if item is None or not (0 <= row < len(item.children)) or not 0 <= column < len(COLUMNS):
            return QModelIndex()
        return self.createIndex(row, column, item.children[row].id)

    def parent(self, index: AnyIndex = QModelIndex()) -> QModelIndex:  # type: ignore[override]  # noqa: B008
        item = self._item(index) if index.isValid() else None
        if item is None or item.parent is None or item.parent is self._root:
            return QModelIndex()
        return self._index(item.parent)

    def rowCount(self, parent: AnyIndex = QModelIndex()) -> int:  # noqa: B008
        if parent.isValid() and parent.column() != NAME:
            return 0
        item = self._item(parent)
        return len(item.children) if item is not None else 0

    def columnCount(self, parent: AnyIndex = QModelIndex()) -> int:  # noqa: B008
        return len(COLUMNS)

    def headerData(
        self, section: int, orientation: Qt.Orientation, role: int = Qt.ItemDataRole.DisplayRole
    ) -> Any:
        if orientation == Qt.Orientation.Horizontal and role == Qt.ItemDataRole.DisplayRole:
            return COLUMNS[section] if 0 <= section < len(COLUMNS) else None
        return None

    def data(self, index: AnyIndex, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        item = self._item(index) if index.isValid() else None
        if item is None:
            return None
        column, node, is_property = index.column(), item.node, edits.is_property(item.path)
        if role == NODE_PATH_ROLE:
            return item.path
        if column == NAME:
            if role in (Qt.ItemDataRole.DisplayRole, Qt.ItemDataRole.EditRole):
                return item.path[-1] if is_property else "items"
            if role == Qt.ItemDataRole.FontRole and not is_property:
                font = QFont()
                font.setItalic(True)
                return font
            if role == Qt.ItemDataRole.DecorationRole and self._flagged(item.path):
                return icon("warning")
            if role == Qt.ItemDataRole.ToolTipRole:
                problems = self._problem_nodes.get(item.path) if self._problems else None
                if problems:
                    return "\n".join(problems)
                return None if is_property else "The schema of each item of the array"
        elif column == TYPE and role == Qt.ItemDataRole.DisplayRole:
            return type_label(node)
        elif column == REQUIRED and role == Qt.ItemDataRole.CheckStateRole and is_property:
            required = self._is_required(item)
            return Qt.CheckState.Checked if required else Qt.CheckState.Unchecked
        elif column == DESCRIPTION and role in (
            Qt.ItemDataRole.DisplayRole,
            Qt.ItemDataRole.ToolTipRole,
        ):
            text = getattr(node, "description", None) or getattr(node, "title", None) or ""
            return text.splitlines()[0] if role == Qt.ItemDataRole.DisplayRole and text else text
        return None

    def _flagged(self, path: NodePath) -> bool:
        return self._problems is not None and path in self._problem_nodes

    def _is_required(self, item: _Item) -> bool:
        owner = item.parent.node if item.parent is not None else None
        return isinstance(owner, ObjectSchema) and owner.is_required(item.path[-1])

    def setData(self, index: AnyIndex, value: Any, role: int = Qt.ItemDataRole.EditRole) -> bool:
        """Rename (name column) or set required (check box); each is one undoable edit."""
        path = self.path_for_index(index)
        if not path or not edits.is_property(path):
            return False
        if index.column() == NAME and role == Qt.ItemDataRole.EditRole:
            return self.rename(path, str(value).strip())
        if index.column() == REQUIRED and role == Qt.ItemDataRole.CheckStateRole:
            checked = Qt.CheckState(value) == Qt.CheckState.Checked
            return self.set_required(path, checked)
        return False

    def flags(self, index: AnyIndex) -> Qt.ItemFlag:
        if not index.isValid():
            return Qt.ItemFlag.ItemIsDropEnabled
        item = self._item(index)
        if item is None:
            return Qt.ItemFlag.NoItemFlags
        flags = Qt.ItemFlag.ItemIsSelectable | Qt.ItemFlag.ItemIsEnabled
        if edits.is_property(item.path):
            flags |= Qt.ItemFlag.ItemIsDragEnabled
            if index.column() == NAME:
                flags |= Qt.ItemFlag.ItemIsEditable
            elif index.column() == REQUIRED:
                flags |= Qt.ItemFlag.ItemIsUserCheckable
        if isinstance(item.node, ObjectSchema):
            flags |= Qt.ItemFlag.ItemIsDropEnabled
        return flags

    # -- drag and drop -------------------------------------------------------------------------

    def supportedDropActions(self) -> Qt.DropAction:
        return Qt.DropAction.MoveAction

    def mimeTypes(self) -> list[str]:
        return [PARAMETER_MIME]

    def mimeData(self, indexes: Sequence[QModelIndex]) -> QMimeData:
        paths = {self.path_for_index(i) for i in indexes if i.isValid()}
        data = QMimeData()
        payload = {"model": id(self), "paths": [list(p) for p in paths if p]}
        data.setData(PARAMETER_MIME, json.dumps(payload).encode())
        return data

    def _dragged(self, data: QMimeData) -> NodePath | None:
        if not data.hasFormat(PARAMETER_MIME):
            return None
        payload = json.loads(bytes(data.data(PARAMETER_MIME).data()).decode())
        paths = payload.get("paths", [])
        if payload.get("model") != id(self) or len(paths) != 1:
            return None
        return tuple(str(p) for p in paths[0])

    def canDropMimeData(
        self, data: QMimeData, action: Qt.DropAction, row: int, column: int, parent: AnyIndex
    ) -> bool:
        source, target = self._dragged(data), self.path_for_index(parent)
        if source is None or target is None or action != Qt.DropAction.MoveAction:
            return False
        item = self._item_at(target)
        is_object = isinstance(item.node if item else None, ObjectSchema)
        return is_object and target[: len(source)] != source

    def dropMimeData(
        self, data: QMimeData, action: Qt.DropAction, row: int, column: int, parent: AnyIndex
    ) -> bool:
        """Move the dragged property before ``row`` of ``parent`` (the end when ``row`` < 0)."""
        if not self.canDropMimeData(data, action, row, column, parent):
            return False
        source, target = self._dragged(data), self.path_for_index(parent)
        assert source is not None and target is not None
        count = len(self._item_at(target).children)  # type: ignore[union-attr]
        if row < 0:
            row = count
        source_item = self._item_at(source)
        if edits.parent_object(source) == target and source_item is not None:
            row = row - 1 if row > source_item.row else row  # Qt counts before the removal
        return self.move(source, target, row) is not None


def _shape(root: _Item) -> list[tuple[NodePath, int]]:
    shape: list[tuple[NodePath, int]] = []
    stack = [root]
    while stack:
        item = stack.pop()
        shape.append((item.path, len(item.children)))
        stack.extend(reversed(item.children))
    return shape
