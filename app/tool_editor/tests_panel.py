"""The Tests tab of the tool editor: the tool's test cases, their last results, one case edited.

:class:`TestsPanel` lists the cases of the tool its :class:`~app.document.tool_ref.ToolRef`
follows in a table (:class:`~app.tool_editor.case_table.CaseTableModel`: name, what it expects,
the last result on each model that ran it, read from the history's ``case_runs`` of the agent
file each time the tab is shown), and edits the selected one below it
(:class:`~app.tool_editor.case_editor.CaseEditor`). New case (from the template pane's sample
values, or with empty arguments), New caller case (a request in words,
:mod:`app.document.caller_cases`), Duplicate and Delete go through
:mod:`app.document.test_cases`, one undo step each; *Grow cases…* opens proposed cases to
tick (:mod:`app.authoring.grow_dialog`), the ticked ones added as one undo step; an undo or redo
anywhere updates the table and the editor. Run case and Run all ask for a run of the chosen cases
(:attr:`TestsPanel.run_requested`; the main window opens the results matrix). A tool without
cases shows what a test case is and how to make one.

Everything but an empty frame is built when the tab is first shown (the arguments form can be
large), so opening a tool costs nothing for it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QEvent, QItemSelectionModel, Qt, Signal
from PySide6.QtGui import QAction, QKeySequence, QShowEvent
from PySide6.QtWidgets import (
    QAbstractItemView,
    QDialogButtonBox,
    QHBoxLayout,
    QHeaderView,
    QInputDialog,
    QLabel,
    QMenu,
    QPushButton,
    QSplitter,
    QStackedWidget,
    QTableView,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from app.document.agent_document import FieldPath
from app.document.caller_cases import ask_case_name, new_caller_case
from app.document.test_cases import add_test_case, new_case, remove_test_case, unique_case_name
from app.document.tool_ref import ToolRef
from app.icons import icon
from app.tool_editor.case_table import CASE_COLUMN, EXPECT_COLUMN, CaseTableModel, latest_results
from mcp_export.errors import HistoryError
from mcp_export.history.schema import agent_key

if TYPE_CHECKING:
    from app.tool_editor.case_editor import CaseEditor
    from mcp_export.history.schema import CaseRunRecord
    from mcp_export.history.store import HistoryStore

__all__ = ["EMPTY_TEXT", "HistorySource", "TestsPanel"]

HistorySource = Callable[[], "HistoryStore | None"]
"""Gives the studio's history store when asked (None: history is off)."""

EMPTY_TEXT = (
    "<p><b>No test cases yet.</b></p>"
    "<p>A test case calls this tool with fixed arguments and says what a good answer looks "
    "like: text it must contain or match, the inner tools it must call, limits on tool calls, "
    "turns and time, a criterion for a judge model, or that the call must fail. Cases run here "
    "on one or more models, or with <code>metaagent test</code>.</p>"
    "<p>Make one with <b>New case</b> (it starts from the sample values under the template), "
    "or run the tool with <b>Test tool…</b> and choose <b>Save as test case…</b>.</p>"
    "<p>A <b>caller case</b> starts from a request in words instead: a caller model (the "
    "client's) reads it with the tool list a client sees, and the case checks that it calls "
    "this tool with the right arguments, then the answer. Make one with <b>New caller "
    "case</b>, or with <b>Save as caller case…</b> in a chat where you typed a request.</p>"
)

_RESULT_LIMIT = 5000


class TestsPanel(QWidget):
    """The test cases of one tool.

    Args:
        ref: the tool.
        parent: the owning widget.
        history: gives the history store the last results are read from (None: none shown).
        sample_arguments: gives the arguments a new case starts with (the template pane's
            sample values); None: new cases start empty.

    Attributes (once shown):
        model: the table's cases and results.
        table: the cases.
        editor: the selected case.
        new_button, new_caller_button, duplicate_button, delete_button, run_button,
            run_all_button: the actions.
        empty_label: what a test case is, shown while the tool has none.
        results_note: why last results cannot be shown (hidden when they can).
    """

    __test__ = False  # not a pytest test class, despite the name

    run_requested = Signal(object)
    """Run these cases: a list of ``(tool name, case name)``."""
    fields_added = Signal(object)
    """New text fields appeared in this widget (carried): their undo keys go to the agent."""

    def __init__(
        self,
        ref: ToolRef,
        parent: QWidget | None = None,
        *,
        history: HistorySource | None = None,
        sample_arguments: Callable[[], dict[str, Any]] | None = None,
    ) -> None:
        super().__init__(parent)
        self.setObjectName("testsPanel")
        self.ref = ref
        self.document = ref.document
        self._history = history
        self._sample_arguments = sample_arguments
        self._built = False
        self._form_stale = False
        self._syncing = False
        self._wanted: str | None = None
        QVBoxLayout(self).setContentsMargins(0, 0, 0, 0)
        ref.changed.connect(self._on_tool_changed)
        ref.removed.connect(lambda: self.setEnabled(False))

    # -- building --------------------------------------------------------------------------

    def showEvent(self, event: QShowEvent) -> None:  # noqa: N802 (Qt override)
        """Build on first show; read the last results each time."""
        if not self._built:
            self._build()
        elif self._form_stale:
            self._form_stale = False
            self.editor.set_parameters()
        self.refresh_results()
        super().showEvent(event)

    def _build(self) -> None:
        # The arguments form's modules load with the first Tests tab shown, not with the editor.
        from app.tool_editor.case_editor import CaseEditor
        from app.tool_editor.hints_view import ToolHintsView

        self._built = True
        self.model = CaseTableModel(self)
        self.model.set_palette(self.palette())
        self.table = QTableView()
        self.table.setObjectName("casesTable")
        self.table.setModel(self.model)
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.table.setAlternatingRowColors(True)
        self.table.setWordWrap(False)
        rows = self.table.verticalHeader()
        rows.hide()
        rows.setDefaultSectionSize(self.fontMetrics().height() + 8)
        # A few cases stay in sight however tall the case editor below gets.
        self.table.setMinimumHeight(
            self.table.horizontalHeader().sizeHint().height() + 3 * rows.defaultSectionSize() + 4
        )
        header = self.table.horizontalHeader()
        header.setStretchLastSection(False)
        header.setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        header.setSectionResizeMode(EXPECT_COLUMN, QHeaderView.ResizeMode.Stretch)
        self.editor: CaseEditor = CaseEditor(self.ref)
        self.empty_label = QLabel(EMPTY_TEXT)
        self.empty_label.setObjectName("testsEmpty")
        self.empty_label.setWordWrap(True)
        self.empty_label.setAlignment(Qt.AlignmentFlag.AlignTop | Qt.AlignmentFlag.AlignLeft)
        self.empty_label.setContentsMargins(12, 12, 12, 12)
        self.empty_label.setMaximumWidth(720)
        self.results_note = QLabel()
        self.results_note.setObjectName("resultsNote")
        self.results_note.setWordWrap(True)
        self.results_note.hide()

        self.split = QSplitter(Qt.Orientation.Vertical)
        self.split.setObjectName("testsSplit")
        self.split.setChildrenCollapsible(False)
        self.split.addWidget(self.table)
        self.split.addWidget(self.editor)
        self.split.setStretchFactor(0, 1)
        self.split.setStretchFactor(1, 3)
        empty_page = QWidget()
        empty_layout = QVBoxLayout(empty_page)
        empty_layout.addWidget(self.empty_label)
        empty_layout.addStretch(1)
        self.stack = QStackedWidget()
        self.stack.addWidget(empty_page)
        self.stack.addWidget(self.split)

        body = QWidget()
        layout = QVBoxLayout(body)
        layout.setContentsMargins(0, 4, 0, 0)
        layout.addLayout(self._build_buttons())
        layout.addWidget(self.stack, 1)
        layout.addWidget(self.results_note)
        self.hints = ToolHintsView(self.ref)
        layout.addWidget(self.hints)
        outer = self.layout()
        assert outer is not None
        outer.addWidget(body)
        body.show()  # added while the panel is being shown: shown now, not on the next turn

        self.table.selectionModel().selectionChanged.connect(self._on_selection_changed)
        self.editor.renamed.connect(self._on_renamed)
        self.editor.form_replaced.connect(self.fields_added)
        self._sync_cases()
        self.fields_added.emit(self)

    def _build_buttons(self) -> QHBoxLayout:
        self.new_button = QToolButton()
        self.new_button.setObjectName("newCase")
        self.new_button.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonTextBesideIcon)
        self.new_button.setPopupMode(QToolButton.ToolButtonPopupMode.MenuButtonPopup)
        self.new_action = QAction(icon("add"), "Ne&w case", self)
        self.new_action.setToolTip("A new case with the sample values under the template")
        self.new_action.triggered.connect(lambda: self.add_case(from_samples=True))
        self.new_button.setDefaultAction(self.new_action)
        menu = QMenu(self.new_button)
        menu.addAction("With the sample values", lambda: self.add_case(from_samples=True))
        menu.addAction("With empty arguments", lambda: self.add_case(from_samples=False))
        menu.addAction("A caller case: a request in words", lambda: self.add_caller_case())
        self.new_button.setMenu(menu)
        self.new_caller_button = QPushButton(icon("add"), "New caller case")
        self.new_caller_button.setObjectName("newCallerCase")
        self.new_caller_button.setToolTip(
            "A case that starts from a request in words: a caller model picks the tool and "
            "fills its arguments"
        )
        self.new_caller_button.clicked.connect(lambda: self.add_caller_case())
        self.duplicate_button = QPushButton(icon("duplicate"), "D&uplicate")
        self.duplicate_button.setObjectName("duplicateCase")
        self.duplicate_button.setToolTip("A copy of the selected case")
        self.delete_button = QPushButton(icon("delete"), "De&lete")
        self.delete_button.setObjectName("deleteCase")
        self.delete_button.setToolTip("Delete the selected case (Delete; Ctrl+Z brings it back)")
        self.grow_button = QPushButton("&Grow cases…")
        self.grow_button.setObjectName("growCases")
        self.grow_button.setToolTip(
            "Proposed cases to tick: bounds, enum values and optional parameters of the "
            "schema, served calls from History, requests in words from the authoring model"
        )
        self.grow_button.clicked.connect(self.grow_cases)
        self.run_button = QPushButton(icon("tool"), "&Run case")
        self.run_button.setObjectName("runCase")
        self.run_button.setToolTip("Run the selected case and show the results")
        self.run_all_button = QPushButton("Run &all")
        self.run_all_button.setObjectName("runAllCases")
        self.run_all_button.setToolTip("Run every case of this tool and show the results")
        delete_key = QAction(self.table)
        delete_key.setShortcut(QKeySequence(QKeySequence.StandardKey.Delete))
        delete_key.setShortcutContext(Qt.ShortcutContext.WidgetShortcut)
        delete_key.triggered.connect(self.delete_case)
        self.table.addAction(delete_key)
        self.duplicate_button.clicked.connect(self.duplicate_case)
        self.delete_button.clicked.connect(self.delete_case)
        self.run_button.clicked.connect(self.run_case)
        self.run_all_button.clicked.connect(self.run_all)
        row = QHBoxLayout()
        row.setContentsMargins(0, 0, 0, 0)
        for button in (
            self.new_button,
            self.new_caller_button,
            self.duplicate_button,
            self.delete_button,
            self.grow_button,
        ):
            row.addWidget(button)
        row.addStretch(1)
        row.addWidget(self.run_button)
        row.addWidget(self.run_all_button)
        return row

    # -- the cases -------------------------------------------------------------------------

    def selected_case(self) -> str | None:
        """The name of the selected case (None: none)."""
        return self.editor.case_name() if self._built else None

    def select_case(self, name: str | None) -> None:
        """Select the case named ``name`` and show it in the editor."""
        row = self.model.row_of(name) if name is not None else None
        selection = self.table.selectionModel()
        self._syncing = True
        try:
            if row is None:
                selection.clearSelection()
            else:
                index = self.model.index(row, CASE_COLUMN)
                selection.setCurrentIndex(
                    index,
                    QItemSelectionModel.SelectionFlag.ClearAndSelect
                    | QItemSelectionModel.SelectionFlag.Rows,
                )
                self.table.scrollTo(index)
        finally:
            self._syncing = False
        if name != self.editor.case_name():
            self.editor.show_case(name)
        else:
            self.editor.refresh()
        self._update_actions()

    def _sync_cases(self) -> None:
        tool = self.ref.tool()
        cases = list(tool.tests) if tool is not None else []
        names = [case.name for case in cases]
        was, row = self.editor.case_name(), self._current_row()
        self._syncing = True
        try:
            self.model.set_cases(cases, tool.name if tool is not None else "")
        finally:
            self._syncing = False
        wanted, self._wanted = self._wanted, None
        if wanted in names:
            chosen: str | None = wanted
        elif was in names:
            chosen = was
        elif names:
            chosen = names[min(row if row is not None else 0, len(names) - 1)]
        else:
            chosen = None
        self.stack.setCurrentIndex(1 if cases else 0)
        self.select_case(chosen)

    def _current_row(self) -> int | None:
        rows = self.table.selectionModel().selectedRows()
        return rows[0].row() if rows else None

    def _update_actions(self) -> None:
        tool = self.ref.tool()
        count = len(tool.tests) if tool is not None else 0
        selected = self.editor.case() is not None
        for button in (self.duplicate_button, self.delete_button, self.run_button):
            button.setEnabled(selected)
        self.run_all_button.setEnabled(count > 0)
        self.run_all_button.setText(f"Run &all ({count})" if count else "Run &all")
        self.new_action.setEnabled(tool is not None)
        self.new_caller_button.setEnabled(tool is not None)

    def _on_selection_changed(self) -> None:
        if self._syncing:
            return
        row = self._current_row()
        cases = self.model.cases()
        self.editor.show_case(cases[row].name if row is not None else None)
        self._update_actions()

    def _on_renamed(self, _name: str) -> None:
        self._update_actions()

    def _on_tool_changed(self, part: FieldPath) -> None:
        if not self._built:
            return
        if part[:1] in ((), ("tests",)):
            self._sync_cases()
        if part[:1] in ((), ("parameters",)):
            if self.isVisible():
                self.editor.set_parameters()
            else:
                self._form_stale = True
        if part[:1] in ((), ("name",)):
            self.refresh_results()

    # -- actions ---------------------------------------------------------------------------

    def add_case(self, *, from_samples: bool = True) -> str | None:
        """Add a case (with the sample values, or empty arguments), select it and focus its
        name; returns its name (None when the tool is gone)."""
        tool = self.ref.tool()
        if tool is None:
            return None
        arguments = self._sample_arguments() if from_samples and self._sample_arguments else {}
        name = unique_case_name(self.document, tool.name, f"Case {len(tool.tests) + 1}")
        self._wanted = name
        added = add_test_case(self.document, tool.name, new_case(name, arguments))
        if added is not None and self._built:
            self.editor.name_edit.setFocus(Qt.FocusReason.OtherFocusReason)
            self.editor.name_edit.selectAll()
        return added

    def add_caller_case(self, ask: str | None = None) -> str | None:
        """Add a caller case for the request ``ask``, select it and focus its request; returns
        its name (None when the tool is gone). Without ``ask``, a dialog (a ``QInputDialog``
        child, window-modal) asks for the request first, and the case is added once it is
        given."""
        tool = self.ref.tool()
        if tool is None:
            return None
        if ask is None:
            self._ask_for_request(tool.name)
            return None
        name = ask_case_name(self.document, tool.name, ask)
        self._wanted = name
        added = add_test_case(self.document, tool.name, new_caller_case(name, ask.strip()))
        if added is not None and self._built:
            self.editor.ask.edit.setFocus(Qt.FocusReason.OtherFocusReason)
        return added

    def grow_cases(self) -> None:
        """Open *Grow cases…* (``app/authoring/grow_dialog.py``); the ticked proposals are added
        as one undo step and the first of them selected."""
        from app.authoring.grow_dialog import open_grow_dialog
        from app.authoring.model_choice import preferred_authoring_model

        tool = self.ref.tool()
        if tool is None:
            return
        store = self._history() if self._history is not None else None

        def added(names: list[str]) -> None:
            if names and self._built:
                self.select_case(names[0])

        self.grow_dialog = open_grow_dialog(
            self, self.document, tool, store, added, chosen_model=preferred_authoring_model(self)
        )

    def _ask_for_request(self, tool_name: str) -> None:
        dialog = QInputDialog(self)
        dialog.setObjectName("callerCaseRequest")
        dialog.setWindowTitle(f"New caller case · {tool_name}")
        dialog.setOption(QInputDialog.InputDialogOption.UsePlainTextEditForTextInput)
        dialog.setLabelText(
            "The request, as a person would type it to a client. A caller model reads it with "
            f"the tool list a client sees; the case checks that it calls {tool_name}, then the "
            "answer."
        )
        dialog.setOkButtonText("Add case")
        buttons = dialog.findChild(QDialogButtonBox)
        if buttons is not None:
            ok = buttons.button(QDialogButtonBox.StandardButton.Ok)
            ok.setEnabled(False)
            dialog.textValueChanged.connect(lambda text: ok.setEnabled(bool(text.strip())))
        dialog.textValueSelected.connect(lambda text: self.add_caller_case(text))
        dialog.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        dialog.open()

    def duplicate_case(self) -> str | None:
        """Add a copy of the selected case after the others and select it; returns its name."""
        tool, case = self.ref.tool(), self.editor.case()
        if tool is None or case is None:
            return None
        copy = case.model_copy(
            update={"name": unique_case_name(self.document, tool.name, f"{case.name} copy")}
        )
        self._wanted = copy.name
        return add_test_case(self.document, tool.name, copy)

    def delete_case(self) -> bool:
        """Delete the selected case (one undo step); the next one is selected."""
        tool, name = self.ref.tool(), self.editor.case_name()
        if tool is None or name is None:
            return False
        return remove_test_case(self.document, tool.name, name)

    def run_case(self) -> None:
        """Ask for a run of the selected case."""
        tool, name = self.ref.tool(), self.editor.case_name()
        if tool is not None and name is not None:
            self.run_requested.emit([(tool.name, name)])

    def run_all(self) -> None:
        """Ask for a run of every case of the tool."""
        tool = self.ref.tool()
        if tool is not None and tool.tests:
            self.run_requested.emit([(tool.name, case.name) for case in tool.tests])

    # -- results ---------------------------------------------------------------------------

    def refresh_results(self) -> None:
        """Read the last results of the tool's cases from the history again."""
        if not self._built:
            return
        rows: list[CaseRunRecord] = []
        note = ""
        path, tool = self.document.path, self.ref.tool()
        store = self._history() if self._history is not None and path is not None else None
        if store is not None and path is not None and tool is not None:
            try:
                rows = store.case_runs(agent_path=agent_key(str(path)), limit=_RESULT_LIMIT)
            except HistoryError as exc:
                note = f"The last results cannot be read: {exc}"
        self.model.set_results(latest_results(rows, tool.name) if tool is not None else {})
        self.select_case(self.editor.case_name())
        self.results_note.setText(note)
        self.results_note.setVisible(bool(note))

    def changeEvent(self, event: QEvent) -> None:  # noqa: N802 (Qt override)
        """Recolour passes and failures when the palette changes (light ↔ dark)."""
        if event.type() == QEvent.Type.PaletteChange and self._built:
            self.model.set_palette(self.palette())
        super().changeEvent(event)
