"""The editor of one test case in the Tests panel: its name, arguments and expectations.

A caller case (one with a request in words, ``ask``) shows its request where an ordinary case
shows its arguments (:class:`~app.tool_editor.case_caller.AskPane`), and the caller's two
expectations, the tool it must call and the arguments it must fill, at the top of the others
(:class:`~app.tool_editor.case_caller.CallerRows`).

:class:`CaseEditor` shows the case of its tool named :meth:`CaseEditor.case_name` and writes every
change through :func:`~app.document.test_cases.replace_test_case`, one undo step per edit: typing
in one field merges into one step (a merge id per case and field) until the focus leaves the
editor's field, as in the rest of the studio. The name is applied on Enter or when the focus
leaves it, and only when it is free; an expectation is written only once it reads and the case
model takes it (:mod:`app.tool_editor.case_values`), so an invalid pattern, JSON Schema, limit or
list line stays in its field with the reason under it and the agent keeps the last valid value.

:meth:`CaseEditor.refresh` (the panel calls it when the tool's cases change: an undo, a redo,
another view) updates a field only when the case's value there changed and differs from what
the field reads, so the field being typed in keeps its cursor and a field holding input that is
not valid yet keeps it unless its own value was undone.
"""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import QEvent, QObject, QSignalBlocker, Qt, Signal
from PySide6.QtWidgets import (
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QSplitter,
    QStackedWidget,
    QVBoxLayout,
    QWidget,
)

from app.document.agent_document import merge_id_for
from app.document.test_cases import case_path, replace_test_case
from app.document.tool_ref import ToolRef
from app.layouts import scroll_area
from app.tool_editor.case_arguments import CaseArguments
from app.tool_editor.case_caller import AskPane, CallerRows
from app.tool_editor.case_expectations import ExpectationsForm, ExpectField, problem_line
from app.tool_editor.case_values import with_arguments, with_ask, with_expectation, with_name
from app.tool_editor.sample_panel import heading
from schema_types.cases import TestCase

__all__ = ["CaseEditor"]


class CaseEditor(QWidget):
    """One case of the tool ``ref`` follows.

    Args:
        ref: the tool.
        parent: the owning widget.

    Attributes:
        name_edit: the case's name (applied on Enter or when the focus leaves).
        name_problem: why the typed name is not applied.
        arguments: the case's arguments (form or JSON).
        ask: a caller case's request in words (shown instead of :attr:`arguments`).
        caller: a caller case's expectations of the caller (shown for caller cases only).
        expectations: the expectation inputs.
        fields: the expectation inputs, by ``Expectations`` field name (``expectations.fields``).
    """

    renamed = Signal(str)
    """The case was renamed here; carries the new name."""
    form_replaced = Signal(object)
    """The arguments form was rebuilt (new text fields); carries it."""

    def __init__(self, ref: ToolRef, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("caseEditor")
        self.ref = ref
        self.document = ref.document
        self._name: str | None = None
        self._shown: TestCase | None = None
        self._showing = False

        self.name_edit = QLineEdit()
        self.name_edit.setObjectName("caseName")
        self.name_edit.setToolTip("Unique among this tool's cases. Press Enter to rename.")
        tool = ref.tool()
        self.arguments = CaseArguments(tool.parameters if tool is not None else {})
        self.ask = AskPane()
        self.expectations = ExpectationsForm()
        self.caller = CallerRows(self.expectations)
        self.caller.add_to(self.expectations)
        self.fields = self.expectations.fields
        self.name_problem = problem_line(self)

        name_row = QHBoxLayout()
        name_row.setContentsMargins(0, 0, 0, 0)
        name_label = QLabel("Case name:")  # no mnemonic: the tool's own &Name is beside it
        name_label.setBuddy(self.name_edit)
        name_row.addWidget(name_label)
        name_row.addWidget(self.name_edit, 1)
        scroll = scroll_area(self.expectations, "expectationsScroll")
        right = QWidget()
        right_layout = QVBoxLayout(right)
        right_layout.setContentsMargins(0, 0, 0, 0)
        right_layout.setSpacing(2)
        right_layout.addWidget(heading("Expectations"))
        right_layout.addWidget(scroll, 1)
        self.split = QSplitter(Qt.Orientation.Horizontal)
        self.split.setObjectName("caseEditorSplit")
        self.split.setChildrenCollapsible(False)
        self.input = QStackedWidget()
        self.input.addWidget(self.arguments)
        self.input.addWidget(self.ask)
        self.split.addWidget(self.input)
        self.split.addWidget(right)
        self.split.setStretchFactor(0, 1)
        self.split.setStretchFactor(1, 1)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addLayout(name_row)
        layout.addWidget(self.name_problem)
        layout.addWidget(self.split, 1)

        self.name_edit.textEdited.connect(self._on_name_edited)
        self.name_edit.editingFinished.connect(self._on_name_committed)
        self.arguments.edited.connect(self._on_arguments_edited)
        self.ask.edited.connect(self._on_ask_edited)
        self.expectations.edited.connect(self._on_field_edited)
        self.arguments.form_replaced.connect(self._on_form_replaced)
        self._watch_focus(self)

    # -- the case --------------------------------------------------------------------------

    def case_name(self) -> str | None:
        """The name of the case shown (None: none)."""
        return self._name

    def case(self) -> TestCase | None:
        """The case shown, as the agent has it now."""
        tool = self.ref.tool()
        if tool is None or self._name is None:
            return None
        return next((case for case in tool.tests if case.name == self._name), None)

    def show_case(self, name: str | None) -> None:
        """Show the case named ``name`` (every field anew; None: nothing)."""
        self._name = name
        self._shown = None
        self.refresh()

    def refresh(self) -> None:
        """Show what changed in the case (after an edit, undo or redo anywhere)."""
        case = self.case()
        self.setEnabled(case is not None)
        if case is None:
            self._shown = None
            return
        before, self._shown = self._shown, case
        if before is case:
            return
        self._showing = True
        try:
            self._show_kind(case, before)
            if before is None or (
                before.name != case.name and self.name_edit.text().strip() != case.name
            ):
                self.name_edit.setText(case.name)
                self.name_problem.hide()
            if before is None or (
                before.arguments != case.arguments and self.arguments.arguments() != case.arguments
            ):
                self.arguments.show_arguments(case.arguments)
            for field in self.fields.values():
                value = getattr(case.expect, field.name)
                if before is not None and getattr(before.expect, field.name) == value:
                    continue
                if before is None or not field.reads_as(value):
                    with QSignalBlocker(field.widget):
                        field.show(value)
                    field.problem.hide()
        finally:
            self._showing = False

    def _show_kind(self, case: TestCase, before: TestCase | None) -> None:
        """An ordinary case's arguments, or a caller case's request and caller rows."""
        caller = case.ask is not None
        self.input.setCurrentWidget(self.ask if caller else self.arguments)
        self.caller.set_visible(caller)
        tool = self.ref.tool()
        if caller and tool is not None:
            tools = {t.name: t.parameters for t in self.document.agent.tools}
            self.caller.set_tools(tool.name, tools)
        ask = case.ask or ""
        if before is None or (before.ask != case.ask and self.ask.edit.toPlainText() != ask):
            self.ask.show_ask(ask)

    def set_parameters(self) -> None:
        """The tool's parameters changed: build the arguments form anew."""
        tool = self.ref.tool()
        if tool is not None:
            self.arguments.set_parameters(tool.parameters)

    # -- view → document -------------------------------------------------------------------

    def _write(self, case: TestCase, key: str) -> bool:
        tool, old = self.ref.tool(), self._name
        if tool is None or old is None:
            return False
        path = case_path(self.document, tool.name, old)
        if path is None:
            return False
        merge = merge_id_for((*path, key)) if key else -1
        self._name = case.name
        if not replace_test_case(self.document, tool.name, old, case, merge_id=merge):
            self._name = old
            return False
        return True

    def _on_field_edited(self, field: ExpectField) -> None:
        case = self.case()
        if self._showing or case is None:
            return
        try:
            changed = with_expectation(case, field.name, field.read())
        except ValueError as exc:
            field.problem.setText(f"Not saved: {exc}")
            field.problem.show()
            return
        field.problem.hide()
        # A choice (a check box, a picked tool) is a step of its own; typing merges.
        single = field.name in ("is_error", "picks")
        self._write(changed, "" if single else f"expect.{field.name}")

    def _on_ask_edited(self, text: str) -> None:
        case = self.case()
        if self._showing or case is None or case.ask is None or case.ask == text:
            return
        try:
            changed = with_ask(case, text)
        except ValueError as exc:
            self.ask.problem.setText(f"Not saved: {exc}")
            self.ask.problem.show()
            return
        self.ask.problem.hide()
        self._write(changed, "ask")

    def _on_arguments_edited(self, arguments: dict[str, Any]) -> None:
        case = self.case()
        if self._showing or case is None or case.arguments == arguments:
            return
        self._write(with_arguments(case, arguments), "arguments")

    def _name_problem(self, text: str) -> str:
        tool, case = self.ref.tool(), self.case()
        if not text:
            return "A case needs a name."
        taken = tool is not None and any(other.name == text for other in tool.tests)
        if tool is not None and case is not None and text != case.name and taken:
            return f"Another case of {tool.name} is called {text}."
        return ""

    def _on_name_edited(self, text: str) -> None:
        problem = self._name_problem(" ".join(text.split()))
        self.name_problem.setText(problem)
        self.name_problem.setVisible(bool(problem))

    def _on_name_committed(self) -> None:
        case = self.case()
        text = " ".join(self.name_edit.text().split())
        if case is None or text == case.name or self._name_problem(text):
            return
        if self._write(with_name(case, text), ""):
            self.renamed.emit(text)

    def _watch_focus(self, root: QWidget) -> None:
        for widget in root.findChildren(QWidget):
            widget.installEventFilter(self)

    def _on_form_replaced(self, form: QWidget) -> None:
        self._watch_focus(form)
        self.form_replaced.emit(form)

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:  # noqa: N802 (Qt override)
        """A field losing the focus ends its typing run: the next edit is a new undo step."""
        if event.type() == QEvent.Type.FocusOut:
            self.document.seal()
        return False
