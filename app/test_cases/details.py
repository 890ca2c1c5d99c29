"""Beside the matrix: one cell's details, or two cells' answers side by side.

:class:`CellDetails` shows one cell's run (a cell with repeats has an attempt picker, starting at
its first failed run): the answer or error, every failed expectation, the judge's verdict and
reason, the inner tool calls with their arguments, time, turns and tokens, and the case's
arguments; "Open transcript" asks for the call's history thread (:attr:`CellDetails.
transcript_requested`). :class:`AnswerDiff` shows the answers of two cells next to each other,
word by word (:mod:`app.test_cases.diff`), the parts that differ highlighted, scrolled together.
Everything shown passes the runtime's one ``redact``.
"""

from __future__ import annotations

import html
import json
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import Signal
from PySide6.QtWidgets import (
    QComboBox,
    QHBoxLayout,
    QLabel,
    QPushButton,
    QSplitter,
    QTextBrowser,
    QVBoxLayout,
    QWidget,
)

from app.test_cases.caller_cells import caller_result
from app.test_cases.caller_details import caller_html
from app.test_cases.diff import Piece, changed_words, diff_answers, diff_html
from app.test_cases.matrix_model import Cell, CellSummary, format_ms, shown_result
from app.tool_editor.highlighter import is_dark
from mcp_export.redact import redact

if TYPE_CHECKING:
    from mcp_export.testing.run import CaseResult

__all__ = ["AnswerDiff", "CellDetails", "details_html", "details_title"]

_COLOURS = {False: ("#2e7d32", "#c62828"), True: ("#8fd694", "#ff9c94")}
"""(pass, fail) text colours for a light (False) and a dark (True) palette."""


def _pre(text: str) -> str:
    return f'<pre style="white-space: pre-wrap">{html.escape(text, quote=False)}</pre>'


def _json(value: Any) -> str:
    return redact(json.dumps(value, indent=2, ensure_ascii=False, default=str))


def _tokens(result: CaseResult) -> str:
    given, got = result.outcome.input_tokens, result.outcome.output_tokens
    if given is None or got is None:
        return "tokens — (the model server did not report them)"
    return f"tokens {given} in / {got} out"


def details_title(
    cell: Cell, result: CaseResult, summary: CellSummary, *, dark: bool = False
) -> str:
    """The heading of one run of a cell: case, verdict, model, and the pass rate with repeats."""
    tool, case, model = cell
    verdict = "PASS" if result.passed else "FAIL"
    colour = _COLOURS[dark][0 if result.passed else 1]
    mark = {"regressed": " · regressed", "fixed": " · fixed"}.get(summary.change or "", "")
    title = (
        f"<b>{html.escape(tool)} / {html.escape(case)}</b> · "
        f'<b style="color:{colour}">{verdict}{mark}</b> on <b>{html.escape(model)}</b>'
    )
    if summary.expected > 1:
        title += f" · {summary.passed}/{summary.runs} runs passed"
    return title


def details_html(
    result: CaseResult, arguments: Mapping[str, Any] | None, *, dark: bool = False
) -> str:
    """One run of a cell as rich text (pure: tested without widgets); a caller case's run
    starts with what the caller did (:func:`~app.test_cases.caller_details.caller_html`)."""
    passing, failing = _COLOURS[dark]
    outcome = result.outcome
    parts: list[str] = []
    caller = caller_result(result)
    if caller is not None:
        parts.append(caller_html(caller, dark=dark))
        if caller.pick is None or not caller.pick.serve:
            return "".join([*parts, _failures_html(result)])  # not served: no answer of ours
        parts.append("<p><b>Our served call</b></p>")
    facts = [format_ms(outcome.duration_ms)]
    if outcome.turns is not None:
        facts.append(f"{outcome.turns} model request{'s' * (outcome.turns != 1)}")
    facts.append(f"{len(outcome.tool_calls)} inner tool call{'s' * (len(outcome.tool_calls) != 1)}")
    facts.append(_tokens(result))
    parts.append(f"<p><i>{html.escape(' · '.join(facts))}</i></p>")
    parts.append(_failures_html(result))
    if result.verdict is not None:
        judged = "pass" if result.verdict.passed else "fail"
        judged_colour = passing if result.verdict.passed else failing
        parts.append(
            f'<p><b>Judge</b>: <b style="color:{judged_colour}">{judged}</b> — '
            f"{html.escape(redact(result.verdict.reason or '(no reason given)'))}</p>"
        )
    heading = "Error result" if outcome.is_error else "Answer"
    parts.append(f"<p><b>{heading}</b></p>" + _pre(redact(outcome.text) or "(empty)"))
    if outcome.tool_calls:
        parts.append("<p><b>Inner tool calls</b></p>")
        for call in outcome.tool_calls:
            parts.append(_call_html(call, failing))
    if arguments is not None:
        parts.append("<p><b>Arguments of the case</b></p>" + _pre(_json(dict(arguments))))
    return "".join(parts)


def _failures_html(result: CaseResult) -> str:
    if not result.failures:
        return ""
    items = "".join(
        f"<li><b>{html.escape(failure.expectation)}</b>: "
        f"{html.escape(redact(failure.message))}</li>"
        for failure in result.failures
    )
    return f"<p><b>Failed expectations</b></p><ul>{items}</ul>"


def _call_html(call: Mapping[str, Any], failing: str) -> str:
    name = html.escape(str(call.get("name", "?")))
    took = call.get("durationMs")
    took_text = f" · {format_ms(float(took))}" if isinstance(took, int | float) else ""
    failed = f' · <b style="color:{failing}">error</b>' if call.get("isError") else ""
    return f"<p>→ <b>{name}</b>{took_text}{failed}</p>" + _pre(_json(call.get("arguments", {})))


class CellDetails(QWidget):
    """The details of one cell's run.

    Signals:
        transcript_requested(str): the person asked for the transcript of this history thread
        ("" for a caller run that was not served: its caller transcript only).
    """

    transcript_requested = Signal(str)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._cell: Cell | None = None
        self._results: list[CaseResult] = []
        self._summary: CellSummary | None = None
        self._arguments: Mapping[str, Any] | None = None
        self._history_on = False
        self.attempt = QComboBox()
        self.attempt.setAccessibleName("Attempt")
        self.attempt.currentIndexChanged.connect(self._render)
        self.transcript_button = QPushButton("Open transcript")
        self.transcript_button.setToolTip("The whole conversation of this call, from the history")
        self.transcript_button.clicked.connect(self._on_transcript_clicked)
        self.title = QLabel()
        self.title.setWordWrap(True)
        top = QHBoxLayout()
        top.addWidget(self.title, 1)
        top.addWidget(self.attempt)
        top.addWidget(self.transcript_button)
        self.browser = QTextBrowser()
        self.browser.setAccessibleName("Cell details")
        self.browser.setOpenLinks(False)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addLayout(top)
        layout.addWidget(self.browser, 1)

    def show_cell(
        self,
        cell: Cell,
        results: Sequence[CaseResult],
        summary: CellSummary,
        arguments: Mapping[str, Any] | None,
        *,
        history_on: bool,
    ) -> None:
        """Show ``cell``'s runs, starting at the one it stands for (its first failure)."""
        self._cell, self._summary, self._arguments = cell, summary, arguments
        self._results = sorted(results, key=lambda r: r.attempt)
        self._history_on = history_on
        first = shown_result(self._results)
        self.attempt.blockSignals(True)
        self.attempt.clear()
        for result in self._results:
            mark = "✔" if result.passed else "✘"
            self.attempt.addItem(f"Attempt {result.attempt} {mark}")
        self.attempt.setCurrentIndex(self._results.index(first) if first is not None else -1)
        self.attempt.blockSignals(False)
        self.attempt.setVisible(len(self._results) > 1)
        self._render()

    def shown(self) -> CaseResult | None:
        """The run shown."""
        index = self.attempt.currentIndex()
        return self._results[index] if 0 <= index < len(self._results) else None

    def _render(self, *_: Any) -> None:
        result = self.shown()
        if self._cell is None or self._summary is None or result is None:
            self.title.setText("")
            self.browser.setHtml("<p><i>No run of this cell has finished yet.</i></p>")
            self.transcript_button.setEnabled(False)
            return
        dark = is_dark(self.palette())
        self.title.setText(details_title(self._cell, result, self._summary, dark=dark))
        self.browser.setHtml(details_html(result, self._arguments, dark=dark))
        has_thread = result.outcome.thread_id is not None
        if caller_result(result) is not None:  # the caller's transcript is in the result
            self.transcript_button.setEnabled(True)
            self.transcript_button.setToolTip(
                "The caller's request with the whole tool list and its reply, then our served call"
            )
            return
        self.transcript_button.setEnabled(has_thread and self._history_on)
        if not self._history_on:
            tip = "History is off, so the call has no transcript"
        elif not has_thread:
            tip = "This call was not recorded (it failed before it reached the model)"
        else:
            tip = "The whole conversation of this call, from the history"
        self.transcript_button.setToolTip(tip)

    def _on_transcript_clicked(self) -> None:
        result = self.shown()
        if result is not None and (
            result.outcome.thread_id is not None or caller_result(result) is not None
        ):
            self.transcript_requested.emit(result.outcome.thread_id or "")


class AnswerDiff(QWidget):
    """The answers of two cells side by side, what differs highlighted."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.left_pieces: list[Piece] = []
        self.right_pieces: list[Piece] = []
        self.summary = QLabel()
        self.summary.setWordWrap(True)
        self.left_title, self.right_title = QLabel(), QLabel()
        self.left_view, self.right_view = QTextBrowser(), QTextBrowser()
        self.left_view.setAccessibleName("First answer")
        self.right_view.setAccessibleName("Second answer")
        splitter = QSplitter()
        for title, view in ((self.left_title, self.left_view), (self.right_title, self.right_view)):
            title.setWordWrap(True)
            side = QWidget()
            side_layout = QVBoxLayout(side)
            side_layout.setContentsMargins(0, 0, 0, 0)
            side_layout.addWidget(title)
            side_layout.addWidget(view, 1)
            splitter.addWidget(side)
        splitter.setChildrenCollapsible(False)
        left_bar = self.left_view.verticalScrollBar()
        right_bar = self.right_view.verticalScrollBar()
        left_bar.valueChanged.connect(right_bar.setValue)
        right_bar.valueChanged.connect(left_bar.setValue)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.summary)
        layout.addWidget(splitter, 1)

    def show_pair(
        self, left: tuple[Cell, CaseResult | None], right: tuple[Cell, CaseResult | None]
    ) -> None:
        """Compare the answers of two cells (each its run that stands for it)."""
        texts = [
            redact(result.outcome.text) if result is not None else "" for _, result in (left, right)
        ]
        self.left_pieces, self.right_pieces = diff_answers(texts[0], texts[1])
        dark = is_dark(self.palette())
        self.left_view.setHtml(diff_html(self.left_pieces, dark=dark))
        self.right_view.setHtml(diff_html(self.right_pieces, dark=dark))
        self.left_title.setText(_side_title(*left, dark=dark))
        self.right_title.setText(_side_title(*right, dark=dark))
        differ = changed_words(self.left_pieces) + changed_words(self.right_pieces)
        if texts[0] == texts[1]:
            self.summary.setText("The two answers are the same.")
        else:
            self.summary.setText(
                f"{differ} word{'s' * (differ != 1)} differ: highlighted on the left where only "
                "the first answer has them, on the right where only the second does."
            )


def _side_title(cell: Cell, result: CaseResult | None, *, dark: bool) -> str:
    tool, case, model = cell
    name = f"<b>{html.escape(model)}</b> · {html.escape(tool)} / {html.escape(case)}"
    if result is None:
        return f"{name} — no answer yet"
    colour = _COLOURS[dark][0 if result.passed else 1]
    verdict = "PASS" if result.passed else "FAIL"
    kind = " (error result)" if result.outcome.is_error else ""
    return f'{name} · <b style="color:{colour}">{verdict}</b>{kind}'
