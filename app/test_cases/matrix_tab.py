"""The matrix tab: an agent's test cases run on one or more models, results filling in as they come.

A toolbar picks the models (:class:`~app.test_cases.models_picker.ModelPicker`: the ones picked
last time for this agent file, kept in ``studio.ini``; "List models" offers what the endpoints
list, :mod:`app.test_cases.model_offers`), the repeats and the calls at once, and has Run again
and Stop; a status line counts the calls ("37 of 300 · 2 failed"). The table
(:class:`~app.test_cases.matrix_model.MatrixTableModel`) has a row per case and a column per
model; once a run is recorded and compared with the one before, regressions are marked and come
first. When the cases include caller cases (a request in words), a second row picks the caller
models (those picked last time for the agent file, else its ``settings.callers.models``, else its
own model): their columns follow the served models', each caller cell shows the step that failed
and the funnel of its runs, and a line under the status gives each caller model's rates
(:mod:`app.test_cases.caller_cells`); a caller cell's transcript is the caller's request with the
whole tool list and its reply, then our served call (:mod:`app.test_cases.caller_details`).
Selecting one cell shows its details and a button for its transcript; selecting two shows their
answers side by side (:mod:`app.test_cases.details`). The run itself is
:class:`~app.test_cases.runner.MatrixRunner`'s, on the studio's event loop; the tab holds no
results of its own beyond what the model shows.
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QItemSelection, Qt, Signal
from PySide6.QtGui import QCloseEvent
from PySide6.QtWidgets import (
    QAbstractItemView,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QPushButton,
    QSpinBox,
    QSplitter,
    QStackedWidget,
    QTableView,
    QVBoxLayout,
    QWidget,
)

from app.authoring.improve_view import attach_improve
from app.document.agent_document import AgentDocument
from app.errors import reporter
from app.pages.page_tasks import PageTasks
from app.settings_store import SettingsStore
from app.test_cases.ab_dialog import compare_button
from app.test_cases.caller_cells import caller_result
from app.test_cases.details import AnswerDiff, CellDetails
from app.test_cases.matrix_model import CASE_COLUMN, Cell, MatrixTableModel, shown_result
from app.test_cases.matrix_tab_base import MatrixTabBase
from app.test_cases.model_offers import endpoints_to_ask, list_offers
from app.test_cases.models_memory import MatrixModelMemory, PickedModels
from app.test_cases.models_picker import ModelPicker
from app.test_cases.run_modes import RunModes
from app.test_cases.runner import MatrixRunner, RunEnd, RunRequest, chosen_cases, run_path
from app.test_cases.transcript import TranscriptDialog, caller_transcript_for, transcript_for
from app.tool_editor.highlighter import is_dark
from mcp_export.costs.prices import PricesError, price_table
from mcp_export.redact import redact

if TYPE_CHECKING:
    from mcp_export.history.store import HistoryStore
    from mcp_export.testing.run import CaseResult, MatrixResult

__all__ = ["MatrixTab"]

_ERROR, _WARNING, _OK = "error", "warning", "ok"
_COLOURS = {
    False: {_ERROR: "#c62828", _WARNING: "#b26a00", _OK: "#2e7d32"},
    True: {_ERROR: "#ff8a80", _WARNING: "#ffb74d", _OK: "#8fd694"},
}
"""Status colours on a light (False) and a dark (True) palette."""
_PLACEHOLDER = (
    "Select a cell to see its answer, failed expectations, the judge's verdict and inner tool "
    "calls; select two (Ctrl+click) to compare their answers side by side."
)


class MatrixTab(MatrixTabBase):
    """The test cases of one open agent (all, or a selection) on a matrix of models.

    Args:
        document: the open agent; each run takes its agent as it is then, unsaved edits included.
        history: the shared history store (None: calls are not recorded, no transcripts and no
            comparison with earlier runs).
        selection: ``(tool, case)`` pairs to run; None: every case of the agent.
        models: the models to run on; None: those picked last time for the agent file, else the
            agent's own model.
        settings: the studio's settings: where the picked models are kept, and the endpoints
            Preferences lists (None: neither).
        parent: the parent widget.

    Signals:
        finished(object): a run ended; its :class:`~app.test_cases.runner.RunEnd`.
    """

    attacks_requested = Signal(list)  # the checked models: open the Attacks view on them

    def __init__(
        self,
        document: AgentDocument,
        *,
        history: HistoryStore | None,
        selection: Sequence[tuple[str, str]] | None = None,
        models: Sequence[str] | None = None,
        settings: SettingsStore | None = None,
        parent: QWidget | None = None,
    ) -> None:
        super().__init__(parent)
        self.tasks = PageTasks(self)
        self._memory = MatrixModelMemory(settings) if settings is not None else None
        self._caller_memory = (
            MatrixModelMemory(settings, key="callerModels") if settings is not None else None
        )
        self._preferred = (
            [(e.kind, e.base_url) for e in settings.endpoints()] if settings is not None else []
        )
        self.setObjectName("testMatrixTab")
        self.document = document
        self.history = history
        self.selection = list(selection) if selection is not None else None
        self.runner = MatrixRunner(history, self)
        self.runner.results_arrived.connect(self._on_results)
        self.runner.finished.connect(self._on_finished)
        self.model = MatrixTableModel(self)
        self.last_end: RunEnd | None = None
        self._arguments: dict[tuple[str, str], Mapping[str, Any]] = {}
        self._total = 0
        self._done = 0
        self._failed = 0
        self._began = 0.0
        self._build()
        agent = document.agent
        own = agent.settings.model or ""
        offers = [own] if own else []
        offers += [f"{provider}:" for provider in agent.providers]
        offers += [f"{provider}:" for provider in endpoints_to_ask(agent, self._preferred)]
        self.picker.set_offers(offers)
        picked = self._memory.recall(document) if self._memory is not None else None
        if models:
            self.picker.set_checked(list(models))
        elif picked is not None and picked.checked:
            for name in picked.listed:
                self.picker.add_model(name, checked=False)
            self.picker.set_checked(picked.checked)
        else:
            self.picker.set_checked([own] if own else [])
        self.picker.changed.connect(self._remember_models)
        self.picker.list_requested.connect(self.list_models)
        self.caller_picker.set_offers(offers)
        callers = self._caller_memory.recall(document) if self._caller_memory else None
        if callers is not None and callers.checked:
            for name in callers.listed:
                self.caller_picker.add_model(name, checked=False)
            self.caller_picker.set_checked(callers.checked)
        else:  # the agent file's caller models, else its own model
            self.caller_picker.set_checked(agent.settings.callers.models or ([own] if own else []))
        self.caller_picker.changed.connect(self._remember_caller_models)
        self.caller_picker.list_requested.connect(self.list_models)
        self._show_caller_row()
        self.improve = attach_improve(self)  # Suggest a fix (app.authoring.improve_view)

    # -- layout -----------------------------------------------------------------------------

    def _build(self) -> None:
        self.picker = ModelPicker()
        self.repeat = QSpinBox()
        self.repeat.setRange(1, 100)
        self.repeat.setAccessibleName("Repeat")
        self.repeat.setToolTip("Runs per case and model: a pass rate for answers that vary")
        self.concurrency = QSpinBox()
        self.concurrency.setRange(1, 64)
        self.concurrency.setValue(4)
        self.concurrency.setAccessibleName("Concurrency")
        self.concurrency.setToolTip("Calls in flight at once, over all models")
        self.run_button = QPushButton("Run again")
        self.run_button.setObjectName("matrixRun")
        self.run_button.setToolTip(
            "Run the cases on the checked models with the agent as it is now"
        )
        self.run_button.clicked.connect(self.run)
        self.stop_button = QPushButton("Stop")
        self.stop_button.setObjectName("matrixStop")
        self.stop_button.setToolTip("Cancel the calls in flight and the ones not started")
        self.stop_button.setEnabled(False)
        self.stop_button.clicked.connect(self.stop)
        spins = QVBoxLayout()
        for label, spin in (("Repeat", self.repeat), ("At once", self.concurrency)):
            row = QHBoxLayout()
            row.addWidget(QLabel(label))
            row.addWidget(spin)
            spins.addLayout(row)
        buttons = QVBoxLayout()
        buttons.addWidget(self.run_button)
        buttons.addWidget(self.stop_button)
        self.attacks_button = QPushButton("Attacks…")
        self.attacks_button.setObjectName("matrixAttacks")
        self.attacks_button.setToolTip("Run the built-in attack pack on the checked models")
        self.attacks_button.clicked.connect(
            lambda: self.attacks_requested.emit(self.picker.models())
        )
        buttons.addWidget(self.attacks_button)
        toolbar = QHBoxLayout()
        toolbar.addWidget(QLabel("Models"), 0, Qt.AlignmentFlag.AlignTop)
        toolbar.addWidget(self.picker, 1)
        toolbar.addLayout(spins)
        toolbar.addLayout(buttons)
        self.caller_picker = ModelPicker()
        self.caller_picker.setObjectName("callerModels")
        self.caller_picker.list.setAccessibleName("Caller models")
        self.caller_label = QLabel("Caller\nmodels")
        self.caller_label.setToolTip(
            "The client's models: each gets every caller case's request with the tool list a "
            "client sees, and the call it makes is served by the first model above"
        )
        self.caller_row = QWidget()
        caller_layout = QHBoxLayout(self.caller_row)
        caller_layout.setContentsMargins(0, 0, 0, 0)
        caller_layout.addWidget(self.caller_label, 0, Qt.AlignmentFlag.AlignTop)
        caller_layout.addWidget(self.caller_picker, 1)
        self.rates = QLabel()
        self.rates.setObjectName("callerRates")
        self.rates.setWordWrap(True)
        self.rates.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.rates.setVisible(False)

        self.status = QLabel("Ready")
        self.status.setObjectName("matrixStatus")
        self.notes = QLabel()
        self.notes.setObjectName("matrixNotes")
        self.notes.setWordWrap(True)
        self.notes.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.notes.setVisible(False)

        self.table = QTableView()
        self.table.setModel(self.model)
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectItems)
        self.table.setSelectionMode(QAbstractItemView.SelectionMode.ExtendedSelection)
        self.table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.table.setWordWrap(False)
        self.table.verticalHeader().hide()
        rows = self.table.verticalHeader()
        rows.setSectionResizeMode(QHeaderView.ResizeMode.Fixed)
        rows.setDefaultSectionSize(self.fontMetrics().lineSpacing() * 2 + 10)
        header = self.table.horizontalHeader()
        header.setSectionResizeMode(QHeaderView.ResizeMode.Interactive)
        header.setDefaultSectionSize(210)
        header.setStretchLastSection(True)
        self.table.selectionModel().selectionChanged.connect(self._on_selection_changed)

        self.details = CellDetails()
        self.details.transcript_requested.connect(lambda _thread: self.open_transcript())
        self.diff = AnswerDiff()
        self.placeholder = QLabel(_PLACEHOLDER)
        self.placeholder.setWordWrap(True)
        self.placeholder.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.side = QStackedWidget()
        for page in (self.placeholder, self.details, self.diff):
            self.side.addWidget(page)

        splitter = QSplitter(Qt.Orientation.Vertical)
        splitter.addWidget(self.table)
        splitter.addWidget(self.side)
        splitter.setChildrenCollapsible(False)
        splitter.setSizes([1, 1])  # halves once laid out: the details need room too

        layout = QVBoxLayout(self)
        layout.setContentsMargins(4, 4, 4, 4)
        layout.addLayout(toolbar)
        layout.addWidget(self.caller_row)
        layout.addWidget(self.status)
        layout.addWidget(self.rates)
        layout.addWidget(self.notes)
        layout.addWidget(splitter, 1)
        self.run_modes = RunModes(self, buttons, layout, layout.indexOf(self.notes) + 1)
        self.compare_button = compare_button(self, buttons)

    # -- public API -------------------------------------------------------------------------

    def run(self) -> bool:
        """Run the cases on the checked models, with the agent as it is now.

        Returns:
            False when nothing started (a run in progress, no case or no model left; the status
            line says why).
        """
        if self.runner.running:
            return False
        agent = self.document.agent
        cases = chosen_cases(agent, self.selection)
        if not cases:
            self._say("None of the cases to run is in the agent any more.", _ERROR)
            return False
        models = self.picker.models()
        if not models:
            self._say("Check at least one model to run on.", _ERROR)
            return False
        callers = [(t.name, c.name) for t, c in cases if c.ask is not None]
        caller_models = self.caller_picker.models() if callers else []
        if callers and not caller_models:
            self._say("Check at least one caller model for the caller cases.", _ERROR)
            return False
        path = run_path(self.document.path, agent.metadata.name, self.document.base_dir)
        request = RunRequest(
            agent,
            path,
            cases,
            models,
            self.repeat.value(),
            self.concurrency.value(),
            caller_models=caller_models,
            mode=self.run_modes.mode(),
        )
        self._arguments = {(t.name, c.name): c.arguments for t, c in cases if c.ask is None}
        try:
            prices = price_table(agent)
        except PricesError as exc:  # the run goes on; its costs are the agent file's prices'
            self._say(f"{exc}; costs use the agent file's prices only", _WARNING)
            prices = price_table(agent, {})
        self.model.reset(
            [(t.name, c.name) for t, c in cases],
            models,
            request.repeat,
            caller_models=request.callers,
            caller_cases=callers,
            prices=prices,
        )
        self.rates.setVisible(False)
        self.table.resizeColumnToContents(CASE_COLUMN)
        self._total, self._done, self._failed = request.calls, 0, 0
        self._began = time.perf_counter()
        self.notes.setVisible(False)
        self.side.setCurrentWidget(self.placeholder)
        if not self.runner.start(request):
            return False
        self._set_busy(True)
        self._show_progress()
        return True

    def list_models(self) -> None:
        """Offer the models the endpoints list (on the qasync loop; the picker says how it went)."""
        self.tasks.start("list", self._list_models(), what="Listing the models")

    async def _list_models(self) -> None:
        self.picker.list_button.setEnabled(False)
        self.picker.show_list_note("Asking the endpoints for their models…")
        try:
            offers = await list_offers(self.document.agent, self._preferred)
        finally:
            self.picker.list_button.setEnabled(True)
        self.picker.add_offers(offers.models)
        self.caller_picker.add_offers(offers.models)
        count = len(offers.models)
        lines = [
            f"{count} model{'s' if count != 1 else ''} listed by " + ", ".join(offers.asked)
            if offers.asked
            else "No endpoint listed its models."
        ]
        lines += [f"Not listed: {note}" for note in offers.notes]
        whole = [redact(line) for line in lines]
        self.picker.show_list_note("\n".join(_cut(line, 140) for line in whole))
        self.picker.list_note.setToolTip("\n".join(whole))

    def _remember_models(self) -> None:
        if self._memory is not None:
            picked = PickedModels(self.picker.all_models(), self.picker.models())
            self._memory.remember(self.document, picked)

    def _remember_caller_models(self) -> None:
        if self._caller_memory is not None:
            picker = self.caller_picker
            picked = PickedModels(picker.all_models(), picker.models())
            self._caller_memory.remember(self.document, picked)

    def stop(self) -> None:
        """Cancel the run; the status line says when it has stopped."""
        if self.runner.running:
            self.stop_button.setEnabled(False)
            self._say(f"Stopping… ({self._done} of {self._total} done)", _WARNING)
            self.runner.stop()

    def select_cells(self, cells: Sequence[Cell]) -> None:
        """Select exactly ``cells`` (as a person's clicks would)."""
        selection = QItemSelection()
        for cell in cells:
            index = self.model.index_of(cell)
            if index.isValid():
                selection.select(index, index)
        self.table.selectionModel().select(
            selection, self.table.selectionModel().SelectionFlag.ClearAndSelect
        )

    def open_transcript(self) -> TranscriptDialog | None:
        """Show the transcript of the run in the details pane (None when there is none)."""
        from mcp_export.errors import HistoryError

        result = self.details.shown()
        cells = self.selected_cells()
        if result is None or len(cells) != 1 or self.history is None:
            return None
        tool, case, model = cells[0]
        caller = caller_result(result)
        try:
            if caller is not None:
                rich_text = caller_transcript_for(self.history, cells[0], caller)
                model = f"caller {model}"
            else:
                rich_text = transcript_for(self.history, cells[0], result)
        except HistoryError as exc:
            reporter().error(f"Could not read the transcript: {exc}")
            return None
        heading = "Transcripts" if caller is not None else "Transcript"
        title = f"{heading} · {tool} / {case} · {model} · attempt {result.attempt}"
        dialog = TranscriptDialog(title, rich_text, self)
        dialog.show()
        return dialog

    def _show_caller_row(self) -> None:
        """The caller models' row, when the cases to run include caller cases."""
        cases = chosen_cases(self.document.agent, self.selection)
        self.caller_row.setVisible(any(case.ask is not None for _tool, case in cases))

    def _show_rates(self, end: RunEnd | None = None) -> None:
        """Each caller model's rates over its caller cases, one line each; once the run is
        recorded, the pick rate before and after of each case whose tool's description changed
        since its last run."""
        lines = [
            f"{model} (caller): {rates}"
            for model in self.model.caller_models
            if (rates := self.model.caller_rates(model))
        ]
        for change in end.pick_changes if end is not None else []:
            (was, of), (now, runs) = change.before, change.after
            lines.append(
                f"{change.tool}'s description changed since the last run: {change.case} on "
                f"{change.model} picked it {was}/{of} then, {now}/{runs} now"
            )
        self.rates.setText("\n".join(lines))
        self.rates.setVisible(bool(lines))

    # -- reactions --------------------------------------------------------------------------

    def _on_results(self, batch: list[CaseResult]) -> None:
        self.model.add_results(batch)
        if self.model.caller_models:
            self._show_rates()
        self._done += len(batch)
        self._failed += sum(not result.passed for result in batch)
        self._show_progress()
        shown = set(self.selected_cells())
        if shown and any((r.tool, r.case, r.model) in shown for r in batch):
            self._on_selection_changed()

    def _on_finished(self, end: RunEnd) -> None:
        self.last_end = end
        self._set_busy(False)
        if end.changes is not None:
            self.model.set_changes(end.changes)
            self.table.scrollToTop()
        self._show_end(end)
        if self.model.caller_models:
            self._show_rates(end)
        self._show_problems(end.results)
        self._on_selection_changed()
        self.finished.emit(end)

    def _on_selection_changed(self, *_: Any) -> None:
        cells = self.selected_cells()
        if len(cells) == 1:
            cell = cells[0]
            results = self.model.results(cell)
            self.details.show_cell(
                cell,
                results,
                self.model.summary(cell),
                self._arguments.get(cell[:2]),
                history_on=self.history is not None,
            )
            self.side.setCurrentWidget(self.details)
        elif len(cells) == 2:
            left, right = cells
            self.diff.show_pair(
                (left, shown_result(self.model.results(left))),
                (right, shown_result(self.model.results(right))),
            )
            self.side.setCurrentWidget(self.diff)
        else:
            self.side.setCurrentWidget(self.placeholder)

    # -- status -----------------------------------------------------------------------------

    def _set_busy(self, busy: bool) -> None:
        self.run_button.setEnabled(not busy)
        self.stop_button.setEnabled(busy)

    def _colour(self, kind: str) -> str:
        return _COLOURS[is_dark(self.palette())][kind]

    def _say(self, text: str, kind: str | None = None) -> None:
        self.status.setText(text)
        self.status.setStyleSheet(f"color: {self._colour(kind)};" if kind else "")

    def _show_progress(self) -> None:
        text = f"{self._done} of {self._total}"
        if self._failed:
            text += f" · {self._failed} failed"
        self._say(text + " …")

    def _show_end(self, end: RunEnd) -> None:
        ran = len(end.results)
        failed = sum(not r.passed for r in end.results)
        counts = Counter((end.changes or {}).values())
        if end.state == "failed":
            self._say(end.message or "The test cases could not run.", _ERROR)
            return
        if end.state == "stopped":
            text = f"Stopped after {ran} of {self._total}"
            if failed:
                text += f" · {failed} failed"
            text += " · a stopped run is not recorded"
            if end.message:
                text += f" · {end.message}"
            self._say(text, _WARNING)
            return
        seconds = (
            end.matrix.duration_ms / 1000
            if end.matrix is not None
            else time.perf_counter() - self._began
        )
        text = f"{ran} of {self._total} · {failed} failed"
        if counts["regressed"]:
            text += f" · {counts['regressed']} regressed"
        if counts["fixed"]:
            text += f" · {counts['fixed']} fixed"
        text += f" · {seconds:.1f} s"
        if end.matrix is not None:
            text += f" · {_cost_text(end.matrix)}"
        if end.message:
            text += f" · {end.message}"
        self._say(text, _ERROR if counts["regressed"] else _WARNING if failed else _OK)

    def _show_problems(self, results: Sequence[CaseResult]) -> None:
        """Name the models on which every call failed the same way (not configured, say)."""
        lines: list[str] = []
        for model in self.model.models:
            mine = [r for r in results if r.model == model]
            errors = {r.outcome.text for r in mine if r.outcome.is_error and not r.passed}
            if mine and len(errors) == 1 and all(r.outcome.is_error and not r.passed for r in mine):
                lines.append(f"{model}: every call failed: {redact(next(iter(errors)))}")
        self.notes.setText("\n".join(lines))
        self.notes.setStyleSheet(f"color: {self._colour(_ERROR)};")
        self.notes.setVisible(bool(lines))

    def closeEvent(self, event: QCloseEvent) -> None:  # noqa: N802  (Qt's name)
        self.runner.close()
        super().closeEvent(event)


def _cut(line: str, limit: int) -> str:
    """``line`` up to ``limit`` characters (the rest in the tool tip)."""
    return line if len(line) <= limit else line[: limit - 1] + "…"


def _cost_text(matrix: MatrixResult) -> str:
    """The whole run's cost: ``cost $0.0024 ($0.00008 a call, $0.008 per 100 calls)``."""
    from mcp_export.testing.cost import cell_cost  # loaded with the run

    cost = cell_cost(matrix.prices, matrix.results)
    if cost.total.usd is None:
        return "cost unknown"
    return (
        f"cost {cost.total.text()} ({cost.per_call.text()} a call, "
        f"{cost.per_100.text()} per 100 calls)"
    )
