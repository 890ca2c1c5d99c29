"""The "Save as caller case" dialog: keep a request typed in a chat as a caller case of a tool.

Opened from a chat tab in which the person typed a request (a plain chat with the agent, or a
follow-up in a tool test): the request becomes the case's ``ask`` (see
:mod:`schema_types.cases`). The person chooses which request (when they typed several), the tool
the case is kept under, what the caller model must call (that tool, another of the agent's, or
none), optionally the arguments it must fill (a JSON object, a subset) and a piece every good
answer holds (what they selected in an answer is offered). Saving goes through
:func:`app.document.test_cases.add_test_case`: one undo step in the agent, reported in the
status bar with the name the case got.
"""

from __future__ import annotations

from collections.abc import Sequence

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QFontDatabase
from PySide6.QtWidgets import (
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QFormLayout,
    QLabel,
    QLineEdit,
    QPlainTextEdit,
    QVBoxLayout,
    QWidget,
)

from app.document.agent_document import AgentDocument
from app.document.caller_cases import NONE, ask_case_name, likely_tool, new_caller_case
from app.document.test_cases import unique_case_name
from app.errors import reporter
from app.save_case_dialog import add_case_reported
from app.tool_editor.case_caller import ASK_INTRO, arguments_notes, parse_object, picks_text
from app.window.screen_fit import fit_to_screen
from schema_types.cases import TestCase

__all__ = ["SaveCallerCaseDialog", "open_save_caller_case_dialog"]

_WARN = "#b26a00"
_REQUEST_LIMIT = 70


def _short(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= _REQUEST_LIMIT else text[: _REQUEST_LIMIT - 1] + "…"


def open_save_caller_case_dialog(
    document: AgentDocument,
    requests: Sequence[str],
    *,
    tool_name: str | None = None,
    contains: str = "",
    parent: QWidget | None = None,
) -> SaveCallerCaseDialog | None:
    """Show the dialog (window-modal, not blocking); None, reported, when there is no request
    typed or the agent has no tool to keep the case under."""
    if not [r for r in requests if r.strip()]:
        reporter().warning("Type a request in the chat first: it becomes the caller case's ask.")
        return None
    if not document.agent.tools:
        reporter().warning(
            f"{document.agent.metadata.name} has no tools: a caller case is kept under one. "
            "Add a tool first."
        )
        return None
    dialog = SaveCallerCaseDialog(
        document, requests, tool_name=tool_name, contains=contains, parent=parent
    )
    dialog.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
    dialog.open()
    return dialog


class SaveCallerCaseDialog(QDialog):
    """Keep a typed request as a caller case.

    Args:
        document: the open agent the case goes into.
        requests: what the person typed in the chat, oldest first (the last is offered).
        tool_name: the tool to keep it under first (the chat's tool; None: the tool whose words
            the newest request shares most, else the agent's first).
        contains: the pre-filled "Answer must contain" (what the person selected).
        parent: the parent widget.

    Attributes:
        request_choice: the requests typed, newest first (hidden when there is one).
        request_edit: the request as it will be saved (editable).
        tool_choice: the tool the case is kept under.
        picks: what the caller must call.
        fills: the arguments it must fill, as JSON (optional).
        contains_edit: a piece every good answer has (optional).
        name_edit: the case's name.
        note: what stops the save, or what the case cannot meet.

    Signals:
        saved(str): the case was saved, under this name.
    """

    saved = Signal(str)

    def __init__(
        self,
        document: AgentDocument,
        requests: Sequence[str],
        *,
        tool_name: str | None = None,
        contains: str = "",
        parent: QWidget | None = None,
    ) -> None:
        super().__init__(parent)
        self.setObjectName("saveCallerCaseDialog")
        self.setWindowTitle("Save as caller case")
        self.document = document
        self._requests = [r for r in reversed(requests) if r.strip()]
        self._named = ""  # the name last suggested: replaced while the person has not typed one
        tools = [tool.name for tool in document.agent.tools]
        mono = QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont)
        lines = self.fontMetrics().lineSpacing()

        intro = QLabel(ASK_INTRO)
        intro.setTextFormat(Qt.TextFormat.PlainText)
        intro.setWordWrap(True)
        self.request_choice = QComboBox()
        self.request_choice.setObjectName("callerRequestChoice")
        for request in self._requests:
            self.request_choice.addItem(_short(request), request)
        self.request_choice.setVisible(len(self._requests) > 1)
        self.request_edit = QPlainTextEdit(self._requests[0] if self._requests else "")
        self.request_edit.setObjectName("callerRequest")
        self.request_edit.setTabChangesFocus(True)
        self.request_edit.setFixedHeight(3 * lines + 12)
        self.tool_choice = QComboBox()
        self.tool_choice.setObjectName("callerTool")
        self.tool_choice.addItems(tools)
        if tool_name is None and self._requests:
            tool_name = likely_tool(document.agent.tools, self._requests[0])
        if tool_name in tools:
            self.tool_choice.setCurrentText(tool_name)
        self.picks = QComboBox()
        self.picks.setObjectName("callerPicks")
        self.fills = QLineEdit()
        self.fills.setObjectName("callerFills")
        self.fills.setFont(mono)
        self.fills.setPlaceholderText('optional, e.g. {"destination": "LIS"}')
        self.contains_edit = QLineEdit(" ".join(contains.split()))
        self.contains_edit.setObjectName("callerContains")
        self.contains_edit.setPlaceholderText("optional: a piece every good answer has")
        self.name_edit = QLineEdit()
        self.name_edit.setObjectName("caseName")
        self.note = QLabel()
        self.note.setObjectName("callerCaseNote")
        self.note.setWordWrap(True)
        self.note.setStyleSheet(f"color: {_WARN};")

        form = QFormLayout()
        form.setFieldGrowthPolicy(QFormLayout.FieldGrowthPolicy.AllNonFixedFieldsGrow)
        if len(self._requests) > 1:
            form.addRow("Typed in this chat:", self.request_choice)
        form.addRow("Request (ask):", self.request_edit)
        form.addRow("Kept under the tool:", self.tool_choice)
        form.addRow("Caller picks:", self.picks)
        form.addRow("Caller fills:", self.fills)
        form.addRow("Answer must contain:", self.contains_edit)
        form.addRow("Name:", self.name_edit)
        self.buttons = QDialogButtonBox(
            QDialogButtonBox.StandardButton.Save | QDialogButtonBox.StandardButton.Cancel
        )
        self.buttons.accepted.connect(self._on_save_clicked)
        self.buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.addWidget(intro)
        layout.addLayout(form, 1)
        layout.addWidget(self.note)
        layout.addWidget(self.buttons)

        self._fill_picks()
        self._suggest_name()
        self.request_choice.currentIndexChanged.connect(self._on_request_chosen)
        self.request_edit.textChanged.connect(self._on_request_edited)
        self.tool_choice.currentIndexChanged.connect(self._on_tool_chosen)
        self.picks.currentIndexChanged.connect(self._check)
        self.fills.textChanged.connect(self._check)
        self.name_edit.textChanged.connect(self._check)
        self._check()
        fit_to_screen(self, 600, self.sizeHint().height())

    # -- the case ---------------------------------------------------------------------------

    @property
    def tool_name(self) -> str:
        """The tool the case is kept under."""
        return self.tool_choice.currentText()

    def case(self) -> TestCase:
        """The case as it would be saved (before a taken name gets its number).

        Raises:
            ValueError: the request is blank or the arguments are not a JSON object.
        """
        ask = self.request_edit.toPlainText().strip()
        if not ask:
            raise ValueError("Type the request: the caller model gets nothing else.")
        try:
            fills = parse_object(self.fills.text())
        except ValueError as exc:
            raise ValueError(f"Caller fills: {exc}") from None
        return new_caller_case(
            " ".join(self.name_edit.text().split()) or self._named,
            ask,
            picks=self.picks.currentData(),
            arguments=fills,
            contains=self.contains_edit.text(),
        )

    def save(self) -> str | None:
        """Add the case to the tool (one undo step) and say so; the name it got, or None."""
        tool = self.tool_name
        if self.document.agent.metadata.tool(tool) is None:
            reporter().warning(
                f"{self.document.agent.metadata.name} has no tool {tool} any more: the caller "
                "case was not saved."
            )
            return None
        try:
            case = self.case()
        except ValueError as exc:
            self.note.setText(str(exc))
            return None
        name = add_case_reported(self.document, tool, case, "caller case")
        if name is not None:
            self.saved.emit(name)
        return name

    # -- reactions --------------------------------------------------------------------------

    def _on_save_clicked(self) -> None:
        if self.save() is not None:
            self.accept()

    def _fill_picks(self) -> None:
        own = self.tool_name
        self.picks.blockSignals(True)
        self.picks.clear()
        self.picks.addItem(picks_text(None, own), None)
        for tool in self.document.agent.tools:
            if tool.name != own:
                self.picks.addItem(tool.name, tool.name)
        self.picks.addItem(f"{NONE}: {picks_text(NONE, own)}", NONE)
        self.picks.blockSignals(False)

    def _suggest_name(self) -> None:
        """Name the case after its request, unless the person has typed a name of their own."""
        typed = self.name_edit.text()
        suggested = ask_case_name(self.document, self.tool_name, self.request_edit.toPlainText())
        if not typed or typed == self._named:
            self.name_edit.setText(suggested)
        self._named = suggested

    def _on_request_chosen(self, index: int) -> None:
        if 0 <= index < len(self._requests):
            self.request_edit.setPlainText(self._requests[index])

    def _on_request_edited(self) -> None:
        self._suggest_name()
        self._check()

    def _on_tool_chosen(self) -> None:
        self._fill_picks()
        self._suggest_name()
        self._check()

    def _check(self) -> None:
        """Say what stops the save (Save off) or what the case cannot meet."""
        save = self.buttons.button(QDialogButtonBox.StandardButton.Save)
        try:
            case = self.case()
        except ValueError as exc:
            self.note.setText(str(exc))
            save.setEnabled(False)
            return
        save.setEnabled(True)
        tools = {tool.name: tool.parameters for tool in self.document.agent.tools}
        lines = arguments_notes(case.expect.picks, case.expect.arguments, self.tool_name, tools)
        wanted = " ".join(self.name_edit.text().split())
        free = unique_case_name(self.document, self.tool_name, wanted or self._named)
        if wanted and free != wanted:
            lines.append(f"“{wanted}” is taken: it saves as “{free}”.")
        self.note.setText("\n".join(lines))
