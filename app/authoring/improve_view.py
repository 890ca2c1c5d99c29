"""*Suggest a fix* in the results matrix: the authoring model's change for the failing cells.

:func:`attach_improve` adds an :class:`ImprovePanel` under the matrix's table. Selecting failing
cells and clicking *Suggest a fix* asks the authoring model (``mcp_export.authoring.improve``)
for one change to the tool's description, template or parameters schema, or the system prompt;
the panel shows its reason and the diff of the agent file's text. *Apply and re-run* puts the
change into the editor as one undo step (the file stays as it is until the author saves) and
re-runs the chosen cases and every case that passed before on the same models, then shows each
model's pass rate before → after with regressions first. *Undo* takes that step back: the
agent's text is then the same bytes as before the fix.
"""

from __future__ import annotations

import html
import time
from typing import TYPE_CHECKING, Any

from PySide6.QtWidgets import (
    QHBoxLayout,
    QLabel,
    QPushButton,
    QSplitter,
    QTextEdit,
    QVBoxLayout,
    QWidget,
)

from app.authoring.model_choice import preferred_authoring_model
from app.document.agent_document import FieldPath
from app.test_cases.runner import run_path
from app.tool_editor.highlighter import is_dark
from mcp_export.authoring.exchange import authoring_model
from mcp_export.authoring.improve import (
    Comparison,
    Fix,
    FixRefused,
    compare,
    fix_conversation,
    rerun,
    rerun_cases,
    suggest_fix,
)
from mcp_export.errors import ExportError
from mcp_export.redact import redact

if TYPE_CHECKING:
    from app.test_cases.matrix_tab_base import MatrixTabBase
    from mcp_export.testing.run import CaseResult, MatrixResult

__all__ = ["ImprovePanel", "attach_improve"]

_COLOURS = {
    False: {"add": "#2e7d32", "del": "#c62828", "head": "#555555"},
    True: {"add": "#8fd694", "del": "#ff8a80", "head": "#aaaaaa"},
}


def attach_improve(tab: MatrixTabBase) -> ImprovePanel:
    """Add the fix panel under ``tab``'s table (the tab's splitter gets a third pane)."""
    panel = ImprovePanel(tab)
    splitter = tab.table.parentWidget()
    if isinstance(splitter, QSplitter):
        splitter.addWidget(panel)
    return panel


class ImprovePanel(QWidget):
    """Suggest a fix for the selected failing cells, apply it and re-run, undo it.

    Attributes:
        fix: the suggestion shown (None before one).
        comparison: the last re-run's before → after (None before one).
        authoring_model_name: the authoring model (``provider:model``); None: the one chosen in
            Preferences, else the agent's own.
        accepted_at: ``perf_counter()`` when *Apply and re-run* was clicked.
        first_result_at: ``perf_counter()`` when the re-run's first result arrived.
    """

    def __init__(self, tab: MatrixTabBase) -> None:
        super().__init__(tab)
        self.setObjectName("improvePanel")
        self.tab = tab
        self.fix: Fix | None = None
        self.comparison: Comparison | None = None
        self.authoring_model_name: str | None = None
        self.accepted_at = 0.0
        self.first_result_at = 0.0
        self._before: MatrixResult | None = None
        self._undo_index: int | None = None
        self.suggest_button = QPushButton("Suggest a fix")
        self.suggest_button.setObjectName("improveSuggest")
        self.suggest_button.setToolTip(
            "Ask the authoring model for one change that makes the selected failing cells pass"
        )
        self.apply_button = QPushButton("Apply and re-run")
        self.apply_button.setObjectName("improveApply")
        self.undo_button = QPushButton("Undo")
        self.undo_button.setObjectName("improveUndo")
        self.status = QLabel("Select failing cells, then Suggest a fix.")
        self.status.setObjectName("improveStatus")
        self.status.setWordWrap(True)
        self.reason = QLabel()
        self.reason.setObjectName("improveReason")
        self.reason.setWordWrap(True)
        self.diff = QTextEdit()
        self.diff.setObjectName("improveDiff")
        self.diff.setReadOnly(True)
        self.diff.setAccessibleName("Suggested change")
        self.rates = QLabel()
        self.rates.setObjectName("improveRates")
        self.rates.setWordWrap(True)
        row = QHBoxLayout()
        for button in (self.suggest_button, self.apply_button, self.undo_button):
            row.addWidget(button)
        row.addWidget(self.status, 1)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addLayout(row)
        layout.addWidget(self.reason)
        layout.addWidget(self.rates)
        layout.addWidget(self.diff, 1)
        self.suggest_button.clicked.connect(self.suggest)
        self.apply_button.clicked.connect(self.apply_and_rerun)
        self.undo_button.clicked.connect(self.undo)
        tab.table.selectionModel().selectionChanged.connect(lambda *_: self._refresh())
        tab.runner.finished.connect(lambda *_: self._refresh())
        tab.tasks.busy_changed.connect(lambda *_: self._refresh())
        self._show_fix()

    # -- what is selected ------------------------------------------------------------------

    def _matrix(self) -> MatrixResult | None:
        end = self.tab.last_end
        return end.matrix if end is not None else None

    def selected_failures(self) -> list[CaseResult]:
        """The failed runs of the selected cells (of the first selected tool's)."""
        matrix = self._matrix()
        if matrix is None:
            return []
        cells = set(self.tab.selected_cells())
        failed = [r for r in matrix.results if (r.tool, r.case, r.model) in cells and not r.passed]
        return [r for r in failed if r.tool == failed[0].tool] if failed else []

    def _busy(self) -> bool:
        return self.tab.tasks.is_running("improve") or self.tab.busy

    def _refresh(self) -> None:
        busy = self._busy()
        self.suggest_button.setEnabled(not busy and bool(self.selected_failures()))
        self.apply_button.setEnabled(not busy and self.fix is not None and self._undo_index is None)
        self.undo_button.setEnabled(not busy and self._undo_index is not None)

    # -- suggest ---------------------------------------------------------------------------

    def suggest(self) -> bool:
        """Ask for a fix of the selected failing cells; False when there is none selected."""
        failed = self.selected_failures()
        matrix = self._matrix()
        if not failed or matrix is None or self._busy():
            self.status.setText("Select failing cells of a finished run first.")
            return False
        self.status.setText(f"Asking the authoring model about {failed[0].tool}…")
        started = self.tab.tasks.start(
            "improve", self._suggest(failed, matrix), what="Suggesting a fix"
        )
        self._refresh()
        return started is not None

    async def _suggest(self, failed: list[CaseResult], matrix: MatrixResult) -> None:
        document = self.tab.document
        agent = document.agent
        tool = failed[0].tool
        path = run_path(document.path, agent.metadata.name, document.base_dir)
        try:
            chosen = self.authoring_model_name or preferred_authoring_model(self)
            model = authoring_model(agent, chosen)
            conversation = fix_conversation(
                model, tool, failed, history=self.tab.history, agent_path=str(path)
            )
            async with conversation:
                fix = await suggest_fix(agent, path, tool, failed, conversation)
        except FixRefused as exc:
            self.fix = None
            self.status.setText(redact(str(exc)))
        except ExportError as exc:
            self.fix = None
            self.status.setText(redact(f"The authoring model could not be asked: {exc}"))
        else:
            self.offer(fix, matrix)
            return
        self._show_fix()
        self._refresh()

    def offer(self, fix: Fix, before: MatrixResult) -> None:
        """Show ``fix`` (suggested for failures of ``before``) for the author to apply."""
        self.fix, self._before, self._undo_index, self.comparison = fix, before, None, None
        repaired = " after one repair turn" if fix.repaired else ""
        self.status.setText(f"Suggested a change to {fix.proposal.field}{repaired}.")
        self._show_fix()
        self._refresh()

    def _show_fix(self) -> None:
        fix = self.fix
        for widget in (self.reason, self.diff):
            widget.setVisible(fix is not None)
        self.rates.setVisible(self.comparison is not None)
        if fix is None:
            return
        self.reason.setText(
            f"<b>{html.escape(fix.proposal.field)}</b>: {html.escape(redact(fix.proposal.reason))}"
        )
        self.diff.setHtml(_diff_html(redact(fix.diff), is_dark(self.palette())))
        splitter = self.parentWidget()
        if isinstance(splitter, QSplitter) and splitter.count() == 3:  # room for the diff
            total = sum(splitter.sizes())
            splitter.setSizes([total * 3 // 10, total * 2 // 10, total * 5 // 10])

    # -- apply, re-run, undo ---------------------------------------------------------------

    def apply_and_rerun(self) -> bool:
        """Put the fix into the editor as one undo step and re-run; False when there is none."""
        fix, before = self.fix, self._before
        if fix is None or before is None or self._undo_index is not None or self._busy():
            return False
        self.accepted_at, self.first_result_at = time.perf_counter(), 0.0
        document = self.tab.document
        stack = document.undo_stack
        with document.macro(f"Apply the suggested fix to {fix.tool}"):
            path, value = _edit(fix)
            applied = document.set_field(path, value, text="Suggested fix")
        if not applied:
            self.status.setText("The editor refused the change; nothing was applied.")
            return False
        self._undo_index = stack.index()
        self.status.setText("Applied (not saved). Re-running…")
        cases = rerun_cases(before, fix.tool, {r.case for r in self.selected_failures()})
        self.tab.tasks.start("improve", self._rerun(fix, before, cases), what="Re-running")
        self._refresh()
        return True

    async def _rerun(self, fix: Fix, before: MatrixResult, cases: list[str]) -> None:
        document = self.tab.document
        path = run_path(document.path, document.agent.metadata.name, document.base_dir)
        applied = Fix(fix.tool, fix.proposal, document.agent, fix.before, fix.after, fix.diff)

        def arrived(_result: Any) -> None:
            if not self.first_result_at:
                self.first_result_at = time.perf_counter()
                self.status.setText("Applied (not saved). Re-running… first result in.")

        try:
            after = await rerun(applied, path, before, cases, on_result=arrived)
        except ExportError as exc:
            self.status.setText(redact(f"The re-run failed: {exc}"))
        else:
            self.comparison = compare(before, after, fix.tool)
            self.rates.setText(_rates_html(self.comparison, is_dark(self.palette())))
            regressed = len(self.comparison.regressions)
            self.status.setText(
                f"Applied (not saved): {regressed} passing case{'s' * (regressed != 1)} now "
                f"fail{'s' * (regressed == 1)}. Undo takes the change back."
                if regressed
                else "Applied (not saved): nothing regressed. Save to keep it."
            )
        self._show_fix()
        self._refresh()

    def undo(self) -> bool:
        """Take the applied fix back (when it is still the last edit); False otherwise."""
        stack = self.tab.document.undo_stack
        if self._undo_index is None or stack.index() != self._undo_index or self._busy():
            self.status.setText("The fix is not the last edit any more: use Edit ▸ Undo.")
            return False
        stack.undo()
        self._undo_index = None
        self.status.setText("The fix is undone.")
        self._refresh()
        return True


def _edit(fix: Fix) -> tuple[FieldPath, Any]:
    """Where the fix goes in the document, and its value."""
    proposal = fix.proposal
    if proposal.field == "systemPrompt":
        return ("system_prompt",), fix.agent.system_prompt
    index = next(i for i, t in enumerate(fix.agent.metadata.tools) if t.name == fix.tool)
    tool = fix.agent.metadata.tools[index]
    value = tool.parameters if proposal.field == "parameters" else getattr(tool, proposal.field)
    return ("metadata", "tools", index, proposal.field), value


def _diff_html(diff: str, dark: bool) -> str:
    colours = _COLOURS[dark]
    lines = []
    for line in diff.splitlines():
        kind = (
            "head"
            if line.startswith(("---", "+++", "@@"))
            else "add"
            if line.startswith("+")
            else "del"
            if line.startswith("-")
            else None
        )
        text = html.escape(line) or "&nbsp;"
        lines.append(f'<span style="color:{colours[kind]}">{text}</span>' if kind else text)
    return "<pre>" + "\n".join(lines) + "</pre>"


def _rates_html(comparison: Comparison, dark: bool) -> str:
    colours = _COLOURS[dark]
    tool = html.escape(comparison.tool)
    lines = [
        f'<span style="color:{colours["del"]}"><b>Regressed</b>: {tool} / '
        f"{html.escape(case)} on {html.escape(model)}</span>"
        for case, model in comparison.regressions
    ]
    lines += [
        f'<span style="color:{colours["add"]}">Fixed: {tool} / {html.escape(case)} on '
        f"{html.escape(model)}</span>"
        for case, model in comparison.fixed
    ]
    lines += [
        f"Still failing: {tool} / {html.escape(case)} on {html.escape(model)}"
        for case, model in comparison.still_failing
    ]
    lines += [
        f"{html.escape(model)}: {old} → {new} passed"
        for model, (old, new) in comparison.rates.items()
    ]
    return "<br>".join(lines)
