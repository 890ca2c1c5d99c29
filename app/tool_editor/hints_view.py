"""Beside a tool's test cases: how a client's model will read the tool, before any model runs.

:class:`ToolHintsView` shows :func:`mcp_export.hints.agent_report` for the tool its
:class:`~app.document.tool_ref.ToolRef` follows: one line with what its ``tools/list`` entry costs
in tokens (and of that its description, parameters and output schema) and what the agent's whole
list costs, then each hint (a description that does not say when to use the tool, parameters
without a description, unexplained enum values, names that differ only by case, required
parameters the prompt never uses), and which tokenizer counted.

The report is made off the GUI thread (the first one loads the tokenizer's vocabulary, a few
tenths of a second, and a 500-tool agent takes about as long each time), from the document's
agent as it stands: every edit gives the document a new agent object, so the worker reads a
snapshot nobody changes. Edits anywhere in the agent (another tool's name collides, the total
changes) ask for a new report after a short pause; a report made for an older agent is dropped.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from PySide6.QtCore import Qt
from PySide6.QtGui import QShowEvent
from PySide6.QtWidgets import QLabel, QListWidget, QListWidgetItem, QVBoxLayout, QWidget

from app.agent_check_worker import REFRESH_DELAY_MS, AgentCheckWorker
from mcp_export.hints import TOKENIZER_NOTE, HintsReport, ToolReport, agent_report

if TYPE_CHECKING:
    from app.document.tool_ref import ToolRef

__all__ = ["REFRESH_DELAY_MS", "ToolHintsView"]

logger = logging.getLogger(__name__)

_VISIBLE_ROWS = 5


class ToolHintsView(QWidget):
    """The description and schema hints of one tool, with what its listing costs in tokens.

    Args:
        ref: the tool.
        parent: the owning widget.

    Attributes:
        summary: the token line (or why tokens are not counted).
        hints_list: one row per hint (its code and place in the tooltip).
        note: which tokenizer counted.
    """

    def __init__(self, ref: ToolRef, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("toolHints")
        self.ref = ref
        self._report: HintsReport | None = None
        self.summary = QLabel("Counting the tool list's tokens…")
        self.summary.setObjectName("hintsSummary")
        self.summary.setWordWrap(True)
        self.summary.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.hints_list = QListWidget()
        self.hints_list.setObjectName("hintsList")
        self.hints_list.setWordWrap(True)
        self.hints_list.setAlternatingRowColors(True)
        rows = self.fontMetrics().height() + 6
        self.hints_list.setMaximumHeight(_VISIBLE_ROWS * rows + 4)
        self.note = QLabel(f"{TOKENIZER_NOTE[0].upper()}{TOKENIZER_NOTE[1:]}.")
        self.note.setObjectName("hintsNote")
        self.note.setWordWrap(True)
        self.note.setEnabled(False)  # drawn in the dimmed colour: a footnote
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 4, 0, 0)
        layout.setSpacing(2)
        title = QLabel("<b>Description and schema hints</b>")
        title.setToolTip(
            "What a client's model reads before it picks this tool and fills its arguments"
        )
        layout.addWidget(title)
        layout.addWidget(self.summary)
        layout.addWidget(self.hints_list)
        layout.addWidget(self.note)
        self._worker = AgentCheckWorker(
            self,
            ref.document,
            agent_report,
            self._on_report_made,
            thread_name="tool-hints",
            logger=logger,
            failure="the hints of %s could not be made",
        )

    # -- making reports ----------------------------------------------------------------------

    def showEvent(self, event: QShowEvent) -> None:  # noqa: N802 (Qt override)
        """Report on the agent as it is now, unless that is already shown."""
        if self._worker.stale() or self._report is None:
            self.refresh()
        super().showEvent(event)

    def refresh(self) -> None:
        """Make a report on the agent as it stands (in a worker thread; one at a time)."""
        self._worker.refresh()

    def _on_report_made(self, report: object) -> None:
        if isinstance(report, HintsReport):
            self._report = report
            self._show(report)
        else:
            self.summary.setText(f"The hints could not be made: {report}")
            self.hints_list.clear()

    # -- showing -----------------------------------------------------------------------------

    def report(self) -> ToolReport | None:
        """The shown report on this tool (None: none yet, or the tool left the agent)."""
        index = self.ref.index()
        if self._report is None or index is None or index >= len(self._report.tools):
            return None
        return self._report.tools[index]

    def _show(self, report: HintsReport) -> None:
        tool = self.report()
        self.hints_list.clear()
        if tool is None:
            self.summary.setText("This tool is no longer in the agent.")
            return
        self.summary.setText(_summary(report, tool))
        for hint in tool.hints:
            item = QListWidgetItem(hint.message)
            item.setToolTip(f"{hint.code} ({hint.where})")
            self.hints_list.addItem(item)
        if not tool.hints:
            self.hints_list.addItem(QListWidgetItem("No hints: nothing here confuses a model."))


def _summary(report: HintsReport, tool: ToolReport) -> str:
    count = len(tool.hints)
    hints = f"{count} hint{'' if count == 1 else 's'}"
    when = "says when to use it" if tool.says_when else "does not say when to use it"
    words = f"Description: {tool.description_words} words, {when}. {hints}."
    cost = tool.tokens
    if report.problem is not None:
        return f"{words} Tokens not counted: {report.problem}"
    if cost is None or report.list_tokens is None:
        return words
    total = len(report.tools)
    return (
        f"{words} tools/list entry: {cost.entry} tokens (description {cost.description}, "
        f"parameters {cost.input_schema}, output schema {cost.output_schema}); "
        f"all {total} tool{'' if total == 1 else 's'}: {report.list_tokens} tokens."
    )
