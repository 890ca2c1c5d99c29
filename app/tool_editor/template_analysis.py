"""The template pane's diagnostics and preview segments, computed off the GUI thread when long.

Filling and diagnosing a prompt is linear in its length, but a prompt of hundreds of kilobytes
still takes the engine a good part of a second, and on the GUI thread the window would freeze for
it. :class:`TemplateAnalysis` runs a prompt past :data:`INLINE_CHARS` in a worker thread and
hands the result back on the GUI thread (:attr:`TemplateAnalysis.ready`); a shorter one, the
usual case, is analysed at once, so typing in a normal prompt updates diagnostics and preview in
the same keystroke. A request supersedes the ones before it: a late result of an older request is
dropped, and one that was to bring diagnostics passes that on to the request replacing it.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, replace
from typing import Any

from PySide6.QtCore import QObject, Signal

from schema_types.template.engine import Diagnostic, Segment, diagnose, render_segments

__all__ = ["INLINE_CHARS", "Analysis", "AnalysisRequest", "TemplateAnalysis"]

#: The longest prompt analysed on the GUI thread. A prompt a person writes (the 20 KB one of
#: bench/template_keystroke.py) stays under it and gets diagnostics and preview in the keystroke;
#: 32 KB of nothing but section tags is ~30 ms of engine work on a quiet machine.
INLINE_CHARS = 32 * 1024


@dataclass(frozen=True, slots=True)
class AnalysisRequest:
    """What to analyse: the prompt, what it is filled with, and whether to diagnose it."""

    prompt: str
    parameters: Mapping[str, Any]
    arguments: Mapping[str, Any]
    tool_name: str
    tool_description: str
    keep_missing: bool
    diagnose: bool


@dataclass(frozen=True, slots=True)
class Analysis:
    """The result: the preview's segments, and the diagnostics when they were asked for."""

    request: AnalysisRequest
    segments: list[Segment]
    diagnostics: list[Diagnostic] | None


_WORKER: list[ThreadPoolExecutor] = []


def _worker() -> ThreadPoolExecutor:
    # One thread for every pane: analyses are short and the latest is the one that counts.
    if not _WORKER:
        _WORKER.append(ThreadPoolExecutor(max_workers=1, thread_name_prefix="template-analysis"))
    return _WORKER[0]


def _analyse(request: AnalysisRequest) -> Analysis:
    segments = render_segments(
        request.prompt,
        request.arguments,
        request.parameters,
        tool_name=request.tool_name,
        tool_description=request.tool_description,
        keep_missing=request.keep_missing,
    )
    found = diagnose(request.prompt, request.parameters) if request.diagnose else None
    return Analysis(request, segments, found)


class TemplateAnalysis(QObject):
    """Runs analysis requests, in a worker thread for long prompts (see the module docstring)."""

    ready = Signal(object)
    """An :class:`Analysis` of the latest request (on the GUI thread)."""
    _finished = Signal(int, object)  # emitted in the worker thread, delivered on the GUI thread

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._latest = 0
        self._owed_diagnostics = False
        self._finished.connect(self._on_finished)

    def pending(self) -> bool:
        """Whether a result is still to come."""
        return self._latest != 0

    def request(self, request: AnalysisRequest) -> None:
        """Analyse ``request``; :attr:`ready` brings the result (at once for a short prompt)."""
        if self._owed_diagnostics and not request.diagnose:
            request = replace(request, diagnose=True)
        if len(request.prompt) <= INLINE_CHARS:
            self._latest = 0
            self._owed_diagnostics = False
            self.ready.emit(_analyse(request))
            return
        # The schema may be edited on the GUI thread while the worker reads it.
        request = replace(request, parameters=copy.deepcopy(dict(request.parameters)))
        self._latest += 1
        self._owed_diagnostics = request.diagnose
        number = self._latest
        future = _worker().submit(_analyse, request)
        future.add_done_callback(lambda done: self._deliver(number, done))

    def _deliver(self, number: int, done: Future[Analysis]) -> None:
        try:
            self._finished.emit(number, done)
        except RuntimeError:  # the pane was closed while the worker ran: nobody to tell
            pass

    def _on_finished(self, number: int, done: Future[Analysis]) -> None:
        if number != self._latest or done.cancelled():
            return  # a newer request is on its way
        self._latest = 0
        self._owed_diagnostics = False
        self.ready.emit(done.result())
