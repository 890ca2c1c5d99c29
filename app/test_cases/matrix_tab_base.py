"""What the matrix tab's parts (Suggest a fix, the A/B comparison, the run modes) use of it.

The tab (``app.test_cases.matrix_tab``) builds those parts and derives from this class; the parts
take this class, so none of them imports the tab.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtCore import Signal
from PySide6.QtWidgets import QSpinBox, QTableView, QWidget

if TYPE_CHECKING:
    from app.document.agent_document import AgentDocument
    from app.pages.page_tasks import PageTasks
    from app.test_cases.matrix_model import Cell, MatrixTableModel
    from app.test_cases.models_picker import ModelPicker
    from app.test_cases.runner import MatrixRunner, RunEnd
    from mcp_export.history.store import HistoryStore

__all__ = ["MatrixTabBase"]


class MatrixTabBase(QWidget):
    """The matrix tab as its parts see it: its agent, history, runner, table and run.

    Signals:
        finished(object): a run ended; its :class:`~app.test_cases.runner.RunEnd`.
    """

    finished = Signal(object)

    tasks: PageTasks
    document: AgentDocument
    history: HistoryStore | None
    selection: list[tuple[str, str]] | None
    runner: MatrixRunner
    model: MatrixTableModel
    last_end: RunEnd | None
    picker: ModelPicker
    concurrency: QSpinBox
    table: QTableView

    @property
    def busy(self) -> bool:
        """Whether a run is in progress."""
        return self.runner.running

    def run(self) -> bool:
        """Run the cases on the checked models (the tab's own; see ``MatrixTab.run``)."""
        raise NotImplementedError

    def selected_cells(self) -> list[Cell]:
        """The selected cells (not the case column), top to bottom, left to right."""
        indexes = sorted(
            self.table.selectionModel().selectedIndexes(), key=lambda i: (i.row(), i.column())
        )
        found = (self.model.cell_at(i.row(), i.column()) for i in indexes)
        return [cell for cell in found if cell is not None]
