"""The "Test tool" dialog: fill a tool's arguments in a form, see the prompt, run or copy the call.

The form (:mod:`app.test_run.form`) is validated on every change with the validator the server
uses (``validate_arguments``: defaults applied, problems named by argument path), each problem
shown under its field, and Run stays disabled while there is one. Beside the form, the prompt is
rendered by the server's renderer from the arguments with defaults applied: the text a call with
these arguments submits. "Show placeholders" (the toggle in the preview's heading) shows a
parameter that has no value instead as ``{param}``.

The arguments are read from the form on every change, and once more by Run and Copy (which show
that reading before they use it), and each reading is one value that everything shows and sends:
the "Arguments sent" JSON, the prompt preview, the request Run emits
(:attr:`TestToolDialog.run_requested` with a :class:`TestRequest`; whoever opened the dialog
starts the chat tab), the ``tools/call`` text Copy puts on the clipboard, and the arguments
remembered per agent file and tool (:mod:`app.test_run.memory`) that pre-fill the dialog next time.
A tool never run starts from its sample values (the tool editor's Sample values table, with what
the person typed there); a line above the form says which start it is.
"Save as test case…" asks for a name and adds that same value as a new test case of the tool
(one undo step in the agent); the dialog stays open and its status line names the case.
Arguments put into the form (remembered, or a past call's from the history) that it cannot show
are named in a notice, not dropped silently.
"""

from __future__ import annotations

import json
from copy import deepcopy
from dataclasses import dataclass
from typing import Any

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QAction, QFont, QFontDatabase, QGuiApplication, QKeySequence
from PySide6.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QInputDialog,
    QLabel,
    QPlainTextEdit,
    QPushButton,
    QSplitter,
    QVBoxLayout,
    QWidget,
)

from app.document.agent_document import AgentDocument
from app.document.test_cases import add_test_case, new_case
from app.layouts import scroll_area
from app.save_case_dialog import default_case_name
from app.settings_store import SettingsStore
from app.test_run.form import ArgumentsForm
from app.test_run.memory import ArgumentMemory, SampleMemory, sample_values
from app.tool_editor.preview import TemplatePreview, placeholders_button, preview_column
from app.tool_editor.sample_panel import heading
from app.tool_editor.template_analysis import AnalysisRequest, TemplateAnalysis
from app.window.screen_fit import fit_to_screen
from schema_types.agent import ToolDefinition
from schema_types.arguments import apply_defaults, sample_arguments, validate_arguments
from schema_types.errors import ArgumentsError, Problem, SchemaDefinitionError
from schema_types.tool_prompt import filled_prompt

__all__ = ["TestRequest", "TestToolDialog", "mcp_call_text"]


@dataclass(frozen=True)
class TestRequest:
    """A test run the person asked for.

    Attributes:
        tool_name: the tool to run.
        arguments: the arguments as a caller would send them (no defaults filled in).
        prompt: the prompt filled from the validated arguments (defaults applied).
    """

    __test__ = False  # not a pytest test class, despite the name

    tool_name: str
    arguments: dict[str, Any]
    prompt: str


def mcp_call_text(tool_name: str, arguments: dict[str, Any]) -> str:
    """The JSON-RPC ``tools/call`` request an MCP client would send, pretty-printed."""
    request = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "tools/call",
        "params": {"name": tool_name, "arguments": arguments},
    }
    return json.dumps(request, indent=2, ensure_ascii=False)


@dataclass(frozen=True)
class _Reading:
    """The arguments read from the form once, and what follows from them."""

    arguments: dict[str, Any]
    problems: list[Problem]
    filled: dict[str, Any]
    """The arguments with defaults applied: what the template is filled from."""


class TestToolDialog(QDialog):
    """Fill in a tool's arguments, see the prompt they make, and run or copy the call.

    Args:
        document: the open agent (its file keys the remembered arguments).
        tool: the tool to test.
        settings: the studio's settings (where remembered arguments are kept); None uses the
            default data directory.
        parent: the parent widget.

    Attributes:
        form: the arguments form (``form.field("trip.city")`` is the input of that argument).
        preview: the filled prompt.
        placeholders_button: turns "Show placeholders" (``preview.placeholders_action``) on or off.
        arguments_view: the arguments as they would be sent, as JSON.
        run_button: runs the test (default button, Ctrl+Enter); disabled while invalid.
        notice: names the values given to :meth:`set_arguments` (or remembered) that the form
            cannot show, and so does not send; hidden when there are none.
        copy_button: copies the ``tools/call`` request.
        save_case_button: saves the arguments as a test case of the tool (asks for its name);
            disabled while invalid, like Run.
    """

    __test__ = False  # not a pytest test class, despite the name

    run_requested = Signal(object)
    """Emitted by Run with a :class:`TestRequest`, just before the dialog is accepted."""

    def __init__(
        self,
        document: AgentDocument,
        tool: ToolDefinition,
        settings: SettingsStore | None = None,
        parent: QWidget | None = None,
    ) -> None:
        super().__init__(parent)
        self.document = document
        self.tool = tool
        store = settings if settings is not None else SettingsStore()
        self._memory = ArgumentMemory(store)
        self._samples = SampleMemory(store)
        self.setObjectName("testToolDialog")
        self.setWindowTitle(f"Test {tool.name}")
        fit_to_screen(self, 1000, 640)

        title = QLabel(tool.title or tool.name)
        title_font = QFont(title.font())
        title_font.setBold(True)
        title_font.setPointSizeF(title_font.pointSizeF() * 1.2)
        title.setFont(title_font)
        description = QLabel(tool.description)
        description.setWordWrap(True)
        description.setVisible(bool(tool.description))

        self.form = ArgumentsForm(tool.parameters)
        scroll = scroll_area(self.form, "formScroll")
        form_side = QWidget()
        form_layout = QVBoxLayout(form_side)
        form_layout.setContentsMargins(0, 0, 0, 0)
        self.origin = QLabel()
        self.origin.setObjectName("testOrigin")
        self.origin.setWordWrap(True)
        self.origin.setVisible(False)
        form_layout.addWidget(heading("Arguments", scroll))
        form_layout.addWidget(self.origin)
        form_layout.addWidget(scroll, 1)

        mono = QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont)
        self.preview = TemplatePreview()
        # A very long prompt is filled in a worker thread; the preview shows it when it comes.
        self.analysis = TemplateAnalysis(self)
        self.analysis.ready.connect(
            lambda done: self.preview.show_segments(done.segments, template=done.request.prompt)
        )
        self.preview.setFont(mono)
        self.preview.setToolTip(
            "The prompt a call with these arguments submits, filled by the server's renderer"
        )
        self.placeholders_button = placeholders_button(self.preview)
        self.arguments_view = QPlainTextEdit()
        self.arguments_view.setObjectName("argumentsJson")
        self.arguments_view.setAccessibleName("Arguments sent")
        self.arguments_view.setReadOnly(True)
        self.arguments_view.setFont(mono)
        self.arguments_view.setToolTip("The arguments exactly as an MCP client would send them")
        preview_side, preview_layout = preview_column(
            "Prompt preview", self.preview, self.placeholders_button
        )
        preview_layout.addWidget(self.preview, 3)
        preview_layout.addWidget(heading("Arguments sent", self.arguments_view))
        preview_layout.addWidget(self.arguments_view, 2)

        self.splitter = QSplitter(Qt.Orientation.Horizontal)
        self.splitter.setChildrenCollapsible(False)
        self.splitter.addWidget(form_side)
        self.splitter.addWidget(preview_side)
        self.splitter.setStretchFactor(0, 1)
        self.splitter.setStretchFactor(1, 1)
        self.splitter.setSizes([540, 460])

        self.notice = QLabel()
        self.notice.setObjectName("testNotice")
        self.notice.setWordWrap(True)
        self.notice.hide()
        self.status = QLabel()
        self.status.setObjectName("testStatus")
        self.status.setWordWrap(True)

        buttons = QDialogButtonBox()
        self.run_button = QPushButton("Run")
        self.run_button.setDefault(True)
        self.copy_button = QPushButton("Copy as MCP call")
        self.copy_button.setToolTip("Copy the JSON-RPC tools/call request for these arguments")
        self.save_case_button = QPushButton("Save as test case…")
        self.save_case_button.setObjectName("saveAsTestCase")
        self.examples_button = QPushButton("Fill with examples")
        self.examples_button.setToolTip("Fill every argument with its example or a sample value")
        self.defaults_button = QPushButton("Reset")
        self.defaults_button.setToolTip("Back to the schema defaults")
        buttons.addButton(self.run_button, QDialogButtonBox.ButtonRole.AcceptRole)
        buttons.addButton(self.copy_button, QDialogButtonBox.ButtonRole.ActionRole)
        buttons.addButton(self.save_case_button, QDialogButtonBox.ButtonRole.ActionRole)
        buttons.addButton(self.examples_button, QDialogButtonBox.ButtonRole.ResetRole)
        buttons.addButton(self.defaults_button, QDialogButtonBox.ButtonRole.ResetRole)
        cancel = buttons.addButton(QDialogButtonBox.StandardButton.Cancel)
        cancel.setToolTip("Close without running")
        self.cancel_button = cancel

        layout = QVBoxLayout(self)
        layout.addWidget(title)
        layout.addWidget(description)
        layout.addWidget(self.splitter, 1)
        layout.addWidget(self.notice)
        layout.addWidget(self.status)
        layout.addWidget(buttons)

        self.run_button.clicked.connect(self._on_run)
        self.copy_button.clicked.connect(self._on_copy)
        self.save_case_button.clicked.connect(self._on_save_case)
        self.examples_button.clicked.connect(self._on_fill_examples)
        self.defaults_button.clicked.connect(self._on_reset)
        cancel.clicked.connect(self.reject)
        # One action for both keys: two shortcuts would count as one ambiguous key to Qt.
        self.run_action = QAction("Run", self)
        self.run_action.setShortcuts(
            [
                QKeySequence(Qt.KeyboardModifier.ControlModifier | key)
                for key in (Qt.Key.Key_Return, Qt.Key.Key_Enter)
            ]
        )
        self.run_action.setShortcutContext(Qt.ShortcutContext.WindowShortcut)
        self.run_action.triggered.connect(self._on_run)
        self.addAction(self.run_action)
        self.form.edited.connect(self._on_arguments_changed)
        self.preview.placeholders_toggled.connect(lambda _on: self._on_arguments_changed())

        remembered = self._memory.recall(document, tool.name)
        if remembered is not None:
            self.set_arguments(remembered, source="Started from the last run's arguments.")
        else:
            self.set_arguments(
                sample_values(self._samples, document, tool),
                source="Started from the tool's sample values (its editor's Sample values).",
            )

    # -- public ----------------------------------------------------------------------------

    def arguments(self) -> dict[str, Any]:
        """The arguments as a caller would send them (empty optional fields left out)."""
        return self.form.value()

    def set_arguments(self, arguments: dict[str, Any], *, source: str = "") -> None:
        """Fill the form with ``arguments``; what they leave out is cleared.

        A given value the form cannot show is not sent; :attr:`notice` names it. ``source``
        says where the values come from, above the form (empty: nothing is said).
        """
        self.origin.setText(source)
        self.origin.setVisible(bool(source))
        lost = self.form.set_value(arguments)
        self.notice.setText(
            "Not sent: the form cannot show the given value of " + ", ".join(lost) + "."
            if lost
            else ""
        )
        self.notice.setVisible(bool(lost))

    def problems(self) -> list[str]:
        """What keeps the arguments from running, as ``path: message`` lines."""
        return [str(problem) for problem in self._read().problems]

    def prompt(self) -> str:
        """The prompt the arguments fill (defaults applied), as the server would send it."""
        return self._prompt(self._read())

    def mcp_call(self) -> str:
        """The ``tools/call`` request for the current arguments (what Copy copies)."""
        return mcp_call_text(self.tool.name, self.arguments())

    # -- handlers --------------------------------------------------------------------------

    def _read(self) -> _Reading:
        """The form's arguments, their problems and the arguments with defaults applied.

        The server fills the template from the arguments with defaults applied; the dialog does
        the same even while they are invalid, so the preview shows what would be sent.
        """
        arguments = self.form.value()
        parameters = self.tool.parameters
        problems = self.form.input_problems()
        try:
            return _Reading(arguments, problems, validate_arguments(parameters, arguments))
        except ArgumentsError as exc:
            problems += exc.problems
        except SchemaDefinitionError as exc:
            problems += [
                Problem("", f"the parameters schema is invalid: {problem}")
                for problem in exc.problems
            ]
        return _Reading(arguments, problems, apply_defaults(parameters, arguments))

    def _prompt(self, reading: _Reading) -> str:
        return filled_prompt(self.tool, reading.filled)

    def _show(self) -> _Reading:
        """Read the form and show what the arguments are, make and lack; return the reading."""
        reading = self._read()
        problems = reading.problems
        self.form.show_problems(problems)
        self.run_button.setEnabled(not problems)
        self.run_button.setToolTip(
            "Fix the problems shown in the form first"
            if problems
            else "Run the tool in a new chat tab (Ctrl+Enter)"
        )
        self.save_case_button.setEnabled(not problems)
        self.save_case_button.setToolTip(
            "Fix the problems shown in the form first (a case whose arguments the tool refuses"
            " is made in the tool's Tests tab, with 'Expect an error')"
            if problems
            else "Keep these arguments as a test case of the tool; say what its answer must"
            " hold in the tool's Tests tab"
        )
        count = len(problems)
        self.status.setText(
            f"{count} problem{'s' if count != 1 else ''} to fix before running." if count else ""
        )
        self.analysis.request(
            AnalysisRequest(
                self.tool.prompt,
                self.tool.parameters,
                reading.filled,
                self.tool.name,
                self.tool.description,
                self.preview.show_placeholders(),
                diagnose=False,
            )
        )
        self.arguments_view.setPlainText(
            json.dumps(reading.arguments, indent=2, ensure_ascii=False)
        )
        return reading

    def _on_arguments_changed(self) -> None:
        self._show()

    def _on_run(self) -> None:
        reading = self._show()  # what is sent is what the dialog shows at this moment
        if reading.problems:
            return  # Ctrl+Enter while invalid
        arguments = reading.arguments
        request = TestRequest(self.tool.name, deepcopy(arguments), self._prompt(reading))
        self._memory.remember(self.document, self.tool.name, arguments)
        self.run_requested.emit(request)
        self.accept()

    def _on_copy(self) -> None:
        reading = self._show()
        clipboard = QGuiApplication.clipboard()
        clipboard.setText(mcp_call_text(self.tool.name, reading.arguments))
        self._memory.remember(self.document, self.tool.name, reading.arguments)
        self.status.setText("Copied the tools/call request to the clipboard.")

    def _on_save_case(self) -> None:
        reading = self._show()  # the arguments Run would send at this moment
        if reading.problems:
            return
        arguments = deepcopy(reading.arguments)
        ask = QInputDialog(self)
        ask.setObjectName("saveCaseName")
        ask.setWindowTitle(f"Save as test case · {self.tool.name}")
        ask.setLabelText(
            f"A test case of {self.tool.name} calls it with the arguments in the form.\nName:"
        )
        ask.setTextValue(default_case_name(self.document, self.tool.name, arguments))
        ask.setOkButtonText("Save")
        ask.textValueSelected.connect(lambda name: self._save_case(name, arguments))
        ask.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        ask.open()

    def _save_case(self, name: str, arguments: dict[str, Any]) -> None:
        tool_name = self.tool.name
        if self.document.agent.metadata.tool(tool_name) is None:
            self.status.setText(
                f"The agent has no tool {tool_name} any more: the test case was not saved."
            )
            return
        case = new_case(" ".join(name.split()) or "Case", arguments)
        saved = add_test_case(self.document, tool_name, case)
        if saved is None:
            self.status.setText("The test case was not saved (see the status bar).")
            return
        self._memory.remember(self.document, tool_name, arguments)
        taken = f" (“{case.name}” was taken)" if saved != case.name else ""
        self.status.setText(f"Saved test case “{saved}”{taken} to {tool_name}.")

    def _on_fill_examples(self) -> None:
        self.set_arguments(
            sample_arguments(self.tool.parameters), source="Filled with the schema's examples."
        )

    def _on_reset(self) -> None:
        self.notice.hide()
        self.origin.setText("Reset to the schema's defaults.")
        self.origin.setVisible(True)
        self.form.reset()
