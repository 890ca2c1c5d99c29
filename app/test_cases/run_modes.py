"""The matrix's run modes: Live, Record and Replay, and Re-record for a replay that differs.

A choice beside Run picks how the next run goes, the same headless path as ``metaagent test
--record/--replay`` (``run_matrix``'s ``mode``): *Live* asks the models (a case's mocks still
apply), *Record* asks them and keeps each case's exchange in its fixture beside the agent file
(a caller case's per caller model: the caller's turn and the call it picked), *Replay* answers
each case from its fixture with no model, no tool server and no decoy server.

When one selected cell's replay differs from its recording, a bar under the status line says
where (the first difference, as the replay found it) and offers *Re-record*: that case is
recorded again on that model (a caller cell: for that caller model, its call served by the
tab's first model), then the matrix is replayed again to show it mended.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtCore import QObject
from PySide6.QtWidgets import (
    QBoxLayout,
    QComboBox,
    QHBoxLayout,
    QLabel,
    QPushButton,
    QWidget,
)

from app.test_cases.matrix_model import Cell
from app.test_cases.runner import MatrixRunner, RunEnd, RunRequest, chosen_cases, run_path

if TYPE_CHECKING:
    from app.test_cases.matrix_tab_base import MatrixTabBase
    from mcp_export.testing.replay.tape import Mode
    from mcp_export.testing.run import CaseResult

__all__ = ["MODES", "RunModes", "replay_difference"]

MODES: dict[str, Mode | None] = {"Live": None, "Record": "record", "Replay": "replay"}
"""The choice's entries and the ``run_matrix`` mode each stands for."""
_TIPS = {
    "Live": "Ask the models (a case's mocks still apply)",
    "Record": "Ask the models and keep each case's exchange in a fixture beside the agent file",
    "Replay": "Answer each case from its recording: no model, no tool server, no cost",
}


def replay_difference(results: list[CaseResult]) -> str | None:
    """Where a cell's replay differs from its recording (its first such failure), else None."""
    for result in results:
        for failure in result.failures:
            if failure.expectation == "replay":
                return failure.message
    return None


class RunModes(QObject):
    """The run-mode choice of a matrix tab and its Re-record bar.

    Args:
        tab: the matrix tab; the choice goes into ``buttons`` (beside Run), the bar into
            ``layout`` at ``at``.
    """

    def __init__(
        self, tab: MatrixTabBase, buttons: QBoxLayout, layout: QBoxLayout, at: int
    ) -> None:
        super().__init__(tab)
        self.tab = tab
        self.choice = QComboBox()
        self.choice.setObjectName("matrixRunMode")
        self.choice.setAccessibleName("Run mode")
        for index, name in enumerate(MODES):
            self.choice.addItem(name)
            self.choice.setItemData(index, _TIPS[name], 3)  # Qt.ToolTipRole
        self.choice.setToolTip(
            "Live asks the models; Record also keeps each case's exchange; Replay answers from "
            "the recordings (metaagent test --record / --replay)"
        )
        buttons.insertWidget(1, self.choice)
        self.bar = QWidget()
        self.bar.setObjectName("replayDiffers")
        row = QHBoxLayout(self.bar)
        row.setContentsMargins(0, 0, 0, 0)
        self.where = QLabel()
        self.where.setWordWrap(True)
        self.rerecord_button = QPushButton("Re-record")
        self.rerecord_button.setObjectName("matrixRerecord")
        self.rerecord_button.setToolTip(
            "Record this case again on this model, then replay the matrix"
        )
        self.rerecord_button.clicked.connect(self.rerecord)
        row.addWidget(self.where, 1)
        row.addWidget(self.rerecord_button)
        self.bar.setVisible(False)
        layout.insertWidget(at, self.bar)
        self._cell: Cell | None = None
        self.runner = MatrixRunner(tab.history, self)
        self.runner.finished.connect(self._rerecorded)
        tab.table.selectionModel().selectionChanged.connect(lambda *_: self._show_selected())
        tab.finished.connect(lambda _end: self._show_selected())

    def mode(self) -> Mode | None:
        """The mode the next run is in."""
        return MODES[self.choice.currentText()]

    def set_mode(self, name: str) -> None:
        """Pick ``name`` (``Live``, ``Record`` or ``Replay``), as a person would."""
        self.choice.setCurrentText(name)

    def _show_selected(self) -> None:
        cells = self.tab.selected_cells()
        where = replay_difference(self.tab.model.results(cells[0])) if len(cells) == 1 else None
        self._cell = cells[0] if where is not None else None
        if where is not None:
            from mcp_export.testing.replay.tape import RERECORD  # loaded with the run

            tool, case, model = cells[0]
            where = where.removesuffix(f"; {RERECORD}")  # the button here says it
            self.where.setText(f"{tool} / {case} on {model}: {where}")
            self.where.setToolTip(where)
        self.rerecord_button.setEnabled(not self.runner.running)
        self.bar.setVisible(where is not None)

    def rerecord(self) -> bool:
        """Record the selected differing cell's case again on its model.

        Returns:
            False when nothing started (no such cell selected, a run in progress, or the case
            is gone from the agent).
        """
        cell = self._cell
        if cell is None or self.runner.running or self.tab.busy:
            return False
        tool, case, model = cell
        document = self.tab.document
        agent = document.agent
        cases = chosen_cases(agent, [(tool, case)])
        if not cases:
            self.where.setText(f"{tool} / {case} is not in the agent any more.")
            return False
        path = run_path(document.path, agent.metadata.name, document.base_dir)
        if cases[0][1].ask is None:
            request = RunRequest(agent, path, cases, [model], 1, 1, mode="record")
        else:  # a caller cell's model is its caller model; the tab's first model serves
            served = self.tab.picker.models()[:1] or [agent.settings.model or model]
            request = RunRequest(
                agent, path, cases, served, 1, 1, caller_models=[model], mode="record"
            )
        if not self.runner.start(request):
            return False
        self.rerecord_button.setEnabled(False)
        self.where.setText(f"Recording {tool} / {case} on {model} again …")
        return True

    def _rerecorded(self, end: RunEnd) -> None:
        self.rerecord_button.setEnabled(True)
        if end.state != "done" or not end.results or not all(r.passed for r in end.results):
            failed = [r for r in end.results if not r.passed]
            why = end.message or (
                "; ".join(str(f) for f in failed[0].failures) if failed else end.state
            )
            self.where.setText(f"Re-record did not pass: {why}")
            return
        self.set_mode("Replay")
        self.tab.run()
