"""*Compare with a variant…*: a tool's template as it is (A) against an edited copy (B), before
saving.

The dialog takes the variant's template (unsaved: the agent is not touched), runs the matrix's
ordinary cases of that tool on the matrix's checked models for both sides, interleaved A, B, A, B
(``mcp_export.versions.ab``, the same path as every matrix run), and shows per model each side's
pass rate, median time, tokens, cost and version fingerprint side by side, then every cell with
each side's passes, the cells that differ first. *Keep variant* puts the variant's template into
the agent as one undo step.
"""

from __future__ import annotations

import asyncio
import importlib
from typing import TYPE_CHECKING

from PySide6.QtGui import QBrush, QColor
from PySide6.QtWidgets import (
    QBoxLayout,
    QComboBox,
    QDialog,
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QPlainTextEdit,
    QPushButton,
    QSpinBox,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
)

from app.test_cases.runner import chosen_cases, run_path
from app.tool_editor.highlighter import is_dark
from mcp_export.costs.prices import PricesError, price_table

if TYPE_CHECKING:
    from pathlib import Path

    from app.test_cases.matrix_tab_base import MatrixTabBase
    from mcp_export.costs.prices import PriceTable
    from mcp_export.versions.ab import ABResult, SideFigures
    from schema_types.agent import Agent

__all__ = ["FIGURE_COLUMNS", "ABDialog", "compare_button", "open_ab"]

FIGURE_COLUMNS = ["Model", "Side", "Version", "Passed", "Median time", "Tokens in/out", "Cost"]
_DIFFERS = {False: "#fde2e1", True: "#5a2a2a"}
"""The background of a cell row whose sides differ, on a light (False) and a dark (True) palette."""


def _figure_row(model: str, side: str, figures: SideFigures) -> list[str]:
    median = "—" if figures.median_ms is None else f"{figures.median_ms / 1000:.2f} s"
    ins = "?" if figures.input_tokens is None else str(figures.input_tokens)
    outs = "?" if figures.output_tokens is None else str(figures.output_tokens)
    return [
        model,
        "A (current)" if side == "A" else "B (variant)",
        figures.version or "—",
        figures.pass_rate,
        median,
        f"{ins} / {outs}",
        figures.cost.text(),
    ]


class ABDialog(QDialog):
    """Compare a tool's template with a variant on the matrix's cases and models.

    Args:
        tab: the matrix tab: its agent, its cases and its checked models.
    """

    def __init__(self, tab: MatrixTabBase) -> None:
        super().__init__(tab)
        self.setObjectName("abDialog")
        self.setWindowTitle("Compare with a variant")
        self.tab = tab
        self.comparison: ABResult | None = None
        self._task: asyncio.Task[None] | None = None
        self._compared: tuple[str, str] | None = None  # (tool, template) of the last run
        cases = chosen_cases(tab.document.agent, tab.selection)
        tools = list(dict.fromkeys(t.name for t, c in cases if c.ask is None))
        self.tool = QComboBox()
        self.tool.setAccessibleName("Tool")
        self.tool.addItems(tools)
        self.tool.currentTextChanged.connect(self._show_template)
        self.template = QPlainTextEdit()
        self.template.setAccessibleName("Variant template")
        self.template.setPlaceholderText("The variant's template")
        self.rounds = QSpinBox()
        self.rounds.setRange(1, 50)
        self.rounds.setAccessibleName("Rounds")
        self.rounds.setToolTip("Runs of every case on every model per side, interleaved A, B, A, B")
        self.run_button = QPushButton("Run both")
        self.run_button.setObjectName("abRun")
        self.run_button.clicked.connect(self.run)
        self.keep_button = QPushButton("Keep variant")
        self.keep_button.setObjectName("abKeep")
        self.keep_button.setToolTip("Put the variant's template into the agent (one undo step)")
        self.keep_button.setEnabled(False)
        self.keep_button.clicked.connect(self.keep)
        self.status = QLabel("Edit the template, then Run both." if tools else "No case to run.")
        self.status.setObjectName("abStatus")
        self.status.setWordWrap(True)
        self.figures = QTableWidget(0, len(FIGURE_COLUMNS))
        self.figures.setObjectName("abFigures")
        self.figures.setHorizontalHeaderLabels(FIGURE_COLUMNS)
        self.figures.verticalHeader().hide()
        self.cells = QTableWidget(0, 4)
        self.cells.setObjectName("abCells")
        self.cells.setHorizontalHeaderLabels(["Case", "Model", "A passed", "B passed"])
        self.cells.verticalHeader().hide()
        for table in (self.figures, self.cells):
            table.setEditTriggers(QTableWidget.EditTrigger.NoEditTriggers)
            table.horizontalHeader().setStretchLastSection(True)
        form = QFormLayout()
        form.addRow("Tool", self.tool)
        form.addRow("Variant template", self.template)
        form.addRow("Rounds", self.rounds)
        buttons = QHBoxLayout()
        buttons.addWidget(self.status, 1)
        buttons.addWidget(self.run_button)
        buttons.addWidget(self.keep_button)
        layout = QVBoxLayout(self)
        layout.addLayout(form)
        layout.addLayout(buttons)
        layout.addWidget(QLabel("Per model"))
        layout.addWidget(self.figures, 1)
        layout.addWidget(QLabel("Per cell (those that differ first)"))
        layout.addWidget(self.cells, 1)
        self._show_template(self.tool.currentText())
        self.run_button.setEnabled(bool(tools))
        self.resize(820, 600)

    # -- actions ----------------------------------------------------------------------------

    def _tool_index(self, name: str) -> int | None:
        for index, tool in enumerate(self.tab.document.agent.tools):
            if tool.name == name:
                return index
        return None

    def _show_template(self, name: str) -> None:
        index = self._tool_index(name)
        if index is not None:
            self.template.setPlainText(self.tab.document.agent.tools[index].prompt)

    @property
    def busy(self) -> bool:
        """Whether a comparison is running."""
        return self._task is not None

    def run(self) -> bool:
        """Run both sides (see the module docstring); False when nothing started (said why)."""
        if self._task is not None:
            return False
        name, template = self.tool.currentText(), self.template.toPlainText()
        agent = self.tab.document.agent
        cases = [
            (t.name, c.name)
            for t, c in chosen_cases(agent, self.tab.selection)
            if t.name == name and c.ask is None
        ]
        models = self.tab.picker.models()
        if not cases or not models:
            self.status.setText("Check a model, and pick a tool with test cases.")
            return False
        try:
            prices = price_table(agent)
        except PricesError as exc:
            self.status.setText(f"{exc}; costs use the agent file's prices only")
            prices = price_table(agent, {})
        path = run_path(self.tab.document.path, agent.metadata.name, self.tab.document.base_dir)
        self.keep_button.setEnabled(False)
        self.run_button.setEnabled(False)
        self.status.setText("Starting …")
        coroutine = self._run(agent, name, template, path, cases, models, prices)
        self._task = asyncio.get_running_loop().create_task(coroutine)
        return True

    async def _run(
        self,
        agent: Agent,
        name: str,
        template: str,
        path: Path,
        cases: list[tuple[str, str]],
        models: list[str],
        prices: PriceTable,
    ) -> None:
        from mcp_export.errors import ExportError

        try:
            await asyncio.to_thread(importlib.import_module, "mcp_export.versions.ab")
            from mcp_export.versions.ab import run_ab, with_template

            rounds = self.rounds.value()

            def on_round(round_: int, side: str) -> None:
                self.status.setText(f"Round {round_} of {rounds} · {side} …")

            self.comparison = await run_ab(
                agent,
                with_template(agent, name, template),
                path,
                cases,
                models,
                prices,
                rounds=rounds,
                concurrency=self.tab.concurrency.value(),
                history=self.tab.history,
                on_round=on_round,
            )
        except (ExportError, OSError) as exc:
            self.status.setText(f"The comparison could not run: {exc}")
            return
        finally:
            self._task = None
            self.run_button.setEnabled(True)
        self._compared = (name, template)
        self._show(self.comparison)
        self.keep_button.setEnabled(template != agent.tools[self._tool_index(name) or 0].prompt)

    def keep(self) -> bool:
        """Put the compared variant's template into the agent as one undo step."""
        if self._compared is None:
            return False
        name, template = self._compared
        index = self._tool_index(name)
        if index is None:
            self.status.setText(f"{name} is not in the agent any more.")
            return False
        done = self.tab.document.set_field(
            ("metadata", "tools", index, "prompt"), template, text=f"Keep the variant of {name}"
        )
        if done:
            self.keep_button.setEnabled(False)
            self.status.setText(f"Kept: {name}'s template is the variant's (Undo takes it back).")
        return done

    # -- showing ----------------------------------------------------------------------------

    def _show(self, result: ABResult) -> None:
        rows = [
            _figure_row(model, side, result.figures[model, side])
            for model in result.models
            for side in ("A", "B")
        ]
        self.figures.setRowCount(len(rows))
        for row, values in enumerate(rows):
            for column, value in enumerate(values):
                self.figures.setItem(row, column, QTableWidgetItem(value))
        self.figures.resizeColumnsToContents()
        self.cells.setRowCount(len(result.cells))
        background = QBrush(QColor(_DIFFERS[is_dark(self.palette())]))
        for row, cell in enumerate(result.cells):
            values = [cell.case, cell.model, f"{cell.a[0]}/{cell.a[1]}", f"{cell.b[0]}/{cell.b[1]}"]
            for column, value in enumerate(values):
                item = QTableWidgetItem(value)
                if cell.differs:
                    item.setBackground(background)
                    item.setToolTip("A and B differ here")
                self.cells.setItem(row, column, item)
        self.cells.resizeColumnsToContents()
        differing = sum(cell.differs for cell in result.cells)
        self.status.setText(
            f"{differing} of {len(result.cells)} cells differ between A and B"
            if differing
            else "A and B pass the same cells"
        )


def open_ab(tab: MatrixTabBase) -> ABDialog:
    """Open the comparison for ``tab`` (not modal: the matrix stays usable)."""
    dialog = ABDialog(tab)
    dialog.show()
    return dialog


def compare_button(tab: MatrixTabBase, buttons: QBoxLayout) -> QPushButton:
    """The *Compare with a variant…* button, added to ``buttons``."""
    button = QPushButton("Compare with a variant…")
    button.setObjectName("matrixCompare")
    button.setToolTip("Run a tool's template and an edited copy on these cases and models")
    button.clicked.connect(lambda: open_ab(tab))
    buttons.addWidget(button)
    return button
