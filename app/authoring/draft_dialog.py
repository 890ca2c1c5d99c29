"""*New tool from a description…*: the authoring model drafts a tool; the author accepts or not.

:class:`DraftToolDialog` takes a sentence, asks the authoring model (Preferences' choice, else the
agent's own; ``mcp_export.authoring``) and shows the draft that passed validation in a
:class:`~app.authoring.draft_preview.DraftPreview`. A draft that did not pass after its repair
turn is refused: the dialog says so, quoting every message, and offers nothing. **Add tool**
adds the draft to the agent as one undo step (and asks the window to open its editor); **Discard**
closes without touching the agent. Nothing is written to the agent file either way: the author
saves as usual. The exchange is recorded in History (an ``authoring`` thread) and in the
dialog's own protocol log (its *Protocol log* tab).
"""

from __future__ import annotations

from collections.abc import Coroutine
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QPalette
from PySide6.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QHBoxLayout,
    QLabel,
    QPlainTextEdit,
    QPushButton,
    QTabWidget,
    QVBoxLayout,
    QWidget,
)

from app.authoring.draft_preview import DraftPreview
from app.pages.page_tasks import PageTasks
from app.protocol_log_view import ProtocolLogView
from app.tool_editor.value_editors import error_colour
from app.window.screen_fit import fit_to_screen
from mcp_export.authoring.draft import DraftOutcome, draft_tool
from mcp_export.authoring.exchange import authoring_model, authoring_model_label
from mcp_export.errors import ExportError
from mcp_export.protocol_log import ProtocolLog
from schema_types.agent import ToolDefinition

if TYPE_CHECKING:
    import asyncio

    from app.document.agent_document import AgentDocument
    from mcp_export.history.store import HistoryStore

__all__ = ["DraftToolDialog"]

_PLACEHOLDER = (
    "e.g. Convert a temperature between Celsius and Fahrenheit, answering the value as data."
)


class DraftToolDialog(QDialog):
    """Drafts a tool for ``document`` from a sentence.

    Args:
        document: the agent the tool is for.
        chosen_model: Preferences' authoring model (``provider:model``; "" for the agent's own).
        history: where the exchange is recorded (None: not recorded).
        parent: the main window.

    Signals:
        tool_added(ToolDefinition): Add tool added the draft to the agent.
    """

    tool_added = Signal(object)

    def __init__(
        self,
        document: AgentDocument,
        *,
        chosen_model: str = "",
        history: HistoryStore | None = None,
        parent: QWidget | None = None,
    ) -> None:
        super().__init__(parent)
        self.setObjectName("draftToolDialog")
        self.setWindowTitle("New tool from a description")
        self.document = document
        self.chosen_model = chosen_model
        self.history = history
        self.protocol_log = ProtocolLog()
        self.outcome: DraftOutcome | None = None
        self.tasks = PageTasks(self)

        self.sentence_edit = QPlainTextEdit()
        self.sentence_edit.setObjectName("draftSentence")
        self.sentence_edit.setPlaceholderText(_PLACEHOLDER)
        self.sentence_edit.setTabChangesFocus(True)
        self.sentence_edit.setMaximumHeight(self.fontMetrics().lineSpacing() * 4)
        self.sentence_edit.textChanged.connect(self._update_buttons)
        self.draft_button = QPushButton("&Draft")
        self.draft_button.setObjectName("draftButton")
        self.draft_button.clicked.connect(self.start_draft)
        self.model_label = QLabel()
        self.model_label.setObjectName("draftModel")
        self.model_label.setWordWrap(True)
        self.model_label.setText(self._model_text())
        self.status_label = QLabel()
        self.status_label.setObjectName("draftStatus")
        self.status_label.setWordWrap(True)
        self.status_label.setTextFormat(Qt.TextFormat.PlainText)
        self.status_label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)

        self.preview = DraftPreview()
        self.log_view = ProtocolLogView(self.protocol_log)
        self.tabs = QTabWidget()
        self.tabs.setDocumentMode(True)
        self.tabs.addTab(self.preview, "Draft")
        self.tabs.addTab(self.log_view, "Protocol &log")

        self.buttons = QDialogButtonBox()
        self.add_button = self.buttons.addButton(
            "&Add tool", QDialogButtonBox.ButtonRole.AcceptRole
        )
        self.add_button.setObjectName("addDraftButton")
        self.add_button.setToolTip("Add the drafted tool to the agent (one undo step)")
        self.discard_button = self.buttons.addButton(
            "Di&scard", QDialogButtonBox.ButtonRole.RejectRole
        )
        self.discard_button.setObjectName("discardDraftButton")
        self.add_button.clicked.connect(self.accept_draft)
        self.discard_button.clicked.connect(self.reject)

        ask_row = QHBoxLayout()
        ask_row.addWidget(self.sentence_edit, 1)
        ask_row.addWidget(self.draft_button, 0, Qt.AlignmentFlag.AlignTop)
        layout = QVBoxLayout(self)
        layout.addWidget(QLabel("Describe the tool in a sentence:"))
        layout.addLayout(ask_row)
        layout.addWidget(self.model_label)
        layout.addWidget(self.status_label)
        layout.addWidget(self.tabs, 1)
        layout.addWidget(self.buttons)
        self.tasks.busy_changed.connect(lambda *_: self._update_buttons())
        self._update_buttons()
        fit_to_screen(self, 900, 640)

    # -- the model -------------------------------------------------------------------------

    def _model_text(self) -> str:
        label = authoring_model_label(self.document.agent, self.chosen_model) or "none set"
        source = (
            "chosen in Preferences"
            if self.chosen_model.strip()
            else "the agent's own; choose another in Edit ▸ Preferences"
        )
        return f"Authoring model: {label} ({source})"

    # -- drafting --------------------------------------------------------------------------

    @property
    def busy(self) -> bool:
        """Whether the model is being asked."""
        return self.tasks.is_running("draft")

    def start_draft(self) -> asyncio.Task[None] | None:
        """Ask the model for a draft of what the sentence says (the previous draft is dropped)."""
        sentence = self.sentence_edit.toPlainText().strip()
        if not sentence or self.busy:
            return None
        self.outcome = None
        self.preview.clear()
        try:
            model = authoring_model(self.document.agent, self.chosen_model)
        except ExportError as exc:
            self._say(f"No authoring model: {exc}", error=True)
            self._update_buttons()
            return None
        self._say(f"Asking {model.label} for a draft…", error=False)
        path = str(self.document.path) if self.document.path is not None else None
        agent = self.document.agent
        work = draft_tool(
            agent,
            sentence,
            model,
            history=self.history,
            agent_path=path,
            protocol_log=self.protocol_log,
        )
        return self.tasks.start("draft", self._draft(work), what="Drafting a tool")

    async def _draft(self, work: Coroutine[Any, Any, DraftOutcome]) -> None:
        self.show_outcome(await work)

    def show_outcome(self, outcome: DraftOutcome) -> None:
        """Show what drafting gave: the tool that passed, or why there is none."""
        self.outcome = outcome
        if outcome.tool is None:
            self.preview.clear()
            refusal = outcome.refusal()
            self._say(refusal[:1].upper() + refusal[1:], error=True)
        else:
            self.preview.show_tool(outcome.tool)
            repaired = " after one repair turn" if outcome.repaired else ""
            self._say(
                f"Drafted by {outcome.model}{repaired}; it passes validation. Add it to the "
                "agent, or discard it.",
                error=False,
            )
        self._update_buttons()

    def _say(self, text: str, *, error: bool) -> None:
        self.status_label.setText(text)
        palette = self.status_label.palette()
        text_colour = self.palette().color(QPalette.ColorRole.WindowText)
        colour = error_colour(self) if error else text_colour
        palette.setColor(QPalette.ColorRole.WindowText, colour)
        self.status_label.setPalette(palette)

    def _update_buttons(self) -> None:
        busy = self.busy
        self.draft_button.setEnabled(bool(self.sentence_edit.toPlainText().strip()) and not busy)
        self.add_button.setEnabled(not busy and self.outcome is not None and self.outcome.ok)

    # -- accepting -------------------------------------------------------------------------

    def accept_draft(self) -> ToolDefinition | None:
        """Add the drafted tool to the agent as one undo step and close; None (and a message)
        when it cannot be added (a tool of its name was added meanwhile)."""
        outcome = self.outcome
        if outcome is None or outcome.tool is None:
            return None
        tool = outcome.tool.model_copy(deep=True)
        agent = self.document.agent
        if agent.metadata.tool(tool.name) is not None:
            self._say(
                f"The agent has a tool named {tool.name!r} by now: rename or delete it, then "
                "add the draft again.",
                error=True,
            )
            return None
        row = len(agent.tools)
        if not self.document.insert_item(
            ("metadata", "tools", row), tool, text=f"Add drafted tool {tool.name}"
        ):
            self._say("The agent refused the drafted tool.", error=True)
            return None
        added = self.document.agent.tools[row]
        self.tool_added.emit(added)
        self.accept()
        return added

    def reject(self) -> None:
        """Discard: stop asking, close, leave the agent as it is."""
        self.tasks.cancel_all()
        super().reject()
