"""What a caller case shows in the case editor: its request in words, and what the caller must do.

A caller case (``ask`` set) starts from a request instead of arguments. :class:`AskPane` takes the
arguments' place in the case editor: the request, as a person would type it to a client (blank
is refused, with the reason under it). :class:`CallerRows` are two expectations at the top of the
expectation form, shown for caller cases only:

- *Caller picks*: the tool the caller model must call: this tool (``picks`` left out), another of
  the agent's tools, or ``none`` (it must call none of them). A name the agent does not have is
  kept and marked.
- *Caller fills*: a JSON object of arguments the call must include (a subset, compared as
  ``toolCalls`` compares them); empty: any. A note says when a key is not a parameter of the
  picked tool, or when arguments are set although the caller must call nothing: such a case
  cannot pass.

Both are :class:`~app.tool_editor.case_expectations.ExpectField` objects, so the case editor
shows, reads, undoes and refuses them as it does every other expectation.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from PySide6.QtCore import QSignalBlocker, Signal
from PySide6.QtGui import QFontDatabase
from PySide6.QtWidgets import (
    QComboBox,
    QLabel,
    QPlainTextEdit,
    QVBoxLayout,
    QWidget,
)

from app.document.caller_cases import NONE
from app.tool_editor.case_expectations import ExpectationsForm, ExpectField, problem_line
from app.tool_editor.case_values import json_value
from app.tool_editor.sample_panel import heading

__all__ = [
    "ASK_INTRO",
    "AskPane",
    "CallerRows",
    "arguments_notes",
    "parse_object",
    "picks_text",
]

ASK_INTRO = (
    "A caller model (the client's model: Claude, GPT, a local model) gets this request with the "
    "tool list a client sees. The case checks which tool it calls and what it fills in, then "
    "serves that call and checks the answer."
)


def picks_text(picks: str | None, own: str) -> str:
    """What the caller must call, in words (``book_flight (this tool)``, ``no tool of ours``)."""
    if picks is None or picks == own:
        return f"{own} (this tool)"
    if picks == NONE:
        return "none of this agent's tools"
    return picks


def parse_object(text: str) -> dict[str, Any] | None:
    """The JSON object typed (None for an empty text).

    Raises:
        ValueError: not JSON, or not an object.
    """
    if not text.strip():
        return None
    value = json_value(text)
    if not isinstance(value, dict):
        raise ValueError('the arguments the caller must fill are a JSON object: {"key": value}')
    return value


def _object_text(value: Mapping[str, Any] | None) -> str:
    return "" if not value else json.dumps(value, ensure_ascii=False)


def arguments_notes(
    picks: str | None,
    arguments: Mapping[str, Any] | None,
    own: str,
    tools: Mapping[str, Mapping[str, Any]],
) -> list[str]:
    """Why a caller case's expected arguments cannot be met (no note: they can).

    Args:
        picks: the case's ``picks``.
        arguments: the case's ``arguments``.
        own: the case's own tool.
        tools: every tool of the agent: name → parameters schema.
    """
    if not arguments:
        return []
    if picks == NONE:
        return ["The caller must call none of this agent's tools, so it fills no arguments."]
    name = own if picks is None else picks
    schema = tools.get(name)
    if schema is None:
        return []
    properties = schema.get("properties")
    if not isinstance(properties, Mapping) or not properties:
        return []
    unknown = [key for key in arguments if key not in properties]
    if not unknown:
        return []
    one = len(unknown) == 1
    return [
        f"{', '.join(unknown)} {'is not a parameter' if one else 'are not parameters'} of "
        f"{name}: a caller that follows its schema never fills {'it' if one else 'them'}."
    ]


class AskPane(QWidget):
    """The request of a caller case.

    Attributes:
        edit: the request.
        problem: why the text typed is not saved (hidden when it is).
    """

    edited = Signal(str)
    """The person changed the request; carries its text."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("caseAskPane")
        self.edit = QPlainTextEdit()
        self.edit.setObjectName("caseAsk")
        self.edit.setAccessibleName("Request in words")
        self.edit.setTabChangesFocus(True)
        self.edit.setPlaceholderText(
            "e.g. Book me, my wife and our 7-year-old from London to Lisbon on 1 June."
        )
        intro = QLabel(ASK_INTRO)
        intro.setObjectName("caseAskIntro")
        intro.setWordWrap(True)
        self.problem = problem_line(self)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(4)
        layout.addWidget(heading("Re&quest in words", self.edit))
        layout.addWidget(self.edit, 1)
        layout.addWidget(self.problem)
        layout.addWidget(intro)
        self.edit.textChanged.connect(lambda: self.edited.emit(self.edit.toPlainText()))

    def show_ask(self, ask: str) -> None:
        """Put the case's request in (without :attr:`edited`)."""
        if self.edit.toPlainText() != ask:
            with QSignalBlocker(self.edit):
                self.edit.setPlainText(ask)
        self.problem.hide()


class CallerRows:
    """The caller's expectations: the tool it must call and the arguments it must fill.

    Args:
        owner: the expectation form the rows go into (:meth:`add_to`; their problem lines take
            its palette).

    Attributes:
        picks: the tool the caller must call.
        fills: the arguments it must fill, as JSON.
        note: why the expected arguments cannot be met (hidden when they can).
    """

    def __init__(self, owner: ExpectationsForm) -> None:
        self._own = ""
        self._tools: dict[str, Mapping[str, Any]] = {}
        self._labels: list[QLabel] = []
        self._cells: list[QWidget] = []
        self.picks = QComboBox()
        self.picks.setObjectName("expectPicks")
        self.picks.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToContents)
        self.fills = QPlainTextEdit()
        self.fills.setObjectName("expectFills")
        self.fills.setTabChangesFocus(True)
        self.fills.setFont(QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont))
        self.fills.setFixedHeight(self.fills.fontMetrics().lineSpacing() * 2 + 12)
        self.fills.setPlaceholderText('{"destination": "LIS"}: any, when empty')
        self.note = QLabel()
        self.note.setObjectName("expectFillsNote")
        self.note.setWordWrap(True)
        self.note.hide()
        self.picks_field = ExpectField(
            "picks",
            self.picks,
            problem_line(owner),
            show=self._show_picks,
            read=lambda: self.picks.currentData(),
            normal=lambda v: None if v == self._own else v,
        )
        self.fills_field = ExpectField(
            "arguments",
            self.fills,
            problem_line(owner),
            show=self._show_fills,
            read=lambda: parse_object(self.fills.toPlainText()),
            normal=lambda v: v or None,
        )
        self.picks.currentIndexChanged.connect(lambda _index: self._update_note())
        self.fills.textChanged.connect(self._update_note)

    def add_to(self, form: ExpectationsForm) -> None:
        """Put the rows at the top of ``form``: its fields and its :attr:`edited` signal."""
        for row, (label_text, field, extra, tip) in enumerate(
            (
                (
                    "Caller &picks:",
                    self.picks_field,
                    (),
                    "The tool the caller model must call for this request: this tool, another "
                    "of the agent's, or none of them (the request is not for this agent).",
                ),
                (
                    "Caller &fills:",
                    self.fills_field,
                    (self.note,),
                    "Arguments the caller's call must include, as a JSON object (nested objects "
                    "are compared as subsets, as Tool calls compares them); empty: any.",
                ),
            )
        ):
            field.widget.setToolTip(tip)
            label = QLabel(label_text)
            label.setBuddy(field.widget)
            label.setToolTip(tip)
            cell = QWidget()
            column = QVBoxLayout(cell)
            column.setContentsMargins(0, 0, 0, 0)
            column.setSpacing(2)
            for widget in (field.widget, field.problem, *extra):
                column.addWidget(widget)
            form.form.insertRow(row, label, cell)
            form.fields[field.name] = field
            self._labels.append(label)
            self._cells.append(cell)
        self.picks.currentIndexChanged.connect(lambda _i: form.edited.emit(self.picks_field))
        self.fills.textChanged.connect(lambda: form.edited.emit(self.fills_field))

    def set_visible(self, visible: bool) -> None:
        """Show the rows (a caller case) or hide them (an ordinary one)."""
        for widget in (*self._labels, *self._cells):
            widget.setVisible(visible)

    def set_tools(self, own: str, tools: Mapping[str, Mapping[str, Any]]) -> None:
        """The case's own tool and the agent's tools (name → parameters) the caller may pick."""
        if own == self._own and list(tools) == list(self._tools):
            self._tools = dict(tools)
            self._update_note()
            return
        current = self.picks.currentData() if self.picks.count() else None
        self._own, self._tools = own, dict(tools)
        with QSignalBlocker(self.picks):
            self._fill_picks()
            self._show_picks(None if current == own else current)
        self._update_note()

    # -- inside ----------------------------------------------------------------------------

    def _fill_picks(self) -> None:
        self.picks.clear()
        self.picks.addItem(picks_text(None, self._own), None)
        for name in self._tools:
            if name != self._own:
                self.picks.addItem(name, name)
        self.picks.addItem(f"{NONE}: {picks_text(NONE, self._own)}", NONE)

    def _show_picks(self, value: str | None) -> None:
        wanted = None if value == self._own else value
        index = self.picks.findData(wanted)
        if index < 0 and wanted is not None:
            self.picks.addItem(f"{wanted} (not a tool of this agent)", wanted)
            index = self.picks.count() - 1
        self.picks.setCurrentIndex(max(index, 0))
        self._update_note()  # shown with the signals blocked: nothing else updates it

    def _show_fills(self, value: Mapping[str, Any] | None) -> None:
        self.fills.setPlainText(_object_text(value))
        self._update_note()

    def _update_note(self) -> None:
        try:
            arguments = parse_object(self.fills.toPlainText())
        except ValueError:
            arguments = None  # the problem line says what is wrong with the text
        lines = arguments_notes(self.picks.currentData(), arguments, self._own, self._tools)
        self.note.setText("\n".join(lines))
        self.note.setVisible(bool(lines))  # in the fills row: hidden with it
