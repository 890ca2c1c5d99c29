"""The full transcript of one test-case call, read from the history store.

Every call of a run is a served call recorded in its own history thread (its result names the
thread); :class:`TranscriptDialog` shows that thread's messages (system prompt, filled prompt,
model turns, inner tool calls and results) with the history view's own rendering
(:func:`app.history.view.transcript_html`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtWidgets import QDialog, QTextBrowser, QWidget

from app.history.model import HistoryEntry
from app.history.view import transcript_html
from app.layouts import closable_column
from app.test_cases.caller_details import caller_transcript_html, not_served_html
from app.test_cases.matrix_model import Cell
from app.window.screen_fit import fit_to_screen

if TYPE_CHECKING:
    from mcp_export.history.store import HistoryStore
    from mcp_export.testing.callers.runner import CallerResult
    from mcp_export.testing.run import CaseResult

__all__ = ["TranscriptDialog", "caller_transcript_for", "transcript_for"]


def transcript_for(store: HistoryStore, cell: Cell, result: CaseResult) -> str:
    """The rich text of ``result``'s thread (a line saying why when it has none).

    Raises:
        HistoryError: the store cannot be read.
    """
    tool, case, model = cell
    thread_id = result.outcome.thread_id
    thread = store.thread(thread_id) if thread_id is not None else None
    if thread_id is None or thread is None:
        return "<p><i>The history has no conversation for this call.</i></p>"
    outcome = result.outcome
    entry = HistoryEntry(
        kind=f"test case on {model}",
        tool=tool,
        status="error" if outcome.is_error else "complete",
        started=thread.created_at,
        duration_ms=outcome.duration_ms,
        tokens_in=outcome.input_tokens,
        tokens_out=outcome.output_tokens,
        title=f"{tool} / {case} · attempt {result.attempt}",
        thread_id=thread_id,
    )
    return transcript_html(entry, store.messages(thread_id))


class TranscriptDialog(QDialog):
    """One call's conversation, read only; closing it deletes it."""

    def __init__(self, title: str, rich_text: str, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle(title)
        self.setObjectName("caseTranscript")
        self.browser = QTextBrowser()
        self.browser.setAccessibleName("Transcript")
        self.browser.setOpenLinks(False)
        self.browser.setHtml(rich_text)
        closable_column(self, self.browser, stretch=self.browser)
        fit_to_screen(self, 720, 560)
        self.finished.connect(lambda _result: self.deleteLater())


def caller_transcript_for(store: HistoryStore | None, cell: Cell, result: CallerResult) -> str:
    """Both transcripts of a caller run: the caller's, then our served call's (from ``store``;
    a line saying why when there is none).

    Raises:
        HistoryError: the store cannot be read.
    """
    first = (
        caller_transcript_html(result.turn.transcript())
        if result.turn is not None
        else "<p><i>The caller model was not asked.</i></p>"
    )
    second = "<h3>2 · Our served call</h3>"
    served = result.pick is not None and result.pick.serve
    if served and result.outcome.thread_id is not None and store is not None:
        second += transcript_for(store, cell, result)
    elif not served:
        second += not_served_html(result.step)
    else:
        second += "<p><i>History is off, so the served call has no transcript.</i></p>"
    return first + second
