"""The prompt-template part of the tool editor: editor, problems, live preview, sample values.

:class:`TemplatePane` edits the ``prompt`` of one tool through the document: each keystroke is a
``set_field`` merged with the previous ones into one undo step until focus leaves the editor.
The pane listens to its tool's :class:`~app.document.tool_ref.ToolRef`, which says which part of
the tool changed: a new prompt (undo and redo from anywhere) replaces only the part of the editor
text that differs, so the cursor stays where it was unless it sat in the changed part (it then
goes to the end of it), and never feeds that change back as an edit; new parameters, a new name
or description update highlighting, completion, diagnostics and preview. A tool renamed or moved
while the pane is open is still the one edited. When the tool is gone, the editor turns
read-only.

For the parameter builder:

- :meth:`TemplatePane.placeholder_uses` says how many placeholders use a parameter path;
  :meth:`TemplatePane.rename_placeholders` rewrites them as one undoable edit (call it inside
  ``document.macro`` with the parameter rename to undo both at once);
  :meth:`TemplatePane.offer_placeholder_rename` shows a bar offering that instead of asking.
- :attr:`TemplatePane.error_count_changed` (and :meth:`TemplatePane.error_count` for the start)
  give the number of template errors for the tab's badge.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from PySide6.QtCore import QEvent, Qt, QTimer, Signal
from PySide6.QtGui import QTextCursor
from PySide6.QtWidgets import (
    QAbstractItemView,
    QFrame,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QPushButton,
    QSplitter,
    QTableView,
    QVBoxLayout,
    QWidget,
)

from app.document.agent_document import FieldPath, merge_id_for
from app.document.tool_ref import ToolRef
from app.tool_editor.diagnostics_view import DiagnosticsView
from app.tool_editor.highlighter import OffsetMap
from app.tool_editor.preview import TemplatePreview
from app.tool_editor.sample_values import SampleValuesModel
from app.tool_editor.template_editor import TemplateEditor, completion_entries
from schema_types.agent import ToolDefinition
from schema_types.arguments import validate_arguments
from schema_types.errors import SchemaDefinitionError, SchemaError
from schema_types.template.engine import (
    Severity,
    TokenKind,
    diagnose,
    placeholder_kind,
    render_segments,
    tokenize,
)

__all__ = ["TemplatePane", "count_placeholders", "rename_in_template"]

PathLike = str | Sequence[str]


def _parts(path: PathLike) -> tuple[str, ...]:
    return tuple(path.split(".")) if isinstance(path, str) else tuple(path)


def count_placeholders(template: str, path: PathLike) -> int:
    """How many placeholders of ``template`` use ``path`` or a path below it."""
    head = _parts(path)
    return sum(
        1
        for token in tokenize(template)
        if token.kind is TokenKind.PLACEHOLDER and token.path[: len(head)] == head
    )


def rename_in_template(template: str, old: PathLike, new: PathLike) -> tuple[str, int]:
    """``template`` with every placeholder of ``old`` (or below it) renamed to ``new``.

    ``{trip}`` and ``{trip.destination}`` become ``{journey}`` and ``{journey.destination}``
    when ``trip`` is renamed to ``journey``; escaped braces, tool fields and everything else stay
    as written.

    Returns:
        The new template and the number of placeholders rewritten.
    """
    head, replacement = _parts(old), _parts(new)
    pieces: list[str] = []
    count = 0
    for token in tokenize(template):
        if token.kind is TokenKind.PLACEHOLDER and token.path[: len(head)] == head:
            pieces.append("{" + ".".join((*replacement, *token.path[len(head) :])) + "}")
            count += 1
        else:
            pieces.append(token.text)
    return "".join(pieces), count


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


def _heading(text: str, buddy: QWidget | None = None) -> QLabel:
    label = QLabel(text)
    font = label.font()
    font.setBold(True)
    label.setFont(font)
    if buddy is not None:
        label.setBuddy(buddy)
    return label


class TemplatePane(QWidget):
    """Template editor with diagnostics, live preview and sample values for one tool.

    Args:
        ref: the edited tool.
        parent: the owning widget.
    """

    error_count_changed = Signal(int)
    """The number of template errors changed (for the tab's badge)."""
    samples_checked = Signal()
    """The sample values were checked against the schema (:attr:`samples_problem` is current)."""

    def __init__(self, ref: ToolRef, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("templatePane")
        self.ref = ref
        self.document = document = ref.document
        self._updating = False
        self._parameters: Any = None
        self._arguments: dict[str, Any] = {}
        self._rename: tuple[tuple[str, ...], tuple[str, ...]] | None = None
        self._analysed_prompt: str | None = None
        # Checking the samples against the schema builds a validator (a meta-schema check the
        # first time, ~0.1 s for 300 properties): done once the pane is shown, not while opening.
        self._samples_timer = QTimer(self)
        self._samples_timer.setSingleShot(True)
        self._samples_timer.setInterval(0)
        self._samples_timer.timeout.connect(self.check_samples)

        self.editor = TemplateEditor()
        self.editor.undo_stack = document.undo_stack
        self.diagnostics = DiagnosticsView()
        self.preview = TemplatePreview()
        self.samples = SampleValuesModel(self)
        self.samples_view = QTableView()
        self.samples_view.setObjectName("sampleValues")
        self.samples_view.setModel(self.samples)
        rows = self.samples_view.verticalHeader()
        rows.hide()
        rows.setDefaultSectionSize(self.samples_view.fontMetrics().height() + 8)
        self.samples_view.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.samples_view.setEditTriggers(
            QAbstractItemView.EditTrigger.DoubleClicked
            | QAbstractItemView.EditTrigger.EditKeyPressed
            | QAbstractItemView.EditTrigger.AnyKeyPressed
            | QAbstractItemView.EditTrigger.SelectedClicked
        )
        header = self.samples_view.horizontalHeader()
        header.setSectionResizeMode(0, QHeaderView.ResizeMode.Interactive)
        header.setStretchLastSection(True)
        header.resizeSection(0, 180)
        self.samples_problem = QLabel()
        self.samples_problem.setObjectName("sampleValuesProblem")
        self.samples_problem.setWordWrap(True)
        self.samples_problem.hide()
        self.reset_samples = QPushButton("Reset")
        self.reset_samples.setToolTip("Use the samples from the schema again and send every value.")
        self.problems_title = _heading("Problems", self.diagnostics)
        self._build_rename_bar()
        self._lay_out()

        self.editor.textChanged.connect(self._on_text_changed)
        self.editor.editing_finished.connect(document.seal)
        self.diagnostics.jump_requested.connect(self.jump_to)
        self.diagnostics.error_count_changed.connect(self._on_error_count_changed)
        self.samples.values_changed.connect(self._on_samples_changed)
        self.reset_samples.clicked.connect(self.samples.reset)
        ref.changed.connect(self._on_tool_changed)
        ref.removed.connect(lambda: self.editor.setReadOnly(True))
        self.refresh()

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
        left_layout.addWidget(_heading("&Prompt template", self.editor))
        left_layout.addWidget(self.rename_bar)
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

        preview_box = QWidget()
        preview_layout = QVBoxLayout(preview_box)
        preview_layout.setContentsMargins(0, 0, 0, 0)
        preview_layout.addWidget(_heading("Preview", self.preview))
        note = QLabel("The prompt a call sends, filled with the sample values below.")
        note.setWordWrap(True)
        note.setEnabled(False)
        preview_layout.addWidget(note)
        preview_layout.addWidget(self.preview, 1)
        samples_box = QWidget()
        samples_layout = QVBoxLayout(samples_box)
        samples_layout.setContentsMargins(0, 0, 0, 0)
        samples_header = QHBoxLayout()
        samples_header.addWidget(_heading("&Sample values", self.samples_view), 1)
        samples_header.addWidget(self.reset_samples)
        samples_layout.addLayout(samples_header)
        samples_layout.addWidget(self.samples_view, 1)
        samples_layout.addWidget(self.samples_problem)
        right = QSplitter(Qt.Orientation.Vertical)
        right.setChildrenCollapsible(False)
        right.addWidget(preview_box)
        right.addWidget(samples_box)
        right.setStretchFactor(0, 3)
        right.setStretchFactor(1, 2)

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
            self.samples.set_palette(self.palette())

    # -- the tool --------------------------------------------------------------------------

    def tool(self) -> ToolDefinition | None:
        """The edited tool while it is in the agent, else None."""
        return self.ref.tool()

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
        self._show_prompt(tool.prompt)
        self._take_parameters(tool)
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

    def _take_parameters(self, tool: ToolDefinition) -> None:
        self._parameters = parameters = tool.parameters
        self.editor.highlighter.set_parameters(parameters)
        self.samples.set_parameters(parameters)
        self._update_arguments()
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
        prompt, parameters = tool.prompt, tool.parameters
        self._analysed_prompt = prompt
        if self._rename is not None and count_placeholders(prompt, self._rename[0]) == 0:
            self._hide_rename_bar()
        self.diagnostics.set_diagnostics(diagnose(prompt, parameters), prompt)
        self._update_problems_title()
        segments = render_segments(
            prompt,
            self._arguments,
            parameters,
            tool_name=tool.name,
            tool_description=tool.description,
            keep_missing=True,
        )
        self.preview.show_segments(segments)

    def _update_problems_title(self) -> None:
        errors = self.diagnostics.error_count()
        warnings = sum(1 for d in self.diagnostics.diagnostics if d.severity is Severity.WARNING)
        parts = [f"{errors} error{'s' * (errors != 1)}"] if errors else []
        if warnings:
            parts.append(f"{warnings} warning{'s' * (warnings != 1)}")
        self.problems_title.setText("Problems" + (f" ({', '.join(parts)})" if parts else ""))

    def _update_arguments(self) -> None:
        self._arguments = self.samples.arguments()
        self._samples_timer.start()

    def check_samples(self) -> None:
        """Say under the table which sample values the schema would refuse (runs deferred)."""
        self._samples_timer.stop()
        problem = ""
        if isinstance(self._parameters, dict):
            try:
                validate_arguments(self._parameters, self._arguments)
            except SchemaDefinitionError:
                problem = ""  # the parameter builder reports a broken schema where it is edited
            except SchemaError as exc:
                problem = "These values would be refused by the schema:\n" + str(exc)
        self.samples_problem.setText(problem)
        self.samples_problem.setVisible(bool(problem))
        self.samples_checked.emit()

    def _on_samples_changed(self) -> None:
        self._update_arguments()
        tool = self.tool()
        if tool is not None:
            self._analyse(tool)

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
        """How many placeholders of the prompt use ``path`` (``"trip.destination"``) or below."""
        tool = self.tool()
        return 0 if tool is None else count_placeholders(tool.prompt, path)

    def rename_placeholders(self, old_path: PathLike, new_path: PathLike) -> int:
        """Rewrite the placeholders of ``old_path`` (and below) to ``new_path``, undoably.

        Returns:
            How many placeholders were rewritten (0: nothing changed, no undo step).
        """
        tool, path = self.tool(), self.prompt_path()
        if tool is None or path is None:
            return 0
        template, count = rename_in_template(tool.prompt, old_path, new_path)
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
        places = "placeholder uses" if uses == 1 else f"{uses} placeholders use"
        self.rename_label.setText(
            f"The parameter {old} is now called {new}, but {'a ' * (uses == 1)}{places} {{{old}}}."
        )
        self.rename_bar.show()
        return True

    def _on_rename_accepted(self) -> None:
        if self._rename is not None:
            self.rename_placeholders(*self._rename)

    def _hide_rename_bar(self) -> None:
        self._rename = None
        self.rename_bar.hide()
