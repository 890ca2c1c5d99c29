"""*Grow cases…*: proposed test cases of a tool, to tick and add as one undo step.

:class:`GrowDialog` lists the proposals of :mod:`mcp_export.authoring.grow` under their source
(from the schema: bounds, enum values, optional parameters; from History: served calls no case
has yet), each with what it calls with and what it expects; the selected one's served answer
(or request) shows below. *Ask for requests in words* asks the authoring model
(:mod:`mcp_export.authoring.grow_requests`) on the qasync loop and adds its caller cases to the
list. *Add N cases* accepts; :func:`add_grown_cases` adds the ticked ones to the open agent in
one undo step. Nothing changes in the agent before that.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QPlainTextEdit,
    QPushButton,
    QTreeWidget,
    QTreeWidgetItem,
    QVBoxLayout,
    QWidget,
)

from app.document.test_cases import add_test_case
from mcp_export.authoring.grow import GrowError, Proposal, history_proposals, schema_proposals
from mcp_export.errors import ExportError
from schema_types.agent import ToolDefinition

if TYPE_CHECKING:
    from app.document.agent_document import AgentDocument
    from mcp_export.history.store import HistoryStore

__all__ = ["GROUPS", "GrowDialog", "add_grown_cases", "model_question", "open_grow_dialog"]

GROUPS = {
    "schema": "From the schema",
    "history": "From History (served calls)",
    "requests": "Requests in words",
}

_INTRO = (
    "Proposed test cases for <b>{tool}</b>. Tick the ones to add: they are added together, "
    "one undo step; nothing changes before you press Add."
)


def _called_with(proposal: Proposal) -> str:
    case = proposal.case
    if case.ask is not None:
        return case.ask
    return json.dumps(case.arguments, ensure_ascii=False)


def _expects(proposal: Proposal) -> str:
    expect = proposal.case.expect.to_data()
    expect.pop("truncated", None)
    if not expect:
        return "succeeds"
    return ", ".join(f"{k}: {json.dumps(v, ensure_ascii=False)}" for k, v in expect.items())


class GrowDialog(QDialog):
    """The proposals for one tool, to tick.

    Args:
        tool: the tool as it is now (its cases included: proposals equal to one are left out).
        agent_path: the agent file (History's served calls are those of this file); None: an
            unsaved agent, no History proposals.
        history: the history store (None: History is off).
        ask_model: starts the authoring model's question for requests in words, returning the
            coroutine that gives the proposals; None: the button is hidden.
        parent: the owning widget.

    Attributes:
        tree: the proposals under their sources, each checkable.
        detail: the selected proposal's served answer or request.
        ask_button: asks the authoring model for requests in words.
        status: what the model said, or why History could not be read.
        add_button: accepts the ticked proposals.
    """

    def __init__(
        self,
        tool: ToolDefinition,
        *,
        agent_path: Path | None,
        history: HistoryStore | None,
        ask_model: Callable[[], asyncio.Future[list[Proposal]] | None] | None = None,
        parent: QWidget | None = None,
    ) -> None:
        super().__init__(parent)
        self.setObjectName("growDialog")
        self.setWindowTitle(f"Grow cases · {tool.name}")
        self.setWindowModality(Qt.WindowModality.WindowModal)
        self.resize(900, 560)
        self._tool = tool
        self._ask_model = ask_model
        self._items: list[tuple[QTreeWidgetItem, Proposal]] = []
        self._groups: dict[str, QTreeWidgetItem] = {}
        self._task: asyncio.Future[list[Proposal]] | None = None

        intro = QLabel(_INTRO.format(tool=tool.name))
        intro.setWordWrap(True)
        self.tree = QTreeWidget()
        self.tree.setObjectName("growProposals")
        self.tree.setColumnCount(4)
        self.tree.setHeaderLabels(["Case", "Calls with", "Expects", "Why"])
        self.tree.setAlternatingRowColors(True)
        self.tree.setUniformRowHeights(True)
        header = self.tree.header()
        header.setSectionResizeMode(QHeaderView.ResizeMode.Interactive)
        header.setStretchLastSection(True)
        self.detail = QPlainTextEdit()
        self.detail.setObjectName("growDetail")
        self.detail.setReadOnly(True)
        self.detail.setPlaceholderText("The selected proposal's served answer or request")
        self.detail.setMaximumHeight(200)
        self.status = QLabel()
        self.status.setObjectName("growStatus")
        self.status.setWordWrap(True)
        self.status.hide()
        self.ask_button = QPushButton("Ask for requests in words")
        self.ask_button.setObjectName("growAsk")
        self.ask_button.setToolTip(
            "The authoring model writes requests a person would type: paraphrases of what this "
            "tool is for, and requests meant for another tool (it must not be called)"
        )
        self.ask_button.setVisible(ask_model is not None)
        self.ask_button.clicked.connect(self.ask_for_requests)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Cancel)
        self.add_button = buttons.addButton("Add", QDialogButtonBox.ButtonRole.AcceptRole)
        assert self.add_button is not None
        self.add_button.setObjectName("growAdd")
        buttons.accepted.connect(self.accept)
        buttons.rejected.connect(self.reject)
        row = QHBoxLayout()
        row.addWidget(self.ask_button)
        row.addStretch(1)
        row.addWidget(buttons)

        layout = QVBoxLayout(self)
        layout.addWidget(intro)
        layout.addWidget(self.tree, 1)
        layout.addWidget(self.detail)
        layout.addWidget(self.status)
        layout.addLayout(row)

        self.tree.itemChanged.connect(lambda *_: self._update_add())
        self.tree.currentItemChanged.connect(lambda *_: self._show_detail())
        self.add_proposals(schema_proposals(tool))
        if agent_path is not None and history is not None:
            try:
                self.add_proposals(history_proposals(tool, history, agent_path))
            except ExportError as exc:
                self._say(f"History cannot be read: {exc}")
        for column, width in ((0, 300), (1, 230), (2, 140)):
            self.tree.setColumnWidth(column, width)
        self._update_add()

    # -- the list ----------------------------------------------------------------------------

    def _group(self, source: str) -> QTreeWidgetItem:
        group = self._groups.get(source)
        if group is None:
            group = QTreeWidgetItem(self.tree, [GROUPS.get(source, source)])
            group.setFlags(Qt.ItemFlag.ItemIsEnabled)
            font = group.font(0)
            font.setBold(True)
            group.setFont(0, font)
            group.setFirstColumnSpanned(True)
            group.setExpanded(True)
            self._groups[source] = group
        return group

    def add_proposals(self, proposals: Sequence[Proposal]) -> None:
        """List ``proposals`` under their sources, unticked (a name already listed is left
        out)."""
        listed = {p.case.name for _, p in self._items}
        self.tree.blockSignals(True)
        try:
            for proposal in proposals:
                if proposal.case.name in listed:
                    continue
                listed.add(proposal.case.name)
                texts = [proposal.case.name, _called_with(proposal), _expects(proposal)]
                item = QTreeWidgetItem(self._group(proposal.source), [*texts, proposal.why])
                item.setFlags(
                    Qt.ItemFlag.ItemIsEnabled
                    | Qt.ItemFlag.ItemIsSelectable
                    | Qt.ItemFlag.ItemIsUserCheckable
                )
                item.setCheckState(0, Qt.CheckState.Unchecked)
                for column, text in enumerate(texts):
                    item.setToolTip(column, text)
                self._items.append((item, proposal))
        finally:
            self.tree.blockSignals(False)
        if not self._items:
            self._say(f"No new cases to propose for {self._tool.name}: its cases cover these.")
        self._update_add()

    def proposals(self) -> list[Proposal]:
        """Every proposal listed, in order."""
        return [p for _, p in self._items]

    def set_ticked(self, name: str, ticked: bool = True) -> None:
        """Tick (or untick) the proposal named ``name``."""
        for item, proposal in self._items:
            if proposal.case.name == name:
                state = Qt.CheckState.Checked if ticked else Qt.CheckState.Unchecked
                item.setCheckState(0, state)

    def show_proposal(self, name: str) -> None:
        """Select the proposal named ``name`` (its answer or request shows below the list)."""
        for item, proposal in self._items:
            if proposal.case.name == name:
                self.tree.setCurrentItem(item)

    def chosen(self) -> list[Proposal]:
        """The ticked proposals, in list order."""
        return [p for item, p in self._items if item.checkState(0) == Qt.CheckState.Checked]

    def _update_add(self) -> None:
        count = len(self.chosen())
        self.add_button.setText(f"Add {count} case{'s' if count != 1 else ''}")
        self.add_button.setEnabled(count > 0)

    def _show_detail(self) -> None:
        item = self.tree.currentItem()
        found = next((p for i, p in self._items if i is item), None)
        if found is None:
            self.detail.clear()
        elif found.answer is not None:
            self.detail.setPlainText(f"Served answer:\n{found.answer}")
        elif found.case.ask is not None:
            self.detail.setPlainText(f"{found.why}\n{found.case.ask}")
        else:
            called = json.dumps(found.case.arguments, ensure_ascii=False, indent=2)
            self.detail.setPlainText(f"{found.why}\n{called}")

    def _say(self, text: str) -> None:
        self.status.setText(text)
        self.status.setVisible(bool(text))

    # -- the authoring model -----------------------------------------------------------------

    def ask_for_requests(self) -> None:
        """Ask the authoring model for requests in words; they join the list when it answers."""
        if self._ask_model is None or self._task is not None:
            return
        try:
            task = self._ask_model()
        except ExportError as exc:  # no authoring model, or no key for it
            self._say(str(exc))
            return
        if task is None:
            return
        self._task = task
        self.ask_button.setEnabled(False)
        self._say("Asking the authoring model for requests in words…")
        task.add_done_callback(self._asked)

    def _asked(self, task: asyncio.Future[list[Proposal]]) -> None:
        self._task = None
        self.ask_button.setEnabled(True)
        if task.cancelled():
            self._say("The question was cancelled.")
            return
        exc = task.exception()
        if isinstance(exc, GrowError | ExportError):
            self._say(str(exc))
            return
        if exc is not None:
            self._say(f"The authoring model failed: {exc}")
            return
        found = task.result()
        self._say(f"The authoring model proposed {len(found)} request(s) in words.")
        self.add_proposals(found)

    def done(self, result: int) -> None:
        """Close; a question to the authoring model still in flight is cancelled."""
        if self._task is not None:
            self._task.cancel()
        super().done(result)


def add_grown_cases(
    document: AgentDocument, tool_name: str, proposals: Sequence[Proposal]
) -> list[str]:
    """Add the proposals' cases to the tool, renamed where taken, as one undo step; returns
    the names they were added under (those the agent refused are reported and left out)."""
    if not proposals:
        return []
    count = len(proposals)
    added: list[str] = []
    with document.macro(f"Add {count} grown case{'s' if count != 1 else ''} of {tool_name}"):
        for proposal in proposals:
            name = add_test_case(document, tool_name, proposal.case)
            if name is not None:
                added.append(name)
    return added


def model_question(
    document: AgentDocument,
    tool: ToolDefinition,
    history: HistoryStore | None,
    chosen: str | None = None,
) -> Callable[[], asyncio.Future[list[Proposal]] | None]:
    """What *Ask for requests in words* starts: the authoring model (``chosen``, else the
    agent's own) asked on the running loop, recorded in ``history``.

    The returned callable raises ``ExportError`` when there is no authoring model or no key."""

    def start() -> asyncio.Future[list[Proposal]] | None:
        from mcp_export.authoring.exchange import authoring_model
        from mcp_export.authoring.grow_requests import request_proposals
        from mcp_export.history.schema import agent_key

        model = authoring_model(document.agent, chosen)
        path = agent_key(str(document.path)) if document.path is not None else None
        return asyncio.ensure_future(
            request_proposals(tool, model, history=history, agent_path=path)
        )

    return start


def open_grow_dialog(
    parent: QWidget,
    document: AgentDocument,
    tool: ToolDefinition,
    history: HistoryStore | None,
    on_added: Callable[[list[str]], None],
    *,
    chosen_model: str | None = None,
) -> GrowDialog:
    """Open *Grow cases…* for ``tool`` (window-modal, not blocking); on Add, the ticked cases
    go into ``document`` as one undo step and ``on_added`` gets their names."""
    dialog = GrowDialog(
        tool,
        agent_path=document.path,
        history=history,
        ask_model=model_question(document, tool, history, chosen_model),
        parent=parent,
    )
    dialog.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)

    def accepted() -> None:
        on_added(add_grown_cases(document, tool.name, dialog.chosen()))

    dialog.accepted.connect(accepted)
    dialog.open()
    return dialog
