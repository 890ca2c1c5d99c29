"""The Tools page: the agent's tools as a list to add, duplicate, rename, delete and reorder.

Every action is one undoable command on the document. Names are checked by the agent model
(MCP-safe, unique). A name is typed in place: *Add tool* puts ``new_tool`` at the end with its
name open for typing, all of it selected; Enter takes the name and asks the main window to open
the new tool's editor tab, Escape takes the new tool back, and leaving the field keeps the tool
under the name typed. While a name is typed (after *Add tool* or *Rename*), a line under the list
says why the agent would refuse it, and Enter does nothing until it is fixed. A rename through
:meth:`ToolsListWidget.rename_tool` that is refused leaves the tool as it was and the reporter
says why. Double-click (or Enter) asks the main window to open the tool's editor tab. A filter
field narrows the list to the tools whose name contains what is typed (an agent may have
thousands); rows keep the agent's order and every action acts on the agent's own positions.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from PySide6.QtCore import (
    QItemSelectionModel,
    QModelIndex,
    QObject,
    QPersistentModelIndex,
    QSortFilterProxyModel,
    Qt,
    Signal,
)
from PySide6.QtGui import QAction, QKeySequence, QValidator
from PySide6.QtWidgets import (
    QAbstractItemDelegate,
    QAbstractItemView,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QListView,
    QStyleOptionViewItem,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from app.document.agent_document import AgentDocument
from app.document.qt_models import ToolsListModel
from app.icons import icon
from app.naming import numbered_name
from app.tool_editor.value_editors import error_colour
from app.typed_delegate import KeepTypedDelegate
from schema_types.agent import ToolDefinition

__all__ = ["ToolsListWidget", "unique_tool_name"]


def unique_tool_name(base: str, taken: set[str]) -> str:
    """``base`` made MCP-safe, with ``_2``, ``_3``… appended until it is not in ``taken``."""
    return numbered_name(re.sub(r"[^A-Za-z0-9_.\-]", "_", base)[:120] or "tool", taken)


AnyIndex = QModelIndex | QPersistentModelIndex
NameCheck = Callable[[AnyIndex, str], str | None]


class _NameValidator(QValidator):
    """Acceptable when the agent would take the name; otherwise Intermediate (typing goes on,
    Enter waits)."""

    def __init__(self, problem: Callable[[str], str | None], parent: QObject) -> None:
        super().__init__(parent)
        self._problem = problem

    def validate(self, text: str, pos: int) -> Any:
        state = QValidator.State.Acceptable
        if self._problem(text) is not None:
            state = QValidator.State.Intermediate
        return state, text, pos


class _ToolNameDelegate(KeepTypedDelegate):
    """The list's name editor: validated as typed, told apart when Enter submits it, and left
    alone while typed in (the tools' schema marks arrive a moment after each edit).

    Signals:
        problem_changed(str): why the typed name is refused ("" when it is fine).
        submitted(): Enter took an acceptable name.
    """

    problem_changed = Signal(str)
    submitted = Signal()

    def __init__(self, check: NameCheck, parent: QObject) -> None:
        super().__init__(parent)
        self._check = check

    def createEditor(  # noqa: N802 (Qt override)
        self, parent: QWidget, option: QStyleOptionViewItem, index: AnyIndex
    ) -> QWidget:
        editor = super().createEditor(parent, option, index)
        if isinstance(editor, QLineEdit):
            row = QPersistentModelIndex(index)
            editor.setValidator(_NameValidator(lambda text: self._check(row, text), editor))
            editor.textChanged.connect(
                lambda text: self.problem_changed.emit(self._check(row, text) or "")
            )
            editor.returnPressed.connect(self.submitted)
        return editor


class ToolsListWidget(QWidget):
    """The tools of one agent with buttons (and shortcuts) for every list action."""

    open_tool = Signal(object)  # ToolDefinition
    test_tool = Signal(object)  # ToolDefinition: run it from the Test dialog
    draft_tool = Signal()  # New tool from a description…: the window opens its dialog

    def __init__(self, document: AgentDocument, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.document = document
        self.model = ToolsListModel(document, self)
        self.shown = QSortFilterProxyModel(self)  # the rows the filter lets through
        self.shown.setSourceModel(self.model)
        self.shown.setFilterCaseSensitivity(Qt.CaseSensitivity.CaseInsensitive)
        self.filter_edit = QLineEdit()
        self.filter_edit.setObjectName("toolsFilter")
        self.filter_edit.setPlaceholderText("Filter tools by name")
        self.filter_edit.setClearButtonEnabled(True)
        self.filter_edit.textChanged.connect(self.set_filter)
        self.view = QListView()
        self.view.setObjectName("toolsList")
        self.view.setModel(self.shown)
        # Every row is one line with one icon: sizing one row sizes them all, so a list of
        # thousands of tools is laid out without asking the model about each.
        self.view.setUniformItemSizes(True)
        self.view.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.view.setDragDropMode(QAbstractItemView.DragDropMode.InternalMove)
        self.view.setDefaultDropAction(Qt.DropAction.MoveAction)
        self.view.setDragEnabled(True)
        self.view.setAcceptDrops(True)
        self.view.setDropIndicatorShown(True)
        self.view.setEditTriggers(
            QAbstractItemView.EditTrigger.EditKeyPressed
            | QAbstractItemView.EditTrigger.SelectedClicked
        )
        self.view.setToolTip("Double-click a tool to edit it; drag to reorder; F2 to rename.")
        self.view.activated.connect(self._on_activated)
        self.delegate = _ToolNameDelegate(self._name_problem, self.view)
        self.view.setItemDelegate(self.delegate)
        self.delegate.problem_changed.connect(self._show_name_problem)
        self.delegate.submitted.connect(self._on_name_submitted)
        self.delegate.closeEditor.connect(self._on_name_editor_closed)
        # The tool Add tool made, while its name is being typed, and the undo step that made it.
        self._naming: QPersistentModelIndex | None = None
        self._added_at = -1
        self._name_submitted = False

        self.add_action = self._action(
            "add", "&Add tool", "Add a new tool", "Ctrl+Shift+N", self.add_tool
        )
        self.draft_action = self._action(
            "add",
            "From a &description…",
            "New tool from a description: the authoring model drafts it, you accept it or not",
            None,
            self.draft_tool.emit,
        )
        self.duplicate_action = self._action(
            "duplicate", "D&uplicate", "Duplicate the tool", "Ctrl+D", self.duplicate_selected
        )
        self.rename_action = self._action(
            "rename", "&Rename", "Rename the tool", "F2", self.rename_selected
        )
        self.delete_action = self._action(
            "delete",
            "&Delete",
            "Delete the tool (undoable)",
            QKeySequence.StandardKey.Delete,
            self.delete_selected,
        )
        self.up_action = self._action(
            "up", "Move &up", "Move the tool up", "Alt+Up", lambda: self.move_selected(-1)
        )
        self.down_action = self._action(
            "down", "Move do&wn", "Move the tool down", "Alt+Down", lambda: self.move_selected(1)
        )
        self.open_action = self._action(
            "tool", "&Open", "Open the tool's editor", None, self.open_selected
        )
        self.test_action = self._action(
            "tool",
            "&Test…",
            "Fill in arguments and run the tool in a chat tab",
            None,
            self.test_selected,
        )
        # Right-click a tool: the same actions as the buttons.
        self.view.setContextMenuPolicy(Qt.ContextMenuPolicy.ActionsContextMenu)
        for action in (
            self.open_action,
            self.test_action,
            self.rename_action,
            self.duplicate_action,
            self.delete_action,
        ):
            self.view.addAction(action)

        buttons = QHBoxLayout()
        for action in (
            self.add_action,
            self.draft_action,
            self.duplicate_action,
            self.rename_action,
            self.delete_action,
            self.up_action,
            self.down_action,
            self.open_action,
            self.test_action,
        ):
            button = QToolButton()
            button.setDefaultAction(action)
            button.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonTextBesideIcon)
            button.setAutoRaise(True)
            buttons.addWidget(button)
        buttons.addStretch(1)

        title = QLabel("<h2>Tools</h2>")
        intro = QLabel(
            "The tools this agent serves to MCP clients. Each one fills its prompt template "
            "with the call's arguments and answers with the agent's reply."
        )
        intro.setWordWrap(True)
        self.empty_hint = QLabel("No tools yet — add one to start.")
        self.empty_hint.setEnabled(False)
        self.name_hint = QLabel()
        self.name_hint.setObjectName("toolNameHint")
        self.name_hint.setWordWrap(True)
        self.name_hint.setTextFormat(Qt.TextFormat.PlainText)
        self.name_hint.hide()
        layout = QVBoxLayout(self)
        layout.addWidget(title)
        layout.addWidget(intro)
        layout.addLayout(buttons)
        layout.addWidget(self.filter_edit)
        layout.addWidget(self.view, 1)
        layout.addWidget(self.name_hint)
        layout.addWidget(self.empty_hint)

        self.view.selectionModel().currentChanged.connect(lambda *_: self._update_actions())
        self.model.rowsInserted.connect(self._update_actions)
        self.model.rowsRemoved.connect(self._update_actions)
        self.model.rowsMoved.connect(self._update_actions)
        self.model.modelReset.connect(self._update_actions)
        self._update_actions()
        if self.model.rowCount():
            self.select_row(0)

    def _action(
        self,
        icon_name: str,
        text: str,
        tip: str,
        shortcut: str | QKeySequence.StandardKey | None,
        slot: object,
    ) -> QAction:
        action = QAction(icon(icon_name), text, self)
        action.setToolTip(tip + (f" ({QKeySequence(shortcut).toString()})" if shortcut else ""))
        if shortcut is not None:
            action.setShortcut(QKeySequence(shortcut))
            action.setShortcutContext(Qt.ShortcutContext.WidgetWithChildrenShortcut)
        action.triggered.connect(slot)
        self.addAction(action)
        return action

    # -- selection --------------------------------------------------------------------------

    def selected_row(self) -> int:
        """The current tool's position in the agent, or -1."""
        index = self.shown.mapToSource(self.view.currentIndex())
        return index.row() if index.isValid() else -1

    def select_row(self, row: int) -> None:
        """Make the tool at position ``row`` of the agent current and selected (shown first
        when the filter hides it)."""
        source = self.model.index(row, 0)
        if not source.isValid():
            return
        index = self.shown.mapFromSource(source)
        if not index.isValid():
            self.filter_edit.clear()
            index = self.shown.mapFromSource(source)
        self.view.selectionModel().setCurrentIndex(
            index, QItemSelectionModel.SelectionFlag.ClearAndSelect
        )
        self.view.scrollTo(index)

    def set_filter(self, text: str) -> None:
        """Show only the tools whose name contains ``text`` (any case); empty shows all."""
        if self.filter_edit.text() != text:
            self.filter_edit.setText(text)  # comes back here through textChanged
            return
        self.shown.setFilterFixedString(text.strip())
        self._update_actions()

    def shown_rows(self) -> int:
        """How many tools the filter lets through."""
        return self.shown.rowCount()

    def select_tool(self, tool: ToolDefinition) -> None:
        """Make ``tool`` the current row (the outline's tool rows show it here)."""
        row = self.model.row_of(tool)
        if row >= 0:
            self.select_row(row)

    def _update_actions(self) -> None:
        row = self.selected_row()
        count = self.model.rowCount()
        has = row >= 0
        for action in (
            self.duplicate_action,
            self.rename_action,
            self.delete_action,
            self.open_action,
            self.test_action,
        ):
            action.setEnabled(has)
        self.up_action.setEnabled(has and row > 0)
        self.down_action.setEnabled(has and row < count - 1)
        if count == 0:
            self.empty_hint.setText("No tools yet — add one to start.")
        elif self.shown.rowCount() == 0:
            self.empty_hint.setText(f"No tool name contains “{self.filter_edit.text().strip()}”.")
        self.empty_hint.setVisible(count == 0 or self.shown.rowCount() == 0)

    # -- actions ----------------------------------------------------------------------------

    def _taken(self) -> set[str]:
        return {t.name for t in self.document.agent.tools}

    def add_tool(self) -> ToolDefinition | None:
        """Append a new, uniquely named tool, select it and open its name for typing."""
        name = unique_tool_name("new_tool", self._taken())
        tool = ToolDefinition(name=name, description="", prompt="")
        row = len(self.document.agent.tools)
        if not self.document.insert_item(("metadata", "tools", row), tool, text=f"Add tool {name}"):
            return None
        self.select_row(row)  # closes a name editor still open
        self._naming = QPersistentModelIndex(self.model.index(row, 0))
        self._added_at = self.document.undo_stack.index()
        self._name_submitted = False
        self.view.edit(self.view.currentIndex())
        self._show_name_problem("")
        return self.document.agent.tools[row]

    def duplicate_selected(self) -> ToolDefinition | None:
        """Insert a copy of the selected tool after it, named ``<name>_copy``."""
        row = self.selected_row()
        source = self.model.tool(row)
        if source is None:
            return None
        name = unique_tool_name(f"{source.name}_copy", self._taken())
        copy = ToolDefinition.model_validate({**source.to_data(), "name": name})
        if not self.document.insert_item(
            ("metadata", "tools", row + 1), copy, text=f"Duplicate tool {source.name}"
        ):
            return None
        self.select_row(row + 1)
        return self.document.agent.tools[row + 1]

    def rename_selected(self) -> None:
        """Start editing the selected tool's name in place."""
        index = self.view.currentIndex()  # a row of the filtered list
        if index.isValid():
            self.view.edit(index)

    def _name_problem(self, index: AnyIndex, text: str) -> str | None:
        """Why the agent would refuse ``text`` as the name of the tool in the list's ``index``."""
        row = self.shown.mapToSource(self.shown.index(index.row(), 0)).row()
        tool = self.model.tool(row)
        name = text.strip()
        if tool is None or name == tool.name:
            return None
        problem = self.document.validate_field(("metadata", "tools", row, "name"), name)
        return problem.removeprefix("name: ") if problem else None

    def _show_name_problem(self, problem: str) -> None:
        if problem:
            self.name_hint.setText(problem)
            self.name_hint.setStyleSheet(f"color: {error_colour(self).name()};")
        elif self._naming is not None:
            self.name_hint.setText("Name the new tool: Enter opens it, Escape takes it back.")
            self.name_hint.setStyleSheet("")
        self.name_hint.setVisible(bool(problem) or self._naming is not None)

    def _on_name_submitted(self) -> None:
        self._name_submitted = True

    def _on_name_editor_closed(
        self, _editor: QWidget, hint: QAbstractItemDelegate.EndEditHint
    ) -> None:
        naming, submitted = self._naming, self._name_submitted
        self._naming, self._name_submitted = None, False
        self.name_hint.hide()
        if naming is None or not naming.isValid():
            return
        row = naming.row()
        if hint == QAbstractItemDelegate.EndEditHint.RevertModelCache:
            stack = self.document.undo_stack
            if stack.index() == self._added_at:  # nothing done since the add: take it back
                stack.undo()
            return
        tool = self.model.tool(row)
        if submitted and tool is not None:
            self.open_tool.emit(tool)

    def rename_tool(self, row: int, name: str) -> bool:
        """Rename the tool in ``row``; False (and reported) when the name is refused."""
        return self.model.setData(self.model.index(row, 0), name)

    def delete_selected(self) -> None:
        """Delete the selected tool (undo brings it back)."""
        row = self.selected_row()
        tool = self.model.tool(row)
        if tool is None:
            return
        shown_at = self.view.currentIndex().row()
        if self.document.remove_item(("metadata", "tools", row), text=f"Delete tool {tool.name}"):
            # The next tool the filter shows, so the filter stays as the person set it.
            remaining = self.shown.rowCount()
            if remaining:
                self.view.selectionModel().setCurrentIndex(
                    self.shown.index(min(shown_at, remaining - 1), 0),
                    QItemSelectionModel.SelectionFlag.ClearAndSelect,
                )

    def move_selected(self, step: int) -> None:
        """Move the selected tool up (-1) or down (+1)."""
        row = self.selected_row()
        if self.model.move_tool(row, row + step):
            self.select_row(row + step)

    def open_selected(self) -> None:
        """Ask for the selected tool's editor tab."""
        tool = self.model.tool(self.selected_row())
        if tool is not None:
            self.open_tool.emit(tool)

    def test_selected(self) -> None:
        """Ask for a test run of the selected tool."""
        tool = self.model.tool(self.selected_row())
        if tool is not None:
            self.test_tool.emit(tool)

    def _on_activated(self, index: QModelIndex) -> None:
        tool = self.model.tool(self.shown.mapToSource(index).row())
        if tool is not None:
            self.open_tool.emit(tool)
