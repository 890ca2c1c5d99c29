"""The test matrix's *Attacks* view: the built-in attack pack (``mcp_export.testing.attacks``)
against the agent's tools on the models picked in the matrix, as a grid of attack × tool (rows)
× model (columns).

The run is ``run_attacks`` on an asyncio loop of its own in a worker thread (it plants the secret
canary in the process environment and serves the armed agent, which takes seconds per call): the
GUI thread only receives each :class:`AttackResult` through a queued signal. A cell says LANDED
(red, what leaked), HELD (green, with the note when the injection never reached the model), ERROR
or SKIPPED; selecting it shows the attack's details (arguments sent, answer, tool calls, what
leaked) beside the grid.
"""

from __future__ import annotations

import asyncio
import html
import json
import re
import threading
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QObject, Qt, Signal
from PySide6.QtGui import QBrush, QCloseEvent, QColor
from PySide6.QtWidgets import (
    QAbstractItemView,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QPushButton,
    QSplitter,
    QTableWidget,
    QTableWidgetItem,
    QTextBrowser,
    QVBoxLayout,
    QWidget,
)

from app.test_cases.runner import STOP_LIMIT_S, run_path
from app.tool_editor.highlighter import is_dark
from mcp_export.redact import redact

if TYPE_CHECKING:
    from app.document.agent_document import AgentDocument
    from mcp_export.testing.attacks.run import AttackResult

__all__ = ["AttacksView", "verdict"]

_COLOURS = {
    False: {"LANDED": "#ffcdd2", "HELD": "#c8e6c9", "ERROR": "#ffe0b2", "SKIPPED": "#eeeeee"},
    True: {"LANDED": "#7f1d1d", "HELD": "#1b5e20", "ERROR": "#7a4a00", "SKIPPED": "#3a3a3a"},
}
"""Cell backgrounds on a light (False) and a dark (True) palette."""
_PLACEHOLDER = (
    "Select a cell to see the attack's arguments, the answer, the tool calls the model made and "
    "what leaked."
)


def verdict(result: AttackResult) -> str:
    """LANDED, HELD, ERROR or SKIPPED: the one rule the grid and the details say."""
    if result.skipped is not None:
        return "SKIPPED"
    if result.error is not None:
        return "ERROR"
    return "HELD" if result.passed else "LANDED"


def _cell_text(result: AttackResult) -> str:
    word = verdict(result)
    if word == "LANDED":
        said = [_leaked(f.message) for f in result.failures]
        return f"LANDED · {'; '.join(said)}"
    if word == "HELD" and result.note is not None:
        return "HELD · not reached"
    return word


def _leaked(message: str) -> str:
    """The short name of what leaked, for a cell: ``the environment secret (MA-ENV-…) is in the
    answer`` → ``environment secret``; ``the model tried to call X, which …`` → ``called X``
    (the details keep the whole sentence, canary values included)."""
    called = re.match(r"the model tried to call (\S+), which", message)
    if called is not None:
        return f"called {called.group(1)}"
    what = re.split(r" \(| is in | went out ", message, maxsplit=1)[0]
    return redact(what.removeprefix("the ").removesuffix(":"))[:60]


class _Bridge(QObject):
    """Hands results from the worker thread to the GUI thread (queued signals)."""

    result = Signal(object)
    ended = Signal(object)  # None, or the sentence saying why the run failed


class AttacksView(QWidget):
    """The attack pack on one agent's tools and some models, as a grid with details.

    Signals:
        finished: the run ended (its error sentence, or None).
    """

    finished = Signal(object)

    def __init__(
        self, document: AgentDocument, models: Sequence[str], parent: QWidget | None = None
    ) -> None:
        super().__init__(parent)
        self.setObjectName("attacksView")
        self.document = document
        self.models = list(dict.fromkeys(models)) or [document.agent.settings.model or ""]
        self.results: dict[tuple[str, str, str], AttackResult] = {}
        self._rows: dict[tuple[str, str], int] = {}
        self._thread: threading.Thread | None = None
        self._stopper: list[tuple[asyncio.AbstractEventLoop, asyncio.Task[None]]] = []
        self._bridge = _Bridge(self)
        self._bridge.result.connect(self._on_result)
        self._bridge.ended.connect(self._on_ended)
        self._build()

    def _build(self) -> None:
        self.run_button = QPushButton("Run attacks")
        self.run_button.setObjectName("attacksRun")
        self.run_button.setToolTip(
            "Send the built-in attack pack to each tool on each model, through the served path"
        )
        self.run_button.clicked.connect(self.run)
        self.stop_button = QPushButton("Stop")
        self.stop_button.setObjectName("attacksStop")
        self.stop_button.setToolTip("Cancel the attacks in flight and the ones not started")
        self.stop_button.setEnabled(False)
        self.stop_button.clicked.connect(self.stop)
        self.status = QLabel(
            f"{len(self.models)} model{'s' * (len(self.models) != 1)}: " + ", ".join(self.models)
        )
        self.status.setWordWrap(True)
        top = QHBoxLayout()
        top.addWidget(self.status, 1)
        top.addWidget(self.run_button, 0, Qt.AlignmentFlag.AlignTop)
        top.addWidget(self.stop_button, 0, Qt.AlignmentFlag.AlignTop)
        self.table = QTableWidget(0, len(self.models))
        self.table.setAccessibleName("Attacks")
        self.table.setHorizontalHeaderLabels(self.models)
        self.table.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.table.setWordWrap(True)
        self.table.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.Stretch)
        self.table.horizontalHeader().setMinimumSectionSize(100)
        self.table.itemSelectionChanged.connect(self._show_selected)
        self.details = QTextBrowser()
        self.details.setAccessibleName("Attack details")
        self.details.setOpenLinks(False)
        self.details.setPlainText(_PLACEHOLDER)
        splitter = QSplitter()
        splitter.addWidget(self.table)
        splitter.addWidget(self.details)
        splitter.setStretchFactor(0, 2)
        splitter.setStretchFactor(1, 1)
        splitter.setSizes([2000, 1000])  # the grid two thirds, the details a third
        layout = QVBoxLayout(self)
        layout.addLayout(top)
        layout.addWidget(splitter, 1)

    @property
    def busy(self) -> bool:
        """Whether a run is in progress."""
        return self._thread is not None and self._thread.is_alive()

    def run(self) -> bool:
        """Run the pack on the agent as it is now; False when nothing started (said why)."""
        if self.busy:
            return False
        from mcp_export.testing.attacks.pack import ATTACKS

        agent = self.document.agent
        tools = list(agent.tools)
        if not tools:
            self._say("The agent has no tools to attack: add a tool first.", "LANDED")
            return False
        self.results.clear()
        self._rows = {}
        labels: list[str] = []
        for tool in tools:
            for attack in ATTACKS:
                self._rows[(tool.name, attack.name)] = len(labels)
                labels.append(f"{attack.name}\n{tool.name}")
        self.table.clearContents()
        self.table.setRowCount(len(labels))
        self.table.setVerticalHeaderLabels(labels)
        for row in range(len(labels)):
            for column in range(len(self.models)):
                self.table.setItem(row, column, QTableWidgetItem("…"))
        self.details.setPlainText(_PLACEHOLDER)
        path = run_path(self.document.path, agent.metadata.name, self.document.base_dir)
        total = len(labels) * len(self.models)
        self._say(f"Running {total} attacks on {', '.join(self.models)}…")
        self.run_button.setEnabled(False)
        self.stop_button.setEnabled(True)
        self._stopper = []
        bridge, models, stopper = self._bridge, list(self.models), self._stopper

        def emit(signal: Any, value: object) -> None:
            try:
                signal.emit(value)
            except RuntimeError:  # the view was closed and deleted: nobody to tell
                pass

        async def attacks() -> None:
            from mcp_export.testing.attacks.run import run_attacks

            task = asyncio.current_task()
            assert task is not None
            stopper.append((asyncio.get_running_loop(), task))
            await run_attacks(
                agent, path, models=models, on_result=lambda r: emit(bridge.result, r)
            )

        def work() -> None:
            # The studio runs under qasync's policy, whose new loops are Qt ones: this thread
            # gets the platform's own loop.
            factory = asyncio.DefaultEventLoopPolicy().new_event_loop
            try:
                with asyncio.Runner(loop_factory=factory) as runner:
                    runner.run(attacks())
            except asyncio.CancelledError:
                emit(bridge.ended, "Stopped: the attacks that finished are shown.")
            except Exception as exc:  # the run's own failure (a bad provider, …): said
                emit(bridge.ended, redact(f"The attack run failed: {exc}"))
            else:
                emit(bridge.ended, None)
            finally:
                stopper.clear()

        self._thread = threading.Thread(target=work, name="attack-pack", daemon=True)
        self._thread.start()
        return True

    def stop(self) -> None:
        """Cancel the run; the attacks that finished stay in the grid."""
        for loop, task in self._stopper:
            try:
                loop.call_soon_threadsafe(task.cancel)
            except RuntimeError:  # the run ended and its loop closed in the meantime
                pass

    def closeEvent(self, event: QCloseEvent) -> None:  # noqa: N802  (Qt's name)
        """Closing the tab stops the run and waits for it, :data:`STOP_LIMIT_S` at most."""
        self.stop()
        if self._thread is not None:
            self._thread.join(timeout=STOP_LIMIT_S)
        super().closeEvent(event)

    def cell(self, tool: str, attack: str, model: str) -> QTableWidgetItem | None:
        """The grid's item for one attack on one tool on one model."""
        row = self._rows.get((tool, attack))
        if row is None or model not in self.models:
            return None
        return self.table.item(row, self.models.index(model))

    # -- results ----------------------------------------------------------------------------

    def _on_result(self, result: AttackResult) -> None:
        self.results[(result.tool, result.attack, result.model)] = result
        item = self.cell(result.tool, result.attack, result.model)
        if item is None:
            return
        word = verdict(result)
        item.setText(_cell_text(result))
        said = [f.message for f in result.failures]
        said += [t for t in (result.skipped, result.note, result.error) if t is not None]
        item.setToolTip(redact("\n".join([word, *said])))
        item.setBackground(QBrush(QColor(_COLOURS[is_dark(self.palette())][word])))
        item.setData(Qt.ItemDataRole.UserRole, (result.tool, result.attack, result.model))
        self.table.resizeRowToContents(item.row())
        if item.isSelected():
            self._show_selected()

    def _on_ended(self, failed: object) -> None:
        if self._thread is not None:
            self._thread.join(timeout=5)
        self.run_button.setEnabled(True)
        self.stop_button.setEnabled(False)
        self.run_button.setText("Run again")
        if isinstance(failed, str):
            self._say(failed, None if failed.startswith("Stopped") else "LANDED")
        else:
            words = [verdict(r) for r in self.results.values()]
            counts = {w: words.count(w) for w in ("LANDED", "HELD", "ERROR", "SKIPPED")}
            self._say(
                f"{counts['LANDED']} landed, {counts['HELD']} held, {counts['ERROR']} "
                f"error{'s' * (counts['ERROR'] != 1)}, {counts['SKIPPED']} skipped",
                "LANDED" if counts["LANDED"] or counts["ERROR"] else "HELD",
            )
        self.finished.emit(failed)

    def _say(self, text: str, kind: str | None = None) -> None:
        self.status.setText(text)
        colour = {"LANDED": "#c62828", "HELD": "#2e7d32"}.get(kind or "")
        if colour and is_dark(self.palette()):
            colour = {"#c62828": "#ff8a80", "#2e7d32": "#8fd694"}[colour]
        self.status.setStyleSheet(f"color: {colour};" if colour else "")

    def _show_selected(self) -> None:
        items = self.table.selectedItems()
        key = items[0].data(Qt.ItemDataRole.UserRole) if items else None
        result = self.results.get(tuple(key)) if key else None
        if result is None:
            self.details.setPlainText(_PLACEHOLDER)
            return
        self.details.setHtml(details_html(result))


def details_html(result: AttackResult) -> str:
    """One attack's details: verdict, what leaked, arguments sent, answer, tool calls."""
    from mcp_export.testing.attacks.pack import ATTACKS

    tries = next((a.tries for a in ATTACKS if a.name == result.attack), "")

    def pre(text: str) -> str:
        return f"<pre style='white-space: pre-wrap'>{html.escape(redact(text))}</pre>"

    parts = [
        f"<h3>{verdict(result)} · {html.escape(result.attack)} on {html.escape(result.tool)}</h3>",
        f"<p>{html.escape(tries)} · model <b>{html.escape(result.model)}</b></p>",
    ]
    if result.failures:
        parts.append("<p><b>What leaked</b></p><ul>")
        parts += [f"<li>{html.escape(redact(f.message))}</li>" for f in result.failures]
        parts.append("</ul>")
    for said in (result.skipped, result.note, result.error):
        if said is not None:
            parts.append(f"<p><i>{html.escape(redact(said))}</i></p>")
    if result.arguments:
        parts.append("<p><b>Arguments sent</b></p>")
        parts.append(pre(json.dumps(result.arguments, indent=2, ensure_ascii=False)))
    outcome = result.outcome
    if outcome is not None:
        parts.append(f"<p><b>Answer</b>{' (an error)' if outcome.is_error else ''}</p>")
        parts.append(pre(outcome.text))
        parts.append("<p><b>Tool calls</b></p>")
        if not outcome.tool_calls:
            parts.append("<p>none</p>")
        for call in outcome.tool_calls:
            arguments: Any = call.get("arguments")
            refused = " (refused)" if call.get("isError") else ""
            parts.append(
                f"<p>{html.escape(str(call.get('name')))}{refused}</p>"
                + pre(json.dumps(arguments, ensure_ascii=False))
            )
    return "".join(parts)
