"""A caller case's run in History: its step, the caller transcript and the description offered.

:func:`caller_record` is the JSON kept in a ``case_runs`` row's ``caller`` column; the whole
offered tool list (the same for every caller of a run) is kept once, in the run's first caller
row, and :func:`offered_tools` (``history.caller_rows``, light enough for the studio's window
thread) reads it back;
:func:`earlier_caller_runs` reads back, per caller cell of a matrix, the rows of its last
recorded run before it (to compare pick rates across a description edit).
"""

from __future__ import annotations

from typing import Any

from mcp_export.history.caller_rows import offered_tools
from mcp_export.history.schema import agent_key
from mcp_export.history.store import HistoryStore
from mcp_export.server.history import call_title
from mcp_export.testing.callers.rates import PickChange, left_recording, pick_rate_changes
from mcp_export.testing.callers.runner import CallerResult
from mcp_export.testing.run import MatrixResult

__all__ = [
    "caller_record",
    "description_changes",
    "earlier_caller_runs",
    "offered_tools",
    "record_caller_turn",
]


def caller_record(result: CallerResult, *, with_tools: bool = True) -> dict[str, Any]:
    """The ``caller`` JSON of one caller case run (``with_tools``: its transcript holds the
    whole offered tool list, else only the names; see :func:`offered_tools`)."""
    pick = result.pick
    return {
        "step": result.step,
        "servedModel": result.served_model,
        "wanted": pick.wanted if pick is not None else None,
        "picked": list(pick.picked) if pick is not None else [],
        "pickedRight": bool(pick is not None and pick.picked_right),
        "argumentsValid": pick.arguments_valid if pick is not None else None,
        "argumentsExpected": pick.arguments_expected if pick is not None else None,
        "description": result.description,
        "leftRecording": left_recording(result),
        "transcript": (
            result.turn.transcript(with_tools=with_tools) if result.turn is not None else None
        ),
    }


def record_caller_turn(
    history: HistoryStore, agent_path: str, agent_name: str, result: CallerResult
) -> str:
    """Keep the caller model's turn of a run that made no served call (it picked another tool,
    made no call, its arguments were refused, the caller failed or could not be used) as a
    conversation of kind ``caller``, so History lists it like a served one; returns its id.

    The conversation holds the request in words and the caller's reply (its text or error, the
    calls it made, its tokens); its ``case_runs`` row has the whole caller transcript.

    Raises:
        HistoryError: the store cannot be written.
    """
    thread_id = history.create_thread(
        agent_path=agent_path,
        agent_name=agent_name,
        title=call_title(result.tool, result.ask),
        kind="caller",
        tool_name=result.tool,
    )
    history.add_message(thread_id, "user", result.ask)
    turn = result.turn
    if turn is None:  # the caller model could not be used: the result says why
        history.add_message(
            thread_id, "assistant", result.outcome.text, status="error", is_error=True
        )
        return thread_id
    calls = [{"id": c.id, "name": c.name, "arguments": c.arguments} for c in turn.calls]
    history.add_message(
        thread_id,
        "assistant",
        turn.error if turn.error is not None else turn.text,
        status="error" if turn.error is not None else "complete",
        tool_calls=calls or None,
        is_error=turn.error is not None,
        tokens_in=turn.usage.input_tokens,
        tokens_out=turn.usage.output_tokens,
    )
    return thread_id


def earlier_caller_runs(
    matrix: MatrixResult, history: HistoryStore
) -> list[tuple[str, str, str, dict[str, Any]]]:
    """The caller rows of each caller cell's last recorded run before ``matrix``."""
    cells = {
        (tool, case, model) for tool, case in matrix.caller_cases for model in matrix.caller_models
    }
    chosen: dict[tuple[str, str, str], str] = {}
    rows: list[tuple[str, str, str, dict[str, Any]]] = []
    for row in history.case_runs(agent_path=agent_key(matrix.agent_path)):
        if row.matrix_id == matrix.id or row.created_at.timestamp() >= matrix.started_at:
            continue
        key = (row.tool_name, row.case_name, row.model)
        if key not in cells or row.caller is None:
            continue
        if chosen.setdefault(key, row.matrix_id) == row.matrix_id:  # newest first
            rows.append((*key, row.caller))
    return rows


def description_changes(matrix: MatrixResult, history: HistoryStore) -> list[PickChange]:
    """The caller cells of ``matrix`` whose tool description changed since their last recorded
    run, with the pick rate then and now."""
    return pick_rate_changes(matrix.results, earlier_caller_runs(matrix, history))
