"""The arguments of a test case in the Tests panel: the test dialog's form, or the same as JSON.

:class:`CaseArguments` shows a case's arguments in :class:`~app.test_run.form.ArgumentsForm` (the
form the Test dialog fills) and reads them back the way the dialog does: inputs that cannot be
read (a JSON field with invalid text) stop the arguments from being taken at all, and the
schema's verdict (``validate_arguments``, the server's validator) is shown at the fields it names.
A case may keep arguments the tool refuses (a case that expects the call to fail), so refused
arguments are still taken, with a note saying a call with them fails.

"JSON" switches to the arguments as JSON text, a parse error named under it and nothing taken
until it reads as an object. When a case holds a value the form cannot show (a key the schema
does not list, a choice outside its ``enum``), the form would drop it: the arguments are then
shown as JSON only, and the note names the values.

:attr:`CaseArguments.edited` carries the arguments each time the person changes them to a
readable value; :meth:`CaseArguments.show_arguments` puts a case's arguments in without
signalling.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from PySide6.QtCore import QSignalBlocker, Signal
from PySide6.QtGui import QFontDatabase
from PySide6.QtWidgets import (
    QHBoxLayout,
    QLabel,
    QPlainTextEdit,
    QStackedWidget,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from app.layouts import scroll_area
from app.test_run.form import ArgumentsForm
from app.tool_editor.sample_panel import heading, show_as_error
from schema_types.arguments import validate_arguments
from schema_types.errors import ArgumentsError, Problem, SchemaDefinitionError

__all__ = ["CaseArguments"]


def _schema_problems(parameters: Mapping[str, Any], arguments: dict[str, Any]) -> list[Problem]:
    """What the server's validator refuses in ``arguments`` (as the Test dialog reads them)."""
    try:
        validate_arguments(parameters, arguments)
    except ArgumentsError as exc:
        return list(exc.problems)
    except SchemaDefinitionError as exc:
        return [Problem("", f"the parameters schema is invalid: {p}") for p in exc.problems]
    return []


def _problem_lines(problems: list[Problem]) -> str:
    return "\n".join(f"{p.path}: {p.message}" if p.path else p.message for p in problems)


class CaseArguments(QWidget):
    """A case's arguments in the test form, or as JSON.

    Args:
        parameters: the tool's parameters schema.
        parent: the owning widget.

    Attributes:
        form: the test dialog's form for the tool's parameters.
        json_edit: the arguments as JSON text.
        json_button: shows the JSON text instead of the form (checked).
        note: what is wrong with the arguments shown, or why the form is not offered.
    """

    edited = Signal(object)
    """The person changed the arguments; carries them (a dict) as a caller would send them."""
    form_replaced = Signal(object)
    """A new form was built (new text fields); carries it."""

    def __init__(self, parameters: Mapping[str, Any], parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("caseArguments")
        self._parameters: Mapping[str, Any] = parameters
        self._arguments: dict[str, Any] = {}
        self._filling = False
        self._unshown: list[str] = []

        self.form = ArgumentsForm(parameters)
        self.form_scroll = scroll_area(self.form, "caseFormScroll")
        self.json_edit = QPlainTextEdit()
        self.json_edit.setObjectName("caseArgumentsJson")
        self.json_edit.setAccessibleName("Arguments as JSON")
        self.json_edit.setFont(QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont))
        self.json_edit.setTabChangesFocus(True)
        self.json_edit.setPlaceholderText("{}")
        self.pages = QStackedWidget()
        self.pages.addWidget(self.form_scroll)
        self.pages.addWidget(self.json_edit)
        self.json_button = QToolButton()
        self.json_button.setObjectName("caseArgumentsJsonButton")
        self.json_button.setText("JSON")
        self.json_button.setCheckable(True)
        self.json_button.setToolTip("Edit the arguments as JSON instead of in the form")
        self.note = QLabel()
        self.note.setObjectName("caseArgumentsNote")
        self.note.setWordWrap(True)
        self.note.hide()

        head = QHBoxLayout()
        head.setContentsMargins(0, 0, 0, 0)
        head.addWidget(heading("Arguments"), 1)
        head.addWidget(self.json_button)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(2)
        layout.addLayout(head)
        layout.addWidget(self.pages, 1)
        layout.addWidget(self.note)

        self.form.edited.connect(self._on_form_edited)
        self.json_edit.textChanged.connect(self._on_json_edited)
        self.json_button.toggled.connect(self._on_json_toggled)

    # -- public ----------------------------------------------------------------------------

    def arguments(self) -> dict[str, Any]:
        """The last readable arguments shown (what :attr:`edited` last carried, or was shown)."""
        return dict(self._arguments)

    def show_arguments(self, arguments: Mapping[str, Any]) -> None:
        """Show ``arguments`` in the form and as JSON (without :attr:`edited`)."""
        self._arguments = dict(arguments)
        self._fill_form()
        self._set_json_text(self._arguments)
        self._check()

    def set_parameters(self, parameters: Mapping[str, Any]) -> None:
        """Build the form for new parameters and show the same arguments in it."""
        self._parameters = parameters
        old = self.form
        self.form = ArgumentsForm(parameters)
        self.form.edited.connect(self._on_form_edited)
        self.form_scroll.setWidget(self.form)  # deletes the old form
        del old
        self._fill_form()
        self._check()
        self.form_replaced.emit(self.form)

    def unshown(self) -> list[str]:
        """The paths of argument values the form cannot show (the arguments are JSON only)."""
        return list(self._unshown)

    # -- reading ---------------------------------------------------------------------------

    def _fill_form(self) -> None:
        self._filling = True
        try:
            self._unshown = self.form.set_value(self._arguments)
        finally:
            self._filling = False
        if self._unshown:
            self.json_button.setChecked(True)
        self.json_button.setEnabled(not self._unshown)
        self.json_button.setToolTip(
            "The form cannot show every value of these arguments: they are edited as JSON"
            if self._unshown
            else "Edit the arguments as JSON instead of in the form"
        )

    def _set_json_text(self, arguments: dict[str, Any]) -> None:
        text = json.dumps(arguments, indent=2, ensure_ascii=False)
        if self.json_edit.toPlainText() != text:
            with QSignalBlocker(self.json_edit):
                self.json_edit.setPlainText(text)

    def _check(self, unreadable: str = "") -> None:
        """Show what is wrong with the arguments: at the form's fields and in the note."""
        problems = _schema_problems(self._parameters, self._arguments)
        self.form.show_problems(problems)
        lines: list[str] = []
        error = bool(unreadable)
        if unreadable:
            lines.append(unreadable)
        if self._unshown:
            lines.append(
                "The form cannot show " + ", ".join(self._unshown) + ": edit these arguments as "
                "JSON, so that nothing is dropped."
            )
        if problems:
            count = len(problems)
            lines.append(
                f"A call with these arguments is refused ({count} problem{'s' * (count != 1)}"
                + (f":\n{_problem_lines(problems)}" if self.json_button.isChecked() else "")
                + "): fine when the case expects an error."
            )
        self.note.setText("\n".join(lines))
        self.note.setVisible(bool(lines))
        show_as_error(self.note, error or bool(problems))

    def _on_form_edited(self) -> None:
        if self._filling:
            return
        unreadable = self.form.input_problems()
        if unreadable:
            self.form.show_problems(unreadable)
            self.note.setText(
                "Not saved until every field can be read: " + _problem_lines(unreadable)
            )
            self.note.show()
            show_as_error(self.note, True)
            return
        self._arguments = self.form.value()
        self._set_json_text(self._arguments)
        self._check()
        self.edited.emit(dict(self._arguments))

    def _on_json_edited(self) -> None:
        text = self.json_edit.toPlainText()
        try:
            value = json.loads(text) if text.strip() else {}
        except json.JSONDecodeError as exc:
            self._check(f"Not saved: line {exc.lineno}, column {exc.colno}: {exc.msg}")
            return
        if not isinstance(value, dict):
            self._check("Not saved: the arguments are a JSON object ({…})")
            return
        self._arguments = value
        self._fill_form()
        self._check()
        self.edited.emit(dict(value))

    def _on_json_toggled(self, on: bool) -> None:
        self.pages.setCurrentWidget(self.json_edit if on else self.form_scroll)
        self._check()
