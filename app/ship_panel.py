"""*Ready to ship*: what each MCP client will refuse (✘) or change (!) of the agent's tools.

The panel shows :func:`mcp_export.lint.lint_tools` (the rules ``metaagent verify --lint``
checks) on the document's agent as it stands: one row per tool, and one for the whole list (a
client's tool-count limit), with a mark per client (Claude Desktop, Claude Code, VS Code Copilot,
Cursor, OpenAI and Gemini function calling), each mark's findings and sources in its tooltip;
under the table the findings of the picked row or mark (all of them when none is picked), each
with the rule's source in its tooltip and, once picked, as links below the list. When nothing
is refused or changed, the line at the top says the agent is ready for every client.

The lint is made off the GUI thread from the agent object of the moment (every edit gives the
document a new one, so the worker reads a snapshot nobody changes), after a short pause behind
the edits; a result made for an older agent is dropped. Activating a finding (click or Enter)
asks for its tool, and the field the rule is about, in the editor (:attr:`finding_activated`).
"""

from __future__ import annotations

import html
import logging
import re
from pathlib import Path
from typing import TYPE_CHECKING

from PySide6.QtCore import QSignalBlocker, Qt, Signal
from PySide6.QtGui import QBrush, QColor, QFont, QShowEvent
from PySide6.QtWidgets import (
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QListWidget,
    QListWidgetItem,
    QSplitter,
    QToolButton,
    QTreeWidget,
    QTreeWidgetItem,
    QVBoxLayout,
    QWidget,
)

from app.agent_check_worker import REFRESH_DELAY_MS, AgentCheckWorker
from mcp_export.lint import (
    LINT_CLIENT_LABELS,
    LINT_CLIENTS,
    Finding,
    LintClient,
    lint_tools,
    served_tools,
)

if TYPE_CHECKING:
    from app.document.agent_document import AgentDocument
    from schema_types.agent import Agent

__all__ = [
    "CLIENT_HEADINGS",
    "REFRESH_DELAY_MS",
    "ShipPanel",
    "ShipResult",
    "finding_field",
    "reveal_finding",
]

logger = logging.getLogger(__name__)

CLIENT_HEADINGS: dict[LintClient, str] = {
    "claude-desktop": "Claude Desktop",
    "claude-code": "Claude Code",
    "vscode": "VS Code Copilot",
    "cursor": "Cursor",
    "openai": "OpenAI",
    "gemini": "Gemini",
}
"""Column headings (the long labels, with "function calling", are the columns' tooltips)."""

ALL_TOOLS = "All tools"
"""The row of rules about the whole tool list (a client's tool-count limit)."""

OK_MARK, WARN_MARK, BAD_MARK = "✔", "!", "✘"
_GOOD, _WARN, _BAD = "#1b7f3b", "#a05a00", "#b3261e"
_URL = re.compile(r"https?://[^\s)'\"]+")
FINDING_ROLE = Qt.ItemDataRole.UserRole
"""A finding row's :class:`Finding` (a tool row holds its tool's name there)."""


def finding_field(finding: Finding) -> str:
    """The tool editor's field a finding is about: ``name``, ``description`` or
    ``parameters``."""
    if finding.rule.startswith("name"):
        return "name"
    if finding.rule.startswith("description"):
        return "description"
    return "parameters"


class ShipResult:
    """One check of the agent: its served tool names, the server name the rules assumed, and
    the findings (or why the tools cannot be served as written)."""

    def __init__(
        self, tools: list[str], server: str, findings: list[Finding], problem: str | None = None
    ) -> None:
        self.tools = tools
        self.server = server
        self.findings = findings
        self.problem = problem


def check(agent: Agent, path: Path | None) -> ShipResult:
    """The lint of ``agent`` as the export dialog would serve it (its default server name)."""
    from mcp_export.clients.entry import server_name
    from mcp_export.errors import ConfigurationError

    server = server_name(agent)
    try:
        tools = served_tools(agent, path or Path(f"{server}.agent.yaml"))
    except ConfigurationError as exc:
        return ShipResult([], server, [], str(exc))
    return ShipResult([t.name for t in tools], server, lint_tools(tools, server, LINT_CLIENTS))


def _linked(text: str) -> str:
    """``text`` as HTML with its web addresses as links."""
    parts, end = [], 0
    for match in _URL.finditer(text):
        url = match.group(0).rstrip(".,;:")  # a sentence's punctuation after an address
        parts.append(html.escape(text[end : match.start()]))
        parts.append(f"<a href='{html.escape(url)}'>{html.escape(url)}</a>")
        end = match.start() + len(url)
    parts.append(html.escape(text[end:]))
    return "".join(parts)


def reveal_finding(tab: QWidget, finding: Finding) -> None:
    """In a tool's editor tab, show and focus the field ``finding`` is about."""
    sections = getattr(tab, "sections", None)
    fields = getattr(tab, "fields", None)
    field = finding_field(finding)
    if sections is not None:
        sections.setCurrentIndex(0)  # Definition: the name, description and parameters
    target: object = None
    if fields is not None and field == "name":
        target = fields.name_edit
    elif fields is not None and field == "description":
        target = fields.description_edit
    else:
        target = getattr(tab, "parameters", None)
    if isinstance(target, QWidget):
        target.setFocus(Qt.FocusReason.OtherFocusReason)
        select_all = getattr(target, "selectAll", None)
        if field == "name" and callable(select_all):
            select_all()


def _mark(findings: list[Finding]) -> tuple[str, str]:
    if any(f.severity == "error" for f in findings):
        return BAD_MARK, _BAD
    if findings:
        return WARN_MARK, _WARN
    return OK_MARK, _GOOD


class ShipPanel(QWidget):
    """The *Ready to ship* table of one agent.

    Args:
        document: the agent.
        parent: the owning widget.

    Attributes:
        summary: the verdict line (ready for every client, or what is refused and changed).
        table: one row per tool (and the whole list), a mark per client.
        findings: the findings of the picked row or mark (every one when none is picked).
        source: the picked finding's source, its addresses as links.
        finding_activated: a finding was clicked or entered (the finding; its tool is
            ``finding.tool``, None for the whole list).
    """

    finding_activated = Signal(object)

    def __init__(self, document: AgentDocument, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("shipPanel")
        self.document = document
        self.result: ShipResult | None = None
        self.summary = QLabel("Checking each client's rules…")
        self.summary.setObjectName("shipSummary")
        self.summary.setWordWrap(True)
        self.summary.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.table = QTreeWidget()
        self.table.setObjectName("shipTable")
        self.table.setColumnCount(1 + len(LINT_CLIENTS))
        self.table.setHeaderLabels(["Tool", *(CLIENT_HEADINGS[c] for c in LINT_CLIENTS)])
        self.table.setRootIsDecorated(False)
        self.table.setAlternatingRowColors(True)
        header_item = self.table.headerItem()
        for column, client in enumerate(LINT_CLIENTS, start=1):
            header_item.setToolTip(column, LINT_CLIENT_LABELS[client])
            header_item.setTextAlignment(column, Qt.AlignmentFlag.AlignCenter)
        header = self.table.header()
        header.setStretchLastSection(False)
        header.setSectionResizeMode(0, QHeaderView.ResizeMode.Stretch)
        for column in range(1, 1 + len(LINT_CLIENTS)):
            header.setSectionResizeMode(column, QHeaderView.ResizeMode.ResizeToContents)
        self.table.currentItemChanged.connect(lambda _item, _old: self._narrow())
        self.table.itemClicked.connect(lambda _item, _column: self._narrow())
        self.findings_title = QLabel()
        self.findings_title.setObjectName("shipFindingsTitle")
        self.findings = QListWidget()
        self.findings.setObjectName("shipFindings")
        self.findings.setWordWrap(True)
        self.findings.setAlternatingRowColors(True)
        self.findings.setSpacing(1)
        self.findings.setToolTip("Click a finding to go to its tool")
        self.findings.itemClicked.connect(self._activate)
        self.findings.itemActivated.connect(self._activate)
        self.findings.currentItemChanged.connect(lambda item, _old: self._show_source(item))
        self.show_all = QToolButton()
        self.show_all.setText("Show all")
        self.show_all.setToolTip("List the findings of every tool and client")
        self.show_all.clicked.connect(self.table.clearSelection)
        self.show_all.clicked.connect(self._narrow)
        self.source = QLabel()
        self.source.setObjectName("shipSource")
        self.source.setWordWrap(True)
        self.source.setOpenExternalLinks(True)
        self.source.setTextInteractionFlags(Qt.TextInteractionFlag.TextBrowserInteraction)
        self.source.setText("Pick a finding to see where its rule comes from.")
        note = QLabel(
            "The rules of <code>metaagent verify --lint</code>. ✘ the client refuses the tool or "
            "hides it · ! it renames, cuts or drops something · ✔ taken as written. Pick a row "
            "or a mark to list its findings."
        )
        note.setWordWrap(True)
        note.setEnabled(False)  # drawn in the dimmed colour: a footnote
        below = QWidget()
        below_layout = QVBoxLayout(below)
        below_layout.setContentsMargins(0, 0, 0, 0)
        heading = QHBoxLayout()
        heading.addWidget(self.findings_title, 1)
        heading.addWidget(self.show_all)
        below_layout.addLayout(heading)
        below_layout.addWidget(self.findings, 1)
        below_layout.addWidget(self.source)
        split = QSplitter(Qt.Orientation.Vertical)
        split.setChildrenCollapsible(False)
        split.addWidget(self.table)
        split.addWidget(below)
        split.setStretchFactor(0, 2)
        split.setStretchFactor(1, 3)
        layout = QVBoxLayout(self)
        title = QLabel("<b>Ready to ship</b> — what each MCP client does with these tools")
        layout.addWidget(title)
        layout.addWidget(self.summary)
        layout.addWidget(split, 1)
        layout.addWidget(note)
        self._worker = AgentCheckWorker(
            self,
            document,
            check,
            self._on_result_made,
            thread_name="ready-to-ship",
            logger=logger,
            failure="the client rules of %s could not be checked",
        )

    # -- checking ------------------------------------------------------------------------------

    def showEvent(self, event: QShowEvent) -> None:  # noqa: N802 (Qt override)
        """Check the agent as it is now, unless that is already shown."""
        if self._worker.stale() or self.result is None:
            self.refresh()
        super().showEvent(event)

    def refresh(self) -> None:
        """Check the agent as it stands (in a worker thread; one at a time)."""
        self._worker.refresh()

    def is_current(self) -> bool:
        """Whether the shown result is of the agent as it stands."""
        return self._worker.is_current()

    def _on_result_made(self, result: object) -> None:
        if isinstance(result, ShipResult):
            self.result = result
            self._show(result)
        else:
            self.result = None
            self.table.clear()
            self._narrow()
            self._set_summary(f"✘ The rules could not be checked: {result}", _BAD)

    # -- showing -------------------------------------------------------------------------------

    def _set_summary(self, text: str, colour: str) -> None:
        self.summary.setText(f"<b style='color:{colour}'>{html.escape(text)}</b>")
        self.summary.setProperty("plainText", text)

    def summary_text(self) -> str:
        """The verdict line as a person reads it."""
        return str(self.summary.property("plainText") or "")

    def _show(self, result: ShipResult) -> None:
        current = self.table.currentItem()
        kept = None
        if current is not None and current.isSelected():
            kept = (current.data(0, FINDING_ROLE), self.table.currentColumn())
        with QSignalBlocker(self.table):
            self.table.clear()
        if result.problem is not None:
            self._narrow()
            self._set_summary(f"✘ The tools cannot be served as written: {result.problem}", _BAD)
            return
        refused = sum(f.severity == "error" for f in result.findings)
        changed = len(result.findings) - refused
        count = len(result.tools)
        tools = f"{count} tool{'' if count == 1 else 's'}"
        if count == 0:
            self._set_summary("No tools yet: add one and its clients' rules show here.", _WARN)
        elif not result.findings:
            every = "the tool" if count == 1 else f"all {tools}"
            self._set_summary(
                f"✔ Ready for every client: each takes {every} as written "
                f"(served as “{result.server}”).",
                _GOOD,
            )
        else:
            parts = [
                text
                for number, text in (
                    (refused, f"✘ {refused} refused"),
                    (changed, f"! {changed} changed or dropped"),
                )
                if number
            ]
            self._set_summary(
                f"{', '.join(parts)} across {tools} (served as “{result.server}”). "
                "Click a finding to go to its tool.",
                _BAD if refused else _WARN,
            )
        rows: list[str | None] = [*result.tools]
        if any(f.tool is None for f in result.findings):
            rows.append(None)
        for name in rows:
            own = [f for f in result.findings if f.tool == name]
            self.table.addTopLevelItem(self._tool_row(name, own))
        row = self.tool_item(kept[0]) if kept is not None else None
        if kept is not None and row is not None:  # the same pick after an edit
            with QSignalBlocker(self.table):
                self.table.setCurrentItem(row, kept[1])
        self._narrow()

    def _tool_row(self, name: str | None, findings: list[Finding]) -> QTreeWidgetItem:
        row = QTreeWidgetItem([name if name is not None else ALL_TOOLS])
        row.setData(0, FINDING_ROLE, name)
        bold = QFont(self.font())
        bold.setBold(True)
        for column, client in enumerate(LINT_CLIENTS, start=1):
            own = [f for f in findings if f.client == client]
            mark, colour = _mark(own)
            row.setText(column, mark)
            row.setTextAlignment(column, Qt.AlignmentFlag.AlignCenter)
            row.setForeground(column, QBrush(QColor(colour)))
            row.setFont(column, bold)
            tip = "\n\n".join(f"{f.message}\nSource: {f.source}" for f in own)
            row.setToolTip(column, tip or f"{CLIENT_HEADINGS[client]} takes it as written.")
        return row

    def tool_items(self) -> list[QTreeWidgetItem]:
        """The tools' rows (and the whole list's), table order."""
        rows = (self.table.topLevelItem(i) for i in range(self.table.topLevelItemCount()))
        return [row for row in rows if row is not None]

    def tool_item(self, name: str | None) -> QTreeWidgetItem | None:
        """The row of the tool served as ``name`` (None: the whole list's row)."""
        return next((r for r in self.tool_items() if r.data(0, FINDING_ROLE) == name), None)

    def _narrow(self) -> None:
        """List the findings of the picked row (and client, when a mark is picked), or all."""
        result = self.result
        findings = result.findings if result is not None else []
        row = self.table.currentItem()
        picked = row is not None and row.isSelected()
        title = "Findings"
        if picked and row is not None:
            name = row.data(0, FINDING_ROLE)
            findings = [f for f in findings if f.tool == name]
            title += f" — {row.text(0)}"
            column = self.table.currentColumn()
            if column >= 1:
                client = LINT_CLIENTS[column - 1]
                findings = [f for f in findings if f.client == client]
                title += f", {CLIENT_HEADINGS[client]}"
        else:
            title += " — every tool and client"
        self.findings_title.setText(f"<b>{html.escape(title)}</b> ({len(findings)})")
        self.show_all.setVisible(picked)
        self.findings.clear()
        for finding in findings:
            mark, colour = _mark([finding])
            kind = "refuses" if finding.severity == "error" else "changes"
            where = finding.tool if finding.tool is not None else ALL_TOOLS.lower()
            text = f"{mark} {CLIENT_HEADINGS[finding.client]} {kind} {where}: {finding.message}"
            item = QListWidgetItem(text)
            item.setData(FINDING_ROLE, finding)
            item.setForeground(QBrush(QColor(colour)))
            item.setToolTip(f"Source: {finding.source}")
            self.findings.addItem(item)
        if not findings and result is not None and result.problem is None:
            self.findings.addItem(QListWidgetItem("Nothing refused or changed here."))
        self.source.setVisible(bool(findings))

    def finding_items(self) -> list[QListWidgetItem]:
        """The listed findings' rows, in order."""
        items = (self.findings.item(i) for i in range(self.findings.count()))
        return [i for i in items if i is not None and isinstance(i.data(FINDING_ROLE), Finding)]

    def _show_source(self, item: QListWidgetItem | None) -> None:
        finding = item.data(FINDING_ROLE) if item is not None else None
        if not isinstance(finding, Finding):
            return
        linked = _linked(finding.source)
        self.source.setText(f"<b>Source</b> ({CLIENT_HEADINGS[finding.client]}): {linked}")

    def _activate(self, item: QListWidgetItem) -> None:
        finding = item.data(FINDING_ROLE)
        if isinstance(finding, Finding):
            self._show_source(item)
            self.finding_activated.emit(finding)
