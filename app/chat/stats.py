"""The stats strip of a chat tab: model, turns, tool calls, and the figures of the conversation.

The figures are those History shows, with the same labels (``mcp_export.history.figures``):
*Tokens in the conversation* adds up every model request of the tab, *Time in the conversation*
its answers' times (the idle time between them is not in it); :meth:`StatsStrip.answer_text`
gives *Tokens this answer* and *Time this answer* of the last answer, for the tab's status line.
An answer's time is the session's own (``FinalAnswer.duration_ms``: from the question to the
answer, what History records); a failed or stopped answer is timed from its question to the
failure. While an answer runs, the clock ticks, so a slow model visibly keeps the tab busy. A
token count the model server never reported shows as "—", never as 0; a total some requests
reported and others did not is a lower bound and says so (``≥ 12 in / 9 out``), and the tooltip
says how many model requests reported none.

*Cost* is the conversation's model requests at the agent's model's price (``costs.prices``:
Preferences' price table and the agent file's ``settings.prices``), and what 100 answers like
these would cost; ``unknown`` (the tooltip says why) when the model has no price or no request
reported its tokens, ``≥`` when some did not.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtCore import QElapsedTimer, QTimer
from PySide6.QtWidgets import QFrame, QHBoxLayout, QLabel, QVBoxLayout, QWidget

from mcp_export.costs.cost import Cost
from mcp_export.costs.prices import PriceTable
from mcp_export.history.figures import (
    ANSWER_TIME,
    ANSWER_TOKENS,
    CONVERSATION_TIME,
    CONVERSATION_TOKENS,
    Figures,
)

if TYPE_CHECKING:
    from mcp_export.session.events import SessionEvent

__all__ = ["StatsStrip"]

_TICK_MS = 200
_TOKENS_TIP = (
    "Tokens sent to the model / tokens it produced, over every model request of this conversation"
)


class StatsStrip(QFrame):
    """One line of figures about the conversation so far.

    Attributes:
        conversation: the figures of the conversation's ended answers.
        answer: the figures of the last answer (of the one running: its tokens so far), or None
            before the first.
    """

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("chatStats")
        self.setFrameShape(QFrame.Shape.StyledPanel)
        self.model = ""
        self.turns = 0
        self.tool_calls = 0
        self.conversation = Figures()
        self.answer: Figures | None = None
        self.unreported_turns = 0  # model requests whose server reported no token count
        self._answer_turns = (0, 0)  # the last answer's model requests, and those unreported
        self.prices = PriceTable()
        self.priced_model: str | None = None  # provider:model, as the price table names it
        self.answers = 0
        self._costs: list[Cost] = []
        self._clock = QElapsedTimer()  # the answer running, from its question
        self._ticker = QTimer(self)
        self._ticker.setInterval(_TICK_MS)
        self._ticker.timeout.connect(self._render)

        self._labels: dict[str, QLabel] = {}
        # Two lines: the figures' labels say what they count, and on one line with the rest they
        # would make the tab wider than a window beside the outline.
        layout = QVBoxLayout(self)
        layout.setContentsMargins(6, 2, 6, 2)
        layout.setSpacing(0)
        lines = [QHBoxLayout(), QHBoxLayout()]
        for line in lines:
            line.setSpacing(18)
            layout.addLayout(line)
        for key, tip in (
            ("model", "The model answering in this tab"),
            ("turns", "Model requests so far (one per answer or tool round)"),
            ("calls", "Inner tool calls so far"),
            ("tokens", _TOKENS_TIP),
            ("time", "The time of this conversation's answers, each from its question to the "
             "answer (not the time between them)"),
            ("cost", ""),
        ):  # fmt: skip
            label = QLabel()
            label.setObjectName(f"stats_{key}")
            label.setToolTip(tip)
            self._labels[key] = label
            lines[1 if key in ("tokens", "time", "cost") else 0].addWidget(label)
        for line in lines:
            line.addStretch(1)
        self._render()

    @property
    def tokens_in(self) -> int | None:
        """Prompt tokens of the conversation (None: no model request reported any)."""
        return self.conversation.tokens_in

    @property
    def tokens_out(self) -> int | None:
        """Completion tokens of the conversation (None: no model request reported any)."""
        return self.conversation.tokens_out

    @property
    def elapsed_ms(self) -> float:
        """Time in the conversation, the answer running included."""
        running = self._clock.elapsed() if self._clock.isValid() else 0
        return (self.conversation.duration_ms or 0.0) + running

    def text(self) -> str:
        """The strip as one line of text (what the person reads)."""
        return "   ".join(label.text() for label in self._labels.values())

    def answer_text(self) -> str:
        """``Time this answer: … · Tokens this answer: …`` of the last answer ("" before one)."""
        if self.answer is None:
            return ""
        tokens = _at_least(self.answer.tokens(), *self._answer_turns)
        return f"{ANSWER_TIME}: {self.answer.time()} · {ANSWER_TOKENS}: {tokens}"

    def set_pricing(self, prices: PriceTable, model: str | None) -> None:
        """Reckon the cost of the model requests to come with ``prices`` for ``model``
        (``provider:model``)."""
        self.prices, self.priced_model = prices, model
        self._render()

    @property
    def cost(self) -> Cost:
        """What the conversation's model requests cost so far."""
        return Cost.total(self._costs)

    def start_turn(self) -> None:
        """A user turn was sent: the strip ticks until it ends."""
        self._ticker.start()
        self._render()

    def end_turn(self) -> None:
        """The turn ended (answered, failed or stopped)."""
        self._ticker.stop()
        self._render()

    def on_event(self, event: SessionEvent) -> None:
        """Count what ``event`` adds."""
        from mcp_export.session.events import (
            FinalAnswer,
            SessionFailed,
            SessionStarted,
            ToolCallStarted,
            TurnFinished,
        )

        if isinstance(event, SessionStarted):
            self.model = event.model
            self.answer = Figures()
            self._answer_turns = (0, 0)
            self._clock.start()
        elif isinstance(event, TurnFinished):
            self.turns += 1
            used = Figures(event.input_tokens, event.output_tokens)
            self.conversation = self.conversation.plus(used)
            self.answer = (self.answer or Figures()).plus(used)
            unreported = event.input_tokens is None and event.output_tokens is None
            self.unreported_turns += unreported
            asked, unsaid = self._answer_turns
            self._answer_turns = (asked + 1, unsaid + unreported)
            model = self.priced_model or self.model
            self._costs.append(self.prices.cost(model, event.input_tokens, event.output_tokens))
        elif isinstance(event, ToolCallStarted):
            self.tool_calls += 1
        elif isinstance(event, FinalAnswer):
            self.answers += 1
            self._answer_ended(event.duration_ms)
        elif isinstance(event, SessionFailed):
            # Timed only when it had begun: a failure before the question was asked (no model
            # configured) is no answer, and History has no row of it either.
            self._answer_ended(self._clock.elapsed() if self._clock.isValid() else None)
        else:
            return
        self._render()

    def _answer_ended(self, duration_ms: float | None) -> None:
        self._clock.invalidate()
        if self.answer is not None and duration_ms is not None:
            self.answer = Figures(self.answer.tokens_in, self.answer.tokens_out, duration_ms)
            self.conversation = self.conversation.plus(Figures(duration_ms=duration_ms))

    def _render(self) -> None:
        self._labels["model"].setText(f"Model: {self.model or '–'}")
        self._labels["turns"].setText(f"Turns: {self.turns}")
        self._labels["calls"].setText(f"Tool calls: {self.tool_calls}")
        tokens = self._labels["tokens"]
        counted = _at_least(self.conversation.tokens(), self.turns, self.unreported_turns)
        tokens.setText(f"{CONVERSATION_TOKENS}: {counted}")
        tip = _TOKENS_TIP
        if self.unreported_turns:
            tip += (
                f"\n{self.unreported_turns} of {self.turns} model requests came without token "
                "counts: the model server did not report them"
            )
        tokens.setToolTip(tip)
        running = self._clock.isValid() or self.conversation.duration_ms is not None
        shown = Figures(duration_ms=self.elapsed_ms if running else None).time()
        self._labels["time"].setText(f"{CONVERSATION_TIME}: {shown}")
        self._render_cost()

    def _render_cost(self) -> None:
        label = self._labels["cost"]
        if not self._costs:
            label.setText("Cost: –")
            label.setToolTip("What this conversation's model requests cost, at the model's price")
            return
        total = self.cost
        text = f"Cost: {total.text()}"
        if self.answers and total.known:
            per_100 = total.per_call(self.answers).scaled(100)
            text += f" · {per_100.text()} per 100 answers"
        label.setText(text)
        tip = "What this conversation's model requests cost, at the model's price"
        label.setToolTip(f"{tip}\n{total.why}" if total.why else tip)


def _at_least(tokens: str, requests: int, unreported: int) -> str:
    """``tokens`` as a lower bound (``≥ …``) when some of ``requests`` reported no count and
    others did; as it is when all or none did."""
    return f"≥ {tokens}" if 0 < unreported < requests else tokens
