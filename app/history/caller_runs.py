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

from typing import TYPE_CHECKING

from app.test_cases.caller_cells import STEP_WORDS
from app.test_cases.caller_details import caller_transcript_html
from mcp_export.history.caller_rows import caller_transcript

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


def caller_part(store: HistoryStore, thread_id: str) -> str:
    """The caller's side of the run whose served call is ``thread_id``, with the tool list its
    matrix run offered ("" when the history has none).

    Raises:
        HistoryError: the store cannot be read.
    """
    rows = store.case_runs(thread_id=thread_id, limit=1)
    transcript = caller_transcript(store, rows[0]) if rows else None
    if transcript is None:
        return ""
    return caller_transcript_html(transcript) + "<h3>2 · Our served call</h3>"
