"""Help ▸ Keyboard shortcuts: every key the studio answers, grouped by where it works.

:func:`studio_shortcuts` gathers them: the main window's menus, walked item by item (an item's
keys are its shortcuts, or those its text shows after a tab when a pane answers them itself, as
Replace… does); the actions of the Tools page and of the tool editor's parameter tree, read from
a page and a builder made for the purpose, so the list is never out of step with them; and the
keys panes handle themselves (:data:`PANE_KEYS`), which are no actions to walk. Each
:class:`Shortcut` says where it works: ``Window`` for the menus, else the pane that answers it.

:class:`ShortcutsDialog` lists them under their menu or pane with a search field (a word of the
action, or the keys), and names the keys that mean one thing in the window and another in a pane
(Ctrl+Return is Test tool… in the window, Run in the Test dialog).
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, replace

from PySide6.QtCore import Qt
from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import (
    QDialog,
    QLabel,
    QLineEdit,
    QMainWindow,
    QMenu,
    QTreeWidget,
    QTreeWidgetItem,
    QWidget,
)

from app.layouts import closable_column
from app.window.edit_menu import EDITORS, PLAIN_LABEL_PROPERTY, SCOPE_PROPERTY
from app.window.screen_fit import fit_to_screen

__all__ = [
    "PANE_KEYS",
    "WINDOW",
    "Shortcut",
    "ShortcutsDialog",
    "menu_shortcuts",
    "pane_action_shortcuts",
    "shared_keys",
    "studio_shortcuts",
]

WINDOW = "Window"
"""Where the menus' keys work."""

PANE_KEYS: tuple[tuple[str, str, str, str], ...] = (
    ("Find bar", "F3", "Next match", EDITORS),
    ("Find bar", "Shift+F3", "Previous match", EDITORS),
    ("Find bar", "Return", "Next match", "Search field"),
    ("Find bar", "Shift+Return", "Previous match", "Search field"),
    ("Find bar", "Return", "Replace, then find the next", "Replace field"),
    ("Find bar", "Esc", "Close the find bar", "Find bar"),
    ("Template editor", "Ctrl+Space", "Show the placeholders that fit here", "Template editor"),
    ("Test cases", "Del", "Delete the selected case", "Test cases table"),
    ("Test dialog", "Ctrl+Return", "Run the test with these arguments", "Test dialog"),
    ("Chat", "Return", "Send the message", "Chat input"),
    ("Chat", "Shift+Return", "A new line in the message", "Chat input"),
)
"""Keys panes answer themselves: (group, keys, what they do, where)."""


@dataclass(frozen=True)
class Shortcut:
    """One key and what it does.

    Attributes:
        group: the menu (``Agent``) or pane it is listed under.
        keys: the keys as the platform writes them (``Ctrl+S``).
        action: what they do (the item's text without its mnemonic).
        scope: where they work: :data:`WINDOW` or a pane.
    """

    group: str
    keys: str
    action: str
    scope: str


def _native(keys: QKeySequence) -> str:
    return keys.toString(QKeySequence.SequenceFormat.NativeText)


def _plain(text: str) -> str:
    return text.split("\t", 1)[0].replace("&&", "\0").replace("&", "").replace("\0", "&")


def _action_shortcuts(action: QAction, group: str, scope: str) -> list[Shortcut]:
    label = action.property(PLAIN_LABEL_PROPERTY)
    text = label if isinstance(label, str) else _plain(action.text())
    found = [Shortcut(group, _native(keys), text, scope) for keys in action.shortcuts()]
    shown = action.text().partition("\t")[2]
    if shown and not found:  # keys a pane answers: the item only shows them
        where = action.property(SCOPE_PROPERTY)
        found.append(Shortcut(group, shown, text, where if isinstance(where, str) else scope))
    return found


def menu_shortcuts(window: QMainWindow) -> list[Shortcut]:
    """The keys of the window's menu items, in menu order, under their menu (an item of a
    submenu as ``Submenu ▸ Item``)."""
    found: list[Shortcut] = []

    def walk(menu: QMenu, group: str, within: str) -> None:
        for action in menu.actions():
            submenu = action.menu()
            if isinstance(submenu, QMenu):
                walk(submenu, group, f"{within}{_plain(submenu.title())} ▸ ")
            elif not action.isSeparator():
                for shortcut in _action_shortcuts(action, group, WINDOW):
                    found.append(replace(shortcut, action=within + shortcut.action))

    for top in window.menuBar().actions():
        menu = top.menu()
        if isinstance(menu, QMenu):
            walk(menu, _plain(menu.title()), "")
    return found


def pane_action_shortcuts(widget: QWidget, group: str) -> list[Shortcut]:
    """The keys of ``widget``'s own actions (those with a shortcut), answered there."""
    found: list[Shortcut] = []
    for action in widget.actions():
        found.extend(_action_shortcuts(action, group, group))
    return found


def _built_pane_shortcuts() -> list[Shortcut]:
    """The Tools page's and the parameter tree's keys, read from a page and a builder made
    on a one-tool agent and dropped again."""
    from app.document.agent_document import AgentDocument
    from app.document.tool_ref import ToolRef
    from app.pages.tools_list import ToolsListWidget
    from app.tool_editor.parameter_builder import ParameterBuilder
    from schema_types.agent import Agent

    agent = Agent.model_validate({"metadata": {"name": "shortcuts", "tools": [{"name": "t"}]}})
    document = AgentDocument(agent)
    page = ToolsListWidget(document)
    builder = ParameterBuilder(ToolRef(document, 0))
    try:
        return [
            *pane_action_shortcuts(page, "Tools page"),
            *pane_action_shortcuts(builder, "Parameter tree"),
        ]
    finally:
        for widget in (page, builder):
            widget.deleteLater()
        document.deleteLater()


def studio_shortcuts(window: QMainWindow) -> list[Shortcut]:
    """Every key of the studio: the window's menus, the panes' actions, :data:`PANE_KEYS`."""
    panes = [
        Shortcut(group, _native(QKeySequence(keys)), text, scope)
        for group, keys, text, scope in PANE_KEYS
    ]
    return [*menu_shortcuts(window), *_built_pane_shortcuts(), *panes]


def shared_keys(shortcuts: list[Shortcut]) -> dict[str, list[Shortcut]]:
    """Keys of the window's menus that a pane answers otherwise: keys → the window's shortcut
    first, then the panes'. (Panes sharing a key among themselves, as lists share Del, need no
    word: only one of them has the focus.)"""
    by_keys: dict[str, list[Shortcut]] = defaultdict(list)
    for shortcut in shortcuts:
        by_keys[shortcut.keys].append(shortcut)
    return {
        keys: sorted(found, key=lambda s: s.scope != WINDOW)
        for keys, found in by_keys.items()
        if any(s.scope == WINDOW for s in found) and len({s.action for s in found}) > 1
    }


class ShortcutsDialog(QDialog):
    """The shortcuts under their menu or pane, searchable.

    Args:
        shortcuts: what to list (:func:`studio_shortcuts`).
        parent: the main window.
    """

    def __init__(self, shortcuts: list[Shortcut], parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("shortcutsDialog")
        self.setWindowTitle("Keyboard shortcuts")
        self.shortcuts = shortcuts
        self.search_edit = QLineEdit()
        self.search_edit.setObjectName("shortcutSearch")
        self.search_edit.setPlaceholderText("Search by action or keys (save, Ctrl+S)")
        self.search_edit.setClearButtonEnabled(True)
        self.tree = QTreeWidget()
        self.tree.setObjectName("shortcutsTree")
        self.tree.setHeaderLabels(["Action", "Keys", "Where"])
        self.tree.setRootIsDecorated(False)
        self.tree.setUniformRowHeights(True)
        self.tree.setAlternatingRowColors(True)
        groups: dict[str, QTreeWidgetItem] = {}
        for shortcut in shortcuts:
            group = groups.get(shortcut.group)
            if group is None:
                group = QTreeWidgetItem(self.tree, [shortcut.group])
                font = group.font(0)
                font.setBold(True)
                group.setFont(0, font)
                group.setFirstColumnSpanned(True)
                groups[shortcut.group] = group
            where = "" if shortcut.scope in (WINDOW, shortcut.group) else shortcut.scope
            QTreeWidgetItem(group, [shortcut.action, shortcut.keys, where])
        self.tree.expandAll()
        for column in range(3):
            self.tree.resizeColumnToContents(column)
        self.note = QLabel(_shared_note(shared_keys(shortcuts)))
        self.note.setObjectName("sharedKeys")
        self.note.setWordWrap(True)
        self.note.setTextFormat(Qt.TextFormat.PlainText)
        closable_column(self, self.search_edit, self.tree, self.note, stretch=self.tree)
        self.search_edit.textChanged.connect(self.set_filter)
        fit_to_screen(self, 640, 620)

    def set_filter(self, text: str) -> None:
        """Show only the shortcuts whose action, keys or place contain ``text`` (any case)."""
        wanted = text.strip().casefold()
        for row in range(self.tree.topLevelItemCount()):
            group = self.tree.topLevelItem(row)
            if group is None:
                continue
            shown = 0
            for child_row in range(group.childCount()):
                item = group.child(child_row)
                if item is None:
                    continue
                hay = " ".join(item.text(c) for c in range(3)) + " " + group.text(0)
                hidden = bool(wanted) and wanted not in hay.casefold()
                item.setHidden(hidden)
                shown += not hidden
            group.setHidden(shown == 0)

    def shown_rows(self) -> list[tuple[str, str]]:
        """The ``(action, keys)`` rows the search lets through, in order."""
        rows: list[tuple[str, str]] = []
        for row in range(self.tree.topLevelItemCount()):
            group = self.tree.topLevelItem(row)
            if group is None or group.isHidden():
                continue
            for child_row in range(group.childCount()):
                item = group.child(child_row)
                if item is not None and not item.isHidden():
                    rows.append((item.text(0), item.text(1)))
        return rows


def _shared_note(shared: dict[str, list[Shortcut]]) -> str:
    if not shared:
        return ""
    lines = [
        f"{keys}: "
        + "; ".join(f"{s.action} ({'the window' if s.scope == WINDOW else s.scope})" for s in found)
        for keys, found in sorted(shared.items())
    ]
    return "Keys that depend on where the focus is:\n" + "\n".join(lines)
