"""A caller case's run in History: its step and caller model in the row, both transcripts open.

A caller case's run that got as far as our tool is a served call like any case's, so it is a
conversation in History (``case run``); its :class:`~mcp_export.history.schema.CaseMark` says it
is a caller case's, with the caller model, the model that served the call and the step the run
failed at. :func:`caller_label` is its Case · model cell (``family trip · caller
openai:gpt-4.1 · answer``), :func:`caller_facts` its line in the transcript's header, and
:func:`caller_part` the caller's side of its transcript (read from the run's ``caller`` record):
the request with the whole tool list and the caller's reply, before our served call. A run that
made no served call (it picked another tool, made no call, its arguments were refused, the caller
failed) is a conversation of the caller's turn, marked not served: it is listed the same way, and
its transcript is the caller's side and why nothing was served.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from app.test_cases.caller_cells import STEP_WORDS
from app.test_cases.caller_details import caller_transcript_html, not_served_html
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
    served = " · not served" if not mark.served else ""
    if mark.served and mark.served_model:
        served = f" · served by {mark.served_model}"
    step = "every step passed" if mark.step is None else f"failed at {_step(mark)}"
    return f"caller case {mark.case_name} · caller model {mark.model}{served} · {step}"


def caller_part(store: HistoryStore, thread_id: str, mark: CaseMark) -> str:
    """The caller's side of the run whose conversation is ``thread_id`` (its served call, or the
    caller's turn when ``mark`` says it was not served, then why not), with the tool list its
    matrix run offered ("" when the history has none).

    Raises:
        HistoryError: the store cannot be read.
    """
    rows = store.case_runs(thread_id=thread_id, limit=1)
    transcript = caller_transcript(store, rows[0]) if rows else None
    if transcript is None:
        return ""
    served = "<h3>2 · Our served call</h3>"
    if not mark.served:
        served += not_served_html(mark.step)
    return caller_transcript_html(transcript) + served
