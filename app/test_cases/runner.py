"""Running an open agent's test cases on the studio's event loop, for the matrix tab.

:class:`MatrixRunner` runs ``mcp_export.testing.run.run_matrix`` as one asyncio task on the qasync
loop under Qt, so the window keeps answering while the calls run. Every ``CaseResult`` goes to
the view as it arrives (:attr:`MatrixRunner.results_arrived`; the results of one event-loop turn
come as one batch). A finished run is recorded in the history store and compared with the one
before it (``record_matrix`` and ``compare``, in a worker thread: hundreds of rows), and
:attr:`MatrixRunner.finished` hands over a :class:`RunEnd`: the results, the comparison, and a
sentence for the person when something went wrong. Stop cancels the task; a run that has not
ended :data:`STOP_LIMIT_S` seconds later is given up on and said so.

The runtime behind ``run_matrix`` (the MCP SDK, the served server) takes about a second to
import: it is imported in a worker thread before the first run, never on the GUI thread.
"""

from __future__ import annotations

import asyncio
import importlib
import re
import sys
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from PySide6.QtCore import QObject, Signal

from app.collector import settle_after_import
from app.errors import reporter
from app.test_cases.matrix_model import Cell, Change

if TYPE_CHECKING:
    from mcp_export.history.store import HistoryStore
    from mcp_export.testing.callers.rates import PickChange
    from mcp_export.testing.replay.tape import Mode
    from mcp_export.testing.run import CaseResult, MatrixResult
    from schema_types.agent import Agent, ToolDefinition
    from schema_types.cases import TestCase

__all__ = [
    "NO_CASES_MESSAGE",
    "PRELOAD_LIMIT_S",
    "RECORD_LIMIT_S",
    "STOP_LIMIT_S",
    "MatrixRunner",
    "RunEnd",
    "RunRequest",
    "chosen_cases",
    "run_path",
]

STOP_LIMIT_S = 10.0
"""How long Stop waits for the calls in flight to end before giving up on them."""
PRELOAD_LIMIT_S = 60.0
"""How long the first run waits for the runtime's import."""
RECORD_LIMIT_S = 30.0
"""How long a finished run waits for the history store to record and compare it."""

NO_CASES_MESSAGE = (
    "{name} has no test cases yet. Add one with Save as test case after a test run (the test "
    "dialog or a tool's chat tab), or in the Tests panel of a tool's editor."
)

_RUNTIME = (
    "mcp_export.testing.run",
    "mcp_export.testing.record",
    "mcp_export.testing.callers",
    "mcp_export.server.call",
    "mcp_export.server.round_trip",
    "schema_types.arguments",
    "anyio._backends._asyncio",
)

# Runs that were given up on or whose tab went away: asyncio keeps only weak references to tasks.
_abandoned: set[asyncio.Task[Any]] = set()


@dataclass(frozen=True)
class RunRequest:
    """What to run: cases of one agent on some models.

    Attributes:
        agent: the agent as it is in the editor (unsaved edits included).
        path: its file, or a stand-in for an unsaved agent (:func:`run_path`).
        cases: the cases, in the agent's order.
        models: ``provider:model`` names, at least one: they serve the calls.
        repeat: runs per case and model.
        concurrency: calls in flight at once over all models.
        caller_models: the caller models of the caller cases among ``cases`` (each gets their
            requests; the calls they make are served by the first of ``models``); empty: the
            agent file's ``settings.callers.models``, else the first of ``models``.
        mode: ``record`` or ``replay`` (``run_matrix``'s, as ``metaagent test --record`` and
            ``--replay``); None: live.
    """

    agent: Agent
    path: Path
    cases: list[tuple[ToolDefinition, TestCase]]
    models: list[str]
    repeat: int = 1
    concurrency: int = 4
    caller_models: list[str] = field(default_factory=lambda: list[str]())
    mode: Mode | None = None

    @property
    def callers(self) -> list[str]:
        """The caller models the caller cases run on (none without caller cases)."""
        if not any(case.ask is not None for _tool, case in self.cases):
            return []
        named = self.caller_models or self.agent.settings.callers.models
        return list(dict.fromkeys(named)) or self.models[:1]

    @property
    def calls(self) -> int:
        """How many runs the run makes (a caller case's: one per caller model)."""
        callers = sum(case.ask is not None for _tool, case in self.cases)
        ordinary = len(self.cases) - callers
        per = ordinary * len(self.models) + callers * len(self.callers)
        return per * max(1, self.repeat)


RunState = Literal["done", "stopped", "failed"]


@dataclass(frozen=True)
class RunEnd:
    """How a run ended.

    Attributes:
        state: ``done`` (every call ran), ``stopped`` (Stop) or ``failed`` (the agent could not
            run at all).
        results: every result that arrived.
        matrix: the whole run when it is ``done``.
        changes: each cell compared with its last earlier run, when the run was recorded.
        pick_changes: the caller cells whose tool's description changed since their last
            recorded run, with the pick rate then and now (when the run was recorded).
        message: what the person should know (why it failed, why it is not recorded), or "".
    """

    state: RunState
    results: list[CaseResult] = field(default_factory=lambda: list["CaseResult"]())
    matrix: MatrixResult | None = None
    changes: dict[Cell, Change] | None = None
    message: str = ""
    pick_changes: list[PickChange] = field(default_factory=lambda: list["PickChange"]())


def chosen_cases(
    agent: Agent, selection: Sequence[tuple[str, str]] | None
) -> list[tuple[ToolDefinition, TestCase]]:
    """The cases of ``agent`` named by ``selection`` (``(tool, case)`` pairs; None: every case),
    in the agent's order."""
    every = [(tool, case) for tool in agent.tools for case in tool.tests]
    if selection is None:
        return every
    wanted = set(selection)
    return [(tool, case) for tool, case in every if (tool.name, case.name) in wanted]


def run_path(path: Path | None, agent_name: str, base_dir: Path) -> Path:
    """The file a run is recorded under: the agent's, or for an unsaved agent a name in
    ``base_dir`` that says so (its relative tool-server paths start there, as in a chat)."""
    if path is not None:
        return path.resolve()
    slug = re.sub(r"[^\w.-]+", "-", agent_name).strip("-") or "untitled"
    return (base_dir / f"{slug}.unsaved.agent.yaml").resolve()


def _import_runtime() -> None:
    for name in _RUNTIME:
        importlib.import_module(name)


def _record(
    matrix: MatrixResult, history: HistoryStore
) -> tuple[dict[Cell, Change], list[PickChange]]:
    from mcp_export.testing.callers.history import description_changes
    from mcp_export.testing.record import compare, record_matrix

    record_matrix(matrix, history)
    picks = description_changes(matrix, history) if matrix.caller_cases else []
    return compare(matrix, history), picks


class MatrixRunner(QObject):
    """Runs one request at a time and reports its results as they come.

    Args:
        history: where served calls and case runs are recorded (None: nowhere; then there are
            no transcripts and no comparison).
        parent: the owning QObject (the tab).

    Signals:
        results_arrived(list): ``CaseResult`` objects that finished since the last batch.
        finished(object): the :class:`RunEnd` of the run.
    """

    results_arrived = Signal(list)
    finished = Signal(object)

    def __init__(self, history: HistoryStore | None, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.history = history
        self._task: asyncio.Task[None] | None = None
        self._results: list[CaseResult] = []
        self._pending: list[CaseResult] = []
        self._flush_handle: asyncio.Handle | None = None
        self._stop_handle: asyncio.TimerHandle | None = None
        self._stopping = False
        self._closed = False
        self._run_id = 0

    @property
    def running(self) -> bool:
        """Whether a run is in progress (Stop included, until it has ended)."""
        return self._task is not None

    def start(self, request: RunRequest) -> bool:
        """Start ``request`` on the running loop.

        Returns:
            False when a run is in progress, the runner is closed, or there is no running loop
            (reported).
        """
        if self._task is not None or self._closed:
            return False
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            reporter().error("Cannot run test cases: the studio's event loop is not running.")
            return False
        self._run_id += 1
        self._results = []
        self._pending = []
        self._stopping = False
        self._task = loop.create_task(self._run(self._run_id, request))
        return True

    def stop(self) -> None:
        """Cancel the run; :attr:`finished` says ``stopped`` once the calls in flight have ended,
        or after :data:`STOP_LIMIT_S` seconds at the latest."""
        task = self._task
        if task is None or self._stopping:
            return
        self._stopping = True
        task.cancel()
        self._stop_handle = asyncio.get_running_loop().call_later(
            STOP_LIMIT_S, self._stop_overdue, self._run_id
        )

    def close(self) -> None:
        """Cancel any run and emit nothing more (the tab is going away)."""
        self._closed = True
        self._let_go()

    # -- the run ----------------------------------------------------------------------------

    async def _run(self, run_id: int, request: RunRequest) -> None:
        from mcp_export.errors import ExportError, HistoryError

        def on_result(result: CaseResult) -> None:
            if run_id == self._run_id:
                self._on_result(result)

        try:
            fresh = "mcp_export.testing.run" not in sys.modules
            await asyncio.wait_for(asyncio.to_thread(_import_runtime), PRELOAD_LIMIT_S)
            if fresh:
                settle_after_import()
            from mcp_export.testing.callers import CallerOptions
            from mcp_export.testing.run import run_matrix

            matrix = await run_matrix(
                request.agent,
                request.path,
                request.cases,
                models=request.models,
                repeat=request.repeat,
                concurrency=request.concurrency,
                history=self.history,
                on_result=on_result,
                callers=CallerOptions(models=tuple(request.callers)),
                mode=request.mode,
            )
        except asyncio.CancelledError:
            if run_id != self._run_id or not self._stopping:
                raise
            self._end(run_id, RunEnd("stopped", self._results_so_far()))
            return
        except (ExportError, OSError) as exc:
            self._end(run_id, RunEnd("failed", self._results_so_far(), message=_cannot_run(exc)))
            return
        except Exception as exc:  # the runtime's own bug: reported, and the tab says so
            reporter().exception(exc, context="Running the test cases")
            self._end(run_id, RunEnd("failed", self._results_so_far(), message=_cannot_run(exc)))
            return
        results = self._results_so_far()
        if self.history is None:
            self._end(
                run_id, RunEnd("done", results, matrix, message="History is off: not recorded.")
            )
            return
        try:
            changes, picks = await asyncio.wait_for(
                asyncio.to_thread(_record, matrix, self.history), RECORD_LIMIT_S
            )
        except asyncio.CancelledError:
            if run_id != self._run_id or not self._stopping:
                raise
            self._end(
                run_id,
                RunEnd(
                    "done",
                    results,
                    matrix,
                    message="Stopped while it was being recorded: no comparison.",
                ),
            )
            return
        except (HistoryError, TimeoutError) as exc:
            note = f"The run is not recorded: {exc or 'the history store did not answer in time'}"
            self._end(run_id, RunEnd("done", results, matrix, message=note))
            return
        self._end(run_id, RunEnd("done", results, matrix, changes, pick_changes=picks))

    def _on_result(self, result: CaseResult) -> None:
        self._results.append(result)
        self._pending.append(result)
        if self._flush_handle is None:
            self._flush_handle = asyncio.get_running_loop().call_soon(self._flush)

    def _flush(self) -> None:
        self._flush_handle = None
        batch, self._pending = self._pending, []
        if batch and not self._closed:
            self.results_arrived.emit(batch)

    def _results_so_far(self) -> list[CaseResult]:
        if self._flush_handle is not None:
            self._flush_handle.cancel()
        self._flush()
        return list(self._results)

    def _end(self, run_id: int, end: RunEnd) -> None:
        if run_id != self._run_id:
            return  # given up on (Stop overdue, the tab closed): nothing reaches the view
        self._task = None
        self._cancel_timers()
        if not self._closed:
            self.finished.emit(end)

    def _stop_overdue(self, run_id: int) -> None:
        self._stop_handle = None
        if run_id != self._run_id or self._task is None:
            return
        results = self._results_so_far()
        self._let_go()
        message = (
            f"The calls in flight did not end within {STOP_LIMIT_S:.0f} s of Stop; they are "
            "left to end on their own."
        )
        self.finished.emit(RunEnd("stopped", results, message=message))

    def _let_go(self) -> None:
        """Forget the current run: it is cancelled, and nothing it does reaches the view."""
        self._run_id += 1
        task, self._task = self._task, None
        self._cancel_timers()
        self._pending = []
        if task is not None and not task.done():
            task.cancel()
            _abandoned.add(task)
            task.add_done_callback(_abandoned.discard)

    def _cancel_timers(self) -> None:
        for handle in (self._flush_handle, self._stop_handle):
            if handle is not None:
                handle.cancel()
        self._flush_handle = self._stop_handle = None


def _cannot_run(exc: BaseException) -> str:
    if isinstance(exc, TimeoutError):
        return "The test-case runtime did not load in time; try Run again."
    return f"The test cases cannot run: {exc or type(exc).__name__}"
