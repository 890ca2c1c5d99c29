"""The parameter builder: the tree of parameters, its actions, the property panel and the JSON.

:class:`ParameterBuilder` puts the pieces of the builder together: a tool bar headed
"Parameters" (add property, add child or item schema with their text; delete, move up and down as
icons; duplicate and import, used less, under a "More" menu, so the bar fits beside the property
panel at 1024 pixels wide), the tree
(:class:`~app.tool_editor.parameter_model.ParameterTreeModel` in a ``QTreeView`` with drag and
drop, in-place rename and the required check box), and beside it the property panel of the
selected node and the JSON view of the whole ``parameters``, as two tabs. It holds no state of its
own: every action is a method of the model, which pushes one undoable edit on the document.

Adding a property opens its name for typing, all of it selected, so what is typed replaces
``new_property``. An open name editor keeps what it shows while the model refreshes the row
(problem marks arrive a moment after each edit), so neither the typing nor the selection is lost.
"""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import QItemSelection, QModelIndex, QPersistentModelIndex, QSize, Qt
from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import (
    QAbstractItemView,
    QDialog,
    QHeaderView,
    QLabel,
    QMenu,
    QSplitter,
    QTabWidget,
    QToolBar,
    QToolButton,
    QTreeView,
    QVBoxLayout,
    QWidget,
)

from app.document.tool_ref import ToolRef
from app.icons import icon
from app.tool_editor import parameter_edits as edits
from app.tool_editor.parameter_model import ParameterTreeModel
from app.tool_editor.property_panel import PropertyPanel
from app.tool_editor.schema_import import ImportDialog, ImportedParameters
from app.tool_editor.schema_json_view import SchemaJsonView
from app.tool_editor.schema_slot import PARAMETERS, SchemaSlot
from app.tool_editor.value_editors import reorderable
from app.typed_delegate import KeepTypedDelegate
from schema_types.schema.nodes import ArraySchema, ObjectSchema

__all__ = ["ParameterBuilder"]

NodePath = tuple[str, ...]


class ParameterBuilder(QWidget):
    """Tree, actions, property panel and JSON view of one tool's parameters.

    Args:
        ref: the edited tool.
        parent: the owning widget.
        slot: which schema of the tool it edits (its parameters unless told).
    """

    def __init__(
        self,
        ref: ToolRef,
        parent: QWidget | None = None,
        *,
        slot: SchemaSlot = PARAMETERS,
    ) -> None:
        super().__init__(parent)
        self.setObjectName("parameterBuilder")
        self.document = ref.document
        self.slot = slot
        self.model = ParameterTreeModel(ref, self, slot=slot)
        self.tree = QTreeView()
        self.tree.setObjectName("parameterTree")
        self.tree.setAccessibleName(slot.title)
        self.tree.setModel(self.model)
        self.tree.setItemDelegate(KeepTypedDelegate(self.tree))
        self.tree.setUniformRowHeights(True)
        self.tree.setAlternatingRowColors(True)
        self.tree.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        reorderable(self.tree)
        header = self.tree.header()
        header.setStretchLastSection(True)
        header.setSectionResizeMode(0, QHeaderView.ResizeMode.Interactive)
        # Narrow enough for Description to fit beside them at 1024 wide: a horizontal scroll
        # bar would take a row's height.
        header.setMinimumSectionSize(40)
        header.resizeSection(0, 150)
        header.resizeSection(1, 100)
        header.resizeSection(2, 64)
        self.panel = PropertyPanel(self.model)
        self.json_view = SchemaJsonView(self.model)
        self.side = QTabWidget()
        self.side.setObjectName("parameterSide")
        self.side.setDocumentMode(True)
        self.side.addTab(self.panel, "Properties")
        self.side.addTab(self.json_view, "JSON")
        self.side.setTabToolTip(
            1, f"{slot.whole.capitalize()} exactly as MCP clients get them ({slot.wire_name})"
        )
        self.toolbar = QToolBar(slot.title)
        self.toolbar.setObjectName("parameterToolbar")
        self.toolbar.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonTextBesideIcon)
        self.toolbar.setIconSize(QSize(16, 16))
        self._build_actions()

        split = QSplitter(Qt.Orientation.Horizontal)
        split.setObjectName("parameterSplit")
        split.setChildrenCollapsible(False)
        self.split = split
        tree_side = QWidget()
        tree_layout = QVBoxLayout(tree_side)
        tree_layout.setContentsMargins(0, 0, 0, 0)
        tree_layout.setSpacing(2)
        tree_layout.addWidget(self.toolbar)
        tree_layout.addWidget(self.tree, 1)
        split.addWidget(tree_side)
        split.addWidget(self.side)
        split.setStretchFactor(0, 3)
        split.setStretchFactor(1, 2)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(split)

        selection = self.tree.selectionModel()
        selection.selectionChanged.connect(self._on_selection_changed)
        self.model.refreshed.connect(self._on_model_refreshed)
        self.tree.expandAll()
        self._update_actions()
        if self.model.root_error is not None:
            self.side.setCurrentWidget(self.json_view)  # no tree to show: the text and its problems

    # -- actions ---------------------------------------------------------------------------

    def _action(
        self, text: str, icon_name: str, slot: Callable[[], object], tip: str, keys: str = ""
    ) -> QAction:
        action = QAction(icon(icon_name), text, self)
        action.setToolTip(f"{tip} ({keys})" if keys else tip)
        if keys:
            action.setShortcut(QKeySequence(keys))
            action.setShortcutContext(Qt.ShortcutContext.WidgetWithChildrenShortcut)
        action.triggered.connect(slot)
        self.addAction(action)
        return action

    def _build_actions(self) -> None:
        self.add_action = self._action(
            "Add", "add", self.add_property, "Add a parameter next to the selected one", "Ctrl+T"
        )
        self.add_child_action = self._action(
            "Add child",
            "add",
            self.add_child,
            "Add a property inside the selected object, or an item schema to the selected array",
        )
        self.duplicate_action = self._action(
            "Duplicate", "duplicate", self.duplicate, "Copy the selected parameter"
        )
        self.delete_action = self._action(
            "Delete", "delete", self.delete, "Delete the selected parameter", "Del"
        )
        self.up_action = self._action("Up", "up", lambda: self.move_by(-1), "Move up", "Alt+Up")
        self.down_action = self._action(
            "Down", "down", lambda: self.move_by(1), "Move down", "Alt+Down"
        )
        self.import_action = self._action(
            "Import…",
            "open",
            self.import_parameters,
            "Replace the parameters with a pasted tool definition, JSON Schema or example",
        )
        title = QLabel(self.slot.title)
        title.setObjectName("parametersTitle")
        font = title.font()
        font.setBold(True)
        title.setFont(font)
        title.setContentsMargins(0, 0, 6, 0)
        self.toolbar.addWidget(title)
        self.toolbar.addAction(self.add_action)
        self.toolbar.addAction(self.add_child_action)
        self.toolbar.addSeparator()
        for action in (self.delete_action, self.up_action, self.down_action):
            self.toolbar.addAction(action)
            button = self.toolbar.widgetForAction(action)
            if isinstance(button, QToolButton):
                button.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonIconOnly)
        self.more_menu = QMenu("More", self)
        self.more_menu.addAction(self.duplicate_action)
        self.more_menu.addAction(self.import_action)
        self.more_button = QToolButton()
        self.more_button.setObjectName("moreParameterActions")
        self.more_button.setText("More")
        self.more_button.setToolTip("Duplicate the selected parameter, import parameters")
        self.more_button.setMenu(self.more_menu)
        self.more_button.setPopupMode(QToolButton.ToolButtonPopupMode.InstantPopup)
        self.more_button.setAutoRaise(True)
        self.toolbar.addWidget(self.more_button)

    def selected_path(self) -> NodePath | None:
        """The node path of the selected row (None: nothing selected)."""
        indexes = self.tree.selectionModel().selectedRows()
        return self.model.path_for_index(indexes[0]) if indexes else None

    def select(self, path: NodePath | None) -> None:
        """Select (and show in the panel) the node at ``path``."""
        if path is None:
            self.tree.clearSelection()
            self.panel.set_path(None)
            return
        index = self.model.index_for_path(path)
        if index.isValid():
            self.tree.scrollTo(index)
            self.tree.setCurrentIndex(index)

    def add_property(self) -> NodePath | None:
        """Add a property beside the selected one (at the root when nothing is selected)."""
        path = self.selected_path()
        owner: NodePath = ()
        row: int | None = None
        if path and edits.is_property(path):
            owner = edits.parent_object(path)
            current = self.model.row_of(path)
            row = None if current is None else current + 1
        return self._added(self.model.add_property(owner, row=row))

    def add_child(self) -> NodePath | None:
        """Add a property to the selected object, or an item schema to the selected array."""
        path = self.selected_path() or ()
        node = self.model.node(path)
        if isinstance(node, ArraySchema):
            return self._added(self.model.add_item_schema(path))
        if isinstance(node, ObjectSchema):
            return self._added(self.model.add_property(path))
        return None

    def _added(self, path: NodePath | None) -> NodePath | None:
        if path is not None:
            self.select(path)
            index = self.model.index_for_path(path)
            if edits.is_property(path):
                self.tree.edit(index)  # type the name at once
        return path

    def duplicate(self) -> NodePath | None:
        """Duplicate the selected property."""
        path = self.selected_path()
        new = self.model.duplicate(path) if path else None
        if new is not None:
            self.select(new)
        return new

    def delete(self) -> bool:
        """Delete the selected property or item schema."""
        path = self.selected_path()
        return bool(path) and self.model.remove(path or ())

    def move_by(self, delta: int) -> NodePath | None:
        """Move the selected property up (-1) or down (+1)."""
        path = self.selected_path()
        new = self.model.move_by(path, delta) if path else None
        if new is not None:
            self.select(new)
        return new

    def import_parameters(self) -> bool:
        """Ask for a definition or example to import, and replace the parameters with it."""
        dialog = ImportDialog(self)
        if dialog.exec() != QDialog.DialogCode.Accepted or dialog.result_value is None:
            return False
        wanted = not dialog.take_description.isHidden() and dialog.take_description.isChecked()
        return self.apply_import(dialog.result_value, with_description=wanted)

    def apply_import(self, found: ImportedParameters, *, with_description: bool = False) -> bool:
        """Replace the parameters with an import result (one undo step)."""
        done = self.model.replace_parameters(
            found.parameters, text=f"Import parameters from {found.source}"
        )
        path = self.model.ref.path("description")
        if done and with_description and found.description and path is not None:
            self.document.set_field(path, found.description, text="Import tool description")
        self.tree.expandAll()
        return done

    # -- following the model ---------------------------------------------------------------

    def _on_selection_changed(self, _selected: QItemSelection, _deselected: QItemSelection) -> None:
        self.panel.set_path(self.selected_path())
        self._update_actions()

    def _on_model_refreshed(self) -> None:
        path = self.selected_path()
        if path is not None and self.model.node_json(path) is None:
            path = None
        if path != self.panel.path():
            self.panel.set_path(path)
        self._update_actions()

    def _update_actions(self) -> None:
        path = self.selected_path() or ()
        node = self.model.node(path) if path else None
        self.add_action.setEnabled(self.model.parameters() is not None)
        self.add_child_action.setEnabled(
            isinstance(node, ObjectSchema) or (isinstance(node, ArraySchema) and node.items is None)
        )
        property_row = self.model.row_of(path) if path and edits.is_property(path) else None
        self.duplicate_action.setEnabled(property_row is not None)
        self.delete_action.setEnabled(bool(path))
        siblings = (
            self.model.child_count(edits.parent_object(path)) if property_row is not None else 0
        )
        self.up_action.setEnabled(property_row is not None and property_row > 0)
        self.down_action.setEnabled(property_row is not None and property_row + 1 < siblings)

    def expand(self, index: QModelIndex | QPersistentModelIndex | None = None) -> None:
        """Expand the whole tree (``index`` None) or one branch."""
        if index is None:
            self.tree.expandAll()
        else:
            self.tree.expand(index)
