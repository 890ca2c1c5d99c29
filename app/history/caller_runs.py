"""A caller case's run in History: its step and caller model in the row, both transcripts open.

A caller case's run that got as far as our tool is a served call like any case's, so it is a
conversation in History (``case run``); its :class:`~mcp_export.history.schema.CaseMark` says it
is a caller case's, with the caller model, the model that served the call and the step the run
failed at. :func:`caller_label` is its Case · model cell (``family trip · caller
openai:gpt-4.1 · answer``), :func:`caller_facts` its line in the transcript's header, and
:func:`caller_part` the caller's side of its transcript (read from the run's ``caller`` record):
the request with the whole tool list and the caller's reply, before our served call.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from app.test_cases.caller_cells import STEP_WORDS
from app.test_cases.caller_details import caller_transcript_html

if TYPE_CHECKING:
    from mcp_export.history.schema import CaseMark
    from mcp_export.history.store import HistoryStore

__all__ = ["caller_facts", "caller_label", "caller_part"]


def _step(mark: CaseMark) -> str:
    if mark.step is None:
        return "passed"
    return STEP_WORDS.get(mark.step, mark.step)


def caller_label(mark: CaseMark) -> str:
    """The Case · model cell of a caller case's run: case, caller model and step."""
    return f"{mark.case_name} · caller {mark.model} · {_step(mark)}"


def caller_facts(mark: CaseMark) -> str:
    """The transcript header's line for a caller case's run."""
    served = f" · served by {mark.served_model}" if mark.served_model else ""
    step = "every step passed" if mark.step is None else f"failed at {_step(mark)}"
    return f"caller case {mark.case_name} · caller model {mark.model}{served} · {step}"


def _offered(store: HistoryStore, matrix_id: str) -> list[Any] | None:
    """The tool list the callers of a matrix run were offered: ``record_matrix`` keeps it once,
    in the run's first caller row (``testing.callers.history.offered_tools`` reads it the same
    way; importing that module takes seconds, too long for the window's thread)."""
    for row in reversed(store.case_runs(matrix_id=matrix_id)):  # oldest first
        transcript = (row.caller or {}).get("transcript")
        request = transcript.get("request") if isinstance(transcript, dict) else None
        tools = request.get("tools") if isinstance(request, dict) else None
        if isinstance(tools, list):
            return tools
    return None


def caller_part(store: HistoryStore, thread_id: str) -> str:
    """The caller's side of the run whose served call is ``thread_id``, with the tool list its
    matrix run offered ("" when the history has none).

    Raises:
        HistoryError: the store cannot be read.
    """
    rows = store.case_runs(thread_id=thread_id, limit=1)
    caller = rows[0].caller if rows else None
    transcript = caller.get("transcript") if caller else None
    if not isinstance(transcript, dict):
        return ""
    request = transcript.get("request")
    if isinstance(request, dict) and not isinstance(request.get("tools"), list):
        tools = _offered(store, rows[0].matrix_id)
        if tools is not None:
            transcript = {**transcript, "request": {**request, "tools": tools}}
    return caller_transcript_html(transcript) + "<h3>2 · Our served call</h3>"
