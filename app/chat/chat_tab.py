# ruff: noqa: N802  (Qt virtual method names are camelCase)
"""A chat tab: talk to an agent, or test-run one of its tools, with everything shown as it happens.

The tab renders the events of one ``ChatSession`` (see :mod:`app.chat.runner`): the person's
messages, the streamed answer as Markdown, a card per inner tool call, a muted note line for each
notice about the endpoint (once per tab), a stats strip with the conversation's figures (the
answer's own in the status line, labelled as History labels them), and any failure with what to
do and a button to the settings page that fixes it. The status line says what a run waits for
as it happens (the session's ``Step`` events: a tool server starting, the model, a retry's wait,
the tool calls). Runs are tasks on the qasync loop (the window keeps answering, and any number
of tabs run at once); Stop cancels the session at whichever step it is, follow-up messages
continue it. A tool test (``tool_name`` given) also offers the
"Caller's view": the ``CallToolResult`` an MCP client would receive for the call, made by the
served server's own code; a tool with an output schema answers in it, and each check of its
answer shows as a block (:mod:`app.test_run.typed_answer`: the object as a tree, the schema
messages, the repair turn); once that call has ended, "Save as test case…" (a button and the
tab's and the answer's context menus) keeps its arguments as a test case of the tool, with what
the person selected in the answer as the text a good answer must contain. In any chat, once the
person has typed a request, "Save as caller case…" (a button in a plain chat; the tab's and the
answer's context menus) keeps that request as a caller case (:mod:`app.save_caller_case_dialog`).

"Protocol log" (a toggle in the header and in the tab's context menu) shows the runner's
protocol log below the transcript, in a splitter: every raw message to and from the model
endpoint and the tool servers, keys masked, followed live while a run goes on. The view is made
the first time it is shown; the log records from the first run whether it is shown or not.
While it shows, "Whole tab" in its bar lets it take the whole tab (the trace hidden; click again
to see both); with the log off the trace has the whole tab.
"""

from __future__ import annotations

import asyncio
import json
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QEvent, QObject, Qt, Signal
from PySide6.QtGui import QAction, QCloseEvent, QFontDatabase, QKeyEvent
from PySide6.QtWidgets import (
    QHBoxLayout,
    QLabel,
    QPlainTextEdit,
    QPushButton,
    QSplitter,
    QStackedWidget,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from app.chat.runner import ChatRunner, ProviderFactory, ToolTest
from app.chat.stats import StatsStrip
from app.chat.tool_card import ERROR_COLOR, OK_COLOR, WARNING_COLOR, ToolCard
from app.chat.transcript import AssistantBlock, NoteLine, NoticeBlock, TranscriptView, UserBlock
from app.document.agent_document import AgentDocument
from app.pages.page_tasks import PageTasks
from app.protocol_log_view import ProtocolLogView
from app.save_caller_case_dialog import SaveCallerCaseDialog, open_save_caller_case_dialog
from app.save_case_dialog import SaveCaseDialog, open_save_case_dialog
from mcp_export.costs.prices import PricesError, PriceTable, price_table

if TYPE_CHECKING:
    from mcp_export.history.store import HistoryStore
    from mcp_export.session.events import FinalAnswer, SessionEvent, SessionFailed
    from mcp_export.session.output_events import OutputChecked
    from schema_types.agent import Agent

__all__ = ["ChatTab", "settings_page_for"]

# The close-downs in progress: asyncio keeps only weak references to tasks, and a closed tab
# may be gone before its close-down has ended.
_closing: set[asyncio.Task[None]] = set()

RUN_STOP_SECONDS = 2.0
"""How long a closed tab's run gets to end once stopped (so history records it as cancelled);
then it is cancelled, and gets as long again."""


def _check_block(event: OutputChecked) -> QWidget:
    """The transcript block of a typed answer's check (imported here: ``app.test_run`` takes
    the chat's colours from ``app.chat``, whose package imports this module)."""
    from app.test_run.typed_answer import OutputCheckBlock

    return OutputCheckBlock(event)


def settings_page_for(kind: str) -> str | None:
    """The settings page that fixes a failure of ``kind`` (a ``FailureKind``), or None."""
    if kind == "tool-server":
        return "servers"
    if kind in {"configuration", "provider", "timeout", "turn-limit"}:
        return "model"
    return None


class ChatTab(QWidget):
    """One conversation with an agent (a plain chat, or a tool test that can be followed up).

    Args:
        document: the open agent (its ``agent`` is read when the first message is sent).
        title: the tab's title.
        tool_name: the tool under test, or None for a plain chat.
        arguments: the tool test's arguments (recorded in history).
        history: where to record the conversation, or None.
        provider_factory: makes the provider and model name from the agent (default: the
            agent's configured model).
        parent: the parent widget.

    Signals:
        finished(object): a turn ended; the ``FinalAnswer`` or ``SessionFailed``.
        open_settings_requested(str): the person asked for the page that fixes a failure
            (``model`` or ``servers``).
        busy_changed(bool): a turn started (True) or ended (False).
    """

    finished = Signal(object)
    open_settings_requested = Signal(str)
    busy_changed = Signal(bool)

    def __init__(
        self,
        document: AgentDocument,
        *,
        title: str,
        tool_name: str | None = None,
        arguments: dict[str, Any] | None = None,
        history: HistoryStore | None = None,
        provider_factory: ProviderFactory | None = None,
        parent: QWidget | None = None,
    ) -> None:
        super().__init__(parent)
        self.setObjectName("chatTab")
        self.document = document
        self.title = title
        self.tool_name = tool_name
        test = ToolTest(tool_name, dict(arguments or {})) if tool_name is not None else None
        self.runner = ChatRunner(
            lambda: document.agent,
            document.path,
            history=history,
            test=test,
            provider_factory=provider_factory,
        )
        self.outcome: FinalAnswer | SessionFailed | None = None
        self._tasks = PageTasks(self)
        self._task: asyncio.Task[Any] | None = None
        self._busy = False
        self._closed = False
        self._close_down: asyncio.Task[None] | None = None
        self._assistant: AssistantBlock | None = None
        self._cards: dict[str, ToolCard] = {}
        self._checks: list[QWidget] = []  # the blocks of a typed answer's checks
        self._noted: set[str] = set()
        self._stopping = False
        self._receiving = False
        self.requests: list[str] = []
        """What the person typed, oldest first (a tool test's filled prompt is not typed)."""

        self.stats = StatsStrip()
        self.caller_toggle = QPushButton("Caller's view")
        self.caller_toggle.setObjectName("callerViewToggle")
        self.caller_toggle.setCheckable(True)
        self.caller_toggle.setToolTip(
            "Show exactly what an MCP client receives for this call (the tools/call result)"
        )
        self.caller_toggle.toggled.connect(self._on_caller_view_toggled)
        self.caller_toggle.setVisible(tool_name is not None)
        self.save_case_action = QAction("Save as test case…", self)
        self.save_case_action.setToolTip(
            "Keep this call's arguments as a test case of the tool (select a part of the answer "
            "first to require it)"
        )
        self.save_case_action.triggered.connect(self.save_as_test_case)
        self.save_case_button = QPushButton(self.save_case_action.text())
        self.save_case_button.setObjectName("saveCaseButton")
        self.save_case_button.setToolTip(self.save_case_action.toolTip())
        self.save_case_button.clicked.connect(self.save_case_action.trigger)
        self.save_case_button.setVisible(tool_name is not None)
        self._answer_actions: list[QAction] = []
        if tool_name is not None:
            self._answer_actions.append(self.save_case_action)
            self.addAction(self.save_case_action)
        self.save_caller_action = QAction("Save as caller case…", self)
        self.save_caller_action.setToolTip(
            "Keep a request you typed here as a caller case: a caller model gets it with the "
            "tool list a client sees, and the case checks the tool it calls and the answer"
        )
        self.save_caller_action.triggered.connect(self.save_as_caller_case)
        self.save_caller_button = QPushButton(self.save_caller_action.text())
        self.save_caller_button.setObjectName("saveCallerCaseButton")
        self.save_caller_button.setToolTip(self.save_caller_action.toolTip())
        self.save_caller_button.clicked.connect(self.save_caller_action.trigger)
        # A tool test's header row is full: there, the context menus offer it.
        self.save_caller_button.setVisible(tool_name is None)
        self._answer_actions.append(self.save_caller_action)
        self.addAction(self.save_caller_action)
        self.protocol_log_action = QAction("Protocol log", self)
        self.protocol_log_action.setCheckable(True)
        self.protocol_log_action.setToolTip(
            "Show the raw messages exchanged with the model endpoint and the tool servers "
            "(keys masked)"
        )
        self.protocol_log_action.toggled.connect(self._on_protocol_log_toggled)
        self.addAction(self.protocol_log_action)
        self.setContextMenuPolicy(Qt.ContextMenuPolicy.ActionsContextMenu)
        self.protocol_log_toggle = QPushButton(self.protocol_log_action.text())
        self.protocol_log_toggle.setObjectName("protocolLogToggle")
        self.protocol_log_toggle.setCheckable(True)
        self.protocol_log_toggle.setToolTip(self.protocol_log_action.toolTip())
        self.protocol_log_toggle.toggled.connect(self.protocol_log_action.setChecked)
        self._protocol_log_view: ProtocolLogView | None = None
        # In the log's own bar (the header row is full at 1024 px): the log takes the whole tab.
        self.log_whole_button = QToolButton()
        self.log_whole_button.setText("Whole tab")
        self.log_whole_button.setObjectName("logWholeTab")
        self.log_whole_button.setCheckable(True)
        self.log_whole_button.setToolTip(
            "Let the protocol log take the whole tab (click again to see the trace too; "
            "Protocol log off gives the trace the whole tab)"
        )
        self.log_whole_button.toggled.connect(self._on_log_whole_tab)
        top = QHBoxLayout()
        top.addWidget(self.stats, 1)
        top.addWidget(self.save_case_button)
        top.addWidget(self.save_caller_button)
        top.addWidget(self.protocol_log_toggle)
        top.addWidget(self.caller_toggle)

        self.transcript = TranscriptView()
        self.caller_view = QPlainTextEdit()
        self.caller_view.setObjectName("callerView")
        self.caller_view.setReadOnly(True)
        self.caller_view.setFont(QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont))
        self.caller_view.setPlainText("(the call has not finished yet)")
        caller_page = QWidget()
        caller_layout = QVBoxLayout(caller_page)
        caller_layout.setContentsMargins(0, 0, 0, 0)
        caller_note = QLabel(
            f"What an MCP client receives for <b>tools/call {tool_name or ''}</b> "
            "(CallToolResult as JSON, as <code>metaagent serve</code> returns it):"
        )
        caller_note.setWordWrap(True)
        caller_layout.addWidget(caller_note)
        caller_layout.addWidget(self.caller_view, 1)
        self.pages = QStackedWidget()
        self.pages.addWidget(self.transcript)
        self.pages.addWidget(caller_page)
        self.splitter = QSplitter(Qt.Orientation.Vertical)
        self.splitter.setChildrenCollapsible(False)
        self.splitter.addWidget(self.pages)

        self.status = QLabel("Ready")
        self.status.setObjectName("chatStatus")
        self.input = QPlainTextEdit()
        self.input.setObjectName("chatInput")
        self.input.setPlaceholderText("Message (Enter sends, Shift+Enter for a new line)")
        self.input.setTabChangesFocus(True)
        self.input.setFixedHeight(self.input.fontMetrics().lineSpacing() * 3 + 12)
        self.input.installEventFilter(self)
        self.send_button = QPushButton("Send")
        self.send_button.setObjectName("chatSend")
        self.send_button.clicked.connect(self._on_send_clicked)
        self.stop_button = QPushButton("Stop")
        self.stop_button.setObjectName("chatStop")
        self.stop_button.setToolTip("Cancel the model request and the tool calls in flight")
        self.stop_button.setEnabled(False)
        self.stop_button.clicked.connect(self.stop)
        buttons = QVBoxLayout()
        buttons.addWidget(self.send_button)
        buttons.addWidget(self.stop_button)
        bottom = QHBoxLayout()
        bottom.addWidget(self.input, 1)
        bottom.addLayout(buttons)

        layout = QVBoxLayout(self)
        layout.setContentsMargins(4, 4, 4, 4)
        layout.addLayout(top)
        layout.addWidget(self.splitter, 1)
        layout.addWidget(self.status)
        layout.addLayout(bottom)
        self._update_save_case()

    # --- public API -----------------------------------------------------------------------------

    @property
    def busy(self) -> bool:
        """Whether a turn is running."""
        return self._busy

    def submit(self, text: str) -> bool:
        """Send ``text`` as the next user message, on the running asyncio loop.

        Returns:
            False when nothing was sent (empty text, a turn still running, the tab closed).
        """
        text = text.strip()
        if not text or self._busy or self._closed:
            return False
        first_test = self.tool_name is not None and self.outcome is None
        heading = f"Test of {self.tool_name}: filled prompt" if first_test else "You"
        # Busy from this moment, not from when the task first runs: a second Send is refused.
        self._set_busy(True)
        task = self._tasks.start("run", self._run(text), what=f"Running {self.title}")
        if task is None:
            self._set_busy(False)
            return False
        self._task = task
        if not first_test:
            self.requests.append(text)
        self.transcript.add(UserBlock(text, heading=heading))
        self.input.clear()
        self.stats.set_pricing(*_pricing(self.document.agent))
        self.stats.start_turn()
        return True

    async def send(self, text: str) -> FinalAnswer | SessionFailed | None:
        """Send ``text`` and wait for the turn to end; its last event (None if not sent)."""
        if not self.submit(text):
            return None
        assert self._task is not None
        await asyncio.shield(self._task)
        return self.outcome

    def start_test(self, prompt: str) -> bool:
        """Run the tool test: submit the filled ``prompt`` at once."""
        return self.submit(prompt)

    def save_as_test_case(self) -> SaveCaseDialog | None:
        """Open the dialog that saves the tool call as a test case of the tool (None: not now,
        or the tool is gone, which is reported)."""
        test = self.runner.test
        result = self.runner.caller_view
        if test is None or result is None or self._busy:
            return None
        content = result.get("content")
        blocks = content if isinstance(content, list) else []
        texts = [b for b in blocks if isinstance(b, dict) and b.get("type") == "text"]
        answer = "".join(str(b.get("text", "")) for b in texts)
        return open_save_case_dialog(
            self.document,
            test.tool_name,
            test.arguments,
            answer=answer,
            contains=self.transcript.selected_answer_text(),
            failed=bool(result.get("isError")),
            parent=self,
        )

    def save_as_caller_case(self) -> SaveCallerCaseDialog | None:
        """Open the dialog that keeps a request typed here as a caller case (None: not now, or
        nothing to keep, which is reported)."""
        if self._busy or not self.requests:
            return None
        return open_save_caller_case_dialog(
            self.document,
            self.requests,
            tool_name=self.tool_name,
            contains=self.transcript.selected_answer_text(),
            parent=self,
        )

    @property
    def protocol_log_view(self) -> ProtocolLogView | None:
        """The view of the conversation's protocol log, once it has been shown."""
        return self._protocol_log_view

    def stop(self) -> None:
        """Cancel the running turn; the tab shows "stopped"."""
        if self._busy:
            self._stopping = True
            self._set_status("Stopping…", None)
            self.runner.cancel()

    async def aclose(self) -> None:
        """End any running turn and release the provider and the tool servers.

        A tab has one close-down (closing the widget starts it too): every call returns once
        it has finished, and cancelling a caller does not cut it short. It is bounded: the run
        gets twice :data:`RUN_STOP_SECONDS`, the toolbox stops each server within its own limit.
        """
        close_down = self._start_close_down()
        if close_down is not None:
            await asyncio.shield(close_down)

    def _start_close_down(self) -> asyncio.Task[None] | None:
        """The tab's close-down, started on the first call; None without a running loop (then
        no turn ever ran, so there is nothing to release)."""
        self._closed = True
        if self._close_down is None:
            try:
                loop = asyncio.get_running_loop()
            except RuntimeError:
                return None
            self.runner.cancel()
            self._close_down = loop.create_task(self._release())
            _closing.add(self._close_down)
            self._close_down.add_done_callback(_closing.discard)
        return self._close_down

    async def _release(self) -> None:
        task = self._task
        if task is not None and not task.done():
            await asyncio.wait({task}, timeout=RUN_STOP_SECONDS)
            if not task.done():
                task.cancel()
                await asyncio.wait({task}, timeout=RUN_STOP_SECONDS)
        await self.runner.aclose()

    # --- running a turn -------------------------------------------------------------------------

    async def _run(self, text: str) -> None:
        try:
            outcome = await self.runner.run(text, self._on_event)
        except asyncio.CancelledError:
            raise  # the tab is going away: touch no widget
        except BaseException:
            self._end_turn()  # an unexpected error: PageTasks reports it
            raise
        self.outcome = outcome
        self._end_turn()
        if self.runner.caller_view is not None:
            self.caller_view.setPlainText(json.dumps(self.runner.caller_view, indent=2))
        self.finished.emit(outcome)

    def _end_turn(self) -> None:
        self._flush_text()
        self.stats.end_turn()
        self._set_busy(False)

    def _set_busy(self, busy: bool) -> None:
        if busy == self._busy:
            return
        self._busy = busy
        self.stop_button.setEnabled(busy)
        self.send_button.setEnabled(not busy)
        if busy:
            self._stopping = False
            self._set_status("Running…", None)
        self._update_save_case()
        self.busy_changed.emit(busy)

    def _can_save_test_case(self) -> bool:
        """Whether "Save as test case…" applies: a tool test whose call has ended, not busy."""
        return (
            self.runner.test is not None and self.runner.caller_view is not None and not self._busy
        )

    def _update_save_case(self) -> None:
        enabled = self._can_save_test_case()
        self.save_case_action.setEnabled(enabled)
        self.save_case_button.setEnabled(enabled)
        typed = bool(self.requests) and not self._busy
        self.save_caller_action.setEnabled(typed)
        self.save_caller_button.setEnabled(typed)

    def _set_status(self, text: str, color: str | None) -> None:
        self.status.setText(text)
        self.status.setStyleSheet(f"color: {color};" if color else "")

    def _flush_text(self) -> None:
        if self._assistant is not None:
            self._assistant.flush()
            self._assistant = None

    def _on_event(self, event: SessionEvent) -> None:
        from mcp_export.providers.base import TextDelta
        from mcp_export.session.events import (
            FinalAnswer,
            Notice,
            OutputChecked,
            SessionFailed,
            Step,
            ToolCallFinished,
            ToolCallStarted,
            ToolsHidden,
            TurnFinished,
        )

        if isinstance(event, TextDelta):
            if not self._receiving:
                self._receiving = True
                if not self._stopping:
                    self._set_status("Receiving the answer…", None)
            if self._assistant is None:
                self._assistant = AssistantBlock(self._answer_actions)
                self.transcript.add(self._assistant)
            self._assistant.append(event.text)
            return
        if isinstance(event, Step):
            self._receiving = False
            if not self._stopping:  # "Stopping…" stays until the run has ended
                self._set_status(event.text, None)
            return
        if isinstance(event, ToolsHidden):
            if event.text not in self._noted:  # once per tab: every run of it holds them back
                self._noted.add(event.text)
                page = "model" if event.policy == "always" else "servers"
                notice = NoticeBlock(event.text, severity="warning", page=page)
                notice.open_settings.connect(self.open_settings_requested)
                self.transcript.add(notice)
            return
        if isinstance(event, Notice):
            if event.text not in self._noted:  # once per tab, however many turns repeat it
                self._noted.add(event.text)
                self.transcript.add(NoteLine(event.text))
            return
        self.stats.on_event(event)
        if isinstance(event, TurnFinished):
            self._flush_text()  # the next turn's text goes below this turn's tool cards
        elif isinstance(event, ToolCallStarted):
            card = ToolCard(event)
            self._cards[event.call_id] = card
            self.transcript.add(card)
        elif isinstance(event, ToolCallFinished):
            known = self._cards.get(event.call_id)
            if known is not None:
                known.finish(event)
        elif isinstance(event, OutputChecked):
            self._flush_text()
            self._checks.append(_check_block(event))
            self.transcript.add(self._checks[-1])
        elif isinstance(event, FinalAnswer):
            self._on_answer(event)
        elif isinstance(event, SessionFailed):
            self._on_failure(event)

    def _on_answer(self, answer: FinalAnswer) -> None:
        self._flush_text()
        blocks = [b for b in self.transcript.blocks() if not isinstance(b, NoteLine)]
        shown = blocks and (isinstance(blocks[-1], AssistantBlock) or blocks[-1] in self._checks)
        if answer.text and not shown:
            # The provider did not stream this answer's text: show it whole.
            block = AssistantBlock(self._answer_actions)
            self.transcript.add(block)
            block.append(answer.text)
            block.flush()
        self._set_status(f"Answered · {self.stats.answer_text()}", OK_COLOR)

    def _on_failure(self, failure: SessionFailed) -> None:
        self._flush_text()
        if failure.kind == "cancelled":
            self.transcript.add(NoticeBlock("Stopped: the run was cancelled.", severity="warning"))
            self._set_status("Stopped", WARNING_COLOR)
            return
        page = settings_page_for(failure.kind)
        notice = NoticeBlock(failure.message, hint=failure.hint, page=page)
        notice.open_settings.connect(self.open_settings_requested)
        self.transcript.add(notice)
        self._set_status(f"Failed ({failure.kind})", ERROR_COLOR)

    # --- person's actions -----------------------------------------------------------------------

    def _on_send_clicked(self) -> None:
        self.submit(self.input.toPlainText())

    def _on_caller_view_toggled(self, on: bool) -> None:
        self.pages.setCurrentIndex(1 if on else 0)

    def _on_protocol_log_toggled(self, on: bool) -> None:
        self.protocol_log_toggle.setChecked(on)
        view = self._protocol_log_view
        if view is None:
            if not on:
                return
            view = self._protocol_log_view = ProtocolLogView(self.runner.protocol_log)
            view.setObjectName("protocolLogView")
            view.add_to_bar(self.log_whole_button)
            self.splitter.addWidget(view)
            height = max(self.splitter.height(), 2)
            self.splitter.setSizes([height // 2, height - height // 2])
        if not on:
            self.log_whole_button.setChecked(False)  # the trace has the whole tab again
        view.setVisible(on)

    def _on_log_whole_tab(self, on: bool) -> None:
        """Let the log take the whole tab (the trace hidden); off: both again."""
        self.pages.setVisible(not on)

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if watched is self.input and event.type() == QEvent.Type.KeyPress:
            assert isinstance(event, QKeyEvent)
            plain = not event.modifiers() & Qt.KeyboardModifier.ShiftModifier
            if event.key() in (Qt.Key.Key_Return, Qt.Key.Key_Enter) and plain:
                self._on_send_clicked()
                return True
        return super().eventFilter(watched, event)

    def closeEvent(self, event: QCloseEvent) -> None:
        self._start_close_down()
        super().closeEvent(event)


def _pricing(agent: Agent) -> tuple[PriceTable, str | None]:
    """The prices a chat's cost is reckoned with (the agent file's alone when Preferences' price
    table cannot be read) and the model they are looked up for."""
    try:
        prices = price_table(agent)
    except PricesError:
        prices = price_table(agent, {})
    return prices, agent.settings.model
