"""The "Save as test case" dialog: keep a finished tool run as a test case of its tool.

Opened from a tool test's chat tab and from a run in History, with the run's tool, arguments and
answer (the ``CallToolResult`` text an MCP client got: the error message for a failed run). The
person names the case, may give a piece of the answer every good answer holds (``contains``;
selecting text in the answer shown puts it there) and, for a failed run, may expect an error.
Saving goes through :func:`app.document.test_cases.add_test_case`: one undo step in the agent,
reported in the status bar with the name the case got.
"""

from __future__ import annotations

import html
import json
from collections.abc import Mapping
from typing import Any

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QFontDatabase
from PySide6.QtWidgets import (
    QCheckBox,
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
from app.document.test_cases import add_test_case, new_case, unique_case_name
from app.errors import reporter
from app.window.screen_fit import fit_to_screen
from schema_types.cases import TestCase

__all__ = ["SaveCaseDialog", "add_case_reported", "default_case_name", "open_save_case_dialog"]

_OK, _WARN = "#2e7d32", "#b26a00"
_NAME_LIMIT = 40


def _summary_parts(arguments: Mapping[str, Any]) -> list[str]:
    parts: list[str] = []
    for key, value in arguments.items():
        if isinstance(value, str) and value.strip():
            parts.append(" ".join(value.split()))
        elif isinstance(value, bool | int | float):
            parts.append(f"{key} {json.dumps(value)}")
        elif isinstance(value, Mapping):
            parts.extend(_summary_parts(value))
    return parts


def default_case_name(document: AgentDocument, tool_name: str, arguments: Mapping[str, Any]) -> str:
    """A free name that tells the arguments apart (``Oslo, passengers 2``: the texts and numbers
    in them, objects included), else ``Case N``."""
    summary = ", ".join(_summary_parts(arguments))
    if len(summary) > _NAME_LIMIT:
        summary = summary[: _NAME_LIMIT - 1].rstrip(", ") + "…"
    if not summary:
        tool = document.agent.metadata.tool(tool_name)
        summary = f"Case {len(tool.tests) + 1 if tool is not None else 1}"
    return unique_case_name(document, tool_name, summary)


def _missing_tool(document: AgentDocument, tool_name: str) -> str:
    return (
        f"{document.agent.metadata.name} has no tool {tool_name} any more: the test case was not "
        "saved. Run the tool as it is now and save that run."
    )


def add_case_reported(
    document: AgentDocument, tool_name: str, case: TestCase, kind: str
) -> str | None:
    """Add ``case`` to the tool (one undo step) and say so in the status bar, as a ``kind``
    ("test case", "caller case"); the name it got, or None (the document reported why)."""
    name = add_test_case(document, tool_name, case)
    if name is None:
        return None
    renamed = f" (“{case.name}” was taken)" if name != case.name else ""
    reporter().info(f"Saved {kind} “{name}” to {tool_name}{renamed}")
    return name


def open_save_case_dialog(
    document: AgentDocument,
    tool_name: str,
    arguments: Mapping[str, Any],
    *,
    answer: str = "",
    contains: str = "",
    failed: bool = False,
    parent: QWidget | None = None,
) -> SaveCaseDialog | None:
    """Show the dialog (window-modal, not blocking); None, reported, when the tool is gone."""
    if document.agent.metadata.tool(tool_name) is None:
        reporter().warning(_missing_tool(document, tool_name))
        return None
    dialog = SaveCaseDialog(
        document,
        tool_name,
        arguments,
        answer=answer,
        contains=contains,
        failed=failed,
        parent=parent,
    )
    dialog.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
    dialog.open()
    return dialog


class SaveCaseDialog(QDialog):
    """Name a run's arguments as a test case of ``tool_name`` and say what its answer holds.

    Args:
        document: the open agent the case goes into.
        tool_name: the tool that ran.
        arguments: the call's arguments (saved as they are).
        answer: the text the caller got (the error message for a failed run).
        contains: the pre-filled "Answer must contain" (what the person selected).
        failed: the run failed: offer "Expect an error".
        parent: the parent widget.

    Signals:
        saved(str): the case was saved, under this name.
    """

    saved = Signal(str)

    def __init__(
        self,
        document: AgentDocument,
        tool_name: str,
        arguments: Mapping[str, Any],
        *,
        answer: str = "",
        contains: str = "",
        failed: bool = False,
        parent: QWidget | None = None,
    ) -> None:
        super().__init__(parent)
        self.setObjectName("saveCaseDialog")
        self.setWindowTitle(f"Save as test case · {tool_name}")
        self.document = document
        self.tool_name = tool_name
        self.arguments = dict(arguments)
        self.answer = answer
        self.failed = failed
        mono = QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont)
        lines = self.fontMetrics().lineSpacing()

        intro = QLabel(
            f"A test case of <b>{html.escape(tool_name)}</b> calls it with these arguments; "
            "<code>metaagent test</code> checks the answer."
        )
        intro.setWordWrap(True)
        self.name_edit = QLineEdit(default_case_name(document, tool_name, arguments))
        self.name_edit.setObjectName("caseName")
        self.name_edit.selectAll()  # typing replaces the suggested name
        self.name_note = QLabel()
        self.name_note.setStyleSheet(f"color: {_WARN};")
        self.arguments_view = QPlainTextEdit(
            json.dumps(self.arguments, indent=2, ensure_ascii=False, default=str)
        )
        self.arguments_view.setObjectName("caseArguments")
        self.arguments_view.setReadOnly(True)
        self.arguments_view.setFont(mono)
        shown = min(max(self.arguments_view.document().lineCount(), 2), 8)
        self.arguments_view.setFixedHeight(shown * lines + 12)
        self.contains_edit = QPlainTextEdit(contains.strip())
        self.contains_edit.setObjectName("caseContains")
        self.contains_edit.setTabChangesFocus(True)
        self.contains_edit.setFont(mono)
        self.contains_edit.setPlaceholderText(
            "Optional: a piece every good answer has (select it in the answer below)"
        )
        self.contains_edit.setFixedHeight(3 * lines + 12)
        self.contains_note = QLabel()
        self.contains_note.setObjectName("caseContainsNote")
        self.contains_note.setWordWrap(True)
        self.answer_view = QPlainTextEdit(answer)
        self.answer_view.setObjectName("caseAnswer")
        self.answer_view.setReadOnly(True)
        self.answer_view.setFont(mono)
        self.answer_view.setPlaceholderText("(this run has no answer)")
        self.answer_view.setMinimumHeight(4 * lines + 12)
        self.answer_view.setToolTip("Select a part of it to require it in every answer")
        self.expect_error: QCheckBox | None = None
        if failed:
            self.expect_error = QCheckBox("Expect an error: the call must fail, as this run did")
            self.expect_error.setObjectName("caseExpectError")
            self.expect_error.toggled.connect(self._on_contains_changed)

        form = QFormLayout()
        form.setFieldGrowthPolicy(QFormLayout.FieldGrowthPolicy.AllNonFixedFieldsGrow)
        form.addRow("Name:", self.name_edit)
        form.addRow("", self.name_note)
        form.addRow("Arguments:", self.arguments_view)
        form.addRow("Answer must contain:", self.contains_edit)
        form.addRow("", self.contains_note)
        answer_title = "Error the caller got:" if failed else "This run's answer:"
        form.addRow(answer_title, self.answer_view)
        if self.expect_error is not None:
            form.addRow("", self.expect_error)

        self.buttons = QDialogButtonBox(
            QDialogButtonBox.StandardButton.Save | QDialogButtonBox.StandardButton.Cancel
        )
        self.buttons.accepted.connect(self._on_save_clicked)
        self.buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.addWidget(intro)
        layout.addLayout(form, 1)
        layout.addWidget(self.buttons)
        fit_to_screen(self, 560, self.sizeHint().height())

        self.name_edit.textChanged.connect(self._on_name_changed)
        self.contains_edit.textChanged.connect(self._on_contains_changed)
        self.answer_view.selectionChanged.connect(self._on_answer_selected)
        self._on_name_changed()
        self._on_contains_changed()

    def case(self) -> TestCase:
        """The case as it would be saved (before a taken name gets its number)."""
        return new_case(
            self.name_edit.text(),
            self.arguments,
            contains=self.contains_edit.toPlainText(),
            is_error=self.expect_error is not None and self.expect_error.isChecked(),
        )

    def save(self) -> str | None:
        """Add the case to the tool (one undo step) and say so; the name it got, or None."""
        if self.document.agent.metadata.tool(self.tool_name) is None:
            reporter().warning(_missing_tool(self.document, self.tool_name))
            return None
        name = add_case_reported(self.document, self.tool_name, self.case(), "test case")
        if name is not None:
            self.saved.emit(name)
        return name

    def _on_save_clicked(self) -> None:
        if self.save() is not None:
            self.accept()

    def _on_name_changed(self) -> None:
        wanted = " ".join(self.name_edit.text().split()) or "Case"
        free = unique_case_name(self.document, self.tool_name, wanted)
        taken = free != wanted
        self.name_note.setText(f"“{wanted}” is taken: it saves as “{free}”" if taken else "")
        self.name_note.setVisible(taken)

    def _on_contains_changed(self) -> None:
        needle = self.contains_edit.toPlainText().strip()
        expects_error = self.expect_error is not None and self.expect_error.isChecked()
        if self.failed and not expects_error:
            text, color = "This run failed: the case expects the call to succeed.", _WARN
        elif not needle:
            ends = "fails" if expects_error else "succeeds"
            text, color = f"Without it, the case passes whenever the call {ends}.", ""
        elif needle in self.answer:
            text, color = "✓ This run's answer has it.", _OK
        else:
            text = "⚠ Not in this run's answer as the caller got it: this run would fail the case."
            color = _WARN
        self.contains_note.setText(text)
        self.contains_note.setStyleSheet(f"color: {color};" if color else "")

    def _on_answer_selected(self) -> None:
        selected = self.answer_view.textCursor().selection().toPlainText().strip()
        if selected:
            self.contains_edit.setPlainText(selected)
