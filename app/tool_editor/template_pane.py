"""The prompt-template part of the tool editor: editor, problems, live preview, sample values.

:class:`TemplatePane` edits the ``prompt`` of one tool through the document: each keystroke is a
``set_field`` merged with the previous ones into one undo step until focus leaves the editor.
Its find bar (:class:`~app.find_bar.FindBar`, Ctrl+F / Ctrl+H anywhere in the pane) edits the
same way, each Replace or Replace all inside a ``document.macro`` of its own: one undo step.
The pane listens to its tool's :class:`~app.document.tool_ref.ToolRef`, which says which part of
the tool changed: a new prompt (undo and redo from anywhere) replaces only the part of the editor
text that differs, so the cursor stays where it was unless it sat in the changed part (it then
goes to the end of it), and never feeds that change back as an edit; new parameters, a new name
or description update highlighting, completion, diagnostics and preview. A tool renamed or moved
while the pane is open is still the one edited. When the tool is gone, the editor turns
read-only.

The preview shows what a call with the sample values sends (``keep_missing=False``), unless
the person turns on its "Show placeholders" toggle (in the Preview heading); under it, a tool
with an output schema shows what its calls add to the model request for the schema
(:mod:`app.tool_editor.request_additions`). Sample values a call
would be refused for (not JSON of their type, or refused by the schema) are flagged at their row,
listed under the table, and marked where they show in the preview. With a
:class:`~app.tool_editor.sample_values.SampleStore`, what the person changed in the samples is
kept per agent file and tool, and back when the tool is opened again.

For the parameter builder:

- :meth:`TemplatePane.placeholder_uses` says how many placeholders and section tags use a
  parameter path (the engine's ``count_path_uses``); :meth:`TemplatePane.rename_placeholders`
  rewrites them (``rename_path``) as one undoable edit (call it inside
  ``document.macro`` with the parameter rename to undo both at once);
  :meth:`TemplatePane.offer_placeholder_rename` shows a bar offering that instead of asking.
- :attr:`TemplatePane.error_count_changed` (and :meth:`TemplatePane.error_count` for the start)
  give the number of template errors for the tab's badge.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from contextlib import AbstractContextManager

from PySide6.QtCore import QEvent, Qt, Signal
from PySide6.QtGui import QTextCursor
from PySide6.QtWidgets import (
    QFrame,
    QHBoxLayout,
    QLabel,
    QPushButton,
    QSplitter,
    QVBoxLayout,
    QWidget,
)

from app.document.agent_document import FieldPath, merge_id_for
from app.document.tool_ref import ToolRef
from app.find_bar import FindBar
from app.tool_editor.diagnostics_view import DiagnosticsView
from app.tool_editor.highlighter import OffsetMap
from app.tool_editor.preview import TemplatePreview, placeholders_button, preview_column
from app.tool_editor.request_additions import RequestAdditionsView
from app.tool_editor.sample_panel import SampleValuesPanel, heading, show_as_error
from app.tool_editor.sample_values import SampleStore
from app.tool_editor.template_analysis import Analysis, AnalysisRequest, TemplateAnalysis
from app.tool_editor.template_editor import TemplateEditor, completion_entries
from schema_types.agent import ToolDefinition
from schema_types.template.engine import (
    Severity,
    TokenKind,
    count_path_uses,
    placeholder_kind,
    rename_path,
    tokenize,
)

__all__ = ["TemplatePane"]

PathLike = str | Sequence[str]

_PREVIEW_NOTE = "What a call with the sample values below sends. Hover a marked part to see why."
_REFUSED_NOTE = (
    "A call with these sample values is refused (see below); the preview shows them where"
    " they would go, marked."
)


def _parts(path: PathLike) -> tuple[str, ...]:
    return tuple(path.split(".")) if isinstance(path, str) else tuple(path)


def _problem_marks(template: str, problems: Mapping[str, str]) -> dict[int, str]:
    """Template offsets of the placeholders showing a refused sample value, with the reason.

    A placeholder shows a value when it names its path, a path above it (``{trip}`` holds
    ``trip.budget``) or below it.
    """
    marks: dict[int, str] = {}
    for token in tokenize(template):
        if token.kind is not TokenKind.PLACEHOLDER:
            continue
        dotted = ".".join(token.path)
        for path, message in problems.items():
            if dotted == path or path.startswith(dotted + ".") or dotted.startswith(path + "."):
                marks[token.start] = f"{path}: {message}"
                break
    return marks


def _as_blocks(text: str) -> str:
    # What a text document makes of line breaks: "\r\n", "\r" and U+2029 all end a block.
    return text.replace("\r\n", "\n").replace("\r", "\n").replace("\u2029", "\n")


def _common_prefix(a: str, b: str) -> int:
    """How many characters ``a`` and ``b`` share at their start."""
    for count, (x, y) in enumerate(zip(a, b, strict=False)):
        if x != y:
            return count
    return min(len(a), len(b))


def _common_suffix(a: str, b: str, limit: int) -> int:
    """How many characters ``a`` and ``b`` share at their end, leaving their first ``limit``."""
    most = min(len(a), len(b)) - limit
    for count, (x, y) in enumerate(zip(reversed(a), reversed(b), strict=False)):
        if count == most or x != y:
            return count
    return most


class TemplatePane(QWidget):
    """Template editor with diagnostics, live preview and sample values for one tool.

    Args:
        ref: the edited tool.
        parent: the owning widget.
        samples_memory: where the person's sample values are kept between sessions (None:
            they last as long as the pane).
    """

    error_count_changed = Signal(int)
    """The number of template errors changed (for the tab's badge)."""

    def __init__(
        self,
        ref: ToolRef,
        parent: QWidget | None = None,
        *,
        samples_memory: SampleStore | None = None,
    ) -> None:
        super().__init__(parent)
        self.setObjectName("templatePane")
        self.ref = ref
        self.document = document = ref.document
        self._updating = False
        self._rename: tuple[tuple[str, ...], tuple[str, ...]] | None = None
        self._analysed_prompt: str | None = None
        self._refreshing = False

        self.editor = TemplateEditor()
        self.editor.undo_stack = document.undo_stack
        self.diagnostics = DiagnosticsView()
        self.preview = TemplatePreview()
        self.request_additions = RequestAdditionsView(ref)
        self.sample_panel = SampleValuesPanel()
        self.analysis = TemplateAnalysis(self)
        self.samples = self.sample_panel.model
        self.preview_note = QLabel(_PREVIEW_NOTE)
        self.preview_note.setObjectName("previewNote")
        self.preview_note.setWordWrap(True)
        # Said only when the values are refused; otherwise the preview's tool tip says it, and
        # its two lines go to the sample values' rows (the pane is short at 1024x700).
        self.preview_note.setVisible(False)
        self.preview.setToolTip(_PREVIEW_NOTE)
        self.placeholders_button = placeholders_button(self.preview)
        self.problems_title = heading("Problems", self.diagnostics)
        self.find_bar = FindBar(self.editor, self, edit_scope=self._replacing)
        self._build_rename_bar()
        self._lay_out()

        self.editor.textChanged.connect(self._on_text_changed)
        self.editor.editing_finished.connect(document.seal)
        self.diagnostics.jump_requested.connect(self.jump_to)
        self.diagnostics.error_count_changed.connect(self._on_error_count_changed)
        self.samples.values_changed.connect(self._render_preview)
        self.samples.problems_changed.connect(self._on_sample_problems_changed)
        self.preview.placeholders_toggled.connect(lambda _on: self._render_preview())
        self.analysis.ready.connect(self._on_analysis_ready)
        ref.changed.connect(self._on_tool_changed)
        ref.removed.connect(lambda: self.editor.setReadOnly(True))
        self.refresh()
        if samples_memory is not None:
            self.sample_panel.keep_in(samples_memory, document, self._tool_name)

    # -- layout ----------------------------------------------------------------------------

    def _build_rename_bar(self) -> None:
        self.rename_bar = QFrame()
        self.rename_bar.setObjectName("placeholderRenameBar")
        self.rename_bar.setFrameShape(QFrame.Shape.StyledPanel)
        self.rename_label = QLabel()
        self.rename_label.setWordWrap(True)
        self.rename_apply = QPushButton("Update placeholders")
        self.rename_keep = QPushButton("Keep as written")
        row = QHBoxLayout(self.rename_bar)
        row.setContentsMargins(8, 4, 8, 4)
        row.addWidget(self.rename_label, 1)
        row.addWidget(self.rename_apply)
        row.addWidget(self.rename_keep)
        self.rename_bar.hide()
        self.rename_apply.clicked.connect(self._on_rename_accepted)
        self.rename_keep.clicked.connect(self._hide_rename_bar)

    def _lay_out(self) -> None:
        left = QWidget()
        left_layout = QVBoxLayout(left)
        left_layout.setContentsMargins(0, 0, 0, 0)
        left_layout.addWidget(heading("&Prompt template", self.editor))
        left_layout.addWidget(self.rename_bar)
        left_layout.addWidget(self.find_bar)
        problems = QWidget()
        problems_layout = QVBoxLayout(problems)
        problems_layout.setContentsMargins(0, 0, 0, 0)
        problems_layout.addWidget(self.problems_title)
        problems_layout.addWidget(self.diagnostics)
        editor_split = QSplitter(Qt.Orientation.Vertical)
        editor_split.setChildrenCollapsible(False)
        editor_split.addWidget(self.editor)
        editor_split.addWidget(problems)
        editor_split.setStretchFactor(0, 4)
        editor_split.setStretchFactor(1, 1)
        left_layout.addWidget(editor_split, 1)

        preview_box, preview_layout = preview_column(
            "Preview", self.preview, self.placeholders_button
        )
        preview_layout.addWidget(self.preview_note)
        preview_layout.addWidget(self.preview, 1)
        preview_layout.addWidget(self.request_additions, 1)
        right = QSplitter(Qt.Orientation.Vertical)
        right.setChildrenCollapsible(False)
        right.addWidget(preview_box)
        right.addWidget(self.sample_panel)
        right.setStretchFactor(0, 2)
        right.setStretchFactor(1, 3)

        split = QSplitter(Qt.Orientation.Horizontal)
        split.setChildrenCollapsible(False)
        split.addWidget(left)
        split.addWidget(right)
        split.setStretchFactor(0, 1)
        split.setStretchFactor(1, 1)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(split)

    def changeEvent(self, event: QEvent) -> None:  # noqa: N802 (Qt override)
        super().changeEvent(event)
        if event.type() == QEvent.Type.PaletteChange:
            self._on_sample_problems_changed()

    # -- the tool --------------------------------------------------------------------------

    def tool(self) -> ToolDefinition | None:
        """The edited tool while it is in the agent, else None."""
        return self.ref.tool()

    def _tool_name(self) -> str | None:
        tool = self.tool()
        return None if tool is None else tool.name

    def prompt_path(self) -> FieldPath | None:
        """The document path of the tool's prompt now (None when the tool is gone)."""
        return self.ref.path("prompt")

    def error_count(self) -> int:
        """How many errors the template has now (warnings not counted)."""
        return self.diagnostics.error_count()

    # -- document → view -------------------------------------------------------------------

    def refresh(self) -> None:
        """Show all of the tool as the document has it now."""
        tool = self.tool()
        if tool is None:
            self.editor.setReadOnly(True)
            return
        self.editor.setReadOnly(False)
        # Classified against the parameters before the text arrives, the prompt's placeholders
        # are coloured right (and touching tags merged into one range) from the first pass. The
        # re-colouring of the old text says "changed" too: not an edit.
        self._updating = True
        try:
            self.editor.highlighter.set_parameters(tool.parameters)
        finally:
            self._updating = False
        self._show_prompt(tool.prompt)
        # The preview is rendered once, by _analyse, not also when the samples take the
        # parameters.
        self._refreshing = True
        try:
            self._take_parameters(tool, highlight=False)
        finally:
            self._refreshing = False
        self._take_names(tool)
        self._analyse(tool)

    def _on_tool_changed(self, part: FieldPath) -> None:
        tool = self.tool()
        if tool is None:
            return
        what = part[:1]
        if what == ():
            self.refresh()
            return
        if what == ("prompt",):
            if tool.prompt == self._analysed_prompt:
                # Typed back to the text before the typing run: the document gives back its
                # agent from then, with the same prompt (keeps each keystroke under 8 ms,
                # bench/template_keystroke.py).
                return
            self._show_prompt(tool.prompt)
        elif what == ("parameters",):
            self._take_parameters(tool)
            self._take_names(tool)
        elif what in (("name",), ("description",)):
            self._take_names(tool)
        else:
            return  # title, annotations, tests…: nothing the pane shows
        self._analyse(tool)

    def _take_parameters(self, tool: ToolDefinition, *, highlight: bool = True) -> None:
        parameters = tool.parameters
        if highlight:
            self.editor.highlighter.set_parameters(parameters)
        self.sample_panel.set_parameters(parameters)
        if self._rename is not None:
            old = self._rename[0]
            if placeholder_kind(old, parameters) != "unknown":
                self._hide_rename_bar()

    def _take_names(self, tool: ToolDefinition) -> None:
        """Completion offers the parameters and the tool's own name and description."""
        self.editor.set_completions(
            completion_entries(tool.parameters, tool.name, tool.description)
        )

    def _show_prompt(self, prompt: str) -> None:
        """Make the editor show ``prompt``, replacing only the part that differs."""
        old = self.editor.text()
        if old == prompt or old == _as_blocks(prompt):
            return
        prompt = _as_blocks(prompt)
        head = _common_prefix(old, prompt)
        tail = _common_suffix(old, prompt, head)
        offsets = OffsetMap(old)
        start, old_end = offsets.to_qt(head), offsets.to_qt(len(old) - tail)
        inserted = prompt[head : len(prompt) - tail]
        cursor = self.editor.textCursor()
        inside = start <= cursor.position() <= old_end
        edit = QTextCursor(self.editor.document())
        edit.setPosition(start)
        edit.setPosition(old_end, QTextCursor.MoveMode.KeepAnchor)
        self._updating = True
        try:
            edit.insertText(inserted)
        finally:
            self._updating = False
        if inside:
            cursor.setPosition(OffsetMap(prompt).to_qt(head + len(inserted)))
            self.editor.setTextCursor(cursor)
            self.editor.ensureCursorVisible()

    def _analyse(self, tool: ToolDefinition) -> None:
        """Diagnostics and preview for the tool as it is."""
        prompt = tool.prompt
        self._analysed_prompt = prompt
        if self._rename is not None and count_path_uses(prompt, self._rename[0]) == 0:
            self._hide_rename_bar()
        self._request_analysis(tool, diagnose=True)

    def _render_preview(self, tool: ToolDefinition | None = None) -> None:
        """Show what a call with the sample values sends (placeholders kept when asked)."""
        tool = tool or self.tool()
        if tool is not None:
            self._request_analysis(tool, diagnose=False)

    def _request_analysis(self, tool: ToolDefinition, *, diagnose: bool) -> None:
        self.analysis.request(
            AnalysisRequest(
                tool.prompt,
                tool.parameters,
                self.sample_panel.arguments(),
                tool.name,
                tool.description,
                self.preview.show_placeholders(),
                diagnose,
            )
        )

    def _on_analysis_ready(self, analysis: Analysis) -> None:
        prompt = analysis.request.prompt
        if analysis.diagnostics is not None:
            self.diagnostics.set_diagnostics(analysis.diagnostics, prompt)
            self._update_problems_title()
        problems = self.samples.problems()
        marks = _problem_marks(prompt, problems) if problems else {}
        self.preview.show_segments(analysis.segments, template=prompt, problems=marks)

    def _update_problems_title(self) -> None:
        errors = self.diagnostics.error_count()
        warnings = sum(1 for d in self.diagnostics.diagnostics if d.severity is Severity.WARNING)
        parts = [f"{errors} error{'s' * (errors != 1)}"] if errors else []
        if warnings:
            parts.append(f"{warnings} warning{'s' * (warnings != 1)}")
        self.problems_title.setText("Problems" + (f" ({', '.join(parts)})" if parts else ""))

    def _on_sample_problems_changed(self) -> None:
        refused = bool(self.samples.problems())
        self.preview_note.setText(_REFUSED_NOTE if refused else _PREVIEW_NOTE)
        self.preview_note.setVisible(refused)
        show_as_error(self.preview_note, refused)
        if not self._refreshing:
            self._render_preview()

    def _on_error_count_changed(self, count: int) -> None:
        self.error_count_changed.emit(count)

    # -- view → document -------------------------------------------------------------------

    def _on_text_changed(self) -> None:
        if self._updating:
            return
        path = self.prompt_path()
        tool = self.tool()
        if path is None or tool is None:
            return
        text = self.editor.text()
        if text == tool.prompt or text == _as_blocks(tool.prompt):
            # Formatting passes (the highlighter) say "changed" too; so does a prompt whose
            # line breaks the editor shows differently. Neither is an edit.
            return
        self.document.set_field(
            path,
            text,
            text=f"Edit prompt of {tool.name}",
            merge_id=merge_id_for(path),
        )

    def _replacing(self, what: str) -> AbstractContextManager[None]:
        """One undo step for a find bar replacement (its text edit becomes one ``set_field``)."""
        name = self._tool_name() or "the tool"
        return self.document.macro(f"{what} in the prompt of {name}")

    def jump_to(self, start: int, end: int) -> None:
        """Select the template span ``[start, end)`` (code points) in the editor and focus it."""
        offsets = OffsetMap(self.editor.text())
        cursor = self.editor.textCursor()
        cursor.setPosition(offsets.to_qt(start))
        cursor.setPosition(offsets.to_qt(end), QTextCursor.MoveMode.KeepAnchor)
        self.editor.setTextCursor(cursor)
        self.editor.ensureCursorVisible()
        self.editor.setFocus(Qt.FocusReason.OtherFocusReason)

    # -- parameter renames -----------------------------------------------------------------

    def placeholder_uses(self, path: PathLike) -> int:
        """How many placeholders and section tags of the prompt use ``path`` (``"trip.city"``)
        or a path below it."""
        tool = self.tool()
        return 0 if tool is None else count_path_uses(tool.prompt, _parts(path))

    def rename_placeholders(self, old_path: PathLike, new_path: PathLike) -> int:
        """Rewrite the placeholders and section tags of ``old_path`` (and below) to
        ``new_path``, undoably.

        Returns:
            How many placeholders and tags were rewritten (0: nothing changed, no undo step).
        """
        tool, path = self.tool(), self.prompt_path()
        if tool is None or path is None:
            return 0
        template, count = rename_path(tool.prompt, _parts(old_path), _parts(new_path))
        if count:
            old, new = ".".join(_parts(old_path)), ".".join(_parts(new_path))
            self.document.set_field(
                path, template, text=f"Rename placeholders {{{old}}} to {{{new}}}"
            )
        self._hide_rename_bar()
        return count

    def offer_placeholder_rename(self, old_path: PathLike, new_path: PathLike) -> bool:
        """Show a bar offering to rename the placeholders of ``old_path``; False if none use it."""
        uses = self.placeholder_uses(old_path)
        if uses == 0:
            self._hide_rename_bar()
            return False
        old, new = ".".join(_parts(old_path)), ".".join(_parts(new_path))
        self._rename = (_parts(old_path), _parts(new_path))
        places = "once" if uses == 1 else f"in {uses} places"
        self.rename_label.setText(
            f"The parameter {old} is now called {new}, but the template still uses {{{old}}}"
            f" {places}."
        )
        self.rename_bar.show()
        return True

    def _on_rename_accepted(self) -> None:
        if self._rename is not None:
            self.rename_placeholders(*self._rename)

    def _hide_rename_bar(self) -> None:
        self._rename = None
        self.rename_bar.hide()
