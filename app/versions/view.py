"""The Versions view of an agent: a tool's versions from History, newest first, and a diff.

Each row is one version of the chosen tool (``mcp_export.versions``), tested or only served:
its fingerprint, model, runs, pass rate (``—`` for a version only served), median time, tokens
and cost per call and per 100 calls, and its last run; ``*`` marks the version of the agent as
it is in the editor now. Selecting one row shows what differs between it and the editor's
version; selecting two shows what differs between them (older first). *Restore* puts the one
selected version back into the editor as one undo step (:mod:`app.versions.restore`); the file
is saved as usual. A/B is not here.

The versions are read on a worker thread (a tool's figures sum all its runs: a history of
100 000 runs takes a tenth of a second or more), so the tab is painted at once, saying that it
reads, and the rows follow; a read made for another tool, or before a later refresh, is dropped.
Results come back through the studio's one carrier (``app.agent_check_worker.shared_results``).
"""

from __future__ import annotations

import logging
import threading
from dataclasses import replace
from pathlib import Path

from PySide6.QtCore import QItemSelectionModel, Qt, QTimer, Signal
from PySide6.QtGui import QFontDatabase, QResizeEvent
from PySide6.QtWidgets import (
    QAbstractItemView,
    QComboBox,
    QHBoxLayout,
    QLabel,
    QPlainTextEdit,
    QPushButton,
    QSplitter,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from app.agent_check_worker import REFRESH_DELAY_MS, shared_results
from app.document.agent_document import AgentDocument
from app.test_cases.runner import run_path
from app.versions.restore import restore
from mcp_export.errors import ExportError
from mcp_export.history.schema import agent_key
from mcp_export.history.store import HistoryStore
from mcp_export.versions.fingerprint import Version, tool_version
from mcp_export.versions.query import CURRENT, VersionSummary, tool_versions, version_diff

__all__ = ["COLUMNS", "SAME_AS_EDITOR", "VersionsView"]

_log = logging.getLogger(__name__)

COLUMNS = (
    "",
    "Version",
    "Model",
    "Passed",
    "Median",
    "Tokens/call",
    "Cost/call",
    "Cost/100 calls",
    "Last run",
)
SAME_AS_EDITOR = "This is the editor's version: nothing differs."
"""The diff pane when the one version selected is the editor's."""

_RUNS = 3  # where VersionSummary.cells puts the number of runs
_VERSION = COLUMNS.index("Version")
_MODEL = COLUMNS.index("Model")
_PASSED = COLUMNS.index("Passed")
_COSTS = (COLUMNS.index("Cost/call"), COLUMNS.index("Cost/100 calls"))
_LEAST_MODEL = "openai:gpt-4"
"""What the Model column keeps room for when the table is narrower than its columns."""


class VersionsView(QWidget):
    """A tool's versions and the diff of the selected ones."""

    read_done = Signal()
    """A read of the versions is shown (its rows, or why History cannot be read)."""

    def __init__(
        self, document: AgentDocument, store: HistoryStore, parent: QWidget | None = None
    ) -> None:
        super().__init__(parent)
        self.setObjectName("versionsTab")
        self.document = document
        self.store = store
        self.versions: list[VersionSummary] = []
        self.reading = False
        self._key = object()  # tells this view's reads from other workers' results
        self._generation = 0
        self._shown_tool = ""
        self._after_read = ""
        self._model_width = 0  # the Model column's width for its longest model
        self._filling = False
        self._failed = False  # the last read could not read History
        shared_results().made.connect(self._on_read)
        # An edit moves the editor's version: its mark follows after a pause in the typing.
        self._edited = QTimer(self)
        self._edited.setSingleShot(True)
        self._edited.setInterval(REFRESH_DELAY_MS)
        self._edited.timeout.connect(self._mark_current)
        document.changed_at.connect(self._on_edited)  # a method: let go with the view
        self.tool_combo = QComboBox()
        self.tool_combo.setObjectName("versionsTool")
        self.table = QTableWidget(0, len(COLUMNS))
        self.table.setObjectName("versionsTable")
        self.table.setHorizontalHeaderLabels(list(COLUMNS))
        self.table.verticalHeader().hide()
        self.table.setTextElideMode(Qt.TextElideMode.ElideMiddle)
        self.table.setWordWrap(False)  # a narrowed model is elided, not wrapped and cut
        self.table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.setSelectionMode(QAbstractItemView.SelectionMode.ExtendedSelection)
        self.table.itemSelectionChanged.connect(self._show_diff)
        self.note = QLabel()
        self.note.setObjectName("versionsNote")
        self.note.setWordWrap(True)
        self.diff = QPlainTextEdit()
        self.diff.setObjectName("versionsDiff")
        self.diff.setReadOnly(True)
        self.diff.setFont(QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont))
        self.diff.setPlaceholderText(
            "Select a version to see what differs between it and the editor's version; "
            "select two (Ctrl+click) to compare them."
        )
        self.restore_button = QPushButton("&Restore")
        self.restore_button.setObjectName("versionsRestore")
        self.restore_button.setToolTip(
            "Put the selected version's description, parameters, template, output schema, "
            "system prompt, model and settings back into the editor (one undo step)"
        )
        self.restore_button.setEnabled(False)
        self.restore_button.clicked.connect(self.restore_selected)
        top = QHBoxLayout()
        label = QLabel("&Tool:")
        label.setBuddy(self.tool_combo)
        top.addWidget(label)
        top.addWidget(self.tool_combo, 1)
        top.addWidget(self.restore_button)
        splitter = QSplitter(Qt.Orientation.Vertical)
        splitter.addWidget(self.table)
        splitter.addWidget(self.diff)
        layout = QVBoxLayout(self)
        layout.addLayout(top)
        layout.addWidget(self.note)
        layout.addWidget(splitter, 1)
        self.tool_combo.addItems([tool.name for tool in document.agent.tools])
        self.tool_combo.currentTextChanged.connect(lambda _: self.refresh())
        self.refresh()

    @property
    def path(self) -> Path:
        """The file the agent's runs are recorded under."""
        agent = self.document.agent
        return run_path(self.document.path, agent.metadata.name, self.document.base_dir)

    def current(self) -> Version | None:
        """The chosen tool's version as the editor has it now."""
        agent = self.document.agent
        tool = agent.metadata.tool(self.tool_combo.currentText())
        return None if tool is None else tool_version(agent, tool)

    def refresh(self, note: str = "") -> None:
        """Read the chosen tool's versions again, on a worker thread (:attr:`read_done` says
        when they are shown); ``note`` then replaces the line that counts them."""
        name = self.tool_combo.currentText()
        self._generation += 1
        self._after_read = note
        if name != self._shown_tool:
            self._show([], name)
        if not name:
            self.note.setText("This agent has no tools yet: add one and run its test cases")
            return
        self.reading = True
        self.note.setText(f"Reading the versions of {name} from History…")
        args = (self._key, self._generation, self.store, self.path, name, self.current())
        threading.Thread(target=_read, args=args, name="versions-read", daemon=True).start()

    def _on_read(self, key: object, generation: int, result: object) -> None:
        if key is not self._key or generation != self._generation:
            return
        self.reading = False
        name = self.tool_combo.currentText()
        self._failed = not isinstance(result, list)
        if isinstance(result, list):
            self._show(result, name)
            self.note.setText(self._after_read or self._count_note())
        else:
            self._show([], name)
            self.note.setText(f"History cannot be read: {result}")
        self.read_done.emit()

    def _count_note(self) -> str:
        name = self.tool_combo.currentText()
        if not self.versions:
            return (
                f"No run of {name} is recorded yet: run its test cases, or serve it, to record one"
            )
        current = self.current()
        shown = current.short if current is not None else "—"
        return (
            f"{len(self.versions)} version(s) of {name}, newest first; * is the editor's "
            f"version ({shown})"
        )

    def _on_edited(self, _path: object) -> None:
        self._edited.start()

    def _mark_current(self) -> None:
        """Mark the editor's version as the agent is now (the diff against it follows)."""
        if self.reading or self._failed:
            return  # the read under way marks it; a failed read's note stays
        current = self.current()
        fingerprint = current.fingerprint if current is not None else None
        self.versions = [replace(v, current=v.fingerprint == fingerprint) for v in self.versions]
        for row, version in enumerate(self.versions):
            item = self.table.item(row, 0)
            if item is not None:
                item.setText("*" if version.current else "")
        self.note.setText(self._count_note())
        self._show_diff()

    def _show(self, versions: list[VersionSummary], tool: str) -> None:
        """Show ``versions`` of ``tool``; the versions selected before stay selected (their
        diff shown again: Restore changes the editor's version)."""
        kept = {self.versions[row].fingerprint for row in self._selected()}
        self._filling = True
        self.table.clearSelection()
        self.versions = versions
        self._shown_tool = tool
        self.table.setRowCount(len(versions))
        for row, version in enumerate(versions):
            for column, value in enumerate(_cells(version)):
                item = QTableWidgetItem(value)
                if column == _VERSION:
                    item.setToolTip(version.fingerprint)
                elif column == _MODEL:
                    item.setToolTip(version.model)
                elif column in _COSTS:
                    item.setToolTip(_cost_counts(version))
                elif column == _PASSED and not version.runs:
                    item.setToolTip(
                        f"Served only ({version.served_calls} calls): no test case ran this "
                        "version, so its pass rate is unknown"
                    )
                self.table.setItem(row, column, item)
        self.table.resizeColumnsToContents()
        self._model_width = self.table.horizontalHeader().sectionSize(_MODEL)
        self._fit_columns()
        selection = self.table.selectionModel()
        for row, version in enumerate(versions):
            if version.fingerprint in kept:
                selection.select(
                    self.table.model().index(row, 0),
                    QItemSelectionModel.SelectionFlag.Select
                    | QItemSelectionModel.SelectionFlag.Rows,
                )
        self._filling = False
        self._show_diff()

    def _fit_columns(self) -> None:
        """The Model column gives way (its text elided, whole in its tool tip) so that the
        figures and the last run fit the table's width."""
        header = self.table.horizontalHeader()
        others = header.length() - header.sectionSize(_MODEL)
        room = self.table.viewport().width() - others
        least = self.table.fontMetrics().horizontalAdvance(_LEAST_MODEL)
        header.resizeSection(_MODEL, max(min(self._model_width, room), least))

    def resizeEvent(self, event: QResizeEvent) -> None:  # noqa: N802  (Qt's name)
        super().resizeEvent(event)
        self._fit_columns()

    def _selected(self) -> list[int]:
        return sorted({index.row() for index in self.table.selectedIndexes()})

    def restore_selected(self) -> bool:
        """Restore the one selected version into the editor; True when the editor's version
        is then that version (the note says how it went)."""
        rows = self._selected()
        if len(rows) != 1:
            return False
        version = self.versions[rows[0]]
        tool = self.tool_combo.currentText()
        key = agent_key(str(self.path))
        try:
            decisive = self.store.stored_version(key, tool, version.fingerprint)
        except ExportError as exc:
            self.note.setText(f"History cannot be read: {exc}")
            return False
        done = decisive is not None and restore(self.document, tool, version.fingerprint, decisive)
        self._edited.stop()  # the read below marks the restored version, keeping its note
        self.refresh(
            f"Restored version {version.short} of {tool} (Undo takes it back)"
            if done
            else f"Version {version.short} could not be restored exactly: History keeps it "
            "redacted, or the tool is gone; compare with the diff"
        )
        return done

    def _show_diff(self) -> None:
        if self._filling:
            return
        rows = self._selected()
        self.restore_button.setEnabled(len(rows) == 1)
        if not rows or len(rows) > 2:
            self.diff.setPlainText("" if not rows else "Select one version, or two to compare.")
            return
        chosen = [self.versions[row].fingerprint for row in rows]
        # The list is newest first: the lower row is the older version.
        old, new = (chosen[1], chosen[0]) if len(chosen) == 2 else (chosen[0], CURRENT)
        try:
            text = version_diff(
                self.store, self.path, self.tool_combo.currentText(), old, new, self.current()
            )
        except ExportError as exc:
            text = str(exc)
        same = "The two versions are the same." if len(rows) == 2 else SAME_AS_EDITOR
        self.diff.setPlainText(text or same)


def _read(
    key: object,
    generation: int,
    store: HistoryStore,
    path: Path,
    tool: str,
    current: Version | None,
) -> None:
    """A worker thread's body: the versions of ``tool`` (or the error), sent to the view."""
    result: object
    try:
        result = tool_versions(store, path, tool, current)
    except ExportError as exc:
        result = exc
    except Exception as exc:  # the thread's top: shown in the view, the studio goes on
        _log.exception("Reading the versions of %s failed", tool)
        result = exc
    shared_results().made.emit(key, generation, result)


def _cost_counts(version: VersionSummary) -> str:
    """What a version's cost is over: its case runs, and its served calls that were no case's."""
    runs = f"{version.runs} case run{'s' if version.runs != 1 else ''}"
    calls = version.served_calls
    served = f"{calls} served call{'s' if calls != 1 else ''}"
    if not calls:
        return f"Over {runs}"
    if not version.runs:
        return f"Over {served} (served only: no case ran this version)"
    return f"Over {runs} and {calls} other {served.split(' ', 1)[1]}"


def _cells(version: VersionSummary) -> tuple[str, ...]:
    """The row of ``version``: the CLI's cells but the runs, which Passed shows (2/3; for a
    version only served, its pass rate unknown and its calls: ``— (3 served)``)."""
    cells = version.cells(version.last_at.astimezone().strftime("%Y-%m-%d %H:%M"))
    if not version.runs:
        passed = f"{cells[_RUNS + 1]} ({version.served_calls} served)"
        cells = (*cells[: _RUNS + 1], passed, *cells[_RUNS + 2 :])
    return cells[:_RUNS] + cells[_RUNS + 1 :]
