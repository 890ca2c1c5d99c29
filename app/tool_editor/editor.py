"""The tool editor tab: the tool's fields, the parameter builder, the prompt template, its tests.

:class:`ToolEditor` is what the main window shows in a tab for one tool: name, title, description
and hints at the top (:class:`~app.tool_editor.tool_fields.ToolFields`), then three sections:
"Definition", the parameter builder (:class:`~app.tool_editor.parameter_builder.ParameterBuilder`)
above the template pane (:class:`~app.tool_editor.template_pane.TemplatePane`) in a splitter,
"Output", what the tool answers (:class:`~app.tool_editor.output_tab.OutputTab`), and
"Tests", the tool's test cases (:class:`~app.tool_editor.tests_panel.TestsPanel`, titled with
their count). It follows its tool through a :class:`~app.document.tool_ref.ToolRef` (a tool
renamed or moved is still the one edited; after a reload it is the tool of the same name), and
says ``tool_removed`` when the tool is gone. Renaming a parameter in the tree offers to update the
template's placeholders; template errors show as a count in the tab title (the "badge"). Given a
sample store, the template pane keeps the person's sample values there between sessions; given
the history store, the Tests section shows each case's last results; ``run_cases_requested`` asks
for a run of cases. Given a place to keep them (:meth:`ToolEditor.keep_pane_sizes`, the studio
settings), the Definition section's panes open at the sizes the person last gave them in any
tool's editor.
"""

from __future__ import annotations

from typing import Protocol

from PySide6.QtCore import Qt, QTimer, Signal
from PySide6.QtWidgets import (
    QPushButton,
    QSplitter,
    QTabWidget,
    QVBoxLayout,
    QWidget,
)

from app.document.agent_document import AgentDocument, FieldPath
from app.document.tool_ref import ToolRef
from app.icons import icon
from app.tool_editor.output_tab import OutputTab
from app.tool_editor.parameter_builder import ParameterBuilder
from app.tool_editor.parameter_edits import template_path
from app.tool_editor.sample_values import SampleStore
from app.tool_editor.template_pane import TemplatePane
from app.tool_editor.tests_panel import HistorySource, TestsPanel
from app.tool_editor.tool_fields import ToolFields
from schema_types.agent import ToolDefinition

__all__ = ["KEEP_SIZES_MS", "PaneSizes", "ToolEditor"]

NodePath = tuple[str, ...]


class PaneSizes(Protocol):
    """Where the editor keeps the sizes of its panes (the studio settings)."""

    def splitter_sizes(self, name: str) -> list[int] | None:
        """The sizes kept for the splitter called ``name``."""

    def set_splitter_sizes(self, name: str, sizes: list[int]) -> None:
        """Keep the sizes of the splitter called ``name``."""


KEEP_SIZES_MS = 300
"""How long a splitter rests before its sizes are kept (a drag moves it many times)."""


class ToolEditor(QWidget):
    """Everything about one tool, edited through the document's undo stack.

    Args:
        document: the open agent.
        tool: the tool to edit.
        parent: the owning widget.
        samples_memory: where the template pane keeps the person's sample values between
            sessions (None: nowhere).
        history: gives the history store the Tests section reads last results from (None:
            none shown).

    Attributes:
        document: the open agent.
        ref: the edited tool, followed through edits.
    """

    title_changed = Signal(str)
    """The tab title changed: the tool's name, with the template's error count when it has some."""
    tool_removed = Signal()
    """The tool is no longer in the agent (deleted, or gone after a reload)."""
    test_requested = Signal(object)
    """The person asked to test-run the tool ("Test tool…"); carries the ``ToolDefinition``."""
    run_cases_requested = Signal(object)
    """The person asked to run test cases: a list of ``(tool name, case name)``."""
    text_fields_added = Signal(object)
    """Text fields were built after the editor was shown (in the carried widget)."""

    def __init__(
        self,
        document: AgentDocument,
        tool: ToolDefinition,
        parent: QWidget | None = None,
        *,
        samples_memory: SampleStore | None = None,
        history: HistorySource | None = None,
    ) -> None:
        super().__init__(parent)
        self.setObjectName("toolEditor")
        self.document = document
        self.ref = ToolRef.of(document, tool)
        self._last_tool = tool
        self.fields = ToolFields(self.ref)
        self.parameters = ParameterBuilder(self.ref)
        self.output = OutputTab(self.ref)
        self.template = TemplatePane(self.ref, samples_memory=samples_memory)
        self.tests = TestsPanel(
            self.ref, history=history, sample_arguments=self.template.sample_panel.arguments
        )
        self._title = self._make_title()

        self.split = QSplitter(Qt.Orientation.Vertical)
        self.split.setObjectName("toolEditorSplit")
        self.split.setChildrenCollapsible(False)
        self.split.addWidget(self.parameters)
        self.split.addWidget(self.template)
        self.split.setStretchFactor(0, 11)
        self.split.setStretchFactor(1, 9)
        self.sections = QTabWidget()
        self.sections.setObjectName("toolEditorSections")
        self.sections.setDocumentMode(True)
        self.sections.addTab(self.split, "Definition")
        self.sections.addTab(self.output, "Output")
        self.sections.setTabToolTip(1, "What the tool answers: text, or data of a declared shape")
        self.sections.addTab(self.tests, self._tests_title())
        self.test_button = QPushButton(icon("tool"), "Test tool…")
        self.test_button.setObjectName("testTool")
        self.test_button.setToolTip(
            "Fill in arguments and run this tool in a chat tab (Ctrl+Enter)"
        )
        # Beside the section tabs, not beside the fields: they get the width, the tabs' row is
        # there anyway.
        self.sections.setCornerWidget(self.test_button, Qt.Corner.TopRightCorner)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(6, 4, 6, 4)
        layout.setSpacing(4)
        layout.addWidget(self.fields)
        layout.addWidget(self.sections, 1)

        self.test_button.clicked.connect(lambda: self.test_requested.emit(self.tool))
        self.parameters.model.renamed.connect(self._on_parameter_renamed)
        self.template.error_count_changed.connect(lambda _count: self._update_title())
        self.ref.changed.connect(self._on_tool_changed)
        self.ref.removed.connect(self.tool_removed)
        self.tests.run_requested.connect(self.run_cases_requested)
        self.tests.fields_added.connect(self.text_fields_added)

    # -- pane sizes ------------------------------------------------------------------------

    def panes(self) -> dict[str, QSplitter]:
        """The Definition section's splitters by the name their sizes are kept under."""
        panes = {
            "toolEditor/definition": self.split,
            "toolEditor/parameters": self.parameters.split,
            "toolEditor/output": self.output.builder.split,
        }
        template = self.template.findChildren(QSplitter)
        panes.update({f"toolEditor/template/{i}": s for i, s in enumerate(template)})
        return panes

    def keep_pane_sizes(self, store: PaneSizes) -> None:
        """Show the panes at the sizes ``store`` keeps (those of the editor whose panes the
        person last moved), and keep them there whenever the person moves them."""
        timer = QTimer(self)
        timer.setSingleShot(True)
        timer.setInterval(KEEP_SIZES_MS)
        moved: set[str] = set()

        def keep() -> None:
            panes = self.panes()
            for name in sorted(moved):
                store.set_splitter_sizes(name, panes[name].sizes())
            moved.clear()

        timer.timeout.connect(keep)

        def on_moved(name: str) -> None:
            moved.add(name)
            timer.start()

        for name, splitter in self.panes().items():
            sizes = store.splitter_sizes(name)
            if sizes and len(sizes) == splitter.count() and all(sizes):
                splitter.setSizes(sizes)
            splitter.splitterMoved.connect(lambda _at, _i, n=name: on_moved(n))

    # -- the tool --------------------------------------------------------------------------

    @property
    def tool(self) -> ToolDefinition:
        """The edited tool now (the last one it was, once it left the agent)."""
        return self.ref.tool() or self._last_tool

    def index(self) -> int | None:
        """The tool's position in the agent, or None when it was deleted."""
        return self.ref.index()

    def title(self) -> str:
        """The tab title: the tool's name, and the number of template errors if any."""
        return self._title

    def _make_title(self) -> str:
        errors = self.template.error_count()
        return f"{self.tool.name} ({errors} ⚠)" if errors else self.tool.name

    def _update_title(self) -> None:
        title = self._make_title()
        if title != self._title:
            self._title = title
            self.title_changed.emit(title)

    def _tests_title(self) -> str:
        count = len(self.tool.tests)
        return f"Tests ({count})" if count else "Tests"

    def _on_tool_changed(self, part: FieldPath) -> None:
        self._last_tool = self.ref.tool() or self._last_tool
        if part[:1] in ((), ("name",)):
            self._update_title()
        if part[:1] in ((), ("tests",)):
            self.sections.setTabText(self.sections.indexOf(self.tests), self._tests_title())

    def _on_parameter_renamed(self, old: NodePath, new: NodePath) -> None:
        old_path, new_path = template_path(old), template_path(new)
        if old_path is not None and new_path is not None:
            self.template.offer_placeholder_rename(old_path, new_path)
