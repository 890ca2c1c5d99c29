"""The event a typed run emits each time it checks an answer against the tool's output schema.

Apart from ``session.events`` (which lists it among the session's events) so the typed-result
code and its consumers (the served result, the studio's test run) share one small shape.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from schema_types.errors import Problem

__all__ = ["OutputChecked", "OutputStage"]

OutputStage = Literal["answer", "format", "repair"]
"""Which request gave the answer checked: the run's own answer, the format turn (an endpoint
that cannot combine its schema with tool calls is asked again under it), or the repair turn."""


@dataclass(frozen=True)
class OutputChecked:
    """One answer checked against the output schema.

    Attributes:
        stage: which request gave it (``OutputStage``).
        method: how the model was made to answer in the schema (``response_format``,
            ``final_tool``, ``instruction``; ``providers.structured``).
        text: the answer as the model gave it (text, or the final tool's input as JSON).
        value: the parsed value; None when it is not JSON (``problems`` then say so).
        problems: the schema messages, each with its JSON path; empty when the answer fits.
    """

    stage: OutputStage
    method: str
    text: str
    value: Any
    problems: tuple[Problem, ...] = ()

    @property
    def ok(self) -> bool:
        """Whether the answer fits the schema."""
        return not self.problems

    @property
    def repaired(self) -> bool:
        """Whether a repair turn gave this answer."""
        return self.stage == "repair"
