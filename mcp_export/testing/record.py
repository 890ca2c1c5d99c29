"""Keeping each matrix run in the history database and comparing it with the one before.

Every result becomes a ``case_runs`` row of the run's ``matrix_id``, linked to the conversation
of the served call that ran it (History marks that conversation as the case's run); a caller
case's row also holds its step and the caller transcript (``callers.history``), and a caller
case's run that made no served call is linked to a conversation of the caller's turn, so History
lists every caller run. A cell
(tool, case, model) is compared with the same cell in the most recent run of the agent before it
that has it: ``regressed`` (passed then, fails now), ``fixed`` (the reverse), ``new`` (never run
before) or ``same``. A cell passes when every repeat of it passed. Each row also holds what the
run cost (``testing/cost.py``) and the version of the tool it ran (``versions/fingerprint.py``).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Literal

from mcp_export.history.schema import CaseRunRecord, agent_key
from mcp_export.history.store import HistoryStore
from mcp_export.testing.callers.history import caller_record, record_caller_turn
from mcp_export.testing.callers.runner import CallerResult
from mcp_export.testing.cost import run_cost, served_model
from mcp_export.testing.run import CaseResult, MatrixResult

__all__ = ["Cell", "Change", "cell_status", "compare", "record_matrix"]

Cell = tuple[str, str, str]
"""(tool, case, model)."""
Change = Literal["regressed", "fixed", "new", "same"]

_ORDER: dict[Change, int] = {"regressed": 0, "fixed": 1, "new": 2, "same": 3}


def record_matrix(matrix: MatrixResult, history: HistoryStore) -> None:
    """Write every result of ``matrix`` to ``history`` (the callers' offered tool list once, in
    the first caller row)."""
    listed = False
    for result in matrix.results:
        outcome, verdict = result.outcome, result.verdict
        thread_id = outcome.thread_id
        caller: dict[str, object] | None = None
        if isinstance(result, CallerResult):
            caller = caller_record(result, with_tools=not listed)
            listed = listed or result.turn is not None
            if result.pick is None or not result.pick.serve:  # no served call: its turn
                thread_id = record_caller_turn(
                    history, matrix.agent_path, matrix.agent_name, result
                )
        cost = run_cost(matrix.prices, result)
        version = matrix.versions.get((result.tool, served_model(result)))
        history.add_case_run(
            matrix_id=matrix.id,
            agent_path=agent_key(matrix.agent_path),
            agent_name=matrix.agent_name,
            tool_name=result.tool,
            case_name=result.case,
            model=result.model,
            attempt=result.attempt,
            passed=result.passed,
            failures=[str(f) for f in result.failures],
            answer=outcome.text,
            is_error=outcome.is_error,
            duration_ms=round(outcome.duration_ms, 3),
            # A lower bound is not a count: NULL (unknown), never an undercount.
            tokens_in=None if outcome.tokens_partial else outcome.input_tokens,
            tokens_out=None if outcome.tokens_partial else outcome.output_tokens,
            turns=outcome.turns,
            verdict=None if verdict is None else {"pass": verdict.passed, "reason": verdict.reason},
            thread_id=thread_id,
            caller=caller,
            cost_usd=cost.usd,
            cost_at_least=cost.at_least,
            fingerprint=None if version is None else version.fingerprint,
            version=None if version is None else version.decisive,
        )
    history.flush()


def _passes(results: Iterable[CaseResult | CaseRunRecord]) -> dict[Cell, bool]:
    cells: dict[Cell, bool] = {}
    for r in results:
        key = (
            (r.tool, r.case, r.model)
            if isinstance(r, CaseResult)
            else (
                r.tool_name,
                r.case_name,
                r.model,
            )
        )
        cells[key] = cells.get(key, True) and r.passed
    return cells


def cell_status(matrix: MatrixResult) -> dict[Cell, bool]:
    """Whether each cell of ``matrix`` passed (every repeat)."""
    return _passes(matrix.results)


def compare(matrix: MatrixResult, history: HistoryStore) -> dict[Cell, Change]:
    """How each cell of ``matrix`` compares with its last earlier run, regressions first."""
    now = cell_status(matrix)
    earlier: dict[Cell, str] = {}  # cell → the matrix run it was last seen in
    rows: list[CaseRunRecord] = []
    for row in history.case_runs(agent_path=agent_key(matrix.agent_path)):
        if row.matrix_id == matrix.id or row.created_at.timestamp() >= matrix.started_at:
            continue  # this run, or one after it
        key = (row.tool_name, row.case_name, row.model)
        if key in now and earlier.setdefault(key, row.matrix_id) == row.matrix_id:
            rows.append(row)
    before = _passes(rows)
    changes: dict[Cell, Change] = {}
    for key, passed in now.items():
        if key not in before:
            changes[key] = "new"
        elif before[key] and not passed:
            changes[key] = "regressed"
        elif passed and not before[key]:
            changes[key] = "fixed"
        else:
            changes[key] = "same"
    return dict(sorted(changes.items(), key=lambda item: _ORDER[item[1]]))
