"""The stats strip of a chat tab: model, turns, tool calls, tokens in/out, time.

Totals over the whole conversation (every user turn of the tab), updated from the session events;
the clock ticks while a turn runs, so a slow model visibly keeps the tab busy. A token count the
model server never reported shows as "—", never as 0; the totals add up the counts that were
reported, and the tooltip says how many model requests reported none.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtCore import QElapsedTimer, QTimer
from PySide6.QtWidgets import QFrame, QHBoxLayout, QLabel, QWidget

from app.history.model import token_count

if TYPE_CHECKING:
    from mcp_export.session.events import SessionEvent

__all__ = ["StatsStrip"]

_TICK_MS = 200
_TOKENS_TIP = "Tokens sent to the model / tokens it produced"


class StatsStrip(QFrame):
    """One line of figures about the conversation so far."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("chatStats")
        self.setFrameShape(QFrame.Shape.StyledPanel)
        self.model = ""
        self.turns = 0
        self.tool_calls = 0
        self.tokens_in: int | None = None
        self.tokens_out: int | None = None
        self.unreported_turns = 0  # model requests whose server reported no token count
        self._done_ms = 0.0  # time of the finished turns
        self._clock = QElapsedTimer()
        self._ticker = QTimer(self)
        self._ticker.setInterval(_TICK_MS)
        self._ticker.timeout.connect(self._render)

        self._labels: dict[str, QLabel] = {}
        layout = QHBoxLayout(self)
        layout.setContentsMargins(6, 2, 6, 2)
        layout.setSpacing(18)
        for key, tip in (
            ("model", "The model answering in this tab"),
            ("turns", "Model requests so far (one per answer or tool round)"),
            ("calls", "Inner tool calls so far"),
            ("tokens", _TOKENS_TIP),
            ("time", "Time spent running turns"),
        ):
            label = QLabel()
            label.setObjectName(f"stats_{key}")
            label.setToolTip(tip)
            self._labels[key] = label
            layout.addWidget(label)
        layout.addStretch(1)
        self._render()

    @property
    def elapsed_ms(self) -> float:
        """Time spent in turns, including the one running."""
        running = self._clock.elapsed() if self._clock.isValid() else 0
        return self._done_ms + running

    def text(self) -> str:
        """The strip as one line of text (what the person reads)."""
        return "   ".join(label.text() for label in self._labels.values())

    def start_turn(self) -> None:
        """A user turn began: start the clock."""
        self._clock.start()
        self._ticker.start()
        self._render()

    def end_turn(self) -> None:
        """The turn ended (answered, failed or stopped): stop the clock."""
        if self._clock.isValid():
            self._done_ms += self._clock.elapsed()
            self._clock.invalidate()
        self._ticker.stop()
        self._render()

    def on_event(self, event: SessionEvent) -> None:
        """Count what ``event`` adds."""
        from mcp_export.providers.base import Usage
        from mcp_export.session.events import SessionStarted, ToolCallStarted, TurnFinished

        if isinstance(event, SessionStarted):
            self.model = event.model
        elif isinstance(event, TurnFinished):
            self.turns += 1
            total = Usage(self.tokens_in, self.tokens_out).plus(
                Usage(event.input_tokens, event.output_tokens)
            )
            self.tokens_in, self.tokens_out = total.input_tokens, total.output_tokens
            if event.input_tokens is None and event.output_tokens is None:
                self.unreported_turns += 1
        elif isinstance(event, ToolCallStarted):
            self.tool_calls += 1
        else:
            return
        self._render()

    def _render(self) -> None:
        seconds = self.elapsed_ms / 1000
        self._labels["model"].setText(f"Model: {self.model or '–'}")
        self._labels["turns"].setText(f"Turns: {self.turns}")
        self._labels["calls"].setText(f"Tool calls: {self.tool_calls}")
        tokens = self._labels["tokens"]
        shown = f"{token_count(self.tokens_in)} / {token_count(self.tokens_out)}"
        tokens.setText(f"Tokens in/out: {shown}")
        tip = _TOKENS_TIP
        if self.unreported_turns:
            tip += (
                f"\n{self.unreported_turns} of {self.turns} model requests came without token "
                "counts: the model server did not report them"
            )
        tokens.setToolTip(tip)
        self._labels["time"].setText(f"Time: {seconds:.1f} s")
