"""The steps of a run that a person waits through, said as ``Step`` events.

A run spends most of its time waiting: for a tool server to start and list its tools, for the
model, for a retry after a failed request. The session says each wait as it begins (``Starting
time…``, ``Asking the model (openai:gpt-4o)…``, ``Model request failed (connection refused),
retry 1 of 2 in 0.5 s…``) so a status line can show it.

The toolbox and the providers sit below the session and know nothing of it: while a
``StepReporter`` is entered, their waits are told to it through their own context-variable hooks
(``toolbox.steps.report_server_steps``, the providers' ``report_retries``), which hold for the
run's task and the tasks it starts. Once it is left it emits nothing more, so a hook a
long-lived task kept (a server started in the run) cannot reach a run that has ended.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from contextlib import ExitStack
from types import TracebackType

from mcp_export.providers.steps import RetryWait, report_retries
from mcp_export.redact import redact
from mcp_export.session.events import Step
from mcp_export.toolbox.steps import ServerStep, report_server_steps

__all__ = ["StepReporter"]


class StepReporter:
    """Emits the ``Step`` events of one run (a context manager around the run).

    Args:
        emit: takes each step, on the event loop's thread; None: the steps are not wanted (then
            no hook is installed either).
    """

    def __init__(self, emit: Callable[[Step], None] | None) -> None:
        self._emit = emit
        self._hooks = ExitStack()
        self.waiting_for = ""
        """What the run waits for now, as a message names it (``the model openai:gpt-4o at
        OpenAI``, ``the tool time__now``); "" before its first model request. Kept whether or
        not steps are wanted: a timeout says it."""

    def __enter__(self) -> StepReporter:
        if self._emit is not None:
            self._hooks.enter_context(report_server_steps(self._on_server_step))
            self._hooks.enter_context(report_retries(self._on_retry))
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self._emit = None
        self._hooks.close()

    def step(self, text: str) -> None:
        """Say that the run waits for ``text`` now."""
        if self._emit is not None:
            self._emit(Step(redact(text)))

    def asking(self, model: str, turn: int, *, endpoint: str | None = None) -> None:
        """The run waits for model request number ``turn`` (from 1) to ``model``, served at
        ``endpoint`` (as messages name it; None when no server is known)."""
        again = f", request {turn}" if turn > 1 else ""
        at = f" at {endpoint}" if endpoint else ""
        self.waiting_for = f"the model {model}{at}"
        self.step(f"Asking the model ({model}){again}…")

    def calling(self, names: Sequence[str]) -> None:
        """The run waits for the tool calls of one model turn."""
        if len(names) == 1:
            self.waiting_for = f"the tool {names[0]}"
            self.step(f"Calling {names[0]}…")
        else:
            self.waiting_for = f"the tools {', '.join(names)}"
            self.step(f"Calling {len(names)} tools ({', '.join(names)})…")

    def _on_server_step(self, step: ServerStep) -> None:
        if step.phase == "tools/list":
            self.step(f"Listing tools of {step.server}…")
        elif step.remote:
            self.step(f"Connecting to {step.server}…")
        else:
            self.step(f"Starting {step.server}…")

    def _on_retry(self, wait: RetryWait) -> None:
        self.step(
            f"Model request failed ({wait.reason}), retry {wait.retry} of {wait.retries} "
            f"in {_seconds(wait.delay)} s…"
        )


def _seconds(delay: float) -> str:
    """``0.5``, ``2``, ``1.8``, ``30``: a wait as a status line says it (never ``0``)."""
    if delay >= 10:
        return f"{delay:.0f}"
    return f"{max(delay, 0.1):.1f}".removesuffix(".0")
