# ruff: noqa: N802  (Qt virtual method names are camelCase)
"""The "Sample values" box of the template pane: the table, Reset, and why a call is refused.

:class:`SampleValuesPanel` shows a :class:`~app.tool_editor.sample_values.SampleValuesModel` in
a table the person types into. A value that is not JSON of its type is flagged at once; the
arguments as a whole are checked against the schema once the event loop is idle (building a
validator costs ~0.1 s the first time for 300 properties, too much for opening a tool), and
what the schema refuses is flagged at its row too. Under the table, in the error colour, a list
names every path a call with these values would be refused for, and why. With a
:class:`~app.tool_editor.sample_values.SampleStore` (:meth:`SampleValuesPanel.keep_in`), what
the person changed is restored from it and saved to it on every change.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from PySide6.QtCore import QEvent, Qt, QTimer, Signal
from PySide6.QtWidgets import (
    QAbstractItemView,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QPushButton,
    QTableView,
    QVBoxLayout,
    QWidget,
)

from app.document.agent_document import AgentDocument
from app.tool_editor.highlighter import HighlightStyle, style_colours
from app.tool_editor.sample_values import SampleStore, SampleValuesModel
from schema_types.arguments import validate_arguments
from schema_types.errors import ArgumentsError, SchemaDefinitionError, SchemaError

__all__ = ["SampleValuesPanel", "heading"]


def heading(text: str, buddy: QWidget | None = None) -> QLabel:
    """A bold section title of the template pane (``&`` marks its shortcut to ``buddy``)."""
    label = QLabel(text)
    font = label.font()
    font.setBold(True)
    label.setFont(font)
    if buddy is not None:
        label.setBuddy(buddy)
    return label


def show_as_error(label: QLabel, error: bool) -> None:
    """Write ``label`` in the error colour for its palette (or the normal colour again)."""
    colour = style_colours(label.palette())[HighlightStyle.UNKNOWN]
    label.setStyleSheet(f"color: {colour.name()};" if error else "")


class SampleValuesPanel(QWidget):
    """The sample values table with its Reset button and the list of refused values.

    Attributes:
        model: the values (what the preview is filled with).
        view: the table.
        reset_button: "Reset": the schema's samples again, every value sent.
        problem_label: why a call with these values would be refused (hidden when it would not).
    """

    checked = Signal()
    """The values were checked against the schema (:attr:`problem_label` is current)."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("sampleValuesPanel")
        self._parameters: Any = None
        self._arguments: dict[str, Any] = {}
        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.setInterval(0)
        self._timer.timeout.connect(self.check)

        self.model = SampleValuesModel(self)
        self.view = QTableView()
        self.view.setObjectName("sampleValues")
        self.view.setModel(self.model)
        rows = self.view.verticalHeader()
        rows.hide()
        rows.setDefaultSectionSize(self.view.fontMetrics().height() + 8)
        self.view.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.view.setEditTriggers(
            QAbstractItemView.EditTrigger.DoubleClicked
            | QAbstractItemView.EditTrigger.EditKeyPressed
            | QAbstractItemView.EditTrigger.AnyKeyPressed
            | QAbstractItemView.EditTrigger.SelectedClicked
        )
        header = self.view.horizontalHeader()
        header.setSectionResizeMode(0, QHeaderView.ResizeMode.Interactive)
        header.setStretchLastSection(True)
        header.resizeSection(0, 180)
        # Four rows at least: a short pane (the tool editor at 1024x700) takes it from the preview.
        frame = 2 * self.view.frameWidth()
        four_rows = 4 * rows.defaultSectionSize()
        self.view.setMinimumHeight(header.sizeHint().height() + four_rows + frame)
        self.problem_label = QLabel()
        self.problem_label.setObjectName("sampleValuesProblem")
        self.problem_label.setWordWrap(True)
        self.problem_label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.problem_label.hide()
        self.reset_button = QPushButton("Reset")
        self.reset_button.setToolTip("Use the samples from the schema again and send every value.")

        title = QHBoxLayout()
        title.addWidget(heading("&Sample values", self.view), 1)
        title.addWidget(self.reset_button)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addLayout(title)
        layout.addWidget(self.view, 1)
        layout.addWidget(self.problem_label)

        self.model.values_changed.connect(self._on_values_changed)
        self.model.problems_changed.connect(self._show_problems)
        self.reset_button.clicked.connect(self.model.reset)

    def set_parameters(self, parameters: Any) -> None:
        """List the leaves of ``parameters`` (the tool's JSON Schema) and check the values."""
        self._parameters = parameters
        self.model.set_parameters(parameters if isinstance(parameters, Mapping) else {})
        self._on_values_changed()

    def arguments(self) -> dict[str, Any]:
        """The arguments a call with these sample values sends."""
        return self._arguments

    def keep_in(
        self, memory: SampleStore, document: AgentDocument, tool_name: Callable[[], str | None]
    ) -> None:
        """Restore what ``memory`` kept for the tool and keep every change there from now on.

        Args:
            memory: where the changes are kept.
            document: the open agent.
            tool_name: the tool's name now (None while the tool is gone): a renamed tool keeps
                its samples under its new name.
        """
        name = tool_name()
        overrides = memory.recall(document, name) if name is not None else None
        if overrides is not None:
            self.model.restore(overrides)

        def save() -> None:
            current = tool_name()
            if current is not None:
                memory.remember(document, current, self.model.overrides())

        self.model.values_changed.connect(save)

    def check(self) -> None:
        """Flag the values the schema refuses, at their rows (runs deferred after a change)."""
        self._timer.stop()
        problems: list[tuple[str, str]] = []
        if isinstance(self._parameters, dict):
            try:
                validate_arguments(self._parameters, self._arguments)
            except SchemaDefinitionError:
                pass  # the parameter builder reports a broken schema where it is edited
            except ArgumentsError as exc:
                problems = [(p.path, p.message) for p in exc.problems]
            except SchemaError as exc:
                problems = [("", str(exc))]
        self.model.set_schema_problems(problems)
        self._show_problems()
        self.checked.emit()

    def _on_values_changed(self) -> None:
        self._arguments = self.model.arguments()
        self._timer.start()

    def _show_problems(self) -> None:
        lines = self.model.problem_lines()
        text = "A call with these sample values is refused:\n" if lines else ""
        self.problem_label.setText(text + "\n".join(f"• {line}" for line in lines))
        show_as_error(self.problem_label, bool(lines))
        self.problem_label.setVisible(bool(lines))

    def changeEvent(self, event: QEvent) -> None:
        super().changeEvent(event)
        if event.type() == QEvent.Type.PaletteChange:
            self.model.set_palette(self.palette())
            self._show_problems()
