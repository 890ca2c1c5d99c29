"""The history view of one agent: its chats, tool tests and served calls, and their transcripts.

A table of conversations (``HistoryTableModel``, which reads them a page at a time as the table
scrolls) filtered by tool, status, text (what was said, too) and whether they are test cases'
runs (marked ``case run`` with their case and model), and sorted by a column header; a filter
that hides the conversation shown in the side pane clears the pane. Opening a row
(double-click or Enter) shows its whole conversation read-only in the side pane, wrapped to the
pane's width, with the figures of the conversation and of each answer. The tool run that started
a selected conversation can be run again with the same arguments
(:attr:`HistoryView.rerun_requested`, which the main window answers by opening the test dialog
or a chat tab), or saved as a test case of its tool in the open agent (the row's context menu,
or the button above the transcript for the run shown; text selected in the transcript becomes
what the answer must contain). The store is shared with ``metaagent serve``, so Refresh shows
calls served since the view was opened.
"""

from __future__ import annotations

import html
import json
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QModelIndex, QPersistentModelIndex, QPoint, Qt, Signal
from PySide6.QtWidgets import (
    QAbstractItemView,
    QComboBox,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QMenu,
    QPushButton,
    QSplitter,
    QStackedWidget,
    QTableView,
    QTextBrowser,
    QVBoxLayout,
    QWidget,
)

from app.document.agent_document import AgentDocument
from app.errors import reporter
from app.history.caller_runs import caller_facts, caller_part
from app.history.columns import ColumnWidths
from app.history.model import (
    ALL,
    COLUMNS,
    ERROR_COLOR,
    HistoryEntry,
    HistoryTableModel,
    local_time,
)
from app.row_choice import choose_row
from app.save_case_dialog import SaveCaseDialog, open_save_case_dialog
from mcp_export.history.figures import (
    ANSWER_COST,
    ANSWER_TIME,
    ANSWER_TOKENS,
    CONVERSATION_TIME,
    CONVERSATION_TOKENS,
    Figures,
    answer_costs,
    answers,
)

if TYPE_CHECKING:
    from mcp_export.history.schema import RunRecord, StoredMessage
    from mcp_export.history.store import HistoryStore

__all__ = ["HistoryView", "transcript_html"]

_STATUSES = ("complete", "error", "pending")
_NO_TRANSCRIPT = "Open a row (double-click or Enter) to read its conversation here."
_HIDDEN_TRANSCRIPT = (
    "The conversation shown here is hidden by the filters. Open a row (double-click or Enter) "
    "to read its conversation here."
)
_CASE_CHOICES: dict[str, tuple[str, bool | None]] = {
    "all": ("All runs", None),
    "without": ("Without case runs", False),
    "only": ("Case runs only", True),
}
"""The case runs filter's choices: key, label, and what the model's ``case_runs`` is."""
_SAVE_CASE = "Save as test case…"
_SAVE_CASE_TIP = (
    "Keep the run's arguments as a test case of its tool (select a part of the answer in the "
    "transcript first to require it)"
)


class HistoryView(QWidget):
    """Chats and runs of one agent, from the history store, with a read-only transcript pane.

    Args:
        agent_name: the agent's name (finds its threads while it has no file).
        agent_path: the agent file, or None for an unsaved agent.
        store: the history store (not closed by the view).
        parent: the parent widget.

    The open agent that test cases are saved into is the view's ``document``, which the main
    window sets (the view closes with it); without one, runs cannot be saved as cases.

    Signals:
        rerun_requested(tool, arguments): run ``tool`` again with these stored arguments.
    """

    rerun_requested = Signal(str, dict)

    def __init__(
        self,
        agent_name: str,
        agent_path: Path | None,
        store: HistoryStore,
        parent: QWidget | None = None,
    ) -> None:
        super().__init__(parent)
        self.agent_name = agent_name
        self.agent_path = agent_path
        self.store = store
        self.model = HistoryTableModel(store, agent_name, agent_path, self)
        self._opened: HistoryEntry | None = None
        self._has_any = False
        self._build()
        self.refresh()

    # -- layout -----------------------------------------------------------------------------

    def _build(self) -> None:
        self.tool_combo = QComboBox()
        self.tool_combo.setAccessibleName("Tool filter")
        self.tool_combo.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToContents)
        self.status_combo = QComboBox()
        self.status_combo.setAccessibleName("Status filter")
        self.status_combo.addItem("All statuses", ALL)
        for status in _STATUSES:
            self.status_combo.addItem(status, status)
        self.cases_combo = QComboBox()
        self.cases_combo.setAccessibleName("Case runs filter")
        self.cases_combo.setToolTip(
            "Whether to list the served calls that test cases made (marked “case run”)"
        )
        for key, (label, _) in _CASE_CHOICES.items():
            self.cases_combo.addItem(label, key)
        self.search = QLineEdit()
        self.search.setPlaceholderText("Filter by text…")
        self.search.setToolTip(
            "Finds conversations whose title, tool, caller, prompt, answer, messages, test case "
            "or model contain the text"
        )
        self.search.setClearButtonEnabled(True)
        self.refresh_button = QPushButton("Refresh")
        self.refresh_button.setToolTip("Read the history again (calls served meanwhile appear)")
        self.rerun_button = QPushButton("Re-run")
        self.rerun_button.setToolTip("Run the selected tool again with the same arguments")
        self.rerun_button.setEnabled(False)

        filters = QHBoxLayout()
        filters.addWidget(QLabel("Tool:"))
        filters.addWidget(self.tool_combo)
        filters.addWidget(QLabel("Status:"))
        filters.addWidget(self.status_combo)
        filters.addWidget(self.cases_combo)
        filters.addWidget(self.search, 1)
        filters.addWidget(self.refresh_button)
        filters.addWidget(self.rerun_button)

        self.table = QTableView()
        header = self.table.horizontalHeader()
        header.setSortIndicator(COLUMNS.index("Started"), Qt.SortOrder.DescendingOrder)
        # Before the model is set, so enabling it does not read the history once more.
        self.table.setSortingEnabled(True)
        self.table.setModel(self.model)
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.table.verticalHeader().hide()
        self.table.setWordWrap(False)
        self.table.setHorizontalScrollMode(QAbstractItemView.ScrollMode.ScrollPerPixel)
        self._columns = ColumnWidths(self.table)
        self.empty_label = QLabel()
        self.empty_label.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.empty_label.setWordWrap(True)
        self.empty_label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.stack = QStackedWidget()
        self.stack.addWidget(self.table)
        self.stack.addWidget(self.empty_label)

        self.transcript = QTextBrowser()
        self.transcript.setReadOnly(True)
        self.transcript.setOpenLinks(False)
        self.transcript.setAccessibleName("Transcript")
        self.transcript.setPlaceholderText(_NO_TRANSCRIPT)
        side = QWidget()
        side_layout = QVBoxLayout(side)
        side_layout.setContentsMargins(0, 0, 0, 0)
        self.save_case_button = QPushButton(_SAVE_CASE)
        self.save_case_button.setObjectName("saveCaseButton")
        self.save_case_button.setToolTip(_SAVE_CASE_TIP)
        self.save_case_button.setEnabled(False)
        side_heading = QHBoxLayout()
        side_heading.addWidget(QLabel("Transcript (read only)"), 1)
        side_heading.addWidget(self.save_case_button)
        side_layout.addLayout(side_heading)
        side_layout.addWidget(self.transcript)

        splitter = QSplitter(Qt.Orientation.Horizontal)
        splitter.addWidget(self.stack)
        splitter.addWidget(side)
        splitter.setStretchFactor(0, 2)
        splitter.setStretchFactor(1, 1)
        splitter.setChildrenCollapsible(False)

        title = QLabel(f"<b>History of {html.escape(self.agent_name)}</b>")
        layout = QVBoxLayout(self)
        layout.addWidget(title)
        layout.addLayout(filters)
        layout.addWidget(splitter, 1)

        self.model.searched.connect(self._update_state)
        self.model.failed.connect(lambda message: reporter().error(message))
        self.tool_combo.currentIndexChanged.connect(self._on_filters_changed)
        self.status_combo.currentIndexChanged.connect(self._on_filters_changed)
        self.cases_combo.currentIndexChanged.connect(self._on_filters_changed)
        self.search.textChanged.connect(self._on_filters_changed)
        self.refresh_button.clicked.connect(self.refresh)
        self.rerun_button.clicked.connect(self.rerun_selected)
        self.table.activated.connect(self._on_row_activated)
        self.table.setContextMenuPolicy(Qt.ContextMenuPolicy.CustomContextMenu)
        self.table.customContextMenuRequested.connect(self._on_context_menu)
        self.save_case_button.clicked.connect(lambda: self.save_as_test_case(self._opened))
        self.table.selectionModel().currentRowChanged.connect(self._on_selection_changed)

    # -- public API ---------------------------------------------------------------------------

    def refresh(self) -> None:
        """Read the agent's history again; filters and the open transcript are kept."""
        self._has_any = self.model.has_any()
        self._fill_tool_combo()  # and read the first page with the filters it leaves
        if self._opened is not None:
            # Show the newest state of the open conversation (a pending run may have finished).
            same = [e for e in self.model.entries() if _same(e, self._opened)]
            self._show_transcript(same[0] if same else self._opened)

    def set_tool_filter(self, tool: str) -> None:
        """Show only ``tool``'s runs (``""``: all)."""
        index = self.tool_combo.findData(tool)
        self.tool_combo.setCurrentIndex(max(index, 0))

    def set_status_filter(self, status: str) -> None:
        """Show only rows with ``status`` (``complete``, ``error``, ``pending``; ``""``: all)."""
        index = self.status_combo.findData(status)
        self.status_combo.setCurrentIndex(max(index, 0))

    def set_case_runs_filter(self, choice: str) -> None:
        """List ``all`` runs, those ``without`` test cases' runs, or ``only`` those."""
        index = self.cases_combo.findData(choice)
        self.cases_combo.setCurrentIndex(max(index, 0))

    def visible_entries(self) -> list[HistoryEntry]:
        """The rows the table has read so far, top to bottom (more come as it scrolls)."""
        return self.model.entries()

    def selected_entry(self) -> HistoryEntry | None:
        """The entry of the current row, if any."""
        index = self.table.currentIndex()
        return self.model.entry(index.row()) if index.isValid() else None

    def select_row(self, row: int) -> None:
        """Make row ``row`` current (it is not opened)."""
        choose_row(self.table, row)

    def open_entry(self, row: int) -> None:
        """Show the transcript of row ``row``."""
        self.select_row(row)
        self._show_transcript(self.model.entry(row))

    def opened_entry(self) -> HistoryEntry | None:
        """The entry whose transcript is shown."""
        return self._opened

    def rerun_selected(self) -> None:
        """Emit :attr:`rerun_requested` for the selected run (nothing for a chat)."""
        entry = self.selected_entry()
        if entry is not None:
            self._rerun(entry)

    def row_menu(self, row: int) -> QMenu:
        """The context menu of row ``row``: Open, Re-run and Save as test case."""
        entry = self.model.entry(row)
        menu = QMenu(self)
        menu.addAction("Open transcript", lambda: self.open_entry(row))
        rerun = menu.addAction("Re-run", lambda: self._rerun(entry))
        save = menu.addAction(_SAVE_CASE, lambda: self.save_as_test_case(entry))
        save.setToolTip(_SAVE_CASE_TIP)
        rerun.setEnabled(entry.run is not None)
        save.setEnabled(self._can_save(entry))
        return menu

    def save_as_test_case(self, entry: HistoryEntry | None) -> SaveCaseDialog | None:
        """Open the dialog that saves ``entry``'s run as a test case of its tool in the open
        agent; the text selected in its shown transcript pre-fills what the answer must contain.

        Returns:
            The dialog; None for a chat, without an open agent, or (reported) when the agent
            has no such tool any more.
        """
        document = self._document()
        if entry is None or entry.run is None or document is None:
            return None
        run = entry.run
        failed = run.status == "error"
        selected = ""
        if self._opened is not None and _same(self._opened, entry):
            selected = self.transcript.textCursor().selection().toPlainText().strip()
        return open_save_case_dialog(
            document,
            run.tool_name,
            run.arguments,
            answer=(run.error if failed else run.answer) or "",
            contains=selected,
            failed=failed,
            parent=self,
        )

    # -- reactions ----------------------------------------------------------------------------

    def _document(self) -> AgentDocument | None:
        # Set by the main window after it builds the view (its run tabs close with their agent).
        document = getattr(self, "document", None)
        return document if isinstance(document, AgentDocument) else None

    def _can_save(self, entry: HistoryEntry | None) -> bool:
        return entry is not None and entry.run is not None and self._document() is not None

    def _rerun(self, entry: HistoryEntry) -> None:
        if entry.run is not None:
            self.rerun_requested.emit(entry.run.tool_name, dict(entry.run.arguments))

    def _on_context_menu(self, position: QPoint) -> None:
        index = self.table.indexAt(position)
        if not index.isValid():
            return
        self.select_row(index.row())
        menu = self.row_menu(index.row())
        menu.exec(self.table.viewport().mapToGlobal(position))
        menu.deleteLater()

    def _fill_tool_combo(self) -> None:
        chosen = self.tool_combo.currentData()
        self.tool_combo.blockSignals(True)
        try:
            self.tool_combo.clear()
            self.tool_combo.addItem("All tools", ALL)
            for tool in self.model.tools():
                self.tool_combo.addItem(tool, tool)
            index = self.tool_combo.findData(chosen) if isinstance(chosen, str) else 0
            self.tool_combo.setCurrentIndex(max(index, 0))
        finally:
            self.tool_combo.blockSignals(False)
        self._on_filters_changed()

    def _on_filters_changed(self, *_: Any) -> None:
        choice = _CASE_CHOICES.get(str(self.cases_combo.currentData()), _CASE_CHOICES["all"])
        self.model.set_filters(
            tool=str(self.tool_combo.currentData() or ALL),
            status=str(self.status_combo.currentData() or ALL),
            text=self.search.text(),
            case_runs=choice[1],
        )
        opened = self._opened
        if opened is not None and opened.thread_id and not self.model.shows(opened.thread_id):
            self._show_transcript(None)
            self.transcript.setHtml(f'<p style="color:gray"><i>{_HIDDEN_TRANSCRIPT}</i></p>')

    def _on_row_activated(self, index: QModelIndex | QPersistentModelIndex) -> None:
        if index.isValid():
            self._show_transcript(self.model.entry(index.row()))

    def _on_selection_changed(self, *_: Any) -> None:
        entry = self.selected_entry()
        self.rerun_button.setEnabled(entry is not None and entry.run is not None)

    def _show_transcript(self, entry: HistoryEntry | None) -> None:
        from mcp_export.errors import HistoryError

        self._opened = entry
        self.save_case_button.setEnabled(self._can_save(entry))
        if entry is None:
            self.transcript.clear()
            return
        caller = ""
        runs: list[RunRecord] = []
        try:
            messages = self.store.messages(entry.thread_id) if entry.thread_id else []
            if entry.run is not None and entry.thread_id:
                runs = self.store.runs(thread_id=entry.thread_id)
            if entry.case is not None and entry.case.caller and entry.thread_id:
                caller = caller_part(self.store, entry.thread_id, entry.case)  # caller's first
                if not entry.case.served:
                    messages = []  # the caller's turn: its side above says all of it
        except HistoryError as exc:
            reporter().error(f"Could not read the conversation: {exc}")
            messages = []
        self.transcript.setHtml(caller + transcript_html(entry, messages, runs))

    def _update_state(self) -> None:
        if self.model.rowCount() > 0:
            self.stack.setCurrentWidget(self.table)
        else:
            if not self._has_any:
                text = (
                    f"No history for {self.agent_name} yet.\n\nChats, tool tests and calls "
                    "served with `metaagent serve` appear here once they have run. Press "
                    "Refresh to look again."
                )
            elif self.model.searching:
                text = "Searching the history…"
            else:
                text = (
                    "Nothing matches the filters.\n\nChoose “All tools” and “All statuses”, or "
                    "clear the text filter."
                )
            self.empty_label.setText(text)
            self.stack.setCurrentWidget(self.empty_label)
        self._on_selection_changed()


# -- the transcript (pure: tested without widgets) ---------------------------------------------

_ROLE_TITLES = {"user": "User", "assistant": "Assistant", "system": "System prompt"}


def _pre(text: str) -> str:
    # pre-wrap: kept as written, but wrapped at the pane's edge instead of scrolling sideways.
    return f'<pre style="white-space: pre-wrap">{html.escape(text, quote=False)}</pre>'


def _json(value: Any) -> str:
    return json.dumps(value, indent=2, ensure_ascii=False, default=str)


def _error(text: str) -> str:
    return f'<p style="color:{ERROR_COLOR.name()}"><b>Error:</b> {html.escape(text)}</p>'


def _figures(time_label: str, tokens_label: str, figures: Figures) -> str:
    return f"{time_label}: {figures.time()} · {tokens_label}: {figures.tokens()}"


def transcript_html(
    entry: HistoryEntry, messages: list[StoredMessage], runs: Sequence[RunRecord] = ()
) -> str:
    """The entry as read-only rich text: a header, then every message of its thread.

    The header has the conversation's figures, and the message that ends each answer the
    answer's (labelled as the chat tab labels them), with what it cost when ``runs`` (the
    conversation's runs) recorded it. User and assistant text, each tool call
    with its arguments, each tool result (errors in red), failed or unfinished model requests;
    a run shows its arguments first and, when its thread is gone, its answer or error. Long
    lines wrap at the pane's width.
    """
    parts = [f"<h3>{html.escape(entry.title or entry.tool or 'Conversation')}</h3>"]
    facts = [entry.kind, entry.status, local_time(entry.started)]
    if entry.case is not None and entry.case.caller:
        facts.append(caller_facts(entry.case))
    elif entry.case is not None:
        facts.append(f"test case {entry.case.case_name} on {entry.case.model}")
    if entry.cost_text:
        facts.append(entry.cost_text)
    if entry.caller:
        facts.append(f"called by {entry.caller}")
    parts.append(f"<p><i>{html.escape(' · '.join(facts))}</i></p>")
    if entry.status != "pending" or entry.duration_ms is not None or entry.tokens_in is not None:
        shown = _figures(CONVERSATION_TIME, CONVERSATION_TOKENS, entry.figures)
        parts.append(f"<p><i>{html.escape(shown)}</i></p>")
    run = entry.run
    if run is not None:
        parts.append(f"<p><b>Tool {html.escape(run.tool_name)}</b>, arguments:</p>")
        parts.append(_pre(_json(run.arguments)))
    ended, costs = answers(messages), answer_costs(messages, runs)
    for message in messages:
        parts.append(_message_html(message))
        answer = ended.get(message.id)
        if answer is not None:
            shown = _figures(ANSWER_TIME, ANSWER_TOKENS, answer)
            cost = costs.get(message.id)
            if cost is not None:
                shown += f" · {ANSWER_COST}: {cost.text()}"
            parts.append(f'<p style="color:gray"><i>{html.escape(shown)}</i></p>')
    if run is not None and not messages:
        if run.answer:
            parts.append("<p><b>Answer</b></p>" + _pre(run.answer))
        if run.error:
            parts.append(_error(run.error))
    elif run is not None and run.status == "error" and run.error:
        parts.append(_error(f"the run failed: {run.error}"))
    return "\n".join(parts)


def _message_html(message: StoredMessage) -> str:
    if message.role == "tool":
        title = f"Tool result · {message.name or message.tool_call_id or '?'}"
        if message.is_error:
            return (
                f'<p style="color:{ERROR_COLOR.name()}"><b>{html.escape(title)} (error)</b></p>'
                + _pre(message.content)
            )
        return f"<p><b>{html.escape(title)}</b></p>" + _pre(message.content)
    title = _ROLE_TITLES.get(message.role, message.role.title())
    parts = [f"<p><b>{html.escape(title)}</b></p>"]
    if message.content:
        parts.append(_pre(message.content))
    for call in message.tool_calls or []:
        name = str(call.get("name", "?"))
        arguments = call.get("arguments", {})
        if isinstance(arguments, str):
            try:
                arguments = json.loads(arguments)
            except json.JSONDecodeError:
                pass  # shown as the text it is
        parts.append(f"<p>→ calls <b>{html.escape(name)}</b> with:</p>" + _pre(_json(arguments)))
    if message.status == "error":
        parts.append(_error(message.error or "the model request failed"))
    elif message.status == "pending":
        parts.append("<p><i>(no answer yet: still running, or the process ended)</i></p>")
    return "".join(parts)


def _same(a: HistoryEntry, b: HistoryEntry) -> bool:
    return a.thread_id == b.thread_id
